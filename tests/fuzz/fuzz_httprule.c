/*
 * fuzz_httprule.c — libFuzzer target for HTTP rules (src/policy/httprule.c):
 * the rule parser, the path refusals, glob matching and the decision.
 *
 * Input: up to three lines, "RULE\nMETHOD\nTARGET" (missing lines are
 * empty). Each piece is copied into a heap buffer of exactly its length,
 * so a read past it is an ASan report. Beyond "no crash, no UB", a
 * disagreement with what httprule.h promises aborts:
 *  - an accepted rule has a canonical host, a port, some method, a glob
 *    that starts with '/', is at most HTTPRULE_GLOB_MAX bytes and passes
 *    the path checks; its canonical text fits and re-parses to the same
 *    rule; the glob matches the path made by dropping every `**` segment
 *    and every `*` (each matches nothing);
 *  - glob matching agrees with a plain dynamic-programming matcher (the
 *    definition) wherever the sizes let that one run;
 *  - the decision: UNRULED for another host, BAD_PATH exactly when the
 *    path (before '?') has a problem, ALLOWED only when the method and
 *    the glob match.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/httprule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                   \
        do {                                                                                       \
                if (!(x))                                                                          \
                        abort();                                                                   \
        } while (0)

#define REF_SEGS 64
#define REF_SEG  64

static char *dup_exact(const uint8_t *p, size_t n)
{
        char *c = malloc(n ? n : 1);
        if (c)
                memcpy(c, p, n);
        return c;
}

static bool ref_seg(const char *g, size_t gl, const char *p, size_t pl)
{
        static bool d[REF_SEG + 2][REF_SEG + 2];
        d[gl][pl] = true;
        for (size_t j = 0; j < pl; j++)
                d[gl][j] = false;
        for (size_t i = gl; i-- > 0;)
                for (size_t j = pl + 1; j-- > 0;)
                        d[i][j] = g[i] == '*' ? (d[i + 1][j] || (j < pl && d[i][j + 1]))
                                              : (j < pl && g[i] == p[j] && d[i + 1][j + 1]);
        return d[0][0];
}

/* Segments of s[0..len) (after its leading '/'); false if over the reference's sizes. */
static bool split(const char *s, size_t len, size_t at[], size_t end[], size_t *n)
{
        size_t st = 1;
        *n = 0;
        for (size_t i = 1; i <= len; i++)
                if (i == len || s[i] == '/') {
                        if (*n == REF_SEGS || i - st > REF_SEG)
                                return false;
                        at[*n] = st;
                        end[(*n)++] = i;
                        st = i + 1;
                }
        return true;
}

/* 1 match, 0 no match, -1 too large for the reference */
static int ref_match(const char *g, size_t glen, const char *p, size_t plen)
{
        size_t ga[REF_SEGS], ge[REF_SEGS], pa[REF_SEGS], pe[REF_SEGS], gn, pn;
        static bool d[REF_SEGS + 1][REF_SEGS + 1];
        if (!split(g, glen, ga, ge, &gn) || !split(p, plen, pa, pe, &pn))
                return -1;
        d[gn][pn] = true;
        for (size_t j = 0; j < pn; j++)
                d[gn][j] = false;
        for (size_t i = gn; i-- > 0;) {
                bool star = ge[i] - ga[i] == 2 && g[ga[i]] == '*' && g[ga[i] + 1] == '*';
                for (size_t j = pn + 1; j-- > 0;)
                        d[i][j] = star ? (d[i + 1][j] || (j < pn && d[i][j + 1]))
                                       : (j < pn &&
                                          ref_seg(g + ga[i], ge[i] - ga[i], p + pa[j],
                                                  pe[j] - pa[j]) &&
                                          d[i + 1][j + 1]);
        }
        return d[0][0];
}

static void check_rule(const struct http_rule *r)
{
        char host[NET_HOST_MAX + 1];
        const char *why;
        CHECK(net_host_canonical(r->host, strlen(r->host), host, &why) == 0 &&
              !strcmp(host, r->host));
        CHECK(r->port > 0 && r->methods != 0);
        CHECK(r->glob_len > 0 && r->glob_len <= HTTPRULE_GLOB_MAX &&
              strlen(r->glob) == r->glob_len && r->glob[0] == '/');
        CHECK(httprule_path_problem(r->glob, r->glob_len) == NULL);
        CHECK(strlen(r->text) < HTTPRULE_TEXT_MAX);
        static struct http_rule again;
        CHECK(httprule_parse(r->text, strlen(r->text), &again, &why) == 0);
        CHECK(!strcmp(again.text, r->text) && !strcmp(again.host, r->host) &&
              again.port == r->port && again.methods == r->methods &&
              again.glob_len == r->glob_len && !strcmp(again.glob, r->glob));
        CHECK(httprule_ruled(r, 1, r->host, r->port));

        /* every star matching nothing: the glob matches that path */
        static char p[HTTPRULE_GLOB_MAX + 2];
        size_t pl = 0;
        for (size_t i = 0; i < r->glob_len;) {
                size_t e = i + 1;
                while (e < r->glob_len && r->glob[e] != '/')
                        e++;
                /* the segment r->glob[i+1 .. e) */
                if (!(e - i == 3 && r->glob[i + 1] == '*' && r->glob[i + 2] == '*')) {
                        p[pl++] = '/';
                        for (size_t k = i + 1; k < e; k++)
                                if (r->glob[k] != '*')
                                        p[pl++] = r->glob[k];
                }
                i = e;
        }
        if (pl == 0)
                p[pl++] = '/';
        CHECK(httprule_glob_match(r->glob, r->glob_len, p, pl));
        int ref = ref_match(r->glob, r->glob_len, p, pl);
        CHECK(ref != 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const uint8_t *nl1 = memchr(data, '\n', size);
        size_t l1 = nl1 ? (size_t)(nl1 - data) : size;
        const uint8_t *m = nl1 ? nl1 + 1 : data + size;
        size_t rest = size - (size_t)(m - data);
        const uint8_t *nl2 = memchr(m, '\n', rest);
        size_t l2 = nl2 ? (size_t)(nl2 - m) : rest;
        const uint8_t *t = nl2 ? nl2 + 1 : m + rest;
        size_t l3 = size - (size_t)(t - data);

        char *rule = dup_exact(data, l1), *method = dup_exact(m, l2), *target = dup_exact(t, l3);
        if (!rule || !method || !target)
                goto out;

        static struct http_rule r;
        const char *why = NULL;
        int rc = httprule_parse(rule, l1, &r, &why);
        CHECK(rc == 0 || (rc == -EINVAL && why));
        (void)httprule_path_problem(target, l3);
        /* the matcher itself on raw text (a glob it was never promised) must not misbehave */
        if (l1 && rule[0] == '/' && l3 && target[0] == '/' && l1 <= 4096 && l3 <= 4096)
                (void)httprule_glob_match(rule, l1, target, l3);
        if (rc < 0)
                goto out;
        check_rule(&r);

        const char *q = l3 ? memchr(target, '?', l3) : NULL;
        size_t pl = q ? (size_t)(q - target) : l3;
        const char *problem = l3 ? httprule_path_problem(target, pl) : NULL;
        bool method_ok = httprule_method_match(r.methods, method, l2);
        bool glob_ok = l3 && pl && target[0] == '/' && !problem &&
                       httprule_glob_match(r.glob, r.glob_len, target, pl);
        if (glob_ok || (l3 && pl && target[0] == '/' && !problem)) {
                int ref = ref_match(r.glob, r.glob_len, target, pl);
                CHECK(ref < 0 || ref == glob_ok);
        }
        enum httprule_verdict v =
                httprule_check(&r, 1, r.host, r.port, method, l2, target, l3, &why);
        if (l3 == 0)
                CHECK(v == (method_ok && httprule_glob_match(r.glob, r.glob_len, "/", 1)
                                    ? HTTPRULE_ALLOWED
                                    : HTTPRULE_NO_RULE));
        else if (problem)
                CHECK(v == HTTPRULE_BAD_PATH && why);
        else
                CHECK(v == (method_ok && glob_ok ? HTTPRULE_ALLOWED : HTTPRULE_NO_RULE));
        CHECK(httprule_check(&r, 1, "other.invalid", r.port, method, l2, target, l3, &why) ==
              HTTPRULE_UNRULED);
        char text[256];
        size_t tl = httprule_host_text(&r, 1, r.host, r.port, text, sizeof text);
        CHECK(tl == strlen(text) && tl < sizeof text);
out:
        free(rule);
        free(method);
        free(target);
        return 0;
}
