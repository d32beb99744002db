/*
 * inject.c — credential injection, the pure part: placeholders, host
 * matching, detection, header replacement (Basic included), base64 and
 * the streaming response scrubber. See inject.h.
 *
 * Threat notes: the run controls every byte compared here (headers,
 * names, bodies); every loop is bounded by the input and the named
 * limits; nothing is written past the caller's buffer (-E2BIG instead).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "egress/inject.h"

static const char ph_alphabet[64] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";

int inject_placeholder(const uint8_t *rnd, size_t n_rnd, const char *prefix, uint32_t length,
                       char *out, size_t out_size)
{
        size_t pl = strlen(prefix);
        size_t total = length ? length : pl + SECRET_PH_DEFAULT_LEN;
        if (pl > SECRET_PH_PREFIX_MAX || total > SECRET_PH_LEN_MAX || total < pl ||
            total - pl < SECRET_PH_RANDOM_MIN)
                return -EINVAL;
        if (total - pl > n_rnd || total + 1 > out_size)
                return -E2BIG;
        memcpy(out, prefix, pl);
        for (size_t i = pl; i < total; i++)
                out[i] = ph_alphabet[rnd[i - pl] & 63];
        out[total] = '\0';
        return (int)total;
}

/* Host entry h: its name (length *nl), whether it is plaintext
 * ("http://name:port"), and its port (443 for a bare name). */
static const char *entry(const char *h, size_t *nl, bool *plain, unsigned *port)
{
        *plain = !strncmp(h, "http://", 7);
        if (*plain)
                h += 7;
        const char *colon = strchr(h, ':');
        *nl = colon ? (size_t)(colon - h) : strlen(h);
        *port = colon ? (unsigned)atoi(colon + 1) : 443;
        return h;
}

static bool match(const struct inject_secret *s, const char *host, uint16_t port, bool want_plain)
{
        size_t hl = strlen(host);
        for (size_t i = 0; i < s->n_hosts; i++) {
                size_t nl;
                bool plain;
                unsigned p;
                const char *n = entry(s->hosts[i], &nl, &plain, &p);
                if (plain == want_plain && nl == hl && !strncasecmp(n, host, hl) && port &&
                    p == port && !(plain && port == 443))
                        return true;
        }
        return false;
}

bool inject_host_match(const struct inject_secret *s, const char *host, uint16_t port)
{
        return match(s, host, port, true);
}

bool inject_tls_match(const struct inject_secret *s, const char *host, uint16_t port)
{
        return match(s, host, port, false);
}

size_t inject_tls_names(const struct inject_secret *v, size_t n,
                        char names[][SECRET_INJECT_HOST_MAX + 1], size_t max)
{
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < v[i].n_hosts; j++) {
                        size_t nl;
                        bool plain;
                        unsigned p;
                        const char *h = entry(v[i].hosts[j], &nl, &plain, &p);
                        if (plain || nl == 0 || nl > SECRET_INJECT_HOST_MAX)
                                continue;
                        bool seen = false;
                        for (size_t m = 0; m < k && !seen; m++)
                                seen = strlen(names[m]) == nl && !strncasecmp(names[m], h, nl);
                        if (seen)
                                continue;
                        if (k == max)
                                return max + 1;
                        for (size_t c = 0; c < nl; c++)
                                names[k][c] = (char)(h[c] >= 'A' && h[c] <= 'Z' ? h[c] + 32 : h[c]);
                        names[k][nl] = '\0';
                        k++;
                }
        return k;
}

static const char *find(const char *hay, size_t hl, const char *needle, size_t nl, bool icase)
{
        if (nl == 0 || nl > hl)
                return NULL;
        for (size_t i = 0; i + nl <= hl; i++)
                if (icase ? !strncasecmp(hay + i, needle, nl) && !memchr(hay + i, '\0', nl)
                          : !memcmp(hay + i, needle, nl))
                        return hay + i;
        return NULL;
}

/* "Basic <b64>" (any case, spaces after the scheme): where the credentials start. */
static bool basic_creds(const char *val, size_t len, size_t *off)
{
        if (len < 6 || strncasecmp(val, "basic ", 6) != 0)
                return false;
        size_t i = 6;
        while (i < len && val[i] == ' ')
                i++;
        *off = i;
        return true;
}

const struct inject_secret *inject_mentions(const struct inject_secret *v, size_t n,
                                            const char *text, size_t len, bool icase, bool header,
                                            const char **where)
{
        unsigned char dec[INJECT_NEEDLE_MAX];
        int dl = -1;
        size_t off;
        if (header && basic_creds(text, len, &off))
                dl = inject_b64_decode(text + off, len - off, dec, sizeof dec);
        for (size_t i = 0; i < n; i++) {
                const struct inject_secret *s = &v[i];
                if (find(text, len, s->placeholder, s->ph_len, icase) ||
                    (dl > 0 &&
                     find((const char *)dec, (size_t)dl, s->placeholder, s->ph_len, icase))) {
                        *where = "placeholder";
                        return s;
                }
                if (s->len >= 8 && (find(text, len, (const char *)s->value, s->len, icase) ||
                                    (dl > 0 && find((const char *)dec, (size_t)dl,
                                                    (const char *)s->value, s->len, icase)))) {
                        *where = "value";
                        return s;
                }
        }
        return NULL;
}

const struct inject_secret *inject_mentions_name(const struct inject_secret *v, size_t n,
                                                 const char *name, size_t len, const char **where)
{
        const struct inject_secret *s = inject_mentions(v, n, name, len, true, false, where);
        if (s || !memchr(name, '.', len))
                return s;
        /* the name's characters but its dots, in pieces of a bounded
         * buffer that overlap by the longest placeholder or value, so
         * that none is missed at a piece's edge */
        char flat[4 *
                  (INJECT_VALUE_MAX > SECRET_PH_LEN_MAX ? INJECT_VALUE_MAX : SECRET_PH_LEN_MAX)];
        const size_t keep = sizeof flat / 4;
        size_t fl = 0;
        for (size_t i = 0; i < len; i++) {
                if (name[i] == '.')
                        continue;
                if (fl == sizeof flat) {
                        if ((s = inject_mentions(v, n, flat, fl, true, false, where)))
                                return s;
                        memmove(flat, flat + fl - keep, keep);
                        fl = keep;
                }
                flat[fl++] = name[i];
        }
        return inject_mentions(v, n, flat, fl, true, false, where);
}

/* in[len] with every `from` replaced by `to` into out; 1 replaced, 0 none, -E2BIG. */
static int replace_all(const char *in, size_t len, const char *from, size_t fl, const char *to,
                       size_t tl, char *out, size_t out_size, size_t *out_len)
{
        size_t o = 0, i = 0;
        bool any = false;
        while (i < len) {
                if (i + fl <= len && !memcmp(in + i, from, fl)) {
                        if (o + tl > out_size)
                                return -E2BIG;
                        memcpy(out + o, to, tl);
                        o += tl;
                        i += fl;
                        any = true;
                } else {
                        if (o + 1 > out_size)
                                return -E2BIG;
                        out[o++] = in[i++];
                }
        }
        *out_len = o;
        return any ? 1 : 0;
}

int inject_header_value(const struct inject_secret *s, bool authorization, const char *val,
                        size_t len, char *out, size_t out_size, size_t *out_len)
{
        size_t off;
        if (s->len > INJECT_VALUE_MAX)
                return -E2BIG;
        if (authorization && basic_creds(val, len, &off)) {
                unsigned char dec[INJECT_NEEDLE_MAX], rep[INJECT_NEEDLE_MAX + INJECT_VALUE_MAX];
                size_t rl;
                int dl = inject_b64_decode(val + off, len - off, dec, sizeof dec);
                if (dl > 0) {
                        int r = replace_all((const char *)dec, (size_t)dl, s->placeholder,
                                            s->ph_len, (const char *)s->value, s->len, (char *)rep,
                                            sizeof rep, &rl);
                        if (r < 0)
                                return r;
                        if (r > 0) {
                                if (off + (rl + 2) / 3 * 4 > out_size)
                                        return -E2BIG;
                                memcpy(out, val, off);
                                *out_len = off + inject_b64_encode(rep, rl, out + off);
                                explicit_bzero(rep, sizeof rep);
                                return 1;
                        }
                }
        }
        if (!find(val, len, s->placeholder, s->ph_len, false))
                return 0;
        return replace_all(val, len, s->placeholder, s->ph_len, (const char *)s->value, s->len, out,
                           out_size, out_len);
}

static const char b64_alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t inject_b64_encode(const unsigned char *in, size_t len, char *out)
{
        size_t o = 0;
        for (size_t i = 0; i < len; i += 3) {
                uint32_t v = (uint32_t)in[i] << 16;
                if (i + 1 < len)
                        v |= (uint32_t)in[i + 1] << 8;
                if (i + 2 < len)
                        v |= in[i + 2];
                out[o++] = b64_alphabet[(v >> 18) & 63];
                out[o++] = b64_alphabet[(v >> 12) & 63];
                out[o++] = i + 1 < len ? b64_alphabet[(v >> 6) & 63] : '=';
                out[o++] = i + 2 < len ? b64_alphabet[v & 63] : '=';
        }
        return o;
}

static int b64_val(char ch)
{
        const char *p = ch ? strchr(b64_alphabet, ch) : NULL;
        return p ? (int)(p - b64_alphabet) : -1;
}

int inject_b64_decode(const char *in, size_t len, unsigned char *out, size_t out_size)
{
        while (len && (in[len - 1] == ' ' || in[len - 1] == '\t'))
                len--;
        if (len % 4 != 0 || len == 0)
                return -EINVAL;
        size_t o = 0;
        for (size_t i = 0; i < len; i += 4) {
                int a = b64_val(in[i]), b = b64_val(in[i + 1]);
                bool last = i + 4 == len;
                bool p2 = last && in[i + 2] == '=', p3 = last && in[i + 3] == '=';
                int c = p2 ? 0 : b64_val(in[i + 2]), d = p3 ? 0 : b64_val(in[i + 3]);
                if (a < 0 || b < 0 || c < 0 || d < 0 || (p2 && !p3))
                        return -EINVAL;
                uint32_t v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
                size_t k = p2 ? 1 : p3 ? 2 : 3;
                if (o + k > out_size)
                        return -EINVAL;
                out[o++] = (unsigned char)(v >> 16);
                if (k > 1)
                        out[o++] = (unsigned char)(v >> 8);
                if (k > 2)
                        out[o++] = (unsigned char)v;
        }
        return (int)o;
}

/* ---- the response scrubber ------------------------------------------------------- */

/* repl[0..n) from src (cut, or padded with '*'): same length as what it replaces */
static void fit(char *repl, const char *src, size_t sl, size_t n)
{
        for (size_t i = 0; i < n; i++)
                repl[i] = i < sl ? src[i] : '*';
}

/* A needle is scrubbed only where it cannot be part of HTTP framing: at
 * least 8 bytes and not only hex digits (a chunk size, a Content-Length). */
static bool scrubbable(const char *p, size_t n)
{
        if (n < INJECT_SCRUB_MIN)
                return false;
        if (n >= INJECT_SCRUB_HEX_MIN)
                return true; /* longer than any chunk size or Content-Length */
        for (size_t i = 0; i < n; i++)
                if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
                        return true;
        return false;
}

bool inject_scrubbable(const struct inject_secret *s)
{
        return s->len <= INJECT_VALUE_MAX && scrubbable((const char *)s->value, s->len);
}

/* one base64 form of a value: up to 2 leading bytes of another's group */
#define B64_SLOT ((INJECT_VALUE_MAX + 2 + 2) / 3 * 4 + 8)

/* The scan's 2-byte block, hashed into the skip table. */
static inline size_t block_hash(unsigned char a, unsigned char b)
{
        return ((size_t)a << 4 ^ b) & (INJECT_SHIFT_SIZE - 1);
}

int inject_needles_new(const struct inject_secret *s, size_t n, struct inject_needles *nd)
{
        memset(nd, 0, sizeof *nd);
        if (n > INJECT_MAX)
                n = INJECT_MAX;
        _Static_assert(7 * INJECT_MAX <= INJECT_NEEDLES_MAX, "inject_resume's bits");
        nd->n = calloc(7 * n + 1, sizeof *nd->n);
        nd->store = calloc(3 * n + 1, B64_SLOT);
        nd->store_len = (3 * n + 1) * B64_SLOT;
        if (!nd->n || !nd->store) {
                inject_needles_free(nd);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                if (s[i].len > INJECT_VALUE_MAX || s[i].len > sizeof nd->n[0].repl - 1 ||
                    !scrubbable((const char *)s[i].value, s[i].len))
                        continue;
                struct inject_needle *a = &nd->n[nd->count++];
                a->find = (const char *)s[i].value;
                a->find_len = s[i].len;
                fit(a->repl, s[i].placeholder, s[i].ph_len, s[i].len);
                a->repl_len = s[i].len;
                /*
                 * The value's base64 at each of the three alignments it can
                 * have in an encoded stream (after 0, 1 or 2 other bytes of
                 * its group): the characters that depend on the value's
                 * bytes alone — from 0, 2 or 3 characters in, up to its last
                 * whole group. "Basic base64(user:VALUE)" is found whatever
                 * the user name's length.
                 */
                for (size_t al = 0; al < 3; al++) {
                        unsigned char vb[INJECT_VALUE_MAX + 2] = {0};
                        unsigned char pv[SECRET_PH_LEN_MAX + 2] = {0};
                        memcpy(vb + al, s[i].value, s[i].len);
                        memcpy(pv + al, s[i].placeholder, s[i].ph_len);
                        char *st = nd->store + (3 * i + al) * B64_SLOT;
                        size_t sl = inject_b64_encode(vb, al + s[i].len, st);
                        explicit_bzero(vb, sizeof vb);
                        char pb[(SECRET_PH_LEN_MAX + 2 + 2) / 3 * 4 + 1];
                        size_t pbl = inject_b64_encode(pv, al + s[i].ph_len, pb);
                        size_t skip = al == 0 ? 0 : al == 1 ? 2 : 3;
                        size_t whole = (al + s[i].len) / 3 * 4;
                        /* the value ending the encoded text (a password,
                         * the usual case): its last group and padding too,
                         * tried first so that nothing of it is left */
                        size_t ends[2] = {(al + s[i].len) % 3 ? sl : 0, whole};
                        for (size_t e = 0; e < 2; e++) {
                                size_t fl = ends[e] > skip ? ends[e] - skip : 0;
                                if (fl < 8 || fl > sizeof a->repl - 1 || !scrubbable(st + skip, fl))
                                        continue;
                                struct inject_needle *b = &nd->n[nd->count++];
                                b->find = st + skip;
                                b->find_len = fl;
                                fit(b->repl, pb + skip, pbl > skip ? pbl - skip : 0, fl);
                                b->repl_len = fl;
                                b->prev_bits = al == 1 ? 4 : al == 2 ? 2 : 0;
                                b->v_hi = b->prev_bits ? s[i].value[0] >> (8 - b->prev_bits) : 0;
                                b->p_hi = b->prev_bits ? (uint8_t)s[i].placeholder[0] >>
                                                                 (8 - b->prev_bits)
                                                       : 0;
                        }
                }
        }
        for (size_t i = 0; i < nd->count; i++) {
                if (nd->n[i].find_len > nd->max_len)
                        nd->max_len = nd->n[i].find_len;
                if (!nd->min_len || nd->n[i].find_len < nd->min_len)
                        nd->min_len = nd->n[i].find_len;
                unsigned char b = (unsigned char)nd->n[i].find[0];
                nd->first[b / 8] |= (uint8_t)(1u << (b % 8));
        }
        /* the skip table: a shift never passes a needle's beginning */
        size_t m = nd->min_len < 256 ? nd->min_len : 255;
        nd->min_len = m;
        memset(nd->shift, m >= 2 ? (int)(m - 1) : 0, sizeof nd->shift);
        for (size_t i = 0; m >= 2 && i < nd->count; i++)
                for (size_t j = 0; j + 1 < m; j++) {
                        const unsigned char *f = (const unsigned char *)nd->n[i].find;
                        size_t h = block_hash(f[j], f[j + 1]), sh = m - 2 - j;
                        if (sh < nd->shift[h])
                                nd->shift[h] = (uint8_t)sh;
                }
        return 0;
}

/* Could ch be the character before a base64 needle standing after 1 or 2
 * other bytes (its low bits the value's first byte's top bits)? */
static bool prev_could_be(const struct inject_needles *nd, char ch)
{
        int v = b64_val(ch);
        for (size_t k = 0; v >= 0 && k < nd->count; k++) {
                const struct inject_needle *e = &nd->n[k];
                if (e->prev_bits && ((unsigned)v & ((1u << e->prev_bits) - 1)) == e->v_hi)
                        return true;
        }
        return false;
}

/*
 * The needles that may begin at buf[*i]: the longest that stands whole is
 * replaced (*i moves past it); one that may still turn out longer (its
 * beginning ends the buffer) makes the scan stop: true, with *hold the
 * bytes to hold back. Else *i moves on by one.
 */
static bool scrub_at(const struct inject_needles *nd, char *buf, size_t len, size_t from, size_t *i,
                     uint64_t *replaced, size_t *hold)
{
        size_t at = *i;
        const struct inject_needle *hit = NULL;
        size_t partial = 0;
        bool partial_prev = false;
        for (size_t k = 0; k < nd->count; k++) {
                const struct inject_needle *e = &nd->n[k];
                if (buf[at] != e->find[0])
                        continue;
                if (at + e->find_len <= len) {
                        if ((!hit || e->find_len > hit->find_len) &&
                            !memcmp(buf + at, e->find, e->find_len))
                                hit = e;
                } else if (e->find_len > partial && !memcmp(buf + at, e->find, len - at)) {
                        partial = e->find_len;
                        partial_prev = e->prev_bits != 0;
                }
        }
        if (partial && (!hit || partial > hit->find_len)) {
                /* and the character before it, where a base64 form would
                 * change it */
                *hold = len - at + (partial_prev && at > from && prev_could_be(nd, buf[at - 1]));
                return true;
        }
        if (!hit) {
                *i = at + 1;
                return false;
        }
        int pv = at > 0 && hit->prev_bits ? b64_val(buf[at - 1]) : -1;
        unsigned mask = (1u << hit->prev_bits) - 1;
        if (pv >= 0 && ((unsigned)pv & mask) == hit->v_hi)
                buf[at - 1] = b64_alphabet[((unsigned)pv & ~mask) | hit->p_hi];
        memcpy(buf + at, hit->repl, hit->find_len);
        (*replaced)++;
        *i = at + hit->find_len;
        return false;
}

/* The byte-at-a-time scan from *i on (the first-byte table skips most). */
static size_t scrub_bytes(const struct inject_needles *nd, char *buf, size_t len, size_t from,
                          size_t i, uint64_t *replaced)
{
        size_t hold;
        while (i < len) {
                unsigned char b0 = (unsigned char)buf[i];
                if (!(nd->first[b0 / 8] & (1u << (b0 % 8)))) {
                        i++;
                        continue;
                }
                if (scrub_at(nd, buf, len, from, &i, replaced, &hold))
                        return hold;
        }
        /* the last character may be the one before a needle the next bytes
         * begin: it waits with them */
        return len > from && prev_could_be(nd, buf[len - 1]) ? 1 : 0;
}

size_t inject_scrub_inplace_bytewise(const struct inject_needles *nd, char *buf, size_t len,
                                     size_t from, uint64_t *replaced)
{
        return scrub_bytes(nd, buf, len, from, from, replaced);
}

/*
 * The skip scan in SCAN_LANES lanes: the window starts [from, wend) cut in
 * equal parts, each scanned on its own and the lanes stepped in turn, so
 * that the CPU overlaps their loads (one lane is a chain of dependent
 * loads: the block read decides where the next read is). A lane only notes
 * its candidates (a needle may begin there); they are then verified in
 * order, skipping those a replacement covered. Bytes a replacement writes
 * lie at or after the candidate and before the next one verified, and a
 * lane's verdict on a position reads only bytes at or after it, so the
 * notes stay true. A lane whose notes fill stops; the scan goes on from
 * there without lanes (*i). Returns true when a needle cut by the end
 * makes the scan stop (*hold set, as scrub_at).
 */
#define SCAN_LANES    8
#define SCAN_CANDS    32 /* candidates a lane notes (random bytes: ~1 per KiB) */
#define SCAN_LANE_MIN 32 /* window starts below which a lane is not worth it */
struct scan_lane {
        size_t at, end, n;
        size_t cand[SCAN_CANDS];
};

static inline unsigned lane_step(const struct inject_needles *nd, const unsigned char *b, size_t m,
                                 struct scan_lane *l)
{
        size_t p = l->at;
        if (p >= l->end || l->n == SCAN_CANDS)
                return 0;
        uint8_t sh = nd->shift[block_hash(b[p + m - 2], b[p + m - 1])];
        if (sh) {
                l->at = p + sh;
                return 1;
        }
        if (nd->first[b[p] / 8] & (1u << (b[p] % 8)))
                l->cand[l->n++] = p;
        l->at = p + 1;
        return 1;
}

static bool scrub_lanes(const struct inject_needles *nd, char *buf, size_t len, size_t from,
                        size_t *i, uint64_t *replaced, size_t *hold)
{
        size_t m = nd->min_len, wend = len - m + 1, part = (wend - from) / SCAN_LANES;
        const unsigned char *b = (const unsigned char *)buf;
        struct scan_lane l[SCAN_LANES];
        _Static_assert(SCAN_LANES == 8, "lane_step is called once per lane below");
        for (size_t k = 0; k < SCAN_LANES; k++) {
                l[k].at = from + k * part;
                l[k].end = k + 1 < SCAN_LANES ? from + (k + 1) * part : wend;
                l[k].n = 0;
        }
        while (lane_step(nd, b, m, &l[0]) | lane_step(nd, b, m, &l[1]) |
               lane_step(nd, b, m, &l[2]) | lane_step(nd, b, m, &l[3]) |
               lane_step(nd, b, m, &l[4]) | lane_step(nd, b, m, &l[5]) |
               lane_step(nd, b, m, &l[6]) | lane_step(nd, b, m, &l[7]))
                ;
        size_t pos = from;
        for (size_t k = 0; k < SCAN_LANES; k++) {
                for (size_t j = 0; j < l[k].n; j++) {
                        if (l[k].cand[j] < pos)
                                continue; /* inside a replacement */
                        pos = l[k].cand[j];
                        if (scrub_at(nd, buf, len, from, &pos, replaced, hold))
                                return true;
                }
                if (l[k].at < l[k].end) {
                        /* its notes filled: on without lanes from where it stopped */
                        *i = pos > l[k].at ? pos : l[k].at;
                        return false;
                }
        }
        *i = pos > wend ? pos : wend;
        return false;
}

size_t inject_scrub_inplace(const struct inject_needles *nd, char *buf, size_t len, size_t from,
                            uint64_t *replaced)
{
        size_t i = from, hold, m = nd->min_len;
        if (m >= 2 && len >= m && len - m + 1 > from &&
            len - m + 1 - from >= SCAN_LANES * SCAN_LANE_MIN &&
            scrub_lanes(nd, buf, len, from, &i, replaced, &hold))
                return hold;
        /* while a whole window fits: the block ending it says how far no
         * needle can begin; where one may, the position is verified */
        if (m >= 2)
                while (i + m <= len) {
                        uint8_t sh = nd->shift[block_hash((unsigned char)buf[i + m - 2],
                                                          (unsigned char)buf[i + m - 1])];
                        if (sh) {
                                i += sh;
                                continue;
                        }
                        unsigned char b0 = (unsigned char)buf[i];
                        if (!(nd->first[b0 / 8] & (1u << (b0 % 8)))) {
                                i++; /* a block that collided: no needle begins here */
                                continue;
                        }
                        if (scrub_at(nd, buf, len, from, &i, replaced, &hold))
                                return hold;
                }
        /* the last bytes, where a needle's window no longer fits */
        return scrub_bytes(nd, buf, len, from, i, replaced);
}

static int put(char *out, size_t size, size_t *o, const char *p, size_t n)
{
        if (n > size - *o)
                return -E2BIG;
        memcpy(out + *o, p, n);
        *o += n;
        return 0;
}

int inject_query(const struct inject_secret *s, const char *t, size_t len, char *out,
                 size_t out_size, size_t *out_len)
{
        static const char hexd[] = "0123456789ABCDEF";
        const char *q = memchr(t, '?', len);
        size_t o = 0, ql = strlen(s->query);
        int replaced = 0;
        *out_len = 0;
        if (!q || !ql)
                return put(out, out_size, out_len, t, len) < 0 ? -E2BIG : 0;
        if (put(out, out_size, &o, t, (size_t)(q - t) + 1) < 0)
                return -E2BIG;
        const char *p = q + 1, *end = t + len;
        while (p <= end) {
                const char *amp = memchr(p, '&', (size_t)(end - p));
                const char *pe = amp ? amp : end;
                const char *eq = memchr(p, '=', (size_t)(pe - p));
                bool ours = eq && (size_t)(eq - p) == ql && !memcmp(p, s->query, ql) &&
                            (size_t)(pe - eq - 1) == s->ph_len &&
                            !memcmp(eq + 1, s->placeholder, s->ph_len);
                if (ours) {
                        if (put(out, out_size, &o, p, ql + 1) < 0)
                                return -E2BIG;
                        for (size_t i = 0; i < s->len; i++) {
                                unsigned char c = s->value[i];
                                bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                                             (c >= '0' && c <= '9') || c == '-' || c == '.' ||
                                             c == '_' || c == '~';
                                char e[3] = {'%', hexd[c >> 4], hexd[c & 15]};
                                if (put(out, out_size, &o, plain ? (const char *)&s->value[i] : e,
                                        plain ? 1 : 3) < 0)
                                        return -E2BIG;
                        }
                        replaced = 1;
                } else if (put(out, out_size, &o, p, (size_t)(pe - p)) < 0)
                        return -E2BIG;
                if (!amp)
                        break;
                if (put(out, out_size, &o, "&", 1) < 0)
                        return -E2BIG;
                p = amp + 1;
        }
        *out_len = o;
        return replaced;
}

size_t inject_body(const struct inject_secret *v, size_t n, uint64_t mask, char *buf, size_t len,
                   bool more, uint64_t *injected)
{
        size_t hold = 0;
        for (size_t k = 0; k < n && k < 64; k++) {
                const struct inject_secret *s = &v[k];
                if (!(mask & (1ULL << k)) || !s->body || s->ph_len != s->len || !s->ph_len)
                        continue;
                for (size_t i = 0; i + s->ph_len <= len;) {
                        if (!memcmp(buf + i, s->placeholder, s->ph_len)) {
                                memcpy(buf + i, s->value, s->len);
                                *injected |= 1ULL << k;
                                i += s->ph_len;
                        } else
                                i++;
                }
                /* the longest end of buf that begins the placeholder */
                for (size_t h = s->ph_len - 1; more && h > hold; h--)
                        if (h <= len && !memcmp(buf + len - h, s->placeholder, h)) {
                                hold = h;
                                break;
                        }
        }
        return hold;
}

size_t inject_body_rewrite(const struct inject_secret *v, size_t n, uint64_t mask, const char *in,
                           size_t len, bool more, char *out, size_t out_size, size_t *out_len,
                           uint64_t *injected)
{
        uint8_t first[32] = {0}; /* bit b: some placeholder begins with byte b */
        size_t i = 0, o = 0;
        for (size_t k = 0; k < n && k < 64; k++)
                if ((mask & (1ULL << k)) && v[k].body && v[k].ph_len) {
                        unsigned char b = (unsigned char)v[k].placeholder[0];
                        first[b / 8] |= (uint8_t)(1u << (b % 8));
                }
        while (i < len) {
                /* the run of bytes no placeholder begins with, copied whole */
                size_t j = i;
                while (j < len &&
                       !(first[(unsigned char)in[j] / 8] & (1u << ((unsigned char)in[j] % 8))))
                        j++;
                if (j > i) {
                        size_t run = j - i < out_size - o ? j - i : out_size - o;
                        if (out)
                                memcpy(out + o, in + i, run);
                        o += run;
                        i += run;
                        if (i < j)
                                break; /* out is full */
                        continue;
                }
                unsigned char b = (unsigned char)in[i];
                if (first[b / 8] & (1u << (b % 8))) {
                        const struct inject_secret *hit = NULL;
                        bool wait = false;
                        for (size_t k = 0; k < n && k < 64 && !hit && !wait; k++) {
                                const struct inject_secret *s = &v[k];
                                if (!(mask & (1ULL << k)) || !s->body || !s->ph_len)
                                        continue;
                                if (len - i >= s->ph_len) {
                                        if (!memcmp(in + i, s->placeholder, s->ph_len)) {
                                                hit = s;
                                                *injected |= 1ULL << k;
                                        }
                                } else if (more && !memcmp(in + i, s->placeholder, len - i))
                                        wait = true; /* the next bytes decide */
                        }
                        if (wait)
                                break;
                        if (hit) {
                                if (hit->len > out_size - o)
                                        break;
                                if (out)
                                        memcpy(out + o, hit->value, hit->len);
                                o += hit->len;
                                i += hit->ph_len;
                                continue;
                        }
                }
                if (o == out_size)
                        break;
                if (out)
                        out[o] = in[i];
                o++;
                i++;
        }
        *out_len = o;
        return i;
}

int inject_basic_header(const struct inject_secret *s, char *out, size_t out_size)
{
        static const char pre[] = "Authorization: Basic ";
        unsigned char cred[SECRET_BASIC_USER_MAX + 1 + INJECT_VALUE_MAX];
        size_t ul = strnlen(s->basic, sizeof s->basic);
        if (!ul || ul == sizeof s->basic)
                return -EINVAL;
        if (s->len > INJECT_VALUE_MAX || out_size < sizeof pre - 1 + (ul + 1 + s->len + 2) / 3 * 4)
                return -E2BIG;
        memcpy(cred, s->basic, ul);
        cred[ul] = ':';
        memcpy(cred + ul + 1, s->value, s->len);
        memcpy(out, pre, sizeof pre - 1);
        size_t o = sizeof pre - 1 + inject_b64_encode(cred, ul + 1 + s->len, out + sizeof pre - 1);
        explicit_bzero(cred, sizeof cred);
        return (int)o;
}

int inject_scrub_tail(const struct inject_needles *nd, char *buf, size_t len, size_t held,
                      uint64_t *replaced)
{
        /* the held bytes, or all but the first (a base64 needle's previous
         * character held with it) */
        for (size_t skip = 0; skip < 2 && skip < held; skip++) {
                size_t h = held - skip;
                if (h < INJECT_SCRUB_MIN || h > len)
                        continue;
                for (size_t k = 0; k < nd->count; k++) {
                        const struct inject_needle *e = &nd->n[k];
                        if (h < e->find_len && !memcmp(buf + len - h, e->find, h)) {
                                memcpy(buf + len - h, e->repl, h);
                                (*replaced)++;
                                return 1;
                        }
                }
        }
        return 0;
}

bool inject_scrub_pending(const struct inject_needles *nd, const char *buf, size_t len, size_t held,
                          struct inject_resume *r)
{
        *r = (struct inject_resume){0};
        /* the held bytes, or all but the first (a base64 needle's previous
         * character held with it), as inject_scrub_tail */
        for (size_t skip = 0; skip < 2 && skip < held && !r->any; skip++) {
                size_t h = held - skip;
                if (!h || h > len)
                        continue;
                for (size_t k = 0; k < nd->count && k < INJECT_NEEDLES_MAX; k++) {
                        const struct inject_needle *e = &nd->n[k];
                        if (h < e->find_len && !memcmp(buf + len - h, e->find, h)) {
                                r->mask[k / 64] |= 1ULL << (k % 64);
                                r->any = true;
                        }
                }
                if (r->any)
                        r->done = h;
        }
        return r->any;
}

size_t inject_scrub_resume(const struct inject_needles *nd, struct inject_resume *r, char *buf,
                           size_t len, uint64_t *replaced)
{
        const struct inject_needle *whole = NULL, *part = NULL;
        /* the needles buf ends still inside: the bits kept for next time */
        for (size_t k = 0; k < nd->count && k < INJECT_NEEDLES_MAX && len; k++) {
                const struct inject_needle *e = &nd->n[k];
                uint64_t bit = 1ULL << (k % 64);
                if (!(r->mask[k / 64] & bit))
                        continue;
                r->mask[k / 64] &= ~bit;
                if (r->done >= e->find_len)
                        continue;
                size_t rest = e->find_len - r->done;
                if (rest <= len) {
                        if (!memcmp(buf, e->find + r->done, rest) &&
                            (!whole || e->find_len > whole->find_len))
                                whole = e;
                } else if (!memcmp(buf, e->find + r->done, len)) {
                        r->mask[k / 64] |= bit;
                        if (!part || e->find_len > part->find_len)
                                part = e;
                }
        }
        size_t n = 0;
        const struct inject_needle *e = whole ? whole : part;
        if (e) {
                n = whole ? e->find_len - r->done : len;
                if (r->done + n >= INJECT_SCRUB_MIN) {
                        memcpy(buf, e->repl + r->done, n);
                        (*replaced)++;
                }
        }
        if (!whole && part)
                r->done += len;
        else
                *r = (struct inject_resume){0};
        return n;
}

void inject_needles_free(struct inject_needles *nd)
{
        if (nd->store)
                explicit_bzero(nd->store, nd->store_len); /* the base64 forms */
        free(nd->n);
        free(nd->store);
        memset(nd, 0, sizeof *nd);
}
