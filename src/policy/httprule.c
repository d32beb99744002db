/*
 * httprule.c — HTTP rules on terminated hosts: parsing, path checks,
 * glob matching. See httprule.h.
 *
 * Design: pure functions of their arguments, (pointer, length) input
 * never assumed NUL-terminated, no allocation. The glob and the path are
 * both walked segment by segment without copying: a segment is the bytes
 * between two '/' (the first starts after the leading '/'; "/" is one
 * empty segment; a trailing '/' ends the path with an empty segment).
 *
 * Matching is the classic greedy wildcard walk, twice: over segments
 * (`**` is the star, a segment glob the "character"), and within one
 * segment over bytes (`*` the star). Each level keeps only its last star
 * and, on a mismatch, gives it one more element and resumes after it.
 * That is complete for one kind of star: a later star can absorb anything
 * an earlier one could, so an earlier one never needs revisiting. Each
 * (glob element, path element) pair is compared at most once per star,
 * so the cost is O(glob × path), never exponential (the fuzz target and
 * the unit test compare it with a plain dynamic-programming matcher).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policy/httprule.h"

static const struct {
        const char *name;
        unsigned bit;
} methods[] = {
        /* alphabetical: the canonical text lists them in this order */
        {"DELETE", HTTPRULE_M_DELETE},   {"GET", HTTPRULE_M_GET},     {"HEAD", HTTPRULE_M_HEAD},
        {"OPTIONS", HTTPRULE_M_OPTIONS}, {"PATCH", HTTPRULE_M_PATCH}, {"POST", HTTPRULE_M_POST},
        {"PUT", HTTPRULE_M_PUT},
};
#define N_METHODS (sizeof methods / sizeof methods[0])

static char upper(char ch)
{
        return ch >= 'a' && ch <= 'z' ? (char)(ch - 32) : ch;
}

static bool hexeq(char a, char b, char hi, char lo)
{
        return a == hi && upper(b) == lo;
}

/* What a path (or a glob) may not hold, with a phrase for each. */
enum path_problem {
        PP_NONE,
        PP_NOT_PATH,
        PP_BACKSLASH,
        PP_ENCODED,
        PP_DOT,
        PP_EMPTY,
        _PP_MAX,
};

static const char *const path_says[_PP_MAX] = {
        [PP_NOT_PATH] = "the request target is not a path (no leading '/')",
        [PP_BACKSLASH] = "the path holds a backslash",
        [PP_ENCODED] = "the path holds an encoded '/', '.' or '\\' (%2F, %2E, %5C)",
        [PP_DOT] = "the path holds a dot-segment (\".\" or \"..\")",
        [PP_EMPTY] = "the path holds an empty segment (//)",
};

static const char *const glob_says[_PP_MAX] = {
        [PP_NOT_PATH] = "the path glob must start with '/'",
        [PP_BACKSLASH] = "the path glob holds a backslash",
        [PP_ENCODED] = "the path glob holds an encoded '/', '.' or '\\' (%2F, %2E, %5C)",
        [PP_DOT] = "the path glob holds a dot-segment (\".\" or \"..\")",
        [PP_EMPTY] = "the path glob holds an empty segment (//)",
};

static enum path_problem path_problem(const char *path, size_t len)
{
        if (len == 0 || path[0] != '/')
                return PP_NOT_PATH;
        for (size_t i = 0; i < len; i++) {
                if (path[i] == '\\')
                        return PP_BACKSLASH;
                if (path[i] == '%' && i + 2 < len &&
                    (hexeq(path[i + 1], path[i + 2], '2', 'F') ||
                     hexeq(path[i + 1], path[i + 2], '2', 'E') ||
                     hexeq(path[i + 1], path[i + 2], '5', 'C')))
                        return PP_ENCODED;
        }
        /* segments: each starts after a '/' */
        for (size_t s = 1;;) {
                const char *slash = memchr(path + s, '/', len - s);
                size_t e = slash ? (size_t)(slash - path) : len;
                size_t sl = e - s;
                /* the part a server may take as the segment's name: Java
                 * servers cut a ";parameter" off before resolving ".." */
                const char *semi = memchr(path + s, ';', sl);
                size_t nl = semi ? (size_t)(semi - (path + s)) : sl;
                if ((nl == 1 && path[s] == '.') ||
                    (nl == 2 && path[s] == '.' && path[s + 1] == '.'))
                        return PP_DOT;
                if (sl == 0 && slash)
                        return PP_EMPTY;
                if (!slash)
                        break;
                s = e + 1;
        }
        return PP_NONE;
}

const char *httprule_path_problem(const char *path, size_t len)
{
        return path_says[path_problem(path, len)];
}

/* Bytes within one segment: `*` any run of bytes (never '/': a segment
 * has none), everything else itself. */
static bool seg_match(const char *g, size_t gl, const char *p, size_t pl)
{
        size_t gi = 0, pi = 0, star = SIZE_MAX, mark = 0;
        while (pi < pl) {
                if (gi < gl && g[gi] == '*') {
                        star = gi++;
                        mark = pi;
                } else if (gi < gl && g[gi] == p[pi]) {
                        gi++;
                        pi++;
                } else if (star != SIZE_MAX) {
                        gi = star + 1;
                        pi = ++mark;
                } else
                        return false;
        }
        while (gi < gl && g[gi] == '*')
                gi++;
        return gi == gl;
}

/* A cursor over segments: `at` is where the current one starts (after
 * its '/'), `end` where it ends; at > len: no segment left. */
struct seg {
        size_t at, end;
};

static struct seg seg_first(const char *s, size_t len)
{
        const char *slash = len > 1 ? memchr(s + 1, '/', len - 1) : NULL;
        return (struct seg){1, slash ? (size_t)(slash - s) : len};
}

static struct seg seg_next(const char *s, size_t len, struct seg c)
{
        if (c.end >= len)
                return (struct seg){len + 1, len + 1};
        size_t at = c.end + 1;
        const char *slash = at < len ? memchr(s + at, '/', len - at) : NULL;
        return (struct seg){at, slash ? (size_t)(slash - s) : len};
}

static bool seg_is_globstar(const char *g, struct seg c)
{
        return c.end - c.at == 2 && g[c.at] == '*' && g[c.at + 1] == '*';
}

bool httprule_glob_match(const char *glob, size_t glen, const char *path, size_t plen)
{
        if (glen == 0 || plen == 0 || glob[0] != '/' || path[0] != '/')
                return false;
        struct seg g = seg_first(glob, glen), p = seg_first(path, plen);
        struct seg star_g = {0, 0}, star_p = {0, 0};
        bool have_star = false;
        for (;;) {
                if (g.at <= glen && seg_is_globstar(glob, g)) {
                        have_star = true;
                        star_g = g;
                        star_p = p;
                        g = seg_next(glob, glen, g);
                        continue;
                }
                if (p.at > plen)
                        break; /* the path is used up */
                if (g.at <= glen &&
                    seg_match(glob + g.at, g.end - g.at, path + p.at, p.end - p.at)) {
                        g = seg_next(glob, glen, g);
                        p = seg_next(path, plen, p);
                        continue;
                }
                if (!have_star)
                        return false;
                /* the last `**` takes one more segment; resume after it */
                star_p = seg_next(path, plen, star_p);
                p = star_p;
                g = seg_next(glob, glen, star_g);
        }
        /* whatever is left of the glob must match no segments */
        while (g.at <= glen && seg_is_globstar(glob, g))
                g = seg_next(glob, glen, g);
        return g.at > glen;
}

bool httprule_method_match(unsigned m, const char *method, size_t len)
{
        if (m & HTTPRULE_M_ANY)
                return len > 0;
        for (size_t i = 0; i < N_METHODS; i++)
                if ((m & methods[i].bit) && strlen(methods[i].name) == len &&
                    !memcmp(methods[i].name, method, len))
                        return true;
        return false;
}

/* The glob's own rules, beyond the path's: printable, no query or
 * fragment, `**` only as a whole segment, at most HTTPRULE_SEGS_MAX. */
static const char *glob_problem(const char *g, size_t len)
{
        if (len == 0 || g[0] != '/')
                return "the path glob must start with '/'";
        if (len > HTTPRULE_GLOB_MAX)
                return "the path glob is longer than 1024 bytes";
        size_t segs = 0;
        for (size_t i = 0; i < len; i++) {
                unsigned char ch = (unsigned char)g[i];
                if (ch <= 0x20 || ch >= 0x7f)
                        return "the path glob holds a space, control or non-ASCII byte";
                if (ch == '?' || ch == '#')
                        return "the path glob has a query or fragment ('?', '#'): it matches the "
                               "path only";
                if (ch == '/')
                        segs++;
        }
        if (segs > HTTPRULE_SEGS_MAX)
                return "the path glob has more than 64 segments";
        enum path_problem pp = path_problem(g, len);
        if (pp != PP_NONE)
                return glob_says[pp];
        for (struct seg c = seg_first(g, len); c.at <= len; c = seg_next(g, len, c)) {
                const char *dd = NULL;
                for (size_t i = c.at; i + 1 < c.end && !dd; i++)
                        if (g[i] == '*' && g[i + 1] == '*')
                                dd = g + i;
                if (dd && !seg_is_globstar(g, c))
                        return "'**' must be a whole segment (\"/a/**/b\")";
        }
        return NULL;
}

static const char *methods_parse(const char *s, size_t len, unsigned *out)
{
        *out = 0;
        if (len == 1 && s[0] == '*') {
                *out = HTTPRULE_M_ANY;
                return NULL;
        }
        for (size_t i = 0; i <= len;) {
                const char *comma = memchr(s + i, ',', len - i);
                size_t e = comma ? (size_t)(comma - s) : len;
                bool found = false;
                for (size_t k = 0; k < N_METHODS && !found; k++) {
                        size_t nl = strlen(methods[k].name);
                        if (nl != e - i)
                                continue;
                        found = true;
                        for (size_t j = 0; j < nl && found; j++)
                                found = upper(s[i + j]) == methods[k].name[j];
                        if (found)
                                *out |= methods[k].bit;
                }
                if (!found)
                        return e == i ? "an empty method in the list"
                               : memchr(s + i, '*', e - i)
                                       ? "'*' stands alone for any method"
                                       : "a method other than GET, HEAD, POST, PUT, PATCH, "
                                         "DELETE, OPTIONS or *";
                if (!comma)
                        break;
                i = e + 1;
        }
        return NULL;
}

/* The next field of s[*i..len) (separated by spaces): its start and length. */
static bool field(const char *s, size_t len, size_t *i, size_t *start, size_t *flen)
{
        while (*i < len && s[*i] == ' ')
                (*i)++;
        if (*i == len)
                return false;
        *start = *i;
        while (*i < len && s[*i] != ' ')
                (*i)++;
        *flen = *i - *start;
        return true;
}

int httprule_parse(const char *s, size_t len, struct http_rule *out, const char **why)
{
        size_t i = 0, hs, hl, ms, ml, gs, gl, xs, xl;
        const char *w;

        if (len > HTTPRULE_INPUT_MAX) {
                *why = "longer than an HTTP rule can be";
                return -EINVAL;
        }
        if (memchr(s, '\0', len)) {
                *why = "holds a NUL byte";
                return -EINVAL;
        }
        if (!field(s, len, &i, &hs, &hl) || !field(s, len, &i, &ms, &ml) ||
            !field(s, len, &i, &gs, &gl) || field(s, len, &i, &xs, &xl)) {
                *why = "expected \"HOST[:PORT] METHOD[,METHOD...] PATH-GLOB\"";
                return -EINVAL;
        }
        memset(out, 0, sizeof *out);
        /* HOST[:PORT]: a name, no brackets (no address) */
        if (s[hs] == '[') {
                *why = "an HTTP rule names a host, not an address";
                return -EINVAL;
        }
        const char *colon = memchr(s + hs, ':', hl);
        size_t nl = colon ? (size_t)(colon - (s + hs)) : hl;
        out->port = 443;
        if (colon) {
                size_t ps = nl + 1, pl = hl - ps;
                unsigned v = 0;
                if (pl == 0 || pl > 5 || s[hs + ps] == '0') {
                        *why = "the port must be 1..65535";
                        return -EINVAL;
                }
                for (size_t k = 0; k < pl; k++) {
                        char ch = s[hs + ps + k];
                        if (ch < '0' || ch > '9') {
                                *why = "the port must be 1..65535";
                                return -EINVAL;
                        }
                        v = v * 10 + (unsigned)(ch - '0');
                }
                if (v == 0 || v > 65535) {
                        *why = "the port must be 1..65535";
                        return -EINVAL;
                }
                out->port = (uint16_t)v;
        }
        if (nl > 0 && s[hs] == '*') {
                *why = "an HTTP rule names one host (no wildcard)";
                return -EINVAL;
        }
        w = "invalid host name";
        if (net_host_canonical(s + hs, nl, out->host, &w) < 0) {
                *why = w;
                return -EINVAL;
        }
        uint8_t a[16];
        int fam;
        if (net_host_is_ip_spelling(out->host) ||
            net_ip_parse(out->host, strlen(out->host), false, a, &fam) == 0) {
                *why = "an HTTP rule names a host, not an address";
                return -EINVAL;
        }
        if ((w = methods_parse(s + ms, ml, &out->methods))) {
                *why = w;
                return -EINVAL;
        }
        if ((w = glob_problem(s + gs, gl))) {
                *why = w;
                return -EINVAL;
        }
        memcpy(out->glob, s + gs, gl);
        out->glob[gl] = '\0';
        out->glob_len = gl;

        /* canonical text */
        char port[8] = "", m[48] = "";
        if (out->port != 443)
                snprintf(port, sizeof port, ":%u", out->port);
        if (out->methods & HTTPRULE_M_ANY)
                snprintf(m, sizeof m, "*");
        else
                for (size_t k = 0; k < N_METHODS; k++)
                        if (out->methods & methods[k].bit) {
                                size_t ol = strlen(m);
                                snprintf(m + ol, sizeof m - ol, "%s%s", ol ? "," : "",
                                         methods[k].name);
                        }
        snprintf(out->text, sizeof out->text, "%s%s %s %s", out->host, port, m, out->glob);
        return 0;
}

bool httprule_ruled(const struct http_rule *v, size_t n, const char *host, uint16_t port)
{
        for (size_t i = 0; i < n; i++)
                if (v[i].port == port && !strcmp(v[i].host, host))
                        return true;
        return false;
}

enum httprule_verdict httprule_check(const struct http_rule *v, size_t n, const char *host,
                                     uint16_t port, const char *method, size_t mlen,
                                     const char *target, size_t tlen, const char **why)
{
        if (!httprule_ruled(v, n, host, port))
                return HTTPRULE_UNRULED;
        if (tlen == 0) {
                target = "/";
                tlen = 1;
        }
        const char *q = memchr(target, '?', tlen);
        size_t pl = q ? (size_t)(q - target) : tlen;
        const char *w = httprule_path_problem(target, pl);
        if (w) {
                *why = w;
                return HTTPRULE_BAD_PATH;
        }
        for (size_t i = 0; i < n; i++)
                if (v[i].port == port && !strcmp(v[i].host, host) &&
                    httprule_method_match(v[i].methods, method, mlen) &&
                    httprule_glob_match(v[i].glob, v[i].glob_len, target, pl))
                        return HTTPRULE_ALLOWED;
        return HTTPRULE_NO_RULE;
}

size_t httprule_host_text(const struct http_rule *v, size_t n, const char *host, uint16_t port,
                          char *out, size_t size)
{
        size_t len = 0;
        if (size == 0)
                return 0;
        out[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                if (v[i].port != port || strcmp(v[i].host, host))
                        continue;
                const char *sep = len ? "; " : "";
                size_t need = strlen(sep) + strlen(v[i].text);
                if (len + need >= size) {
                        /* cut: "..." where it stops */
                        if (size >= 4) {
                                len = len + 3 < size ? len : size - 4;
                                memcpy(out + len, "...", 4);
                                len += 3;
                        }
                        return len;
                }
                memcpy(out + len, sep, strlen(sep));
                memcpy(out + len + strlen(sep), v[i].text, strlen(v[i].text) + 1);
                len += need;
        }
        return len;
}

int httprule_names(const struct http_rule *v, size_t n, char names[][NET_HOST_MAX + 1], size_t *k,
                   size_t max)
{
        for (size_t i = 0; i < n; i++) {
                bool seen = false;
                for (size_t m = 0; m < *k && !seen; m++)
                        seen = !strcmp(names[m], v[i].host);
                if (seen)
                        continue;
                if (*k >= max)
                        return -E2BIG;
                memcpy(names[*k], v[i].host, strlen(v[i].host) + 1);
                (*k)++;
        }
        return 0;
}
