/*
 * test_pipconf.c — the pip.conf credential reader (shared/pipconf.h):
 * which URLs hold a credential (its host, which bytes), which lines are
 * left out of a run's copy, percent-decoding, bounds.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "shared/pipconf.h"
#include "tap.h"

/* the credentials of `text`, as "host=value" (value as written) or
 * "-=value" for one whose line is left out, joined by spaces */
static int scan(const char *text, char *out, size_t size)
{
        struct pipconf_cred c[PIPCONF_CREDS_MAX];
        size_t n = 0, o = 0;
        int r = pipconf_scan(text, strlen(text), c, &n);
        out[0] = '\0';
        for (size_t i = 0; r == 0 && i < n; i++)
                o += (size_t)snprintf(out + o, size - o, "%s%s=%.*s", i ? " " : "",
                                      c[i].host[0] ? c[i].host : "-", (int)c[i].len,
                                      text + c[i].off);
        return r;
}

static void creds(const char *text, const char *want)
{
        char got[4096];
        int r = scan(text, got, sizeof got);
        ok(r == 0 && !strcmp(got, want), "%s -> [%s] (got [%s], %d)", text, want, got, r);
}

int main(void)
{
        creds("[global]\nindex-url = https://user:s3cret@pypi.corp.test/simple\n",
              "pypi.corp.test=s3cret");
        creds("index-url=https://TOKEN123@Pkgs.Example:8443/simple/", "pkgs.example:8443=TOKEN123");
        creds("[global]\nextra-index-url =\n    https://a:pw1@one.test/simple\n"
              "    https://b:p%40ss@two.test/simple\n",
              "one.test=pw1 two.test=p%40ss");
        creds("index-url = https://pkg.example.test/simple\n", "");
        creds("index-url = https://TOKEN:@pypi.fury.test/acct/\n", "pypi.fury.test=TOKEN");
        creds("index-url = https://:@host.test/simple\n", "");
        creds("index-url = https://u:pa'ss@h.test/simple\n", "h.test=pa'ss");
        creds("index-url = https://@host.test/simple\n", "");
        creds("find-links = file:///srv/wheels\n", "");
        creds("# index-url = https://u:old@host.test/simple\n", "-=old");
        creds("; index-url = https://u:old@host.test/simple\n", "-=old");
        creds("index-url = https://u:pw@[::1]:8080/simple\n", "-=pw");
        creds("index-url = https://u:pw@bad_host/simple\n", "-=pw");
        creds("index-url = https://u:pw@10.1.2.3/simple\n", "-=pw");
        creds("index-url = https://u:pw@10.1.2.3:8080/simple\n", "-=pw");
        creds("index-url = https://u:p/w@h.test/simple\n", "-=u:p/w");
        creds("index-url = https://u:p#w@h.test/simple\n", "-=u:p#w");
        creds("index-url = https://u:p\tw@h.test/simple\n", "-=u:p\tw");
        creds("extra-index-url = https://a.test/simple https://u:pw@b.test/simple\n", "b.test=pw");
        creds("find-links = https://h.test/pkg@1.0/\n", "-=h.test/pkg");
        creds("index-url = HTTP://u:pw@h.test\n", "h.test=pw");
        creds("x = xhttps://u:pw@h.test/\n", "");
        creds("index-url = \"https://u:pw@h.test/simple\"\n", "h.test=pw");
        creds("index-url = 'https://u:pw@h.test/simple'\n", "h.test=pw");
        creds("index-url = https://u:pw@h.test?x=@y\n", "h.test=pw");
        creds("index-url = https://u:a:b@h.test/\n", "h.test=a:b");
        creds("index-url = https://u:pw@x@h.test/\n", "h.test=pw@x");

        /* bounds */
        char big[8192];
        size_t o = 0;
        for (int i = 0; i <= PIPCONF_CREDS_MAX; i++)
                o += (size_t)snprintf(big + o, sizeof big - o, "u = https://u:p%d@h%d.test/\n", i,
                                      i);
        char got[4096];
        is_int(scan(big, got, sizeof got), -E2BIG, "more than %d credentials: -E2BIG",
               PIPCONF_CREDS_MAX);
        memset(big, 'a', sizeof big);
        memcpy(big, "u = https://u:", 14);
        memcpy(big + 14 + PIPCONF_VALUE_MAX + 1, "@h.test/\n", 10);
        is_int(scan(big, got, sizeof got), -E2BIG, "a credential past %d bytes: -E2BIG",
               PIPCONF_VALUE_MAX);
        struct pipconf_cred c[PIPCONF_CREDS_MAX];
        size_t n;
        is_int(pipconf_scan("a\0b", 3, c, &n), -EINVAL, "a NUL byte: -EINVAL");

        /* decoding */
        char d[64];
        size_t dl = 0;
        ok(pipconf_decode("p%40ss%2Fw", 10, d, &dl) == 0 && dl == 6 && !strcmp(d, "p@ss/w"),
           "percent-decoding: p%%40ss%%2Fw -> p@ss/w");
        is_int(pipconf_decode("a%4", 3, d, &dl), -EINVAL, "a cut escape: -EINVAL");
        is_int(pipconf_decode("a%zz", 4, d, &dl), -EINVAL, "a bad escape: -EINVAL");
        is_int(pipconf_decode("a%00b", 5, d, &dl), -EINVAL, "%%00: -EINVAL");
        ok(pipconf_decode("plain", 5, d, &dl) == 0 && dl == 5 && !strcmp(d, "plain"),
           "no escape: as it is");
        return done();
}
