/*
 * fuzz_inject.c — libFuzzer target for credential injection's parsers:
 * the `--inject ENV=SOURCE@HOSTS` parser (src/policy/binding.c), the
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress/inject.h"
#include "policy/binding.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                   \
        do {                                                                                       \
                if (!(x))                                                                          \
                        abort();                                                                   \
        } while (0)

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
        /* query replacement: bounded; nothing replaced means a copy */
        {
                struct inject_secret qs = s;
                static char qo[2048 * 3 + 64];
                size_t ql = 0;
                snprintf(qs.query, sizeof qs.query, "k");
                int qr = inject_query(&qs, arg, size, qo, sizeof qo, &ql);
                CHECK(qr >= -7 && qr <= 1 && ql <= sizeof qo);
                if (qr == 0)
                        CHECK(ql == size && !memcmp(qo, arg, size));
        }
        /* body replacement: in place, bounded hold, no placeholder left
         * before the hold */
        {
                struct inject_secret bs = s;
                memcpy(bs.placeholder, "PHPHPHPHPHPH", 13);
                bs.ph_len = 12; /* as long as the value */
                bs.body = true;
                char *bb = malloc(size + 1);
                if (bb) {
                        uint64_t got = 0;
                        memcpy(bb, arg, size);
                        bool more = size && (data[0] & 1);
                        size_t h = inject_body(&bs, 1, 1, bb, size, more, &got);
                        CHECK(h <= size && h < bs.ph_len && (more || h == 0));
                        CHECK(!memmem(bb, size - h, bs.placeholder, bs.ph_len));
                }
                free(bb);
        }
        const char *where;
        (void)inject_mentions(&s, 1, arg, size, true, true, &where);
        unsigned char dec[4096];
        int dl = inject_b64_decode(arg, size, dec, sizeof dec);
        CHECK(dl < 0 || (size_t)dl <= size);

        /* the scrubber: any split gives the same output, with no value left */
        struct inject_needles nd;
        if (size <= 2000 && inject_needles_new(&s, 1, &nd) == 0) {
                /* in place, as the egress process scrubs its response buffer:
                 * cut anywhere, the held tail carried, the same bytes; at the
                 * end no value, and no 8-byte beginning of it is left */
                char *a = malloc(size + 1), *b = malloc(size + 1);
                if (a && b) {
                        uint64_t rep = 0;
                        memcpy(a, arg, size);
                        size_t ha = inject_scrub_inplace(&nd, a, size, 0, &rep);
                        size_t at = size ? data[size - 1] % (size + 1) : 0;
                        memcpy(b, arg, size);
                        size_t hb = inject_scrub_inplace(&nd, b, at, 0, &rep);
                        hb = inject_scrub_inplace(&nd, b, size, at - hb, &rep);
                        CHECK(ha == hb && !memcmp(a, b, size));
                        /* the skip-table scan equals the byte-wise reference */
                        char *ref = malloc(size + 1);
                        if (ref) {
                                memcpy(ref, arg, size);
                                size_t hr = inject_scrub_inplace_bytewise(&nd, ref, size, 0, &rep);
                                CHECK(hr == ha && !memcmp(a, ref, size));
                                free(ref);
                        }
                        /* the held tail is not scanned yet: the rest is clean */
                        CHECK(!memmem(a, size - ha, s.value, s.len));
                        (void)inject_scrub_tail(&nd, a, size, ha, &rep);
                        CHECK(!memmem(a, size, s.value, s.len));
                        for (size_t k = 8; k < s.len && k <= size; k++)
                                CHECK(memcmp(a + size - k, s.value, k) != 0);
                }
                free(a);
                free(b);
                inject_needles_free(&nd);
        }
        free(arg);
        return 0;
}
