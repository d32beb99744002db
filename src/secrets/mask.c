/*
 * mask.c — streaming masking of secret values in a run's output, and
 * redaction of run-controlled strings before they are recorded.
 *
 * Design. The masker sees the output as one stream cut into arbitrary
 * reads. At every position it decides, from the bytes at and after it:
 *
 *   - the byte begins no value (its bit is clear in `first`): emit it;
 *   - fewer than max_len bytes are left, they are a proper prefix of some
 *     value and more output may come: stop, hold back everything from here
 *     (the next read decides). The held-back tail is shorter than max_len;
 *   - some value matches completely: emit MASK_TEXT for the longest one and
 *     continue after it;
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
 * itself, so a 64 KiB read is not copied. Values are kept sorted by first
 * byte, then longest first, so the first full match at a position is the
 * longest one.
 *
 * Cost: positions whose byte begins no value cost one bit test. At the
 * others only the values beginning with that byte are compared (v[] is
 * sorted by first byte; a binary search finds them), longest first; for
 * realistic, high-entropy secrets each memcmp fails within a byte or two.
 * Secrets made of one repeated byte cost up to (values x length) per
 * position; they are not worth masking, and the operator chooses the
 * values, not the run. A masker never holds more than max_len - 1 bytes.
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

size_t masker_init(struct masker *m, const struct mask_value *v, size_t n)
{
        memset(m, 0, sizeof *m);
        for (size_t i = 0; i < n && m->n < MASK_VALUES_MAX; i++) {
                if (!value_usable(&v[i]))
                        continue;
                /*
                 * insertion keeps v[] sorted by first byte, then longest first
                 * (stable among equals): the values that can match at a
                 * position are one run of v[], tried longest first
                 */
                size_t k = m->n;
                while (k > 0 && (m->v[k - 1].p[0] > v[i].p[0] ||
                                 (m->v[k - 1].p[0] == v[i].p[0] && m->v[k - 1].len < v[i].len))) {
                        m->v[k] = m->v[k - 1];
                        k--;
                }
                m->v[k] = v[i];
                m->n++;
                if (v[i].len > m->max_len)
                        m->max_len = v[i].len;
                bit_set(m->first, v[i].p[0]);
        }
        return m->n;
}

/* The first index in v[] of the values beginning with byte c (binary search). */
static size_t group_start(const struct masker *m, unsigned char c)
{
        size_t lo = 0, hi = m->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (m->v[mid].p[0] < c)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/* Is p[0..rem) (rem >= 1) a proper prefix of some value? */
static bool prefix_of_some(const struct masker *m, const unsigned char *p, size_t rem)
{
        for (size_t k = group_start(m, p[0]); k < m->n && m->v[k].p[0] == p[0]; k++)
                if (m->v[k].len > rem && memcmp(m->v[k].p, p, rem) == 0)
                        return true;
        return false;
}

/* The length of the longest value that matches at p[0..rem) (rem >= 1), or 0. */
static size_t longest_match(const struct masker *m, const unsigned char *p, size_t rem)
{
        for (size_t k = group_start(m, p[0]); k < m->n && m->v[k].p[0] == p[0]; k++)
                if (m->v[k].len <= rem && memcmp(m->v[k].p, p, m->v[k].len) == 0)
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
