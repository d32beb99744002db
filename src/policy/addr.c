/*
 * addr.c — classifying and printing addresses before egress dials them.
 * See addr.h.
 *
 * Design: two small tables of prefixes (IPv4, IPv6) searched in order, the
 * first match wins, so a more specific entry (a metadata address inside
 * link-local, the broadcast address inside 240/4) is listed before the wider
 * one. IPv6 forms that carry an IPv4 address are unwrapped in code before
 * the table and classified by the IPv4 address inside.
 *
 * Threat notes: the classes decide what a sandboxed program may reach
 * without an explicit IP/CIDR allow rule, so every doubt resolves towards a
 * refused class:
 *  - an embedded public IPv4 address is ADDR_EMBEDDED, never ADDR_PUBLIC
 *    (the outer form would reach it through a translator the run did not
 *    ask for); an embedded non-public one keeps its own class, so
 *    ::ffff:127.0.0.1 is ADDR_LOOPBACK and ::ffff:169.254.169.254 is
 *    ADDR_METADATA;
 *  - the rest of ::/8 (e.g. the SIIT form ::ffff:0:a.b.c.d) is not routable
 *    and is ADDR_RESERVED, so no spelling of an IPv4 address in the low bits
 *    of a zero prefix comes out public;
 *  - a few ranges beyond the list in addr.h are refused too: the
 *    deprecated 6to4 relay anycast 192.88.99/24, the IPv6 benchmarking
 *    range 2001:2::/48 and the newer documentation range 3fff::/20 as
 *    ADDR_RESERVED, and Azure's platform "wire server" 168.63.129.16 as
 *    ADDR_METADATA (a public address reachable only from inside the cloud,
 *    which hands out VM configuration);
 *  - the local-use NAT64 prefix 64:ff9b:1::/48 may embed the IPv4 address
 *    at several offsets (RFC 6052 section 2.2, chosen by the operator); the
 *    last 32 bits are taken (the /96 layout). Whatever the offset, the
 *    result is never ADDR_PUBLIC.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "policy/addr.h"

struct prefix4 {
        uint8_t net[4];
        unsigned len;
        enum addr_class c;
};

struct prefix6 {
        uint8_t net[16];
        unsigned len;
        enum addr_class c;
};

/* First match wins: exact addresses before the ranges that contain them. */
static const struct prefix4 table4[] = {
        {{169, 254, 169, 254}, 32, ADDR_METADATA}, /* AWS, GCP, Azure, OCI instance metadata */
        {{169, 254, 170, 2}, 32, ADDR_METADATA},   /* AWS ECS task metadata */
        {{100, 100, 100, 200}, 32, ADDR_METADATA}, /* Alibaba Cloud metadata */
        {{168, 63, 129, 16}, 32, ADDR_METADATA},   /* Azure wire server */
        {{255, 255, 255, 255}, 32, ADDR_BROADCAST}, {{0, 0, 0, 0}, 8, ADDR_UNSPECIFIED},
        {{127, 0, 0, 0}, 8, ADDR_LOOPBACK},         {{10, 0, 0, 0}, 8, ADDR_PRIVATE},
        {{172, 16, 0, 0}, 12, ADDR_PRIVATE},        {{192, 168, 0, 0}, 16, ADDR_PRIVATE},
        {{169, 254, 0, 0}, 16, ADDR_LINKLOCAL},     {{100, 64, 0, 0}, 10, ADDR_CGNAT},
        {{224, 0, 0, 0}, 4, ADDR_MULTICAST},        {{240, 0, 0, 0}, 4, ADDR_RESERVED},
        {{192, 0, 0, 0}, 24, ADDR_RESERVED},    /* IETF protocol assignments */
        {{192, 0, 2, 0}, 24, ADDR_RESERVED},    /* TEST-NET-1 */
        {{198, 51, 100, 0}, 24, ADDR_RESERVED}, /* TEST-NET-2 */
        {{203, 0, 113, 0}, 24, ADDR_RESERVED},  /* TEST-NET-3 */
        {{198, 18, 0, 0}, 15, ADDR_RESERVED},   /* benchmarking */
        {{192, 88, 99, 0}, 24, ADDR_RESERVED},  /* deprecated 6to4 relay anycast */
};

/* Checked after the embedded-IPv4 forms (see classify6). */
static const struct prefix6 table6[] = {
        {{0xfd, 0x00, 0x0e, 0xc2, [14] = 0x02, [15] = 0x54},
         128,
         ADDR_METADATA},                  /* fd00:ec2::254 */
        {{0xfc}, 7, ADDR_PRIVATE},        /* unique local */
        {{0xfe, 0xc0}, 10, ADDR_PRIVATE}, /* site-local */
        {{0xfe, 0x80}, 10, ADDR_LINKLOCAL},
        {{0xff}, 8, ADDR_MULTICAST},
        {{0x20, 0x01, 0x0d, 0xb8}, 32, ADDR_RESERVED},             /* documentation */
        {{0x3f, 0xff}, 20, ADDR_RESERVED},                         /* documentation (RFC 9637) */
        {{0x01, 0x00}, 64, ADDR_RESERVED},                         /* discard-only */
        {{0x20, 0x01, 0x00, 0x02, 0x00, 0x00}, 48, ADDR_RESERVED}, /* benchmarking */
        {{0}, 8, ADDR_RESERVED}, /* the rest of ::/8, after ::, ::1 and the embedded forms */
};

static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

bool addr_prefix_equal(const uint8_t *a, const uint8_t *b, unsigned len)
{
        unsigned full = len / 8, rest = len % 8;

        if (memcmp(a, b, full) != 0)
                return false;
        if (rest == 0)
                return true;
        uint8_t mask = (uint8_t)(0xffu << (8 - rest));
        return (a[full] & mask) == (b[full] & mask);
}

static enum addr_class classify4(const uint8_t a[4])
{
        for (size_t i = 0; i < sizeof table4 / sizeof table4[0]; i++)
                if (addr_prefix_equal(a, table4[i].net, table4[i].len))
                        return table4[i].c;
        return ADDR_PUBLIC;
}

/* An IPv6 form carrying v4: the IPv4 class, or EMBEDDED if that class is public. */
static enum addr_class embedded(const uint8_t v4[4])
{
        enum addr_class c = classify4(v4);
        return c == ADDR_PUBLIC ? ADDR_EMBEDDED : c;
}

static enum addr_class classify6(const uint8_t a[16])
{
        static const uint8_t zero[16] = {0};
        static const uint8_t nat64[12] = {0x00, 0x64, 0xff, 0x9b}; /* 64:ff9b::/96 */
        static const uint8_t nat64_local[6] = {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}; /* /48 */

        if (memcmp(a, zero, 15) == 0 && a[15] <= 1)
                return a[15] == 0 ? ADDR_UNSPECIFIED : ADDR_LOOPBACK;
        if (memcmp(a, v4_mapped, 12) == 0 || memcmp(a, zero, 12) == 0) /* mapped, compatible */
                return embedded(a + 12);
        if (memcmp(a, nat64, sizeof nat64) == 0 || memcmp(a, nat64_local, sizeof nat64_local) == 0)
                return embedded(a + 12);
        if (a[0] == 0x20 && a[1] == 0x02) /* 6to4 2002:V4ADDR::/48 */
                return embedded(a + 2);
        if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0 && a[3] == 0) { /* Teredo 2001::/32 */
                uint8_t client[4] = {(uint8_t)~a[12], (uint8_t)~a[13], (uint8_t)~a[14],
                                     (uint8_t)~a[15]};
                return embedded(client);
        }
        for (size_t i = 0; i < sizeof table6 / sizeof table6[0]; i++)
                if (addr_prefix_equal(a, table6[i].net, table6[i].len))
                        return table6[i].c;
        return ADDR_PUBLIC;
}

enum addr_class addr_classify(const uint8_t addr[16], int family)
{
        if (!addr)
                return _ADDR_CLASS_INVALID;
        if (family == AF_INET)
                return classify4(addr);
        if (family == AF_INET6)
                return classify6(addr);
        return _ADDR_CLASS_INVALID;
}

const char *addr_class_name(enum addr_class c)
{
        static const char *const names[_ADDR_CLASS_MAX] = {
                [ADDR_PUBLIC] = "public",
                [ADDR_LOOPBACK] = "loopback",
                [ADDR_PRIVATE] = "private",
                [ADDR_LINKLOCAL] = "link-local",
                [ADDR_CGNAT] = "cgnat",
                [ADDR_MULTICAST] = "multicast",
                [ADDR_UNSPECIFIED] = "unspecified",
                [ADDR_BROADCAST] = "broadcast",
                [ADDR_METADATA] = "metadata",
                [ADDR_RESERVED] = "reserved",
                [ADDR_EMBEDDED] = "embedded",
        };

        if ((int)c < 0 || (int)c >= _ADDR_CLASS_MAX)
                return "invalid";
        return names[c];
}

/*
 * RFC 5952 section 4: lower-case hex without leading zeros; "::" for the
 * longest run of two or more zero fields, the first such run on a tie;
 * IPv4-mapped addresses in mixed notation (section 5). Always fits 46 bytes.
 */
static void format6(const uint8_t *a, char *buf, size_t len)
{
        uint16_t w[8];
        int best = -1, best_len = 0;
        size_t o = 0;

        if (memcmp(a, v4_mapped, sizeof v4_mapped) == 0) {
                snprintf(buf, len, "::ffff:%u.%u.%u.%u", a[12], a[13], a[14], a[15]);
                return;
        }
        for (int k = 0; k < 8; k++)
                w[k] = (uint16_t)(a[2 * k] << 8 | a[2 * k + 1]);
        for (int k = 0; k < 8;) {
                int e = k;
                while (e < 8 && w[e] == 0)
                        e++;
                if (e - k > best_len) {
                        best = k;
                        best_len = e - k;
                }
                k = e > k ? e : k + 1;
        }
        if (best_len < 2) {
                best = -1; /* a single zero field stays "0" */
                best_len = 0;
        }

        buf[0] = '\0';
        for (int k = 0; k < 8 && o < len; k++) {
                int n;
                if (k == best) {
                        n = snprintf(buf + o, len - o, "::");
                        k += best_len - 1;
                } else
                        n = snprintf(buf + o, len - o, "%s%x",
                                     k > 0 && k != best + best_len ? ":" : "", w[k]);
                if (n < 0)
                        return;
                o += (size_t)n;
        }
}

const char *addr_format(const uint8_t addr[16], int family, char *buf, unsigned len)
{
        char tmp[64];

        if (!buf || len == 0)
                return buf;
        if (!addr)
                snprintf(tmp, sizeof tmp, "invalid");
        else if (family == AF_INET)
                snprintf(tmp, sizeof tmp, "%u.%u.%u.%u", addr[0], addr[1], addr[2], addr[3]);
        else if (family == AF_INET6)
                format6(addr, tmp, sizeof tmp);
        else
                snprintf(tmp, sizeof tmp, "invalid");
        /* never a truncated address: too small a buffer gets "" */
        if (strlen(tmp) < len)
                memcpy(buf, tmp, strlen(tmp) + 1);
        else
                buf[0] = '\0';
        return buf;
}
