/*
 * dnsresp.h — build DNS queries and read the answers, for the egress
 * process's own resolver (pure; fuzzed). The egress process resolves names
 * itself, over UDP, to the nameservers of the host's /etc/resolv.conf.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define DNSR_ADDRS_MAX 16
#define DNSR_QUERY_MAX 300

/*
 * dns_query_build — an RD query for `name` (canonical, no trailing dot,
 * at most 253 bytes, labels 1..63) of type qtype (1 A, 28 AAAA), id `id`,
 * into out (DNSR_QUERY_MAX). Returns the length or -EINVAL.
 */
int dns_query_build(const char *name, uint16_t qtype, uint16_t id, uint8_t *out, size_t cap);

struct dns_answer {
        uint8_t rcode;
        size_t n;
        int family[DNSR_ADDRS_MAX]; /* AF_INET / AF_INET6 */
        uint8_t addr[DNSR_ADDRS_MAX][16];
        uint32_t min_ttl;
};

/*
 * dns_response_parse — read a response to the query (id, name, qtype):
 * QR set, same id, exactly one question equal to (name, qtype, IN)
 * (case-insensitive), then the answer section: records of type qtype and
 * class IN whose owner is the name or the target of a CNAME chain starting
 * at the name (at most 8 CNAMEs) are collected; other records are skipped.
 * Compression pointers are followed only backwards and at most 64 times
 * per name. Returns 0 with *a filled (a->n may be 0: NODATA/NXDOMAIN, see
 * rcode), or -EBADMSG for anything malformed or not matching the query.
 */
int dns_response_parse(const uint8_t *msg, size_t len, uint16_t id, const char *name,
                       uint16_t qtype, struct dns_answer *a);
