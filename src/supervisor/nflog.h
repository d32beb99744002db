/*
 * nflog.h — the run's ruleset refusals, as the kernel logs them (issue 14).
 *
 * A run with transparent capture refuses, in its own nftables ruleset
 * (src/sandbox/capture.h), every packet that is neither local nor
 * redirected to its egress process, and logs it (rate-limited) to an NFLOG
 * group. Its init opened the NFLOG socket while it still held the
 * namespace's capabilities and handed it over (MSG_NFLOG); the supervisor
 * reads it here and records each refused destination (proto, address,
 * port) once as `egress.deny`, and counts every logged refusal in the
 * end-of-run summary (egress_refusal_note).
 *
 * The parser is pure and fuzzed (tests/fuzz/fuzz_nflog.c): the packet
 * bytes come from the run (they are what its command sent).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * NFLOG_BATCH, the datagrams one nflog_serve call reads (one refusal each),
 * is more than the ruleset's burst of first refusals (2 *
 * RF_CAPTURE_LOG_DESTS + RF_CAPTURE_LOG_RATE, capture.h), so the one call
 * at the end of a run reads every refusal still queued.
 */
#define NFLOG_DESTS_MAX 1024  /* destinations remembered for "recorded once" */
#define NFLOG_MSG_MAX   65536 /* bytes read per datagram */
#define NFLOG_BATCH     1024  /* datagrams read per call */

struct nflog_refusal {
        int family;       /* AF_INET / AF_INET6 */
        uint8_t addr[16]; /* destination; IPv4 in the first 4 bytes */
        uint8_t proto;    /* IPPROTO_* of the transport (after v6 extension headers) */
        uint16_t port;    /* destination port (TCP, UDP, UDP-Lite, SCTP, DCCP), else 0 */
};

/*
 * nflog_parse — one netlink message (nlmsghdr included) of `len` bytes.
 * Returns 1 with *out set for an NFULNL_MSG_PACKET whose payload is an
 * IPv4 or IPv6 packet, 0 for a message that is not a logged packet
 * (e.g. NLMSG_DONE, an ACK), -EBADMSG for a malformed one (lengths that
 * do not add up, a payload too short for its IP header). Pure.
 */
int nflog_parse(const uint8_t *msg, size_t len, struct nflog_refusal *out);

/*
 * nflog_format — "tcp", "udp", "icmp", "icmpv6" or the protocol number,
 * and the address as text, into proto[8] and host[46]. Pure.
 */
void nflog_format(const struct nflog_refusal *r, char proto[8], char host[46]);

struct nflog_seen {
        struct nflog_refusal v[NFLOG_DESTS_MAX]; /* destinations already recorded */
        size_t n;
};

struct audit_emitter;

/*
 * nflog_serve — the supervisor: read what is waiting on the NFLOG socket
 * `fd` (non-blocking; at most NFLOG_BATCH datagrams), record each new
 * destination once through `e` (NULL: record nothing) and count every
 * refusal in the run's summary. `seen` is the run's table (owned by the
 * caller, zeroed at start); past NFLOG_DESTS_MAX destinations new ones are
 * recorded under one coalescing key. Returns the number of refusals read,
 * or -errno when the socket is broken (the caller closes it). ENOBUFS
 * (the kernel dropped log messages) is not an error.
 */
int nflog_serve(int fd, struct nflog_seen *seen, struct audit_emitter *e);
