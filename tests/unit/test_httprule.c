/*
 * test_httprule.c — HTTP rules on terminated hosts (policy/httprule.h):
 * parsing and canonical text, the path refusals, glob matching (a table,
 * then random globs and paths against a plain dynamic-programming
 * matcher, and a worst case that must stay fast), method lists, the
 * decision, and the policy's network.http (parse, errors with line:col,
 * merge, --allow-http, canonical JSON).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy/httprule.h"
#include "policy/policy.h"
#include "tap.h"

static void test_parse(void)
{
        static const struct {
                const char *in, *canon;
        } good[] = {
                {"api.github.com GET,POST /repos/acme/**",
                 "api.github.com GET,POST /repos/acme/**"},
                {"API.GitHub.com. post,get /repos/acme/**",
                 "api.github.com GET,POST /repos/acme/**"},
                {"api.github.com:443 GET /", "api.github.com GET /"},
                {"svc.test:8080 * /v1/*/status", "svc.test:8080 * /v1/*/status"},
                {"  svc.test:80   PUT,DELETE,GET,GET   /a/b/  ",
                 "svc.test:80 DELETE,GET,PUT /a/b/"},
                {"h.test OPTIONS,HEAD,PATCH /**", "h.test HEAD,OPTIONS,PATCH /**"},
                {"h.test GET /a/**/b/*.json", "h.test GET /a/**/b/*.json"},
                {"h.test GET /%41%7e;x=1", "h.test GET /%41%7e;x=1"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
                struct http_rule r, r2;
                const char *why = "";
                int rc = httprule_parse(good[i].in, strlen(good[i].in), &r, &why);
                is_int(rc, 0, "parses: \"%s\" (%s)", good[i].in, rc ? why : "");
                if (rc)
                        continue;
                is_str(r.text, good[i].canon, "... canonical");
                ok(httprule_parse(r.text, strlen(r.text), &r2, &why) == 0 &&
                           !strcmp(r2.text, r.text) && r2.port == r.port &&
                           r2.methods == r.methods && !strcmp(r2.glob, r.glob),
                   "... the canonical text parses to the same rule");
        }
        struct http_rule r;
        const char *why;
        httprule_parse("a.test GET /x", 13, &r, &why);
        ok(r.port == 443 && r.methods == HTTPRULE_M_GET && !strcmp(r.host, "a.test") &&
                   r.glob_len == 2,
           "a bare host is port 443");

        static const char *const bad[] = {
                "",
                "a.test",
                "a.test GET",
                "a.test GET /x extra",
                "*.a.test GET /x",
                "10.0.0.1 GET /x",
                "[::1]:443 GET /x",
                "127.1 GET /x",
                "a..test GET /x",
                "a.test:0 GET /x",
                "a.test:65536 GET /x",
                "a.test:08 GET /x",
                "a.test: GET /x",
                "a.test:44x GET /x",
                "a.test CONNECT /x",
                "a.test GET, /x",
                "a.test ,GET /x",
                "a.test GET,* /x",
                "a.test ** /x",
                "a.test GET x",
                "a.test GET /x?y=1",
                "a.test GET /x#f",
                "a.test GET /a/../b",
                "a.test GET /a/./b",
                "a.test GET /..",
                "a.test GET /a/..;x/b",
                "a.test GET /a//b",
                "a.test GET //",
                "a.test GET /a\\b",
                "a.test GET /a%2fb",
                "a.test GET /a%2Eb",
                "a.test GET /a%5cb",
                "a.test GET /a/**b",
                "a.test GET /a/b**",
                "a.test GET /***",
                "a.test GET /\x7f",
        };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                why = NULL;
                int rc = httprule_parse(bad[i], strlen(bad[i]), &r, &why);
                ok(rc == -EINVAL && why, "refused: \"%s\" (%s)", bad[i], why ? why : "?");
        }
        ok(httprule_parse("a.test GET /x\0y", 15, &r, &why) == -EINVAL, "a NUL inside: refused");

        /* limits: 1024 bytes of glob, 64 segments */
        char line[HTTPRULE_INPUT_MAX + 64];
        int n = snprintf(line, sizeof line, "a.test GET /");
        memset(line + n, 'a', 1023);
        line[n + 1023] = '\0';
        ok(httprule_parse(line, strlen(line), &r, &why) == 0 && r.glob_len == 1024,
           "a glob of 1024 bytes");
        strcat(line, "a");
        int rc = httprule_parse(line, strlen(line), &r, &why);
        ok(rc == -EINVAL && strstr(why, "1024"), "... of 1025: refused (%s)", why);
        n = snprintf(line, sizeof line, "a.test GET ");
        for (int i = 0; i < 64; i++)
                n += snprintf(line + n, sizeof line - (size_t)n, "/s");
        ok(httprule_parse(line, strlen(line), &r, &why) == 0, "a glob of 64 segments");
        snprintf(line + n, sizeof line - (size_t)n, "/s");
        rc = httprule_parse(line, strlen(line), &r, &why);
        ok(rc == -EINVAL && strstr(why, "64"), "... of 65: refused (%s)", why);
        /* the longest canonical text fits */
        n = snprintf(line, sizeof line,
                     "%.63s.%.63s.%.63s.%.61s:65535 "
                     "delete,get,head,options,patch,post,put /",
                     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                     "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
                     "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc",
                     "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd");
        memset(line + n, 'x', 1023);
        line[n + 1023] = '\0';
        rc = httprule_parse(line, strlen(line), &r, &why);
        ok(rc == 0 && strlen(r.text) == strlen(line) && strlen(r.text) < HTTPRULE_TEXT_MAX,
           "the longest rule's canonical text fits (%zu bytes)", strlen(r.text));
}

static void test_path(void)
{
        static const struct {
                const char *path;
                const char *has; /* a word of the reason, NULL: accepted */
        } cases[] = {
                {"/", NULL},
                {"/a", NULL},
                {"/a/", NULL},
                {"/a/b.c/.d/..e/e../", NULL},
                {"/a;b/c;.", NULL},
                {"/%41%2g%2", NULL},
                {"/a%25252e", NULL},
                {"", "not a path"},
                {"*", "not a path"},
                {"a/b", "not a path"},
                {"/.", "dot-segment"},
                {"/..", "dot-segment"},
                {"/a/./b", "dot-segment"},
                {"/a/../b", "dot-segment"},
                {"/a/..", "dot-segment"},
                {"/a/..;jsessionid=x/b", "dot-segment"},
                {"/a/.;x", "dot-segment"},
                {"//", "empty segment"},
                {"/a//b", "empty segment"},
                {"//a", "empty segment"},
                {"/a\\b", "backslash"},
                {"/a%2Fb", "encoded"},
                {"/a%2fb", "encoded"},
                {"/a%2eb", "encoded"},
                {"/a/%2E%2E/b", "encoded"},
                {"/a%5Cb", "encoded"},
                {"/a%5c", "encoded"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                const char *w = httprule_path_problem(cases[i].path, strlen(cases[i].path));
                if (!cases[i].has)
                        ok(w == NULL, "path %s: accepted (%s)", cases[i].path, w ? w : "");
                else
                        ok(w && strstr(w, cases[i].has), "path \"%s\": refused, %s", cases[i].path,
                           w ? w : "(accepted)");
        }
}

/* A plain DP matcher (the definition), for comparison. */
static bool ref_seg(const char *g, size_t gl, const char *p, size_t pl)
{
        static bool d[80][80];
        if (gl >= 80 || pl >= 80)
                abort();
        d[gl][pl] = true;
        for (size_t j = 0; j < pl; j++)
                d[gl][j] = false;
        for (size_t i = gl; i-- > 0;)
                for (size_t j = pl + 1; j-- > 0;)
                        d[i][j] = g[i] == '*' ? (d[i + 1][j] || (j < pl && d[i][j + 1]))
                                              : (j < pl && g[i] == p[j] && d[i + 1][j + 1]);
        return d[0][0];
}

static size_t split(const char *s, size_t len, size_t at[], size_t end[])
{
        size_t n = 0, st = 1;
        for (size_t i = 1; i <= len; i++)
                if (i == len || s[i] == '/') {
                        at[n] = st;
                        end[n++] = i;
                        st = i + 1;
                }
        return n;
}

static bool ref_match(const char *g, const char *p)
{
        size_t ga[70], ge[70], pa[70], pe[70];
        size_t gn = split(g, strlen(g), ga, ge), pn = split(p, strlen(p), pa, pe);
        static bool d[71][71];
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

static void test_glob(void)
{
        static const struct {
                const char *glob, *path;
                bool match;
        } cases[] = {
                {"/repos/acme/**", "/repos/acme", true},
                {"/repos/acme/**", "/repos/acme/", true},
                {"/repos/acme/**", "/repos/acme/x", true},
                {"/repos/acme/**", "/repos/acme/x/y/z", true},
                {"/repos/acme/**", "/repos/acmex", false},
                {"/repos/acme/**", "/repos/other/x", false},
                {"/repos/acme/**", "/repos", false},
                {"/repos/*", "/repos/a", true},
                {"/repos/*", "/repos/", true},
                {"/repos/*", "/repos", false},
                {"/repos/*", "/repos/a/b", false},
                {"/*", "/", true},
                {"/*", "/abc", true},
                {"/", "/", true},
                {"/", "/a", false},
                {"/**", "/", true},
                {"/**", "/a/b/c/", true},
                {"/a/**/b", "/a/b", true},
                {"/a/**/b", "/a/x/y/b", true},
                {"/a/**/b", "/a/x/y/c", false},
                {"/a/**/b", "/a/b/b", true},
                {"/a/**/b/**", "/a/x/b", true},
                {"/a/**/b/**/c", "/a/b/b/c/c", true},
                {"/v1/*/status", "/v1/job-1/status", true},
                {"/v1/*/status", "/v1//status", true},
                {"/v1/*/status", "/v1/a/b/status", false},
                {"/f/*.json", "/f/a.json", true},
                {"/f/*.json", "/f/.json", true},
                {"/f/*.json", "/f/a.jsonx", false},
                {"/f/a*b*c", "/f/abc", true},
                {"/f/a*b*c", "/f/aXbYbZc", true},
                {"/f/a*b*c", "/f/aXbYcZ", false},
                {"/f/%41", "/f/A", false},
                {"/f/%41", "/f/%41", true},
                {"/f/*", "/f/%41", true},
                {"/Case", "/case", false},
                {"/x/", "/x", false},
                {"/x", "/x/", false},
                {"/x/**", "/x", true},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                bool m = httprule_glob_match(cases[i].glob, strlen(cases[i].glob), cases[i].path,
                                             strlen(cases[i].path));
                ok(m == cases[i].match && m == ref_match(cases[i].glob, cases[i].path), "%s %s %s",
                   cases[i].glob, cases[i].match ? "matches" : "does not match", cases[i].path);
        }

        /* random globs and paths over a small alphabet, against the DP */
        unsigned seed = 12345;
        size_t bad = 0, trials = 20000, matched = 0;
        for (size_t t = 0; t < trials; t++) {
                char g[64], p[64];
                size_t gl = 0, pl = 0;
                int segs = 1 + (int)((seed = seed * 1103515245 + 12345) >> 16) % 6;
                for (int s = 0; s < segs; s++) {
                        g[gl++] = '/';
                        unsigned k = (seed = seed * 1103515245 + 12345) >> 16;
                        if (k % 4 == 0) {
                                g[gl++] = '*';
                                g[gl++] = '*';
                                continue;
                        }
                        int len = (int)(k >> 3) % 4;
                        for (int c = 0; c < len; c++) {
                                unsigned x = (seed = seed * 1103515245 + 12345) >> 16;
                                g[gl++] = "ab*"[x % 3];
                        }
                        if (gl >= 2 && g[gl - 1] == '*' && g[gl - 2] == '*')
                                g[gl - 1] = 'a'; /* `**` only as a whole segment */
                }
                g[gl] = '\0';
                segs = 1 + (int)((seed = seed * 1103515245 + 12345) >> 16) % 7;
                for (int s = 0; s < segs; s++) {
                        p[pl++] = '/';
                        int len = (int)((seed = seed * 1103515245 + 12345) >> 16) % 4;
                        for (int c = 0; c < len; c++) {
                                unsigned x = (seed = seed * 1103515245 + 12345) >> 16;
                                p[pl++] = "ab"[x % 2];
                        }
                }
                p[pl] = '\0';
                bool m = httprule_glob_match(g, gl, p, pl), r = ref_match(g, p);
                matched += m;
                if (m != r && bad++ < 5)
                        diag("differs: glob %s path %s: %d, reference %d", g, p, m, r);
        }
        ok(bad == 0 && matched > 100, "%zu random globs and paths agree with the DP (%zu match)",
           trials, matched);

        /* the worst case stays polynomial: many `**` and stars, a long path */
        char g[1100], p[16384];
        size_t gl = 0, pl = 0;
        for (int i = 0; i < 31; i++) {
                memcpy(g + gl, "/**/*a*a*a*a*a*a*", 17);
                gl += 17;
        }
        memcpy(g + gl, "/b", 2);
        gl += 2;
        while (pl + 64 < sizeof p) {
                p[pl++] = '/';
                for (int i = 0; i < 40; i++)
                        p[pl++] = 'a';
        }
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        bool m = httprule_glob_match(g, gl, p, pl);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        ok(!m && ms < 2000, "a hostile glob against a 16 KB path: no match in %.1f ms", ms);
}

static void test_check(void)
{
        static const char *const text[] = {
                "api.test GET,POST /repos/acme/**",
                "api.test:8080 * /**",
                "api.test HEAD /status",
                "other.test GET /x",
        };
        struct http_rule v[ARRAY_SIZE(text)];
        const char *why;
        for (size_t i = 0; i < ARRAY_SIZE(text); i++)
                httprule_parse(text[i], strlen(text[i]), &v[i], &why);
        size_t n = ARRAY_SIZE(text);
        ok(httprule_ruled(v, n, "api.test", 443) && httprule_ruled(v, n, "api.test", 8080) &&
                   !httprule_ruled(v, n, "api.test", 80) && !httprule_ruled(v, n, "b.test", 443),
           "ruled: api.test on 443 and 8080 only");

        static const struct {
                const char *host;
                uint16_t port;
                const char *method, *target;
                enum httprule_verdict v;
        } cases[] = {
                {"api.test", 443, "GET", "/repos/acme/x", HTTPRULE_ALLOWED},
                {"api.test", 443, "POST", "/repos/acme/x?y=../../z%2f", HTTPRULE_ALLOWED},
                {"api.test", 443, "DELETE", "/repos/acme/x", HTTPRULE_NO_RULE},
                {"api.test", 443, "get", "/repos/acme/x", HTTPRULE_NO_RULE},
                {"api.test", 443, "GET", "/repos/other", HTTPRULE_NO_RULE},
                {"api.test", 443, "HEAD", "/status", HTTPRULE_ALLOWED},
                {"api.test", 443, "HEAD", "/status?x", HTTPRULE_ALLOWED},
                {"api.test", 443, "GET", "/status", HTTPRULE_NO_RULE},
                {"api.test", 443, "GET", "/repos/acme/../../admin", HTTPRULE_BAD_PATH},
                {"api.test", 443, "GET", "/repos/acme/%2e%2e/admin", HTTPRULE_BAD_PATH},
                {"api.test", 443, "GET", "/repos/acme/..%2fadmin", HTTPRULE_BAD_PATH},
                {"api.test", 443, "GET", "/repos/acme/x\\..\\..\\admin", HTTPRULE_BAD_PATH},
                {"api.test", 443, "GET", "/repos//acme/x", HTTPRULE_BAD_PATH},
                {"api.test", 443, "OPTIONS", "*", HTTPRULE_BAD_PATH},
                {"api.test", 443, "GET", "", HTTPRULE_NO_RULE},
                {"api.test", 8080, "BREW", "/anything", HTTPRULE_ALLOWED},
                {"api.test", 8080, "GET", "/a/../b", HTTPRULE_BAD_PATH},
                {"api.test", 80, "GET", "/a/../b", HTTPRULE_UNRULED},
                {"free.test", 443, "DELETE", "/", HTTPRULE_UNRULED},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                why = NULL;
                enum httprule_verdict r = httprule_check(
                        v, n, cases[i].host, cases[i].port, cases[i].method,
                        strlen(cases[i].method), cases[i].target, strlen(cases[i].target), &why);
                ok(r == cases[i].v && (r != HTTPRULE_BAD_PATH || why), "%s %s to %s:%u: %d%s%s",
                   cases[i].method, cases[i].target, cases[i].host, cases[i].port, r,
                   why ? ", " : "", why ? why : "");
        }

        char out[512];
        size_t l = httprule_host_text(v, n, "api.test", 443, out, sizeof out);
        is_str(out, "api.test GET,POST /repos/acme/**; api.test HEAD /status",
               "the host's rules, joined");
        ok(l == strlen(out), "... its length");
        l = httprule_host_text(v, n, "api.test", 443, out, 20);
        ok(l == strlen(out) && l < 20 && !strcmp(out + l - 3, "..."), "... cut: \"%s\"", out);
        l = httprule_host_text(v, n, "none.test", 443, out, sizeof out);
        ok(l == 0 && out[0] == '\0', "... none for an unruled host");

        char names[3][NET_HOST_MAX + 1];
        size_t k = 1;
        snprintf(names[0], sizeof names[0], "other.test");
        ok(httprule_names(v, n, names, &k, 3) == 0 && k == 2 && !strcmp(names[1], "api.test"),
           "names: distinct, after those already there");
        k = 0;
        ok(httprule_names(v, n, names, &k, 1) == -E2BIG && k == 1, "names: -E2BIG past max");
}

static void test_policy(void)
{
        const char *doc = "{\"version\":1,\"network\":{\"allow\":[\"api.test\"],\"http\":["
                          "\"API.test get,POST /repos/acme/**\",\"api.test:8080 * /x\","
                          "\"api.test POST,GET /repos/acme/**\"]}}";
        struct rf_policy *p = NULL;
        struct rf_error err = {0};
        is_int(policy_parse(doc, strlen(doc), "p.json", &p, &err), 0, "network.http parses (%s)",
               err.msg);
        if (!p)
                return;
        ok(p->n_net_http == 2 && !strcmp(p->net_http[0], "api.test GET,POST /repos/acme/**") &&
                   !strcmp(p->net_http[1], "api.test:8080 * /x"),
           "... canonical, each once");
        char *json = NULL;
        is_int(policy_to_json(p, &json), 0, "... to JSON");
        ok(json && strstr(json, "\"http\":[\"api.test GET,POST /repos/acme/**\",\"api.test:8080 "
                                "* /x\"]"),
           "... \"http\" in the canonical JSON: %s", json ? json : "");
        struct rf_policy *q = NULL;
        ok(json && policy_parse(json, strlen(json), NULL, &q, &err) == 0 && q->n_net_http == 2,
           "... which parses back");
        char *json2 = NULL;
        ok(q && policy_to_json(q, &json2) == 0 && !strcmp(json, json2), "... to the same JSON");
        free(json2);
        free(json);
        policy_free(q);

        /* --allow-http and merge */
        struct rf_policy *o = policy_new();
        int rc;
        is_int(policy_add_http_rule(o, "b.test DELETE /x/*", &err), 0, "--allow-http b.test");
        is_int(policy_add_http_rule(o, "api.test:8080 * /x", &err), 0, "--allow-http (same)");
        rc = policy_add_http_rule(o, "b.test DELETE /x/../y", &err);
        ok(rc == -EINVAL && strstr(err.msg, "dot-segment"),
           "--allow-http refuses a dot-segment: %s", err.msg);
        is_int(policy_merge(p, o, &err), 0, "merged");
        ok(p->n_net_http == 3 && !strcmp(p->net_http[2], "b.test DELETE /x/*"),
           "... appended once");
        struct rf_policy *d = NULL;
        ok(policy_dup(p, &d) == 0 && d->n_net_http == 3 && d->net_http[2] != p->net_http[2] &&
                   !strcmp(d->net_http[2], p->net_http[2]),
           "policy_dup copies network.http");
        policy_free(d);
        for (int i = 0; i < 70; i++) {
                char rule[64];
                snprintf(rule, sizeof rule, "h.test GET /r%d", i);
                if (policy_add_http_rule(o, rule, &err) < 0)
                        break;
        }
        ok(o->n_net_http == POLICY_NET_HTTP_MAX && strstr(err.msg, "more than"),
           "--allow-http: at most %d rules (%s)", POLICY_NET_HTTP_MAX, err.msg);
        policy_free(o);
        policy_free(p);

        /* errors carry file:line:col and the key path */
        const char *bad = "{\"version\":1,\n\"network\":{\"http\":[\n  \"a.test GET /ok\",\n"
                          "  \"a.test GET /a/../b\"]}}";
        p = NULL;
        memset(&err, 0, sizeof err);
        rc = policy_parse(bad, strlen(bad), "p.json", &p, &err);
        ok(rc == -EINVAL && !p && err.line == 4 && err.col == 3 &&
                   !strcmp(err.keypath, "network.http[1]") && strstr(err.msg, "dot-segment"),
           "a bad rule: p.json:%u:%u %s: %s", err.line, err.col, err.keypath, err.msg);
        const char *notarr = "{\"version\":1,\"network\":{\"http\":\"a.test GET /\"}}";
        rc = policy_parse(notarr, strlen(notarr), "p.json", &p, &err);
        ok(rc == -EINVAL && !strcmp(err.keypath, "network.http"), "not an array: %s", err.msg);
        const char *notstr = "{\"version\":1,\"network\":{\"http\":[7]}}";
        rc = policy_parse(notstr, strlen(notstr), "p.json", &p, &err);
        ok(rc == -EINVAL && !strcmp(err.keypath, "network.http[0]"), "not a string: %s", err.msg);
        /* 65 entries */
        char big[65 * 32 + 128];
        int n = snprintf(big, sizeof big, "{\"version\":1,\"network\":{\"http\":[");
        for (int i = 0; i < 65; i++)
                n += snprintf(big + n, sizeof big - (size_t)n, "%s\"h.test GET /r%d\"",
                              i ? "," : "", i);
        snprintf(big + n, sizeof big - (size_t)n, "]}}");
        rc = policy_parse(big, strlen(big), "p.json", &p, &err);
        ok(rc == -E2BIG && !strcmp(err.keypath, "network.http[64]"),
           "65 rules: refused at the 65th (%s)", err.msg);
}

int main(void)
{
        test_parse();
        test_path();
        test_glob();
        test_check();
        test_policy();
        return done();
}
