/*
 * http.h — HTTP/1.1 message heads and body framing for the egress proxy
 * (pure; fuzzed). Only what a forward proxy must read unambiguously:
 *
 * Requests (http_request_parse): "METHOD SP target SP HTTP/1.1 CRLF",
 * header lines "name: value CRLF", an empty line. Refused (-EBADMSG with a
 * reason): bare LF or CR, obs-fold (a line starting with SP/HTAB), a
 * header name that is not a token, whitespace before the colon, NUL or
 * other control bytes (HTAB allowed in values), HTTP versions other than
 * 1.1 and 1.0 (http_origin_request_parse: 1.1 only), Transfer-Encoding in
 * an HTTP/1.0 request, more than HTTP_HEADERS_MAX headers, a head over
 * HTTP_HEAD_MAX bytes (-E2BIG), two Content-Length headers (even equal)
 * or a list value, Content-Length that is not 1..18 digits,
 * Transfer-Encoding other than exactly "chunked" (case-insensitive), both
 * Content-Length and Transfer-Encoding, more than one Host header.
 *
 * Targets: CONNECT takes only authority form "host:port" (port required);
 * every other method only absolute form "http://host[:port]/path?query"
 * (scheme "http" case-insensitive; "https://" and origin form are refused:
 * TLS goes through CONNECT). The authority must have no userinfo ('@'), no
 * percent-encoding, no empty host; IPv6 literals in brackets. host is
 * returned as written (lower-cased); the caller canonicalises and decides.
 * For absolute form a Host header is required (optional in HTTP/1.0) and
 * must name the same host and port (case-insensitive; the default port 80
 * may be omitted on either side). An HTTP/1.0 request sets `http10` and
 * `close` (one request per connection; Connection: keep-alive ignored).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HTTP_HEAD_MAX    16384 /* bytes of a request or response head */
#define HTTP_HEADERS_MAX 100
#define HTTP_HOST_MAX    255

struct http_span {
        size_t off, len; /* into the parsed buffer */
};

struct http_header {
        struct http_span name, value; /* value without surrounding OWS */
};

struct http_request {
        struct http_span method;
        bool connect;                 /* method is CONNECT */
        char host[HTTP_HOST_MAX + 1]; /* lower case; IPv6 without brackets */
        bool host_is_ipv6;            /* was a bracketed literal */
        bool host_has_port;           /* http_captured_request_parse: the Host named a port */
        uint16_t port;                /* explicit or 80 */
        struct http_span path;        /* absolute form: from '/' (or "/" if empty: len 0) */
        int64_t content_length;       /* -1: none */
        bool chunked;
        bool close;  /* "Connection: close", or an HTTP/1.0 request */
        bool http10; /* the request line says HTTP/1.0 */
        struct http_header headers[HTTP_HEADERS_MAX];
        size_t n_headers;
        size_t head_len; /* bytes of the head, CRLFCRLF included */
};

/*
 * http_request_parse — parse the request head at the start of buf[0..len).
 * Returns 0 if the head is not complete yet (and not over the limit),
 * head_len (> 0) when parsed into *r, -E2BIG if no head ends within
 * HTTP_HEAD_MAX bytes, -EBADMSG with *why for anything refused above.
 */
int http_request_parse(const char *buf, size_t len, struct http_request *r, const char **why);

/*
 * http_origin_request_parse — the same rules for a local API (the daemon's
 * control socket): origin form only ("/path?query", printable ASCII, at
 * most HTTP_ORIGIN_TARGET_MAX bytes; r->path spans it), CONNECT refused,
 * Host optional and not compared. Same returns.
 */
#define HTTP_ORIGIN_TARGET_MAX 2048
int http_origin_request_parse(const char *buf, size_t len, struct http_request *r,
                              const char **why);

/*
 * http_captured_request_parse — a request a client sent straight to what
 * it takes for the server (a captured connection, egress.h): origin form
 * "/path[?query]" (never "*"), HTTP/1.1 or 1.0, CONNECT refused,
 * a Host header required; r->host / r->port / r->host_has_port are the
 * Host header's (port 80 when it names none), for the caller to compare
 * with the destination. Otherwise the rules and returns of
 * http_request_parse.
 */
int http_captured_request_parse(const char *buf, size_t len, struct http_request *r,
                                const char **why);

struct http_response {
        int status;             /* 100..599 */
        int64_t content_length; /* -1: none */
        bool chunked;
        bool close;
        bool encoded;       /* a Content-Encoding other than "identity" (gzip, br, ...) */
        bool ws_extensions; /* a Sec-WebSocket-Extensions header (e.g. permessage-deflate) */
        size_t head_len;
};

/*
 * http_response_parse — parse a response head ("HTTP/1.1 NNN reason").
 * Same returns; lenient only where a proxy must be (any reason phrase,
 * HTTP/1.0 responses). Duplicate differing Content-Length: -EBADMSG.
 */
int http_response_parse(const char *buf, size_t len, struct http_response *r, const char **why);

/*
 * Chunked body framing, incrementally: feed bytes, learn where the body
 * ends. Never decodes or copies; chunk-size lines are hex (at most 16
 * digits), chunk extensions skipped (at most HTTP_HEAD_MAX bytes per
 * line), trailers read up to the empty line.
 */
struct http_chunked {
        int state;       /* internal */
        uint64_t left;   /* bytes of chunk data still to come */
        size_t line_len; /* bytes of the current size/trailer line so far */
        unsigned digits;
};

void http_chunked_init(struct http_chunked *c);

/*
 * http_chunked_feed — consume up to len bytes. Returns the number of bytes
 * that belong to the body (<= len; < len means the body ended there and
 * *done is set), or -EBADMSG with *why.
 */
ssize_t http_chunked_feed(struct http_chunked *c, const char *buf, size_t len, bool *done,
                          const char **why);

/*
 * http_chunked_feed_map — the same, also marking in the bitmap `framing`
 * (bit b + i for buf[i], LSB first in each byte) every consumed byte that
 * is chunk framing: size lines with their extensions, the CRLF after
 * data, the CRLFs ending trailer lines and the final empty line. Data and
 * trailer field text are left unmarked (a caller scanning the body as one
 * stream skips the marked bytes). Bits of bytes not consumed are not
 * touched. Pure.
 */
ssize_t http_chunked_feed_map(struct http_chunked *c, const char *buf, size_t len, bool *done,
                              const char **why, uint8_t *framing, size_t b);

/*
 * http_chunked_decode — the same as http_chunked_feed, and the chunk data
 * among the consumed bytes copied to out[out_size] (*out_len bytes): the
 * body as one stream, without sizes, extensions or trailers (trailer
 * fields are checked and dropped). Stops early when out is full and the
 * next byte is data. Returns the bytes consumed, or -EBADMSG with *why.
 * Pure; fuzzed (fuzz_http: the same consumption and refusals as
 * http_chunked_feed, whatever the cuts).
 */
ssize_t http_chunked_decode(struct http_chunked *c, const char *buf, size_t len, char *out,
                            size_t out_size, size_t *out_len, bool *done, const char **why);

/*
 * http_request_websocket — r (parsed from buf) asks for a WebSocket: an
 * HTTP/1.1 request with exactly one "Upgrade: websocket" (any case) and a
 * Connection header listing "upgrade". Pure.
 */
bool http_request_websocket(const struct http_request *r, const char *buf);

/* http_header_find — the first header named `name` (case-insensitive), or NULL. */
const struct http_header *http_header_find(const struct http_request *r, const char *buf,
                                           const char *name);
