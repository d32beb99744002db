/*
 * synth.h — the run's synthetic address pool (transparent egress, issue 14).
 *
 * In a run with capture on, the run's resolver (dnsstub.c, served by the
 * supervisor) answers A and AAAA for a name the policy allows with an
 * address of this run's own pool, never a real one; the run's netns
 * redirects every TCP connection to the pool (and to allowed CIDRs) to
 * the egress process, which turns the address back into the name and
 * decides the connection as a connection to that name.
 *
 *   IPv4 pool  198.18.0.0/15 (RFC 2544 benchmarking: never routed)
 *   IPv6 pool  fd52:6667:6e63::/64 (a ULA /64)
 *
 * The first address of each pool (198.18.0.1, fd52:6667:6e63::1) is the
 * run's own, carried by its loopback interface (so glibc's AI_ADDRCONFIG
 * sees a non-loopback address of each family) and the source of the
 * default routes; it is never handed out. Names get addresses from
 * SYNTH_FIRST_HOST upwards, one v4 and one v6 per name, for the run's
 * whole life (no reuse), at most SYNTH_NAMES_MAX names: exhaustion is
 * refused and recorded.
 *
 * Every run has the same pool in its own network namespace: an address
 * another run was given means nothing here, and an address of the pool
 * this run never handed out is refused by the egress process.
 *
 * Who writes what: the map is written only by the supervisor's stub
 * (synth_assign). Each new entry is sent to the run's egress process as
 * one datagram (synth_entry_encode) BEFORE the DNS answer goes to the
 * run, on a SOCK_SEQPACKET pair; the egress process drains that socket
 * (synth_drain) before it looks an address up, so an answer the run
 * holds always has its entry there. An egress process forked later
 * inherits the map as it was at the fork.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress/rules.h" /* NET_HOST_MAX */

#define SYNTH_V4_NET    0xc6120000u /* 198.18.0.0 */
#define SYNTH_V4_PREFIX 15
#define SYNTH_V4_SELF   0xc6120001u /* 198.18.0.1: the run's own */
#define SYNTH_V6_NET                                                                               \
        {                                                                                          \
                0xfd, 0x52, 0x66, 0x67, 0x6e, 0x63, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0                   \
        }
#define SYNTH_V6_PREFIX  64
#define SYNTH_FIRST_HOST 2                       /* host part of the first address handed out */
#define SYNTH_NAMES_MAX  4096                    /* names a run may resolve over its life */
#define SYNTH_ENTRY_MAX  (2 + 16 + NET_HOST_MAX) /* one map datagram */
#define SYNTH_TTL        60                      /* seconds, in answers */

struct synth_entry {
        char name[NET_HOST_MAX + 1]; /* canonical: lower case, no trailing dot */
        uint32_t v4;                 /* host order, in the v4 pool */
        uint8_t v6[16];              /* in the v6 pool */
};

struct synth_map {
        struct synth_entry *v; /* owned; index i holds host part SYNTH_FIRST_HOST + i */
        size_t n, cap;
};

/*
 * synth_in_pool — whether addr (family AF_INET: 4 bytes network order, or
 * AF_INET6: 16 bytes) lies in the run's pool, the run's own address
 * included. Pure.
 */
bool synth_in_pool(int family, const uint8_t *addr);

/*
 * synth_assign — the entry of canonical name `name`, made if it has none
 * (*fresh set true: send it to the egress process before answering).
 * Returns the entry (owned by m) or NULL with -ENOSPC in *err when
 * SYNTH_NAMES_MAX names are taken, -ENOMEM, -EINVAL for a name that is
 * not canonical or longer than NET_HOST_MAX.
 */
const struct synth_entry *synth_assign(struct synth_map *m, const char *name, bool *fresh,
                                       int *err);

/*
 * synth_lookup — the name an address of the pool was handed out for, or
 * NULL (not in the pool, the run's own address, or never handed out).
 * Pure.
 */
const char *synth_lookup(const struct synth_map *m, int family, const uint8_t *addr);

/*
 * synth_entry_encode / synth_entry_decode — one map datagram: u8 version
 * (1), u8 name length, v4 (4 bytes, network order), v6 (16 bytes), the
 * name (no NUL). decode is pure and fuzzed: it refuses (-EINVAL) a wrong
 * version or length, a name that is not canonical, addresses outside the
 * pool or the run's own, and a v4 and v6 whose host parts differ (both
 * are SYNTH_FIRST_HOST + the entry's index). synth_drain also refuses an
 * entry whose index is not the next one. encode returns the
 * length written (≤ SYNTH_ENTRY_MAX) or -EINVAL.
 */
int synth_entry_encode(const struct synth_entry *e, uint8_t *buf, size_t cap);
int synth_entry_decode(const uint8_t *buf, size_t len, struct synth_entry *e);

/*
 * synth_drain — the egress process's side: read every datagram waiting on
 * `fd` (non-blocking) into m, in order. Returns the number read, or -errno
 * when the channel is broken (then the caller refuses every pool address).
 */
int synth_drain(int fd, struct synth_map *m);

/* synth_map_free — free what m holds; m may be reused. */
void synth_map_free(struct synth_map *m);
