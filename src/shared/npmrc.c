/*
 * npmrc.c — registry tokens of an .npmrc (npmrc.h). Pure.
 *
 * The format is ini-like: `key = value` lines (a line ends at LF or CR,
 * as npm's reader has it; a key may be quoted), `;` or `#` comments. A
 * token line's key is a URL without its scheme, `//HOST[:PORT]/PATH/`,
 * followed by `:_authToken`. Anything this reader does not understand is
 * kept as it is (npm reads it), except keys that end in `_auth` or
 * `_password`: those are credentials and never reach a run.
 */
#include <errno.h>
#include <string.h>

#include "shared/hostname.h"
#include "shared/npmrc.h"

static bool is_space(char c)
{
        return c == ' ' || c == '\t' || c == '\r';
}

static bool ends_with(const char *s, size_t n, const char *suf)
{
        size_t l = strlen(suf);
        return n >= l && !memcmp(s + n - l, suf, l);
}

size_t npmrc_line_end(const char *buf, size_t len, size_t s)
{
        while (s < len && buf[s] != '\n' && buf[s] != '\r')
                s++;
        return s;
}

enum npmrc_line npmrc_classify(const char *line, size_t len, size_t *value_off, size_t *value_len,
                               char *host)
{
        size_t i = 0;
        while (i < len && is_space(line[i]))
                i++;
        if (i == len || line[i] == ';' || line[i] == '#')
                return NPMRC_KEEP;
        const char *eq = memchr(line + i, '=', len - i);
        if (!eq)
                return NPMRC_KEEP;
        size_t ks = i, ke = (size_t)(eq - line);
        while (ke > ks && is_space(line[ke - 1]))
                ke--;
        const char *key = line + ks;
        size_t kl = ke - ks;
        /* npm's ini reader takes a quoted key without its quotes */
        if (kl >= 2 && (key[0] == '"' || key[0] == '\'') && key[kl - 1] == key[0]) {
                key++;
                kl -= 2;
        }
        if (ends_with(key, kl, "_auth") || ends_with(key, kl, "_password"))
                return NPMRC_DROP;
        static const char tok[] = ":_authToken";
        if (!ends_with(key, kl, "_authToken"))
                return NPMRC_KEEP;
        size_t vs = (size_t)(eq - line) + 1, ve = len;
        while (vs < ve && is_space(line[vs]))
                vs++;
        while (ve > vs && is_space(line[ve - 1]))
                ve--;
        if (ve - vs >= 2 && (line[vs] == '"' || line[vs] == '\'') && line[ve - 1] == line[vs]) {
                vs++;
                ve--;
        }
        if (ve == vs || (ve - vs >= 2 && line[vs] == '$' && line[vs + 1] == '{'))
                return NPMRC_KEEP; /* empty, or a variable npm expands itself */
        /* a token not bound to a registry's URL: never into the run */
        if (kl < 2 + sizeof tok || memcmp(key, "//", 2) != 0 || !ends_with(key, kl, tok))
                return NPMRC_DROP;
        /* the host: from after "//" to the first '/' (the path), or to the
         * ":_authToken" suffix */
        size_t hs = 2, he = hs;
        while (he < kl - (sizeof tok - 1) && key[he] != '/')
                he++;
        if (!hostname_port(key + hs, he - hs, NPMRC_HOST_MAX, host))
                return NPMRC_DROP; /* no name to bind it to: never into the run */
        *value_off = vs;
        *value_len = ve - vs;
        return NPMRC_TOKEN;
}

int npmrc_scan(const char *buf, size_t len, struct npmrc_token *out, size_t *n)
{
        *n = 0;
        if (memchr(buf, '\0', len))
                return -EINVAL;
        for (size_t s = 0; s < len;) {
                size_t e = npmrc_line_end(buf, len, s);
                size_t vo = 0, vl = 0;
                char host[NPMRC_HOST_MAX + 1];
                if (npmrc_classify(buf + s, e - s, &vo, &vl, host) == NPMRC_TOKEN) {
                        if (*n == NPMRC_TOKENS_MAX || vl > NPMRC_VALUE_MAX)
                                return -E2BIG;
                        struct npmrc_token *t = &out[(*n)++];
                        memcpy(t->host, host, sizeof host);
                        t->value_off = s + vo;
                        t->value_len = vl;
                }
                s = e + 1;
        }
        return 0;
}
