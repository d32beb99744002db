/*
 * fuzz_broker.c — libFuzzer target for the secret broker's wire protocol
 * (src/secrets/broker.c): the request parser the server runs on bytes from
 * the run, and the reply parser ringfence-secret runs on the server's.
 *
 * The input is copied into a heap buffer of exactly its length, so a read
 * past it is an ASan report. Beyond "no crash, no UB", each result is held
 * to what broker.h promises: requests are consumed one at a time, each
 * consuming no more than is left and at most BROKER_REQ_MAX bytes, and an
 * accepted request is exactly "GET <name>\n" with a valid name, i.e. the
 * bytes consumed are the canonical line; a reply header consumed is at most
 * BROKER_REPLY_HEAD_MAX bytes, and an OK header is exactly what
 * broker_reply_ok formats (one spelling per length). A disagreement aborts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secrets/broker.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_requests(const char *buf, size_t size)
{
        size_t off = 0;
        struct broker_req req;

        for (;;) {
                memset(&req, 0xa5, sizeof req);
                int r = broker_req_parse(buf + off, size - off, &req);
                if (r == 0) {
                        if (size - off >= BROKER_REQ_MAX || memchr(buf + off, '\n', size - off))
                                abort();
                        return;
                }
                if (r == -E2BIG) {
                        if (size - off < BROKER_REQ_MAX || memchr(buf + off, '\n', BROKER_REQ_MAX))
                                abort();
                        return;
                }
                if (r == -EBADMSG)
                        return;
                if (r < 0 || (size_t)r > size - off || r > BROKER_REQ_MAX)
                        abort();
                size_t n = strnlen(req.name, sizeof req.name);
                if (n == sizeof req.name || !secret_name_valid(req.name, n))
                        abort();
                char line[BROKER_REQ_MAX + 1];
                int k = snprintf(line, sizeof line, "GET %s\n", req.name);
                if (k != r || memcmp(line, buf + off, (size_t)k) != 0)
                        abort();
                off += (size_t)r;
        }
}

static void check_reply(const char *buf, size_t size)
{
        bool ok = false;
        size_t vlen = 0;
        enum broker_err code = _BROKER_E_MAX;
        int r = broker_reply_parse(buf, size, &ok, &vlen, &code);

        if (r == 0) {
                if (size >= BROKER_REPLY_HEAD_MAX || memchr(buf, '\n', size))
                        abort();
                return;
        }
        if (r == -EBADMSG)
                return;
        if (r < 0 || (size_t)r > size || r > BROKER_REPLY_HEAD_MAX || buf[r - 1] != '\n' ||
            memchr(buf, '\n', (size_t)r - 1))
                abort();
        char line[BROKER_REPLY_HEAD_MAX];
        if (ok) {
                if (vlen > BROKER_VALUE_MAX)
                        abort();
                int k = broker_reply_ok(line, sizeof line, vlen);
                if (k != r || memcmp(line, buf, (size_t)k) != 0)
                        abort();
        } else {
                if ((int)code < 0 || code >= _BROKER_E_MAX)
                        abort();
                const char *t = broker_err_name(code);
                size_t tl = strlen(t);
                if ((size_t)r < 4 + tl + 1 || memcmp(buf, "ERR ", 4) != 0 ||
                    memcmp(buf + 4, t, tl) != 0 || (buf[4 + tl] != ' ' && buf[4 + tl] != '\n'))
                        abort();
                /* what the server sends for that code parses back to it */
                int k = broker_reply_err(line, sizeof line, code);
                bool ok2 = true;
                enum broker_err code2 = _BROKER_E_MAX;
                if (k <= 0 || broker_reply_parse(line, (size_t)k, &ok2, &vlen, &code2) != k ||
                    ok2 || code2 != code)
                        abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *buf = malloc(size ? size : 1);

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        check_requests(buf, size);
        check_reply(buf, size);
        (void)secret_name_valid(buf, size);
        free(buf);
        return 0;
}
