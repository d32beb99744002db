/*
 * rules.c — egress allow/deny rules, host names and IP literals. See rules.h.
 *
 * Design: every function here is a pure function of its arguments (no
 * syscalls, no allocation, no state), so the whole file is unit-tested and
 * fuzzed as is. Input is taken as (pointer, length) and never assumed to be
 * NUL-terminated; every index is checked against the length before it is
 * read, and a NUL inside the input is refused rather than silently ending it.
 *
 * Threat notes: rule text comes from a policy file or the command line, host
 * names come from the sandboxed program (a CONNECT target, a DNS question,
 * a TLS SNI). So the accepted language is kept small and exact, and written
 * out by hand instead of borrowing inet_pton/inet_aton (whose accepted
 * spellings differ between libcs):
 *
 *  - an IPv4 literal is exactly four decimal parts 0..255 with no leading
 *    zeros; every other numeric spelling ("127.1", "0x7f.1", "2130706433",
 *    "0177.0.0.1") that some resolver would read as an address is refused as
 *    a host name, so "allow example.com" can never be turned into "dial
 *    127.0.0.1" by a program that writes the address in an odd way;
 *  - a host name is ASCII, [a-z0-9-_.] after lower-casing, so two spellings
 *    of one name cannot slip past a deny rule written in the other;
 *  - a rule's canonical text re-parses to the identical rule (the fuzz
 *    target checks it), so what the audit log shows is what was enforced.
 *
 * Matching tolerates an upper-case or trailing-dot host on input (DNS names
 * are case-insensitive and "example.com." is the same name), so a caller
 * that forgot to canonicalise still hits a deny rule.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "shared/macro.h"
#include "policy/addr.h"
#include "policy/rules.h"

#define NET_LABEL_MAX  63
#define RULE_INPUT_MAX 512 /* bytes of a rule as written; any valid rule is shorter */

static const char why_ip_spelling[] = "an IP address spelling, not a host name";

static int fail(const char **why, const char *msg)
{
        if (why)
                *why = msg;
        return -EINVAL;
}

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

static char lower(char c)
{
        return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* ASCII-only, whatever the locale (strncasecmp follows LC_CTYPE). */
static bool ascii_case_equal(const char *a, const char *b, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (lower(a[i]) != lower(b[i]))
                        return false;
        return true;
}

/* ---- host names -------------------------------------------------------- */

/* A byte that is not allowed anywhere in a host name, with the reason. */
static const char *bad_host_byte(unsigned char c)
{
        if (c == 0)
                return "NUL in host name";
        if (c >= 0x80)
                return "non-ASCII host name (write the A-label, \"xn--...\")";
        if (c == '%')
                return "'%' in host name (zone or percent-encoding)";
        if (c == '@')
                return "'@' in host name (user info)";
        if (c == '/' || c == '\\')
                return "'/' or '\\' in host name";
        if (c == ':')
                return "':' in host name (an IPv6 address or a port)";
        if (c <= 0x20 || c == 0x7f)
                return "space or control character in host name";
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.')
                return NULL;
        return "invalid character in host name";
}

/* The work of net_host_canonical; out is written only once the name is known good. */
static int host_canonical(const char *s, size_t len, char *out, const char **why)
{
        if (!s || len == 0)
                return fail(why, "empty host name");
        for (size_t i = 0; i < len; i++) {
                const char *bad = bad_host_byte((unsigned char)s[i]);
                if (bad)
                        return fail(why, bad);
        }

        size_t n = len;
        if (s[n - 1] == '.')
                n--; /* one trailing dot: the same (absolute) name */
        if (n == 0)
                return fail(why, "empty host name");
        if (n > NET_HOST_MAX)
                return fail(why, "host name longer than 253 bytes");

        size_t label = 0; /* start of the current label */
        for (size_t i = 0; i <= n; i++) {
                if (i < n && s[i] != '.')
                        continue;
                size_t l = i - label;
                if (l == 0)
                        return fail(why, "empty label in host name (\"..\" or a leading dot)");
                if (l > NET_LABEL_MAX)
                        return fail(why, "label longer than 63 bytes in host name");
                if (s[label] == '-' || s[i - 1] == '-')
                        return fail(why, "label starts or ends with '-' in host name");
                label = i + 1;
        }

        for (size_t i = 0; i < n; i++)
                out[i] = lower(s[i]);
        out[n] = '\0';
        if (net_host_is_ip_spelling(out))
                return fail(why, why_ip_spelling);
        return 0;
}

int net_host_canonical(const char *s, size_t len, char out[NET_HOST_MAX + 1], const char **why)
{
        int k = host_canonical(s, len, out, why);
        if (k < 0)
                out[0] = '\0';
        return k;
}

/*
 * One part of a numeric IPv4 spelling as inet_aton and the BSD resolvers
 * read it: decimal digits, an octal number (which starts with "0" and so is
 * all digits too), or "0x" with zero or more hex digits. Any all-digit part
 * counts, "08" and "999" included: a resolver that reads them differently is
 * still reading an address, and refusing such a name costs nothing.
 */
static bool numeric_part(const char *p, size_t n)
{
        if (n == 0)
                return false;
        if (n >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
                for (size_t i = 2; i < n; i++)
                        if (hex_digit_value(p[i]) < 0)
                                return false;
                return true;
        }
        for (size_t i = 0; i < n; i++)
                if (!is_digit(p[i]))
                        return false;
        return true;
}

bool net_host_is_ip_spelling(const char *s)
{
        if (!s)
                return false;
        if (strchr(s, ':'))
                return true;
        size_t n = strlen(s);
        if (n > 0 && s[n - 1] == '.')
                n--; /* "127.1." is read as 127.1 by some resolvers */
        if (n == 0)
                return false;

        unsigned parts = 0;
        size_t start = 0;
        for (size_t i = 0; i <= n; i++) {
                if (i < n && s[i] != '.')
                        continue;
                if (++parts > 4 || !numeric_part(s + start, i - start))
                        return false;
                start = i + 1;
        }
        return true;
}

/* ---- IP literals --------------------------------------------------------- */

/* Exactly a.b.c.d, each 0..255 in decimal without leading zeros. */
static int parse_v4(const char *s, size_t len, uint8_t out[4])
{
        size_t i = 0;

        for (int part = 0; part < 4; part++) {
                if (part > 0) {
                        if (i >= len || s[i] != '.')
                                return -EINVAL;
                        i++;
                }
                size_t start = i;
                unsigned v = 0;
                while (i < len && i - start < 3 && is_digit(s[i]))
                        v = v * 10 + (unsigned)(s[i++] - '0');
                size_t n = i - start;
                if (n == 0 || (n > 1 && s[start] == '0') || v > 255)
                        return -EINVAL;
                out[part] = (uint8_t)v;
        }
        return i == len ? 0 : -EINVAL;
}

/*
 * RFC 4291 section 2.2 text: eight groups of 1..4 hex digits separated by
 * ':', one "::" standing for one or more zero groups, and optionally a
 * dotted quad (parse_v4) in place of the last two groups.
 */
static int parse_v6(const char *s, size_t len, uint8_t out[16])
{
        uint16_t w[8] = {0};
        int n = 0, gap = -1;
        size_t i = 0;

        if (len >= 2 && s[0] == ':' && s[1] == ':') {
                gap = 0;
                i = 2;
        } else if (len >= 1 && s[0] == ':')
                return -EINVAL;

        while (i < len) {
                size_t start = i, j = i;
                while (j < len && hex_digit_value(s[j]) >= 0)
                        j++;
                if (j < len && s[j] == '.') {
                        /* the dotted quad: the last 32 bits, up to the end */
                        uint8_t v4[4];
                        if (n > 6 || parse_v4(s + start, len - start, v4) < 0)
                                return -EINVAL;
                        w[n++] = (uint16_t)(v4[0] << 8 | v4[1]);
                        w[n++] = (uint16_t)(v4[2] << 8 | v4[3]);
                        i = len;
                        break;
                }
                if (j == start || j - start > 4 || n >= 8)
                        return -EINVAL;
                unsigned v = 0;
                for (size_t k = start; k < j; k++)
                        v = v << 4 | (unsigned)hex_digit_value(s[k]);
                w[n++] = (uint16_t)v;
                i = j;
                if (i == len)
                        break;
                if (s[i] != ':')
                        return -EINVAL;
                i++;
                if (i < len && s[i] == ':') {
                        if (gap >= 0)
                                return -EINVAL;
                        gap = n;
                        i++;
                } else if (i == len)
                        return -EINVAL; /* a trailing single ':' */
        }

        if (gap < 0 ? n != 8 : n > 7)
                return -EINVAL;
        uint16_t full[8] = {0};
        if (gap < 0)
                memcpy(full, w, sizeof full);
        else {
                for (int k = 0; k < gap; k++)
                        full[k] = w[k];
                for (int k = gap; k < n; k++)
                        full[8 - (n - k)] = w[k];
        }
        for (int k = 0; k < 8; k++) {
                out[2 * k] = (uint8_t)(full[k] >> 8);
                out[2 * k + 1] = (uint8_t)full[k];
        }
        return 0;
}

int net_ip_parse(const char *s, size_t len, bool bracketed_ok, uint8_t addr[16], int *family)
{
        uint8_t a[16] = {0};

        if (!s || len == 0)
                return -EINVAL;
        if (s[0] == '[') {
                if (!bracketed_ok || len < 2 || s[len - 1] != ']')
                        return -EINVAL;
                if (parse_v6(s + 1, len - 2, a) < 0)
                        return -EINVAL;
                memcpy(addr, a, 16);
                *family = AF_INET6;
                return 0;
        }
        if (memchr(s, ':', len)) {
                if (parse_v6(s, len, a) < 0)
                        return -EINVAL;
                memcpy(addr, a, 16);
                *family = AF_INET6;
                return 0;
        }
        if (parse_v4(s, len, a) < 0)
                return -EINVAL;
        memcpy(addr, a, 16);
        *family = AF_INET;
        return 0;
}

/* ---- rules --------------------------------------------------------------- */

/* Is addr[0..bytes) zero from bit `prefix` on? */
static bool host_bits_zero(const uint8_t *addr, unsigned bytes, unsigned prefix)
{
        for (unsigned b = prefix; b < bytes * 8; b++)
                if (addr[b / 8] & (0x80u >> (b % 8)))
                        return false;
        return true;
}

/* A CIDR prefix length: 1..3 decimal digits, no leading zero, 0..max. */
static int parse_prefix(const char *s, size_t len, unsigned max, unsigned *out, const char **why)
{
        unsigned v = 0;

        if (len == 0)
                return fail(why, "empty CIDR prefix length");
        for (size_t i = 0; i < len; i++)
                if (!is_digit(s[i]))
                        return fail(why, "CIDR prefix length is not a decimal number");
        if (len > 1 && s[0] == '0')
                return fail(why, "CIDR prefix length with a leading zero");
        if (len > 3)
                return fail(why, "CIDR prefix length out of range");
        for (size_t i = 0; i < len; i++)
                v = v * 10 + (unsigned)(s[i] - '0');
        if (v > max)
                return fail(why, "CIDR prefix length out of range");
        *out = v;
        return 0;
}

/* ":80,443" without the ':'; kept sorted, duplicates refused. */
static int parse_ports(const char *s, size_t len, struct net_rule *r, const char **why)
{
        size_t i = 0;

        if (len == 0)
                return fail(why, "empty port list after ':'");
        for (;;) {
                size_t start = i;
                unsigned long v = 0;
                while (i < len && i - start < 6 && is_digit(s[i]))
                        v = v * 10 + (unsigned long)(s[i++] - '0');
                size_t n = i - start;
                if (n == 0) {
                        if (i == len || s[i] == ',')
                                return fail(why, "empty port in port list");
                        return fail(why, "port is not a decimal number");
                }
                if (n > 1 && s[start] == '0')
                        return fail(why, "port with a leading zero");
                if (n > 5 || v == 0 || v > 65535)
                        return fail(why, "port out of range (1..65535)");
                if (i < len && s[i] != ',') {
                        if (s[i] == '-')
                                return fail(why, "port ranges are not supported");
                        return fail(why, "port is not a decimal number");
                }
                if (r->n_ports == RULE_PORTS_MAX)
                        return fail(why, "more than 16 ports in one rule");

                size_t at = r->n_ports;
                for (size_t k = 0; k < r->n_ports; k++) {
                        if (r->ports[k] == v)
                                return fail(why, "duplicate port");
                        if (r->ports[k] > v) {
                                at = k;
                                break;
                        }
                }
                memmove(r->ports + at + 1, r->ports + at, (r->n_ports - at) * sizeof r->ports[0]);
                r->ports[at] = (uint16_t)v;
                r->n_ports++;

                if (i == len)
                        return 0;
                i++; /* ',' */
                if (i == len)
                        return fail(why, "empty port in port list");
        }
}

/* Write r->text from the parsed fields. */
static int rule_text(struct net_rule *r, const char **why)
{
        char a[64];
        char ports[RULE_PORTS_MAX * 6 + 2] = "";
        size_t o = 0;
        int n = 0;

        for (size_t k = 0; k < r->n_ports; k++)
                o += (size_t)snprintf(ports + o, sizeof ports - o, "%c%u", k == 0 ? ':' : ',',
                                      r->ports[k]);

        switch (r->kind) {
        case RULE_HOST:
                n = snprintf(r->text, sizeof r->text, "%s%s", r->host, ports);
                break;
        case RULE_SUFFIX:
                n = snprintf(r->text, sizeof r->text, "*.%s%s", r->host, ports);
                break;
        case RULE_IP:
        case RULE_CIDR: {
                addr_format(r->addr, r->family, a, sizeof a);
                /* IPv6 with a port list needs brackets; without one, none */
                bool br = r->family == AF_INET6 && r->n_ports > 0;
                char pfx[8] = "";
                if (r->kind == RULE_CIDR)
                        snprintf(pfx, sizeof pfx, "/%u", r->prefix);
                n = snprintf(r->text, sizeof r->text, "%s%s%s%s%s", br ? "[" : "", a, br ? "]" : "",
                             pfx, ports);
                break;
        }
        case _RULE_KIND_MAX:
        case _RULE_KIND_INVALID:
        default:
                return fail(why, "internal: unknown rule kind");
        }
        if (n < 0 || (size_t)n >= sizeof r->text)
                return fail(why, "rule too long");
        return 0;
}

/* An address (already parsed) with an optional "/prefix" into r. */
static int set_addr(struct net_rule *r, const uint8_t addr[16], int family, const char *pfx,
                    size_t pfx_len, bool has_pfx, const char **why)
{
        unsigned bits = family == AF_INET ? 32 : 128;

        r->family = family;
        memcpy(r->addr, addr, 16);
        if (!has_pfx) {
                r->kind = RULE_IP;
                r->prefix = bits;
                return 0;
        }
        int k = parse_prefix(pfx, pfx_len, bits, &r->prefix, why);
        if (k < 0)
                return k;
        if (!host_bits_zero(r->addr, bits / 8, r->prefix))
                return fail(why, "host bits set in CIDR");
        r->kind = RULE_CIDR;
        return 0;
}

/* "[v6]", "[v6]:ports", "[v6]/len", "[v6]/len:ports" */
static int parse_bracketed(const char *s, size_t len, struct net_rule *r, const char **why)
{
        const char *close = memchr(s, ']', len);
        uint8_t a[16];
        int fam;

        if (!close)
                return fail(why, "'[' without ']'");
        size_t inner = (size_t)(close - s) - 1;
        if (net_ip_parse(s + 1, inner, false, a, &fam) < 0)
                return fail(why, "invalid IPv6 address in brackets");
        if (fam != AF_INET6)
                return fail(why, "brackets are for IPv6 addresses only");

        size_t i = inner + 2; /* after ']' */
        const char *pfx = NULL;
        size_t pfx_len = 0;
        bool has_pfx = i < len && s[i] == '/';
        if (has_pfx) {
                pfx = s + i + 1;
                const char *colon = memchr(pfx, ':', len - i - 1);
                pfx_len = colon ? (size_t)(colon - pfx) : len - i - 1;
                i += 1 + pfx_len;
        }
        int k = set_addr(r, a, fam, pfx, pfx_len, has_pfx, why);
        if (k < 0)
                return k;
        if (i == len)
                return 0;
        if (s[i] != ':')
                return fail(why, "junk after ']'");
        return parse_ports(s + i + 1, len - i - 1, r, why);
}

/* A bare IPv6 address or CIDR: any port (a port list needs the brackets). */
static int parse_bare_v6(const char *s, size_t len, struct net_rule *r, const char **why)
{
        const char *slash = memchr(s, '/', len);
        size_t alen = slash ? (size_t)(slash - s) : len;
        uint8_t a[16];
        int fam;

        if (net_ip_parse(s, alen, false, a, &fam) < 0 || fam != AF_INET6)
                return fail(why, "invalid IPv6 address (with ports, write [addr]:port)");
        if (slash) {
                size_t plen = len - alen - 1;
                if (memchr(slash + 1, ':', plen))
                        return fail(why, "an IPv6 CIDR with ports needs brackets: [addr]/len:port");
                return set_addr(r, a, fam, slash + 1, plen, true, why);
        }
        return set_addr(r, a, fam, NULL, 0, false, why);
}

/* "host", "*.suffix", "a.b.c.d", "a.b.c.d/len", each with an optional ":ports". */
static int parse_plain(const char *s, size_t len, struct net_rule *r, const char **why)
{
        const char *colon = memchr(s, ':', len);
        size_t hlen = colon ? (size_t)(colon - s) : len;
        const char *slash = memchr(s, '/', hlen);
        uint8_t a[16];
        int fam, k;

        if (slash) {
                size_t alen = (size_t)(slash - s);
                if (net_ip_parse(s, alen, false, a, &fam) < 0)
                        return fail(why, "a CIDR needs a canonical IPv4 address (or [IPv6]/len)");
                k = set_addr(r, a, fam, slash + 1, hlen - alen - 1, true, why);
        } else if (net_ip_parse(s, hlen, false, a, &fam) == 0) {
                k = set_addr(r, a, fam, NULL, 0, false, why);
        } else if (hlen >= 2 && s[0] == '*' && s[1] == '.') {
                if (hlen == 2)
                        return fail(why, "nothing after \"*.\"");
                k = net_host_canonical(s + 2, hlen - 2, r->host, why);
                r->kind = RULE_SUFFIX;
        } else if (memchr(s, '*', hlen)) {
                return fail(why, "'*' is allowed only as a leading \"*.\"");
        } else {
                const char *w = NULL;
                k = net_host_canonical(s, hlen, r->host, &w);
                if (k < 0 && w == why_ip_spelling)
                        w = "IPv4 address not in canonical dotted-quad form";
                if (k < 0)
                        return fail(why, w);
                r->kind = RULE_HOST;
        }
        if (k < 0)
                return k;
        if (colon)
                return parse_ports(colon + 1, len - hlen - 1, r, why);
        return 0;
}

int net_rule_parse(const char *s, size_t len, struct net_rule *out, const char **why)
{
        int k;

        memset(out, 0, sizeof *out);
        if (!s || len == 0)
                k = fail(why, "empty rule");
        else if (len > RULE_INPUT_MAX)
                k = fail(why, "rule too long");
        else if (memchr(s, '\0', len))
                k = fail(why, "NUL in rule");
        else if (memmem(s, len, "://", 3))
                k = fail(why, "a rule is a host name, not a URL");
        else if (s[0] == '[')
                k = parse_bracketed(s, len, out, why);
        else {
                const char *c = memchr(s, ':', len);
                if (c && memchr(c + 1, ':', len - (size_t)(c - s) - 1))
                        k = parse_bare_v6(s, len, out, why);
                else
                        k = parse_plain(s, len, out, why);
        }
        if (k == 0)
                k = rule_text(out, why);
        if (k < 0) {
                memset(out, 0, sizeof *out);
                out->kind = _RULE_KIND_INVALID;
        }
        return k;
}

/* ---- matching ---------------------------------------------------------- */

bool net_rule_has_port(const struct net_rule *r, uint16_t port)
{
        if (!r)
                return false;
        if (r->n_ports == 0)
                return true;
        for (size_t k = 0; k < r->n_ports && k < RULE_PORTS_MAX; k++)
                if (r->ports[k] == port)
                        return true;
        return false;
}

bool net_rule_match_host(const struct net_rule *r, const char *host, uint16_t port)
{
        if (!r || !host || (r->kind != RULE_HOST && r->kind != RULE_SUFFIX))
                return false;
        size_t hl = strnlen(host, NET_HOST_MAX + 2);
        if (hl > 0 && host[hl - 1] == '.')
                hl--;
        if (hl == 0 || hl > NET_HOST_MAX)
                return false;
        size_t rl = strnlen(r->host, sizeof r->host);
        if (rl == 0 || rl > NET_HOST_MAX)
                return false;

        bool name;
        if (r->kind == RULE_HOST)
                name = hl == rl && ascii_case_equal(host, r->host, rl);
        else /* strictly below: at least one label and a '.' before the suffix */
                name = hl > rl + 1 && host[hl - rl - 1] == '.' &&
                       ascii_case_equal(host + hl - rl, r->host, rl);
        return name && net_rule_has_port(r, port);
}

bool net_rule_match_addr(const struct net_rule *r, const uint8_t addr[16], int family,
                         uint16_t port)
{
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        const uint8_t *a;
        unsigned bits;

        if (!r || !addr || (r->kind != RULE_IP && r->kind != RULE_CIDR))
                return false;
        if (r->family == AF_INET) {
                bits = 32;
                if (family == AF_INET)
                        a = addr;
                else if (family == AF_INET6 && memcmp(addr, mapped, sizeof mapped) == 0)
                        a = addr + 12;
                else
                        return false;
        } else if (r->family == AF_INET6) {
                /* an AF_INET address never matches an IPv6 rule, ::ffff:0:0/96 included */
                bits = 128;
                if (family != AF_INET6)
                        return false;
                a = addr;
        } else
                return false;

        unsigned prefix = r->kind == RULE_IP ? bits : r->prefix;
        if (prefix > bits)
                return false;
        return addr_prefix_equal(a, r->addr, prefix) && net_rule_has_port(r, port);
}
