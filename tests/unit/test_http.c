/*
 * test_http.c — the egress proxy's HTTP/1.1 head parsers and chunked
 * framing (src/egress/http.c): valid absolute-form and CONNECT requests,
 * every refusal http.h lists (each asserting -EBADMSG and the reason),
 * request-smuggling variants, Host/target agreement, responses, heads and
 * chunked bodies delivered in every split.
 *
 * Each parse runs on a heap copy of exactly the bytes given, so under ASan
 * a read past `len` is a report, not a silent pass.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress/http.h"
#include "egress/wsframe.h"
#include "tap.h"

#define CRLF "\r\n"

static char *dup_exact(const char *s, size_t n)
{
        char *p = malloc(n ? n : 1);

        if (!p)
                abort();
        memcpy(p, s, n);
        return p;
}

static int req_n(const char *s, size_t n, struct http_request *r, const char **why)
{
        char *p = dup_exact(s, n);
        int k = http_request_parse(p, n, r, why);

        free(p);
        return k;
}

static int req(const char *s, struct http_request *r, const char **why)
{
        return req_n(s, strlen(s), r, why);
}

static int resp_n(const char *s, size_t n, struct http_response *r, const char **why)
{
        char *p = dup_exact(s, n);
        int k = http_response_parse(p, n, r, why);

        free(p);
        return k;
}

static int resp(const char *s, struct http_response *r, const char **why)
{
        return resp_n(s, strlen(s), r, why);
}

static bool span_is(const char *buf, struct http_span s, const char *want)
{
        return s.len == strlen(want) && memcmp(buf + s.off, want, s.len) == 0;
}

/* One check: the request (n bytes) is refused with -EBADMSG and a `why` containing `want`. */
static void refused_n(const char *s, size_t n, const char *want, const char *name)
{
        static struct http_request r;
        const char *why = NULL;
        int k = req_n(s, n, &r, &why);
        bool pass = k == -EBADMSG && why && strstr(why, want);

        ok(pass, "refused: %s", name);
        if (!pass)
                diag("  got %d, why '%s' (want -EBADMSG, '%s')", k, why ? why : "(null)", want);
}

static void refused(const char *s, const char *want, const char *name)
{
        refused_n(s, strlen(s), want, name);
}

static void resp_refused(const char *s, const char *want, const char *name)
{
        struct http_response r;
        const char *why = NULL;
        int k = resp(s, &r, &why);
        bool pass = k == -EBADMSG && why && strstr(why, want);

        ok(pass, "response refused: %s", name);
        if (!pass)
                diag("  got %d, why '%s' (want -EBADMSG, '%s')", k, why ? why : "(null)", want);
}

static bool same_request(const struct http_request *a, const struct http_request *b)
{
        if (a->head_len != b->head_len || strcmp(a->host, b->host) != 0 || a->port != b->port ||
            a->connect != b->connect || a->host_is_ipv6 != b->host_is_ipv6 ||
            a->path.off != b->path.off || a->path.len != b->path.len ||
            a->method.len != b->method.len || a->content_length != b->content_length ||
            a->chunked != b->chunked || a->close != b->close || a->http10 != b->http10 ||
            a->n_headers != b->n_headers)
                return false;
        for (size_t i = 0; i < a->n_headers; i++)
                if (memcmp(&a->headers[i], &b->headers[i], sizeof a->headers[i]) != 0)
                        return false;
        return true;
}

/*
 * Every prefix of s[0..n) shorter than the head parses to 0, every longer
 * one to the same head as the whole: one check.
 */
static void request_every_split(const char *s, const char *name)
{
        static struct http_request full, part;
        const char *why;
        size_t n = strlen(s);
        int want = req_n(s, n, &full, &why);
        bool pass = want > 0;

        for (size_t p = 0; pass && p <= n; p++) {
                int k = req_n(s, p, &part, &why);
                if (p < (size_t)want)
                        pass = k == 0;
                else
                        pass = k == want && same_request(&full, &part);
                if (!pass)
                        diag("  prefix %zu: got %d (head %d)", p, k, want);
        }
        ok(pass, "split at every byte: %s", name);
}

static void response_every_split(const char *s, const char *name)
{
        struct http_response full, part;
        const char *why;
        size_t n = strlen(s);
        int want = resp_n(s, n, &full, &why);
        bool pass = want > 0;

        for (size_t p = 0; pass && p <= n; p++) {
                int k = resp_n(s, p, &part, &why);
                if (p < (size_t)want)
                        pass = k == 0;
                else
                        pass = k == want && memcmp(&full, &part, sizeof full) == 0;
                if (!pass)
                        diag("  prefix %zu: got %d (head %d)", p, k, want);
        }
        ok(pass, "response split at every byte: %s", name);
}

static void test_absolute_form(void)
{
        static struct http_request r;
        const char *why = NULL;
        const char *s = "GET http://example.com/index.html?q=1&x=%20 HTTP/1.1" CRLF
                        "Host: example.com" CRLF "User-Agent:\tcurl/8 \t" CRLF CRLF;

        is_int(req(s, &r, &why), strlen(s), "absolute form: returns head_len");
        is_int(r.head_len, strlen(s), "... head_len set");
        ok(why == NULL, "... no why on success");
        ok(span_is(s, r.method, "GET") && !r.connect, "... method GET, not CONNECT");
        is_str(r.host, "example.com", "... host");
        is_int(r.port, 80, "... default port 80");
        ok(!r.host_is_ipv6, "... not IPv6");
        ok(span_is(s, r.path, "/index.html?q=1&x=%20"), "... path with query (%% in path is fine)");
        is_int(r.content_length, -1, "... no Content-Length");
        ok(!r.chunked && !r.close, "... not chunked, not close");
        is_int(r.n_headers, 2, "... two headers");
        const struct http_header *ua = http_header_find(&r, s, "user-agent");
        ok(ua && span_is(s, ua->value, "curl/8"), "header_find is case-insensitive; OWS stripped");
        ok(http_header_find(&r, s, "Accept") == NULL, "header_find: absent header is NULL");
        ok(http_header_find(&r, s, "User-Agen") == NULL, "header_find: a prefix does not match");

        s = "GET http://Example.COM:8080 HTTP/1.1" CRLF "host: EXAMPLE.com:8080" CRLF CRLF;
        is_int(req(s, &r, &why), strlen(s), "absolute form with port and no path");
        is_str(r.host, "example.com", "... host lower-cased");
        is_int(r.port, 8080, "... port 8080");
        is_int(r.path.len, 0, "... empty path (len 0: \"/\")");

        s = "DELETE HTTP://a.example.:80/x HTTP/1.1" CRLF "Host: A.example" CRLF CRLF;
        is_int(req(s, &r, &why), strlen(s),
               "scheme case-insensitive; trailing dot and :80 on one side only agree");
        is_str(r.host, "a.example.", "... host returned as written (trailing dot kept)");

        s = "GET http://a.example/ HTTP/1.1" CRLF "Host: a.example.:80" CRLF CRLF;
        is_int(req(s, &r, &why), strlen(s), "Host with trailing dot and :80 agrees with target");

        s = "POST http://api.example/v1 HTTP/1.1" CRLF "Host: api.example" CRLF
            "Content-Length: 5" CRLF "Connection: keep-alive, Close" CRLF CRLF "hello";
        is_int(req(s, &r, &why), strlen(s) - 5, "POST: head_len excludes the body");
        is_int(r.content_length, 5, "... Content-Length 5");
        ok(r.close, "... Connection list containing close");

        s = "POST http://api.example/v1 HTTP/1.1" CRLF "Host: api.example" CRLF
            "Transfer-Encoding: Chunked \t" CRLF CRLF;
        is_int(req(s, &r, &why), strlen(s), "Transfer-Encoding: Chunked (case, OWS) accepted");
        ok(r.chunked && r.content_length == -1, "... chunked, no length");

        s = "GET http://a.example/ HTTP/1.1" CRLF "Host: a.example" CRLF "Content-Length: "
            "000000000000000012" CRLF CRLF;
        is_int(req(s, &r, &why), strlen(s), "Content-Length of 18 digits accepted");
        is_int(r.content_length, 12, "... value 12");

        s = "GET http://a_b-c.example/ HTTP/1.1" CRLF "Host: a_b-c.example" CRLF
            "X-Bin: \x80\xff" CRLF CRLF;
        is_int(req(s, &r, &why), strlen(s), "underscore in host; obs-text in a value");

        s = "GET http://[2001:DB8::1]:8080/x HTTP/1.1" CRLF "Host: [2001:db8::1]:8080" CRLF CRLF;
        is_int(req(s, &r, &why), strlen(s), "IPv6 literal");
        is_str(r.host, "2001:db8::1", "... host without brackets, lower case");
        ok(r.host_is_ipv6 && r.port == 8080, "... host_is_ipv6, port 8080");

        s = "GET http://[::ffff:127.0.0.1]/ HTTP/1.1" CRLF "Host: [::ffff:127.0.0.1]" CRLF CRLF;
        is_int(req(s, &r, &why), strlen(s), "IPv4-mapped IPv6 literal parsed (caller decides)");
        is_str(r.host, "::ffff:127.0.0.1", "... as written");

        s = "GET http://127.0.0.1:8000/ HTTP/1.1" CRLF "Host: 127.0.0.1:8000" CRLF CRLF;
        is_int(req(s, &r, &why), strlen(s), "IPv4 literal");
        is_str(r.host, "127.0.0.1", "... host");
}

static void test_connect(void)
{
        static struct http_request r;
        const char *why = NULL;
        const char *s = "CONNECT example.com:443 HTTP/1.1" CRLF "Host: example.com:443" CRLF
                        "Proxy-Connection: keep-alive" CRLF CRLF;

        is_int(req(s, &r, &why), strlen(s), "CONNECT authority form");
        ok(r.connect && span_is(s, r.method, "CONNECT"), "... connect");
        is_str(r.host, "example.com", "... host");
        is_int(r.port, 443, "... port 443");
        is_int(r.path.len, 0, "... no path");

        s = "CONNECT Example.com:443 HTTP/1.1" CRLF CRLF;
        is_int(req(s, &r, &why), strlen(s), "CONNECT without a Host header");
        s = "CONNECT example.com:443 HTTP/1.1" CRLF "Host: example.com" CRLF CRLF;
        is_int(req(s, &r, &why), strlen(s), "CONNECT with a port-less Host of the same name");
        s = "CONNECT [::1]:443 HTTP/1.1" CRLF "Host: [::1]:443" CRLF CRLF;
        is_int(req(s, &r, &why), strlen(s), "CONNECT to an IPv6 literal");
        ok(r.host_is_ipv6 && !strcmp(r.host, "::1") && r.port == 443, "... ::1 port 443");
        s = "CONNECT a.example:443 HTTP/1.1" CRLF "Content-Length: 0" CRLF CRLF;
        is_int(req(s, &r, &why), strlen(s), "CONNECT with Content-Length: 0 tolerated");

        refused("CONNECT example.com HTTP/1.1" CRLF CRLF, "without a port", "CONNECT without port");
        refused("CONNECT example.com: HTTP/1.1" CRLF CRLF, "bad port", "CONNECT empty port");
        refused("CONNECT http://example.com:443 HTTP/1.1" CRLF CRLF, "not host:port",
                "CONNECT with an absolute URI");
        refused("CONNECT example.com:443/ HTTP/1.1" CRLF CRLF, "not host:port",
                "CONNECT with a path");
        refused("CONNECT allowed.com:443.evil.com HTTP/1.1" CRLF CRLF, "bad port",
                "CONNECT allowed.com:443.evil.com");
        refused("CONNECT allowed.com:443@evil.com:443 HTTP/1.1" CRLF CRLF, "userinfo",
                "CONNECT with userinfo");
        refused("CONNECT ::1:443 HTTP/1.1" CRLF CRLF, "unbracketed IPv6",
                "CONNECT unbracketed IPv6");
        refused("CONNECT a.example:443 HTTP/1.1" CRLF "Host: b.example:443" CRLF CRLF,
                "another host", "CONNECT whose Host names another host");
        refused("CONNECT a.example:443 HTTP/1.1" CRLF "Host: a.example:8443" CRLF CRLF,
                "another port", "CONNECT whose Host names another port");
        refused("CONNECT a.example:443 HTTP/1.1" CRLF "Host: a.example:443" CRLF
                "Host: a.example:443" CRLF CRLF,
                "more than one Host", "CONNECT with two Host headers");
        refused("CONNECT a.example:443 HTTP/1.1" CRLF "Transfer-Encoding: chunked" CRLF CRLF,
                "CONNECT with a request body", "CONNECT with Transfer-Encoding");
        refused("CONNECT a.example:443 HTTP/1.1" CRLF "Content-Length: 5" CRLF CRLF,
                "CONNECT with a request body", "CONNECT with Content-Length 5");
        refused("connect a.example:443 HTTP/1.1" CRLF CRLF, "absolute http://",
                "lower-case connect is another method: needs absolute form");
}

static void test_incomplete_and_limits(void)
{
        static struct http_request r;
        const char *why = NULL;
        static char big[HTTP_HEAD_MAX + 64];

        is_int(req("", &r, &why), 0, "empty input: incomplete");
        is_int(req("GET http://a/ HTTP/1.1" CRLF "Host: a" CRLF, &r, &why), 0,
               "head without its empty line: incomplete");
        is_int(req("GET http://a/ HTTP/1.1" CRLF "Host: a" CRLF "\r", &r, &why), 0,
               "head ending in CR: incomplete");

        request_every_split("GET http://example.com/p?q HTTP/1.1" CRLF "Host: example.com" CRLF
                            "Accept: */*" CRLF CRLF "BODY",
                            "GET with a body after the head");
        request_every_split("CONNECT [2001:db8::2]:443 HTTP/1.1" CRLF
                            "Host: [2001:db8::2]:443" CRLF CRLF,
                            "CONNECT IPv6");
        request_every_split("POST http://x.example:81/ HTTP/1.1" CRLF "Host: x.example:81" CRLF
                            "Transfer-Encoding: chunked" CRLF CRLF "5" CRLF "hello" CRLF,
                            "POST chunked");

        /* a head of exactly HTTP_HEAD_MAX bytes */
        const char *pre = "GET http://a.example/ HTTP/1.1" CRLF "Host: a.example" CRLF "X-Pad: ";
        size_t np = strlen(pre);
        memcpy(big, pre, np);
        memset(big + np, 'p', HTTP_HEAD_MAX - np - 4);
        memcpy(big + HTTP_HEAD_MAX - 4, CRLF CRLF, 4);
        is_int(req_n(big, HTTP_HEAD_MAX, &r, &why), HTTP_HEAD_MAX,
               "a head of exactly HTTP_HEAD_MAX bytes is accepted");
        is_int(req_n(big, HTTP_HEAD_MAX - 1, &r, &why), 0, "... one byte short: incomplete");

        /* one byte more */
        memset(big + np, 'p', HTTP_HEAD_MAX - np - 3);
        memcpy(big + HTTP_HEAD_MAX - 3, CRLF CRLF, 4);
        why = NULL;
        is_int(req_n(big, HTTP_HEAD_MAX + 1, &r, &why), -E2BIG,
               "a head of HTTP_HEAD_MAX + 1 bytes: -E2BIG");
        ok(why && strstr(why, "HTTP_HEAD_MAX"), "... with a why");
        is_int(req_n(big, HTTP_HEAD_MAX, &r, &why), -E2BIG,
               "HTTP_HEAD_MAX bytes without an end: -E2BIG (no need to wait)");
        is_int(req_n(big, HTTP_HEAD_MAX - 1, &r, &why), 0, "HTTP_HEAD_MAX - 1: still incomplete");

        /* HTTP_HEADERS_MAX */
        size_t o = 0;
        o += (size_t)sprintf(big + o, "GET http://a/ HTTP/1.1" CRLF "Host: a" CRLF);
        for (int i = 1; i < HTTP_HEADERS_MAX; i++)
                o += (size_t)sprintf(big + o, "X-%d: %d" CRLF, i, i);
        memcpy(big + o, CRLF, 2);
        is_int(req_n(big, o + 2, &r, &why), o + 2, "exactly HTTP_HEADERS_MAX headers accepted");
        is_int(r.n_headers, HTTP_HEADERS_MAX, "... all recorded");
        o += (size_t)sprintf(big + o, "X-last: 1" CRLF CRLF);
        refused_n(big, o, "HTTP_HEADERS_MAX", "HTTP_HEADERS_MAX + 1 headers");

        /* host length */
        o = (size_t)sprintf(big, "CONNECT ");
        memset(big + o, 'h', HTTP_HOST_MAX);
        o += HTTP_HOST_MAX;
        o += (size_t)sprintf(big + o, ":443 HTTP/1.1" CRLF CRLF);
        is_int(req_n(big, o, &r, &why), o, "a host of HTTP_HOST_MAX bytes accepted");
        is_int(strlen(r.host), HTTP_HOST_MAX, "... whole");
        o = (size_t)sprintf(big, "CONNECT ");
        memset(big + o, 'h', HTTP_HOST_MAX + 1);
        o += HTTP_HOST_MAX + 1;
        o += (size_t)sprintf(big + o, ":443 HTTP/1.1" CRLF CRLF);
        refused_n(big, o, "longer than HTTP_HOST_MAX", "a host of HTTP_HOST_MAX + 1 bytes");
}

static void test_refusals(void)
{
#define HDR(x) "GET http://a.example/ HTTP/1.1" CRLF "Host: a.example" CRLF x CRLF
        /* line endings and bytes */
        refused("GET http://a.example/ HTTP/1.1\nHost: a.example" CRLF CRLF, "bare LF",
                "bare LF after the request line");
        refused(HDR("X: 1\n"), "bare LF", "bare LF ending the head");
        refused("GET http://a.example/ HTTP/1.1\rHost: a.example" CRLF CRLF, "bare CR", "bare CR");
        refused(HDR("X: a\rb" CRLF), "bare CR", "bare CR inside a value");
        refused_n(HDR("X: a\0b" CRLF), sizeof(HDR("X: a\0b" CRLF)) - 1, "NUL", "NUL in a value");
        refused_n("GET http://a.example\0.evil/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF,
                  sizeof("GET http://a.example\0.evil/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF) -
                          1,
                  "NUL", "NUL in the target host");
        refused(HDR("X: a\x01"
                    "b" CRLF),
                "control byte", "control byte in a value");
        refused(HDR("X: a\x7f" CRLF), "control byte", "DEL in a value");
        refused(HDR("X: a\x1b[2J" CRLF), "control byte", "ESC in a value");

        /* header lines */
        refused(HDR("X: 1" CRLF " 2" CRLF), "obs-fold", "obs-fold with SP");
        refused(HDR("X: 1" CRLF "\t2" CRLF), "obs-fold", "obs-fold with HTAB");
        refused("GET http://a.example/ HTTP/1.1" CRLF " Host: a.example" CRLF CRLF, "obs-fold",
                "first header line starting with SP");
        refused(HDR("X(y): 1" CRLF), "not a token", "header name with '('");
        refused(HDR("X\x80: 1" CRLF), "not a token", "header name with obs-text");
        refused(HDR("X-\"q\": 1" CRLF), "not a token", "header name with a quote");
        refused(HDR("X-Foo : 1" CRLF), "whitespace between", "space before the colon");
        refused(HDR("X-Foo\t: 1" CRLF), "whitespace between", "HTAB before the colon");
        refused(HDR(": 1" CRLF), "empty header name", "empty header name");
        refused(HDR("NoColon" CRLF), "without a colon", "header line without a colon");

        /* request line */
        refused("GET http://a.example/ HTTP/1.2" CRLF "Host: a.example" CRLF CRLF,
                "version other than 1.1", "HTTP/1.2 request");
        refused("GET http://a.example/ HTTP/2.0" CRLF "Host: a.example" CRLF CRLF,
                "version other than 1.1", "HTTP/2.0 request");
        refused("GET http://a.example/ http/1.1" CRLF "Host: a.example" CRLF CRLF,
                "malformed request line", "lower-case http/1.1");
        refused("GET http://a.example/ HTTP/1.1 " CRLF "Host: a.example" CRLF CRLF,
                "malformed request line", "space after the version");
        refused("GET http://a.example/" CRLF "Host: a.example" CRLF CRLF, "no HTTP version",
                "HTTP/0.9 style request line");
        refused("GET  http://a.example/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "empty target",
                "two spaces after the method");
        refused("GET\thttp://a.example/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF,
                "malformed request line", "HTAB as separator");
        refused("G(T http://a.example/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF,
                "malformed request line", "method not a token");
        refused(" GET http://a.example/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF,
                "malformed request line", "leading space");
        refused(CRLF "GET http://a.example/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF,
                "malformed request line", "empty line before the request line");
        refused("GET http://a.example/\x80 HTTP/1.1" CRLF "Host: a.example" CRLF CRLF,
                "outside visible ASCII", "non-ASCII byte in the target");

        /* targets */
        refused("GET /index.html HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "origin-form",
                "origin-form target");
        refused("GET https://a.example/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "https://",
                "https:// target");
        refused("GET HTTPS://a.example/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "https://",
                "HTTPS:// target");
        refused("GET ftp://a.example/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF,
                "absolute http://", "ftp:// target");
        refused("OPTIONS * HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "absolute http://",
                "asterisk form");
        refused("GET a.example:80 HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "absolute http://",
                "authority form for GET");
        refused("GET http:/a.example/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF,
                "absolute http://", "http:/ with one slash");
        refused("GET http:///x HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "empty host",
                "empty host");
        refused("GET http://:80/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "empty host",
                "empty host with a port");
        refused("GET http://user@a.example/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "userinfo",
                "userinfo");
        refused("GET http://allowed.com:80@evil.com/ HTTP/1.1" CRLF "Host: allowed.com" CRLF CRLF,
                "userinfo", "allowed.com:80@evil.com");
        refused("GET http://a%2eexample/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF,
                "percent-encoding", "percent-encoding in the host");
        refused("GET http://[fe80::1%25eth0]/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF,
                "percent-encoding", "IPv6 zone id");
        refused("GET http://a.example/#frag HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "fragment",
                "fragment");
        refused("GET http://evil.example#@a.example/ HTTP/1.1" CRLF "Host: evil.example" CRLF CRLF,
                "fragment", "fragment hiding an '@'");
        refused("GET http://a.example?x=1 HTTP/1.1" CRLF "Host: a.example" CRLF CRLF,
                "query without a path", "query without a path");
        refused("GET http://evil.example\\.a.example/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF,
                "bad character", "backslash in the host");
        refused("GET http://a!b.example/ HTTP/1.1" CRLF "Host: a!b.example" CRLF CRLF,
                "bad character", "sub-delim in the host");
        refused("GET http://a..example/ HTTP/1.1" CRLF "Host: a..example" CRLF CRLF, "empty label",
                "empty label");
        refused("GET http://.a.example/ HTTP/1.1" CRLF "Host: .a.example" CRLF CRLF, "empty label",
                "leading dot");
        refused("GET http://a.example../ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "empty label",
                "two trailing dots");
        refused("GET http://./ HTTP/1.1" CRLF "Host: ." CRLF CRLF, "empty label", "host \".\"");
        refused("GET http://a.example:0/ HTTP/1.1" CRLF "Host: a.example:0" CRLF CRLF, "bad port",
                "port 0");
        refused("GET http://a.example:65536/ HTTP/1.1" CRLF "Host: a.example:65536" CRLF CRLF,
                "bad port", "port 65536");
        refused("GET http://a.example:080/ HTTP/1.1" CRLF "Host: a.example:080" CRLF CRLF,
                "bad port", "port with a leading zero");
        refused("GET http://a.example:/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "bad port",
                "empty port");
        refused("GET http://a.example:+80/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "bad port",
                "signed port");
        refused("GET http://::1/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "unbracketed IPv6",
                "unbracketed IPv6");
        refused("GET http://[::1/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "IPv6",
                "unclosed bracket");
        refused("GET http://[::1]x/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF,
                "after IPv6 literal", "bytes after ']'");
        refused("GET http://[v1.x]/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "IPv6",
                "IPvFuture");
        refused("GET http://[1.2.3.4]/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "IPv6",
                "IPv4 in brackets");
        refused("GET http://[1:2:3:4:5:6:7:8:9]/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "IPv6",
                "nine IPv6 groups");
        refused("GET http://[1:2:3:4:5:6:7]/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "IPv6",
                "seven IPv6 groups without ::");
        refused("GET http://[1::2::3]/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "IPv6",
                "two ::");
        refused("GET http://[:::1]/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "IPv6", ":::");
        refused("GET http://[12345::1]/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "IPv6",
                "five hex digits in a group");
        refused("GET http://[::ffff:1.2.3.256]/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "IPv6",
                "IPv4 tail octet 256");
        refused("GET http://[::ffff:1.2.3.04]/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "IPv6",
                "IPv4 tail with a leading zero");
        refused("GET http://[]/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "IPv6",
                "empty brackets");
        refused("GET http://[1::]:8080:1/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF, "bad port",
                "two ports after an IPv6 literal");
#undef HDR
}

static void test_smuggling(void)
{
#define REQ(x) "POST http://a.example/ HTTP/1.1" CRLF "Host: a.example" CRLF x CRLF
        refused(REQ("Content-Length: 5" CRLF "Transfer-Encoding: chunked" CRLF), "both",
                "CL.TE: Content-Length and Transfer-Encoding");
        refused(REQ("Transfer-Encoding: chunked" CRLF "Content-Length: 5" CRLF), "both",
                "TE.CL: Transfer-Encoding then Content-Length");
        refused(REQ("Content-Length: 5" CRLF "Content-Length: 6" CRLF), "two Content-Length",
                "two different Content-Length");
        refused(REQ("Content-Length: 5" CRLF "content-length: 5" CRLF), "two Content-Length",
                "two equal Content-Length");
        refused(REQ("Content-Length: 5, 5" CRLF), "list", "Content-Length list");
        refused(REQ("Content-Length: +5" CRLF), "1..18 digits", "Content-Length +5");
        refused(REQ("Content-Length: -1" CRLF), "1..18 digits", "Content-Length -1");
        refused(REQ("Content-Length: 0x5" CRLF), "1..18 digits", "Content-Length 0x5");
        refused(REQ("Content-Length: 5 5" CRLF), "1..18 digits", "Content-Length '5 5'");
        refused(REQ("Content-Length:" CRLF), "1..18 digits", "empty Content-Length");
        refused(REQ("Content-Length: 1234567890123456789" CRLF), "1..18 digits",
                "Content-Length of 19 digits");
        refused(REQ("Transfer-Encoding: chunked, identity" CRLF), "other than \"chunked\"",
                "TE: chunked, identity");
        refused(REQ("Transfer-Encoding: identity, chunked" CRLF), "other than \"chunked\"",
                "TE: identity, chunked");
        refused(REQ("Transfer-Encoding: gzip" CRLF), "other than \"chunked\"", "TE: gzip");
        refused(REQ("Transfer-Encoding: xchunked" CRLF), "other than \"chunked\"", "TE: xchunked");
        refused(REQ("Transfer-Encoding: chunked;x=1" CRLF), "other than \"chunked\"",
                "TE with a parameter");
        refused(REQ("Transfer-Encoding: \"chunked\"" CRLF), "other than \"chunked\"", "TE quoted");
        refused(REQ("Transfer-Encoding:" CRLF), "other than \"chunked\"", "empty TE");
        refused(REQ("Transfer-Encoding: chunked" CRLF "Transfer-Encoding: chunked" CRLF),
                "two Transfer-Encoding", "two TE headers");
        refused(REQ("Transfer-Encoding : chunked" CRLF), "whitespace between",
                "TE with a space before the colon");
        refused(REQ(" Transfer-Encoding: chunked" CRLF), "obs-fold", "TE with a leading space");
        refused(REQ("Transfer-Encoding:" CRLF " chunked" CRLF), "obs-fold", "TE by obs-fold");
        refused(REQ("Transfer-Encoding: gzip" CRLF "\tchunked" CRLF), "obs-fold",
                "TE continued by obs-fold");
        refused(REQ("Transfer-Encoding: \x0b"
                    "chunked" CRLF),
                "control byte", "TE with a vertical tab");
        refused(REQ("Transfer-Encoding: chunked\n"), "bare LF", "TE line ended by bare LF");
        refused(REQ("Transfer-Encoding\n: chunked" CRLF), "bare LF",
                "bare LF inside a header name");
        refused(REQ("Transfer_Encoding: chunked" CRLF "Content-Length: 5" CRLF "X: y" CRLF
                    "Content-Length: 7" CRLF),
                "two Content-Length", "look-alike name does not hide a second CL");
#undef REQ
}

static void test_host(void)
{
        static struct http_request r;
        const char *why;

        refused("GET http://a.example/ HTTP/1.1" CRLF CRLF, "missing Host", "missing Host");
        refused("GET http://a.example/ HTTP/1.1" CRLF "Host: b.example" CRLF CRLF, "another host",
                "Host names another host");
        refused("GET http://a.example/ HTTP/1.1" CRLF "Host: a.example.evil" CRLF CRLF,
                "another host", "Host extends the target host");
        refused("GET http://a.example/ HTTP/1.1" CRLF "Host: a.example:8080" CRLF CRLF,
                "another port", "Host names another port");
        refused("GET http://a.example:8080/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF,
                "another port", "target port, Host default");
        refused("GET http://a.example/ HTTP/1.1" CRLF "Host: a.example" CRLF
                "Host: a.example" CRLF CRLF,
                "more than one Host", "two equal Host headers");
        refused("GET http://a.example/ HTTP/1.1" CRLF "Host: a.example" CRLF
                "host: b.example" CRLF CRLF,
                "more than one Host", "two differing Host headers");
        refused("GET http://a.example/ HTTP/1.1" CRLF "Host:" CRLF CRLF, "empty Host",
                "empty Host");
        refused("GET http://a.example/ HTTP/1.1" CRLF "Host: u@a.example" CRLF CRLF, "userinfo",
                "userinfo in Host");
        refused("GET http://a.example/ HTTP/1.1" CRLF "Host: a%2eexample" CRLF CRLF,
                "percent-encoding in Host", "percent-encoding in Host");
        refused("GET http://a.example/ HTTP/1.1" CRLF "Host: a.example, b.example" CRLF CRLF,
                "bad character in Host", "a list in Host");
        refused("GET http://a.example/ HTTP/1.1" CRLF "Host: a.example:80:80" CRLF CRLF,
                "stray ':' in Host", "two ports in Host");
        refused("GET http://[::1]/ HTTP/1.1" CRLF "Host: [::0:1]" CRLF CRLF, "another host",
                "IPv6 spelt differently in Host");
        refused("GET http://[::1]/ HTTP/1.1" CRLF "Host: ::1" CRLF CRLF, "unbracketed",
                "unbracketed IPv6 in Host");
        refused("GET http://127.0.0.1/ HTTP/1.1" CRLF "Host: 2130706433" CRLF CRLF, "another host",
                "IPv4 spelt differently in Host");
        const char *s = "GET http://a.example/ HTTP/1.1" CRLF "HOST:\t A.Example. \t" CRLF CRLF;
        is_int(req(s, &r, &why), strlen(s), "Host: name case, OWS and a trailing dot agree");
}

static void test_responses(void)
{
        struct http_response r;
        const char *why = NULL;
        const char *s = "HTTP/1.1 200 OK" CRLF "Content-Length: 12" CRLF CRLF "hello world!";

        is_int(resp(s, &r, &why), strlen(s) - 12, "response 200 with Content-Length");
        ok(r.status == 200 && r.content_length == 12 && !r.chunked && !r.close,
           "... status 200, length 12, keep-alive");
        is_int(r.head_len, strlen(s) - 12, "... head_len");

        s = "HTTP/1.1 404 Not Found" CRLF "Transfer-Encoding: chunked" CRLF
            "Connection: close" CRLF CRLF;
        is_int(resp(s, &r, &why), strlen(s), "response chunked, Connection: close");
        ok(r.status == 404 && r.chunked && r.close && r.content_length == -1,
           "... 404, chunked, close");

        s = "HTTP/1.0 200 OK" CRLF "Content-Length: 3" CRLF CRLF;
        is_int(resp(s, &r, &why), strlen(s), "HTTP/1.0 response accepted");
        ok(r.close && r.content_length == 3, "... implies close");

        s = "HTTP/1.0 200 OK" CRLF CRLF;
        is_int(resp(s, &r, &why), strlen(s), "HTTP/1.0 without length (read to close)");
        ok(r.close && r.content_length == -1, "... close, no length");

        s = "HTTP/1.1 204" CRLF CRLF;
        is_int(resp(s, &r, &why), strlen(s), "status line without a reason phrase");
        is_int(r.status, 204, "... 204");
        s = "HTTP/1.1 200 " CRLF CRLF;
        is_int(resp(s, &r, &why), strlen(s), "empty reason phrase");
        s = "HTTP/1.1 599 Any\treason \x80 at all" CRLF CRLF;
        is_int(resp(s, &r, &why), strlen(s), "any reason phrase (HTAB, obs-text)");
        s = "HTTP/1.1 100 Continue" CRLF CRLF;
        is_int(resp(s, &r, &why), strlen(s), "100 Continue");
        s = "HTTP/1.1 200 OK" CRLF "Content-Length: 7" CRLF "content-length: 7" CRLF CRLF;
        is_int(resp(s, &r, &why), strlen(s), "duplicate equal Content-Length tolerated");
        is_int(r.content_length, 7, "... 7");
        s = "HTTP/1.1 200 OK" CRLF "Content-Length: 7, 7" CRLF CRLF;
        is_int(resp(s, &r, &why), strlen(s), "a list of equal Content-Length tolerated");
        s = "HTTP/1.1 204 No Content" CRLF "Content-Length: 0" CRLF CRLF;
        is_int(resp(s, &r, &why), strlen(s), "204 with Content-Length: 0 tolerated");
        s = "HTTP/1.1 304 Not Modified" CRLF "Content-Length: 100" CRLF CRLF;
        is_int(resp(s, &r, &why), strlen(s), "304 with the representation's Content-Length");
        is_int(resp("HTTP/1.1 200 OK" CRLF "Content-Length: 1" CRLF, &r, &why), 0,
               "incomplete response head");

        response_every_split("HTTP/1.1 200 OK" CRLF "Content-Length: 5" CRLF "Server: x" CRLF CRLF
                             "hello",
                             "200 with a body");
        response_every_split("HTTP/1.0 301 Moved" CRLF "Location: http://b/" CRLF CRLF, "301");

        resp_refused("HTTP/1.1 200 OK" CRLF "Content-Length: 5" CRLF "Content-Length: 6" CRLF CRLF,
                     "differing", "differing duplicate Content-Length");
        resp_refused("HTTP/1.1 200 OK" CRLF "Content-Length: 5, 6" CRLF CRLF, "differing",
                     "differing Content-Length list");
        resp_refused("HTTP/1.1 200 OK" CRLF "Content-Length: 5," CRLF CRLF, "1..18 digits",
                     "Content-Length list with an empty element");
        resp_refused("HTTP/1.1 200 OK" CRLF "Content-Length: x" CRLF CRLF, "1..18 digits",
                     "Content-Length not digits");
        resp_refused("HTTP/1.1 200 OK" CRLF "Content-Length: 5" CRLF
                     "Transfer-Encoding: chunked" CRLF CRLF,
                     "both", "response with CL and TE");
        resp_refused("HTTP/1.1 200 OK" CRLF "Transfer-Encoding: gzip, chunked" CRLF CRLF,
                     "other than \"chunked\"", "response TE gzip, chunked");
        resp_refused("HTTP/1.1 200 OK" CRLF "Transfer-Encoding: chunked" CRLF
                     "Transfer-Encoding: chunked" CRLF CRLF,
                     "two Transfer-Encoding", "response with two TE");
        resp_refused("HTTP/1.0 200 OK" CRLF "Transfer-Encoding: chunked" CRLF CRLF, "HTTP/1.0",
                     "TE in an HTTP/1.0 response");
        resp_refused("HTTP/1.1 204 No Content" CRLF "Content-Length: 5" CRLF CRLF, "204",
                     "204 with a body length");
        resp_refused("HTTP/1.1 101 Switching" CRLF "Transfer-Encoding: chunked" CRLF CRLF, "1xx",
                     "101 with chunked");
        resp_refused("HTTP/1.1 099 Low" CRLF CRLF, "outside 100..599", "status 099");
        resp_refused("HTTP/1.1 600 High" CRLF CRLF, "outside 100..599", "status 600");
        resp_refused("HTTP/1.1 20 Short" CRLF CRLF, "malformed status code", "two-digit status");
        resp_refused("HTTP/1.1 2000 Long" CRLF CRLF, "malformed status code", "four-digit status");
        resp_refused("HTTP/1.1  200 OK" CRLF CRLF, "malformed status code", "two spaces");
        resp_refused("HTTP/2 200" CRLF CRLF, "version", "HTTP/2");
        resp_refused("HTTP/1.2 200 OK" CRLF CRLF, "version", "HTTP/1.2");
        resp_refused("http/1.1 200 OK" CRLF CRLF, "malformed status line", "lower-case http");
        resp_refused("HTTP/1.1 200 OK\nContent-Length: 5" CRLF CRLF, "bare LF",
                     "bare LF in a response");
        resp_refused("HTTP/1.1 200 OK" CRLF "X: 1" CRLF " folded" CRLF CRLF, "obs-fold",
                     "obs-fold in a response");
        resp_refused("HTTP/1.1 200 OK" CRLF "Content-Length : 5" CRLF CRLF, "whitespace between",
                     "space before the colon in a response");
}

/* Feed s[0..n) in pieces of `step` bytes (0: one piece); the number of body bytes or -errno. */
static ssize_t feed_steps(const char *s, size_t n, size_t step, bool *done, const char **why)
{
        struct http_chunked c;
        size_t used = 0;

        http_chunked_init(&c);
        *done = false;
        if (step == 0)
                step = n ? n : 1;
        for (size_t at = 0; at < n || n == 0; at += step) {
                size_t k = n - at < step ? n - at : step;
                char *p = dup_exact(s + at, k);
                ssize_t r = http_chunked_feed(&c, p, k, done, why);
                free(p);
                if (r < 0)
                        return r;
                if ((size_t)r > k)
                        return -ERANGE;
                used += (size_t)r;
                if (*done || n == 0)
                        break;
                if ((size_t)r != k)
                        return -EPROTO; /* short without done */
        }
        return (ssize_t)used;
}

static void chunked_ok(const char *s, size_t body, const char *name)
{
        size_t n = strlen(s);
        bool pass = true;
        const char *why = NULL;

        for (size_t step = 0; step <= 3 && pass; step++) {
                bool done;
                ssize_t r = feed_steps(s, n, step, &done, &why);
                pass = r == (ssize_t)body && done;
                if (!pass)
                        diag("  step %zu: got %zd done %d why '%s'", step, r, done,
                             why ? why : "(null)");
        }
        /* in two pieces, split at every position */
        for (size_t cut = 0; cut <= n && pass; cut++) {
                struct http_chunked c;
                bool done = false;
                http_chunked_init(&c);
                ssize_t a = http_chunked_feed(&c, s, cut, &done, &why);
                ssize_t b = done ? 0 : http_chunked_feed(&c, s + cut, n - cut, &done, &why);
                pass = a >= 0 && b >= 0 && (size_t)(a + b) == body && done;
                if (!pass)
                        diag("  cut %zu: got %zd + %zd", cut, a, b);
        }
        ok(pass, "chunked: %s", name);
}

static void chunked_refused(const char *s, size_t n, const char *want, const char *name)
{
        bool pass = true;

        for (size_t step = 0; step <= 1 && pass; step++) {
                bool done;
                const char *why = NULL;
                ssize_t r = feed_steps(s, n, step, &done, &why);
                pass = r == -EBADMSG && why && strstr(why, want);
                if (!pass)
                        diag("  step %zu: got %zd, why '%s' (want '%s')", step, r,
                             why ? why : "(null)", want);
        }
        ok(pass, "chunked refused: %s", name);
}

static void chunked_refused_str(const char *s, const char *want, const char *name)
{
        chunked_refused(s, strlen(s), want, name);
}

static void test_chunked(void)
{
        struct http_chunked c;
        bool done = true;
        const char *why = NULL;
        const char *body = "5;ext=1;name=\"q v\"" CRLF "hello" CRLF "A" CRLF "0123456789" CRLF
                           "0" CRLF "Trailer-One: x" CRLF "T2:" CRLF CRLF;

        chunked_ok(body, strlen(body), "extensions and trailers, every split");
        chunked_ok("0" CRLF CRLF, 5, "only the last-chunk");
        chunked_ok("0;final" CRLF CRLF, 11, "last-chunk with an extension");
        chunked_ok("000" CRLF CRLF, 7, "last-chunk written 000");
        chunked_ok("3 ;x" CRLF "abc" CRLF "0" CRLF CRLF, 16, "BWS before ';'");
        chunked_ok("a" CRLF "0123456789" CRLF "0" CRLF CRLF, 20, "lower-case hex size");
        chunked_ok("2" CRLF "\r\n" CRLF "0" CRLF CRLF, 12, "CRLF bytes as chunk data");

        http_chunked_init(&c);
        size_t n = strlen(body);
        char buf[256];
        memcpy(buf, body, n);
        memcpy(buf + n, "GET next", 8);
        is_int(http_chunked_feed(&c, buf, n + 8, &done, &why), n,
               "one piece with bytes after the body: stops at the body's end");
        ok(done, "... done");
        is_int(http_chunked_feed(&c, "more", 4, &done, &why), 0, "feed after done: 0 bytes");
        ok(done, "... still done");

        http_chunked_init(&c);
        is_int(http_chunked_feed(&c, "", 0, &done, &why), 0, "empty feed: 0");
        ok(!done, "... not done");

        http_chunked_init(&c);
        is_int(http_chunked_feed(&c, "ffffffffffffffff" CRLF "abc", 21, &done, &why), 21,
               "16 hex digits accepted");
        ok(!done && c.left == UINT64_MAX - 3, "... 2^64-1 bytes to come, 3 seen");

        chunked_refused_str("11111111111111111" CRLF, "16 hex digits", "17 hex digits");
        chunked_refused_str("00000000000000000" CRLF, "16 hex digits", "17 zero digits");
        chunked_refused_str("x" CRLF, "not a hex number", "non-hex size");
        chunked_refused_str(CRLF, "not a hex number", "empty size");
        chunked_refused_str(" 5" CRLF, "not a hex number", "space before the size");
        chunked_refused_str("-5" CRLF, "not a hex number", "negative size");
        chunked_refused_str("0x5" CRLF, "after chunk size", "0x prefix");
        chunked_refused_str("5 " CRLF, "after chunk size", "space after the size");
        chunked_refused_str("5 5" CRLF, "after chunk size", "two numbers");
        chunked_refused_str(";x" CRLF, "not a hex number", "extension without size");
        chunked_refused_str("5\n", "bare LF", "size line with bare LF");
        chunked_refused_str("5;a\n", "bare LF", "extension with bare LF");
        chunked_refused_str("5\rx", "bare CR", "size line with bare CR");
        chunked_refused_str("5;a\x01" CRLF, "control byte", "control in extension");
        chunked_refused("5;a\0" CRLF, sizeof("5;a\0" CRLF) - 1, "control byte", "NUL in extension");
        chunked_refused_str("5" CRLF "helloX", "not followed by CRLF", "data longer than its size");
        chunked_refused_str("5" CRLF "hello\n", "bare LF", "data ended by bare LF");
        chunked_refused_str("5" CRLF "hello\rX", "not followed by CRLF",
                            "data ended by CR without LF");
        chunked_refused_str("0" CRLF " folded" CRLF CRLF, "obs-fold", "trailer obs-fold");
        chunked_refused_str("0" CRLF "Bad name: x" CRLF CRLF, "not a token",
                            "trailer name with a space");
        chunked_refused_str("0" CRLF "NoColon" CRLF CRLF, "not a token",
                            "trailer line without a colon");
        chunked_refused_str("0" CRLF ": x" CRLF CRLF, "does not start with a name",
                            "trailer with an empty name");
        chunked_refused_str("0" CRLF "T: x\n", "bare LF", "trailer with bare LF");
        chunked_refused_str("0" CRLF "T: \x7f" CRLF, "control byte", "trailer with DEL");
        chunked_refused_str("0" CRLF "\rX", "bare CR", "final line with bare CR");
        chunked_refused_str("0\n\n", "bare LF", "last-chunk with bare LFs");

        static char longline[HTTP_HEAD_MAX + 16];
        longline[0] = '5';
        longline[1] = ';';
        memset(longline + 2, 'e', HTTP_HEAD_MAX);
        chunked_refused(longline, HTTP_HEAD_MAX + 2, "too long", "extension over HTTP_HEAD_MAX");
        memcpy(longline, "0" CRLF "T:", 5);
        memset(longline + 5, 'v', HTTP_HEAD_MAX);
        chunked_refused(longline, HTTP_HEAD_MAX + 5, "too long", "trailer over HTTP_HEAD_MAX");

        http_chunked_init(&c);
        ok(http_chunked_feed(&c, "z", 1, &done, &why) == -EBADMSG, "an error ...");
        why = NULL;
        ok(http_chunked_feed(&c, "0" CRLF CRLF, 5, &done, &why) == -EBADMSG && why,
           "... is sticky: later feeds are refused too");
}

/*
 * HTTP/1.0 (issue 13): Python <= 3.11 (urllib, requests, pip) and socat's
 * PROXY: send "CONNECT host:port HTTP/1.0"; old clients send absolute-form
 * 1.0 requests without Host. Both are read; the 1.0-specific refusals hold.
 */
static void test_http10(void)
{
        static struct http_request r;
        const char *why = NULL;
        const char *s = "CONNECT pkgs.example:443 HTTP/1.0" CRLF CRLF;

        is_int(req(s, &r, &why), strlen(s), "HTTP/1.0 CONNECT (Python 3.11 urllib's exact bytes)");
        ok(r.connect && r.http10 && r.close, "... connect, http10, close");
        is_str(r.host, "pkgs.example", "... host");
        is_int(r.port, 443, "... port");
        request_every_split(s, "HTTP/1.0 CONNECT");

        s = "CONNECT db.example:5432 HTTP/1.0" CRLF "Host: db.example:5432" CRLF CRLF;
        is_int(req(s, &r, &why), strlen(s), "HTTP/1.0 CONNECT with a Host (socat PROXY:)");
        is_int(r.port, 5432, "... port 5432");

        s = "GET http://a.example:8080/x?y HTTP/1.0" CRLF "User-Agent: old" CRLF CRLF;
        is_int(req(s, &r, &why), strlen(s), "HTTP/1.0 absolute form without Host");
        ok(!r.connect && r.http10 && r.close, "... http10, close (one request per connection)");
        is_str(r.host, "a.example", "... host from the target");
        is_int(r.port, 8080, "... port from the target");
        ok(span_is(s, r.path, "/x?y"), "... path");
        request_every_split(s, "HTTP/1.0 absolute form");

        s = "GET http://a.example/ HTTP/1.0" CRLF "Host: a.example" CRLF
            "Connection: keep-alive" CRLF CRLF;
        is_int(req(s, &r, &why), strlen(s), "HTTP/1.0 with a matching Host and keep-alive");
        ok(r.close, "... still one request per connection");

        s = "GET http://a.example/ HTTP/1.1" CRLF "Host: a.example" CRLF CRLF;
        is_int(req(s, &r, &why), strlen(s), "control: HTTP/1.1");
        ok(!r.http10 && !r.close, "... not http10, keep-alive");

        refused("GET http://a.example/ HTTP/1.0" CRLF "Host: b.example" CRLF CRLF, "another host",
                "HTTP/1.0 whose Host names another host");
        refused("GET http://a.example/ HTTP/1.1" CRLF CRLF, "missing Host",
                "HTTP/1.1 without Host (control: only 1.0 may omit it)");
        refused("POST http://a.example/ HTTP/1.0" CRLF "Transfer-Encoding: chunked" CRLF CRLF,
                "Transfer-Encoding in an HTTP/1.0", "HTTP/1.0 with Transfer-Encoding");
        refused("CONNECT a.example:443 HTTP/1.0" CRLF "Content-Length: 5" CRLF CRLF,
                "CONNECT with a request body", "HTTP/1.0 CONNECT with a body");
        refused("CONNECT a.example HTTP/1.0" CRLF CRLF, "without a port",
                "HTTP/1.0 CONNECT without a port");
        refused("GET http://a.example/ HTTP/1.00" CRLF CRLF, "version other than 1.1", "HTTP/1.00");
        refused("GET http://a.example/ http/1.0" CRLF CRLF, "malformed request line",
                "lower-case http/1.0");

        /* the daemon's local API stays HTTP/1.1 only */
        s = "GET /v1/runs HTTP/1.0" CRLF CRLF;
        int k = http_origin_request_parse(s, strlen(s), &r, &why);
        ok(k == -EBADMSG && why && strstr(why, "HTTP/1.0"), "origin form (local API): 1.0 refused");
        s = "GET /v1/runs HTTP/1.1" CRLF CRLF;
        is_int(http_origin_request_parse(s, strlen(s), &r, &why), strlen(s),
               "control: origin form 1.1 read");
}

static bool ws(const char *s)
{
        struct http_request r;
        const char *why = NULL;
        if (http_request_parse(s, strlen(s), &r, &why) <= 0)
                return false;
        return http_request_websocket(&r, s);
}

static void test_websocket(void)
{
        ok(ws("GET http://a.example/ws HTTP/1.1" CRLF "Host: a.example" CRLF
              "Upgrade: websocket" CRLF "Connection: Upgrade" CRLF CRLF),
           "WebSocket: Upgrade: websocket + Connection: Upgrade");
        ok(ws("GET http://a.example/ws HTTP/1.1" CRLF "Host: a.example" CRLF
              "upgrade: WebSocket" CRLF "connection: keep-alive, upgrade" CRLF CRLF),
           "... any case, upgrade among other Connection tokens");
        ok(!ws("GET http://a.example/ws HTTP/1.1" CRLF "Host: a.example" CRLF
               "Upgrade: websocket" CRLF CRLF),
           "not without Connection: upgrade");
        ok(!ws("GET http://a.example/ws HTTP/1.1" CRLF "Host: a.example" CRLF
               "Connection: upgrade" CRLF CRLF),
           "not without Upgrade");
        ok(!ws("GET http://a.example/ws HTTP/1.1" CRLF "Host: a.example" CRLF "Upgrade: h2c" CRLF
               "Connection: upgrade" CRLF CRLF),
           "not another protocol (h2c)");
        ok(!ws("GET http://a.example/ws HTTP/1.1" CRLF "Host: a.example" CRLF
               "Upgrade: websocket, h2c" CRLF "Connection: upgrade" CRLF CRLF),
           "not a list of protocols");
        ok(!ws("GET http://a.example/ws HTTP/1.1" CRLF "Host: a.example" CRLF
               "Upgrade: websocket" CRLF "Upgrade: websocket" CRLF "Connection: upgrade" CRLF CRLF),
           "not two Upgrade headers");
        ok(!ws("GET http://a.example/ws HTTP/1.0" CRLF "Host: a.example" CRLF
               "Upgrade: websocket" CRLF "Connection: upgrade" CRLF CRLF),
           "not HTTP/1.0");
        ok(!ws("GET http://a.example/ws HTTP/1.1" CRLF "Host: a.example" CRLF
               "Upgrade: websocket" CRLF "Connection: upgraded" CRLF CRLF),
           "a token, not a prefix (upgraded)");
}

static void test_ws_frames(void)
{
        struct ws_frames w;
        uint8_t map[8] = {0};
        const char *why = NULL;
        /* a 3-byte text frame, a 126-length frame header, cut anywhere */
        uint8_t s[2 + 3 + 4 + 126];
        s[0] = 0x81, s[1] = 3, s[2] = 'a', s[3] = 'b', s[4] = 'c';
        s[5] = 0x82, s[6] = 126, s[7] = 0, s[8] = 126;
        memset(s + 9, 'x', 126);
        ws_frames_init(&w);
        is_int((int)ws_frames_feed(&w, s, 7, map, 0, &why), 7, "WebSocket frames: read");
        is_int((int)ws_frames_feed(&w, s + 7, sizeof s - 7, map, 7, &why), (int)sizeof s - 7,
               "... in two parts");
        ok(map[0] == 0xe3 && map[1] == 0x01 && w.left == 0 && w.have == 0,
           "... header bytes marked (0,1 and 5..8), payload not (%02x %02x)", map[0], map[1]);
        uint8_t rsv[] = {0xc1, 1, 'x'};
        ws_frames_init(&w);
        ok(ws_frames_feed(&w, rsv, 3, map, 0, &why) == -EBADMSG && strstr(why, "RSV"),
           "a frame with RSV1 (permessage-deflate): refused");
        uint8_t masked[] = {0x81, 0x81, 1, 2, 3, 4, 'x'};
        ws_frames_init(&w);
        ok(ws_frames_feed(&w, masked, sizeof masked, map, 0, &why) == -EBADMSG &&
                   strstr(why, "masked"),
           "a masked server frame: refused");
        uint8_t huge[] = {0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 0};
        ws_frames_init(&w);
        ok(ws_frames_feed(&w, huge, sizeof huge, map, 0, &why) == -EBADMSG,
           "a 64-bit length with the top bit: refused");
}

int main(void)
{
        test_ws_frames();
        test_websocket();
        test_absolute_form();
        test_connect();
        test_http10();
        test_incomplete_and_limits();
        test_refusals();
        test_smuggling();
        test_host();
        test_responses();
        test_chunked();
        return done();
}
