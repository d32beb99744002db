/*
 * fuzz_tls.c — libFuzzer target for the ClientHello SNI reader
 * (src/egress/tls.c).
 *
 * The input is a client's first bytes in a CONNECT tunnel, copied into a
 * heap buffer of exactly its length (and each prefix read from the front
 * of that buffer with a shorter length), so a read past the length given
 * is an ASan report. Beyond "no crash, no UB", each result is checked
 * against what tls.h promises:
 *   - a verdict is one of the enum's values; *why is set exactly for
 *     TLS_MALFORMED and TLS_NOT_TLS; sni[] is non-empty exactly for
 *     TLS_SNI_FOUND;
 *   - a found name is 1..TLS_SNI_MAX printable bytes, lower case, with no
 *     empty label and no trailing dot;
 *   - the verdict is monotone in more bytes: if a prefix gets FOUND,
 *     ABSENT, NOT_TLS or MALFORMED, the whole input gets the same verdict
 *     and the same name (a proxy deciding on a prefix never decides
 *     differently from one that waited);
 *   - why may be NULL, and changes nothing.
 * A disagreement aborts.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress/tls.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                   \
        do {                                                                                       \
                if (!(x))                                                                          \
                        abort();                                                                   \
        } while (0)

#define PREFIXES_ALL     512 /* every prefix up to this length is checked ... */
#define PREFIXES_SAMPLED 64  /* ... and this many spread over the rest */

static void check_one(enum tls_sni_result v, const char *sni, const char *why)
{
        CHECK(v >= TLS_NEED_MORE && v < _TLS_SNI_MAX);
        CHECK((why != NULL) == (v == TLS_MALFORMED || v == TLS_NOT_TLS));
        CHECK(!why || why[0]);
        size_t n = strnlen(sni, TLS_SNI_MAX + 1);
        CHECK(n <= TLS_SNI_MAX);
        CHECK((n > 0) == (v == TLS_SNI_FOUND));
        if (v != TLS_SNI_FOUND)
                return;
        CHECK(sni[0] != '.' && sni[n - 1] != '.' && !strstr(sni, ".."));
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)sni[i];
                CHECK(c > 0x20 && c < 0x7f && !(c >= 'A' && c <= 'Z'));
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        unsigned char *buf = malloc(size ? size : 1);
        char sni[TLS_SNI_MAX + 1], psni[TLS_SNI_MAX + 1];
        const char *why = NULL, *pwhy = NULL;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        enum tls_sni_result v = tls_client_hello_sni(buf, size, sni, &why);
        check_one(v, sni, why);
        CHECK(tls_client_hello_sni(buf, size, psni, NULL) == v && !strcmp(psni, sni));

        size_t stride = size > PREFIXES_ALL ? (size - PREFIXES_ALL) / PREFIXES_SAMPLED + 1 : 1;
        for (size_t i = 0; i < size; i += i < PREFIXES_ALL ? 1 : stride) {
                enum tls_sni_result p = tls_client_hello_sni(buf, i, psni, &pwhy);
                check_one(p, psni, pwhy);
                if (p == TLS_NEED_MORE)
                        continue;
                CHECK(p == v && !strcmp(psni, sni));
        }
        free(buf);
        return 0;
}
