/*
 * fuzz_dns.c — libFuzzer target for the DNS stub's reader and answer
 * builders (src/egress/dns.c).
 *
 * The message is copied into a heap buffer of exactly its length, so a
 * read past it is an ASan report. Beyond "no crash, no UB", each result is
 * checked against what dns.h promises: an accepted query has a QR-clear
 * header with one question, a NUL-terminated name of bounded length made
 * only of [a-z0-9-_*.\] and digits of escapes, and a question that ends
 * inside the message; its REFUSED answer is exactly header + question
 * with the id echoed, QR set and RCODE 5. A disagreement aborts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress/dns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint8_t *msg = malloc(size ? size : 1);
        uint8_t out[DNS_MSG_MAX];
        struct dns_query q;
        struct rf_error err = {0};

        if (!msg)
                return 0;
        memcpy(msg, data, size);
        int r = dns_query_parse(msg, size, &q, &err);
        if (r == 0) {
                if (size < 12 || (msg[2] & 0x80) || msg[4] != 0 || msg[5] != 1)
                        abort();
                if (q.question_end > size || q.question_end < 12 + 1 + 4)
                        abort();
                size_t n = strnlen(q.name, sizeof q.name);
                if (n == 0 || n >= sizeof q.name)
                        abort();
                for (size_t i = 0; i < n; i++) {
                        char c = q.name[i];
                        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                              c == '_' || c == '*' || c == '.' || c == '\\'))
                                abort();
                }
                int k = dns_refused(msg, &q, out, sizeof out);
                if (k != (int)q.question_end || out[0] != msg[0] || out[1] != msg[1] ||
                    !(out[2] & 0x80) || (out[3] & 0x0f) != 5 ||
                    memcmp(out + 12, msg + 12, q.question_end - 12) != 0)
                        abort();
        } else {
                if (r != -EBADMSG || !err.msg[0])
                        abort();
                int k = dns_formerr(msg, size, out);
                if (k != -EBADMSG && (k != 12 || out[0] != msg[0] || (out[3] & 0x0f) != 1))
                        abort();
        }
        free(msg);
        return 0;
}
