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

/* The plaintext port of host entry h ("name:port", not 443), or 0: a bare
 * name means HTTPS, never the value in cleartext. */
static unsigned plain_port(const char *h)
{
        const char *colon = strchr(h, ':');
        unsigned port = colon ? (unsigned)atoi(colon + 1) : 0;
        return port == 443 ? 0 : port;
}

bool inject_host_match(const struct inject_secret *s, const char *host, uint16_t port)
{
        size_t hl = strlen(host);
        for (size_t i = 0; i < s->n_hosts; i++) {
                const char *h = s->hosts[i], *colon = strchr(h, ':');
                size_t nl = colon ? (size_t)(colon - h) : strlen(h);
                if (nl == hl && !strncasecmp(h, host, hl) && port && plain_port(h) == port)
                        return true;
        }
        return false;
}

/* The TLS port of host entry h: its port, 443 for a bare name. */
static unsigned tls_port(const char *h)
{
        const char *colon = strchr(h, ':');
        return colon ? (unsigned)atoi(colon + 1) : 443;
}

bool inject_tls_match(const struct inject_secret *s, const char *host, uint16_t port)
{
        size_t hl = strlen(host);
        for (size_t i = 0; i < s->n_hosts; i++) {
                const char *h = s->hosts[i], *colon = strchr(h, ':');
                size_t nl = colon ? (size_t)(colon - h) : strlen(h);
                if (nl == hl && !strncasecmp(h, host, hl) && port && tls_port(h) == port)
                        return true;
        }
        return false;
}

size_t inject_tls_names(const struct inject_secret *v, size_t n,
                        char names[][SECRET_INJECT_HOST_MAX + 1], size_t max)
{
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < v[i].n_hosts; j++) {
                        const char *h = v[i].hosts[j], *colon = strchr(h, ':');
                        size_t nl = colon ? (size_t)(colon - h) : strlen(h);
                        if (nl == 0 || nl > SECRET_INJECT_HOST_MAX)
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

int inject_needles_new(const struct inject_secret *s, size_t n, struct inject_needles *nd)
{
        memset(nd, 0, sizeof *nd);
        if (n > INJECT_MAX)
                n = INJECT_MAX;
        nd->n = calloc(2 * n + 1, sizeof *nd->n);
        nd->store = calloc(n + 1, INJECT_NEEDLE_MAX);
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
                /* the value's base64 as it stands at a 3-byte boundary: its
                 * whole groups (best effort: other alignments are not seen) */
                char *st = nd->store + i * INJECT_NEEDLE_MAX;
                (void)inject_b64_encode(s[i].value, s[i].len, st);
                size_t whole = s[i].len / 3 * 4;
                if (whole >= 8 && whole <= sizeof a->repl - 1 && scrubbable(st, whole)) {
                        char pb[(SECRET_PH_LEN_MAX + 2) / 3 * 4 + 1];
                        size_t pbl = inject_b64_encode((const unsigned char *)s[i].placeholder,
                                                       s[i].ph_len, pb);
                        struct inject_needle *b = &nd->n[nd->count++];
                        b->find = st;
                        b->find_len = whole;
                        fit(b->repl, pb, pbl, whole);
                        b->repl_len = whole;
                }
        }
        for (size_t i = 0; i < nd->count; i++)
                if (nd->n[i].find_len > nd->max_len)
                        nd->max_len = nd->n[i].find_len;
        return 0;
}

size_t inject_scrub_inplace(const struct inject_needles *nd, char *buf, size_t len, size_t from,
                            uint64_t *replaced)
{
        size_t i = from;
        while (i < len) {
                bool hit = false, partial = false;
                for (size_t k = 0; k < nd->count && !hit; k++) {
                        const struct inject_needle *e = &nd->n[k];
                        if (buf[i] != e->find[0])
                                continue;
                        if (i + e->find_len <= len) {
                                if (!memcmp(buf + i, e->find, e->find_len)) {
                                        memcpy(buf + i, e->repl, e->find_len);
                                        (*replaced)++;
                                        i += e->find_len;
                                        hit = true;
                                }
                        } else if (!memcmp(buf + i, e->find, len - i))
                                partial = true;
                }
                if (hit)
                        continue;
                if (partial)
                        return len - i;
                i++;
        }
        return 0;
}

void inject_needles_free(struct inject_needles *nd)
{
        if (nd->store)
                explicit_bzero(nd->store, 1); /* header; the forms are wiped below */
        if (nd->store && nd->n)
                for (size_t i = 0; i < nd->count; i++)
                        if (nd->n[i].find >= nd->store)
                                explicit_bzero((char *)nd->n[i].find, nd->n[i].find_len);
        free(nd->n);
        free(nd->store);
        memset(nd, 0, sizeof *nd);
}

void inject_scrub_init(struct inject_scrub *z, const struct inject_needles *nd)
{
        z->nd = nd;
        z->carry_len = 0;
        z->replaced = 0;
}

/*
 * One pass over buf[len] (carry + new bytes, or the carry alone at the
 * end): a full match is replaced; a tail that is a proper prefix of a
 * needle is kept (unless `final`); anything else is settled. Returns how
 * many bytes of buf were consumed.
 */
static size_t scrub_pass(struct inject_scrub *z, const char *buf, size_t len, bool final,
                         inject_out_fn out, void *ctx)
{
        const struct inject_needles *nd = z->nd;
        size_t i = 0, settled = 0;
        while (i < len) {
                bool hit = false, partial = false;
                for (size_t k = 0; k < nd->count; k++) {
                        const struct inject_needle *e = &nd->n[k];
                        if (buf[i] != e->find[0])
                                continue;
                        if (i + e->find_len <= len) {
                                if (!memcmp(buf + i, e->find, e->find_len)) {
                                        if (i > settled)
                                                out(ctx, buf + settled, i - settled);
                                        out(ctx, e->repl, e->repl_len);
                                        z->replaced++;
                                        i += e->find_len;
                                        settled = i;
                                        hit = true;
                                        break;
                                }
                        } else if (!final && !memcmp(buf + i, e->find, len - i))
                                partial = true;
                }
                if (hit)
                        continue;
                if (partial)
                        break; /* keep from i on */
                i++;
        }
        if (i > settled)
                out(ctx, buf + settled, i - settled);
        return i;
}

void inject_scrub_feed(struct inject_scrub *z, const char *in, size_t len, inject_out_fn out,
                       void *ctx)
{
        if (!z->nd || z->nd->count == 0) {
                if (len)
                        out(ctx, in, len);
                return;
        }
        /* the carry and the first bytes of `in` first, in the carry buffer's
         * room; a match can span at most max_len - 1 carried bytes */
        while (len > 0 || z->carry_len > 0) {
                char buf[2 * INJECT_NEEDLE_MAX];
                size_t take = len < sizeof buf - z->carry_len ? len : sizeof buf - z->carry_len;
                memcpy(buf, z->carry, z->carry_len);
                memcpy(buf + z->carry_len, in, take);
                size_t bl = z->carry_len + take;
                in += take;
                len -= take;
                size_t used = scrub_pass(z, buf, bl, false, out, ctx);
                z->carry_len = bl - used;
                memcpy(z->carry, buf + used, z->carry_len);
                explicit_bzero(buf, sizeof buf);
                if (take == 0 || len == 0)
                        break;
        }
}

void inject_scrub_flush(struct inject_scrub *z, inject_out_fn out, void *ctx)
{
        if (z->carry_len)
                (void)scrub_pass(z, z->carry, z->carry_len, true, out, ctx);
        explicit_bzero(z->carry, sizeof z->carry);
        z->carry_len = 0;
}
