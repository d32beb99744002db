/*
 * test_captured.c — the pure decisions of a captured connection
 * (src/egress/captured.c, issue 14): what the original destination the
 * run dialled means (the run's own addresses and the egress process's own
 * listener refused, pool addresses turned back into the names the run's
 * resolver handed them out for, or refused when it never did, anything
 * else a literal for IP/CIDR rules), and what the first bytes of the
 * stream are (TLS, an HTTP request line, or another protocol); and the
 * origin-form request reader of captured HTTP (http_captured_request_parse).
 *
 * The map is built here by hand as synth.h lays it out (index i holds
 * host part SYNTH_FIRST_HOST + i), so the cases do not depend on how the
 * stub assigns.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "egress/captured.h"
#include "egress/http.h"
#include "sandbox/plan.h"
#include "tap.h"

static struct synth_entry entries[2];
static struct synth_map map = {.v = entries, .n = 2, .cap = 2};

static void map_init(void)
{
        static const uint8_t net6[16] = SYNTH_V6_NET;
        const char *names[2] = {"svc.test", "api.example.com"};
        for (int i = 0; i < 2; i++) {
                snprintf(entries[i].name, sizeof entries[i].name, "%s", names[i]);
                entries[i].v4 = SYNTH_V4_NET + SYNTH_FIRST_HOST + (uint32_t)i;
                memcpy(entries[i].v6, net6, 16);
                entries[i].v6[15] = (uint8_t)(SYNTH_FIRST_HOST + i);
        }
}

static enum captured_kind dest(const char *text, uint16_t port, bool map_ok,
                               struct captured_dest *d)
{
        uint8_t a[16] = {0};
        int family = strchr(text, ':') ? AF_INET6 : AF_INET;
        if (inet_pton(family, text, a) != 1)
                return _CAPD_INVALID;
        return captured_dest_decide(&map, map_ok, family, a, port, d);
}

static void test_dest(void)
{
        struct captured_dest d;

        is_int(dest("198.18.0.2", 443, true, &d), CAPD_NAME, "a pool address handed out: its name");
        is_str(d.name, "svc.test", "... the name it was handed out for");
        is_int(dest("198.18.0.3", 80, true, &d), CAPD_NAME, "the second entry");
        is_str(d.name, "api.example.com", "... its name");
        is_int(dest("fd52:6667:6e63::3", 443, true, &d), CAPD_NAME, "a v6 pool address: its name");
        is_str(d.name, "api.example.com", "... the same name as its v4 twin");

        is_int(dest("198.18.0.4", 443, true, &d), CAPD_REFUSE, "a pool address never handed out");
        is_str(d.reason, "not an address this run's resolver handed out", "... says so");
        is_int(dest("198.19.255.254", 443, true, &d), CAPD_REFUSE, "the pool's last address");
        is_int(dest("fd52:6667:6e63::1:2", 443, true, &d), CAPD_REFUSE,
               "a v6 pool address whose v4 twin exists but is not this one");
        is_int(dest("198.18.0.2", 443, false, &d), CAPD_REFUSE,
               "a broken map channel: even a known pool address is refused");
        is_int(dest("198.18.0.1", 443, true, &d), CAPD_REFUSE, "the run's own v4 address");
        is_str(d.reason, "the run's own address", "... says so");
        is_int(dest("fd52:6667:6e63::1", 443, true, &d), CAPD_REFUSE, "the run's own v6 address");
        is_int(dest("198.18.0.0", 443, true, &d), CAPD_REFUSE, "the pool's network address");

        is_int(dest("127.0.0.1", RF_EGRESS_CAPTURE_PORT, true, &d), CAPD_REFUSE,
               "a direct connection to the capture listener (no translation)");
        is_str(d.reason, "the egress process's own listener", "... named as such");
        is_int(dest("::1", RF_EGRESS_CAPTURE_PORT, true, &d), CAPD_REFUSE,
               "the v6 capture listener");
        is_int(dest("127.0.0.53", 53, true, &d), CAPD_REFUSE, "any other loopback address");
        is_int(dest("::ffff:127.0.0.1", 80, true, &d), CAPD_REFUSE, "loopback, v4-mapped");
        is_int(dest("0.0.0.0", 80, true, &d), CAPD_REFUSE, "unspecified");
        is_int(dest("::", 80, true, &d), CAPD_REFUSE, "unspecified v6");

        is_int(dest("203.0.113.7", 443, true, &d), CAPD_LITERAL,
               "a real address: a literal, for IP/CIDR rules");
        is_int(dest("10.1.2.3", 5432, true, &d), CAPD_LITERAL,
               "a private address: still a literal (the rules and classes decide)");
        is_int(dest("2001:db8::1", 443, true, &d), CAPD_LITERAL, "a v6 literal");
        is_int(dest("198.20.0.2", 443, true, &d), CAPD_LITERAL, "just past the v4 pool");
        is_int(dest("fd52:6667:6e64::2", 443, true, &d), CAPD_LITERAL, "just past the v6 pool");
}

static enum captured_first first(const char *s)
{
        return captured_first_bytes((const uint8_t *)s, strlen(s));
}

static void test_first_bytes(void)
{
        static const uint8_t hello[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01};
        is_int(captured_first_bytes(hello, sizeof hello), CAPF_TLS, "a TLS handshake record");
        is_int(captured_first_bytes(hello, 1), CAPF_TLS, "... known from its first byte");
        is_int(captured_first_bytes(hello, 0), CAPF_NEED_MORE, "nothing yet");
        is_int(first("GET / HTTP/1.1\r\n"), CAPF_HTTP, "an origin-form GET");
        is_int(first("OPTIONS * HTTP/1.1\r\n"), CAPF_HTTP, "OPTIONS *");
        is_int(first("POST http://x/ HTTP/1.1\r\n"), CAPF_HTTP,
               "an absolute-form request (refused later, with a 400)");
        is_int(first("GE"), CAPF_NEED_MORE, "a method still arriving");
        is_int(first("GET "), CAPF_NEED_MORE, "a method and its space");
        is_int(first("SSH-2.0-OpenSSH_9.2\r\n"), CAPF_OTHER, "an SSH banner");
        is_int(first("EHLO me\r\n"), CAPF_OTHER, "SMTP (a method-like word, no path)");
        is_int(first("get / HTTP/1.1\r\n"), CAPF_OTHER, "a lower-case method is no HTTP request");
        static const uint8_t pg[] = {0x00, 0x00, 0x00, 0x08, 0x04, 0xd2, 0x16, 0x2f};
        is_int(captured_first_bytes(pg, sizeof pg), CAPF_OTHER, "a database's binary startup");
        is_int(first("ABCDEFGHIJKLMNOPQ"), CAPF_OTHER, "a word longer than any method");
        is_int(first("ABCDEFGHIJKLMNOP"), CAPF_OTHER, "CAPTURED_METHOD_MAX letters: decided");
        is_int(first("ABCDEFGHIJKLMNOP / HTTP/1.1\r\n"), CAPF_OTHER,
               "... and decided the same when the request line follows (fuzz_captured: a "
               "decision must not depend on how the stream was cut)");
        is_int(first("ABCDEFGHIJKLMNO / HTTP/1.1\r\n"), CAPF_HTTP,
               "a method of CAPTURED_METHOD_MAX - 1 letters is one");
        is_int(first("ABCDEFGHIJKLMNO "), CAPF_NEED_MORE, "... still arriving");
}

static void test_captured_request(void)
{
        struct http_request r;
        const char *why = NULL;
        const char *ok1 = "GET /a?b=1 HTTP/1.1\r\nHost: svc.test:8080\r\n\r\n";
        ok(http_captured_request_parse(ok1, strlen(ok1), &r, &why) > 0, "origin form with a Host");
        is_str(r.host, "svc.test", "... the Host's name");
        is_int(r.port, 8080, "... its port");
        ok(r.host_has_port, "... which it named");
        const char *ok2 = "GET / HTTP/1.0\r\nHost: Svc.Test\r\n\r\n";
        ok(http_captured_request_parse(ok2, strlen(ok2), &r, &why) > 0, "HTTP/1.0");
        is_str(r.host, "svc.test", "... the Host lower-cased");
        is_int(r.port, 80, "... port 80 when it names none");
        ok(!r.host_has_port, "... and says it named none");
        const char *no_host = "GET / HTTP/1.1\r\n\r\n";
        is_int(http_captured_request_parse(no_host, strlen(no_host), &r, &why), -EBADMSG,
               "no Host: refused");
        const char *two = "GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n";
        is_int(http_captured_request_parse(two, strlen(two), &r, &why), -EBADMSG,
               "two Host headers: refused");
        const char *connect = "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n";
        is_int(http_captured_request_parse(connect, strlen(connect), &r, &why), -EBADMSG,
               "CONNECT on a captured connection: refused");
        const char *star = "OPTIONS * HTTP/1.1\r\nHost: a.test\r\n\r\n";
        is_int(http_captured_request_parse(star, strlen(star), &r, &why), -EBADMSG,
               "OPTIONS *: refused (a target is a path)");
        const char *abs = "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n";
        is_int(http_captured_request_parse(abs, strlen(abs), &r, &why), -EBADMSG,
               "absolute form: refused");
        const char *user = "GET / HTTP/1.1\r\nHost: u@a.test\r\n\r\n";
        is_int(http_captured_request_parse(user, strlen(user), &r, &why), -EBADMSG,
               "userinfo in Host: refused");
        const char *smug = "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\n"
                           "Transfer-Encoding: chunked\r\n\r\n";
        is_int(http_captured_request_parse(smug, strlen(smug), &r, &why), -EBADMSG,
               "Content-Length with Transfer-Encoding: refused as for the proxy");
        const char *part = "GET / HTTP/1.1\r\nHost: a.t";
        is_int(http_captured_request_parse(part, strlen(part), &r, &why), 0,
               "a head still arriving");
}

int main(void)
{
        map_init();
        test_dest();
        test_first_bytes();
        test_captured_request();
        return done();
}
