/*
 * test_rules.c — egress rules, host names, IP literals (src/policy/rules.c)
 * and address classes and text (src/policy/addr.c).
 *
 * Every rule form of rules.h is parsed and its canonical text checked; every
 * refusal is checked for its reason (the `why` phrase), not only for
 * -EINVAL, so a rule refused for the wrong reason fails here. The strict IP
 * parser is cross-checked against inet_pton, and addr_format against
 * inet_ntop, on a list of spellings (the production code uses neither).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "policy/addr.h"
#include "policy/rules.h"
#include "tap.h"

/* ---- helpers ------------------------------------------------------------- */

static int parse(const char *s, struct net_rule *r, const char **why)
{
        return net_rule_parse(s, strlen(s), r, why);
}

/* `s` parses as a rule of `kind` whose canonical text is `text`. */
static void rule_ok(const char *s, enum rule_kind kind, const char *text)
{
        struct net_rule r;
        const char *why = NULL;
        int k = parse(s, &r, &why);

        if (!ok(k == 0, "rule \"%s\" accepted", s)) {
                diag("  why: %s", why ? why : "(none)");
                return;
        }
        is_int(r.kind, kind, "rule \"%s\": kind", s);
        is_str(r.text, text, "rule \"%s\": canonical text", s);

        struct net_rule again;
        ok(parse(r.text, &again, &why) == 0 && memcmp(&r, &again, sizeof r) == 0,
           "rule \"%s\": canonical text re-parses to the identical rule", s);
}

/* `s` is refused with a reason that contains `why_part`. */
static void rule_bad(const char *s, size_t len, const char *why_part)
{
        struct net_rule r;
        const char *why = NULL;
        int k = net_rule_parse(s, len, &r, &why);

        is_int(k, -EINVAL, "rule \"%.*s\" refused", (int)len, s);
        if (!ok(why && strstr(why, why_part), "... because: %s", why_part))
                diag("  why: %s", why ? why : "(none)");
        is_int(r.kind, _RULE_KIND_INVALID, "... and the output rule is marked invalid");
}

static void rule_bad_s(const char *s, const char *why_part)
{
        rule_bad(s, strlen(s), why_part);
}

static void host_ok(const char *s, size_t len, const char *want)
{
        char out[NET_HOST_MAX + 1];
        const char *why = NULL;
        int k = net_host_canonical(s, len, out, &why);

        if (!is_int(k, 0, "host \"%.*s\" accepted", (int)len, s))
                diag("  why: %s", why ? why : "(none)");
        else
                is_str(out, want, "host \"%.*s\" canonical form", (int)len, s);
}

static void host_bad(const char *s, size_t len, const char *why_part)
{
        char out[NET_HOST_MAX + 1];
        const char *why = NULL;
        int k = net_host_canonical(s, len, out, &why);

        is_int(k, -EINVAL, "host \"%.*s\" refused", (int)len, s);
        if (!ok(why && strstr(why, why_part), "... because: %s", why_part))
                diag("  why: %s", why ? why : "(none)");
}

static void host_bad_s(const char *s, const char *why_part)
{
        host_bad(s, strlen(s), why_part);
}

/* A string of n copies of c (into a static-sized buffer of the caller). */
static char *fill(char *buf, char c, size_t n)
{
        memset(buf, c, n);
        buf[n] = '\0';
        return buf;
}

/* Three 63-byte labels and a last label of `last` bytes: 192 + last bytes. */
static char *long_name(char out[300], size_t last)
{
        size_t o = 0;

        for (int l = 0; l < 3; l++) {
                memset(out + o, 'a', 63);
                o += 63;
                out[o++] = '.';
        }
        memset(out + o, 'b', last);
        out[o + last] = '\0';
        return out;
}

static int ip(const char *s, uint8_t a[16], int *fam)
{
        memset(a, 0xaa, 16);
        *fam = -1;
        return net_ip_parse(s, strlen(s), false, a, fam);
}

static void classify_is(const char *s, enum addr_class want)
{
        uint8_t a[16];
        int fam;

        if (!ok(net_ip_parse(s, strlen(s), false, a, &fam) == 0, "class of %s: parses", s))
                return;
        enum addr_class c = addr_classify(a, fam);
        if (!is_int(c, want, "%s is %s", s, addr_class_name(want)))
                diag("  got class %s", addr_class_name(c));
}

static void format_is(const char *in, const char *want)
{
        uint8_t a[16];
        int fam;
        char buf[46];

        if (!ok(ip(in, a, &fam) == 0, "format %s: parses", in))
                return;
        is_str(addr_format(a, fam, buf, sizeof buf), want, "%s prints as %s", in, want);
}

/* ---- rule forms ---------------------------------------------------------- */

static void test_rule_forms(void)
{
        struct net_rule r;
        const char *why = NULL;

        rule_ok("api.example.com", RULE_HOST, "api.example.com");
        rule_ok("api.example.com:443", RULE_HOST, "api.example.com:443");
        rule_ok("API.Example.COM.:443", RULE_HOST, "api.example.com:443");
        rule_ok("*.example.com:443,8443", RULE_SUFFIX, "*.example.com:443,8443");
        rule_ok("*.Example.com.", RULE_SUFFIX, "*.example.com");
        rule_ok("203.0.113.7:443", RULE_IP, "203.0.113.7:443");
        rule_ok("203.0.113.7", RULE_IP, "203.0.113.7");
        rule_ok("[2001:db8::1]:443", RULE_IP, "[2001:db8::1]:443");
        rule_ok("[2001:DB8:0:0::1]", RULE_IP, "2001:db8::1");
        rule_ok("2001:db8::1", RULE_IP, "2001:db8::1");
        rule_ok("2001:0db8:0000:0000:0000:0000:0000:0001", RULE_IP, "2001:db8::1");
        rule_ok("::ffff:1.2.3.4", RULE_IP, "::ffff:1.2.3.4");
        rule_ok("10.0.0.0/8:5432", RULE_CIDR, "10.0.0.0/8:5432");
        rule_ok("10.0.0.0/8", RULE_CIDR, "10.0.0.0/8");
        rule_ok("0.0.0.0/0", RULE_CIDR, "0.0.0.0/0");
        rule_ok("192.0.2.1/32", RULE_CIDR, "192.0.2.1/32");
        rule_ok("[2001:db8::]/32:443", RULE_CIDR, "[2001:db8::]/32:443");
        rule_ok("[2001:db8::]/32", RULE_CIDR, "2001:db8::/32");
        rule_ok("2001:db8::/32", RULE_CIDR, "2001:db8::/32");
        rule_ok("::/0", RULE_CIDR, "::/0");
        rule_ok("[::1]/128:22", RULE_CIDR, "[::1]/128:22");
        rule_ok("xn--bcher-kva.example:80", RULE_HOST, "xn--bcher-kva.example:80");
        rule_ok("_dmarc.example.com", RULE_HOST, "_dmarc.example.com");
        rule_ok("localhost", RULE_HOST, "localhost");
        rule_ok("*.com", RULE_SUFFIX, "*.com");
        rule_ok("a1.example", RULE_HOST, "a1.example");
        rule_ok("1.2.3.4.5", RULE_HOST, "1.2.3.4.5"); /* five parts: a name, not an address */

        /* ports: sorted, every boundary */
        rule_ok("example.com:8443,443,80", RULE_HOST, "example.com:80,443,8443");
        rule_ok("example.com:1", RULE_HOST, "example.com:1");
        rule_ok("example.com:65535", RULE_HOST, "example.com:65535");
        rule_ok("example.com:1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", RULE_HOST,
                "example.com:1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16");

        ok(parse("*.example.com:443,8443", &r, &why) == 0 && r.n_ports == 2 && r.ports[0] == 443 &&
                   r.ports[1] == 8443 && strcmp(r.host, "example.com") == 0,
           "suffix rule: host holds the suffix without \"*.\", two ports");
        ok(parse("10.1.0.0/16", &r, &why) == 0 && r.family == AF_INET && r.prefix == 16 &&
                   r.addr[0] == 10 && r.addr[1] == 1 && r.n_ports == 0,
           "IPv4 CIDR fields");
        ok(parse("[2001:db8::1]:443", &r, &why) == 0 && r.family == AF_INET6 && r.prefix == 128 &&
                   r.addr[0] == 0x20 && r.addr[15] == 1,
           "IPv6 address fields (prefix 128)");
        ok(parse("203.0.113.7", &r, &why) == 0 && r.prefix == 32, "IPv4 address: prefix 32");
        ok(parse("api.example.com", &r, &why) == 0 && r.family == 0 && r.n_ports == 0,
           "host rule: no family, any port");

        /* not NUL-terminated: only len bytes are read */
        char raw[] = {'a', '.', 'b', 'X', 'Y'};
        ok(net_rule_parse(raw, 3, &r, &why) == 0 && strcmp(r.text, "a.b") == 0,
           "a rule is read from len bytes only");

        /* the longest canonical texts */
        char host[300];
        long_name(host, 61);
        is_int(strlen(host), 253, "a 253-byte name");
        char rule[600];
        snprintf(rule, sizeof rule, "%s:1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", host);
        ok(parse(rule, &r, &why) == 0 && strlen(r.text) == strlen(rule),
           "253-byte name with 16 short ports fits the canonical text");
        snprintf(rule, sizeof rule,
                 "*.%s:10000,10001,10002,10003,10004,10005,10006,10007,10008,10009,"
                 "10010,10011,10012,10013,10014,10015",
                 host);
        rule_bad_s(rule, "rule too long");
}

static void test_rule_refusals(void)
{
        rule_bad("", 0, "empty rule");
        rule_bad("a\0b.com", 7, "NUL");
        rule_bad_s("https://example.com", "not a URL");
        rule_bad_s(":443", "empty host name");

        /* ports */
        rule_bad_s("example.com:", "empty port list");
        rule_bad_s("example.com:0", "port out of range");
        rule_bad_s("example.com:65536", "port out of range");
        rule_bad_s("example.com:999999", "port out of range");
        rule_bad_s("example.com:0443", "leading zero");
        rule_bad_s("example.com:80,", "empty port");
        rule_bad_s("example.com:,80", "empty port");
        rule_bad_s("example.com:80,,443", "empty port");
        rule_bad_s("example.com:80-90", "ranges are not supported");
        rule_bad_s("example.com:80, 443", "not a decimal number");
        rule_bad_s("example.com:http", "not a decimal number");
        rule_bad_s("example.com:+80", "not a decimal number");
        rule_bad_s("example.com:443,443", "duplicate port");
        rule_bad_s("example.com:1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17", "more than 16 ports");

        /* IPv4 must be the canonical dotted quad */
        rule_bad_s("127.1", "canonical dotted-quad");
        rule_bad_s("2130706433:80", "canonical dotted-quad");
        rule_bad_s("0x7f.0.0.1", "canonical dotted-quad");
        rule_bad_s("0177.0.0.1", "canonical dotted-quad");
        rule_bad_s("1.2.3.256", "canonical dotted-quad");
        rule_bad_s("01.2.3.4", "canonical dotted-quad");
        rule_bad_s("1.2.3.4.", "canonical dotted-quad");

        /* CIDR */
        rule_bad_s("10.0.0.1/8", "host bits set in CIDR");
        rule_bad_s("[2001:db8::1]/32", "host bits set in CIDR");
        rule_bad_s("2001:db8::1/32", "host bits set in CIDR");
        rule_bad_s("10.0.0.0/33", "out of range");
        rule_bad_s("[::]/129", "out of range");
        rule_bad_s("10.0.0.0/08", "leading zero");
        rule_bad_s("10.0.0.0/", "empty CIDR prefix");
        rule_bad_s("10.0.0.0/x", "not a decimal number");
        rule_bad_s("10.0.0.0/1000", "out of range");
        rule_bad_s("10.0.0.0/abcd", "not a decimal number");
        rule_bad_s("10.0.0.0/8/8", "not a decimal number");
        rule_bad_s("10.0/8", "canonical IPv4");
        rule_bad_s("example.com/8", "canonical IPv4");
        rule_bad_s("2001:db8::/32:443", "needs brackets");

        /* IPv6 */
        rule_bad_s("[2001:db8::1", "without ']'");
        rule_bad_s("[2001:db8::1]443", "junk after ']'");
        rule_bad_s("[2001:db8::1]:", "empty port list");
        rule_bad_s("[1.2.3.4]:80", "IPv6 addresses only");
        rule_bad_s("[example.com]:80", "invalid IPv6");
        rule_bad_s("[fe80::1%eth0]:80", "invalid IPv6");
        rule_bad_s("fe80::1%eth0", "invalid IPv6");
        rule_bad_s("2001:db8::1::2", "invalid IPv6");
        rule_bad_s("example.com:80:443", "invalid IPv6");
        rule_bad_s("[[::1]]:80", "invalid IPv6");

        /* wildcards */
        rule_bad_s("*", "'*' is allowed only");
        rule_bad_s("*.", "nothing after");
        rule_bad_s("*example.com", "'*' is allowed only");
        rule_bad_s("a.*.example.com", "'*' is allowed only");
        rule_bad_s("*.*.example.com", "invalid character");
        rule_bad_s("*.1.2.3.4", "IP address spelling");
        rule_bad_s("*..example.com", "empty label");

        /* host names (the details are in test_host) */
        rule_bad_s("user@example.com:443", "'@'");
        rule_bad_s("exa mple.com", "space");
        rule_bad_s("example.com%2f", "'%'");
        rule_bad_s("a..b", "empty label");
        rule_bad_s("-a.example", "'-'");
        rule_bad_s("b\xc3\xbc"
                   "cher.example",
                   "non-ASCII");

        char big[600];
        memset(big, 'a', sizeof big - 1);
        big[sizeof big - 1] = '\0';
        rule_bad_s(big, "rule too long");
}

/* ---- host names ------------------------------------------------------------ */

static void test_host(void)
{
        char buf[80], name[300];
        char out[NET_HOST_MAX + 1];
        const char *why = NULL;

        host_ok("Example.COM", 11, "example.com");
        host_ok("example.com.", 12, "example.com");
        host_ok("xn--bcher-kva.example", 21, "xn--bcher-kva.example");
        host_ok("_srv._tcp.example", 17, "_srv._tcp.example");
        host_ok("a-b.c", 5, "a-b.c");
        host_ok("a1.example", 10, "a1.example");
        host_ok("1a", 2, "1a");
        host_ok("0xg", 3, "0xg");
        host_ok("deadbeef", 8, "deadbeef");
        host_ok("example.comXYZ", 11, "example.com");

        host_bad("", 0, "empty host name");
        host_bad_s(".", "empty host name");
        host_bad_s("..", "empty label");
        host_bad_s("a..b", "empty label");
        host_bad_s(".a", "empty label");
        host_bad_s("a.b..", "empty label");
        host_bad("a\0b", 3, "NUL");
        host_bad_s("a%b", "'%'");
        host_bad_s("a@b", "'@'");
        host_bad_s("a/b", "'/'");
        host_bad_s("a\\b", "'\\'");
        host_bad_s("a:b", "':'");
        host_bad_s("a b", "space");
        host_bad_s("a\tb", "control");
        host_bad_s("a\x7f", "control");
        host_bad_s("b\xc3\xbc"
                   "cher.example",
                   "non-ASCII");
        host_bad_s("\xff", "non-ASCII");
        host_bad_s("a*b", "invalid character");
        host_bad_s("a+b", "invalid character");
        host_bad_s("-a", "'-'");
        host_bad_s("a-", "'-'");
        host_bad_s("a.-b.c", "'-'");
        host_bad_s("127.0.0.1", "IP address spelling");
        host_bad_s("127.1", "IP address spelling");
        host_bad_s("127.0.0.1.", "IP address spelling");
        host_bad_s("0x7F.1", "IP address spelling");
        host_bad_s("2130706433", "IP address spelling");

        /* labels: 63 bytes fit, 64 do not */
        snprintf(name, sizeof name, "%s.example", fill(buf, 'a', 63));
        host_ok(name, strlen(name), name);
        snprintf(name, sizeof name, "%s.example", fill(buf, 'a', 64));
        host_bad_s(name, "label longer than 63");

        /* names: 253 bytes fit (254 with a trailing dot), 254 do not */
        long_name(name, 61);
        is_int(strlen(name), 253, "the test name is 253 bytes");
        host_ok(name, 253, name);
        char dotted[300];
        strcpy(dotted, name);
        strcat(dotted, ".");
        host_ok(dotted, 254, name);
        long_name(name, 62);
        is_int(strlen(name), 254, "the test name is 254 bytes");
        host_bad_s(name, "longer than 253");
        strcpy(dotted, name);
        strcat(dotted, ".");
        host_bad_s(dotted, "longer than 253");

        ok(net_host_canonical("A.B", 3, out, &why) == 0 &&
                   net_host_canonical(out, strlen(out), out, &why) == 0 && strcmp(out, "a.b") == 0,
           "canonicalising is idempotent (and may run in place)");
        ok(net_host_canonical("a b", 3, out, NULL) == -EINVAL, "why may be NULL");
}

static void test_ip_spelling(void)
{
        static const char *const yes[] = {
                "127.1", "2130706433", "0x7f.0.0.1", "0177.0.0.1", "1.2.3.4",   "0x7F000001",
                "0x",    "0",          "1.2",        "08.1",       "999.1.1.1", "127.1.",
                "::1",   "a:b",        ":",          "1.0x.2",
        };
        static const char *const no[] = {
                "a1.example", "",    ".",     "1.2.3.4.5",   "1..2", "0x7g",     "1a",
                "x1",         "0xx", "1.2.a", "example.com", "-1",   "1.2.3.4 ",
        };

        for (size_t i = 0; i < ARRAY_SIZE(yes); i++)
                ok(net_host_is_ip_spelling(yes[i]), "\"%s\" is an IP spelling", yes[i]);
        for (size_t i = 0; i < ARRAY_SIZE(no); i++)
                ok(!net_host_is_ip_spelling(no[i]), "\"%s\" is not an IP spelling", no[i]);
        ok(!net_host_is_ip_spelling(NULL), "NULL is not an IP spelling");
}

/* ---- IP literals ------------------------------------------------------------ */

static void test_ip_parse(void)
{
        uint8_t a[16];
        int fam;

        static const uint8_t v4[4] = {1, 2, 3, 4};
        ok(ip("1.2.3.4", a, &fam) == 0 && fam == AF_INET && memcmp(a, v4, 4) == 0,
           "1.2.3.4 is IPv4 1.2.3.4");
        ok(ip("0.0.0.0", a, &fam) == 0 && fam == AF_INET, "0.0.0.0");
        ok(ip("255.255.255.255", a, &fam) == 0 && a[0] == 255 && a[3] == 255, "255.255.255.255");

        static const char *const bad4[] = {
                "256.1.1.1", "1.2.3.256", "01.2.3.4",  "1.2.3.04",   "00.0.0.0",
                "1.2.3",     "1.2.3.4.5", "127.1",     "2130706433", "0x7f.0.0.1",
                "1.2.3.4.",  ".1.2.3.4",  "1..2.3",    "1.2.3.-4",   "1.2.3.+4",
                " 1.2.3.4",  "1.2.3.4 ",  "1.2.3.4/8", "1234.1.1.1", "",
        };
        for (size_t i = 0; i < ARRAY_SIZE(bad4); i++)
                is_int(ip(bad4[i], a, &fam), -EINVAL, "IPv4 \"%s\" refused", bad4[i]);
        ok(net_ip_parse("1.2.3.4\0", 8, false, a, &fam) == -EINVAL, "a NUL inside is refused");
        ok(net_ip_parse("1.2.3.4xx", 7, false, a, &fam) == 0 && fam == AF_INET,
           "only len bytes are read");

        static const uint8_t loop6[16] = {[15] = 1};
        static const uint8_t zero6[16] = {0};
        static const uint8_t mapped[16] = {[10] = 0xff, [11] = 0xff, 1, 2, 3, 4};
        ok(ip("::", a, &fam) == 0 && fam == AF_INET6 && memcmp(a, zero6, 16) == 0, "::");
        ok(ip("::1", a, &fam) == 0 && fam == AF_INET6 && memcmp(a, loop6, 16) == 0, "::1");
        ok(ip("::ffff:1.2.3.4", a, &fam) == 0 && memcmp(a, mapped, 16) == 0, "::ffff:1.2.3.4");
        ok(ip("0:0:0:0:0:FFFF:0102:0304", a, &fam) == 0 && memcmp(a, mapped, 16) == 0,
           "::ffff:1.2.3.4 spelled out in upper-case hex");
        ok(net_ip_parse("[::1]", 5, true, a, &fam) == 0 && memcmp(a, loop6, 16) == 0,
           "[::1] with bracketed_ok");
        is_int(net_ip_parse("[::1]", 5, false, a, &fam), -EINVAL, "[::1] without bracketed_ok");
        is_int(net_ip_parse("[1.2.3.4]", 9, true, a, &fam), -EINVAL, "[1.2.3.4]: IPv4 bracketed");
        is_int(net_ip_parse("[::1", 4, true, a, &fam), -EINVAL, "[::1 unclosed");
        is_int(net_ip_parse("::1]", 4, true, a, &fam), -EINVAL, "::1] unopened");
        is_int(net_ip_parse("[]", 2, true, a, &fam), -EINVAL, "[]");
        is_int(net_ip_parse("[", 1, true, a, &fam), -EINVAL, "[");

        static const char *const good6[] = {
                "1:2:3:4:5:6:7:8",
                "1::",
                "1:2:3:4:5:6:7::",
                "::2:3:4:5:6:7:8",
                "1::8",
                "2001:db8::1",
                "fe80::1",
                "::ffff:0:0",
                "1:2:3:4:5:6:1.2.3.4",
                "::1.2.3.4",
                "1::1.2.3.4",
                "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                "0000:0000:0000:0000:0000:0000:0000:0000",
                "64:ff9b::192.0.2.33",
                "1:0::0:8",
        };
        static const char *const bad6[] = {
                ":",
                ":::",
                "1:::2",
                "1::2::3",
                ":1::",
                "1::2:",
                "1:2:3:4:5:6:7:8:9",
                "1:2:3:4:5:6:7",
                "::1:2:3:4:5:6:7:8",
                "1:2:3:4:5:6:7:8::",
                "12345::",
                "g::",
                "fe80::1%eth0",
                "fe80::1%1",
                "::1.2.3",
                "::1.2.3.04",
                "::256.1.1.1",
                "::1.2.3.4:5",
                "1:2:3:4:5:6:7:1.2.3.4",
                "::1.2.3.4.5",
                ":1",
                "1:",
                "::ffff:1.2.3.4 ",
                " ::1",
                "1:2:3:4:5:6:7:8:",
                "::-1",
                "::0x1",
        };
        for (size_t i = 0; i < ARRAY_SIZE(good6); i++) {
                uint8_t want[16];
                ok(ip(good6[i], a, &fam) == 0 && fam == AF_INET6 &&
                           inet_pton(AF_INET6, good6[i], want) == 1 && memcmp(a, want, 16) == 0,
                   "IPv6 \"%s\" accepted, same bytes as inet_pton", good6[i]);
        }
        for (size_t i = 0; i < ARRAY_SIZE(bad6); i++)
                is_int(ip(bad6[i], a, &fam), -EINVAL, "IPv6 \"%s\" refused", bad6[i]);

        /* every IPv4 refusal above is a spelling inet_pton(AF_INET) refuses as well */
        int agree = 0;
        for (size_t i = 0; i < ARRAY_SIZE(bad4); i++) {
                uint8_t b[4];
                agree += inet_pton(AF_INET, bad4[i], b) != 1;
        }
        is_int(agree, ARRAY_SIZE(bad4), "inet_pton refuses each of those IPv4 spellings too");
        int agree6 = 0;
        for (size_t i = 0; i < ARRAY_SIZE(bad6); i++) {
                uint8_t b[16];
                agree6 += inet_pton(AF_INET6, bad6[i], b) != 1;
        }
        is_int(agree6, ARRAY_SIZE(bad6), "inet_pton refuses each of those IPv6 spellings too");
}

/* ---- matching ---------------------------------------------------------------- */

static void test_match(void)
{
        struct net_rule r;
        const char *why;
        uint8_t a[16];
        int fam;

        parse("api.example.com:443", &r, &why);
        ok(net_rule_match_host(&r, "api.example.com", 443), "host: exact name, listed port");
        ok(!net_rule_match_host(&r, "api.example.com", 80), "host: other port refused");
        ok(!net_rule_match_host(&r, "x.api.example.com", 443), "host: a name below is not it");
        ok(!net_rule_match_host(&r, "example.com", 443), "host: the parent is not it");
        ok(!net_rule_match_host(&r, "api.example.co", 443), "host: a prefix is not it");
        ok(!net_rule_match_host(&r, "aapi.example.com", 443), "host: a longer name is not it");
        ok(net_rule_match_host(&r, "API.example.com.", 443),
           "host: upper case and a trailing dot still match (DNS names are the same)");
        ok(!net_rule_match_host(&r, "", 443), "host: empty name");
        ok(!net_rule_match_host(&r, "api.example.com..", 443), "host: two trailing dots");
        ok(!net_rule_match_host(&r, NULL, 443), "host: NULL name");

        parse("*.example.com", &r, &why);
        ok(net_rule_match_host(&r, "a.example.com", 1), "suffix: one label below");
        ok(net_rule_match_host(&r, "a.b.example.com", 65535), "suffix: two labels below");
        ok(!net_rule_match_host(&r, "example.com", 443), "suffix: never the bare suffix");
        ok(!net_rule_match_host(&r, "example.com.", 443), "suffix: nor with a trailing dot");
        ok(!net_rule_match_host(&r, ".example.com", 443), "suffix: nor with an empty label");
        ok(!net_rule_match_host(&r, "badexample.com", 443), "suffix: label boundary respected");
        ok(!net_rule_match_host(&r, "example.com.evil", 443), "suffix: not a prefix match");
        ok(!net_rule_match_addr(&r, a, AF_INET, 443), "a host rule never matches an address");

        parse("*.example.com:443,8443", &r, &why);
        ok(net_rule_match_host(&r, "a.example.com", 8443), "suffix with ports: second port");
        ok(!net_rule_match_host(&r, "a.example.com", 80), "suffix with ports: other port");
        ok(net_rule_has_port(&r, 443) && !net_rule_has_port(&r, 0), "has_port: listed, 0");

        parse("203.0.113.7:443", &r, &why);
        ip("203.0.113.7", a, &fam);
        ok(net_rule_match_addr(&r, a, fam, 443), "IPv4 rule: the address");
        ok(!net_rule_match_addr(&r, a, fam, 444), "IPv4 rule: other port");
        ok(!net_rule_match_host(&r, "203.0.113.7", 443), "an address rule never matches a name");
        ip("203.0.113.8", a, &fam);
        ok(!net_rule_match_addr(&r, a, fam, 443), "IPv4 rule: the next address");
        ip("::ffff:203.0.113.7", a, &fam);
        ok(net_rule_match_addr(&r, a, fam, 443), "IPv4 rule: the IPv4-mapped IPv6 address");
        ip("::203.0.113.7", a, &fam);
        ok(!net_rule_match_addr(&r, a, fam, 443), "IPv4 rule: not the IPv4-compatible form");
        ip("64:ff9b::203.0.113.7", a, &fam);
        ok(!net_rule_match_addr(&r, a, fam, 443), "IPv4 rule: not the NAT64 form");

        parse("10.0.0.0/8", &r, &why);
        ip("10.255.1.2", a, &fam);
        ok(net_rule_match_addr(&r, a, fam, 5432), "IPv4 CIDR: inside, any port");
        ip("11.0.0.0", a, &fam);
        ok(!net_rule_match_addr(&r, a, fam, 5432), "IPv4 CIDR: outside");
        ip("::ffff:10.1.2.3", a, &fam);
        ok(net_rule_match_addr(&r, a, fam, 1), "IPv4 CIDR: IPv4-mapped inside");
        ip("::ffff:11.1.2.3", a, &fam);
        ok(!net_rule_match_addr(&r, a, fam, 1), "IPv4 CIDR: IPv4-mapped outside");
        ip("10::", a, &fam);
        ok(!net_rule_match_addr(&r, a, fam, 1), "IPv4 CIDR: an IPv6 address with 10 in front");

        parse("100.64.0.0/10", &r, &why);
        ip("100.127.255.255", a, &fam);
        ok(net_rule_match_addr(&r, a, fam, 1), "/10: the last address inside");
        ip("100.128.0.0", a, &fam);
        ok(!net_rule_match_addr(&r, a, fam, 1), "/10: the first address after");

        parse("0.0.0.0/0", &r, &why);
        ip("255.255.255.255", a, &fam);
        ok(net_rule_match_addr(&r, a, fam, 9), "/0 covers every IPv4 address");
        ip("2001:db8::1", a, &fam);
        ok(!net_rule_match_addr(&r, a, fam, 9), "... but no IPv6 address");

        parse("[2001:db8::]/32:443", &r, &why);
        ip("2001:db8:ffff::1", a, &fam);
        ok(net_rule_match_addr(&r, a, fam, 443), "IPv6 CIDR: inside");
        ok(!net_rule_match_addr(&r, a, fam, 80), "IPv6 CIDR: other port");
        ip("2001:db9::1", a, &fam);
        ok(!net_rule_match_addr(&r, a, fam, 443), "IPv6 CIDR: outside");
        ip("32.1.13.184", a, &fam); /* the same first 32 bits, as IPv4 */
        ok(!net_rule_match_addr(&r, a, fam, 443), "IPv6 CIDR: never an IPv4 address");

        parse("2001:db8::1", &r, &why);
        ip("2001:db8::1", a, &fam);
        ok(net_rule_match_addr(&r, a, fam, 1), "IPv6 address rule: the address");
        ip("2001:db8::2", a, &fam);
        ok(!net_rule_match_addr(&r, a, fam, 1), "IPv6 address rule: not the next");

        parse("::ffff:0:0/96", &r, &why);
        ip("::ffff:1.2.3.4", a, &fam);
        ok(net_rule_match_addr(&r, a, fam, 1), "an IPv6 rule over ::ffff:0:0/96: mapped address");
        ip("1.2.3.4", a, &fam);
        ok(!net_rule_match_addr(&r, a, fam, 1), "... but not the AF_INET address");

        ok(!net_rule_match_addr(NULL, a, AF_INET, 1), "NULL rule");
        ok(!net_rule_match_host(NULL, "a", 1), "NULL rule (host)");
        ok(!net_rule_has_port(NULL, 1), "NULL rule (port)");
}

/* ---- classes ----------------------------------------------------------------- */

static void test_classify(void)
{
        uint8_t a[16] = {0};

        classify_is("1.1.1.1", ADDR_PUBLIC);
        classify_is("8.8.8.8", ADDR_PUBLIC);
        classify_is("2606:4700::1111", ADDR_PUBLIC);
        classify_is("2001:4860:4860::8888", ADDR_PUBLIC);

        classify_is("127.0.0.1", ADDR_LOOPBACK);
        classify_is("127.255.255.254", ADDR_LOOPBACK);
        classify_is("::1", ADDR_LOOPBACK);

        classify_is("10.0.0.1", ADDR_PRIVATE);
        classify_is("172.16.0.1", ADDR_PRIVATE);
        classify_is("172.31.255.255", ADDR_PRIVATE);
        classify_is("172.32.0.0", ADDR_PUBLIC);
        classify_is("172.15.255.255", ADDR_PUBLIC);
        classify_is("192.168.1.1", ADDR_PRIVATE);
        classify_is("fc00::1", ADDR_PRIVATE);
        classify_is("fd12:3456::1", ADDR_PRIVATE);
        classify_is("fec0::1", ADDR_PRIVATE);

        classify_is("169.254.1.1", ADDR_LINKLOCAL);
        classify_is("fe80::1", ADDR_LINKLOCAL);
        classify_is("febf::1", ADDR_LINKLOCAL);

        classify_is("100.64.0.1", ADDR_CGNAT);
        classify_is("100.127.255.255", ADDR_CGNAT);
        classify_is("100.128.0.0", ADDR_PUBLIC);

        classify_is("224.0.0.1", ADDR_MULTICAST);
        classify_is("239.255.255.255", ADDR_MULTICAST);
        classify_is("ff02::1", ADDR_MULTICAST);

        classify_is("0.0.0.0", ADDR_UNSPECIFIED);
        classify_is("0.1.2.3", ADDR_UNSPECIFIED);
        classify_is("::", ADDR_UNSPECIFIED);

        classify_is("255.255.255.255", ADDR_BROADCAST);

        classify_is("169.254.169.254", ADDR_METADATA);
        classify_is("169.254.170.2", ADDR_METADATA);
        classify_is("100.100.100.200", ADDR_METADATA);
        classify_is("168.63.129.16", ADDR_METADATA);
        classify_is("fd00:ec2::254", ADDR_METADATA);
        classify_is("fd00:ec2::253", ADDR_PRIVATE);

        classify_is("240.0.0.1", ADDR_RESERVED);
        classify_is("255.255.255.254", ADDR_RESERVED);
        classify_is("192.0.0.8", ADDR_RESERVED);
        classify_is("198.18.0.1", ADDR_RESERVED);
        classify_is("198.19.255.255", ADDR_RESERVED);
        classify_is("198.20.0.0", ADDR_PUBLIC);
        classify_is("192.0.2.1", ADDR_RESERVED);
        classify_is("198.51.100.1", ADDR_RESERVED);
        classify_is("203.0.113.7", ADDR_RESERVED);
        classify_is("192.88.99.1", ADDR_RESERVED);
        classify_is("2001:db8::1", ADDR_RESERVED);
        classify_is("3fff::1", ADDR_RESERVED);
        classify_is("100::1", ADDR_RESERVED);
        classify_is("100:0:0:1::", ADDR_PUBLIC);
        classify_is("2001:2::1", ADDR_RESERVED);
        classify_is("::ffff:0:7f00:1", ADDR_RESERVED); /* SIIT form: rest of ::/8 */
        classify_is("::1:0:0:0:1", ADDR_RESERVED);

        /* embedded IPv4: public inside is EMBEDDED, anything else keeps its class */
        classify_is("::ffff:1.2.3.4", ADDR_EMBEDDED);
        classify_is("::ffff:127.0.0.1", ADDR_LOOPBACK);
        classify_is("::ffff:10.1.2.3", ADDR_PRIVATE);
        classify_is("::ffff:169.254.169.254", ADDR_METADATA);
        classify_is("::ffff:0.0.0.0", ADDR_UNSPECIFIED);
        classify_is("::1.2.3.4", ADDR_EMBEDDED);
        classify_is("::127.0.0.1", ADDR_LOOPBACK);
        classify_is("::2", ADDR_UNSPECIFIED); /* compatible 0.0.0.2 */
        classify_is("64:ff9b::1.2.3.4", ADDR_EMBEDDED);
        classify_is("64:ff9b::127.0.0.1", ADDR_LOOPBACK);
        classify_is("64:ff9b::169.254.169.254", ADDR_METADATA);
        classify_is("64:ff9b:1::1.2.3.4", ADDR_EMBEDDED);
        classify_is("64:ff9b:1:ffff::10.0.0.1", ADDR_PRIVATE);
        classify_is("64:ff9b:2::1.2.3.4", ADDR_RESERVED); /* not NAT64, but inside ::/8 */
        classify_is("2002:0102:0304::1", ADDR_EMBEDDED);
        classify_is("2002:7f00:1::1", ADDR_LOOPBACK);
        classify_is("2002:a9fe:a9fe::", ADDR_METADATA);
        classify_is("2002:c0a8:0101::1", ADDR_PRIVATE);
        /* Teredo: client 1.2.3.4 stored inverted as fefd:fcfb */
        classify_is("2001:0:4136:e378:8000:63bf:fefd:fcfb", ADDR_EMBEDDED);
        classify_is("2001:0:4136:e378:8000:63bf:80ff:fffe", ADDR_LOOPBACK);
        classify_is("2001:0:4136:e378:8000:63bf:3fff:fdd2", ADDR_RESERVED); /* 192.0.2.45 */
        classify_is("2001:1::1", ADDR_PUBLIC); /* outside Teredo's /32 */

        is_int(addr_classify(a, AF_UNIX), _ADDR_CLASS_INVALID, "an unknown family is invalid");
        is_int(addr_classify(NULL, AF_INET), _ADDR_CLASS_INVALID, "NULL is invalid");

        is_str(addr_class_name(ADDR_PUBLIC), "public", "name: public");
        is_str(addr_class_name(ADDR_LINKLOCAL), "link-local", "name: link-local");
        is_str(addr_class_name(ADDR_EMBEDDED), "embedded", "name: embedded");
        is_str(addr_class_name(_ADDR_CLASS_INVALID), "invalid", "name: invalid");
        is_str(addr_class_name(_ADDR_CLASS_MAX), "invalid", "name: past the end");
        int named = 0;
        for (int c = 0; c < _ADDR_CLASS_MAX; c++)
                named += addr_class_name((enum addr_class)c) != NULL &&
                         strcmp(addr_class_name((enum addr_class)c), "invalid") != 0;
        is_int(named, _ADDR_CLASS_MAX, "every class has a name");
}

/* ---- text ------------------------------------------------------------------- */

static void test_format(void)
{
        uint8_t a[16];
        int fam;
        char buf[46], small[8];

        format_is("1.2.3.4", "1.2.3.4");
        format_is("0.0.0.0", "0.0.0.0");
        format_is("::", "::");
        format_is("::1", "::1");
        format_is("1::", "1::");
        format_is("2001:DB8:0:0:0:0:0:1", "2001:db8::1");
        format_is("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1");    /* tie: first run */
        format_is("2001:0:0:1:0:0:0:1", "2001:0:0:1::1");          /* longest run */
        format_is("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"); /* single zero kept */
        format_is("2001:0db8:00aa:0001::", "2001:db8:aa:1::");
        format_is("1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8");
        format_is("0:1:2:3:4:5:6:7", "0:1:2:3:4:5:6:7");
        format_is("ABCD:EF01::", "abcd:ef01::");
        format_is("::ffff:1.2.3.4", "::ffff:1.2.3.4");
        format_is("::ffff:0102:0304", "::ffff:1.2.3.4");
        format_is("::ffff:0:0", "::ffff:0.0.0.0");
        format_is("::1.2.3.4", "::102:304");
        format_is("64:ff9b::1.2.3.4", "64:ff9b::102:304");
        format_is("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                  "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");

        /* agreement with inet_ntop, outside the IPv4-compatible form it prints mixed */
        static const char *const cross[] = {
                "2001:db8::1",    "1:0:0:2:0:0:0:3", "0:0:1::", "1:0:1:0:1:0:1:0",
                "fe80::1:2",      "::ffff:8.8.8.8",  "1::",     "1:2::ff:1",
                "abcd::ef:0:0:1", "0:0:0:1::",
        };
        for (size_t i = 0; i < ARRAY_SIZE(cross); i++) {
                char want[INET6_ADDRSTRLEN];
                ip(cross[i], a, &fam);
                inet_ntop(AF_INET6, a, want, sizeof want);
                is_str(addr_format(a, fam, buf, sizeof buf), want, "%s: as inet_ntop prints it",
                       cross[i]);
        }

        ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", a, &fam);
        is_str(addr_format(a, fam, small, sizeof small), "", "too small a buffer: empty, not cut");
        ok(addr_format(a, fam, small, sizeof small) == small, "addr_format returns buf");
        is_str(addr_format(a, AF_UNIX, buf, sizeof buf), "invalid", "unknown family");
}

int main(void)
{
        test_rule_forms();
        test_rule_refusals();
        test_host();
        test_ip_spelling();
        test_ip_parse();
        test_match();
        test_classify();
        test_format();
        return done();
}
