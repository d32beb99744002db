/*
 * dns.h — the DNS wire format, as much as the run's stub resolver needs:
 * read one query's question, and build the REFUSED answer to it. Pure and
 * fuzzed (tests/fuzz/fuzz_dns.c).
 *
 * The stub answers every query REFUSED at once: a run has no name
 * resolution of its own (its only way out is its egress proxy, which
 * resolves names itself). Each refusal is audited, coalesced per name.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "shared/error.h"

#define DNS_MSG_MAX  1232 /* bytes of a query we read (the usual EDNS payload size) */
#define DNS_NAME_MAX 1025 /* a presentation name with \DDD escapes, NUL included */

struct dns_query {
        uint16_t id;
        uint16_t qtype, qclass;
        char name[DNS_NAME_MAX]; /* lower case, no trailing dot, "." for the root;
                                    bytes outside [a-z0-9-_*] and '.' inside labels as \DDD */
        size_t question_end;     /* offset just past the question in the message */
};

/*
 * dns_query_parse — parse a query message: 12-byte header with QR = 0,
 * QDCOUNT = 1, one question with an uncompressed name (labels <= 63 bytes,
 * wire name <= 255 bytes), QTYPE and QCLASS. Whatever follows the question
 * (EDNS OPT, ...) is ignored. Returns 0, or -EBADMSG with err->msg.
 */
int dns_query_parse(const uint8_t *msg, size_t len, struct dns_query *q, struct rf_error *err);

/*
 * dns_refused — build into out (cap >= q->question_end) the answer to `msg`:
 * its header with QR = 1, RA = 0, RCODE = REFUSED (5), the question
 * echoed, no other records. Returns the length or -ENOBUFS.
 */
int dns_refused(const uint8_t *msg, const struct dns_query *q, uint8_t *out, size_t cap);

#define DNS_RCODE_NOERROR  0
#define DNS_RCODE_SERVFAIL 2
#define DNS_RCODE_NXDOMAIN 3
#define DNS_RCODE_REFUSED  5

/*
 * dns_answer — build into out the answer to `msg` (whose question q
 * describes): its id, opcode and RD echoed with QR, AA and RA set, RCODE
 * `rcode`, the question echoed, and when rdata is non-NULL one answer
 * record for the question's name (a pointer to it), of type `rtype`,
 * class IN, TTL `ttl`, with rdlen bytes of rdata. No other records (no
 * SOA for negative answers: the stub answers at once, and nothing needs
 * to cache its refusals). Returns the length or -ENOBUFS / -EINVAL.
 */
int dns_answer(const uint8_t *msg, const struct dns_query *q, unsigned rcode, uint16_t rtype,
               const uint8_t *rdata, size_t rdlen, uint32_t ttl, uint8_t *out, size_t cap);

/*
 * dns_formerr — the FORMERR answer to a message too broken to parse but
 * with a readable header (len >= 12): id and opcode echoed, no question.
 * Returns 12, or -EBADMSG if there is no header or it is not a query.
 */
int dns_formerr(const uint8_t *msg, size_t len, uint8_t out[12]);
