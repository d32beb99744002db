/*
 * mask.c — streaming masking of secret values in a run's output, and
 * redaction of run-controlled strings before they are recorded.
 *
 * Design. masker_init turns the values into patterns: each value itself
 * and, for values up to MASK_ENCODE_VALUE_MAX bytes, its hex form, its URL
 * percent-encoding and its three base64 cores (mask.h), written into the
 * masker's own enc[] (a fixed MASK_ENCODED_BYTES: no allocation, nothing
 * outside the caller's locked memory). Patterns are compared through
 * mask_fold (ASCII case, the base64url alphabet), which covers upper- and
 * lower-cased values, upper-case hex and URL-safe base64 without more
 * patterns.
 *
 * The masker sees the output as one stream cut into arbitrary reads. At
 * every position it decides, from the bytes at and after it:
 *
 *   - the byte begins no pattern (its bit is clear in `first`): emit it;
 *   - fewer than max_len bytes are left, they are a proper prefix of some
 *     pattern and more output may come: stop, hold back everything from
 *     here (the next read decides). The held-back tail is shorter than
 *     max_len;
 *   - some pattern matches completely: emit MASK_TEXT for the longest one
 *     and continue after it;
 *   - otherwise emit the byte and move on one.
 *
 * A decision at a position never depends on bytes more than max_len ahead,
 * and a position is only decided once every byte that could change the
 * decision has arrived (a longer value can match only if the bytes present
 * are a proper prefix of it), so any chunking of a stream produces exactly
 * the output of one final feed of the whole stream. The unit test and the
 * fuzz target check that property.
 *
 * The held-back bytes and the first max_len bytes of the next read are
 * joined in a stack buffer to decide the positions inside the held-back
 * part; from the first position past it, scanning continues in the read
 * itself, so a 64 KiB read is not copied. Patterns are kept sorted by
 * folded first byte, then longest first, so the first full match at a
 * position is the longest one.
 *
 * Cost: positions whose byte begins no pattern cost one bit test. At the
 * others only the patterns beginning with that (folded) byte are compared
 * (v[] is sorted; a binary search finds them), longest first; for
 * realistic, high-entropy secrets each compare fails within a byte or two,
 * and output made of base64 or hex, where most bytes begin some pattern,
 * costs about MASK_FORMS x values / 16 short compares per byte — linear in
 * the output, never quadratic. Secrets made of one repeated byte cost up
 * to (patterns x length) per position; they are not worth masking, and the
 * operator chooses the values, not the run. A masker never holds more than
 * max_len - 1 bytes.
 *
 * redact applies the same leftmost-longest rule to a whole string, with
 * ASCII case folding, in two passes (measure, then fill) so exactly one
 * allocation of the exact size is made.
 *
 * Threat notes: the masker copies at most max_len - 1 bytes of output
 * (possibly the start of a secret) into its own pending[] and a stack
 * buffer; both are wiped (the stack buffer after every call, pending[] by
 * masker_wipe). Masking is best effort, see mask.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "secrets/mask.h"

static bool value_usable(const struct mask_value *v)
{
        return v->p && v->len >= MASK_VALUE_MIN && v->len <= MASK_VALUE_MAX;
}

static void bit_set(unsigned char set[static 32], unsigned char c)
{
        set[c >> 3] |= (unsigned char)(1u << (c & 7));
}

static bool bit_test(const unsigned char set[static 32], unsigned char c)
{
        return set[c >> 3] & (1u << (c & 7));
}

static unsigned char ascii_lower(unsigned char c)
{
        return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

unsigned char mask_fold(unsigned char c)
{
        return c == '-' ? '+' : c == '_' ? '/' : ascii_lower(c);
}

/* a[0..n) and b[0..n) are equal after mask_fold */
static bool eq_folded(const unsigned char *a, const unsigned char *b, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (a[i] != b[i] && mask_fold(a[i]) != mask_fold(b[i]))
                        return false;
        return true;
}

/* ---- the patterns ---- */

static const char hexdig[] = "0123456789abcdef";
static const char b64dig[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* RFC 3986 unreserved: what percent-encoding leaves as is */
static bool url_plain(unsigned char c)
{
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '.' || c == '_' || c == '~';
}

/*
 * Add p[0..len) as a pattern unless it is out of bounds or already there
 * (compared folded). Returns true if it was added.
 */
static bool add_pattern(struct masker *m, const unsigned char *p, size_t len)
{
        if (len < MASK_VALUE_MIN || len > MASK_VALUE_MAX || m->n >= MASK_PATTERNS_MAX)
                return false;
        for (size_t k = 0; k < m->n; k++)
                if (m->v[k].len == len && eq_folded(m->v[k].p, p, len))
                        return false;
        m->v[m->n++] = (struct mask_value){.p = p, .len = len};
        if (len > m->max_len)
                m->max_len = len;
        return true;
}

/* Room for `len` more encoded bytes? Then where they go. */
static unsigned char *enc_room(struct masker *m, size_t len)
{
        return len <= sizeof m->enc - m->enc_used ? m->enc + m->enc_used : NULL;
}

/* Keep the `len` bytes just written at enc_room() as a pattern. */
static void enc_keep(struct masker *m, unsigned char *p, size_t len)
{
        if (add_pattern(m, p, len))
                m->enc_used += len;
        else
                explicit_bzero(p, len);
}

/*
 * The base64 characters of (a zero bytes ++ v[0..len)) whose 6 bits all
 * lie within v: the ones any base64 encoding of a stream holding v at an
 * offset ≡ a (mod 3) contains, whatever surrounds it. Written to out
 * (room for 4 * len / 3 + 1); returns how many.
 */
static size_t b64_core(const unsigned char *v, size_t len, unsigned a, unsigned char *out)
{
        size_t from = (8 * (size_t)a + 5) / 6, to = (8 * ((size_t)a + len)) / 6, o = 0;

        for (size_t k = from; k < to; k++) {
                size_t bit = 6 * k, byte = bit / 8;
                /* bytes of the shifted stream: a zero bytes, then v */
                unsigned hi = byte >= a ? v[byte - a] : 0;
                unsigned lo = byte + 1 >= a && byte + 1 - a < len ? v[byte + 1 - a] : 0;
                unsigned w = (hi << 8) | lo;
                out[o++] = (unsigned char)b64dig[(w >> (10 - bit % 8)) & 63];
        }
        return o;
}

/* The encoded patterns of v: false if they did not all fit. */
static bool add_encodings(struct masker *m, const struct mask_value *v)
{
        unsigned char *p;
        size_t n = 0;

        if (v->len > MASK_ENCODE_VALUE_MAX || m->n_encoded >= MASK_ENCODED_VALUES)
                return false;
        m->n_encoded++;
        /* hex (upper case too: matching folds case) */
        if (!(p = enc_room(m, 2 * v->len)))
                return false;
        for (size_t i = 0; i < v->len; i++) {
                p[2 * i] = (unsigned char)hexdig[v->p[i] >> 4];
                p[2 * i + 1] = (unsigned char)hexdig[v->p[i] & 15];
        }
        enc_keep(m, p, 2 * v->len);
        /* URL percent-encoding, when it differs from the value */
        for (size_t i = 0; i < v->len; i++)
                n += url_plain(v->p[i]) ? 1 : 3;
        if (n > v->len) {
                if (!(p = enc_room(m, n)))
                        return false;
                n = 0;
                for (size_t i = 0; i < v->len; i++) {
                        if (url_plain(v->p[i])) {
                                p[n++] = v->p[i];
                                continue;
                        }
                        p[n++] = '%';
                        p[n++] = (unsigned char)hexdig[v->p[i] >> 4];
                        p[n++] = (unsigned char)hexdig[v->p[i] & 15];
                }
                enc_keep(m, p, n);
        }
        /* base64 at the three offsets (URL-safe too: matching folds -_ to +/) */
        for (unsigned a = 0; a < 3; a++) {
                if (!(p = enc_room(m, 4 * v->len / 3 + 2)))
                        return false;
                n = b64_core(v->p, v->len, a, p);
                if (n >= MASK_B64_CORE_MIN)
                        enc_keep(m, p, n);
                else
                        explicit_bzero(p, n);
        }
        return true;
}

/* v[] sorted by folded first byte, then longest first: the patterns that
 * can match at a position are one run of v[], tried longest first. */
static bool pattern_before(const struct mask_value *x, const struct mask_value *y)
{
        unsigned char fx = mask_fold(x->p[0]), fy = mask_fold(y->p[0]);
        return fx < fy || (fx == fy && x->len > y->len);
}

size_t masker_init(struct masker *m, const struct mask_value *v, size_t n)
{
        memset(m, 0, sizeof *m);
        /* the values first, so a value is never crowded out by encodings */
        for (size_t i = 0; i < n && m->n_values < MASK_VALUES_MAX; i++)
                if (value_usable(&v[i])) {
                        (void)add_pattern(m, v[i].p, v[i].len);
                        m->n_values++;
                }
        size_t kept = 0;
        for (size_t i = 0; i < n && kept < m->n_values; i++) {
                if (!value_usable(&v[i]))
                        continue;
                kept++;
                m->n_plain_only += !add_encodings(m, &v[i]);
        }
        /* insertion sort: at most MASK_PATTERNS_MAX, once per run */
        for (size_t i = 1; i < m->n; i++) {
                struct mask_value x = m->v[i];
                size_t k = i;
                while (k > 0 && pattern_before(&x, &m->v[k - 1])) {
                        m->v[k] = m->v[k - 1];
                        k--;
                }
                m->v[k] = x;
        }
        /* every byte that folds to a pattern's folded first byte */
        unsigned char f[32] = {0};
        for (size_t k = 0; k < m->n; k++)
                bit_set(f, mask_fold(m->v[k].p[0]));
        for (unsigned c = 0; c < 256; c++)
                if (bit_test(f, mask_fold((unsigned char)c)))
                        bit_set(m->first, (unsigned char)c);
        return m->n_values;
}

/* The first index in v[] of the patterns beginning with c, folded (binary search). */
static size_t group_start(const struct masker *m, unsigned char c)
{
        size_t lo = 0, hi = m->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (mask_fold(m->v[mid].p[0]) < c)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/* Is p[0..rem) (rem >= 1) a proper prefix of some pattern? */
static bool prefix_of_some(const struct masker *m, const unsigned char *p, size_t rem)
{
        unsigned char c = mask_fold(p[0]);
        for (size_t k = group_start(m, c); k < m->n && mask_fold(m->v[k].p[0]) == c; k++)
                if (m->v[k].len > rem && eq_folded(m->v[k].p, p, rem))
                        return true;
        return false;
}

/* The length of the longest pattern that matches at p[0..rem) (rem >= 1), or 0. */
static size_t longest_match(const struct masker *m, const unsigned char *p, size_t rem)
{
        unsigned char c = mask_fold(p[0]);
        for (size_t k = group_start(m, c); k < m->n && mask_fold(m->v[k].p[0]) == c; k++)
                if (m->v[k].len <= rem && eq_folded(m->v[k].p, p, m->v[k].len))
                        return m->v[k].len; /* longest first within the group */
        return 0;
}

/*
 * Decide the positions i.. (up to `limit`) of buf, where buf[0..len) is all
 * the data there is so far. Appends the output at out + *o. Returns the
 * position reached: >= limit (a match may jump past it), or the position
 * from which bytes must be held back, with *hold set.
 */
static size_t scan(const struct masker *m, const unsigned char *buf, size_t len, size_t i,
                   size_t limit, bool final, unsigned char *out, size_t *o, bool *hold)
{
        *hold = false;
        while (i < limit) {
                size_t j = i;
                while (j < limit && !bit_test(m->first, buf[j]))
                        j++;
                if (j > i) {
                        memcpy(out + *o, buf + i, j - i);
                        *o += j - i;
                        i = j;
                        if (i >= limit)
                                break;
                }
                size_t rem = len - i;
                if (!final && rem < m->max_len && prefix_of_some(m, buf + i, rem)) {
                        *hold = true;
                        return i;
                }
                size_t l = longest_match(m, buf + i, rem);
                if (l > 0) {
                        memcpy(out + *o, MASK_TEXT, sizeof MASK_TEXT - 1);
                        *o += sizeof MASK_TEXT - 1;
                        i += l;
                } else {
                        out[(*o)++] = buf[i++];
                }
        }
        return i;
}

size_t masker_feed(struct masker *m, const void *in_, size_t n, void *out_, bool final)
{
        const unsigned char *in = in_;
        unsigned char *out = out_;
        size_t o = 0, i = 0;
        bool hold;

        if (m->n_pending > 0) {
                /*
                 * Decide the held-back positions over pending ++ in[0..max_len):
                 * a value starting in pending ends within that. If fewer than
                 * max_len bytes came, the stage holds all data there is, which
                 * is the only case where a hold can happen in it.
                 */
                unsigned char stage[2 * MASK_VALUE_MAX];
                size_t np = m->n_pending;
                size_t take = n < m->max_len ? n : m->max_len;
                size_t sl = np + take;

                memcpy(stage, m->pending, np);
                if (take > 0)
                        memcpy(stage + np, in, take);
                i = scan(m, stage, sl, 0, np, final, out, &o, &hold);
                if (hold) {
                        memmove(m->pending, stage + i, sl - i);
                        m->n_pending = sl - i;
                        if (m->n_pending < np) /* no stale copy of secret bytes behind it */
                                explicit_bzero(m->pending + m->n_pending, np - m->n_pending);
                        explicit_bzero(stage, sl);
                        return o;
                }
                explicit_bzero(stage, sl);
                explicit_bzero(m->pending, np);
                m->n_pending = 0;
                i -= np;
        }
        if (n > 0) {
                i = scan(m, in, n, i, n, final, out, &o, &hold);
                if (hold) {
                        memcpy(m->pending, in + i, n - i);
                        m->n_pending = n - i;
                }
        }
        return o;
}

void masker_wipe(struct masker *m)
{
        explicit_bzero(m, sizeof *m);
}

/* s[0..l) equals the first l bytes of v, ASCII case aside */
static bool starts_value(const unsigned char *s, size_t l, const struct mask_value *v)
{
        size_t j = 0;
        while (j < l && ascii_lower(v->p[j]) == ascii_lower(s[j]))
                j++;
        return j == l;
}

/* The length of the longest value matching s[0..rem) without regard to ASCII case, and which. */
static size_t redact_match(const unsigned char *s, size_t rem, const struct mask_value *v, size_t n,
                           size_t *which)
{
        size_t best = 0;

        for (size_t k = 0; k < n; k++) {
                if (!value_usable(&v[k]) || v[k].len > rem || v[k].len <= best)
                        continue;
                if (starts_value(s, v[k].len, &v[k])) {
                        best = v[k].len;
                        *which = k;
                }
        }
        return best;
}

/*
 * One pass of redact: with out == NULL, measure; else fill. Returns the
 * output length (without NUL) and the number of matches in *matches, or
 * SIZE_MAX if the length does not fit a size_t.
 */
static size_t redact_pass(const unsigned char *s, size_t len, const struct mask_value *v, size_t n,
                          const unsigned char first[static 32], char *out, size_t *matches)
{
        size_t o = 0, i = 0;

        *matches = 0;
        while (i < len) {
                size_t which = 0, l = 0;
                if (bit_test(first, ascii_lower(s[i])))
                        l = redact_match(s + i, len - i, v, n, &which);
                if (l == 0) {
                        if (out)
                                out[o] = (char)s[i];
                        o++;
                        i++;
                        continue;
                }
                const char *name = v[which].name ? v[which].name : "";
                size_t nl = strlen(name), add = sizeof "[secret:]" - 1;
                if (__builtin_add_overflow(add, nl, &add) || __builtin_add_overflow(o, add, &o))
                        return SIZE_MAX;
                if (out) {
                        char *p = out + o - add;
                        memcpy(p, "[secret:", 8);
                        memcpy(p + 8, name, nl);
                        p[8 + nl] = ']';
                }
                (*matches)++;
                i += l;
        }
        return o;
}

/*
 * Where a cut may have left the start of a value at the end of s[0..len):
 * the earliest t such that s[t..len), at least MASK_VALUE_MIN bytes, is a
 * proper prefix of a usable value (*which: that value), moved left over
 * any whole value that t would split. len if there is none.
 */
static size_t cut_tail(const unsigned char *s, size_t len, const struct mask_value *v, size_t n,
                       size_t *which)
{
        size_t t = len;

        for (size_t k = 0; k < n; k++) {
                if (!value_usable(&v[k]))
                        continue;
                size_t from = len > v[k].len - 1 ? len - (v[k].len - 1) : 0;
                for (size_t i = from; i < t && len - i >= MASK_VALUE_MIN; i++)
                        if (starts_value(s + i, len - i, &v[k])) {
                                t = i;
                                *which = k;
                                break;
                        }
        }
        for (bool moved = t < len; moved;) {
                moved = false;
                for (size_t k = 0; k < n && !moved; k++) {
                        if (!value_usable(&v[k]))
                                continue;
                        size_t from = t > v[k].len - 1 ? t - (v[k].len - 1) : 0;
                        for (size_t a = from; a < t && a + v[k].len <= len; a++)
                                if (starts_value(s + a, v[k].len, &v[k])) {
                                        t = a;
                                        moved = true;
                                        break;
                                }
                }
        }
        return t;
}

static int redact_plain(const unsigned char *s, size_t len, const struct mask_value *v, size_t n,
                        char **ret, size_t *ret_len);

int redact(const char *s_, size_t len, const struct mask_value *v, size_t n, char **ret,
           size_t *ret_len)
{
        const unsigned char *s = (const unsigned char *)s_;
        const size_t ml = sizeof REDACT_CUT_MARK - 1;
        size_t which = 0, t;

        *ret = NULL;
        if (ret_len)
                *ret_len = 0;
        if (len < ml || memcmp(s + len - ml, REDACT_CUT_MARK, ml) != 0 ||
            (t = cut_tail(s, len - ml, v, n, &which)) == len - ml)
                return redact_plain(s, len, v, n, ret, ret_len);
        /* s[0..t) redacted, then the value's name for the rest, then the mark */
        char *head = NULL;
        size_t hl = 0;
        int r = redact_plain(s, t, v, n, &head, &hl);
        if (r < 0)
                return r;
        if (r == 0)
                hl = t; /* nothing matched before the tail: s[0..t) as is */
        const char *name = v[which].name ? v[which].name : "";
        size_t nl = strlen(name), total = hl + 9 + nl + ml;
        char *buf = malloc(total + 1);
        if (!buf) {
                free(head);
                return -ENOMEM;
        }
        memcpy(buf, head ? head : (const char *)s, hl);
        memcpy(buf + hl, "[secret:", 8);
        memcpy(buf + hl + 8, name, nl);
        buf[hl + 8 + nl] = ']';
        memcpy(buf + hl + 9 + nl, REDACT_CUT_MARK, ml);
        buf[total] = '\0';
        free(head);
        *ret = buf;
        if (ret_len)
                *ret_len = total;
        return 1;
}

static int redact_plain(const unsigned char *s, size_t len, const struct mask_value *v, size_t n,
                        char **ret, size_t *ret_len)
{
        unsigned char first[32] = {0};
        size_t matches, total;

        *ret = NULL;
        if (ret_len)
                *ret_len = 0;
        for (size_t k = 0; k < n; k++)
                if (value_usable(&v[k]))
                        bit_set(first, ascii_lower(v[k].p[0]));
        total = redact_pass(s, len, v, n, first, NULL, &matches);
        if (total == SIZE_MAX)
                return -ENOMEM;
        if (matches == 0)
                return 0;
        char *buf = malloc(total + 1);
        if (!buf)
                return -ENOMEM;
        (void)redact_pass(s, len, v, n, first, buf, &matches);
        buf[total] = '\0';
        *ret = buf;
        if (ret_len)
                *ret_len = total;
        return 1;
}
