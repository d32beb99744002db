/*
 * fuzz_dnsresp.c — libFuzzer target for the egress resolver's response
 * reader and query builder (src/egress/dnsresp.c).
 *
 * Input: byte 0 picks the query (bit 0: A or AAAA; bits 1-2: one of four
 * names), bytes 1-2 are its id, the rest is the response, copied into a
 * heap buffer of exactly its length so a read past it is an ASan report.
 * Beyond "no crash, no UB", the result is checked against dnsresp.h:
 *   - the answer is 0 or -EBADMSG; on -EBADMSG no address is reported;
 *   - an accepted response has QR set, our id and QDCOUNT 1; rcode is its
 *     RCODE; a non-zero RCODE yields no address; at most DNSR_ADDRS_MAX
 *     addresses, each of the queried family (IPv4 zero-padded), each
 *     present in the message as RDATA bytes; min_ttl <= 2^31 - 1, and 0
 *     when there is no address;
 *   - the same response under another id is refused;
 *   - the query for the same name builds to the documented bytes, and a
 *     response made from it (QR set, one A/AAAA record whose owner points
 *     at the question) reads back as that one address.
 * A disagreement aborts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "egress/dnsresp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                   \
        do {                                                                                       \
                if (!(x))                                                                          \
                        abort();                                                                   \
        } while (0)

static const char *const names[] = {"example.com", "www.example.com", "a.b", "x"};

/* A query built for (name, qtype, id), answered with one record: it must read back. */
static void check_roundtrip(const char *name, uint16_t qtype, uint16_t id, const uint8_t *rdata)
{
        uint8_t m[DNSR_QUERY_MAX + 32];
        struct dns_answer a;
        size_t alen = qtype == 1 ? 4 : 16;

        int n = dns_query_build(name, qtype, id, m, DNSR_QUERY_MAX);
        CHECK(n == (int)(12 + strlen(name) + 2 + 4));
        CHECK(m[0] == id >> 8 && m[1] == (id & 0xff) && m[2] == 0x01 && m[3] == 0);
        CHECK(m[4] == 0 && m[5] == 1 && !m[6] && !m[7] && !m[8] && !m[9] && !m[10] && !m[11]);
        CHECK(m[n - 4] == 0 && m[n - 3] == qtype && m[n - 2] == 0 && m[n - 1] == 1);
        CHECK(dns_response_parse(m, (size_t)n, id, name, qtype, &a) == -EBADMSG); /* QR clear */

        m[2] |= 0x80;
        m[7] = 1;
        const uint8_t rr[] = {0xc0, 12, 0, (uint8_t)qtype, 0, 1, 0, 0, 1, 0, 0, (uint8_t)alen};
        memcpy(m + n, rr, sizeof rr);
        memcpy(m + n + sizeof rr, rdata, alen);
        size_t len = (size_t)n + sizeof rr + alen;
        CHECK(dns_response_parse(m, len, id, name, qtype, &a) == 0);
        CHECK(a.n == 1 && a.rcode == 0 && a.min_ttl == 256 && !memcmp(a.addr[0], rdata, alen));
        CHECK(a.family[0] == (qtype == 1 ? AF_INET : AF_INET6));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 3)
                return 0;
        uint16_t qtype = data[0] & 1 ? 28 : 1;
        const char *name = names[(data[0] >> 1) & 3];
        uint16_t id = (uint16_t)(data[1] << 8 | data[2]);
        size_t len = size - 3;
        uint8_t *msg = malloc(len ? len : 1);
        struct dns_answer a;

        if (!msg)
                return 0;
        memcpy(msg, data + 3, len);
        int r = dns_response_parse(msg, len, id, name, qtype, &a);
        if (r == 0) {
                CHECK(len >= 12 && msg[0] == id >> 8 && msg[1] == (id & 0xff));
                CHECK((msg[2] & 0x80) && msg[4] == 0 && msg[5] == 1);
                CHECK(a.rcode == (msg[3] & 0x0f));
                CHECK(a.n <= DNSR_ADDRS_MAX && (a.rcode == 0 || a.n == 0));
                CHECK(a.min_ttl <= 0x7fffffffu && (a.n > 0 || a.min_ttl == 0));
                size_t alen = qtype == 1 ? 4 : 16;
                for (size_t i = 0; i < a.n; i++) {
                        CHECK(a.family[i] == (qtype == 1 ? AF_INET : AF_INET6));
                        for (size_t j = alen; j < 16; j++)
                                CHECK(a.addr[i][j] == 0);
                        CHECK(memmem(msg, len, a.addr[i], alen) != NULL);
                }
                struct dns_answer b;
                CHECK(dns_response_parse(msg, len, (uint16_t)(id ^ 0x5a5a), name, qtype, &b) ==
                      -EBADMSG);
                CHECK(b.n == 0);
        } else {
                CHECK(r == -EBADMSG && a.n == 0);
        }

        uint8_t rdata[16] = {0};
        memcpy(rdata, msg, len < 16 ? len : 16);
        check_roundtrip(name, qtype, id, rdata);
        free(msg);
        return 0;
}
