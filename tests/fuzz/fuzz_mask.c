/*
 * fuzz_mask.c — libFuzzer target for output masking and audit redaction
 * (src/secrets/mask.c).
 *
 * The input describes a case:
 *
 *   byte 0        number of values, 1 + b % 4
 *   byte 1        seed of the chunking
 *   per value     a length byte (b % 16: values under MASK_VALUE_MIN are
 *                 ignored, which is exercised too), then that many bytes
 *   the rest      the stream; a byte 0xf0..0xf3 inserts value (b & 3) % n;
 *                 a byte 0xf4..0xf7 followed by a byte e inserts an encoding
 *                 of value (b & 3) % n: e % 8 = 0 hex, 1 HEX, 2 URL
 *                 percent-encoding, 3 upper-cased, 4..6 base64 of the value
 *                 behind e % 8 - 4 other bytes (its offset mod 3), 7 the
 *                 same in base64url behind (e >> 3) % 3 bytes
 *
 * Value bytes are mapped to digits, q/Q/x/X/z/Z, '-', '/', '%' and bytes
 * 0x80-0xff; names are "A".."D". No pattern can then overlap MASK_TEXT or
 * a "[secret:NAME]" marker, so after masking or redaction no value (nor,
 * after masking, any encoded pattern) may be left anywhere in the output.
 *
 * The reference builds the patterns itself (hex, URL, the base64 cores,
 * by encoding the value behind 0, 1 or 2 bytes and keeping the characters
 * that depend on the value alone) and matches them naively with the
 * masker's folding (mask_fold), so the masker's own encoders and matcher
 * are both checked against a second implementation.
 *
 * Checked: the stream fed in pseudo-random chunks (some empty) gives exactly
 * the output of one final feed; that equals the naive leftmost-longest
 * reference; no pattern survives masking; redact leaves no value, returns
 * 0 exactly when the reference finds nothing, and stays within its bound;
 * on a string ending in REDACT_CUT_MARK it keeps the mark and leaves no
 * value's start before it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "secrets/mask.h"

#define NV_MAX     4
#define STREAM_MAX (64 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char fold(unsigned char c)
{
        return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

static bool kept(const struct mask_value *v)
{
        return v->len >= MASK_VALUE_MIN && v->len <= MASK_VALUE_MAX;
}

/* Does n[0..nl) occur in h[0..hl)? (with ASCII case folding if ci) */
static bool occurs(const unsigned char *h, size_t hl, const unsigned char *n, size_t nl, bool ci)
{
        for (size_t i = 0; nl <= hl && i <= hl - nl; i++) {
                size_t j = 0;
                while (j < nl && (ci ? fold(h[i + j]) == fold(n[j]) : h[i + j] == n[j]))
                        j++;
                if (j == nl)
                        return true;
        }
        return false;
}

/* ---- the reference patterns, built independently of mask.c ---- */

#define PAT_MAX (NV_MAX * MASK_FORMS)
#define PAT_LEN 64

struct pat {
        unsigned char p[PAT_LEN];
        size_t len;
};

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* plain base64 (padded) of s[0..n) into out; returns the length */
static size_t b64(const unsigned char *s, size_t n, unsigned char *out)
{
        size_t o = 0;
        for (size_t i = 0; i < n; i += 3) {
                unsigned w = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) |
                             (i + 2 < n ? s[i + 2] : 0);
                out[o++] = (unsigned char)B64[w >> 18 & 63];
                out[o++] = (unsigned char)B64[w >> 12 & 63];
                out[o++] = i + 1 < n ? (unsigned char)B64[w >> 6 & 63] : '=';
                out[o++] = i + 2 < n ? (unsigned char)B64[w & 63] : '=';
        }
        return o;
}

static bool unreserved(unsigned char c)
{
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '.' || c == '_' || c == '~';
}

static size_t encode(const struct mask_value *v, unsigned form, unsigned char *out)
{
        static const char hx[] = "0123456789abcdef", HX[] = "0123456789ABCDEF";
        unsigned char tmp[3 + 16];
        size_t o = 0;

        switch (form) {
        case 0:
        case 1:
                for (size_t i = 0; i < v->len; i++) {
                        out[o++] = (unsigned char)(form ? HX : hx)[v->p[i] >> 4];
                        out[o++] = (unsigned char)(form ? HX : hx)[v->p[i] & 15];
                }
                return o;
        case 2:
                for (size_t i = 0; i < v->len; i++)
                        if (unreserved(v->p[i]))
                                out[o++] = v->p[i];
                        else {
                                out[o++] = '%';
                                out[o++] = (unsigned char)HX[v->p[i] >> 4];
                                out[o++] = (unsigned char)HX[v->p[i] & 15];
                        }
                return o;
        case 3:
                for (size_t i = 0; i < v->len; i++)
                        out[o++] = v->p[i] >= 'a' && v->p[i] <= 'z' ? v->p[i] - 32 : v->p[i];
                return o;
        default: /* base64 behind 0..2 bytes "w" (4..6), url-safe (8..10) */
                memcpy(tmp, "www", 3);
                memcpy(tmp + (form & 3), v->p, v->len);
                o = b64(tmp, (form & 3) + v->len, out);
                if (form >= 8)
                        for (size_t i = 0; i < o; i++)
                                out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
                return o;
        }
}

/* The patterns the masker is meant to keep for v[0..nv): every kept value,
 * its hex, its URL form when different, its base64 cores of >= MIN chars. */
static size_t patterns(const struct mask_value *v, size_t nv, struct pat *pt)
{
        size_t n = 0;
        for (size_t k = 0; k < nv; k++) {
                if (!kept(&v[k]))
                        continue;
                memcpy(pt[n].p, v[k].p, v[k].len);
                pt[n++].len = v[k].len;
                pt[n].len = encode(&v[k], 0, pt[n].p);
                n++;
                pt[n].len = encode(&v[k], 2, pt[n].p);
                if (pt[n].len > v[k].len)
                        n++;
                for (unsigned a = 0; a < 3; a++) {
                        /* base64 of the value behind a zero bytes, then zero
                         * bytes: the characters whose 6 bits lie inside it */
                        unsigned char tmp[3 + 16 + 3] = {0}, e[32];
                        memcpy(tmp + a, v[k].p, v[k].len);
                        (void)b64(tmp, a + v[k].len + 3, e);
                        size_t from = (8 * a + 5) / 6, to = 8 * (a + v[k].len) / 6;
                        if (to - from >= MASK_B64_CORE_MIN) {
                                memcpy(pt[n].p, e + from, to - from);
                                pt[n++].len = to - from;
                        }
                }
        }
        return n;
}

static bool eq_f(const unsigned char *a, const unsigned char *b, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (mask_fold(a[i]) != mask_fold(b[i]))
                        return false;
        return true;
}

/* Does a pattern occur in h[0..hl), compared folded? */
static bool occurs_f(const unsigned char *h, size_t hl, const struct pat *p)
{
        for (size_t i = 0; p->len <= hl && i <= hl - p->len; i++)
                if (eq_f(h + i, p->p, p->len))
                        return true;
        return false;
}

/* The naive reference of one final feed; returns the output length and the matches. */
static size_t reference(const struct pat *pt, size_t np, const unsigned char *s, size_t len,
                        unsigned char *out, size_t *matches)
{
        size_t o = 0, i = 0;

        *matches = 0;
        while (i < len) {
                size_t best = 0;
                for (size_t k = 0; k < np; k++)
                        if (pt[k].len <= len - i && pt[k].len > best &&
                            eq_f(pt[k].p, s + i, pt[k].len))
                                best = pt[k].len;
                if (best) {
                        memcpy(out + o, MASK_TEXT, 3);
                        o += 3;
                        i += best;
                        (*matches)++;
                } else {
                        out[o++] = s[i++];
                }
        }
        return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char alpha[] = "0123456789qQzZxX-/%";
        static const char *const names[NV_MAX] = {"A", "B", "C", "D"};
        unsigned char vals[NV_MAX][16];
        struct mask_value v[NV_MAX];
        size_t p = 2;

        if (size < 2)
                return 0;
        size_t nv = 1 + data[0] % NV_MAX;
        uint32_t seed = data[1] * 2654435761u + 1;
        for (size_t k = 0; k < nv; k++) {
                size_t l = p < size ? data[p++] % 16 : 0;
                for (size_t j = 0; j < l; j++) {
                        unsigned char b = p < size ? data[p++] : 0;
                        vals[k][j] = b & 0x80 ? b : (unsigned char)alpha[b % (sizeof alpha - 1)];
                }
                v[k] = (struct mask_value){.p = vals[k], .len = l, .name = names[k]};
        }

        unsigned char *s = malloc(STREAM_MAX + PAT_LEN);
        size_t len = 0;
        if (!s)
                return 0;
        for (; p < size && len < STREAM_MAX; p++) {
                if (data[p] >= 0xf0 && data[p] <= 0xf3) {
                        const struct mask_value *x = &v[(data[p] & 3) % nv];
                        memcpy(s + len, x->p, x->len);
                        len += x->len;
                } else if (data[p] >= 0xf4 && data[p] <= 0xf7 && p + 1 < size) {
                        const struct mask_value *x = &v[(data[p] & 3) % nv];
                        unsigned e = data[++p] % 8;
                        unsigned form = e < 4 ? e : e < 7 ? e : 8 + (data[p] >> 3) % 3;
                        len += encode(x, form, s + len);
                } else {
                        s[len++] = data[p];
                }
        }

        unsigned char *one = malloc(len + MASK_VALUE_MAX);
        unsigned char *many = malloc(len + MASK_VALUE_MAX);
        unsigned char *ref = malloc(len + 1);
        struct masker *m = malloc(sizeof *m);
        if (!one || !many || !ref || !m)
                goto out;

        /* one final feed, against the reference */
        masker_init(m, v, nv);
        size_t n1 = masker_feed(m, s, len, one, true), matches;
        if (m->n_pending != 0)
                abort();
        struct pat pt[PAT_MAX];
        size_t np = patterns(v, nv, pt);
        size_t nr = reference(pt, np, s, len, ref, &matches);
        if (n1 != nr || memcmp(one, ref, n1) != 0)
                abort();
        for (size_t k = 0; k < np; k++)
                if (occurs_f(one, n1, &pt[k]))
                        abort();

        /* chunked: the same bytes */
        masker_init(m, v, nv);
        size_t o = 0, i = 0;
        while (i < len) {
                seed = seed * 1103515245u + 12345u;
                size_t c = (seed >> 16) % ((seed & 1) ? 8 : 300);
                if (c > len - i)
                        c = len - i;
                size_t w = masker_feed(m, s + i, c, many + o, false);
                if (w > c + MASK_VALUE_MAX || m->n_pending >= MASK_VALUE_MAX)
                        abort();
                o += w;
                i += c;
                if (o > n1)
                        abort();
        }
        o += masker_feed(m, NULL, 0, many + o, true);
        if (o != n1 || memcmp(one, many, o) != 0)
                abort();
        masker_wipe(m);

        /* redact */
        char *r = NULL;
        size_t rl = 0;
        int rr = redact((const char *)s, len, v, nv, &r, &rl);
        if (rr < 0) {
                if (rr != -ENOMEM)
                        abort();
                goto out;
        }
        const unsigned char *res = rr ? (const unsigned char *)r : s;
        size_t res_len = rr ? rl : len;
        if (rr == 0 && r != NULL)
                abort();
        /* every match replaces at least MASK_VALUE_MIN bytes by "[secret:X]" */
        if (rr == 1 && (r[rl] != '\0' || rl > len + len / MASK_VALUE_MIN * (9 + 1 + 1)))
                abort();
        /* a value present is redacted */
        for (size_t k = 0; k < nv; k++)
                if (kept(&v[k]) && occurs(s, len, v[k].p, v[k].len, false) && rr == 0)
                        abort();
        for (size_t k = 0; k < nv; k++)
                if (kept(&v[k]) && occurs(res, res_len, v[k].p, v[k].len, true))
                        abort();
        /* a string its recorder cut (it ends in REDACT_CUT_MARK): the result
         * ends in the mark too, and when nothing was redacted no value's
         * start (MASK_VALUE_MIN bytes or more) was left right before it */
        const size_t ml = sizeof REDACT_CUT_MARK - 1;
        if (len >= ml && memcmp(s + len - ml, REDACT_CUT_MARK, ml) == 0) {
                if (res_len < ml || memcmp(res + res_len - ml, REDACT_CUT_MARK, ml) != 0)
                        abort();
                for (size_t k = 0; rr == 0 && k < nv; k++)
                        for (size_t l = MASK_VALUE_MIN;
                             kept(&v[k]) && l < v[k].len && l <= len - ml; l++)
                                if (occurs(s + len - ml - l, l, v[k].p, l, true))
                                        abort();
        }
        free(r);
out:
        free(s);
        free(one);
        free(many);
        free(ref);
        free(m);
        return 0;
}
