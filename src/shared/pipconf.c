/*
 * pipconf.c — index credentials of a pip.conf (pipconf.h). Pure.
 *
 * pip.conf is INI: `[section]`, `key = value`, values continued on
 * indented lines (extra-index-url lists), `#` or `;` comments. Rather
 * than know which keys hold URLs (index-url, extra-index-url, find-links,
 * and whatever pip adds), every `http://` or `https://` in the file is
 * read as a URL: its authority runs to the first '/', '?', '#', quote or
 * space, and a userinfo before its last '@' is a credential — the
 * password after the first ':', or the user name when there is none or it
 * is empty (a token as the user name, as pip and private indexes use it:
 * `https://TOKEN@host/`, `https://TOKEN:@host/`).
 */
#include <errno.h>
#include <string.h>

#include "shared/macro.h"
#include "shared/hostname.h"
#include "shared/pipconf.h"

static bool alpha(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static char lower(char c)
{
        return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Is buf[i..] "://" preceded by http or https (any case), which is not
 * itself preceded by a letter? Returns where the authority starts, or 0. */
static size_t scheme_end(const char *buf, size_t len, size_t i)
{
        if (i + 3 > len || memcmp(buf + i, "://", 3) != 0)
                return 0;
        for (size_t sl = 4; sl <= 5; sl++) {
                if (i < sl)
                        continue;
                const char *s = buf + i - sl;
                bool ok = lower(s[0]) == 'h' && lower(s[1]) == 't' && lower(s[2]) == 't' &&
                          lower(s[3]) == 'p' && (sl == 4 || lower(s[4]) == 's');
                if (ok && (i == sl || !alpha(buf[i - sl - 1])))
                        return i + 3;
        }
        return 0;
}

/* A quote ends it only where URLs cannot hold one: '"' must be
 * percent-encoded in a URL, a "'" may stand in a password as it is. */
static bool authority_char(char c)
{
        return c != '/' && c != '?' && c != '#' && c != ' ' && c != '\t' && c != '\r' &&
               c != '\n' && c != '"';
}

int pipconf_scan(const char *buf, size_t len, struct pipconf_cred *out, size_t *n)
{
        *n = 0;
        if (memchr(buf, '\0', len))
                return -EINVAL;
        for (size_t ls = 0; ls < len;) {
                const char *nl = memchr(buf + ls, '\n', len - ls);
                size_t le = nl ? (size_t)(nl - buf) : len, i = ls;
                while (i < le && (buf[i] == ' ' || buf[i] == '\t'))
                        i++;
                bool comment = i < le && (buf[i] == '#' || buf[i] == ';');
                for (; i < le; i++) {
                        size_t as = scheme_end(buf, le, i);
                        if (!as)
                                continue;
                        size_t ae = as, at = 0;
                        while (ae < le && authority_char(buf[ae])) {
                                if (buf[ae] == '@')
                                        at = ae;
                                ae++;
                        }
                        i = ae > i ? ae - 1 : i;
                        if (!at) {
                                /* an '@' later in this URL (before the next
                                 * one): a password with a character that ends
                                 * an authority ('/', '?', '#', a tab pip's
                                 * parser drops); not read, so its line is
                                 * left out rather than copied in clear */
                                size_t k = ae;
                                while (k < le && buf[k] != '@' && !scheme_end(buf, le, k))
                                        k++;
                                if (k == le || buf[k] != '@')
                                        continue; /* no userinfo */
                                if (*n == PIPCONF_CREDS_MAX || k - as > PIPCONF_VALUE_MAX)
                                        return -E2BIG;
                                out[*n] = (struct pipconf_cred){.off = as,
                                                                .len = k - as,
                                                                .line_off = ls,
                                                                .line_len = le - ls};
                                (*n)++;
                                i = k;
                                continue;
                        }
                        if (at == as)
                                continue; /* "@host": nothing secret */
                        /* the password; or the user, where there is none
                         * ("TOKEN@host", "TOKEN:@host": a token as the user) */
                        const char *colon = memchr(buf + as, ':', at - as);
                        size_t cs = colon && (size_t)(colon - buf) + 1 < at
                                            ? (size_t)(colon - buf) + 1
                                            : as,
                               ce = colon && cs == as ? (size_t)(colon - buf) : at;
                        if (ce == cs)
                                continue; /* ":@host": nothing secret */
                        if (*n == PIPCONF_CREDS_MAX || ce - cs > PIPCONF_VALUE_MAX)
                                return -E2BIG;
                        struct pipconf_cred *c = &out[(*n)++];
                        c->off = cs;
                        c->len = ce - cs;
                        c->line_off = ls;
                        c->line_len = le - ls;
                        if (comment ||
                            !hostname_port(buf + at + 1, ae - at - 1, PIPCONF_HOST_MAX, c->host))
                                c->host[0] = '\0'; /* its line is left out */
                }
                ls = le + 1;
        }
        return 0;
}

int pipconf_decode(const char *s, size_t len, char *out, size_t *out_len)
{
        size_t o = 0;
        for (size_t i = 0; i < len; i++) {
                if (s[i] != '%') {
                        out[o++] = s[i];
                        continue;
                }
                int hi = i + 2 < len ? hex_digit_value(s[i + 1]) : -1,
                    lo = hi >= 0 ? hex_digit_value(s[i + 2]) : -1;
                if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                        return -EINVAL;
                out[o++] = (char)(hi << 4 | lo);
                i += 2;
        }
        out[o] = '\0';
        *out_len = o;
        return 0;
}
