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
 *     same output as fed whole, and that output holds no value;
 *   - request-body rewriting with placeholders longer and shorter than
 *     their values: cut anywhere and given a small out room, the same
 *     bytes as whole; counting alone, the same length; no placeholder
 *     left, and what is held back never more than a placeholder;
 *   - the "basic" header decodes to user:value;
 *   - in a name, the placeholder is found wherever it stands whole, and
 *     wherever it stands with the name's dots taken out (across labels).
 */
#include <errno.h>
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
        /* body rewriting at any lengths: two bindings, a placeholder
         * longer and one shorter than its value; cut anywhere (the rest
         * passed again with the next bytes), the same bytes as whole;
         * counting alone gives the length; no placeholder left */
        {
                struct inject_secret bv[2] = {s, s};
                bv[0].body = bv[1].body = true;
                memcpy(bv[1].placeholder, "QQQQQQQQQQQQQQQQQQQQQQ", 23);
                bv[1].ph_len = 22;
                bv[1].value = (const unsigned char *)"a-longer-value-than-its-placeholder";
                bv[1].len = 35;
                static char whole[2048 * 2 + 64], parts[2048 * 2 + 64], pend[2048];
                size_t wl = 0, cl = 0, pl = 0;
                uint64_t wi = 0, pi = 0, ci = 0;
                size_t used = inject_body_rewrite(bv, 2, 3, arg, size, false, whole, sizeof whole,
                                                  &wl, &wi);
                CHECK(used == size && wl <= sizeof whole);
                (void)inject_body_rewrite(bv, 2, 3, arg, size, false, NULL, SIZE_MAX, &cl, &ci);
                CHECK(cl == wl && ci == wi);
                size_t at = size ? data[0] % (size + 1) : 0, o = 0;
                size_t room = size > 1 ? 35 + data[1] % 64 : 64; /* >= the longest value */
                for (int k = 0; k < 2; k++) {
                        size_t from = k ? at : 0, to = k ? size : at;
                        memcpy(pend + pl, arg + from, to - from);
                        pl += to - from;
                        bool more = k == 0;
                        /* a small out room: called until nothing moves */
                        for (;;) {
                                size_t got;
                                size_t u = inject_body_rewrite(bv, 2, 3, pend, pl, more, parts + o,
                                                               room, &got, &pi);
                                CHECK(got <= room && u <= pl);
                                o += got;
                                memmove(pend, pend + u, pl - u);
                                pl -= u;
                                if (u == 0)
                                        break;
                        }
                        CHECK(pl < (more ? bv[1].ph_len + bv[0].ph_len : 1));
                }
                CHECK(o == wl && !memcmp(parts, whole, wl) && pi == wi);
                CHECK(!memmem(whole, wl, bv[0].placeholder, bv[0].ph_len));
                CHECK(!memmem(whole, wl, bv[1].placeholder, bv[1].ph_len));
        }
        /* the Basic header: its base64 decodes to user:value */
        {
                struct inject_secret us = s;
                size_t ul = size < SECRET_BASIC_USER_MAX ? size : SECRET_BASIC_USER_MAX;
                memcpy(us.basic, arg, ul);
                us.basic[ul] = '\0';
                static char bh[INJECT_BASIC_HEADER_MAX];
                int bl = inject_basic_header(&us, bh, sizeof bh);
                size_t n = strlen(us.basic);
                CHECK(n ? bl > 21 : bl == -EINVAL);
                if (bl > 0) {
                        unsigned char cred[SECRET_BASIC_USER_MAX + 64];
                        int dl2 = inject_b64_decode(bh + 21, (size_t)bl - 21, cred, sizeof cred);
                        CHECK(!memcmp(bh, "Authorization: Basic ", 21) && dl2 == (int)(n + 13) &&
                              !memcmp(cred, us.basic, n) && cred[n] == ':' &&
                              !memcmp(cred + n + 1, "s3cr3t-value", 12));
                }
        }
        const char *where;
        (void)inject_mentions(&s, 1, arg, size, true, true, &where);
        /* a name: what stands whole is found, and so is what stands with
         * its dots taken out */
        bool whole = inject_mentions(&s, 1, arg, size, true, false, &where) != NULL;
        CHECK(!whole || inject_mentions_name(&s, 1, arg, size, &where) == &s);
        {
                static char flat[8192];
                size_t fl = 0;
                for (size_t i = 0; i < size && fl < sizeof flat; i++)
                        if (arg[i] != '.')
                                flat[fl++] = arg[i];
                if (fl < sizeof flat && inject_mentions(&s, 1, flat, fl, true, false, &where))
                        CHECK(inject_mentions_name(&s, 1, arg, size, &where) == &s);
        }
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
                        /* a pause at `at` longer than the hold: the held
                         * beginning goes out (inject_scrub_tail), the next
                         * bytes go on with it (inject_scrub_resume): the
                         * whole of the value never stands in what went out */
                        struct inject_resume rs;
                        memcpy(b, arg, size);
                        hb = inject_scrub_inplace(&nd, b, at, 0, &rep);
                        (void)inject_scrub_pending(&nd, b, at, hb, &rs);
                        (void)inject_scrub_tail(&nd, b, at, hb, &rep);
                        size_t from = at + (rs.any ? inject_scrub_resume(&nd, &rs, b + at,
                                                                         size - at, &rep)
                                                   : 0);
                        CHECK(from <= size);
                        hb = inject_scrub_inplace(&nd, b, size, from, &rep);
                        (void)inject_scrub_tail(&nd, b, size, hb, &rep);
                        CHECK(!memmem(b, size, s.value, s.len));
                }
                free(a);
                free(b);
                inject_needles_free(&nd);
        }
        free(arg);
        return 0;
}
