/*
 * test_inject.c — credential injection's pure parts (issue 15): the
 * --inject parser and the injection binding's canonical JSON, placeholder
 * generation (alphabet, length, shape, uniqueness), host matching,
 * detection of the placeholder and the value (Basic included), header
 * replacement (Basic: decoded, replaced, encoded again), the "basic"
 * binding and its Authorization header, request-body rewriting with
 * placeholders of any length (every cut of the body gives the same bytes;
 * a possible beginning held, the out room respected, counting alone), the
 * de-chunking of a request body (http_chunked_decode) and
 * the streaming response scrubber with the value split at every offset.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "egress/http.h"
#include "egress/inject.h"
#include "policy/binding.h"
#include "tap.h"

static void test_cli(void)
{
        char why[256], *c = NULL;
        struct secret_binding b;

        is_int(secret_inject_cli("TOKEN=store:gh@3@API.GitHub.com,svc.test:8080", &c, why,
                                 sizeof why),
               0, "--inject TOKEN=store:gh@3@API.GitHub.com,svc.test:8080 (%s)", c ? "" : why);
        is_str(c,
               "{\"deliver\":\"inject\",\"env\":\"TOKEN\",\"from\":\"store:gh@3\",\"hosts\":"
               "[\"api.github.com\",\"svc.test:8080\"],\"name\":\"TOKEN\"}",
               "... split at the last '@' (the version stays), hosts canonical");
        is_int(secret_binding_parse(c, strlen(c), &b, why, sizeof why), 0, "... parses again");
        ok(b.delivery == SECRET_INJECT && b.version == 3 && b.n_hosts == 2 &&
                   !strcmp(b.env, "TOKEN"),
           "... an injection of store gh v3 into TOKEN, two hosts");
        secret_binding_clear(&b);
        free(c);
        c = NULL;
        is_int(secret_inject_cli("T=store:gh@HTTP://Svc.Test:8080", &c, why, sizeof why), 0,
               "--inject ...@HTTP://Svc.Test:8080: plaintext, explicitly (%s)", c ? "" : why);
        ok(c && strstr(c, "\"hosts\":[\"http://svc.test:8080\"]"),
           "... canonical http://svc.test:8080");
        free(c);

        static const char *const bad[] = {
                "TOKEN=store:gh@http://a.test",     /* plaintext without a port */
                "TOKEN=store:gh@http://a.test:443", /* never cleartext on 443 */
                "TOKEN=store:gh@https://a.test",    /* no other scheme */
                "TOKEN=store:gh",                   /* no hosts */
                "TOKEN=store:gh@",                  /* empty host list */
                "TOKEN=store:gh@a.test,",           /* empty host */
                "TOKEN=store:gh@*.a.test",          /* wildcard */
                "TOKEN=store:gh@a.test:0",          /* port 0 */
                "TOKEN=store:gh@a.test:65536",      /* port too large */
                "TOKEN=store:gh@a..test",           /* empty label */
                "TOKEN=store:gh@i..",               /* an empty last label (found by fuzz_inject) */
                "TOKEN=store:gh@-a.test",           /* label starting with '-' */
                "TOKEN=store:gh@a_b.test",          /* not a host name */
                "RINGFENCE_X=store:gh@a.test",      /* ringfence's own variable */
                "1X=store:gh@a.test",               /* not a variable */
                "TOKEN=vault:x@a.test",             /* unknown source */
                "TOKEN@a.test",                     /* no '=' */
                "T=store:gh@a.test,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q", /* 17 hosts */
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                c = NULL;
                ok(secret_inject_cli(bad[i], &c, why, sizeof why) < 0 && !c, "refused: %s (%s)",
                   bad[i], why);
        }

        const char *pol = "{\"name\":\"anthropic\",\"deliver\":\"inject\",\"from\":\"store:a\","
                          "\"env\":\"ANTHROPIC_API_KEY\",\"hosts\":[\"api.anthropic.com\"],"
                          "\"header\":\"x-api-key: {}\",\"placeholder\":{\"prefix\":\"sk-ant-\","
                          "\"length\":40},\"on_exfil\":\"kill\"}";
        is_int(secret_binding_parse(pol, strlen(pol), &b, why, sizeof why), 0,
               "the policy form (%s)", why);
        ok(b.exfil_kill && b.ph_length == 40 && !strcmp(b.ph_prefix, "sk-ant-") &&
                   !strcmp(b.header, "x-api-key: {}"),
           "... header template, placeholder shape, on_exfil kill");
        c = NULL;
        is_int(secret_binding_to_json(&b, &c), 0, "... canonical text");
        is_str(c,
               "{\"deliver\":\"inject\",\"env\":\"ANTHROPIC_API_KEY\",\"from\":\"store:a\","
               "\"header\":\"x-api-key: {}\",\"hosts\":[\"api.anthropic.com\"],\"name\":"
               "\"anthropic\",\"on_exfil\":\"kill\",\"placeholder\":{\"length\":40,\"prefix\":"
               "\"sk-ant-\"}}",
               "... sorted keys");
        struct secret_binding b2;
        is_int(secret_binding_parse(c, strlen(c), &b2, why, sizeof why), 0, "... parses again");
        char *c2 = NULL;
        (void)secret_binding_to_json(&b2, &c2);
        is_str(c2, c, "... to the same text");
        free(c2);
        free(c);
        secret_binding_clear(&b2);
        secret_binding_clear(&b);

        static const char *const bad_json[] = {
                /* no hosts */
                "{\"name\":\"T\",\"deliver\":\"inject\",\"from\":\"store:a\"}",
                /* hosts on another delivery */
                "{\"name\":\"T\",\"deliver\":\"env\",\"from\":\"store:a\",\"hosts\":[\"a.b\"]}",
                /* a name that is no variable, and no env */
                "{\"name\":\"a.b\",\"deliver\":\"inject\",\"from\":\"store:a\",\"hosts\":[\"a\"]}",
                /* header without {} / with two / a framing header / CR */
                "{\"name\":\"T\",\"deliver\":\"inject\",\"from\":\"store:a\",\"hosts\":[\"a\"],"
                "\"header\":\"x-api-key: k\"}",
                "{\"name\":\"T\",\"deliver\":\"inject\",\"from\":\"store:a\",\"hosts\":[\"a\"],"
                "\"header\":\"x-api-key: {}{}\"}",
                "{\"name\":\"T\",\"deliver\":\"inject\",\"from\":\"store:a\",\"hosts\":[\"a\"],"
                "\"header\":\"Host: {}\"}",
                "{\"name\":\"T\",\"deliver\":\"inject\",\"from\":\"store:a\",\"hosts\":[\"a\"],"
                "\"header\":\"x: {}\\r\\nEvil: 1\"}",
                /* placeholder too short for 128 bits, a prefix outside the alphabet */
                "{\"name\":\"T\",\"deliver\":\"inject\",\"from\":\"store:a\",\"hosts\":[\"a\"],"
                "\"placeholder\":{\"prefix\":\"sk-\",\"length\":24}}",
                "{\"name\":\"T\",\"deliver\":\"inject\",\"from\":\"store:a\",\"hosts\":[\"a\"],"
                "\"placeholder\":{\"prefix\":\"sk.\"}}",
                "{\"name\":\"T\",\"deliver\":\"inject\",\"from\":\"store:a\",\"hosts\":[\"a\"],"
                "\"on_exfil\":\"log\"}",
        };
        for (size_t i = 0; i < sizeof bad_json / sizeof bad_json[0]; i++)
                ok(secret_binding_parse(bad_json[i], strlen(bad_json[i]), &b, why, sizeof why) < 0,
                   "refused: %s (%s)", bad_json[i], why);
}

static bool ph_alpha(const char *s)
{
        for (; *s; s++)
                if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-", *s))
                        return false;
        return true;
}

static void test_placeholder(void)
{
        uint8_t rnd[SECRET_PH_LEN_MAX];
        char a[SECRET_PH_LEN_MAX + 1], b[SECRET_PH_LEN_MAX + 1];
        bool seen[64] = {false};

        for (size_t i = 0; i < sizeof rnd; i++)
                rnd[i] = (uint8_t)i;
        is_int(inject_placeholder(rnd, sizeof rnd, "", 0, a, sizeof a), SECRET_PH_DEFAULT_LEN,
               "no shape: %d characters", SECRET_PH_DEFAULT_LEN);
        ok(ph_alpha(a), "... of A-Z a-z 0-9 _ - only (%s)", a);
        is_int(inject_placeholder(rnd, sizeof rnd, "sk-ant-", 108, a, sizeof a), 108,
               "shaped: 108 characters");
        ok(!strncmp(a, "sk-ant-", 7) && ph_alpha(a), "... starting sk-ant-");
        /* every one of the 64 characters is reachable: 6 bits each */
        (void)inject_placeholder(rnd, sizeof rnd, "", 64, a, sizeof a);
        for (size_t i = 0; i < 64; i++)
                seen[strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
                            a[i]) -
                     "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"] = true;
        size_t n = 0;
        for (size_t i = 0; i < 64; i++)
                n += seen[i];
        is_int((int)n, 64, "64 distinct characters: 6 bits per random character");
        is_int(inject_placeholder(rnd, sizeof rnd, "sk-", 3 + SECRET_PH_RANDOM_MIN - 1, a,
                                  sizeof a),
               -EINVAL, "fewer than %d random characters (128 bits): refused",
               SECRET_PH_RANDOM_MIN);
        is_int(inject_placeholder(rnd, 10, "", 0, a, sizeof a), -E2BIG,
               "not enough random bytes: refused");
        /* uniqueness: two draws from getrandom differ */
        uint8_t r1[64], r2[64];
        if (getrandom(r1, sizeof r1, 0) != sizeof r1 || getrandom(r2, sizeof r2, 0) != sizeof r2)
                abort();
        (void)inject_placeholder(r1, sizeof r1, "", 0, a, sizeof a);
        (void)inject_placeholder(r2, sizeof r2, "", 0, b, sizeof b);
        ok(strcmp(a, b) != 0, "two placeholders differ (%s, %s)", a, b);
}

static char *const hosts[] = {"svc.test", "api.test:8443", "http://plain.test:8080"};
static struct inject_secret sec = {.name = "TOKEN",
                                   .version = 2,
                                   .placeholder = "PH_abcdefghijklmnopqrstuvwxyz0123",
                                   .ph_len = 33,
                                   .value = (const unsigned char *)"real-secret-value-42",
                                   .len = 20,
                                   .hosts = hosts,
                                   .n_hosts = 3};

static void test_headers(void)
{
        ok(!inject_host_match(&sec, "svc.test", 80) && !inject_host_match(&sec, "svc.test", 443) &&
                   !inject_host_match(&sec, "svc.test", 8080),
           "a host without a port means HTTPS: never the value in a plaintext request");
        ok(!inject_host_match(&sec, "api.test", 8443) && !inject_host_match(&sec, "api.test", 443),
           "a host with a port is TLS: never the value in a plaintext request either");
        ok(inject_host_match(&sec, "plain.test", 8080) &&
                   !inject_host_match(&sec, "plain.test", 80) &&
                   !inject_tls_match(&sec, "plain.test", 8080),
           "http://HOST:PORT: plaintext on that port only, never TLS");
        ok(!inject_host_match(&sec, "evil.svc.test", 80) && !inject_host_match(&sec, "svc.tes", 80),
           "no suffix or prefix matches");
        ok(inject_tls_match(&sec, "svc.test", 443) && !inject_tls_match(&sec, "svc.test", 8443) &&
                   !inject_tls_match(&sec, "svc.test", 80),
           "TLS: a host without a port is 443 only");
        ok(inject_tls_match(&sec, "api.test", 8443) && !inject_tls_match(&sec, "api.test", 443),
           "TLS: a host with a port is that port only");
        ok(!inject_tls_match(&sec, "evil.svc.test", 443) &&
                   !inject_tls_match(&sec, "svc.tes", 443) &&
                   !inject_tls_match(&sec, "svc.test", 0),
           "TLS: no suffix or prefix matches, no port 0");
        {
                static char *const h2[] = {"SVC.test:8080", "other.test", "svc.test"};
                struct inject_secret two[2] = {sec, sec};
                two[1].hosts = h2;
                two[1].n_hosts = 3;
                char names[4][SECRET_INJECT_HOST_MAX + 1];
                size_t k = inject_tls_names(two, 2, names, 4);
                ok(k == 3 && !strcmp(names[0], "svc.test") && !strcmp(names[1], "api.test") &&
                           !strcmp(names[2], "other.test"),
                   "the CA's names: distinct, lower case, ports dropped (%zu)", k);
                is_int((int)inject_tls_names(two, 2, names, 2), 3, "more than max: max + 1");
        }

        char out[1024];
        size_t ol;
        const char *v = "Bearer PH_abcdefghijklmnopqrstuvwxyz0123";
        is_int(inject_header_value(&sec, true, v, strlen(v), out, sizeof out, &ol), 1,
               "Bearer placeholder: replaced");
        ok(ol == 27 && !memcmp(out, "Bearer real-secret-value-42", 27), "... by the value");
        v = "no secret here";
        is_int(inject_header_value(&sec, true, v, strlen(v), out, sizeof out, &ol), 0,
               "a value without the placeholder: untouched");
        /* Basic: base64("user:PH_...") */
        char cred[400], hv[600];
        snprintf(cred, sizeof cred, "user:%s", sec.placeholder);
        strcpy(hv, "Basic ");
        hv[6 + inject_b64_encode((const unsigned char *)cred, strlen(cred), hv + 6)] = '\0';
        is_int(inject_header_value(&sec, true, hv, strlen(hv), out, sizeof out, &ol), 1,
               "Basic credentials with the placeholder as password: replaced");
        unsigned char dec[256];
        int dl = inject_b64_decode(out + 6, ol - 6, dec, sizeof dec);
        ok(dl == 25 && !memcmp(dec, "user:real-secret-value-42", 25) && !memcmp(out, "Basic ", 6),
           "... decoded, replaced, encoded again");
        is_int(inject_header_value(&sec, false, hv, strlen(hv), out, sizeof out, &ol), 0,
               "... but not in another header: the run cannot have the value re-encoded at an "
               "offset of its choice (X-Request-Id: Basic base64(a + placeholder))");
        {
                /* scrubbable values: long ones (a JWT), hex ones past any framing */
                struct inject_secret t = sec;
                unsigned char vb[400];
                t.value = vb;
                memset(vb, 'J', 400);
                t.len = 400;
                ok(inject_scrubbable(&t), "a 400-byte value is scrubbable");
                struct inject_needles nd;
                ok(inject_needles_new(&t, 1, &nd) == 0 && nd.count >= 1 && nd.n[0].find_len == 400,
                   "... and the scrubber looks for it (values past 344 bytes were skipped)");
                inject_needles_free(&nd);
                memcpy(vb, "0123456789abcdef0123456789abcdef01234567", 40);
                t.len = 40;
                ok(inject_scrubbable(&t), "a 40-digit hex value (a classic token) is scrubbable");
                t.len = 16;
                ok(!inject_scrubbable(&t),
                   "a 16-digit hex value is not (it could be a chunk size)");
                memcpy(vb, "short", 5);
                t.len = 5;
                ok(!inject_scrubbable(&t), "a 5-byte value is not");
        }
        is_int(inject_header_value(&sec, true, v, strlen(v), out, 3, &ol), 0,
               "small buffer, no match");
        v = "Bearer PH_abcdefghijklmnopqrstuvwxyz0123";
        is_int(inject_header_value(&sec, true, v, strlen(v), out, 10, &ol), -E2BIG,
               "a result that does not fit: -E2BIG");

        const char *where = NULL;
        ok(inject_mentions(&sec, 1, hv, strlen(hv), false, true, &where) == &sec &&
                   !strcmp(where, "placeholder"),
           "detection: the placeholder inside Basic");
        const char *dns = "ph_abcdefghijklmnopqrstuvwxyz0123.allowed.test";
        ok(inject_mentions(&sec, 1, dns, strlen(dns), true, false, &where) == &sec,
           "detection: a lower-cased placeholder in a DNS name");
        ok(!inject_mentions(&sec, 1, dns, strlen(dns), false, false, &where),
           "... only when compared without case");
        const char *val = "/x?k=real-secret-value-42";
        ok(inject_mentions(&sec, 1, val, strlen(val), false, false, &where) == &sec &&
                   !strcmp(where, "value"),
           "detection: the value itself");
        const char *clean = "/repos/acme/x";
        ok(!inject_mentions(&sec, 1, clean, strlen(clean), true, true, &where), "control: clean");

        /* a name: the placeholder split across labels (as one longer than
         * a label's 63 characters must be) */
        const char *split = "PH_abcdefghijklm.nopqrstuvwxyz.0123.x.allowed.test";
        ok(!inject_mentions(&sec, 1, split, strlen(split), true, false, &where),
           "a placeholder split across labels: not in the name as it stands");
        ok(inject_mentions_name(&sec, 1, split, strlen(split), &where) == &sec &&
                   !strcmp(where, "placeholder"),
           "... found by inject_mentions_name (its dots taken out)");
        ok(inject_mentions_name(&sec, 1, dns, strlen(dns), &where) == &sec,
           "... which finds one whole in a label too");
        const char *near = "PH_abcdefghijklm.allowed.test";
        ok(!inject_mentions_name(&sec, 1, near, strlen(near), &where),
           "control: half the placeholder in a name: nothing");
        /* a name longer than the buffer it is flattened through: the
         * placeholder across a piece's edge */
        static char lname[20000];
        size_t ln = 0;
        for (; ln < 18190; ln++) /* 16,371 characters but dots */
                lname[ln] = (ln % 10 == 9) ? '.' : 'a';
        ln += (size_t)snprintf(lname + ln, sizeof lname - ln,
                               "PH_abcdefghijkl.mnopqrstuvwxyz0123.test");
        ok(inject_mentions_name(&sec, 1, lname, ln, &where) == &sec,
           "... in an 18 KB name, across the flattening buffer's 16 KiB edge");
        lname[ln - 20] = 'Z';
        ok(!inject_mentions_name(&sec, 1, lname, ln, &where), "... control: one character changed");
}

static void test_query(void)
{
        struct inject_secret q = sec;
        char out[512];
        size_t ol;
        snprintf(q.query, sizeof q.query, "key");
        q.value = (const unsigned char *)"a b/c+d=e~f";
        q.len = 11;
        const char *t = "/v1/x?key=PH_abcdefghijklmnopqrstuvwxyz0123&o=1";
        is_int(inject_query(&q, t, strlen(t), out, sizeof out, &ol), 1,
               "query: the declared parameter holding the placeholder: replaced");
        ok(ol == strlen("/v1/x?key=a%20b%2Fc%2Bd%3De~f&o=1") &&
                   !memcmp(out, "/v1/x?key=a%20b%2Fc%2Bd%3De~f&o=1", ol),
           "... by the value, percent-encoded, the rest unchanged (%.*s)", (int)ol, out);
        t = "/v1/x?o=1&key=PH_abcdefghijklmnopqrstuvwxyz0123";
        is_int(inject_query(&q, t, strlen(t), out, sizeof out, &ol), 1, "... as the last one");
        t = "/v1/x?okey=PH_abcdefghijklmnopqrstuvwxyz0123&key=x";
        is_int(inject_query(&q, t, strlen(t), out, sizeof out, &ol), 0,
               "another parameter (okey) holding it: not replaced");
        ok(ol == strlen(t) && !memcmp(out, t, ol), "... the target copied unchanged");
        t = "/PH_abcdefghijklmnopqrstuvwxyz0123?key=1";
        is_int(inject_query(&q, t, strlen(t), out, sizeof out, &ol), 0,
               "in the path: not replaced (the caller refuses it)");
        t = "/v1/x?key=xPH_abcdefghijklmnopqrstuvwxyz0123";
        is_int(inject_query(&q, t, strlen(t), out, sizeof out, &ol), 0,
               "the placeholder inside a longer value: not replaced");
        t = "/v1/x?key=PH_abcdefghijklmnopqrstuvwxyz0123";
        is_int(inject_query(&q, t, strlen(t), out, 20, &ol), -E2BIG, "no room: -E2BIG");
        q.query[0] = '\0';
        is_int(inject_query(&q, t, strlen(t), out, sizeof out, &ol), 0,
               "no query declared: never replaced");
}

static void test_body(void)
{
        struct inject_secret v[2] = {sec, sec};
        memcpy(v[0].placeholder, "QH_abcdefghijklmnopq", 21);
        v[0].ph_len = 20;
        v[0].body = true;
        v[1].body = false; /* not declared: never replaced */
        char b[128];
        uint64_t got = 0;
        snprintf(b, sizeof b, "x=QH_abcdefghijklmnopq&y=QH_abcdefghijklmnopq");
        size_t h = inject_body(v, 2, 3, b, strlen(b), false, &got);
        ok(h == 0 && got == 1 && !strcmp(b, "x=real-secret-value-42&y=real-secret-value-42"),
           "body: every placeholder replaced in place (%s)", b);
        snprintf(b, sizeof b, "x=QH_abcdefghijklmnopq");
        got = 0;
        (void)inject_body(v, 2, 2, b, strlen(b), false, &got);
        ok(got == 0 && strstr(b, "QH_"), "... not toward a host the mask does not name");
        snprintf(b, sizeof b, "x=QH_abcde");
        got = 0;
        is_int((int)inject_body(v, 2, 1, b, strlen(b), true, &got), 8,
               "a beginning of the placeholder at the end, more to come: held (8 bytes)");
        is_int((int)inject_body(v, 2, 1, b, strlen(b), false, &got), 0,
               "... at the body's end: not");
        v[0].ph_len = 21;
        snprintf(b, sizeof b, "x=QH_abcdefghijklmnopq");
        got = 0;
        (void)inject_body(v, 2, 1, b, strlen(b), false, &got);
        ok(got == 0, "a placeholder of another length than the value: never in a body");
}

static void test_basic(void)
{
        char why[256], *c = NULL;
        struct secret_binding b;
        const char *pol = "{\"name\":\"GIT\",\"deliver\":\"inject\",\"from\":\"store:a\","
                          "\"hosts\":[\"git.test\"],\"basic\":\"x-access-token\"}";
        is_int(secret_binding_parse(pol, strlen(pol), &b, why, sizeof why), 0,
               "basic: the policy form (%s)", why);
        is_str(b.basic, "x-access-token", "... the user name kept");
        is_int(secret_binding_to_json(&b, &c), 0, "... canonical text");
        is_str(c,
               "{\"basic\":\"x-access-token\",\"deliver\":\"inject\",\"env\":\"GIT\",\"from\":"
               "\"store:a\",\"hosts\":[\"git.test\"],\"name\":\"GIT\"}",
               "... with basic in it");
        struct secret_binding b2;
        is_int(secret_binding_parse(c, strlen(c), &b2, why, sizeof why), 0, "... parses again");
        is_str(b2.basic, "x-access-token", "... to the same user");
        secret_binding_clear(&b2);
        secret_binding_clear(&b);
        free(c);

        static const char *const bad[] = {
                /* a colon (RFC 7617: not in a user-id), empty, a space, a control, too long */
                "{\"name\":\"T\",\"deliver\":\"inject\",\"from\":\"store:a\",\"hosts\":[\"a\"],"
                "\"basic\":\"a:b\"}",
                "{\"name\":\"T\",\"deliver\":\"inject\",\"from\":\"store:a\",\"hosts\":[\"a\"],"
                "\"basic\":\"\"}",
                "{\"name\":\"T\",\"deliver\":\"inject\",\"from\":\"store:a\",\"hosts\":[\"a\"],"
                "\"basic\":\"a b\"}",
                "{\"name\":\"T\",\"deliver\":\"inject\",\"from\":\"store:a\",\"hosts\":[\"a\"],"
                "\"basic\":\"a\\r\\nX: 1\"}",
                "{\"name\":\"T\",\"deliver\":\"inject\",\"from\":\"store:a\",\"hosts\":[\"a\"],"
                "\"basic\":\"a\\u0000b\"}",
                "{\"name\":\"T\",\"deliver\":\"inject\",\"from\":\"store:a\",\"hosts\":[\"a\"],"
                "\"basic\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
                /* not a string */
                "{\"name\":\"T\",\"deliver\":\"inject\",\"from\":\"store:a\",\"hosts\":[\"a\"],"
                "\"basic\":true}",
                /* with a header template: one or the other */
                "{\"name\":\"T\",\"deliver\":\"inject\",\"from\":\"store:a\",\"hosts\":[\"a\"],"
                "\"basic\":\"u\",\"header\":\"x-api-key: {}\"}",
                /* on another delivery */
                "{\"name\":\"T\",\"deliver\":\"env\",\"from\":\"store:a\",\"basic\":\"u\"}",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
                ok(secret_binding_parse(bad[i], strlen(bad[i]), &b, why, sizeof why) < 0,
                   "basic refused: %s (%s)", bad[i], why);

        struct inject_secret s = sec;
        snprintf(s.basic, sizeof s.basic, "git");
        char out[INJECT_BASIC_HEADER_MAX];
        int n = inject_basic_header(&s, out, sizeof out);
        /* base64("git:real-secret-value-42") */
        is_int(n, 53, "inject_basic_header: its length");
        ok(n == 53 && !memcmp(out, "Authorization: Basic Z2l0OnJlYWwtc2VjcmV0LXZhbHVlLTQy", 53),
           "... Authorization: Basic base64(user:value) (%.*s)", n > 0 ? n : 0, out);
        is_int(inject_basic_header(&s, out, 40), -E2BIG, "... -E2BIG where it does not fit");
        s.basic[0] = '\0';
        is_int(inject_basic_header(&s, out, sizeof out), -EINVAL, "... -EINVAL without basic");
}

/* The reference: the body whole in one call, and the same body cut at
 * every pair of offsets, fed as the proxy feeds it (the unconsumed rest
 * passed again with the next piece): the same bytes out every time. */
static size_t rewrite_cut(const struct inject_secret *v, size_t n, uint64_t mask, const char *in,
                          size_t len, size_t cut1, size_t cut2, char *out, size_t out_size,
                          uint64_t *inj)
{
        char pend[4096];
        size_t pl = 0, o = 0;
        size_t cuts[3] = {cut1, cut2, len};
        size_t from = 0;
        for (size_t k = 0; k < 3; k++) {
                memcpy(pend + pl, in + from, cuts[k] - from);
                pl += cuts[k] - from;
                from = cuts[k];
                size_t ol;
                size_t used = inject_body_rewrite(v, n, mask, pend, pl, k < 2, out + o,
                                                  out_size - o, &ol, inj);
                o += ol;
                memmove(pend, pend + used, pl - used);
                pl -= used;
        }
        return pl ? (size_t)-1 : o;
}

static void test_body_rewrite(void)
{
        struct inject_secret v[3] = {sec, sec, sec};
        /* a 21-byte placeholder for a 20-byte value, a 33-byte one for a
         * 5-byte value, and one without "body" */
        memcpy(v[0].placeholder, "QH_abcdefghijklmnopqr", 22);
        v[0].ph_len = 21;
        v[0].body = true;
        v[1].body = true;
        v[1].value = (const unsigned char *)"short";
        v[1].len = 5;
        v[2].body = false;
        memcpy(v[2].placeholder, "ZZ_abcdefghijklmnopqrstuvwxyz01234", 35);
        v[2].ph_len = 34;
        const char *in = "a=QH_abcdefghijklmnopqr&b=PH_abcdefghijklmnopqrstuvwxyz0123&"
                         "c=QH_abcdefghijklmnopqrQH_abcdefghijklmnopqr&d=ZZ_abcdefghijklmnopqrs"
                         "tuvwxyz01234&e=QH_abc";
        const char *want = "a=real-secret-value-42&b=short&c=real-secret-value-42real-secret-"
                           "value-42&d=ZZ_abcdefghijklmnopqrstuvwxyz01234&e=QH_abc";
        char out[512];
        size_t ol;
        uint64_t inj = 0;
        size_t len = strlen(in);
        size_t used = inject_body_rewrite(v, 3, 7, in, len, false, out, sizeof out, &ol, &inj);
        ok(used == len && ol == strlen(want) && !memcmp(out, want, ol),
           "body rewrite: placeholders replaced whatever their lengths (%.*s)", (int)ol, out);
        is_int((int)inj, 3, "... both bindings with body marked injected, the third not");
        size_t cl;
        inj = 0;
        (void)inject_body_rewrite(v, 3, 7, in, len, false, NULL, SIZE_MAX, &cl, &inj);
        is_int((int)cl, (int)strlen(want), "... counting alone gives the length (%zu)", cl);
        inj = 0;
        used = inject_body_rewrite(v, 3, 1, in, len, false, out, sizeof out, &ol, &inj);
        ok(inj == 1 && memmem(out, ol, "PH_abcdefghijklmnopqrstuvwxyz0123", 33),
           "... a secret the mask does not name: not replaced");
        inj = 0;
        used = inject_body_rewrite(v, 3, 7, in, len, true, out, sizeof out, &ol, &inj);
        is_int((int)(len - used), 6,
               "more to come: the beginning of a placeholder at the end is held (6 bytes)");
        used = inject_body_rewrite(v, 3, 7, "xQH_abcdefghijklmnopqrQ", 23, true, out, sizeof out,
                                   &ol, &inj);
        ok(used == 22 && ol == 21 && !memcmp(out, "xreal-secret-value-42", 21),
           "... and a single first byte too");
        used = inject_body_rewrite(v, 3, 7, "xyzQH_abcdefghijklmnopqr", 24, false, out, 10, &ol,
                                   &inj);
        ok(used == 3 && ol == 3,
           "out room: stops before a value that does not fit (%zu in, %zu out)", used, ol);
        used = inject_body_rewrite(v, 3, 7, "xyz", 3, false, out, 2, &ol, &inj);
        ok(used == 2 && ol == 2, "... and where a byte does not");

        /* every cut */
        size_t bad = 0, runs = 0;
        char cut[512];
        for (size_t a = 0; a <= len; a++)
                for (size_t b = a; b <= len; b += 3) {
                        uint64_t ci = 0;
                        size_t cn = rewrite_cut(v, 3, 7, in, len, a, b, cut, sizeof cut, &ci);
                        bad += cn != strlen(want) || memcmp(cut, want, strlen(want)) || ci != 3;
                        runs++;
                }
        is_int((int)bad, 0, "... the same bytes however the body is cut (%zu cuts)", runs);
}

/* http_chunked_decode, as the proxy reads a chunked body it rewrites: the
 * data alone, the same consumption as http_chunked_feed, any cut, any
 * out room; trailers dropped; the same refusals. */
static void test_dechunk(void)
{
        const char *in = "5;ext=1\r\nhello\r\n1\r\n \r\n6\r\nworld!\r\n0\r\nX-T: v\r\n\r\nNEXT";
        size_t len = strlen(in), body = len - 4;
        struct http_chunked c;
        char out[64];
        size_t ol;
        bool done;
        const char *why;
        http_chunked_init(&c);
        ssize_t k = http_chunked_decode(&c, in, len, out, sizeof out, &ol, &done, &why);
        ok(k == (ssize_t)body && done && ol == 12 && !memcmp(out, "hello world!", 12),
           "de-chunked: the data alone, sizes, extensions and trailers gone (%.*s)", (int)ol, out);
        size_t bad = 0, runs = 0;
        for (size_t cut = 0; cut <= len; cut++)
                for (size_t room = 1; room <= 13; room += 4) {
                        char acc[64];
                        size_t al = 0, pos = 0;
                        bool d = false;
                        int guard = 0;
                        http_chunked_init(&c);
                        while (!d && guard++ < 200) {
                                size_t end = pos < cut ? cut : len;
                                size_t o2;
                                ssize_t r = http_chunked_decode(
                                        &c, in + pos, end - pos, acc + al,
                                        room < sizeof acc - al ? room : sizeof acc - al, &o2, &d,
                                        &why);
                                if (r < 0)
                                        break;
                                pos += (size_t)r;
                                al += o2;
                        }
                        bad += !d || pos != body || al != 12 || memcmp(acc, "hello world!", 12);
                        runs++;
                }
        is_int((int)bad, 0, "... the same whatever the cuts and the room out (%zu runs)", runs);
        http_chunked_init(&c);
        ok(http_chunked_decode(&c, "5\r\nhelloX", 9, out, sizeof out, &ol, &done, &why) ==
                           -EBADMSG &&
                   why,
           "... framing refused as http_chunked_feed refuses it (%s)", why);
}

static void test_scrub(void)
{
        struct inject_needles nd;
        is_int(inject_needles_new(&sec, 1, &nd), 0, "needles");
        char in[512];
        unsigned char b64v[64];
        size_t bl = inject_b64_encode(sec.value, sec.len, (char *)b64v);
        (void)bl;
        snprintf(in, sizeof in, "{\"echo\":\"Bearer %s\",\"b\":\"%.24s\",\"tail\":\"%s\"}",
                 (const char *)sec.value, (const char *)b64v, "real-secret-valu");
        size_t len = strlen(in);
        char expect[1024];
        uint64_t rep = 0;
        memcpy(expect, in, len);
        size_t hold0 = inject_scrub_inplace(&nd, expect, len, 0, &rep);
        size_t elen = len;
        ok(hold0 == 0 && rep == 2 && !memmem(expect, elen, sec.value, sec.len) &&
                   !memmem(expect, elen, b64v, 24),
           "the value and its base64 scrubbed in place");
        ok(memmem(expect, elen, sec.placeholder, sec.len) != NULL,
           "... replaced by the placeholder, cut to the value's length (framing unchanged)");
        ok(memmem(expect, elen, "real-secret-valu\"", 17) != NULL,
           "... a prefix of the value followed by other bytes stays as it was");
        /* byte by byte, the held tail carried each time */
        {
                char buf[1024];
                size_t hold = 0;
                rep = 0;
                for (size_t i = 1; i <= len; i++) {
                        buf[i - 1] = in[i - 1];
                        hold = inject_scrub_inplace(&nd, buf, i, i - 1 - hold, &rep);
                }
                ok(hold == 0 && !memcmp(buf, expect, len) && rep == 2,
                   "... and fed one byte at a time");
        }
        bool all;
        /* in place, as the egress process's response buffer: the stream cut
         * at every offset, the held-back tail carried into the next read */
        all = true;
        for (size_t at = 0; at <= len; at++) {
                char buf[1024];
                rep = 0;
                memcpy(buf, in, at);
                size_t hold = inject_scrub_inplace(&nd, buf, at, 0, &rep);
                memcpy(buf + at, in + at, len - at);
                hold = inject_scrub_inplace(&nd, buf, len, at - hold, &rep);
                (void)hold;
                if (memcmp(buf, expect, len) != 0 || rep != 2)
                        all = false;
        }
        ok(all, "in place: the same result with the stream cut at every offset");
        char tail[] = "xx real-secret-val";
        rep = 0;
        is_int((int)inject_scrub_inplace(&nd, tail, strlen(tail), 0, &rep), 15,
               "in place: a value's beginning at the end is held back (15 bytes)");
        /* a value cut short at the end of a response: replaced when 8 bytes
         * or more of it stand there, left when fewer (they could be anything) */
        char cut[] = "xx real-secret-val";
        rep = 0;
        size_t held = inject_scrub_inplace(&nd, cut, strlen(cut), 0, &rep);
        is_int(inject_scrub_tail(&nd, cut, strlen(cut), held, &rep), 1,
               "the end of a stream: a 15-byte beginning of the value replaced");
        ok(!strcmp(cut, "xx PH_abcdefghijkl") && rep == 1,
           "... by the placeholder's beginning (%s)", cut);
        char shortcut[] = "xx real-se";
        held = inject_scrub_inplace(&nd, shortcut, strlen(shortcut), 0, &rep);
        is_int(inject_scrub_tail(&nd, shortcut, strlen(shortcut), held, &rep), 0,
               "... a 7-byte beginning left as it is");
        /* a stream that pauses inside the value (its hold timed out and the
         * beginning went out): the rest is still overwritten when it comes,
         * over more pauses, while a stream that goes on otherwise is left */
        struct inject_resume rs;
        char p1[] = "xx real-secret-val";
        rep = 0;
        held = inject_scrub_inplace(&nd, p1, strlen(p1), 0, &rep);
        ok(inject_scrub_pending(&nd, p1, strlen(p1), held, &rs) && rs.done == 15,
           "a pause after 15 bytes of the value: they are pending (15)");
        (void)inject_scrub_tail(&nd, p1, strlen(p1), held, &rep);
        char p2[] = "ue-";
        is_int((int)inject_scrub_resume(&nd, &rs, p2, strlen(p2), &rep), 3,
               "... the next 3 bytes go on with it: 3 bytes of it");
        ok(!strcmp(p2, "mno") && rs.done == 18, "... overwritten (%s), still pending (18)", p2);
        char p3[] = "42!tail";
        size_t k = inject_scrub_resume(&nd, &rs, p3, strlen(p3), &rep);
        ok(k == 2 && !strcmp(p3, "pq!tail") && !rs.any,
           "... its end in the next read: overwritten up to it (%s), nothing pending", p3);
        char q1[] = "xx real";
        held = inject_scrub_inplace(&nd, q1, strlen(q1), 0, &rep);
        ok(inject_scrub_pending(&nd, q1, strlen(q1), held, &rs) && rs.done == 4,
           "a pause after 4 bytes of it (left as they are: fewer than 8)");
        char q2[] = "-secret-value-42!";
        is_int((int)inject_scrub_resume(&nd, &rs, q2, strlen(q2), &rep), 16,
               "... the rest comes: all 16 bytes of it");
        ok(!strcmp(q2, "bcdefghijklmnopq!"), "... overwritten (%s): 4 bytes went out, no more", q2);
        char s1[] = "xx real-sec";
        held = inject_scrub_inplace(&nd, s1, strlen(s1), 0, &rep);
        (void)inject_scrub_pending(&nd, s1, strlen(s1), held, &rs);
        char s2[] = "ond thoughts";
        is_int((int)inject_scrub_resume(&nd, &rs, s2, strlen(s2), &rep), 0,
               "a stream that goes on otherwise after the pause: nothing of it taken");
        ok(!strcmp(s2, "ond thoughts") && !rs.any, "... left as it is, nothing pending");
        /* with many bindings: the last one's needles lie past the 64th */
        {
                static struct inject_secret many[16];
                static char vals[16][24];
                struct inject_needles nm;
                for (int i = 0; i < 16; i++) {
                        many[i] = sec;
                        snprintf(vals[i], sizeof vals[i], "other-secret-val-%02d", i);
                        many[i].value = (const unsigned char *)vals[i];
                        many[i].len = strlen(vals[i]);
                }
                if (inject_needles_new(many, 16, &nm) == 0) {
                        ok(nm.count > 64, "16 bindings: %zu needles", nm.count);
                        char m1[] = "xx other-secret-val-";
                        held = inject_scrub_inplace(&nm, m1, strlen(m1), 0, &rep);
                        (void)inject_scrub_pending(&nm, m1, strlen(m1), held, &rs);
                        char m2[] = "15 and more";
                        is_int((int)inject_scrub_resume(&nm, &rs, m2, strlen(m2), &rep), 2,
                               "... a pause inside the last binding's value: its rest taken");
                        ok(strcmp(m2, "15 and more") != 0, "... and overwritten (%s)", m2);
                        inject_needles_free(&nm);
                }
        }
        /* Basic credentials echoed back: the value's base64 at every
         * alignment a user name can give it */
        all = true;
        for (size_t ul = 0; ul <= 6; ul++) {
                unsigned char cred[64];
                char b64[128];
                memcpy(cred, "abcdef", ul);
                cred[ul] = ':';
                memcpy(cred + ul + 1, sec.value, sec.len);
                size_t cl = ul + 1 + sec.len;
                size_t n = inject_b64_encode(cred, cl, b64);
                b64[n] = '\0';
                rep = 0;
                (void)inject_scrub_inplace(&nd, b64, n, 0, &rep);
                /* decode what the run would see and look for the value */
                unsigned char dec[128];
                int dl = inject_b64_decode(b64, n, dec, sizeof dec);
                if (rep != 1 || dl < 0 || memmem(dec, (size_t)dl, sec.value, sec.len))
                        all = false;
        }
        ok(all, "Basic base64(user:VALUE) scrubbed for user names of 0..6 bytes (every alignment)");
        /* a placeholder as long as the value (the default shape): the echo
         * decodes to exactly user:PLACEHOLDER, not one bit of the value left
         * (the character the user name and the value share included) */
        {
                struct inject_secret eq = sec;
                struct inject_needles ne;
                memcpy(eq.placeholder, "-H_abcdefghijklmnopq", 21);
                eq.ph_len = 20;
                bool exact = inject_needles_new(&eq, 1, &ne) == 0;
                for (size_t ul = 0; exact && ul <= 6; ul++) {
                        unsigned char cred[64], want[64], dec[128];
                        char b64[128];
                        memcpy(cred, "abcdef", ul);
                        cred[ul] = ':';
                        memcpy(want, cred, ul + 1);
                        memcpy(cred + ul + 1, eq.value, eq.len);
                        memcpy(want + ul + 1, eq.placeholder, eq.ph_len);
                        size_t n = inject_b64_encode(cred, ul + 1 + eq.len, b64);
                        uint64_t r2 = 0;
                        size_t h = inject_scrub_inplace(&ne, b64, n, 0, &r2);
                        int dl = inject_b64_decode(b64, n, dec, sizeof dec);
                        (void)h; /* a last character may wait for more: not a change */
                        if (dl != (int)(ul + 1 + eq.len) || memcmp(dec, want, (size_t)dl))
                                exact = false;
                }
                ok(exact, "... and with a placeholder as long as the value it decodes to "
                          "user:PLACEHOLDER exactly");
                inject_needles_free(&ne);
        }
        /* short or hex-only values are never scrubbed (they could be framing) */
        struct inject_secret hexs = sec;
        hexs.value = (const unsigned char *)"deadbeef00";
        hexs.len = 10;
        struct inject_needles nh;
        (void)inject_needles_new(&hexs, 1, &nh);
        is_int((int)nh.count, 0, "a hex-only value: no needle (chunk sizes stay intact)");
        inject_needles_free(&nh);
        inject_needles_free(&nd);
}

/* A form of the value to plant (the seed's next draws): the value itself,
 * or the base64 of it after 0..max_pre-1 random bytes (into enc: 200
 * bytes). Its length; *what points to it. */
static size_t plant_form(unsigned *seed, size_t max_pre, char *enc, const char **what)
{
        unsigned char raw[128];
        size_t pre = (size_t)(rand_r(seed) % (int)max_pre);
        for (size_t i = 0; i < pre; i++)
                raw[i] = (unsigned char)rand_r(seed);
        memcpy(raw + pre, sec.value, sec.len);
        if (rand_r(seed) % 2) {
                *what = enc;
                return inject_b64_encode(raw, pre + sec.len, enc);
        }
        *what = (const char *)sec.value;
        return sec.len;
}

/*
 * The skip-table scan (inject_scrub_inplace) against the byte-wise
 * reference: random buffers over a small alphabet with the value and its
 * base64 forms (after 0..5 other bytes, so every alignment and the
 * character before it) planted at random places, overlapping, cut short
 * at the end; every cut of each buffer. The same bytes and the same hold,
 * every time.
 */
static void test_scrub_skip(void)
{
        struct inject_needles nd;
        is_int(inject_needles_new(&sec, 1, &nd), 0, "needles for the skip scan");
        ok(nd.min_len >= INJECT_SCRUB_MIN && nd.min_len <= nd.max_len,
           "the skip table's window: the shortest needle (%zu)", nd.min_len);
        unsigned seed = 12345;
        size_t diff = 0, runs = 0, planted = 0, found = 0;
        for (int round = 0; round < 3000; round++) {
                char buf[700], a[700], b[700];
                size_t len = (size_t)(rand_r(&seed) % 600) + 1;
                for (size_t i = 0; i < len; i++)
                        buf[i] = "abAB01+/=x-_"[rand_r(&seed) % 12];
                int plants = rand_r(&seed) % 4;
                for (int k = 0; k < plants; k++) {
                        char enc[200];
                        const char *what;
                        size_t n = plant_form(&seed, 6, enc, &what);
                        size_t at = (size_t)(rand_r(&seed) % len);
                        size_t cp = n < len - at ? n : len - at; /* cut short at the end */
                        memcpy(buf + at, what, cp);
                        planted++;
                }
                for (size_t cut = len > 40 ? len - 40 : 0; cut <= len; cut++) {
                        uint64_t ra = 0, rb = 0;
                        memcpy(a, buf, len);
                        memcpy(b, buf, len);
                        size_t ha = inject_scrub_inplace(&nd, a, cut, 0, &ra);
                        size_t hb = inject_scrub_inplace_bytewise(&nd, b, cut, 0, &rb);
                        diff += ha != hb || ra != rb || memcmp(a, b, cut) != 0;
                        found += cut == len ? ra : 0;
                        runs++;
                }
        }
        is_int((int)diff, 0, "skip scan == byte-wise scan: same bytes, hold and count (%zu runs)",
               runs);
        ok(found > planted / 2, "... and the buffers held values to replace (%zu of %zu planted)",
           found, planted);
        inject_needles_free(&nd);
}

/*
 * The lane scan over buffers the size the egress process scrubs: random
 * bytes with the value and its base64 planted, some across the lanes'
 * borders, and buffers so dense with values that a lane's notes fill (the
 * scan goes on without lanes there). Held to the byte-wise reference from
 * several starting points, as the egress process calls it after a hold.
 */
static void test_scrub_lanes(void)
{
        struct inject_needles nd;
        is_int(inject_needles_new(&sec, 1, &nd), 0, "needles for the lane scan");
        enum { BIG = 32768 };
        static char buf[BIG], a[BIG], b[BIG];
        unsigned seed = 777;
        size_t diff = 0, runs = 0, found = 0, planted = 0;
        for (int round = 0; round < 40; round++) {
                bool dense = round % 4 == 3;
                size_t len = BIG - (size_t)(rand_r(&seed) % 4096);
                for (size_t i = 0; i < len; i++)
                        buf[i] = (char)rand_r(&seed);
                /* dense: a value every ~60 bytes (hundreds per lane) */
                size_t plants = dense ? len / 60 : 40, step = dense ? 60 : 0;
                for (size_t k = 0; k < plants; k++) {
                        char enc[200];
                        const char *what;
                        size_t n = plant_form(&seed, 3, enc, &what);
                        /* near a lane border (an eighth of the window
                         * starts) for every third plant, else anywhere */
                        size_t at = step    ? k * step + (size_t)(rand_r(&seed) % 8)
                                    : k % 3 ? (size_t)(rand_r(&seed) % len)
                                            : (len / 8) * (1 + (size_t)rand_r(&seed) % 7) -
                                                      (size_t)(rand_r(&seed) % 64);
                        if (at >= len)
                                continue;
                        size_t cp = n < len - at ? n : len - at;
                        memcpy(buf + at, what, cp);
                        planted++;
                }
                size_t froms[3] = {0, (size_t)(rand_r(&seed) % 64), len / 2};
                for (size_t f = 0; f < 3; f++) {
                        uint64_t ra = 0, rb = 0;
                        memcpy(a, buf, len);
                        memcpy(b, buf, len);
                        size_t ha = inject_scrub_inplace(&nd, a, len, froms[f], &ra);
                        size_t hb = inject_scrub_inplace_bytewise(&nd, b, len, froms[f], &rb);
                        diff += ha != hb || ra != rb || memcmp(a, b, len) != 0;
                        found += f == 0 ? ra : 0;
                        runs++;
                }
        }
        /* buffers just below and above where the lanes begin (256 window
         * starts), values at their edges and the lanes' borders */
        for (size_t extra = 0; extra < 300; extra++) {
                size_t from = extra % 7, len = from + nd.min_len - 1 + 240 + extra / 3;
                if (len > BIG)
                        break;
                for (size_t i = 0; i < len; i++)
                        buf[i] = (char)rand_r(&seed);
                size_t spots[4] = {from, len - sec.len / 2, from + (len - from) / 8 * (extra % 8),
                                   len - sec.len};
                for (size_t k = 0; k < 4; k++)
                        if (spots[k] < len)
                                memcpy(buf + spots[k], sec.value,
                                       sec.len < len - spots[k] ? sec.len : len - spots[k]);
                uint64_t ra = 0, rb = 0;
                memcpy(a, buf, len);
                memcpy(b, buf, len);
                size_t ha = inject_scrub_inplace(&nd, a, len, from, &ra);
                size_t hb = inject_scrub_inplace_bytewise(&nd, b, len, from, &rb);
                diff += ha != hb || ra != rb || memcmp(a, b, len) != 0;
                runs++;
        }
        is_int((int)diff, 0,
               "lane scan == byte-wise scan on %d KiB buffers and short ones (%zu runs)",
               BIG / 1024, runs);
        ok(found > planted / 2, "... which held values to replace (%zu of %zu planted)", found,
           planted);
        inject_needles_free(&nd);
}

int main(void)
{
        test_cli();
        test_placeholder();
        test_headers();
        test_scrub();
        test_scrub_skip();
        test_scrub_lanes();
        test_query();
        test_body();
        test_body_rewrite();
        test_basic();
        test_dechunk();
        return done();
}
