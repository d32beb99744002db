/*
 * inject.h — credential injection (issue 15), the pure part.
 *
 * A run with an injection holds a placeholder in its environment, never
 * the value. The egress process, which alone holds the value (copied into
 * it at its fork, see egress.c), puts the value on the wire in place of
 * the placeholder in plaintext HTTP request headers toward the secret's
 * own hosts only, and refuses (secret.exfil) any request, tunnel or name
 * that carries the placeholder (or the value) anywhere else. Responses
 * from the secret's hosts are scrubbed of the value before the run sees
 * them (inject_scrub_inplace).
 *
 * Everything here is pure: no syscalls, no allocation but the caller's
 * buffers; unit-tested (tests/unit/test_inject.c) and fuzzed
 * (tests/fuzz/fuzz_inject.c). The value is never logged or recorded:
 * nothing here formats it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/binding.h"

#define INJECT_MAX        SECRET_BINDINGS_MAX
#define INJECT_VALUE_MAX  4096 /* bytes of an injected value (a header value) */
#define INJECT_NEEDLE_MAX ((INJECT_VALUE_MAX + 2) / 3 * 4) /* its base64 */

/* One injection as the egress process holds it. `hosts` are borrowed from
 * the binding; `value` points to memory the caller manages (see egress.c). */
struct inject_secret {
        char name[SECRET_TARGET_MAX + 1];
        uint32_t version;
        char placeholder[SECRET_PH_LEN_MAX + 1];
        size_t ph_len;
        const unsigned char *value;
        size_t len;
        char *const *hosts;
        size_t n_hosts;
        char header[SECRET_HEADER_MAX + 1];    /* "" = replace in any header value */
        char query[SECRET_QUERY_MAX + 1];      /* a query parameter replaced too, or "" */
        char basic[SECRET_BASIC_USER_MAX + 1]; /* Authorization: Basic base64(basic:value), or "" */
        bool body; /* replaced in request bodies too (any lengths: the framing is rewritten) */
        bool exfil_kill;
};

/*
 * inject_placeholder — a placeholder of the binding's shape from `rnd`
 * (random bytes, one per random character: each byte's low 6 bits pick
 * one of the 64 characters A-Z a-z 0-9 _ -, so every character carries 6
 * bits). `length` 0: prefix + SECRET_PH_DEFAULT_LEN. Needs n_rnd ≥ the
 * random characters and at least SECRET_PH_RANDOM_MIN of them. Writes out
 * (NUL-terminated); returns its length or -EINVAL / -E2BIG. Pure.
 */
int inject_placeholder(const uint8_t *rnd, size_t n_rnd, const char *prefix, uint32_t length,
                       char *out, size_t out_size);

/* inject_host_match — whether a PLAINTEXT HTTP request to host (canonical)
 * and port may carry s's value: only an entry "name:port" naming that port,
 * and never port 443. A bare "name" means HTTPS (inject_tls_match), so it
 * never puts the value on the wire in cleartext. Pure. */
bool inject_host_match(const struct inject_secret *s, const char *host, uint16_t port);

/* inject_tls_match — whether a TERMINATED TLS connection to host
 * (canonical) and port may carry s's value: an entry "name" (port 443) or
 * "name:port" naming that port. Pure. */
bool inject_tls_match(const struct inject_secret *s, const char *host, uint16_t port);

/* inject_tls_names — the distinct host names (lowercase, ports dropped)
 * of the injections v[n], for the run CA's name constraint, into names[]
 * (at most max). Returns how many, or max + 1 when there are more. IP
 * literals are included as written: the caller refuses them. Pure. */
size_t inject_tls_names(const struct inject_secret *v, size_t n,
                        char names[][SECRET_INJECT_HOST_MAX + 1], size_t max);

/*
 * inject_query — the request target t[len] toward s's host with the
 * placeholder replaced by the value (percent-encoded: every byte but
 * A-Z a-z 0-9 - . _ ~) where it stands as the whole value of the query
 * parameter s->query (exactly that name, each occurrence). Nothing else of
 * the target changes. Writes out (not NUL-terminated) and *out_len.
 * Returns 1 when replaced, 0 when not (s->query empty, or no such
 * parameter holding the placeholder: out is then a copy), -E2BIG. Pure.
 */
int inject_query(const struct inject_secret *s, const char *t, size_t len, char *out,
                 size_t out_size, size_t *out_len);

/*
 * inject_body — request body bytes buf[len] toward the hosts of the
 * secrets v[k] whose bit is in `mask` and that allow it (body, and a
 * placeholder as long as the value): each placeholder is overwritten in
 * place with its value (the body's length is unchanged); *injected gets
 * the bits of those replaced. When `more` (body bytes follow), returns how
 * many bytes at the end could begin a placeholder and must wait for the
 * next ones (unchanged); else 0. Pure.
 */
size_t inject_body(const struct inject_secret *v, size_t n, uint64_t mask, char *buf, size_t len,
                   bool more, uint64_t *injected);

/*
 * inject_body_rewrite — decoded request-body bytes in[len] toward the hosts
 * of the secrets v[k] whose bit is in `mask` and that have `body`, copied
 * to out[out_size] with each placeholder replaced by its value (any
 * lengths: the caller frames what comes out). At each position the first
 * such secret (in order) whose placeholder stands there whole is replaced;
 * when `more` (body bytes follow) and the first one that could stand there
 * is cut by the end, the scan stops before it: those bytes wait for the
 * next ones, so the result does not depend on how the body was cut into
 * reads or chunks. The scan also stops where out has no room for the next
 * byte or value. out NULL (out_size SIZE_MAX) only counts. *out_len gets
 * the bytes written, *injected the bits of the secrets replaced. Returns
 * how many bytes of in were consumed (the rest is the caller's to keep and
 * pass again, first). Pure.
 */
size_t inject_body_rewrite(const struct inject_secret *v, size_t n, uint64_t mask, const char *in,
                           size_t len, bool more, char *out, size_t out_size, size_t *out_len,
                           uint64_t *injected);

/*
 * inject_basic_header — s's HTTP Basic header line (s->basic set), without
 * CRLF: "Authorization: Basic " + base64(basic ":" value), into
 * out[out_size]. Returns its length or -E2BIG (-EINVAL when s has no
 * basic). Wipes its scratch copy of the value. Pure.
 */
#define INJECT_BASIC_HEADER_MAX (21 + (SECRET_BASIC_USER_MAX + 1 + INJECT_VALUE_MAX + 2) / 3 * 4)
int inject_basic_header(const struct inject_secret *s, char *out, size_t out_size);

/*
 * inject_mentions — the placeholder or the value of some secret of v[n]
 * occurs in text[len] (as is, or inside `Basic` base64 when `header`),
 * compared without case when `icase` (DNS and host names). Returns that
 * secret or NULL; *where "placeholder" or "value". Pure.
 */
const struct inject_secret *inject_mentions(const struct inject_secret *v, size_t n,
                                            const char *text, size_t len, bool icase, bool header,
                                            const char **where);

/*
 * inject_mentions_name — the same for a host or DNS name (without case),
 * also with its dots taken out: a placeholder split across labels
 * ("PH[0:30].PH[30:].example") is found as well (a label holds at most 63
 * characters, a placeholder up to SECRET_PH_LEN_MAX). Pure.
 */
const struct inject_secret *inject_mentions_name(const struct inject_secret *v, size_t n,
                                                 const char *name, size_t len, const char **where);

/*
 * inject_header_value — one request header value toward s's host with the
 * placeholder replaced by the value, also inside `Basic` credentials
 * (decoded, replaced, encoded again) when the header is `Authorization`
 * (`authorization`): elsewhere a "Basic" blob the run made up would have
 * the egress process re-encode the value at an offset of the run's choice. Writes out[out_size]
 * (not NUL-terminated) and *out_len. Returns 1 when something was replaced, 0 when the value holds
 * no placeholder (out untouched), -E2BIG. Pure.
 */
int inject_header_value(const struct inject_secret *s, bool authorization, const char *val,
                        size_t len, char *out, size_t out_size, size_t *out_len);

/*
 * inject_scrubbable — whether responses can be kept free of s's value: it
 * is at least INJECT_SCRUB_MIN bytes, and not a hex string short enough to
 * be HTTP framing (a chunk size has at most 16 hex digits, a Content-Length
 * at most 19 decimal ones: a hex-only value needs INJECT_SCRUB_HEX_MIN).
 * A run whose injected value is not scrubbable is refused. Pure.
 */
#define INJECT_SCRUB_MIN     8
#define INJECT_SCRUB_HEX_MIN 20
bool inject_scrubbable(const struct inject_secret *s);

/* Base64 (RFC 4648, padded). encode returns the length written (out needs
 * 4 * ceil(len / 3)); decode returns the length or -EINVAL. Pure. */
size_t inject_b64_encode(const unsigned char *in, size_t len, char *out);
int inject_b64_decode(const char *in, size_t len, unsigned char *out, size_t out_size);

/*
 * A streaming scrubber over response bytes: every occurrence of a
 * secret's value (and of its base64) is replaced by its placeholder (the
 * base64 by the placeholder's base64), cut or padded with '*' to the
 * length it replaces, wherever chunk boundaries fall: at
 * most the longest needle minus one byte is carried over to the next
 * feed. The needles are built once per process (inject_needles_new); each
 * stream has its own small state. Pure but for the needles' allocation.
 */
struct inject_needle {
        const char *find; /* value or its base64 (owned by the needles) */
        size_t find_len;
        char repl[INJECT_NEEDLE_MAX + 1]; /* placeholder or its base64, padded to find_len */
        size_t repl_len;
        /* a base64 form after 1 or 2 other bytes of its group: the character
         * before it carries the value's first byte's top `prev_bits` bits
         * (4 or 2; 0 for other needles) as its low bits: v_hi, replaced by
         * the placeholder's, p_hi, so not even those bits stay */
        uint8_t prev_bits, v_hi, p_hi;
};
#define INJECT_SHIFT_SIZE 4096 /* entries of the scan's skip table (4 KiB: in L1) */
struct inject_needles {
        struct inject_needle *n; /* owned */
        size_t count;
        size_t max_len;
        char *store; /* owned: the base64 forms */
        size_t store_len;
        uint8_t first[32]; /* bit b: some needle begins with byte b (the scan skips the rest) */
        /* The skip table of the scan (a Horspool scan on 2-byte blocks,
         * Wu and Manber's multi-pattern form): window = the first min_len
         * bytes of every needle (min_len >= INJECT_SCRUB_MIN); for the
         * block ending a window, shift[hash] is how far the next window may
         * start without passing over a needle's beginning (0: a needle may
         * begin here, verify). Colliding blocks keep the smallest shift. */
        size_t min_len;
        uint8_t shift[INJECT_SHIFT_SIZE];
};

/* inject_needles_new — for s[n] (values longer than INJECT_VALUE_MAX are
 * skipped). 0 or -ENOMEM. inject_needles_free releases (accepts zeroed). */
int inject_needles_new(const struct inject_secret *s, size_t n, struct inject_needles *nd);
void inject_needles_free(struct inject_needles *nd);

/*
 * inject_scrub_inplace — the same over a buffer that is written in place
 * (the egress process's response buffer): every needle starting at or
 * after `from` is overwritten with its replacement (always as long as the
 * needle: a value is replaced by its placeholder cut or padded with '*',
 * so HTTP framing is untouched). Returns how many bytes at the end must be
 * held back (a proper prefix of a needle: the next bytes decide); the
 * next call passes from = len - that. Values shorter than 8 bytes or of
 * hex digits only are not scrubbed (they could be framing). Pure.
 */
size_t inject_scrub_inplace(const struct inject_needles *nd, char *buf, size_t len, size_t from,
                            uint64_t *replaced);

/* The same scan a byte at a time, without the skip table: the reference
 * the fuzzer holds inject_scrub_inplace to (identical bytes and hold). */
size_t inject_scrub_inplace_bytewise(const struct inject_needles *nd, char *buf, size_t len,
                                     size_t from, uint64_t *replaced);

/*
 * inject_scrub_tail — the end of a stream whose last `held` bytes
 * (inject_scrub_inplace's return) are a proper prefix of a needle: when
 * held >= INJECT_SCRUB_MIN they are overwritten with the same prefix of
 * that needle's replacement (a value cut short by the end of a response —
 * a Range request on a reflecting endpoint — must not reach the run
 * either); shorter prefixes stay (they could be anything). Returns 1 when
 * replaced, else 0. Pure.
 */
int inject_scrub_tail(const struct inject_needles *nd, char *buf, size_t len, size_t held,
                      uint64_t *replaced);

/* The needles there can be: per binding its value and its base64 at three
 * alignments, two forms each (inject_needles_new). */
#define INJECT_NEEDLES_MAX (7 * INJECT_MAX)

/*
 * What went out when a stream paused with a possible beginning of a value
 * held (its hold timed out: inject_scrub_tail), for the bytes that come
 * next: the needles those held bytes begin (bit k of `mask` for needle k;
 * `any` when there is one) and how many of their bytes went out (`done`).
 * A value split by a pause is then still caught: its rest is overwritten
 * when it comes.
 */
struct inject_resume {
        bool any;
        size_t done;
        uint64_t mask[(INJECT_NEEDLES_MAX + 63) / 64];
};

/*
 * inject_scrub_pending — the resume state for a stream whose last `held`
 * bytes of buf[0, len) go out unfinished (as inject_scrub_tail takes
 * them): the needles they are a proper prefix of. Returns false (and *r
 * empty) when there is none. Pure.
 */
bool inject_scrub_pending(const struct inject_needles *nd, const char *buf, size_t len, size_t held,
                          struct inject_resume *r);

/*
 * inject_scrub_resume — the next bytes buf[0, len) of a stream paused as
 * *r says: where they continue one of its needles, their part of it is
 * overwritten with the same part of the needle's replacement, once at
 * least INJECT_SCRUB_MIN of the needle's bytes are in (what went out
 * before that stays: it could be anything). Returns how many bytes at the
 * front of buf were the needle's (the scan goes on after them); *r is
 * left set when buf ended still inside it, else emptied. Pure.
 */
size_t inject_scrub_resume(const struct inject_needles *nd, struct inject_resume *r, char *buf,
                           size_t len, uint64_t *replaced);
