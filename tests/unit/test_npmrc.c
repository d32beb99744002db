/*
 * test_npmrc.c — the .npmrc token reader (shared/npmrc.h): which lines are
 * tokens (and their host and value), which are kept, which are credentials
 * left out of a run's copy; bounds.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "shared/npmrc.h"
#include "tap.h"

static void line(const char *l, enum npmrc_line want, const char *host, const char *value)
{
        size_t vo = 0, vl = 0;
        char h[NPMRC_HOST_MAX + 1] = "";
        enum npmrc_line got = npmrc_classify(l, strlen(l), &vo, &vl, h);
        ok(got == want && (want != NPMRC_TOKEN ||
                           (!strcmp(h, host) && vl == strlen(value) && !memcmp(l + vo, value, vl))),
           "%s: %s", l,
           want == NPMRC_TOKEN  ? "a token"
           : want == NPMRC_DROP ? "left out"
                                : "kept");
}

int main(void)
{
        line("//registry.example/:_authToken=npm_abc123", NPMRC_TOKEN, "registry.example",
             "npm_abc123");
        line("  //Reg.Example:8443/org/path/:_authToken = \"tok 1\"  ", NPMRC_TOKEN,
             "reg.example:8443", "tok 1");
        line("//registry.example/:_authToken=${NPM_TOKEN}", NPMRC_KEEP, NULL, NULL);
        line("//registry.example/:_authToken=", NPMRC_KEEP, NULL, NULL);
        line("//registry.example/:_auth=dXNlcjpwYXNz", NPMRC_DROP, NULL, NULL);
        line("//registry.example/:_password=c2VjcmV0", NPMRC_DROP, NULL, NULL);
        line("_auth = dXNlcjpwYXNz", NPMRC_DROP, NULL, NULL);
        line("//:_authToken=x", NPMRC_DROP, NULL, NULL);
        line("_authToken=npm_global", NPMRC_DROP, NULL, NULL);
        line("//registry.example/:_authToken", NPMRC_KEEP, NULL, NULL);
        line("//bad_host!/:_authToken=x", NPMRC_DROP, NULL, NULL);
        line("//10.1.2.3:4873/:_authToken=x", NPMRC_DROP, NULL, NULL);
        line("//host:/:_authToken=x", NPMRC_DROP, NULL, NULL);
        line("registry=https://registry.example/", NPMRC_KEEP, NULL, NULL);
        line("; //registry.example/:_authToken=commented", NPMRC_KEEP, NULL, NULL);
        line("# //registry.example/:_authToken=commented", NPMRC_KEEP, NULL, NULL);
        line("no equals sign", NPMRC_KEEP, NULL, NULL);
        /* quoted keys, as npm's ini reader takes them */
        line("\"//registry.example/:_authToken\" = \"SECRET\"", NPMRC_TOKEN, "registry.example",
             "SECRET");
        line("'//registry.example/:_authToken'=SECRET", NPMRC_TOKEN, "registry.example", "SECRET");
        line("\"//registry.example/:_password\"=\"c2VjcmV0\"", NPMRC_DROP, NULL, NULL);
        line("\"_auth\"=dXNlcjpwYXNz", NPMRC_DROP, NULL, NULL);

        struct npmrc_token t[NPMRC_TOKENS_MAX];
        size_t n = 0;
        static const char two[] = "registry=https://a.example/\n"
                                  "//a.example/:_authToken=one\r\n"
                                  "//b.example:444/:_authToken=two";
        is_int(npmrc_scan(two, sizeof two - 1, t, &n), 0, "a file with two tokens");
        ok(n == 2 && !strcmp(t[0].host, "a.example") && t[0].value_len == 3 &&
                   !memcmp(two + t[0].value_off, "one", 3) && !strcmp(t[1].host, "b.example:444") &&
                   !memcmp(two + t[1].value_off, "two", 3),
           "... in order, with their hosts and values (a CR before the newline is not the "
           "value's)");
        /* a lone CR ends a line, as in npm's reader */
        static const char cr[] = "registry=https://a.example/\r//a.example/:_authToken=SECRET";
        is_int(npmrc_scan(cr, sizeof cr - 1, t, &n), 0, "a line ended by a lone CR");
        ok(n == 1 && !strcmp(t[0].host, "a.example") && t[0].value_len == 6 &&
                   !memcmp(cr + t[0].value_off, "SECRET", 6),
           "... the token after it found");
        is_int((int)npmrc_line_end(cr, sizeof cr - 1, 0), 27, "npmrc_line_end: at the CR");
        is_int((int)npmrc_line_end(two, sizeof two - 1, 28), 55, "... at the CR of a CRLF");
        is_int(npmrc_scan("a\0b", 3, t, &n), -EINVAL, "a NUL byte: refused");
        char many[NPMRC_TOKENS_MAX * 40 + 64] = "";
        for (int i = 0; i <= NPMRC_TOKENS_MAX; i++) {
                char l[40];
                snprintf(l, sizeof l, "//h%d.example/:_authToken=t\n", i);
                strcat(many, l);
        }
        is_int(npmrc_scan(many, strlen(many), t, &n), -E2BIG,
               "more than NPMRC_TOKENS_MAX tokens: refused");
        return done();
}
