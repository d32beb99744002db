/*
 * rules.h — egress allow/deny rules and host names (pure; fuzzed).
 *
 * A rule is one string of the policy's `network.allow` / `network.deny`
 * (or of `--allow-host`):
 *
 *   api.example.com            exact host, any port
 *   api.example.com:443        exact host, one port
 *   *.example.com:443,8443     any name strictly below example.com, two ports
 *   203.0.113.7:443            one IPv4 address (canonical dotted quad only)
 *   [2001:db8::1]:443          one IPv6 address (brackets required with a port)
 *   2001:db8::1                one IPv6 address, any port
 *   10.0.0.0/8:5432            an IPv4 CIDR;  [2001:db8::]/32:443 an IPv6 CIDR
 *
 * Host names are canonicalised once (net_host_canonical): ASCII only
 * (policies use A-labels, "xn--..."), lower case, one trailing dot
 * dropped, labels of [a-z0-9-_] (1..63 bytes, no leading/trailing '-'),
 * at most 253 bytes. Refused: empty, NUL, '%', '@', '/', '\', ':', spaces,
 * non-ASCII, "..", a name that is an IP literal in any spelling
 * (net_host_is_ip_spelling). A suffix rule "*.example.com" matches
 * "a.example.com" and "a.b.example.com", never "example.com" itself.
 * Ports are 1..65535, at most RULE_PORTS_MAX per rule, written as
 * ":443" or ":80,443" (no spaces, no ranges).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RULE_PORTS_MAX 16
#define NET_HOST_MAX   253 /* bytes of a canonical name, NUL not included */
#define RULE_TEXT_MAX  320 /* bytes of a rule's canonical text, NUL included */

enum rule_kind {
        RULE_HOST,   /* exact name */
        RULE_SUFFIX, /* "*.suffix": names strictly below suffix */
        RULE_IP,     /* one address */
        RULE_CIDR,   /* a prefix */
        _RULE_KIND_MAX,
        _RULE_KIND_INVALID = -22,
};

struct net_rule {
        enum rule_kind kind;
        char host[NET_HOST_MAX + 1]; /* RULE_HOST: the name; RULE_SUFFIX: the suffix (no "*.") */
        int family;                  /* AF_INET / AF_INET6 for RULE_IP / RULE_CIDR */
        uint8_t addr[16];            /* IPv4 in the first 4 bytes; CIDR: host bits zeroed */
        unsigned prefix;             /* CIDR prefix length (IP: 32 or 128) */
        uint16_t ports[RULE_PORTS_MAX];
        size_t n_ports;           /* 0 = any port */
        char text[RULE_TEXT_MAX]; /* canonical form, for messages and the audit log */
};

/*
 * net_rule_parse — parse one rule from `len` bytes (need not be
 * NUL-terminated). Returns 0 with *out filled, or -EINVAL with *why (a
 * static phrase, e.g. "port out of range") set. A CIDR with host bits set
 * is refused ("host bits set in CIDR"). Pure.
 */
int net_rule_parse(const char *s, size_t len, struct net_rule *out, const char **why);

/*
 * net_host_canonical — canonicalise a host name as described above into
 * out (NET_HOST_MAX + 1 bytes). Returns 0 or -EINVAL with *why. Pure.
 */
int net_host_canonical(const char *s, size_t len, char out[NET_HOST_MAX + 1], const char **why);

/*
 * net_host_is_ip_spelling — true if `s` (NUL-terminated) would be taken
 * as an IPv4 address by some resolver or inet_aton: all-numeric dotted
 * forms with 1..4 parts, decimal, octal (leading 0) or hex (0x) parts,
 * e.g. "127.1", "2130706433", "0x7f.0.0.1", "0177.0.0.1", and any string
 * containing ':' (an IPv6 literal). Pure.
 */
bool net_host_is_ip_spelling(const char *s);

/*
 * net_ip_parse — parse a canonical IP literal: IPv4 as exactly four
 * decimal parts 0..255 without leading zeros, or IPv6 text (RFC 4291, with
 * "::" and an embedded dotted quad allowed; no zone "%..."), with
 * surrounding brackets allowed for IPv6 only when `bracketed_ok`. Returns
 * 0 with addr/family set, or -EINVAL. Pure.
 */
int net_ip_parse(const char *s, size_t len, bool bracketed_ok, uint8_t addr[16], int *family);

/* net_rule_match_host — does rule r (HOST or SUFFIX) allow canonical `host` on `port`? */
bool net_rule_match_host(const struct net_rule *r, const char *host, uint16_t port);

/* net_rule_match_addr — does rule r (IP or CIDR) cover addr/family on `port`?
 * An IPv4-mapped IPv6 address (::ffff:a.b.c.d) matches IPv4 rules as a.b.c.d. */
bool net_rule_match_addr(const struct net_rule *r, const uint8_t addr[16], int family,
                         uint16_t port);

/* net_rule_has_port — true if r has no port list or lists `port`. */
bool net_rule_has_port(const struct net_rule *r, uint16_t port);
