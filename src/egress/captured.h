/*
 * captured.h — the pure decisions of a captured connection (transparent
 * egress, issue 14; see egress.h "Captured connections"): where its
 * original destination points, and what its first bytes are. Pure;
 * unit-tested (test_captured) and fuzzed with the synth map decoder.
 *
 * A captured connection reaches the egress process through the run's
 * nftables redirect; SO_ORIGINAL_DST gives the address the run dialled.
 * That address is one of:
 *   - loopback, unspecified, the run's own pool address, or the capture
 *     listener itself (a direct connect to 127.0.0.1:3129 is not
 *     translated: its original destination IS the listener): refused;
 *   - an address of the run's synthetic pool: the name the run's resolver
 *     handed it out for (synth_lookup), or refused when it never did;
 *   - any other address: a real IP literal, decided by IP/CIDR rules only.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress/synth.h"

enum captured_kind {
        CAPD_NAME,    /* decide as a connection to `name` */
        CAPD_LITERAL, /* decide the address itself (IP/CIDR rules) */
        CAPD_REFUSE,  /* refuse, for `reason` */
        _CAPD_MAX,
        _CAPD_INVALID = -22,
};

struct captured_dest {
        enum captured_kind kind;
        const char *name;   /* CAPD_NAME: borrowed from the map */
        const char *reason; /* CAPD_REFUSE: a static phrase */
};

/*
 * captured_dest_decide — what the original destination addr (AF_INET: 4
 * bytes network order in the first 4; AF_INET6: 16) and port mean for a
 * run whose name map is m (map_ok false: the map channel broke, every
 * pool address is refused). Pure. Returns out->kind.
 */
enum captured_kind captured_dest_decide(const struct synth_map *m, bool map_ok, int family,
                                        const uint8_t addr[16], uint16_t port,
                                        struct captured_dest *out);

enum captured_first {
        CAPF_NEED_MORE, /* too few bytes to tell */
        CAPF_TLS,       /* a TLS record opens the stream (content type 20..24) */
        CAPF_HTTP,      /* "METHOD SP" then '/', '*' or 'h': an HTTP/1.x request line */
        CAPF_OTHER,     /* any other protocol */
        _CAPF_MAX,
        _CAPF_INVALID = -22,
};

#define CAPTURED_METHOD_MAX 16 /* bytes of an HTTP method recognised as one */

/*
 * captured_first_bytes — classify the first len bytes a client sent on a
 * captured connection. Pure; the answer for a prefix is CAPF_NEED_MORE
 * only while the bytes could still open an HTTP request line (at most
 * CAPTURED_METHOD_MAX + 2 bytes are ever needed).
 */
enum captured_first captured_first_bytes(const uint8_t *buf, size_t len);

/*
 * captured_first_whole — whether the first len bytes a client sent on a
 * captured connection already refused (the egress process waits briefly
 * for them, proxy.c CS_REFUSE) are enough to answer it: its first TLS
 * record whole (the alert follows a whole ClientHello), an HTTP request
 * head up to its blank line (the 403 follows the whole head), any other
 * protocol at once (a reset); a full buffer (len >= cap) always is.
 * Waiting for the whole of it means no byte of the client's first write
 * is left unread when the connection closes. Pure.
 */
bool captured_first_whole(const uint8_t *buf, size_t len, size_t cap);
