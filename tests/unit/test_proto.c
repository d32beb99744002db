/*
 * test_proto.c — the egress proxy's pure protocol readers: SOCKS5
 * greetings, requests and replies (socks.c), the TLS ClientHello's server
 * name (tls.c), and DNS queries and responses for the proxy's own resolver
 * (dnsresp.c).
 *
 * Every message is built here, byte by byte, by small builders (a
 * ClientHello from record header to extensions; a DNS response with or
 * without compression), so each case states exactly what is on the wire.
 * The hostile cases are the point: ambiguous SNI (domain fronting),
 * NUL-bearing names, compression pointers that jump forward or loop, and
 * records for names the query did not ask about.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "egress/dnsresp.h"
#include "egress/socks.h"
#include "egress/tls.h"
#include "tap.h"

/* ---- SOCKS5 ----------------------------------------------------------- */

static void test_socks_greeting(void)
{
        bool na = true;
        const uint8_t g1[] = {5, 2, 2, 0};
        const uint8_t g2[] = {5, 1, 2};
        const uint8_t bad[] = {4, 1, 0};
        const uint8_t zero[] = {5, 0};

        is_int(socks_greeting_parse(g1, sizeof g1, &na), 4, "greeting with no-auth: length 4");
        ok(na, "... no-auth offered");
        is_int(socks_greeting_parse(g2, sizeof g2, &na), 3, "greeting with only user/pass");
        ok(!na, "... no-auth not offered");
        bool all0 = true;
        for (size_t i = 0; i < sizeof g1; i++)
                all0 = all0 && socks_greeting_parse(g1, i, &na) == 0;
        ok(all0, "every incomplete greeting prefix returns 0");
        is_int(socks_greeting_parse(bad, sizeof bad, &na), -EBADMSG, "SOCKS4 greeting: -EBADMSG");
        is_int(socks_greeting_parse(bad, 1, &na), -EBADMSG, "... as soon as the version arrives");
        is_int(socks_greeting_parse(zero, sizeof zero, &na), -EBADMSG, "NMETHODS 0: -EBADMSG");
}

/* Every proper prefix of a valid request is "incomplete". */
static bool prefixes_incomplete(const uint8_t *req, size_t len)
{
        struct socks_request r;
        enum socks_reply rep;

        for (size_t i = 0; i < len; i++)
                if (socks_request_parse(req, i, &r, &rep) != 0)
                        return false;
        return true;
}

static void test_socks_request(void)
{
        struct socks_request r;
        enum socks_reply rep;

        const uint8_t dom[] = {5,   1,   0,   3,   11,  'e', 'x', 'a',  'm',
                               'p', 'l', 'e', '.', 'c', 'o', 'm', 0x01, 0xbb};
        is_int(socks_request_parse(dom, sizeof dom, &r, &rep), (int)sizeof dom,
               "CONNECT example.com:443: its length");
        ok(r.cmd == 1 && r.atyp == 3 && r.port == 443 && rep == SOCKS_OK,
           "... cmd 1, atyp 3, port 443");
        is_str(r.host, "example.com", "... host as sent");
        ok(prefixes_incomplete(dom, sizeof dom), "... each incomplete prefix returns 0");

        uint8_t more[sizeof dom + 3];
        memcpy(more, dom, sizeof dom);
        memcpy(more + sizeof dom, "GET", 3);
        is_int(socks_request_parse(more, sizeof more, &r, &rep), (int)sizeof dom,
               "bytes after the request are not part of it");

        const uint8_t v4[] = {5, 1, 0, 1, 203, 0, 113, 7, 0, 80};
        is_int(socks_request_parse(v4, sizeof v4, &r, &rep), 10, "CONNECT 203.0.113.7:80");
        ok(r.atyp == 1 && !memcmp(r.addr, "\xcb\x00\x71\x07", 4) && r.port == 80 && !r.host[0],
           "... address bytes and port, no host");
        ok(prefixes_incomplete(v4, sizeof v4), "... each incomplete prefix returns 0");

        const uint8_t v6[] = {5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0,    0,
                              0, 0, 0, 0, 0,    0,    0,    0,    1, 0x20, 0xfb};
        is_int(socks_request_parse(v6, sizeof v6, &r, &rep), 22, "CONNECT [2001:db8::1]:8443");
        ok(r.atyp == 4 && r.addr[0] == 0x20 && r.addr[3] == 0xb8 && r.addr[15] == 1 &&
                   r.port == 8443,
           "... address bytes and port");
        ok(prefixes_incomplete(v6, sizeof v6), "... each incomplete prefix returns 0");

        const uint8_t nul[] = {5, 1, 0, 3, 8, 'a', '.', 'c', 'o', 'm', 0, 'x', 'y', 1, 0xbb};
        is_int(socks_request_parse(nul, sizeof nul, &r, &rep), -EBADMSG,
               "a domain with a NUL inside: -EBADMSG");
        ok(rep == SOCKS_GENERAL_FAILURE, "... reply general failure");
        is_int(socks_request_parse(nul, 11, &r, &rep), -EBADMSG,
               "... refused as soon as the NUL arrives");

        const uint8_t empty[] = {5, 1, 0, 3, 0, 0, 80};
        is_int(socks_request_parse(empty, sizeof empty, &r, &rep), -EBADMSG,
               "an empty domain: -EBADMSG");

        const uint8_t rsv[] = {5, 1, 1, 1, 1, 2, 3, 4, 0, 80};
        is_int(socks_request_parse(rsv, sizeof rsv, &r, &rep), -EBADMSG, "RSV 1: -EBADMSG");
        ok(rep == SOCKS_GENERAL_FAILURE, "... reply general failure");

        const uint8_t ver[] = {4, 1, 0, 1, 1, 2, 3, 4, 0, 80};
        is_int(socks_request_parse(ver, sizeof ver, &r, &rep), -EBADMSG, "version 4: -EBADMSG");

        const uint8_t atyp[] = {5, 1, 0, 2, 1, 2, 3, 4, 0, 80};
        is_int(socks_request_parse(atyp, sizeof atyp, &r, &rep), -EBADMSG,
               "unknown ATYP 2: -EBADMSG");
        ok(rep == SOCKS_ATYP_UNSUPPORTED, "... reply address type not supported");

        const uint8_t port0[] = {5, 1, 0, 1, 1, 2, 3, 4, 0, 0};
        is_int(socks_request_parse(port0, sizeof port0, &r, &rep), -EBADMSG, "port 0: -EBADMSG");

        const uint8_t bind[] = {5, 2, 0, 3, 1, 'h', 0, 21};
        is_int(socks_request_parse(bind, sizeof bind, &r, &rep), 8, "BIND parses");
        ok(r.cmd == 2 && !strcmp(r.host, "h") && r.port == 21,
           "... with cmd 2 (the caller replies command not supported)");

        uint8_t max[5 + 255 + 2] = {5, 1, 0, 3, 255};
        memset(max + 5, 'a', 255);
        max[sizeof max - 1] = 1;
        is_int(socks_request_parse(max, sizeof max, &r, &rep), (int)sizeof max,
               "a 255-byte domain fits");
        is_int(strlen(r.host), 255, "... NUL-terminated after 255 bytes");
}

static void test_socks_reply(void)
{
        uint8_t out[10];
        const uint8_t want[10] = {5, 2, 0, 1, 0, 0, 0, 0, 0, 0};

        is_int(socks_reply_build(SOCKS_NOT_ALLOWED, out), 10, "reply: 10 bytes");
        ok(!memcmp(out, want, 10), "... VER 5, REP 2, RSV 0, ATYP 1, 0.0.0.0:0");
        socks_reply_build(SOCKS_OK, out);
        ok(out[1] == 0 && out[3] == 1, "success reply");
}

/* ---- TLS ClientHello --------------------------------------------------- */

struct buf {
        uint8_t b[70000];
        size_t n;
};

static void put8(struct buf *b, unsigned v)
{
        b->b[b->n++] = (uint8_t)v;
}

static void put16(struct buf *b, unsigned v)
{
        put8(b, v >> 8);
        put8(b, v);
}

static void put24(struct buf *b, size_t v)
{
        put8(b, (unsigned)(v >> 16));
        put16(b, (unsigned)(v & 0xffff));
}

static void putmem(struct buf *b, const void *p, size_t n)
{
        memcpy(b->b + b->n, p, n);
        b->n += n;
}

/* An extension: type, length, data. */
static void ext(struct buf *e, unsigned type, const void *data, size_t n)
{
        put16(e, type);
        put16(e, (unsigned)n);
        putmem(e, data, n);
}

/* A server_name extension with one host_name entry of n bytes. */
static void ext_sni(struct buf *e, const char *name, size_t n)
{
        put16(e, 0);
        put16(e, (unsigned)(n + 5));
        put16(e, (unsigned)(n + 3));
        put8(e, 0);
        put16(e, (unsigned)n);
        putmem(e, name, n);
}

/* Extensions a real client sends besides server_name. */
static void ext_common(struct buf *e)
{
        static const uint8_t versions[] = {4, 0x03, 0x04, 0x03, 0x03};
        static const uint8_t groups[] = {0, 4, 0x00, 0x1d, 0x00, 0x17};
        ext(e, 43, versions, sizeof versions); /* supported_versions */
        ext(e, 10, groups, sizeof groups);     /* supported_groups */
}

/*
 * A ClientHello handshake message (header included) with the given
 * extension block; with_ext false leaves the block out entirely.
 */
static void hello(struct buf *h, const struct buf *e, bool with_ext)
{
        static const uint8_t suites[] = {0x13, 0x01, 0x13, 0x02, 0xc0, 0x2f};
        uint8_t random[32];

        memset(random, 0xa5, sizeof random);
        h->n = 0;
        put8(h, 1);
        size_t lenpos = h->n;
        put24(h, 0);
        put16(h, 0x0303);
        putmem(h, random, sizeof random);
        put8(h, 32);
        putmem(h, random, 32); /* session id */
        put16(h, sizeof suites);
        putmem(h, suites, sizeof suites);
        put8(h, 1);
        put8(h, 0); /* null compression */
        if (with_ext) {
                put16(h, (unsigned)e->n);
                putmem(h, e->b, e->n);
        }
        size_t body = h->n - 4;
        h->b[lenpos] = (uint8_t)(body >> 16);
        h->b[lenpos + 1] = (uint8_t)(body >> 8);
        h->b[lenpos + 2] = (uint8_t)body;
}

/* The handshake message h as records of at most `frag` bytes each. */
static void records(struct buf *out, const struct buf *h, size_t frag)
{
        out->n = 0;
        for (size_t off = 0; off < h->n; off += frag) {
                size_t k = h->n - off < frag ? h->n - off : frag;
                put8(out, 22);
                put16(out, 0x0301);
                put16(out, (unsigned)k);
                putmem(out, h->b + off, k);
        }
}

/* A complete record stream for a ClientHello with one SNI `name`. */
static void client_hello(struct buf *out, const char *name, size_t frag)
{
        static struct buf e, h;

        e.n = 0;
        ext_common(&e);
        if (name)
                ext_sni(&e, name, strlen(name));
        hello(&h, &e, true);
        records(out, &h, frag);
}

static enum tls_sni_result sni_of(const struct buf *b, char *sni, const char **why)
{
        return tls_client_hello_sni(b->b, b->n, sni, why);
}

static void test_tls_found(void)
{
        static struct buf r;
        char sni[TLS_SNI_MAX + 1];
        const char *why = "unset";

        client_hello(&r, "example.com", 16384);
        is_int(sni_of(&r, sni, &why), TLS_SNI_FOUND, "ClientHello with SNI: found");
        is_str(sni, "example.com", "... the name");
        ok(why == NULL, "... no reason given");

        client_hello(&r, NULL, 16384);
        is_int(sni_of(&r, sni, &why), TLS_SNI_ABSENT, "ClientHello without server_name: absent");
        is_str(sni, "", "... sni empty");

        static struct buf e, h;
        hello(&h, &e, false);
        records(&r, &h, 16384);
        is_int(sni_of(&r, sni, &why), TLS_SNI_ABSENT,
               "ClientHello without an extension block: absent");

        client_hello(&r, "Api.EXAMPLE.com", 16384);
        ok(sni_of(&r, sni, &why) == TLS_SNI_FOUND && !strcmp(sni, "api.example.com"),
           "upper case is lower-cased");
        client_hello(&r, "example.com.", 16384);
        ok(sni_of(&r, sni, &why) == TLS_SNI_FOUND && !strcmp(sni, "example.com"),
           "a trailing dot is dropped");

        char longname[256];
        memset(longname, 'a', 255);
        longname[255] = '\0';
        client_hello(&r, longname, 16384);
        ok(sni_of(&r, sni, &why) == TLS_SNI_FOUND && strlen(sni) == 255,
           "a 255-byte name is found whole");

        /* split across records: the message is the same */
        client_hello(&r, "example.com", 16384);
        size_t one = r.n;
        client_hello(&r, "example.com", 100);
        ok(r.n > one && r.n < one + 10, "(the hello spans two records)");
        ok(sni_of(&r, sni, &why) == TLS_SNI_FOUND && !strcmp(sni, "example.com"),
           "ClientHello split across two records: found");
        client_hello(&r, "example.com", 50);
        ok(r.n >= one + 10 && r.n < one + 15, "(the hello spans three records)");
        ok(sni_of(&r, sni, &why) == TLS_SNI_FOUND && !strcmp(sni, "example.com"),
           "ClientHello split across three records: found");
        client_hello(&r, "example.com", 1);
        ok(sni_of(&r, sni, &why) == TLS_MALFORMED && strstr(why, "too many records"),
           "one record per byte (more than 64 records): malformed");

        client_hello(&r, "example.com", 50);
        bool more = true;
        for (size_t i = 0; i < r.n; i++)
                more = more && tls_client_hello_sni(r.b, i, sni, &why) == TLS_NEED_MORE;
        ok(more, "fed byte by byte: NEED_MORE for every proper prefix");
        ok(tls_client_hello_sni(r.b, r.n, sni, &why) == TLS_SNI_FOUND &&
                   !strcmp(sni, "example.com"),
           "... found once complete");

        /* records after the ClientHello (0-RTT data, CCS) are not its business */
        client_hello(&r, "example.com", 16384);
        const uint8_t app[] = {23, 3, 3, 0, 2, 'h', 'i'};
        putmem(&r, app, sizeof app);
        ok(sni_of(&r, sni, &why) == TLS_SNI_FOUND, "a record after the ClientHello is ignored");
        ok(tls_client_hello_sni(r.b, r.n, sni, NULL) == TLS_SNI_FOUND, "why may be NULL");
}

static void expect_malformed(const struct buf *r, const char *what)
{
        char sni[TLS_SNI_MAX + 1];
        const char *why = NULL;

        enum tls_sni_result v = tls_client_hello_sni(r->b, r->n, sni, &why);
        ok(v == TLS_MALFORMED && why && why[0] && !sni[0], "%s: malformed (%s)", what,
           why ? why : "-");
}

/* A ClientHello whose extension block is `e`, in one record. */
static void hello_with(struct buf *r, const struct buf *e)
{
        static struct buf h;
        hello(&h, e, true);
        records(r, &h, 16384);
}

static void test_tls_refused(void)
{
        static struct buf r, e, h;
        char sni[TLS_SNI_MAX + 1];
        const char *why = NULL;

        const char get[] = "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n";
        enum tls_sni_result v =
                tls_client_hello_sni((const unsigned char *)get, strlen(get), sni, &why);
        ok(v == TLS_NOT_TLS && why, "\"GET / HTTP/1.1\": not TLS (%s)", why ? why : "-");
        ok(tls_client_hello_sni((const unsigned char *)get, 1, sni, &why) == TLS_NOT_TLS,
           "... known from the first byte");
        is_int(tls_client_hello_sni((const unsigned char *)"", 0, sni, &why), TLS_NEED_MORE,
               "no bytes: need more");

        client_hello(&r, "example.com", 16384);
        r.b[0] = 23;
        ok(sni_of(&r, sni, &why) == TLS_NOT_TLS && why, "application data record first: not TLS");
        client_hello(&r, "example.com", 100);
        r.b[5 + 100] = 20;
        ok(sni_of(&r, sni, &why) == TLS_NOT_TLS,
           "a ChangeCipherSpec record inside the ClientHello: not TLS");
        client_hello(&r, "example.com", 16384);
        r.b[1] = 2;
        ok(sni_of(&r, sni, &why) == TLS_NOT_TLS, "record version 2.x: not TLS");

        /* ambiguity */
        e.n = 0;
        ext_sni(&e, "allowed.example", 15);
        ext_common(&e);
        ext_sni(&e, "evil.example", 12);
        hello_with(&r, &e);
        expect_malformed(&r, "two server_name extensions");

        e.n = 0;
        put16(&e, 0);
        put16(&e, 2 + 3 + 15 + 3 + 12);
        put16(&e, 3 + 15 + 3 + 12);
        put8(&e, 0);
        put16(&e, 15);
        putmem(&e, "allowed.example", 15);
        put8(&e, 0);
        put16(&e, 12);
        putmem(&e, "evil.example", 12);
        hello_with(&r, &e);
        expect_malformed(&r, "two host_name entries");

        e.n = 0;
        put16(&e, 0);
        put16(&e, 2 + 3 + 4);
        put16(&e, 3 + 4);
        put8(&e, 1); /* not host_name */
        put16(&e, 4);
        putmem(&e, "a.io", 4);
        hello_with(&r, &e);
        expect_malformed(&r, "a server_name entry of type 1");

        e.n = 0;
        ext_sni(&e, "", 0);
        hello_with(&r, &e);
        expect_malformed(&r, "an empty host_name");

        static const struct {
                const char *name;
                size_t n;
                const char *what;
        } bad[] = {
                {"allowed.com\0.evil.com", 21, "a NUL inside the name"},
                {"allowed.com\n", 12, "a control byte"},
                {"allowed com", 11, "a space"},
                {"allowed.c\xc3\xb6m", 12, "a non-ASCII byte"},
                {"a..com", 6, "an empty label"},
                {"example.com..", 13, "two trailing dots"},
                {".", 1, "only a dot"},
                {".example.com", 12, "a leading dot"},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                e.n = 0;
                ext_sni(&e, bad[i].name, bad[i].n);
                hello_with(&r, &e);
                expect_malformed(&r, bad[i].what);
        }

        char toolong[256];
        memset(toolong, 'a', sizeof toolong);
        e.n = 0;
        ext_sni(&e, toolong, sizeof toolong);
        hello_with(&r, &e);
        expect_malformed(&r, "a 256-byte name");

        /* length fields that overrun what contains them */
        e.n = 0;
        ext_sni(&e, "example.com", 11);
        hello_with(&r, &e);
        size_t ext_block = r.n - e.n - 2; /* offset of the extensions length */
        r.b[ext_block + 1]++;
        expect_malformed(&r, "extensions length past the ClientHello");
        hello_with(&r, &e);
        r.b[ext_block + 1]--;
        expect_malformed(&r, "extensions length short of the ClientHello (trailing bytes)");
        hello_with(&r, &e);
        r.b[ext_block + 2 + 3]++; /* server_name extension length */
        expect_malformed(&r, "server_name extension length past the block");
        hello_with(&r, &e);
        r.b[ext_block + 2 + 5]++; /* server_name list length */
        expect_malformed(&r, "server_name list length past the extension");
        hello_with(&r, &e);
        r.b[ext_block + 2 + 8]++; /* host_name length */
        expect_malformed(&r, "host_name length past the list");
        hello_with(&r, &e);
        r.b[5 + 4 + 2 + 32] = 33;
        expect_malformed(&r, "session id length 33");
        hello_with(&r, &e);
        r.b[5 + 4 + 2 + 32 + 1 + 32] = 0xff;
        expect_malformed(&r, "cipher suites length past the ClientHello");
        hello_with(&r, &e);
        r.b[5 + 4 + 2 + 32 + 1 + 32 + 2 + 6] = 0xff;
        expect_malformed(&r, "compression methods length past the ClientHello");

        /* framing */
        client_hello(&r, "example.com", 16384);
        r.b[5] = 2;
        expect_malformed(&r, "a ServerHello instead of a ClientHello");
        client_hello(&r, "example.com", 16384);
        r.b[4]++;
        r.b[r.n++] = 0;
        expect_malformed(&r, "handshake bytes after the ClientHello in its record");
        client_hello(&r, "example.com", 16384);
        r.b[3] = 0;
        r.b[4] = 0;
        expect_malformed(&r, "an empty record");
        client_hello(&r, "example.com", 16384);
        r.b[3] = 0x40;
        r.b[4] = 1;
        expect_malformed(&r, "a record over 2^14 bytes");
        client_hello(&r, "example.com", 16384);
        r.b[6] = 0x01;
        r.b[7] = 0x00;
        r.b[8] = 0x01; /* 65537 bytes */
        expect_malformed(&r, "a ClientHello over TLS_HELLO_MAX");

        /* the biggest ClientHello allowed, over 5 records */
        e.n = 0;
        ext_sni(&e, "big.example", 11);
        static uint8_t pad[TLS_HELLO_MAX];
        size_t fixed = 2 + 32 + 1 + 32 + 2 + 6 + 1 + 1 + 2 + e.n + 4;
        ext(&e, 21, pad, TLS_HELLO_MAX - fixed);
        hello(&h, &e, true);
        is_int(h.n, TLS_HELLO_MAX + 4, "(a ClientHello of exactly TLS_HELLO_MAX bytes)");
        records(&r, &h, 16384);
        ok(sni_of(&r, sni, &why) == TLS_SNI_FOUND && !strcmp(sni, "big.example"),
           "... is read across 5 records");
        is_int(tls_client_hello_sni(r.b, r.n - 1, sni, &why), TLS_NEED_MORE,
               "... one byte short: need more");
}

/* ---- DNS --------------------------------------------------------------- */

static void name(struct buf *b, const char *text)
{
        while (*text) {
                const char *dot = strchr(text, '.');
                size_t n = dot ? (size_t)(dot - text) : strlen(text);
                put8(b, (unsigned)n);
                putmem(b, text, n);
                text += n + (dot ? 1 : 0);
        }
        put8(b, 0);
}

static void ptr(struct buf *b, size_t off)
{
        put16(b, 0xc000 | (unsigned)off);
}

/* Header and question of a response; counts patched by the callers. */
static void response(struct buf *b, uint16_t id, unsigned rcode, const char *qname, unsigned qtype,
                     unsigned ancount)
{
        b->n = 0;
        put16(b, id);
        put8(b, 0x81); /* QR, RD */
        put8(b, 0x80 | rcode);
        put16(b, 1);
        put16(b, ancount);
        put16(b, 0);
        put16(b, 0);
        name(b, qname);
        put16(b, qtype);
        put16(b, 1);
}

/* The fixed part of a record, after its owner name. */
static void rr(struct buf *b, unsigned type, uint32_t ttl, size_t rdlen)
{
        put16(b, type);
        put16(b, 1);
        put16(b, ttl >> 16);
        put16(b, ttl & 0xffff);
        put16(b, (unsigned)rdlen);
}

static void rr_a(struct buf *b, const char *owner, uint32_t ttl, uint8_t last)
{
        const uint8_t a[4] = {192, 0, 2, last};
        name(b, owner);
        rr(b, 1, ttl, 4);
        putmem(b, a, 4);
}

static void rr_cname(struct buf *b, const char *owner, const char *target, uint32_t ttl)
{
        static struct buf t;
        t.n = 0;
        name(&t, target);
        name(b, owner);
        rr(b, 5, ttl, t.n);
        putmem(b, t.b, t.n);
}

static int parse(const struct buf *b, const char *qname, unsigned qtype, struct dns_answer *a)
{
        return dns_response_parse(b->b, b->n, 0x1234, qname, (uint16_t)qtype, a);
}

static void test_dns_query(void)
{
        uint8_t q[DNSR_QUERY_MAX];
        const uint8_t want[] = {0x12, 0x34, 0x01, 0x00, 0,   1,   0,   0,   0,   0,
                                0,    0,    7,    'e',  'x', 'a', 'm', 'p', 'l', 'e',
                                3,    'c',  'o',  'm',  0,   0,   28,  0,   1};

        is_int(dns_query_build("example.com", 28, 0x1234, q, sizeof q), (int)sizeof want,
               "AAAA query for example.com: 29 bytes");
        ok(!memcmp(q, want, sizeof want), "... id, RD, one question, labels, AAAA, IN");

        char max[254];
        memset(max, 'a', 253);
        for (int i = 63; i < 253; i += 64)
                max[i] = '.';
        max[253] = '\0';
        is_int(dns_query_build(max, 1, 1, q, sizeof q), 12 + 255 + 4, "a 253-byte name fits");
        char label64[65];
        memset(label64, 'a', 64);
        label64[64] = '\0';

        const char *const bad[] = {"",      "example.com.", "a..b", ".a",   "Example.com",
                                   "a b.c", "a\\.b",        "a/b",  label64};
        bool all = true;
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
                all = all && dns_query_build(bad[i], 1, 1, q, sizeof q) == -EINVAL;
        ok(all, "empty, trailing dot, empty label, upper case, odd bytes, 64-byte label: -EINVAL");
        char over[255];
        memcpy(over, max, 254);
        over[253] = 'a';
        over[254] = '\0';
        is_int(dns_query_build(over, 1, 1, q, sizeof q), -EINVAL, "a 254-byte name: -EINVAL");
        is_int(dns_query_build("example.com", 5, 1, q, sizeof q), -EINVAL, "qtype CNAME: -EINVAL");
        is_int(dns_query_build("example.com", 1, 1, q, 28), -EINVAL, "buffer too small: -EINVAL");
}

static void test_dns_response(void)
{
        static struct buf b;
        struct dns_answer a;

        response(&b, 0x1234, 0, "example.com", 1, 2);
        ptr(&b, 12);
        rr(&b, 1, 300, 4);
        putmem(&b, "\xc0\x00\x02\x01", 4);
        ptr(&b, 12);
        rr(&b, 1, 60, 4);
        putmem(&b, "\xc0\x00\x02\x02", 4);
        is_int(parse(&b, "example.com", 1, &a), 0, "two A records (owners compressed)");
        ok(a.n == 2 && a.family[0] == AF_INET && !memcmp(a.addr[0], "\xc0\x00\x02\x01", 4) &&
                   !memcmp(a.addr[1], "\xc0\x00\x02\x02", 4) && a.rcode == 0,
           "... both addresses, AF_INET");
        is_int(a.min_ttl, 60, "... min_ttl is the smaller TTL");

        response(&b, 0x1234, 0, "example.com", 28, 1);
        ptr(&b, 12);
        rr(&b, 28, 300, 16);
        putmem(&b, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
        ok(parse(&b, "example.com", 28, &a) == 0 && a.n == 1 && a.family[0] == AF_INET6 &&
                   a.addr[0][0] == 0x20 && a.addr[0][15] == 1,
           "an AAAA record");

        response(&b, 0x1234, 0, "example.com", 1, 3);
        rr_cname(&b, "example.com", "a.cdn.example.net", 100);
        rr_cname(&b, "a.cdn.example.net", "b.cdn.example.net", 50);
        rr_a(&b, "b.cdn.example.net", 200, 9);
        ok(parse(&b, "example.com", 1, &a) == 0 && a.n == 1 && a.addr[0][3] == 9,
           "a CNAME chain to an A record");
        is_int(a.min_ttl, 50, "... min_ttl counts the CNAMEs");

        response(&b, 0x1234, 0, "example.com", 1, 3);
        rr_a(&b, "b.cdn.example.net", 200, 9);
        rr_cname(&b, "a.cdn.example.net", "b.cdn.example.net", 50);
        rr_cname(&b, "example.com", "a.cdn.example.net", 100);
        ok(parse(&b, "example.com", 1, &a) == 0 && a.n == 1 && a.addr[0][3] == 9,
           "the same chain in reverse order");

        /* compression everywhere: CNAME target and A owner point backwards */
        response(&b, 0x1234, 0, "www.example.com", 1, 2);
        ptr(&b, 12);
        size_t rd = b.n + 10;
        rr(&b, 5, 100, 6);
        put8(&b, 3);
        putmem(&b, "cdn", 3);
        ptr(&b, 16); /* "example.com" inside the question */
        ptr(&b, rd);
        rr(&b, 1, 100, 4);
        putmem(&b, "\xc0\x00\x02\x07", 4);
        ok(parse(&b, "www.example.com", 1, &a) == 0 && a.n == 1 && a.addr[0][3] == 7,
           "compression pointers: CNAME to cdn.example.com, A owned by a pointer to it");

        response(&b, 0x1234, 0, "example.com", 1, 4);
        rr_a(&b, "evil.example", 300, 66);
        rr_a(&b, "example.com.evil.example", 300, 67);
        rr_cname(&b, "other.example", "example.com", 300);
        rr_a(&b, "example.com", 300, 1);
        ok(parse(&b, "example.com", 1, &a) == 0 && a.n == 1 && a.addr[0][3] == 1,
           "records for other names are ignored (and a CNAME pointing at the name)");
        response(&b, 0x1234, 0, "example.com", 1, 1);
        rr_a(&b, "example.com", 300, 1);
        b.b[10] = 0;
        b.b[11] = 1; /* ARCOUNT */
        rr_a(&b, "evil.example", 300, 66);
        ok(parse(&b, "example.com", 1, &a) == 0 && a.n == 1 && a.addr[0][3] == 1,
           "the additional section is ignored");

        response(&b, 0x1234, 0, "example.com", 1, 1);
        rr_a(&b, "example.com", 300, 1);
        rr_a(&b, "example.com", 300, 2); /* not counted in ANCOUNT */
        ok(parse(&b, "example.com", 1, &a) == 0 && a.n == 1, "only ANCOUNT records are read");

        response(&b, 0x1234, 0, "EXAMPLE.Com", 1, 1);
        rr_a(&b, "eXaMpLe.CoM", 300, 1);
        ok(parse(&b, "example.com", 1, &a) == 0 && a.n == 1,
           "names compare case-insensitively (0x20 mixing)");

        response(&b, 0x1234, 0, "example.com", 1, 1);
        rr_a(&b, "example.com", 0x80000000u, 1);
        ok(parse(&b, "example.com", 1, &a) == 0 && a.n == 1 && a.min_ttl == 0,
           "a TTL with the top bit set counts as 0");

        response(&b, 0x1234, 0, "example.com", 1, 0);
        ok(parse(&b, "example.com", 1, &a) == 0 && a.n == 0 && a.min_ttl == 0,
           "NODATA: 0 with n == 0");

        response(&b, 0x1234, 3, "example.com", 1, 1);
        rr_a(&b, "example.com", 300, 1);
        ok(parse(&b, "example.com", 1, &a) == 0 && a.rcode == 3 && a.n == 0,
           "NXDOMAIN: rcode 3, n == 0 (an address in it is not taken)");

        response(&b, 0x1234, 0, "example.com", 1, DNSR_ADDRS_MAX + 4);
        for (int i = 0; i < DNSR_ADDRS_MAX + 4; i++) {
                ptr(&b, 12);
                rr(&b, 1, 300, 4);
                putmem(&b, "\xc0\x00\x02", 3);
                put8(&b, (unsigned)i);
        }
        ok(parse(&b, "example.com", 1, &a) == 0 && a.n == DNSR_ADDRS_MAX &&
                   a.addr[DNSR_ADDRS_MAX - 1][3] == DNSR_ADDRS_MAX - 1,
           "more than DNSR_ADDRS_MAX answers: the first %d kept", DNSR_ADDRS_MAX);

        /* chains: 8 CNAMEs allowed, 9 refused, loops and conflicts refused */
        char from[16], to[16];
        response(&b, 0x1234, 0, "c0.example", 1, 9);
        for (int i = 0; i < 8; i++) {
                snprintf(from, sizeof from, "c%d.example", i);
                snprintf(to, sizeof to, "c%d.example", i + 1);
                rr_cname(&b, from, to, 300);
        }
        rr_a(&b, "c8.example", 300, 8);
        ok(parse(&b, "c0.example", 1, &a) == 0 && a.n == 1 && a.addr[0][3] == 8,
           "a chain of 8 CNAMEs");
        response(&b, 0x1234, 0, "c0.example", 1, 10);
        for (int i = 0; i < 9; i++) {
                snprintf(from, sizeof from, "c%d.example", i);
                snprintf(to, sizeof to, "c%d.example", i + 1);
                rr_cname(&b, from, to, 300);
        }
        rr_a(&b, "c9.example", 300, 9);
        is_int(parse(&b, "c0.example", 1, &a), -EBADMSG, "a chain of 9 CNAMEs: -EBADMSG");
        response(&b, 0x1234, 0, "example.com", 1, 2);
        rr_cname(&b, "example.com", "x.example", 300);
        rr_cname(&b, "x.example", "example.com", 300);
        is_int(parse(&b, "example.com", 1, &a), -EBADMSG, "a CNAME loop: -EBADMSG");
        response(&b, 0x1234, 0, "example.com", 1, 2);
        rr_cname(&b, "example.com", "x.example", 300);
        rr_cname(&b, "example.com", "y.example", 300);
        is_int(parse(&b, "example.com", 1, &a), -EBADMSG, "two CNAMEs for one name: -EBADMSG");
}

static void test_dns_refused(void)
{
        static struct buf b, c;
        struct dns_answer a;

        response(&b, 0x1234, 0, "example.com", 1, 1);
        rr_a(&b, "example.com", 300, 1);
        c = b;
        c.b[1] = 0x35;
        is_int(parse(&c, "example.com", 1, &a), -EBADMSG, "wrong id: -EBADMSG");
        ok(a.n == 0, "... and no address");
        c = b;
        c.b[2] &= 0x7f;
        is_int(parse(&c, "example.com", 1, &a), -EBADMSG, "QR clear: -EBADMSG");
        c = b;
        c.b[2] |= 0x08;
        is_int(parse(&c, "example.com", 1, &a), -EBADMSG, "opcode not QUERY: -EBADMSG");
        is_int(parse(&b, "example.org", 1, &a), -EBADMSG, "wrong question name: -EBADMSG");
        is_int(parse(&b, "example.com", 28, &a), -EBADMSG, "wrong question type: -EBADMSG");
        c = b;
        c.b[5] = 2;
        is_int(parse(&c, "example.com", 1, &a), -EBADMSG, "two questions: -EBADMSG");
        c = b;
        c.b[12 + 13 + 3] = 3;
        is_int(parse(&c, "example.com", 1, &a), -EBADMSG, "question class CH: -EBADMSG");
        is_int(dns_response_parse(b.b, 11, 0x1234, "example.com", 1, &a), -EBADMSG,
               "shorter than a header: -EBADMSG");
        is_int(dns_response_parse(b.b, b.n - 1, 0x1234, "example.com", 1, &a), -EBADMSG,
               "last record cut short: -EBADMSG");
        is_int(parse(&b, "Example.com", 1, &a), -EINVAL, "a non-canonical query name: -EINVAL");

        response(&b, 0x1234, 0, "example.com", 1, 0);
        b.n = 12; /* the question is the single label "example.com" */
        put8(&b, 11);
        putmem(&b, "example.com", 11);
        put8(&b, 0);
        put16(&b, 1);
        put16(&b, 1);
        is_int(parse(&b, "example.com", 1, &a), -EBADMSG,
               "a label holding a dot is not two labels: -EBADMSG");

        response(&b, 0x1234, 0, "example.com", 1, 1);
        ptr(&b, b.n + 30); /* forward */
        rr(&b, 1, 300, 4);
        putmem(&b, "\xc0\x00\x02\x01", 4);
        is_int(parse(&b, "example.com", 1, &a), -EBADMSG, "a forward pointer: -EBADMSG");

        response(&b, 0x1234, 0, "example.com", 1, 1);
        ptr(&b, b.n); /* to itself */
        rr(&b, 1, 300, 4);
        putmem(&b, "\xc0\x00\x02\x01", 4);
        is_int(parse(&b, "example.com", 1, &a), -EBADMSG, "a pointer to itself: -EBADMSG");

        /* two pointers that point at each other: one of them points forward */
        response(&b, 0x1234, 0, "example.com", 1, 2);
        size_t first = b.n;
        ptr(&b, first + 2 + 10 + 4); /* to the second owner */
        rr(&b, 1, 300, 4);
        putmem(&b, "\xc0\x00\x02\x01", 4);
        ptr(&b, first);
        rr(&b, 1, 300, 4);
        putmem(&b, "\xc0\x00\x02\x02", 4);
        is_int(parse(&b, "example.com", 1, &a), -EBADMSG, "a pointer loop: -EBADMSG");

        /* a label that reads on into a pointer back to its own start */
        response(&b, 0x1234, 0, "example.com", 1, 1);
        size_t at = b.n;
        put8(&b, 1);
        put8(&b, 'x');
        ptr(&b, at);
        rr(&b, 1, 300, 4);
        putmem(&b, "\xc0\x00\x02\x01", 4);
        is_int(parse(&b, "example.com", 1, &a), -EBADMSG, "a loop through a label: -EBADMSG");

        response(&b, 0x1234, 0, "example.com", 1, 1);
        ptr(&b, 4); /* into the header */
        rr(&b, 1, 300, 4);
        putmem(&b, "\xc0\x00\x02\x01", 4);
        is_int(parse(&b, "example.com", 1, &a), -EBADMSG, "a pointer into the header: -EBADMSG");

        response(&b, 0x1234, 0, "example.com", 1, 1);
        ptr(&b, 12);
        rr(&b, 1, 300, 5);
        putmem(&b, "\xc0\x00\x02\x01\x00", 5);
        is_int(parse(&b, "example.com", 1, &a), -EBADMSG, "an A record of 5 bytes: -EBADMSG");

        response(&b, 0x1234, 0, "example.com", 1, 1);
        ptr(&b, 12);
        rr(&b, 5, 300, 5);
        put8(&b, 1);
        put8(&b, 'x');
        ptr(&b, 12);
        put8(&b, 0); /* a byte after the name, inside RDATA */
        is_int(parse(&b, "example.com", 1, &a), -EBADMSG,
               "a CNAME whose target does not fill its RDATA: -EBADMSG");

        response(&b, 0x1234, 0, "example.com", 1, 0);
        b.b[2] |= 0x02;
        is_int(parse(&b, "example.com", 1, &a), -EBADMSG,
               "truncated (TC) without an address: -EBADMSG, not NODATA");
}

int main(void)
{
        test_socks_greeting();
        test_socks_request();
        test_socks_reply();
        test_tls_found();
        test_tls_refused();
        test_dns_query();
        test_dns_response();
        test_dns_refused();
        return done();
}
