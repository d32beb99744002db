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
 *   the rest      the stream; a byte 0xf0..0xf3 inserts value (b & 3) % n
 *
 * Value bytes are mapped to digits, q/Q/x/X/z/Z and bytes 0x80-0xff; names
 * are "A".."D". No value can then overlap MASK_TEXT or a "[secret:NAME]"
 * marker, so after masking or redaction no value may be left anywhere in
 * the output (case-insensitively for redact).
 *
 * Checked: the stream fed in pseudo-random chunks (some empty) gives exactly
 * the output of one final feed; that equals a naive leftmost-longest
 * reference; no kept value survives masking; redact leaves no value, returns
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

/* The naive reference of one final feed; returns the output length and the matches. */
static size_t reference(const struct mask_value *v, size_t nv, const unsigned char *s, size_t len,
                        unsigned char *out, size_t *matches)
{
        size_t o = 0, i = 0;

        *matches = 0;
        while (i < len) {
                size_t best = 0;
                for (size_t k = 0; k < nv; k++)
                        if (kept(&v[k]) && v[k].len <= len - i && v[k].len > best &&
                            memcmp(v[k].p, s + i, v[k].len) == 0)
                                best = v[k].len;
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
        static const char alpha[] = "0123456789qQzZxX";
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
                        vals[k][j] = b & 0x80 ? b : (unsigned char)alpha[b % 16];
                }
                v[k] = (struct mask_value){.p = vals[k], .len = l, .name = names[k]};
        }

        unsigned char *s = malloc(STREAM_MAX + 16);
        size_t len = 0;
        if (!s)
                return 0;
        for (; p < size && len < STREAM_MAX; p++) {
                if (data[p] >= 0xf0 && data[p] <= 0xf3) {
                        const struct mask_value *x = &v[(data[p] & 3) % nv];
                        memcpy(s + len, x->p, x->len);
                        len += x->len;
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
        size_t nr = reference(v, nv, s, len, ref, &matches);
        if (n1 != nr || memcmp(one, ref, n1) != 0)
                abort();
        for (size_t k = 0; k < nv; k++)
                if (kept(&v[k]) && occurs(one, n1, v[k].p, v[k].len, false))
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
        /* a case-sensitive match is also a case-insensitive one */
        if (matches > 0 && rr == 0)
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
