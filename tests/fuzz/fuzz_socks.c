/*
 * fuzz_socks.c — libFuzzer target for the SOCKS5 readers and the reply
 * builder (src/egress/socks.c).
 *
 * The input is a client's byte stream: a greeting, then (if the greeting
 * is complete) a request. Each is copied into a heap buffer of exactly its
 * length, so a read past it is an ASan report. Beyond "no crash, no UB",
 * each result is checked against what socks.h promises:
 *   - a complete greeting is 2 + NMETHODS bytes of version 5, and no_auth
 *     says whether method 0 is among them;
 *   - a complete request has version 5, RSV 0, a known ATYP, exactly the
 *     length its ATYP implies, a non-zero port, and a domain copied whole
 *     and NUL-free; a refusal names one of the two replies allowed;
 *   - verdicts are monotone: every prefix answers 0 or exactly what the
 *     whole input answers (same length, same request, same reply);
 *   - the reply is VER 5, the code, RSV 0, ATYP 1, 0.0.0.0:0.
 * A disagreement aborts.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress/socks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                   \
        do {                                                                                       \
                if (!(x))                                                                          \
                        abort();                                                                   \
        } while (0)

#define PREFIXES_MAX 300 /* both messages are at most 262 bytes; later bytes change nothing */

static void check_greeting(const uint8_t *g, size_t len)
{
        bool na = true;
        int r = socks_greeting_parse(g, len, &na);

        if (r > 0) {
                CHECK(len >= 3 && g[0] == 5 && g[1] >= 1 && (size_t)r == 2u + g[1]);
                CHECK(na == (memchr(g + 2, 0, g[1]) != NULL));
        } else if (r == 0) {
                CHECK(!na);
                CHECK(len < 2 || len < 2u + g[1]);
                CHECK(len == 0 || g[0] == 5);
        } else {
                CHECK(r == -EBADMSG && len >= 1 && (g[0] != 5 || (len >= 2 && g[1] == 0)));
        }
        for (size_t i = 0; i < len && i < PREFIXES_MAX; i++) {
                bool pna;
                int pr = socks_greeting_parse(g, i, &pna);
                CHECK(pr == 0 || (pr == r && pna == na));
        }
}

static void check_request(const uint8_t *q, size_t len)
{
        struct socks_request req, p;
        enum socks_reply rep = 0xff, prep;
        int r = socks_request_parse(q, len, &req, &rep);

        if (r > 0) {
                CHECK((size_t)r <= len && rep == SOCKS_OK);
                CHECK(q[0] == 5 && q[2] == 0 && req.cmd == q[1] && req.atyp == q[3]);
                size_t a = req.atyp == 1 ? 4 : req.atyp == 4 ? 16 : 0;
                if (req.atyp == 3) {
                        CHECK(q[4] >= 1 && (size_t)r == 4u + 1 + q[4] + 2);
                        CHECK(strlen(req.host) == q[4] && !memcmp(req.host, q + 5, q[4]));
                        static const uint8_t zero[16];
                        CHECK(!memcmp(req.addr, zero, sizeof zero));
                } else {
                        CHECK(a != 0 && (size_t)r == 4 + a + 2);
                        CHECK(req.host[0] == '\0' && !memcmp(req.addr, q + 4, a));
                }
                CHECK(req.port != 0 && req.port == (q[r - 2] << 8 | q[r - 1]));
        } else if (r == 0) {
                CHECK(rep == SOCKS_OK);
        } else {
                CHECK(r == -EBADMSG);
                CHECK(rep == SOCKS_GENERAL_FAILURE || rep == SOCKS_ATYP_UNSUPPORTED);
                if (rep == SOCKS_ATYP_UNSUPPORTED)
                        CHECK(len >= 4 && q[0] == 5 && q[2] == 0 && q[3] != 1 && q[3] != 3 &&
                              q[3] != 4);
        }
        for (size_t i = 0; i < len && i < PREFIXES_MAX; i++) {
                int pr = socks_request_parse(q, i, &p, &prep);
                if (pr == 0) {
                        CHECK(prep == SOCKS_OK);
                        continue;
                }
                CHECK(pr == r && prep == rep);
                if (r > 0)
                        CHECK(!memcmp(&p, &req, sizeof p));
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint8_t *g = malloc(size ? size : 1);
        if (!g)
                return 0;
        memcpy(g, data, size);
        check_greeting(g, size);

        /* the request: what follows a complete greeting, or the whole input */
        bool na;
        int glen = socks_greeting_parse(g, size, &na);
        size_t off = glen > 0 ? (size_t)glen : 0;
        size_t qlen = size - off;
        uint8_t *q = malloc(qlen ? qlen : 1);
        if (q) {
                memcpy(q, data + off, qlen);
                check_request(q, qlen);
                free(q);
        }

        uint8_t out[10];
        enum socks_reply code = size ? (enum socks_reply)(data[0] % 9) : SOCKS_OK;
        CHECK(socks_reply_build(code, out) == 10);
        CHECK(out[0] == 5 && out[1] == (uint8_t)code && out[2] == 0 && out[3] == 1);
        CHECK(!out[4] && !out[5] && !out[6] && !out[7] && !out[8] && !out[9]);
        free(g);
        return 0;
}
