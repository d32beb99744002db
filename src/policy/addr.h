/*
 * addr.h — classify a resolved or literal address before egress dials it
 * (pure; fuzzed together with rules.c).
 *
 * Everything not ADDR_PUBLIC is refused unless an explicit IP/CIDR allow
 * rule covers it (or, for one name, an operator --add-host). IPv6 forms
 * that embed an IPv4 address are classified by that address: IPv4-mapped
 * ::ffff:0:0/96, IPv4-compatible ::/96 (other than :: and ::1), NAT64
 * 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16 (the 32 bits after the
 * prefix), Teredo 2001::/32 (the client address: the last 32 bits, inverted);
 * the more restrictive of the embedded class and ADDR_EMBEDDED is reported
 * (an embedded public address is ADDR_EMBEDDED: refused, since the outer
 * form is not what the run asked for).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

enum addr_class {
        ADDR_PUBLIC,
        ADDR_LOOPBACK,    /* 127/8, ::1 */
        ADDR_PRIVATE,     /* 10/8, 172.16/12, 192.168/16, fc00::/7, fec0::/10 */
        ADDR_LINKLOCAL,   /* 169.254/16 (but see METADATA), fe80::/10 */
        ADDR_CGNAT,       /* 100.64/10 */
        ADDR_MULTICAST,   /* 224/4, ff00::/8 */
        ADDR_UNSPECIFIED, /* 0/8, :: */
        ADDR_BROADCAST,   /* 255.255.255.255 */
        ADDR_METADATA,    /* 169.254.169.254, 169.254.170.2, fd00:ec2::254, 100.100.100.200 */
        ADDR_RESERVED,    /* 240/4, 192.0.0/24, 198.18/15, documentation ranges, 2001:db8::/32,
                             100::/64 */
        ADDR_EMBEDDED,    /* an IPv6 form embedding an IPv4 address (see above) */
        _ADDR_CLASS_MAX,
        _ADDR_CLASS_INVALID = -22,
};

/* addr_classify — the class of addr (IPv4 in the first 4 bytes when family is AF_INET). Pure. */
enum addr_class addr_classify(const uint8_t addr[16], int family);

/* addr_prefix_equal — do a and b agree in their first `len` bits? Pure. */
bool addr_prefix_equal(const uint8_t *a, const uint8_t *b, unsigned len);

/* addr_class_name — "public", "loopback", "private", ... ("invalid" otherwise). */
const char *addr_class_name(enum addr_class c);

/*
 * addr_format — the canonical text of addr into buf (>= 46 bytes):
 * dotted quad, or RFC 5952 IPv6. Returns buf.
 */
const char *addr_format(const uint8_t addr[16], int family, char *buf, unsigned len);
