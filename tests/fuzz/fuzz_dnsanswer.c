/*
 * fuzz_dnsanswer.c — libFuzzer target for the stub's answer builder
 * (dns_answer, src/egress/dns.c) over any query the reader accepts and
 * any parameters, not only those dnsstub_decide picks.
 *
 * Input: byte 0 the RCODE (0..31: above 15 is invalid), byte 1 bit 0
 * whether there is RDATA, bytes 2-3 RTYPE, bytes 4-5 RDLENGTH (its low 6
 * bits: 0..63 bytes of RDATA, the RDATA taken from byte 6 on, zero-padded),
 * bytes 6-9 the TTL, bytes 10-11 the answer buffer's size (mod
 * DNS_MSG_MAX + 64), the rest the query message, read by dns_query_parse.
 * The message and the answer buffer are heap buffers of exactly their
 * size, so a read or write past either is an ASan report.
 * Beyond "no crash, no UB", the answer is checked against dns.h: -EINVAL
 * exactly for an RCODE above 15; -ENOBUFS exactly when header, question
 * and record do not fit the buffer or DNS_MSG_MAX; otherwise the length
 * is theirs (never more than the buffer), the id, opcode and RD are
 * echoed with QR, AA and RA set and TC clear, the RCODE is the one asked,
 * QDCOUNT 1, ANCOUNT 1 exactly with RDATA, NS and AR 0, the question
 * echoed byte for byte, the record a pointer to offset 12 with the type,
 * class IN, TTL and RDATA asked; and for an A or AAAA question answered
 * with an A or AAAA record of its type (opcode QUERY, a canonical name),
 * the egress process's reader (dns_response_parse) reads that one
 * address back.
 * A disagreement aborts.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "egress/dns.h"
#include "egress/dnsresp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                   \
        do {                                                                                       \
                if (!(x))                                                                          \
                        abort();                                                                   \
        } while (0)

#define PARAMS 12

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < PARAMS)
                return 0;
        unsigned rcode = data[0] & 0x1f;
        bool has_rdata = data[1] & 1;
        uint16_t rtype = (uint16_t)(data[2] << 8 | data[3]);
        size_t rdlen = (size_t)(data[5] & 0x3f);
        uint32_t ttl = (uint32_t)data[6] << 24 | (uint32_t)data[7] << 16 | (uint32_t)data[8] << 8 |
                       data[9];
        size_t cap = (size_t)(data[10] << 8 | data[11]) % (DNS_MSG_MAX + 64);
        uint8_t rdata[64] = {0};
        memcpy(rdata, data + 6, size - 6 < rdlen ? size - 6 : rdlen);

        size_t len = size - PARAMS;
        uint8_t *msg = malloc(len ? len : 1);
        CHECK(msg);
        memcpy(msg, data + PARAMS, len);
        struct dns_query q;
        struct rf_error err = {0};
        if (dns_query_parse(msg, len, &q, &err) < 0) {
                free(msg);
                return 0;
        }

        uint8_t *out = malloc(cap ? cap : 1);
        CHECK(out);
        int n = dns_answer(msg, &q, rcode, rtype, has_rdata ? rdata : NULL, rdlen, ttl, out, cap);
        size_t rr = has_rdata ? 12 + rdlen : 0, need = q.question_end + rr;
        if (rcode > 15) {
                CHECK(n == -EINVAL);
                goto done;
        }
        if (cap < need || need > DNS_MSG_MAX) {
                CHECK(n == -ENOBUFS);
                goto done;
        }
        CHECK(n >= 0 && (size_t)n == need && (size_t)n <= cap);
        CHECK(out[0] == msg[0] && out[1] == msg[1]);
        CHECK((out[2] & 0x79) == (msg[2] & 0x79) && (out[2] & 0x80) && (out[2] & 0x04) &&
              !(out[2] & 0x02));
        CHECK(out[3] == (0x80 | rcode));
        CHECK(out[4] == 0 && out[5] == 1 && out[6] == 0 && out[7] == (has_rdata ? 1 : 0));
        CHECK(!out[8] && !out[9] && !out[10] && !out[11]);
        CHECK(!memcmp(out + 12, msg + 12, q.question_end - 12));
        if (has_rdata) {
                const uint8_t *p = out + q.question_end;
                CHECK(p[0] == 0xc0 && p[1] == 12 && p[2] == rtype >> 8 && p[3] == (rtype & 0xff));
                CHECK(p[4] == 0 && p[5] == 1);
                CHECK(p[6] == ttl >> 24 && p[7] == ((ttl >> 16) & 0xff) &&
                      p[8] == ((ttl >> 8) & 0xff) && p[9] == (ttl & 0xff));
                CHECK(p[10] == 0 && p[11] == rdlen && !memcmp(p + 12, rdata, rdlen));
        }

        /* read back as the egress process would, for a standard query (opcode
         * QUERY) whose name its query builder takes (canonical, not the root) */
        size_t alen = q.qtype == 1 ? 4 : q.qtype == 28 ? 16 : 0;
        uint8_t tmp[DNSR_QUERY_MAX];
        if (alen && q.qclass == 1 && (msg[2] & 0x78) == 0 && rcode == 0 && has_rdata &&
            rtype == q.qtype && rdlen == alen &&
            dns_query_build(q.name, q.qtype, q.id, tmp, sizeof tmp) > 0) {
                struct dns_answer a;
                CHECK(dns_response_parse(out, (size_t)n, q.id, q.name, q.qtype, &a) == 0);
                CHECK(a.rcode == 0 && a.n == 1 && !memcmp(a.addr[0], rdata, alen));
                CHECK(a.family[0] == (alen == 4 ? AF_INET : AF_INET6));
                CHECK(a.min_ttl == (ttl > 0x7fffffffu ? 0 : ttl));
        }
done:
        free(out);
        free(msg);
        return 0;
}
