/*
 * fuzz_termfilter.c — libFuzzer target for the run → terminal filter and
 * the reply tracker (src/supervisor/termfilter.c), both directions.
 *
 * The input describes a case:
 *
 *   byte 0        bit 0: queries tracked; bits 1..7: seed of the chunking
 *   byte 1        where the stream splits: the first (b * rest / 256) bytes
 *                 are the run's output, the others the operator's input
 *   the rest      the two streams
 *
 * Checked:
 *   - each call writes at most n + TERMFILTER_SEQ_MAX bytes (the output
 *     buffer is exactly that big, so ASan sees any overrun);
 *   - the output fed in pseudo-random chunks (some empty) equals the output
 *     of one feed, with the same queries pending; so for the input side;
 *   - what passes would pass again unchanged (filtering is idempotent);
 *   - an independent checker of the output: every ESC starts a CSI, an
 *     ESC sequence with a final byte, or a colour query OSC 1x;? ending in
 *     BEL or ST (never another OSC, DCS, SOS, PM or APC, never a dropped
 *     window op); a byte 0x80..0x9f only inside a well-formed UTF-8
 *     character, and never as U+0080..U+009F (C2 80..C2 9F);
 *   - replies only ever lower the pending count.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/termfilter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define STREAM_MAX (64 * 1024)

static uint32_t rng(uint32_t *s)
{
        *s = *s * 1103515245u + 12345u;
        return *s >> 16;
}

/* filter `in` in chunks picked by `seed` (0: one piece) into a fresh buffer */
static unsigned char *filter_chunked(struct termfilter *f, const uint8_t *in, size_t n,
                                     uint32_t seed, size_t *out_len)
{
        unsigned char *all = malloc(n + TERMFILTER_SEQ_MAX + 1);
        size_t w = 0, off = 0;

        if (!all)
                abort();
        while (off < n || (seed && off == n && rng(&seed) % 4 == 0)) {
                size_t k = seed ? rng(&seed) % 64 : n - off;
                if (k > n - off)
                        k = n - off;
                /* a buffer of exactly the contract's size for this call */
                unsigned char *out = malloc(k + TERMFILTER_SEQ_MAX);
                if (!out)
                        abort();
                size_t got = termfilter_output(f, in + off, k, out);
                if (got > k + TERMFILTER_SEQ_MAX)
                        abort();
                /* `all` is only big enough when held bytes are never emitted twice */
                if (w + got > n + TERMFILTER_SEQ_MAX)
                        abort();
                memcpy(all + w, out, got);
                free(out);
                w += got;
                off += k;
                if (!seed)
                        break;
        }
        *out_len = w;
        return all;
}

static size_t csi_end(const unsigned char *o, size_t n, size_t i)
{
        while (i < n && o[i] >= 0x20 && o[i] <= 0x3f)
                i++;
        if (i >= n || o[i] < 0x40 || o[i] > 0x7e)
                abort(); /* an unfinished or malformed CSI was emitted */
        return i;
}

/* a CSI in o[b..e] (parameters .. final): not a dropped window op or query */
static void csi_allowed(const unsigned char *o, size_t b, size_t e)
{
        unsigned char final = o[e];
        bool plain = b == e || (o[b] >= '0' && o[b] <= ';');
        bool inter = e > b && o[e - 1] >= 0x20 && o[e - 1] <= 0x2f;
        if (final == 't' && plain && !inter) {
                unsigned v = 0;
                for (size_t i = b; i < e && o[i] >= '0' && o[i] <= '9'; i++)
                        v = v * 10 + (unsigned)(o[i] - '0');
                if (v != 14 && v != 16 && v != 18)
                        abort();
        }
        if ((final == 'x' && plain && !inter) || (final == 'q' && o[b] == '>' && !inter) ||
            (final == 'c' && o[b] == '=' && !inter))
                abort();
}

static void check_output(const unsigned char *o, size_t n)
{
        unsigned need = 0;
        for (size_t i = 0; i < n; i++) {
                unsigned char b = o[i];
                if (need) {
                        if (b >= 0x80 && b <= 0xbf) {
                                need--;
                                continue;
                        }
                        need = 0; /* malformed: the rest is checked as fresh */
                }
                if (b == 0x1b) {
                        if (i + 1 >= n)
                                abort(); /* a lone ESC at the end */
                        unsigned char c = o[++i];
                        if (c == '[') {
                                size_t e = csi_end(o, n, i + 1);
                                csi_allowed(o, i + 1, e);
                                i = e;
                        } else if (c == ']') {
                                if (i + 5 >= n || o[i + 1] != '1' || o[i + 2] < '0' ||
                                    o[i + 2] > '2' || o[i + 3] != ';' || o[i + 4] != '?')
                                        abort();
                                i += 5;
                                if (o[i] == 0x1b && i + 1 < n && o[i + 1] == '\\')
                                        i++;
                                else if (o[i] != 0x07)
                                        abort();
                        } else if (c == 'P' || c == 'X' || c == '^' || c == '_' || c == 'k' ||
                                   c == '\\' || c == 'Z') {
                                abort();
                        } else {
                                while (c >= 0x20 && c <= 0x2f && i + 1 < n)
                                        c = o[++i];
                                if (c < 0x30 || c > 0x7e)
                                        abort();
                        }
                } else if (b >= 0x80 && b <= 0x9f) {
                        abort(); /* a lone C1 control */
                } else if (b == 0xc2 && i + 1 < n && o[i + 1] >= 0x80 && o[i + 1] < 0xa0) {
                        abort(); /* a C1 control encoded in UTF-8 */
                } else if (b >= 0xc2 && b <= 0xdf) {
                        need = 1;
                } else if (b >= 0xe0 && b <= 0xef) {
                        need = 2;
                } else if (b >= 0xf0 && b <= 0xf4) {
                        need = 3;
                }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 2 || size > STREAM_MAX)
                return 0;
        bool track = data[0] & 1;
        uint32_t seed = (uint32_t)(data[0] >> 1) | 1u;
        size_t rest = size - 2, k = (size_t)data[1] * rest / 256;
        const uint8_t *out_stream = data + 2, *in_stream = data + 2 + k;
        size_t n_in = rest - k;

        struct termfilter whole, part;
        size_t n1, n2;
        termfilter_init(&whole, track);
        termfilter_init(&part, track);
        unsigned char *a = filter_chunked(&whole, out_stream, k, 0, &n1);
        unsigned char *b = filter_chunked(&part, out_stream, k, seed, &n2);
        if (n1 != n2 || memcmp(a, b, n1) || termfilter_pending(&whole) != termfilter_pending(&part))
                abort();
        if (!track && termfilter_pending(&whole))
                abort();
        check_output(a, n1);

        /* idempotent: what passed passes again, unchanged (with an ASCII
         * byte after it, so a malformed character's lead at its very end
         * is not held back the second time) */
        struct termfilter again;
        size_t n3;
        a[n1] = 'z';
        termfilter_init(&again, track);
        unsigned char *c = filter_chunked(&again, a, n1 + 1, 0, &n3);
        if (n3 != n1 + 1 || memcmp(a, c, n3))
                abort();

        /* the input side: chunking does not matter; replies only answer */
        unsigned before = termfilter_pending(&whole);
        termfilter_input(&whole, in_stream, n_in);
        for (size_t off = 0; off < n_in;) {
                size_t m = rng(&seed) % 32;
                if (m > n_in - off)
                        m = n_in - off;
                termfilter_input(&part, in_stream + off, m);
                off += m;
        }
        if (termfilter_pending(&whole) > before ||
            termfilter_pending(&whole) != termfilter_pending(&part))
                abort();
        free(a);
        free(b);
        free(c);
        return 0;
}
