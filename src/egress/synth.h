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
 * run, on a SOCK_SEQPACKET pair (synth_channel, synth_flush); the egress
 * process drains that socket (synth_drain) before it looks an address
 * up, so an answer the run holds always has its entry there. An egress
 * process forked later inherits the map as it was at the fork, and may
 * then read again entries it already holds: an entry for an index it
 * has is accepted only if it is identical (and changes nothing), one for
 * the next index is added, any other breaks the channel (synth_add).
 *
 * Entries are sent in order: `sent` counts those on the channel. An
 * entry assigned but not yet sent (the channel was full) is sent before
 * any later one, and its name is answered only once it is.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/rules.h" /* NET_HOST_MAX */

#define SYNTH_V4_NET    0xc6120000u /* 198.18.0.0 */
#define SYNTH_V4_PREFIX 15
#define SYNTH_V4_SELF   0xc6120001u /* 198.18.0.1: the run's own */
#define SYNTH_V6_NET                                                                               \
        {                                                                                          \
                0xfd, 0x52, 0x66, 0x67, 0x6e, 0x63, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0                   \
        }
#define SYNTH_V6_PREFIX  64
#define SYNTH_FIRST_HOST 2            /* host part of the first address handed out */
#define SYNTH_NAMES_MAX  4096         /* names a run may resolve over its life */
#define SYNTH_HDR        (2 + 4 + 16) /* version, name length, v4, v6 */
#define SYNTH_ENTRY_MAX                                                                            \
        (SYNTH_HDR + NET_HOST_MAX) /* one map datagram: every canonical name fits                  \
                                    */
#define SYNTH_TTL 60               /* seconds, in answers */

struct synth_entry {
        char name[NET_HOST_MAX + 1]; /* canonical: lower case, no trailing dot */
        uint32_t v4;                 /* host order, in the v4 pool */
        uint8_t v6[16];              /* in the v6 pool */
};

#define SYNTH_CHANNEL_BUF (SYNTH_NAMES_MAX * 1024) /* SO_SNDBUF asked for: the whole map */

struct synth_map {
        struct synth_entry *v; /* owned; index i holds host part SYNTH_FIRST_HOST + i */
        size_t n, cap;
        size_t sent;    /* the supervisor's: entries [0, sent) are on the channel */
        bool exhausted; /* the supervisor's: dns.exhausted was recorded */
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
 * name (no NUL). decode is pure and fuzzed (tests/fuzz/fuzz_synth.c): it
 * refuses (-EINVAL) a wrong version or length, a name that is not
 * canonical (or is an IP literal), addresses outside the pool, the pool's
 * network address or the run's own, a host part beyond SYNTH_NAMES_MAX
 * names, v6 host bits above the low 32, and a v4 and v6 whose host parts
 * differ (both are SYNTH_FIRST_HOST + the entry's index). synth_add (so
 * synth_drain) also refuses an entry out of sequence. encode refuses
 * (-EINVAL) what decode would, or too little room; it returns the length
 * written (≤ SYNTH_ENTRY_MAX).
 */
int synth_entry_encode(const struct synth_entry *e, uint8_t *buf, size_t cap);
int synth_entry_decode(const uint8_t *buf, size_t len, struct synth_entry *e);

/*
 * synth_add — take one decoded entry into m (the egress process's side,
 * through synth_drain): the entry of index m->n is appended (returns 1);
 * one of an index m already holds must be identical (returns 0: already
 * known, e.g. inherited at the fork); anything else — a later index, a
 * different name or address for a known index, a name known under
 * another index — is -EPROTO; -ENOMEM. Pure.
 */
int synth_add(struct synth_map *m, const struct synth_entry *e);

/*
 * synth_drain — the egress process's side: read every datagram waiting on
 * `fd` (read with MSG_DONTWAIT) into m, in order (synth_entry_decode, then
 * synth_add). Returns the number of new entries, or -errno when the
 * channel is broken: -EPROTO for a datagram that does not decode or is
 * out of sequence, -EPIPE when the supervisor's end is closed (then the
 * caller refuses every pool address it does not already hold).
 */
int synth_drain(int fd, struct synth_map *m);

/*
 * synth_channel — the supervisor makes the map channel: a
 * SOCK_SEQPACKET|SOCK_CLOEXEC socketpair; *tx (the stub's end) is
 * non-blocking with a send buffer of SYNTH_CHANNEL_BUF asked for
 * (SO_SNDBUFFORCE where allowed, else SO_SNDBUF, which the kernel caps);
 * *rx goes to the egress process. 0 or -errno (nothing left open).
 */
int synth_channel(int *tx, int *rx);

/*
 * synth_flush — the supervisor's side: send the entries [m->sent, m->n)
 * on `fd` in order, advancing m->sent. Returns 0 when every entry is on
 * the channel, -EAGAIN when the channel is full (the rest stays pending),
 * other -errno when it is broken.
 */
int synth_flush(int fd, struct synth_map *m);

/*
 * synth_forget_last — undo the latest synth_assign while it is not yet
 * sent (m->n > m->sent): the stub could not record it, so the address is
 * never answered and will be given to the next name. -EBUSY if sent.
 */
int synth_forget_last(struct synth_map *m);

/* synth_index — the index of entry e of m (e from synth_assign). */
size_t synth_index(const struct synth_map *m, const struct synth_entry *e);

/* synth_map_free — free what m holds; m may be reused. */
void synth_map_free(struct synth_map *m);
