/*
 * fuzz_rules.c — libFuzzer target for egress rules, host names, IP literals
 * (src/policy/rules.c) and address classes and text (src/policy/addr.c).
 *
 * Every piece of input is copied into a heap buffer of exactly its length,
 * so a read past it is an ASan report. The whole input is fed to each
 * parser; if it holds a '\n', the part before is also parsed as a rule and
 * the part after as a host name and an address, and the rule's answer is
 * compared with a plain re-statement of rules.h. Beyond "no crash, no UB",
 * each result is checked against what the headers promise, and a
 * disagreement aborts:
 *  - an accepted rule is well formed (kind, sorted unique ports, zero host
 *    bits, canonical host) and its canonical text re-parses to the
 *    identical rule; it matches its own address or name;
 *  - a canonical host is <= 253 bytes of [a-z0-9-_.] in 1..63-byte labels,
 *    not an IP spelling, re-canonicalises to itself and parses as a HOST rule;
 *  - an accepted IP literal is also accepted by inet_pton with the same
 *    bytes (and the other way round), formats (RFC 5952) to text that
 *    re-parses to the same bytes, is an IP spelling, and has a class;
 *  - classification is total, and an IPv4-mapped address is classified as
 *    its IPv4 address (EMBEDDED in place of PUBLIC).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "policy/addr.h"
#include "policy/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                   \
        do {                                                                                       \
                if (!(x))                                                                          \
                        abort();                                                                   \
        } while (0)

static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static char *dup_exact(const uint8_t *p, size_t n)
{
        char *c = malloc(n ? n : 1);
        if (c)
                memcpy(c, p, n);
        return c;
}

/* NUL-terminated copy, or NULL if p holds a NUL (the C-string APIs could not see all of it). */
static char *dup_cstr(const char *p, size_t n)
{
        if (memchr(p, '\0', n))
                return NULL;
        char *c = malloc(n + 1);
        if (c) {
                memcpy(c, p, n);
                c[n] = '\0';
        }
        return c;
}

static bool host_byte(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

/* What rules.h says a canonical host is. */
static void check_canonical_host(const char *h)
{
        size_t n = strnlen(h, NET_HOST_MAX + 1);
        CHECK(n >= 1 && n <= NET_HOST_MAX);
        size_t label = 0;
        for (size_t i = 0; i <= n; i++) {
                if (i < n) {
                        CHECK(host_byte(h[i]));
                        if (h[i] != '.')
                                continue;
                }
                size_t l = i - label;
                CHECK(l >= 1 && l <= 63);
                CHECK(h[label] != '-' && h[i - 1] != '-');
                label = i + 1;
        }
        CHECK(!net_host_is_ip_spelling(h));

        char again[NET_HOST_MAX + 1];
        const char *why = NULL;
        CHECK(net_host_canonical(h, n, again, &why) == 0 && strcmp(again, h) == 0);
}

static bool ports_sorted(const struct net_rule *r)
{
        if (r->n_ports > RULE_PORTS_MAX)
                return false;
        for (size_t k = 0; k < r->n_ports; k++)
                if (r->ports[k] == 0 || (k > 0 && r->ports[k - 1] >= r->ports[k]))
                        return false;
        return true;
}

static bool host_bits_zero(const uint8_t *a, unsigned bits, unsigned prefix)
{
        for (unsigned b = prefix; b < bits; b++)
                if (a[b / 8] & (0x80u >> (b % 8)))
                        return false;
        return true;
}

static void check_rule(const struct net_rule *r)
{
        CHECK(r->kind >= 0 && r->kind < _RULE_KIND_MAX);
        CHECK(ports_sorted(r));
        size_t tl = strnlen(r->text, RULE_TEXT_MAX);
        CHECK(tl > 0 && tl < RULE_TEXT_MAX);
        uint16_t port = r->n_ports ? r->ports[r->n_ports - 1] : 4242;
        CHECK(net_rule_has_port(r, port));
        CHECK(net_rule_has_port(r, 0) == (r->n_ports == 0));

        switch (r->kind) {
        case RULE_HOST:
        case RULE_SUFFIX:
                CHECK(r->family == 0);
                check_canonical_host(r->host);
                CHECK(net_rule_match_host(r, r->host, port) == (r->kind == RULE_HOST));
                CHECK(!net_rule_match_addr(r, r->addr, AF_INET, port));
                if (r->kind == RULE_SUFFIX && strlen(r->host) + 2 <= NET_HOST_MAX) {
                        char below[NET_HOST_MAX + 1] = "a.";
                        strcat(below, r->host);
                        CHECK(net_rule_match_host(r, below, port));
                }
                if (r->n_ports)
                        CHECK(!net_rule_match_host(r, r->host, 0));
                break;
        case RULE_IP:
        case RULE_CIDR: {
                unsigned bits = r->family == AF_INET ? 32 : 128;
                CHECK(r->family == AF_INET || r->family == AF_INET6);
                CHECK(r->host[0] == '\0');
                CHECK(r->kind == RULE_CIDR ? r->prefix <= bits : r->prefix == bits);
                CHECK(host_bits_zero(r->addr, bits, r->prefix));
                if (r->family == AF_INET)
                        for (int i = 4; i < 16; i++)
                                CHECK(r->addr[i] == 0);
                CHECK(net_rule_match_addr(r, r->addr, r->family, port));
                if (r->family == AF_INET) {
                        uint8_t m[16];
                        memcpy(m, v4_mapped, 12);
                        memcpy(m + 12, r->addr, 4);
                        CHECK(net_rule_match_addr(r, m, AF_INET6, port));
                }
                CHECK(!net_rule_match_host(r, r->text, port));
                break;
        }
        case _RULE_KIND_MAX:
        case _RULE_KIND_INVALID:
        default:
                abort();
        }

        /* the canonical text is a fixed point */
        struct net_rule again;
        const char *why = NULL;
        CHECK(net_rule_parse(r->text, tl, &again, &why) == 0);
        CHECK(again.kind == r->kind && again.family == r->family && again.prefix == r->prefix &&
              again.n_ports == r->n_ports && memcmp(again.addr, r->addr, 16) == 0 &&
              memcmp(again.ports, r->ports, sizeof r->ports) == 0 &&
              strcmp(again.host, r->host) == 0 && strcmp(again.text, r->text) == 0);
}

static void check_addr(const uint8_t a[16], int family)
{
        enum addr_class c = addr_classify(a, family);
        CHECK((int)c >= 0 && c < _ADDR_CLASS_MAX);
        CHECK(strcmp(addr_class_name(c), "invalid") != 0);

        char buf[46];
        uint8_t b[16];
        int fam = -1;
        addr_format(a, family, buf, sizeof buf);
        size_t n = strlen(buf);
        CHECK(n > 0);
        CHECK(net_ip_parse(buf, n, false, b, &fam) == 0 && fam == family);
        CHECK(memcmp(a, b, family == AF_INET ? 4 : 16) == 0);
        CHECK(net_host_is_ip_spelling(buf));

        /* as inet_ntop prints it, except the IPv4-compatible form glibc prints mixed */
        char want[INET6_ADDRSTRLEN];
        static const uint8_t zero[12] = {0};
        bool compat = family == AF_INET6 && memcmp(a, zero, 12) == 0 && (a[12] || a[13]);
        if (!compat) {
                CHECK(inet_ntop(family, a, want, sizeof want) != NULL);
                CHECK(strcmp(buf, want) == 0);
        }

        if (family == AF_INET6 && memcmp(a, v4_mapped, 12) == 0) {
                uint8_t v4[16] = {a[12], a[13], a[14], a[15]};
                enum addr_class c4 = addr_classify(v4, AF_INET);
                CHECK(c == (c4 == ADDR_PUBLIC ? ADDR_EMBEDDED : c4));
        }
        if (family == AF_INET6 && c == ADDR_PUBLIC) /* nothing embedding IPv4 is public */
                CHECK(!(a[0] == 0x20 && a[1] == 0x02) &&
                      !(a[0] == 0x20 && a[1] == 0x01 && a[2] == 0 && a[3] == 0) && a[0] != 0);
}

static void check_ip_text(const char *s, size_t n)
{
        uint8_t a[16], b[16];
        int fam = -1, fam2 = -1;

        int k = net_ip_parse(s, n, false, a, &fam);
        int kb = net_ip_parse(s, n, true, b, &fam2);
        CHECK(k == 0 || k == -EINVAL);
        CHECK(kb == 0 || kb == -EINVAL);
        if (k == 0) { /* bracketed_ok only widens */
                CHECK(kb == 0 && fam2 == fam && memcmp(a, b, 16) == 0);
                CHECK(fam == AF_INET || fam == AF_INET6);
                check_addr(a, fam);
        }
        if (kb == 0) {
                CHECK(fam2 == AF_INET || fam2 == AF_INET6);
                check_addr(b, fam2);
        }

        char *c = dup_cstr(s, n);
        if (!c)
                return;
        uint8_t p4[4], p6[16];
        bool pton4 = inet_pton(AF_INET, c, p4) == 1;
        bool pton6 = inet_pton(AF_INET6, c, p6) == 1;
        CHECK((k == 0) == (pton4 || pton6));
        if (k == 0)
                CHECK(fam == AF_INET ? pton4 && memcmp(a, p4, 4) == 0
                                     : pton6 && memcmp(a, p6, 16) == 0);
        if (k == 0)
                CHECK(net_host_is_ip_spelling(c));
        free(c);
}

static void check_host_text(const char *s, size_t n)
{
        char out[NET_HOST_MAX + 1];
        const char *why = NULL;

        int k = net_host_canonical(s, n, out, &why);
        if (k < 0) {
                CHECK(k == -EINVAL && why && why[0] && out[0] == '\0');
                return;
        }
        CHECK(k == 0);
        check_canonical_host(out);

        /* a name accepted on its own is a HOST rule naming it */
        struct net_rule r;
        CHECK(net_rule_parse(s, n, &r, &why) == 0 && r.kind == RULE_HOST &&
              strcmp(r.host, out) == 0 && r.n_ports == 0);
}

/* The rule's answer for `host`, re-stated from rules.h. */
static void check_match(const struct net_rule *r, const char *host_text, size_t n)
{
        char h[NET_HOST_MAX + 1];
        const char *why;
        uint8_t a[16];
        int fam;
        uint16_t ports[] = {0, 1, 80, 443, 65535, r->n_ports ? r->ports[0] : 7};

        if (net_host_canonical(host_text, n, h, &why) == 0) {
                size_t hl = strlen(h), sl = strlen(r->host);
                bool name = false;
                if (r->kind == RULE_HOST)
                        name = strcmp(h, r->host) == 0;
                else if (r->kind == RULE_SUFFIX)
                        name = hl > sl + 1 && h[hl - sl - 1] == '.' &&
                               strcmp(h + hl - sl, r->host) == 0;
                for (size_t i = 0; i < sizeof ports / sizeof ports[0]; i++)
                        CHECK(net_rule_match_host(r, h, ports[i]) ==
                              (name && net_rule_has_port(r, ports[i])));
        }
        if (net_ip_parse(host_text, n, true, a, &fam) == 0) {
                bool hit = false;
                if (r->kind == RULE_IP || r->kind == RULE_CIDR) {
                        const uint8_t *x = NULL;
                        if (r->family == fam)
                                x = a;
                        else if (r->family == AF_INET && memcmp(a, v4_mapped, 12) == 0)
                                x = a + 12;
                        hit = x != NULL;
                        for (unsigned b = 0; x && b < r->prefix; b++)
                                if ((x[b / 8] ^ r->addr[b / 8]) & (0x80u >> (b % 8)))
                                        hit = false;
                }
                for (size_t i = 0; i < sizeof ports / sizeof ports[0]; i++)
                        CHECK(net_rule_match_addr(r, a, fam, ports[i]) ==
                              (hit && net_rule_has_port(r, ports[i])));
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s = dup_exact(data, size);
        struct net_rule r;
        const char *why = NULL;

        if (!s)
                return 0;

        int k = net_rule_parse(s, size, &r, &why);
        if (k == 0)
                check_rule(&r);
        else
                CHECK(k == -EINVAL && why && why[0] && r.kind == _RULE_KIND_INVALID);
        check_host_text(s, size);
        check_ip_text(s, size);

        char *c = dup_cstr(s, size);
        if (c) {
                (void)net_host_is_ip_spelling(c);
                free(c);
        }

        /* the raw bytes as an address: classification is total, text round-trips */
        if (size >= 16) {
                check_addr(data, AF_INET6);
                check_addr(data, AF_INET);
        }

        /* "rule\nhost-or-address" */
        const char *nl = memchr(s, '\n', size);
        if (nl) {
                size_t rl = (size_t)(nl - s), hl = size - rl - 1;
                char *rs = dup_exact(data, rl);
                char *hs = dup_exact(data + rl + 1, hl);
                if (rs && hs && net_rule_parse(rs, rl, &r, &why) == 0)
                        check_match(&r, hs, hl);
                free(rs);
                free(hs);
        }
        free(s);
        return 0;
}
