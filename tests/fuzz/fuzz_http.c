/*
 * fuzz_http.c — libFuzzer target for the egress proxy's HTTP/1.1 heads and
 * chunked framing (src/egress/http.c).
 *
 * Every parse runs on a heap buffer of exactly the bytes it is given, so a
 * read past `len` is an ASan report. The same input is read as a request
 * head, a response head and a chunked body. Beyond "no crash, no UB", each
 * result is checked against what http.h promises, and a disagreement
 * aborts:
 *   - returns are only head_len (> 0), 0, -EBADMSG or -E2BIG; every error
 *     has a why; 0 only while fewer than HTTP_HEAD_MAX bytes are given;
 *   - a parsed head: head_len <= len and <= HTTP_HEAD_MAX, ends in CRLFCRLF,
 *     and every span lies inside it; host is a NUL-terminated lower-case
 *     string; a request with content_length >= 0 is never chunked; an
 *     absolute-form request has a Host unless it is HTTP/1.0, and an
 *     HTTP/1.0 one is `close` and never chunked;
 *   - prefixes: no prefix shorter than head_len parses, and a prefix that
 *     parses implies the whole input parses to the same head (every prefix
 *     of a short input; a sample of a long one);
 *   - chunked: a feed never returns more than len; a short return means
 *     done; one piece, byte by byte and in odd pieces agree on the body
 *     length and on refusal; http_chunked_decode reads as the feed does
 *     and gives the same data whole or cut in odd pieces with a small out
 *     room.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress/http.h"
#include "egress/wsframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ALL_PREFIXES_MAX 512 /* inputs up to this size check every prefix */

static char *dup_exact(const uint8_t *data, size_t n)
{
        char *p = malloc(n ? n : 1);

        if (!p)
                abort();
        memcpy(p, data, n);
        return p;
}

static void check_span(struct http_span s, size_t head_len)
{
        if (s.off > head_len || s.len > head_len - s.off)
                abort();
}

static void check_return(int k, size_t len, const char *why)
{
        if (k < 0 && ((k != -EBADMSG && k != -E2BIG) || !why || !why[0]))
                abort();
        if (k == -E2BIG && len < HTTP_HEAD_MAX)
                abort();
        if (k == 0 && len >= HTTP_HEAD_MAX)
                abort();
        if (k > 0 && ((size_t)k > len || k > HTTP_HEAD_MAX || k < 4))
                abort();
}

static void check_head_end(const char *buf, int k)
{
        if (k > 0 && memcmp(buf + k - 4, "\r\n\r\n", 4) != 0)
                abort();
}

static void check_request(const char *buf, size_t len, int k, const struct http_request *r,
                          const char *why)
{
        check_return(k, len, why);
        check_head_end(buf, k);
        if (k <= 0)
                return;
        if (r->head_len != (size_t)k)
                abort();
        check_span(r->method, r->head_len);
        check_span(r->path, r->head_len);
        if (r->n_headers > HTTP_HEADERS_MAX)
                abort();
        for (size_t i = 0; i < r->n_headers; i++) {
                check_span(r->headers[i].name, r->head_len);
                check_span(r->headers[i].value, r->head_len);
                if (r->headers[i].name.len == 0)
                        abort();
        }
        size_t hn = strnlen(r->host, sizeof r->host);
        if (hn == 0 || hn > HTTP_HOST_MAX)
                abort();
        for (size_t i = 0; i < hn; i++) {
                char c = r->host[i];
                if (c >= 'A' && c <= 'Z')
                        abort();
                if (c == '@' || c == '%' || c == '/' || c == '[' || c == ']' ||
                    (c == ':' && !r->host_is_ipv6))
                        abort();
        }
        if (r->port == 0)
                abort();
        if (r->content_length >= 0 && r->chunked)
                abort();
        if (r->content_length < -1)
                abort();
        if (r->connect && (r->chunked || r->content_length > 0))
                abort();
        if (r->http10 && (!r->close || r->chunked))
                abort(); /* 1.0: one request per connection, no chunked framing */
        if (!r->connect) {
                if (!r->http10 && !http_header_find(r, buf, "host"))
                        abort(); /* only HTTP/1.0 may leave Host out */
                if (r->path.len > 0 && buf[r->path.off] != '/')
                        abort();
        }
}

static void check_response(const char *buf, size_t len, int k, const struct http_response *r,
                           const char *why)
{
        check_return(k, len, why);
        check_head_end(buf, k);
        if (k <= 0)
                return;
        if (r->head_len != (size_t)k || r->status < 100 || r->status > 599)
                abort();
        if (r->content_length >= 0 && r->chunked)
                abort();
        if (r->content_length < -1)
                abort();
}

/* Prefix lengths to try: all of a short input, a sample of a long one. */
static size_t prefix_at(size_t i, size_t size, const uint8_t *data)
{
        if (size <= ALL_PREFIXES_MAX)
                return i;
        if (i < 8)
                return i;
        if (i < 16)
                return size - (i - 7); /* the last 8 */
        /* the rest: positions the input itself chooses */
        size_t seed = data[i % size] | (size_t)data[(i * 7) % size] << 8;
        return seed % size;
}

static void fuzz_heads(const uint8_t *data, size_t size)
{
        static struct http_request r, rp;
        struct http_response s, sp;
        const char *why = NULL;
        char *buf = dup_exact(data, size);
        int kr = http_request_parse(buf, size, &r, &why);
        check_request(buf, size, kr, &r, why);
        if (kr > 0 && http_request_websocket(&r, buf) && (r.http10 || r.connect))
                abort(); /* an upgrade is HTTP/1.1 only, never CONNECT */
        why = NULL;
        int ks = http_response_parse(buf, size, &s, &why);
        check_response(buf, size, ks, &s, why);
        /* a captured connection's origin-form request (issue 14): the same
         * invariants, and a Host it returns is a name the caller can compare */
        why = NULL;
        int kc = http_captured_request_parse(buf, size, &rp, &why);
        check_request(buf, size, kc, &rp, why);
        if (kc > 0 && (rp.connect || !rp.host[0] || rp.port == 0))
                abort();
        free(buf);

        size_t n = size <= ALL_PREFIXES_MAX ? size : 48;
        for (size_t i = 0; i < n; i++) {
                size_t p = prefix_at(i, size, data);
                char *pb = dup_exact(data, p);

                why = NULL;
                int k = http_request_parse(pb, p, &rp, &why);
                check_request(pb, p, k, &rp, why);
                if (k > 0 && k != kr)
                        abort(); /* a parsed prefix fixes the head */
                if (kr > 0 && p < (size_t)kr && k > 0)
                        abort();

                why = NULL;
                k = http_response_parse(pb, p, &sp, &why);
                check_response(pb, p, k, &sp, why);
                if (k > 0 &&
                    (k != ks || s.status != sp.status || s.content_length != sp.content_length ||
                     s.chunked != sp.chunked || s.close != sp.close))
                        abort();
                if (ks > 0 && p < (size_t)ks && k > 0)
                        abort();
                free(pb);
        }
}

/* Feed data in pieces of `step` bytes (0: one piece): body bytes, or -EBADMSG. */
static ssize_t feed(const uint8_t *data, size_t size, size_t step, bool *done)
{
        struct http_chunked c;
        size_t used = 0, at = 0;

        http_chunked_init(&c);
        *done = false;
        if (step == 0)
                step = size ? size : 1;
        do {
                size_t k = size - at < step ? size - at : step;
                char *p = dup_exact(data + at, k);
                const char *why = NULL;
                ssize_t r = http_chunked_feed(&c, p, k, done, &why);
                free(p);
                if (r < 0) {
                        if (r != -EBADMSG || !why || !why[0] || *done)
                                abort();
                        return r;
                }
                if ((size_t)r > k)
                        abort();
                if ((size_t)r < k && !*done)
                        abort();
                if (c.line_len > HTTP_HEAD_MAX || c.digits > 16)
                        abort();
                used += (size_t)r;
                at += k;
        } while (at < size && !*done);
        return (ssize_t)used;
}

static void fuzz_dechunk(const uint8_t *data, size_t size, ssize_t r0, bool d0);

static void fuzz_chunked(const uint8_t *data, size_t size)
{
        bool d0, d1, d2;
        ssize_t r0 = feed(data, size, 0, &d0);
        ssize_t r1 = feed(data, size, 1, &d1);
        size_t odd = size ? 1 + data[0] % 13 : 1;
        ssize_t r2 = feed(data, size, odd, &d2);

        /* with or without an error, all three must read the input alike */
        if (r0 != r1 || r0 != r2 || d0 != d1 || d0 != d2)
                abort();
        fuzz_dechunk(data, size, r0, d0);

        /* the framing map: the same reading, and no bit past what was read
         * (the scrubber skips marked bytes of the response buffer) */
        if (size <= 4096) {
                static uint8_t map[4096 / 8 + 2];
                struct http_chunked c;
                bool dm = false;
                const char *why = NULL;
                memset(map, 0, sizeof map);
                http_chunked_init(&c);
                char *p = dup_exact(data, size);
                ssize_t rm = http_chunked_feed_map(&c, p, size, &dm, &why, map, 3);
                free(p);
                if ((rm < 0) != (r0 < 0) || (rm >= 0 && (rm != r0 || dm != d0)))
                        abort();
                size_t used = rm > 0 ? (size_t)rm : 0;
                for (size_t i = 0; i < sizeof map * 8; i++)
                        if ((map[i / 8] >> (i % 8) & 1) &&
                            (i < 3 || i >= 3 + (rm < 0 ? size : used)))
                                abort();
        }
}

/* http_chunked_decode (a rewritten request body): the same reading as
 * http_chunked_feed; one piece with room for all, and the input cut in
 * odd pieces with a small out room (the rest passed again), give the same
 * data; the data is never more than the bytes consumed. */
static void fuzz_dechunk(const uint8_t *data, size_t size, ssize_t r0, bool d0)
{
        if (size > 4096)
                return;
        static char all[4096], cut[4096];
        struct http_chunked c;
        const char *why = NULL;
        bool d = false;
        size_t al = 0;
        char *p = dup_exact(data, size);
        http_chunked_init(&c);
        ssize_t r = http_chunked_decode(&c, p, size, all, sizeof all, &al, &d, &why);
        if ((r < 0) != (r0 < 0) || (r >= 0 && (r != r0 || d != d0 || al > (size_t)r)))
                abort();
        if (r < 0 && (!why || !why[0]))
                abort();
        /* in pieces of 1..13 bytes, out room 1..7 */
        size_t piece = size ? 1 + data[0] % 13 : 1, room = size ? 1 + data[size - 1] % 7 : 1;
        size_t pos = 0, cl = 0;
        ssize_t rc = 0;
        bool dc = false;
        http_chunked_init(&c);
        while (pos < size && !dc) {
                size_t n = size - pos < piece ? size - pos : piece, o = 0;
                rc = http_chunked_decode(&c, p + pos, n, cut + cl, room, &o, &dc, &why);
                if (rc < 0)
                        break;
                if ((size_t)rc > n || o > room || (rc == 0 && o == 0 && n))
                        abort(); /* no progress although bytes and room were given */
                pos += (size_t)rc;
                cl += o;
        }
        free(p);
        if ((rc < 0) != (r < 0) ||
            (r >= 0 && (pos != (size_t)r || dc != d || cl != al || memcmp(all, cut, al))))
                abort();
}

/* WebSocket frame headers (wsframe.h): whole or split anywhere, the same
 * answer and the same marks; nothing marked past the input. */
static void fuzz_ws(const uint8_t *data, size_t size)
{
        static uint8_t m1[4096 / 8 + 1], m2[4096 / 8 + 1];
        if (size > 4096)
                return;
        struct ws_frames a, b;
        const char *why = NULL;
        memset(m1, 0, sizeof m1);
        memset(m2, 0, sizeof m2);
        ws_frames_init(&a);
        ws_frames_init(&b);
        ssize_t r1 = ws_frames_feed(&a, data, size, m1, 0, &why);
        size_t at = size ? data[0] % (size + 1) : 0;
        ssize_t r2 = ws_frames_feed(&b, data, at, m2, 0, &why);
        if (r2 >= 0)
                r2 = ws_frames_feed(&b, data + at, size - at, m2, at, &why);
        if ((r1 < 0) != (r2 < 0))
                abort();
        if (r1 >= 0 && ((size_t)r1 != size || memcmp(m1, m2, sizeof m1) || a.left != b.left ||
                        a.have != b.have))
                abort();
        if (r1 < 0 && (!why || !why[0]))
                abort();
        for (size_t i = size; i < sizeof m1 * 8; i++)
                if (m1[i / 8] >> (i % 8) & 1)
                        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        fuzz_heads(data, size);
        fuzz_chunked(data, size);
        fuzz_ws(data, size);

        /* the body after a parsed chunked request head, framed on its own */
        static struct http_request r;
        const char *why = NULL;
        char *buf = dup_exact(data, size);
        int k = http_request_parse(buf, size, &r, &why);
        free(buf);
        if (k > 0 && r.chunked)
                fuzz_chunked(data + k, size - (size_t)k);
        return 0;
}
