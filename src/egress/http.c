/*
 * http.c — HTTP/1.1 request and response heads, and chunked body framing,
 * for the egress proxy. See http.h for the contract.
 *
 * Design. A head is parsed in two passes over the caller's buffer, never
 * copied and never allocated:
 *
 *   1. head_scan() walks at most HTTP_HEAD_MAX bytes looking for the
 *      CRLFCRLF that ends the head. On the way it refuses every byte that
 *      could make two HTTP implementations split the head differently: a
 *      LF not preceded by CR, a CR not followed by LF, NUL and the other
 *      control bytes (HTAB is let through here and refused later wherever
 *      it is not allowed: the request line, header names). Because each of
 *      these refusals depends only on bytes already seen, a prefix of a
 *      valid head always returns 0, and once a head is found the bytes
 *      after it cannot change the result.
 *   2. With the head known to be CRLF-clean, the lines are split at CR
 *      and parsed: the start line, then "name: value" lines, then the
 *      rules that look across headers (Content-Length vs
 *      Transfer-Encoding, Host vs the request target).
 *
 * Chunked framing is a table-driven state machine (chunk_table: state ×
 * byte class → action, next state) fed incrementally; chunk data is
 * skipped in bulk. Its only memory is struct http_chunked, so a body can
 * be framed across any number of reads.
 *
 * Threat notes. The proxy decides from the request-target host, and the
 * upstream server (or a second proxy) may read the message differently:
 * request smuggling (CL.TE, TE.CL, TE.TE), Host/target disagreement and
 * authority tricks (userinfo, percent-encoding, "allowed:443.evil",
 * unbracketed IPv6) are all refused, not repaired. Every refusal carries a
 * static `why` phrase for the audit log. Choices where http.h leaves room:
 *
 *   - Target "http://host?query" (query but no path) is refused: the
 *     contract's path span starts at '/', and rewriting it is not ours.
 *   - A fragment ('#') in a request target is refused (not absolute-URI).
 *   - Host characters: [A-Za-z0-9._-] only, no empty label (one trailing
 *     dot allowed); ports 1..65535, decimal, no leading zero, not empty.
 *     IPv6 literals are checked against the RFC 4291 text grammar.
 *   - HTTP/1.0 requests (Python <= 3.11 and socat send CONNECT as 1.0)
 *     are read with the same rules, except that a Host header is optional
 *     (the absolute target names the host; one that is present must
 *     agree), Transfer-Encoding is refused (1.0 has no chunked framing:
 *     RFC 9112 6.1) and `close` is set (one request per connection). The
 *     local API (origin form) still takes HTTP/1.1 only.
 *   - CONNECT: a Host header is optional; if present it must name the same
 *     host, and its port, if it has one, the same port (clients differ on
 *     whether they write ":443"). Transfer-Encoding or a non-zero
 *     Content-Length on CONNECT is refused (CONNECT has no content).
 *   - Responses: equal duplicate Content-Length values (as separate
 *     headers or as a list) are accepted; Transfer-Encoding must be
 *     exactly "chunked", never with Content-Length, never in an HTTP/1.0
 *     response; 1xx and 204 responses may not carry a body length
 *     (Content-Length: 0 tolerated). HTTP/1.0 responses set `close`. The
 *     caller still applies the no-body rules (HEAD, 304, 2xx to CONNECT).
 *   - The chunked trailer is checked as "token ':' value" lines; BWS is
 *     accepted before a chunk extension's ';' but nowhere else in the
 *     size line.
 *
 * Pure: no syscalls, no allocation, no state outside the caller's structs.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "shared/macro.h"
#include "egress/http.h"

#define CHUNK_DIGITS_MAX 16 /* hex digits of a chunk size: 64 bits */
#define CL_DIGITS_MAX    18 /* decimal digits of Content-Length: fits int64 */

static int fail(const char **why, const char *msg)
{
        if (why)
                *why = msg;
        return -EBADMSG;
}

/* ---- byte classes (ASCII only: no locale) ---- */

static bool is_digit(unsigned char c)
{
        return c >= '0' && c <= '9';
}

static bool is_alpha(unsigned char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* RFC 9110 tchar */
static bool is_tchar(unsigned char c)
{
        return is_digit(c) || is_alpha(c) || (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static bool is_ws(unsigned char c)
{
        return c == ' ' || c == '\t';
}

static bool is_ctl(unsigned char c)
{
        return c < 0x20 || c == 0x7f;
}

static char to_lower(char c)
{
        return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* buf[s] equals the NUL-terminated `lit`, ignoring ASCII case. */
static bool span_ieq(const char *buf, struct http_span s, const char *lit)
{
        size_t n = strlen(lit);

        if (s.len != n)
                return false;
        for (size_t i = 0; i < n; i++)
                if (to_lower(buf[s.off + i]) != to_lower(lit[i]))
                        return false;
        return true;
}

static bool prefix_ieq(const char *p, size_t n, const char *lit)
{
        size_t k = strlen(lit);

        if (n < k)
                return false;
        for (size_t i = 0; i < k; i++)
                if (to_lower(p[i]) != to_lower(lit[i]))
                        return false;
        return true;
}

/* ---- pass 1: find the head, refusing ambiguous line endings ---- */

/*
 * 1 with *head_len when the head ends within the first HTTP_HEAD_MAX bytes,
 * 0 if it may still end, -E2BIG if it cannot, -EBADMSG for a bad byte.
 */
static int head_scan(const char *buf, size_t len, size_t *head_len, const char **why)
{
        size_t n = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;

        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)buf[i];

                if (c == '\n') {
                        if (i == 0 || buf[i - 1] != '\r')
                                return fail(why, "bare LF in head");
                        if (i >= 3 && buf[i - 2] == '\n') { /* buf[i - 3] is CR, checked */
                                *head_len = i + 1;
                                return 1;
                        }
                } else if (c == '\r') {
                        if (i + 1 < n && buf[i + 1] != '\n')
                                return fail(why, "bare CR in head");
                } else if (c == 0) {
                        return fail(why, "NUL byte in head");
                } else if (c != '\t' && is_ctl(c)) {
                        return fail(why, "control byte in head");
                }
        }
        if (len >= HTTP_HEAD_MAX) {
                if (why)
                        *why = "head longer than HTTP_HEAD_MAX bytes";
                return -E2BIG;
        }
        return 0;
}

/* The CR ending the line that starts at pos (the head is CRLF-clean). */
static size_t line_end(const char *buf, size_t head_len, size_t pos)
{
        const char *cr = memchr(buf + pos, '\r', head_len - pos);

        return (size_t)(cr - buf);
}

/* ---- pass 2: header lines ---- */

static int parse_field(const char *buf, size_t off, size_t eol, struct http_header *h,
                       const char **why)
{
        size_t i = off;

        /*
         * A continuation line (obs-fold) is refused, and reported on the line
         * it continues: "TE: x" + " chunked" is a fold, not a bad TE value.
         * buf[eol + 2] exists: the head ends with an empty line.
         */
        if (is_ws((unsigned char)buf[off]) || is_ws((unsigned char)buf[eol + 2]))
                return fail(why, "obs-fold: header line starts with whitespace");
        while (i < eol && is_tchar((unsigned char)buf[i]))
                i++;
        if (i == eol)
                return fail(why, "header line without a colon");
        if (is_ws((unsigned char)buf[i]))
                return fail(why, "whitespace between header name and colon");
        if (buf[i] != ':')
                return fail(why, "header name is not a token");
        if (i == off)
                return fail(why, "empty header name");
        h->name = (struct http_span){off, i - off};

        /* value: OWS stripped; bytes already screened (HTAB, SP, VCHAR, obs-text) */
        i++;
        while (i < eol && is_ws((unsigned char)buf[i]))
                i++;
        size_t e = eol;
        while (e > i && is_ws((unsigned char)buf[e - 1]))
                e--;
        h->value = (struct http_span){i, e - i};
        return 0;
}

/* Content-Length value: 1..18 digits, nothing else. */
static int parse_cl_digits(const char *p, size_t n, int64_t *out)
{
        int64_t v = 0;

        if (n == 0 || n > CL_DIGITS_MAX)
                return -1;
        for (size_t i = 0; i < n; i++) {
                if (!is_digit((unsigned char)p[i]))
                        return -1;
                v = v * 10 + (p[i] - '0');
        }
        *out = v;
        return 0;
}

/* Does the comma-separated list in buf[v] contain `token` (case-insensitive)? */
static bool list_has(const char *buf, struct http_span v, const char *token)
{
        size_t i = v.off, end = v.off + v.len;

        while (i <= end) {
                size_t j = i;
                while (j < end && buf[j] != ',')
                        j++;
                size_t a = i, b = j;
                while (a < b && is_ws((unsigned char)buf[a]))
                        a++;
                while (b > a && is_ws((unsigned char)buf[b - 1]))
                        b--;
                if (span_ieq(buf, (struct http_span){a, b - a}, token))
                        return true;
                i = j + 1;
        }
        return false;
}

/* ---- authorities: "host[:port]" ---- */

enum auth_err {
        AE_OK,
        AE_EMPTY,
        AE_USERINFO,
        AE_PERCENT,
        AE_V6,
        AE_AFTER_V6,
        AE_COLONS,
        AE_HOST_CHAR,
        AE_LABEL,
        AE_TOO_LONG,
        AE_PORT,
        AE_NO_PORT,
        _AE_MAX,
};

static const char *const target_why[_AE_MAX] = {
        [AE_EMPTY] = "empty host in request target",
        [AE_USERINFO] = "userinfo ('@') in request target",
        [AE_PERCENT] = "percent-encoding in request target host",
        [AE_V6] = "malformed IPv6 literal in request target",
        [AE_AFTER_V6] = "bytes after IPv6 literal in request target",
        [AE_COLONS] = "unbracketed IPv6 or stray ':' in request target",
        [AE_HOST_CHAR] = "bad character in request target host",
        [AE_LABEL] = "empty label in request target host",
        [AE_TOO_LONG] = "request target host longer than HTTP_HOST_MAX",
        [AE_PORT] = "bad port in request target",
        [AE_NO_PORT] = "CONNECT target without a port",
};

static const char *const host_why[_AE_MAX] = {
        [AE_EMPTY] = "empty Host header",
        [AE_USERINFO] = "userinfo ('@') in Host header",
        [AE_PERCENT] = "percent-encoding in Host header",
        [AE_V6] = "malformed IPv6 literal in Host header",
        [AE_AFTER_V6] = "bytes after IPv6 literal in Host header",
        [AE_COLONS] = "unbracketed IPv6 or stray ':' in Host header",
        [AE_HOST_CHAR] = "bad character in Host header",
        [AE_LABEL] = "empty label in Host header",
        [AE_TOO_LONG] = "Host header longer than HTTP_HOST_MAX",
        [AE_PORT] = "bad port in Host header",
        [AE_NO_PORT] = "Host header without a port",
};

struct authority {
        char host[HTTP_HOST_MAX + 1]; /* lower case, IPv6 without brackets */
        bool v6;
        bool has_port;
        uint16_t port; /* 80 if !has_port */
};

/* Dotted-quad IPv4 (no leading zeros), the tail of an IPv6 literal. */
static bool valid_ipv4(const char *s, size_t n)
{
        size_t i = 0;

        for (int octet = 0; octet < 4; octet++) {
                if (octet > 0) {
                        if (i >= n || s[i] != '.')
                                return false;
                        i++;
                }
                size_t d0 = i;
                unsigned v = 0;
                while (i < n && is_digit((unsigned char)s[i]) && i - d0 < 3)
                        v = v * 10 + (unsigned)(s[i++] - '0');
                if (i == d0 || v > 255 || (i - d0 > 1 && s[d0] == '0'))
                        return false;
        }
        return i == n;
}

/* RFC 4291 §2.2 text form: 8 groups of 1..4 hex, one "::", optional IPv4 tail. */
static bool valid_ipv6(const char *s, size_t n)
{
        size_t i = 0;
        unsigned groups = 0;
        bool elided = false;

        if (n >= 2 && s[0] == ':' && s[1] == ':') {
                elided = true;
                i = 2;
        } else if (n == 0 || s[0] == ':') {
                return false;
        }
        while (i < n) {
                size_t g0 = i;
                while (i < n && hex_digit_value((unsigned char)s[i]) >= 0)
                        i++;
                if (i < n && s[i] == '.') {
                        if (!valid_ipv4(s + g0, n - g0))
                                return false;
                        groups += 2;
                        break;
                }
                if (i == g0 || i - g0 > 4)
                        return false;
                groups++;
                if (i == n)
                        break;
                if (s[i] != ':')
                        return false;
                i++;
                if (i < n && s[i] == ':') {
                        if (elided)
                                return false;
                        elided = true;
                        i++;
                } else if (i == n) {
                        return false; /* one trailing ':' */
                }
        }
        return elided ? groups <= 7 : groups == 8;
}

/* "1".."65535", decimal, no sign, no leading zero. */
static bool parse_port(const char *p, size_t n, uint16_t *port)
{
        unsigned v = 0;

        if (n == 0 || n > 5 || p[0] == '0')
                return false;
        for (size_t i = 0; i < n; i++) {
                if (!is_digit((unsigned char)p[i]))
                        return false;
                v = v * 10 + (unsigned)(p[i] - '0');
        }
        if (v > 65535)
                return false;
        *port = (uint16_t)v;
        return true;
}

static enum auth_err parse_authority(const char *s, size_t n, bool port_required,
                                     struct authority *a)
{
        size_t h0, h1, rest; /* host is s[h0..h1); rest: ':' or n */

        memset(a, 0, sizeof *a);
        if (n == 0)
                return AE_EMPTY;
        if (memchr(s, '@', n))
                return AE_USERINFO;
        if (memchr(s, '%', n))
                return AE_PERCENT;

        if (s[0] == '[') {
                const char *close = memchr(s, ']', n);
                if (!close)
                        return AE_V6;
                h0 = 1;
                h1 = (size_t)(close - s);
                if (!valid_ipv6(s + h0, h1 - h0))
                        return AE_V6;
                rest = h1 + 1;
                if (rest < n && s[rest] != ':')
                        return AE_AFTER_V6;
                a->v6 = true;
        } else {
                const char *colon = memchr(s, ':', n);
                h0 = 0;
                h1 = colon ? (size_t)(colon - s) : n;
                if (colon && memchr(colon + 1, ':', n - h1 - 1))
                        return AE_COLONS;
                if (h1 == 0)
                        return AE_EMPTY;
                for (size_t i = 0; i < h1; i++) {
                        unsigned char c = (unsigned char)s[i];
                        if (!is_alpha(c) && !is_digit(c) && c != '-' && c != '_' && c != '.')
                                return AE_HOST_CHAR;
                        /* no empty label; one trailing dot is allowed (but not "." alone) */
                        if (c == '.' && (i == 0 || s[i - 1] == '.'))
                                return AE_LABEL;
                }
                rest = h1;
        }
        if (h1 - h0 > HTTP_HOST_MAX)
                return AE_TOO_LONG;
        for (size_t i = h0; i < h1; i++)
                a->host[i - h0] = to_lower(s[i]);
        a->host[h1 - h0] = '\0';

        a->port = 80;
        if (rest < n) { /* s[rest] == ':' */
                if (!parse_port(s + rest + 1, n - rest - 1, &a->port))
                        return AE_PORT;
                a->has_port = true;
        } else if (port_required) {
                return AE_NO_PORT;
        }
        return AE_OK;
}

/* Host names equal after stripping one trailing dot from each (names only). */
static bool host_eq(const char *x, bool x6, const char *y, bool y6)
{
        size_t nx = strlen(x), ny = strlen(y);

        if (x6 != y6)
                return false;
        if (!x6 && nx > 0 && x[nx - 1] == '.')
                nx--;
        if (!y6 && ny > 0 && y[ny - 1] == '.')
                ny--;
        return nx == ny && memcmp(x, y, nx) == 0;
}

/* ---- requests ---- */

static int parse_request_line(const char *buf, size_t eol, struct http_request *r, size_t *t0,
                              size_t *t1, const char **why)
{
        size_t i = 0;

        while (i < eol && is_tchar((unsigned char)buf[i]))
                i++;
        if (i == 0 || i == eol || buf[i] != ' ')
                return fail(why, "malformed request line (method)");
        r->method = (struct http_span){0, i};
        r->connect = i == 7 && memcmp(buf, "CONNECT", 7) == 0;

        *t0 = ++i;
        while (i < eol && buf[i] != ' ') {
                unsigned char c = (unsigned char)buf[i];
                if (c <= 0x20 || c >= 0x7f)
                        return fail(why, "request target has a byte outside visible ASCII");
                i++;
        }
        if (i == *t0)
                return fail(why, "malformed request line (empty target)");
        if (i == eol)
                return fail(why, "malformed request line (no HTTP version)");
        *t1 = i++;

        const char *v = buf + i;
        size_t vn = eol - i;
        if (vn == 8 && memcmp(v, "HTTP/1.1", 8) == 0)
                return 0;
        if (vn == 8 && memcmp(v, "HTTP/1.0", 8) == 0) {
                r->http10 = true; /* the caller decides whether it serves 1.0 */
                return 0;
        }
        if (vn >= 5 && memcmp(v, "HTTP/", 5) == 0 && !memchr(v, ' ', vn))
                return fail(why, "HTTP version other than 1.1 or 1.0");
        return fail(why, "malformed request line (version)");
}

static int parse_target(const char *buf, size_t t0, size_t t1, struct http_request *r,
                        const char **why)
{
        const char *t = buf + t0;
        size_t n = t1 - t0;
        struct authority a;
        enum auth_err e;

        if (r->connect) {
                if (memchr(t, '/', n))
                        return fail(why, "CONNECT target is not host:port");
                e = parse_authority(t, n, true, &a);
                if (e != AE_OK)
                        return fail(why, target_why[e]);
                r->path = (struct http_span){0, 0};
        } else {
                if (t[0] == '/')
                        return fail(why, "origin-form target refused (a proxy needs http://)");
                if (prefix_ieq(t, n, "https://"))
                        return fail(why, "https:// target refused (TLS goes through CONNECT)");
                if (!prefix_ieq(t, n, "http://"))
                        return fail(why, "request target is not an absolute http:// URI");
                size_t a0 = 7, a1 = 7;
                while (a1 < n && t[a1] != '/' && t[a1] != '?' && t[a1] != '#')
                        a1++;
                e = parse_authority(t + a0, a1 - a0, false, &a);
                if (e != AE_OK)
                        return fail(why, target_why[e]);
                if (memchr(t + a1, '#', n - a1))
                        return fail(why, "fragment in request target");
                if (a1 < n && t[a1] == '?')
                        return fail(why, "query without a path in request target");
                r->path = (struct http_span){t0 + a1, n - a1};
        }
        memcpy(r->host, a.host, sizeof r->host);
        r->host_is_ipv6 = a.v6;
        r->port = a.port;
        return 0;
}

/*
 * See http.h. *r is cleared first and is meaningful only when the return is
 * positive; *why is NULL then (why may be NULL). The proxy's connection
 * handler calls this again on the grown buffer after every read until it
 * returns non-zero; the result does not depend on bytes after the head.
 */
/* origin form (the daemon's API): "/path[?query]", printable, no spaces */
static int parse_origin_target(const char *buf, size_t t0, size_t t1, struct http_request *r,
                               const char **why)
{
        if (t1 <= t0 || buf[t0] != '/' || t1 - t0 > HTTP_ORIGIN_TARGET_MAX)
                return fail(why, "the target must be a path of at most 2048 bytes");
        for (size_t i = t0; i < t1; i++)
                if ((unsigned char)buf[i] <= 0x20 || (unsigned char)buf[i] >= 0x7f)
                        return fail(why, "a byte outside printable ASCII in the target");
        r->path = (struct http_span){t0, t1 - t0};
        return 0;
}

/*
 * A captured connection's request (origin form sent to what the client
 * takes for the server): "/path[?query]" (visible ASCII, checked with the
 * request line), no fragment ("OPTIONS *" is not served: a path always
 * starts with '/').
 */
static int parse_captured_target(const char *buf, size_t t0, size_t t1, struct http_request *r,
                                 const char **why)
{
        if (buf[t0] != '/')
                return fail(why, "the target of a request to a server must be a path");
        if (memchr(buf + t0, '#', t1 - t0))
                return fail(why, "fragment in request target");
        r->path = (struct http_span){t0, t1 - t0};
        return 0;
}

enum rq_mode {
        RQ_PROXY,    /* absolute form or CONNECT; Host must agree with the target */
        RQ_ORIGIN,   /* the daemon's API: origin form, 1.1, Host not compared */
        RQ_CAPTURED, /* a captured connection: origin form, Host required and returned */
};

static int request_parse(const char *buf, size_t len, struct http_request *r, const char **why,
                         enum rq_mode mode)
{
        bool origin = mode == RQ_ORIGIN;
        size_t head_len, t0, t1, cl_count = 0, te_count = 0;
        const struct http_header *host = NULL;
        int k;

        memset(r, 0, sizeof *r);
        r->content_length = -1;
        if (why)
                *why = NULL;
        k = head_scan(buf, len, &head_len, why);
        if (k <= 0)
                return k;

        size_t eol = line_end(buf, head_len, 0);
        k = parse_request_line(buf, eol, r, &t0, &t1, why);
        if (k < 0)
                return k;
        if (mode != RQ_PROXY && r->connect)
                return fail(why, "CONNECT is not served here");
        if (origin && r->http10)
                return fail(why, "HTTP/1.0 request refused (HTTP/1.1 only)");
        k = origin                ? parse_origin_target(buf, t0, t1, r, why)
            : mode == RQ_CAPTURED ? parse_captured_target(buf, t0, t1, r, why)
                                  : parse_target(buf, t0, t1, r, why);
        if (k < 0)
                return k;

        for (size_t pos = eol + 2; (eol = line_end(buf, head_len, pos)) != pos; pos = eol + 2) {
                struct http_header h;

                k = parse_field(buf, pos, eol, &h, why);
                if (k < 0)
                        return k;
                if (r->n_headers == HTTP_HEADERS_MAX)
                        return fail(why, "more than HTTP_HEADERS_MAX headers");
                r->headers[r->n_headers++] = h;

                if (span_ieq(buf, h.name, "content-length")) {
                        if (++cl_count > 1)
                                return fail(why, "two Content-Length headers");
                        if (memchr(buf + h.value.off, ',', h.value.len))
                                return fail(why, "Content-Length is a list");
                        if (parse_cl_digits(buf + h.value.off, h.value.len, &r->content_length) < 0)
                                return fail(why, "Content-Length is not 1..18 digits");
                } else if (span_ieq(buf, h.name, "transfer-encoding")) {
                        if (++te_count > 1)
                                return fail(why, "two Transfer-Encoding headers");
                        if (!span_ieq(buf, h.value, "chunked"))
                                return fail(why, "Transfer-Encoding other than \"chunked\"");
                        r->chunked = true;
                } else if (span_ieq(buf, h.name, "host")) {
                        if (host)
                                return fail(why, "more than one Host header");
                        host = &r->headers[r->n_headers - 1];
                } else if (span_ieq(buf, h.name, "connection")) {
                        if (list_has(buf, h.value, "close"))
                                r->close = true;
                }
        }

        if (cl_count && te_count)
                return fail(why, "both Content-Length and Transfer-Encoding");
        if (r->http10 && te_count)
                return fail(why, "Transfer-Encoding in an HTTP/1.0 request");
        if (r->http10)
                r->close = true; /* no keep-alive for 1.0 clients: one request each */
        if (r->connect && (r->chunked || r->content_length > 0))
                return fail(why, "CONNECT with a request body");

        if (origin) {
                /* a local API: Host is whatever the client says */
        } else if (mode == RQ_CAPTURED) {
                /* the caller compares the Host with the destination's name */
                struct authority ha;
                if (!host)
                        return fail(why, "missing Host header");
                enum auth_err e =
                        parse_authority(buf + host->value.off, host->value.len, false, &ha);
                if (e != AE_OK)
                        return fail(why, host_why[e]);
                memcpy(r->host, ha.host, sizeof r->host);
                r->host_is_ipv6 = ha.v6;
                r->port = ha.port;
                r->host_has_port = ha.has_port;
        } else if (!host) {
                /* HTTP/1.0 has no Host requirement; the target names the host */
                if (!r->connect && !r->http10)
                        return fail(why, "missing Host header");
        } else {
                struct authority ha;
                enum auth_err e =
                        parse_authority(buf + host->value.off, host->value.len, false, &ha);
                if (e != AE_OK)
                        return fail(why, host_why[e]);
                if (!host_eq(ha.host, ha.v6, r->host, r->host_is_ipv6))
                        return fail(why, "Host header names another host than the target");
                /* CONNECT: a Host without a port is accepted (see the file comment) */
                if (ha.port != r->port && (!r->connect || ha.has_port))
                        return fail(why, "Host header names another port than the target");
        }

        r->head_len = head_len;
        return (int)head_len;
}

int http_request_parse(const char *buf, size_t len, struct http_request *r, const char **why)
{
        return request_parse(buf, len, r, why, RQ_PROXY);
}

int http_captured_request_parse(const char *buf, size_t len, struct http_request *r,
                                const char **why)
{
        return request_parse(buf, len, r, why, RQ_CAPTURED);
}

int http_origin_request_parse(const char *buf, size_t len, struct http_request *r, const char **why)
{
        return request_parse(buf, len, r, why, RQ_ORIGIN);
}

/* See http.h. buf is the buffer r was parsed from; name is NUL-terminated. */
const struct http_header *http_header_find(const struct http_request *r, const char *buf,
                                           const char *name)
{
        for (size_t i = 0; i < r->n_headers; i++)
                if (span_ieq(buf, r->headers[i].name, name))
                        return &r->headers[i];
        return NULL;
}

/* Whether the comma-separated list v[0..len) holds `token` (any case). */
static bool list_has_token(const char *v, size_t len, const char *token)
{
        size_t tl = strlen(token), i = 0;
        while (i < len) {
                while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
                        i++;
                size_t b = i;
                while (i < len && v[i] != ',')
                        i++;
                size_t e = i;
                while (e > b && (v[e - 1] == ' ' || v[e - 1] == '\t'))
                        e--;
                if (e - b == tl && !strncasecmp(v + b, token, tl))
                        return true;
        }
        return false;
}

bool http_request_websocket(const struct http_request *r, const char *buf)
{
        bool upgrade = false, conn = false;
        if (r->http10 || r->connect)
                return false;
        for (size_t i = 0; i < r->n_headers; i++) {
                const struct http_header *h = &r->headers[i];
                if (span_ieq(buf, h->name, "upgrade")) {
                        if (upgrade ||
                            !list_has_token(buf + h->value.off, h->value.len, "websocket") ||
                            h->value.len != 9)
                                return false; /* exactly one, exactly "websocket" */
                        upgrade = true;
                } else if (span_ieq(buf, h->name, "connection") &&
                           list_has_token(buf + h->value.off, h->value.len, "upgrade"))
                        conn = true;
        }
        return upgrade && conn;
}

/* ---- responses ---- */

static int parse_status_line(const char *buf, size_t eol, struct http_response *r, bool *http10,
                             const char **why)
{
        if (eol >= 8 && memcmp(buf, "HTTP/1.1", 8) == 0)
                *http10 = false;
        else if (eol >= 8 && memcmp(buf, "HTTP/1.0", 8) == 0)
                *http10 = true;
        else if (eol >= 5 && memcmp(buf, "HTTP/", 5) == 0)
                return fail(why, "response HTTP version other than 1.0 or 1.1");
        else
                return fail(why, "malformed status line");

        /* "HTTP/1.x" SP 3DIGIT [ SP reason ]: the reason may be missing */
        if (eol < 12 || buf[8] != ' ' || !is_digit((unsigned char)buf[9]) ||
            !is_digit((unsigned char)buf[10]) || !is_digit((unsigned char)buf[11]) ||
            (eol > 12 && buf[12] != ' '))
                return fail(why, "malformed status code");
        r->status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
        if (r->status < 100 || r->status > 599)
                return fail(why, "status code outside 100..599");
        return 0;
}

/* A Content-Length value in a response: a list of equal 1..18 digit numbers. */
static int response_cl(const char *buf, struct http_span v, int64_t *cl, const char **why)
{
        size_t i = v.off, end = v.off + v.len;

        while (i <= end) {
                size_t j = i;
                while (j < end && buf[j] != ',')
                        j++;
                size_t a = i, b = j;
                while (a < b && is_ws((unsigned char)buf[a]))
                        a++;
                while (b > a && is_ws((unsigned char)buf[b - 1]))
                        b--;
                int64_t x;
                if (parse_cl_digits(buf + a, b - a, &x) < 0)
                        return fail(why, "Content-Length is not 1..18 digits");
                if (*cl >= 0 && *cl != x)
                        return fail(why, "differing Content-Length values");
                *cl = x;
                i = j + 1;
        }
        return 0;
}

/*
 * See http.h; the same calling pattern as http_request_parse(), on the
 * upstream side. Which responses have no body (HEAD, 304, 2xx to CONNECT)
 * is the caller's to know; 1xx/204 with a body length are refused here.
 */
int http_response_parse(const char *buf, size_t len, struct http_response *r, const char **why)
{
        size_t head_len, n_headers = 0, te_count = 0;
        bool http10 = false, has_cl = false;
        int k;

        memset(r, 0, sizeof *r);
        r->content_length = -1;
        if (why)
                *why = NULL;
        k = head_scan(buf, len, &head_len, why);
        if (k <= 0)
                return k;

        size_t eol = line_end(buf, head_len, 0);
        k = parse_status_line(buf, eol, r, &http10, why);
        if (k < 0)
                return k;

        for (size_t pos = eol + 2; (eol = line_end(buf, head_len, pos)) != pos; pos = eol + 2) {
                struct http_header h;

                k = parse_field(buf, pos, eol, &h, why);
                if (k < 0)
                        return k;
                if (++n_headers > HTTP_HEADERS_MAX)
                        return fail(why, "more than HTTP_HEADERS_MAX headers");
                if (span_ieq(buf, h.name, "content-length")) {
                        has_cl = true;
                        k = response_cl(buf, h.value, &r->content_length, why);
                        if (k < 0)
                                return k;
                } else if (span_ieq(buf, h.name, "transfer-encoding")) {
                        if (++te_count > 1)
                                return fail(why, "two Transfer-Encoding headers");
                        if (!span_ieq(buf, h.value, "chunked"))
                                return fail(why, "Transfer-Encoding other than \"chunked\"");
                        r->chunked = true;
                } else if (span_ieq(buf, h.name, "connection")) {
                        if (list_has(buf, h.value, "close"))
                                r->close = true;
                } else if (span_ieq(buf, h.name, "content-encoding")) {
                        if (!span_ieq(buf, h.value, "identity") && h.value.len > 0)
                                r->encoded = true;
                } else if (span_ieq(buf, h.name, "sec-websocket-extensions")) {
                        r->ws_extensions = true;
                }
        }

        if (has_cl && te_count)
                return fail(why, "both Content-Length and Transfer-Encoding");
        if (te_count && http10)
                return fail(why, "Transfer-Encoding in an HTTP/1.0 response");
        if ((r->status < 200 || r->status == 204) && (r->chunked || r->content_length > 0))
                return fail(why, "body length on a 1xx or 204 response");
        if (http10)
                r->close = true;

        r->head_len = head_len;
        return (int)head_len;
}

/* ---- chunked framing ---- */

enum chunk_state {
        CS_SIZE0,    /* start of a chunk-size line: a hex digit must come */
        CS_SIZE,     /* in the hex digits */
        CS_SIZE_WS,  /* BWS after the digits: only more BWS or ';' */
        CS_EXT,      /* chunk extensions, skipped up to CR */
        CS_SIZE_LF,  /* CR of the size line seen */
        CS_DATA,     /* `left` bytes of chunk data (skipped in bulk) */
        CS_DATA_CR,  /* the CRLF after chunk data */
        CS_DATA_LF,  /* ... its LF */
        CS_TR0,      /* start of a trailer line or of the final empty line */
        CS_TR_NAME,  /* trailer field name */
        CS_TR_VALUE, /* trailer field value, up to CR */
        CS_TR_LF,    /* CR of a trailer line seen */
        CS_END_LF,   /* CR of the final empty line seen */
        CS_DONE,     /* body ended */
        CS_ERROR,    /* refused; stays refused */
        _CS_MAX,
};

enum chunk_class {
        CC_HEX,   /* 0-9 a-f A-F */
        CC_TCHAR, /* other token characters */
        CC_SEMI,
        CC_COLON,
        CC_WS, /* SP HTAB */
        CC_CR,
        CC_LF,
        CC_CTL,   /* other controls, NUL, DEL */
        CC_OTHER, /* other VCHAR, obs-text */
        _CC_MAX,
};

enum chunk_action {
        CA_REFUSE = 0, /* the zero cell: anything not listed is refused */
        CA_NEXT,       /* go to `next` */
        CA_DIGIT,      /* accumulate a hex digit of the size */
        CA_SIZE_END,   /* size line done: data, or the trailer after the last-chunk */
        CA_NEW_LINE,   /* a new size or trailer line starts */
        CA_END,        /* final empty line done */
};

struct chunk_cell {
        uint8_t action, next;
};

/*
 * chunk_table[state][class of the next byte] = {action, next state}. A cell
 * left out is {CA_REFUSE}: the byte is refused, chunk_why() says why.
 */
// clang-format off
#define NEXT(s) {CA_NEXT, s}
// clang-format on
/* bytes allowed inside an extension or a trailer value */
#define TEXT(s)                                                                                    \
        [CC_HEX] = NEXT(s), [CC_TCHAR] = NEXT(s), [CC_SEMI] = NEXT(s), [CC_COLON] = NEXT(s),       \
        [CC_WS] = NEXT(s), [CC_OTHER] = NEXT(s)

static const struct chunk_cell chunk_table[_CS_MAX][_CC_MAX] = {
        [CS_SIZE0] = {[CC_HEX] = {CA_DIGIT, CS_SIZE}},
        [CS_SIZE] = {[CC_HEX] = {CA_DIGIT, CS_SIZE},
                     [CC_WS] = NEXT(CS_SIZE_WS),
                     [CC_SEMI] = NEXT(CS_EXT),
                     [CC_CR] = NEXT(CS_SIZE_LF)},
        [CS_SIZE_WS] = {[CC_WS] = NEXT(CS_SIZE_WS), [CC_SEMI] = NEXT(CS_EXT)},
        [CS_EXT] = {TEXT(CS_EXT), [CC_CR] = NEXT(CS_SIZE_LF)},
        [CS_SIZE_LF] = {[CC_LF] = {CA_SIZE_END, CS_DATA}},
        [CS_DATA_CR] = {[CC_CR] = NEXT(CS_DATA_LF)},
        [CS_DATA_LF] = {[CC_LF] = {CA_NEW_LINE, CS_SIZE0}},
        [CS_TR0] = {[CC_HEX] = NEXT(CS_TR_NAME),
                    [CC_TCHAR] = NEXT(CS_TR_NAME),
                    [CC_CR] = NEXT(CS_END_LF)},
        [CS_TR_NAME] = {[CC_HEX] = NEXT(CS_TR_NAME),
                        [CC_TCHAR] = NEXT(CS_TR_NAME),
                        [CC_COLON] = NEXT(CS_TR_VALUE)},
        [CS_TR_VALUE] = {TEXT(CS_TR_VALUE), [CC_CR] = NEXT(CS_TR_LF)},
        [CS_TR_LF] = {[CC_LF] = {CA_NEW_LINE, CS_TR0}},
        [CS_END_LF] = {[CC_LF] = {CA_END, CS_DONE}},
};

/* Why a byte of class `cc` is refused in state `s` (a CA_REFUSE cell). */
static const char *chunk_why(enum chunk_state s, enum chunk_class cc)
{
        if (cc == CC_LF)
                return "bare LF in chunked framing";
        if (cc == CC_CTL)
                return "control byte in chunked framing";
        switch (s) {
        case CS_SIZE0:
                return "chunk size is not a hex number";
        case CS_SIZE:
        case CS_SIZE_WS:
                return "bad byte after chunk size";
        case CS_SIZE_LF:
        case CS_TR_LF:
        case CS_END_LF:
                return "bare CR in chunked framing";
        case CS_DATA_CR:
        case CS_DATA_LF:
                return "chunk data not followed by CRLF";
        case CS_TR0:
                return cc == CC_WS ? "obs-fold in chunked trailer"
                                   : "chunked trailer line does not start with a name";
        case CS_TR_NAME:
                return "chunked trailer name is not a token followed by ':'";
        default:
                return "malformed chunked framing";
        }
}

static enum chunk_class chunk_class_of(unsigned char b)
{
        if (hex_digit_value(b) >= 0)
                return CC_HEX;
        switch (b) {
        case ';':
                return CC_SEMI;
        case ':':
                return CC_COLON;
        case ' ':
        case '\t':
                return CC_WS;
        case '\r':
                return CC_CR;
        case '\n':
                return CC_LF;
        default:
                if (is_ctl(b))
                        return CC_CTL;
                return is_tchar(b) ? CC_TCHAR : CC_OTHER;
        }
}

/* See http.h: ready for the first chunk-size line. */
void http_chunked_init(struct http_chunked *c)
{
        memset(c, 0, sizeof *c);
        c->state = CS_SIZE0;
}

static ssize_t chunk_refuse(struct http_chunked *c, const char **why, const char *msg)
{
        c->state = CS_ERROR;
        return fail(why, msg);
}

/*
 * See http.h. Feeding after the end returns 0 with *done set; after a
 * refusal every feed is refused (the state is sticky). done and why may be
 * NULL. The proxy feeds each read of a chunked body before relaying it and
 * relays only the returned count as body.
 */
ssize_t http_chunked_feed(struct http_chunked *c, const char *buf, size_t len, bool *done,
                          const char **why)
{
        return http_chunked_feed_map(c, buf, len, done, why, NULL, 0);
}

static void mark(uint8_t *map, size_t bit)
{
        map[bit / 8] |= (uint8_t)(1u << (bit % 8));
}

ssize_t http_chunked_feed_map(struct http_chunked *c, const char *buf, size_t len, bool *done,
                              const char **why, uint8_t *framing, size_t b)
{
        size_t i = 0;

        if (done)
                *done = false;
        if (c->state < 0 || c->state >= _CS_MAX || c->state == CS_ERROR)
                return chunk_refuse(c, why, "chunked framing already refused");
        if (len > SSIZE_MAX)
                return fail(why, "chunked feed longer than SSIZE_MAX");

        while (i < len && c->state != CS_DONE) {
                if (c->state == CS_DATA) {
                        size_t n = len - i;
                        if (c->left < n)
                                n = (size_t)c->left;
                        c->left -= n;
                        i += n;
                        if (c->left == 0)
                                c->state = CS_DATA_CR;
                        continue;
                }

                unsigned char ch = (unsigned char)buf[i];
                enum chunk_class cc = chunk_class_of(ch);
                struct chunk_cell cell = chunk_table[c->state][cc];

                if (cell.action == CA_REFUSE)
                        return chunk_refuse(c, why, chunk_why(c->state, cc));
                if (++c->line_len > HTTP_HEAD_MAX)
                        return chunk_refuse(c, why, "chunk-size or trailer line too long");
                switch (cell.action) {
                case CA_DIGIT:
                        if (++c->digits > CHUNK_DIGITS_MAX)
                                return chunk_refuse(c, why, "chunk size over 16 hex digits");
                        c->left = c->left << 4 | (uint64_t)hex_digit_value(ch);
                        break;
                case CA_SIZE_END:
                        c->line_len = 0;
                        if (c->left == 0) /* the last-chunk: trailers follow */
                                cell.next = CS_TR0;
                        break;
                case CA_NEW_LINE:
                        c->line_len = 0;
                        c->digits = 0;
                        c->left = 0;
                        break;
                case CA_NEXT:
                case CA_END:
                        break;
                default:
                        return chunk_refuse(c, why, "malformed chunked framing");
                }
                /* trailer field text is header-like: not framing */
                bool text = (c->state == CS_TR0 && cell.next == CS_TR_NAME) ||
                            c->state == CS_TR_NAME ||
                            (c->state == CS_TR_VALUE && cell.next == CS_TR_VALUE);
                if (framing && !text)
                        mark(framing, b + i);
                c->state = cell.next;
                i++;
        }
        if (done)
                *done = c->state == CS_DONE;
        return (ssize_t)i;
}

/*
 * See http.h. Data bytes are copied out in runs; framing bytes go through
 * the table one at a time (http_chunked_feed_map), so decoding refuses
 * exactly what feeding does.
 */
ssize_t http_chunked_decode(struct http_chunked *c, const char *buf, size_t len, char *out,
                            size_t out_size, size_t *out_len, bool *done, const char **why)
{
        size_t i = 0;
        *out_len = 0;
        if (done)
                *done = false;
        if (len > SSIZE_MAX)
                return fail(why, "chunked feed longer than SSIZE_MAX");
        while (i < len && c->state != CS_DONE) {
                size_t step = 1;
                if (c->state == CS_DATA) {
                        step = len - i;
                        if (c->left < step)
                                step = (size_t)c->left;
                        if (out_size - *out_len < step)
                                step = out_size - *out_len;
                        if (step == 0)
                                break; /* out is full */
                        memcpy(out + *out_len, buf + i, step);
                        *out_len += step;
                }
                ssize_t k = http_chunked_feed_map(c, buf + i, step, NULL, why, NULL, 0);
                if (k < 0)
                        return k;
                i += (size_t)k;
        }
        if (done)
                *done = c->state == CS_DONE;
        return (ssize_t)i;
}
