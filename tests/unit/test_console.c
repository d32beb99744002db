/*
 * test_console.c — the console's pure parts (src/console/auth.c,
 * render.c): the login token logs in several times until it expires, each
 * login its own session; a wrong, short or expired token, an unknown or
 * expired session and a wrong CSRF token are refused; the oldest session
 * goes when all are taken; the Host header must name the console's own
 * loopback address and port; cookies and form fields are found and
 * decoded with every malformed escape refused; and every string a run
 * controls comes out inert: controls visible, bidi overrides and bytes
 * that are not UTF-8 spelled out, HTML and JSON escaped. And the pure
 * readers (parse.c): --listen takes exact loopback spellings only, and
 * tells a malformed address from a non-loopback one; a run's path is
 * split with its id checked; audit lines give their flat members, ts,
 * egress decisions and the health page's counts; a refusal becomes a
 * HOST:PORT rule only when its host is of a sane form.
 */
#include <errno.h>
#include <string.h>

#include "console/auth.h"
#include "console/parse.h"
#include "console/render.h"
#include "tap.h"

static struct console_auth a;

static int login(const char *tok, unsigned char seed, int64_t now)
{
        unsigned char rnd[64];
        memset(rnd, seed, sizeof rnd);
        rnd[63] = (unsigned char)(seed + 1); /* id and csrf differ */
        return console_auth_login(&a, tok, strlen(tok), rnd, now);
}

static int session(const char *cookie, int64_t now)
{
        return console_auth_session(&a, cookie, strlen(cookie), now);
}

static const char *inert(const char *s, size_t len, int how)
{
        static struct json_buf b;
        json_buf_done(&b);
        if (how == 0)
                console_inert(&b, s, len);
        else if (how == 1)
                console_html(&b, s, len);
        else
                console_json_str(&b, s, len);
        return b.error ? "(error)" : b.data ? b.data : "";
}

static int listen_r(const char *l)
{
        bool v6 = false;
        uint16_t port = 1;
        return console_listen_parse(l, &v6, &port);
}

static void test_parse(void)
{
        bool v6 = true;
        uint16_t port = 1;
        is_int(console_listen_parse("localhost:0", &v6, &port), 0, "listen localhost:0: taken");
        ok(!v6 && port == 0, "... v4, port 0");
        is_int(console_listen_parse("[::1]:0", &v6, &port), 0, "listen [::1]:0: taken");
        ok(v6 && port == 0, "... v6, port 0");
        is_int(console_listen_parse("127.0.0.1:8650", &v6, &port), 0,
               "listen 127.0.0.1:8650: taken (the control)");
        ok(!v6 && port == 8650, "... its port");
        const char *far[] = {"127.0.0.2:1", "[::ffff:127.0.0.1]:1", "LOCALHOST:1",    "0.0.0.0:1",
                             "[::]:0",      "10.1.2.3:8650",        "example.test:80"};
        for (size_t i = 0; i < sizeof far / sizeof *far; i++)
                is_int(listen_r(far[i]), -EPERM, "listen %s: refused as not loopback", far[i]);
        const char *bad[] = {"127.0.0.1",    "127.0.0.1:",   "127.0.0.1:x", "127.0.0.1:65536",
                             "127.0.0.1:-1", "127.0.0.1:+1", ":8650",       "127.0.0.1:123456"};
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
                is_int(listen_r(bad[i]), -EINVAL, "listen %s: refused as malformed", bad[i]);
        ok(strstr(console_listen_why(-EPERM), "loopback") &&
                   !strstr(console_listen_why(-EINVAL), "loopback") &&
                   strstr(console_listen_why(-EINVAL), "ADDRESS:PORT"),
           "a malformed address and a non-loopback one say different things");

        struct console_run_path rp;
        is_int(console_run_path("/run/0123-abcd", &rp), 1, "/run/ID: a run's page");
        ok(!rp.api && !rp.has_action && !strcmp(rp.run, "0123-abcd"), "... its id, no action");
        is_int(console_run_path("/api/run/ab/kill", &rp), 1, "/api/run/ID/kill: a run's path");
        ok(rp.api && rp.has_action && !strcmp(rp.run, "ab") && !strcmp(rp.action, "kill"),
           "... the API's, with the action");
        is_int(console_run_path("/runs", &rp), 0, "/runs: not a run's path");
        is_int(console_run_path("/health", &rp), 0, "/health: neither");
        is_int(console_run_path("/run/", &rp), -ENOENT, "/run/ with no id: 404");
        is_int(console_run_path("/run/AB", &rp), -ENOENT, "an id in capitals: 404");
        is_int(console_run_path("/run/../etc/passwd", &rp), -ENOENT, "a dotted id: 404");
        char longid[64] = "/run/";
        memset(longid + 5, 'a', 40);
        is_int(console_run_path(longid, &rp), -ENOENT, "an id of 40 bytes: 404");
        longid[5 + 39] = '\0';
        is_int(console_run_path(longid, &rp), 1, "... of 39: taken (the bound)");
        is_int(console_run_path("/run/ab/0123456789012345678901234567890123", &rp), -ENOENT,
               "an action beyond its bound: 404");

        const char *ln = "{\"seq\":7,\"ts\":1764870000123,\"event\":\"egress.deny\","
                         "\"run\":\"ab-12\",\"host\":\"a\\\"b\",\"port\":443}";
        size_t vl = 0;
        const char *v = console_line_str(ln, strlen(ln), "event", &vl);
        ok(v && vl == 11 && !memcmp(v, "egress.deny", 11), "a record's event found");
        ok(!console_line_str(ln, strlen(ln), "host", &vl), "... a member with an escape: none");
        ok(!console_line_str(ln, strlen(ln), "agent", &vl), "... an absent one: none");
        ok(!console_line_str(ln, 20, "event", &vl), "... nothing read past the length");
        ok(console_line_ts(ln, strlen(ln)) == 1764870000123LL, "its ts");
        ok(console_line_ts("{\"ts\":-5}", 9) == 0 && console_line_ts("{\"ts\":1", 6) == 0,
           "... 0 when negative or cut off");
        const char *run = NULL;
        size_t rl = 0;
        is_int(console_egress_line(ln, strlen(ln), &run, &rl), CONSOLE_EGRESS_DENY,
               "an egress.deny line: a refusal");
        ok(run && rl == 5 && !memcmp(run, "ab-12", 5), "... of its run");
        const char *al = "{\"event\":\"egress.allow\",\"run\":\"cd\"}";
        is_int(console_egress_line(al, strlen(al), &run, &rl), CONSOLE_EGRESS_ALLOW,
               "an egress.allow line: an allowance");
        const char *kl = "{\"event\":\"egress.denyx\",\"run\":\"cd\"}";
        is_int(console_egress_line(kl, strlen(kl), &run, &rl), CONSOLE_EGRESS_NONE,
               "egress.denyx: neither");

        static struct console_health h;
        const char *hl[] = {
                "{\"ts\":1764870000000,\"event\":\"run.start\",\"run\":\"a\"}",
                "{\"ts\":1764870000001,\"event\":\"run.refused\",\"reason\":\"loop\"}",
                "{\"ts\":1764870000002,\"event\":\"run.refused\",\"reason\":\"policy\"}",
                "{\"ts\":1764870000003,\"event\":\"run.kill\",\"run\":\"a\"}",
                "{\"event\":\"run.kill\",\"run\":\"b\"}",
                "not a record",
        };
        for (size_t i = 0; i < sizeof hl / sizeof *hl; i++)
                is_int(console_health_line(&h, hl[i], strlen(hl[i])), 0, "health line %zu", i);
        ok(h.records == 6 && h.total[CONSOLE_SERIES_START] == 1 &&
                   h.total[CONSOLE_SERIES_REFUSED] == 2 && h.total[CONSOLE_SERIES_KILL] == 2,
           "health: every record counted, each series its own");
        ok(h.n_loops == 1 && h.loops[0] && strstr(h.loops[0], "\"loop\""),
           "... the breaker's refusal kept, the policy's not");
        int64_t half = 1764870000000LL / CONSOLE_HEALTH_BUCKET_MS * CONSOLE_HEALTH_BUCKET_MS;
        ok(console_health_at(&h, CONSOLE_SERIES_KILL, half) == 1 &&
                   console_health_at(&h, CONSOLE_SERIES_KILL, half - CONSOLE_HEALTH_BUCKET_MS) == 0,
           "... the timed kill in its half hour, the untimed one in none");
        console_health_clear(&h);
        ok(h.records == 0 && !h.loops[0], "cleared");

        char rule[300];
        struct json_node *doc = NULL;
        const char *d1 = "{\"host\":\"api.example.com\",\"port\":443}";
        ok(json_parse(d1, strlen(d1), &doc, NULL) == 0 &&
                   console_deny_rule(doc, rule, sizeof rule) &&
                   !strcmp(rule, "api.example.com:443"),
           "a refusal becomes HOST:PORT");
        doc = json_node_free(doc);
        const char *d2 = "{\"host\":\"2001:db8::1\",\"port\":80}";
        ok(json_parse(d2, strlen(d2), &doc, NULL) == 0 &&
                   console_deny_rule(doc, rule, sizeof rule) && !strcmp(rule, "[2001:db8::1]:80"),
           "... an IPv6 one bracketed");
        doc = json_node_free(doc);
        const char *no[] = {"{\"host\":\"<script>x\",\"port\":443}",
                            "{\"host\":\"a b\",\"port\":1}",
                            "{\"host\":\"A.example\",\"port\":1}",
                            "{\"host\":\"a\",\"port\":0}",
                            "{\"host\":\"a\",\"port\":65536}",
                            "{\"host\":\"a\"}",
                            "{\"host\":\"\",\"port\":1}",
                            "{\"host\":7,\"port\":1}"};
        for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
                ok(json_parse(no[i], strlen(no[i]), &doc, NULL) == 0 &&
                           !console_deny_rule(doc, rule, sizeof rule),
                   "no rule proposed for %s", no[i]);
                doc = json_node_free(doc);
        }
        ok(json_parse(d1, strlen(d1), &doc, NULL) == 0 && !console_deny_rule(doc, rule, 8),
           "... nor one that does not fit");
        doc = json_node_free(doc);
}

/* a run's age as the runs page shows it (app.js's fmtAge the same) */
static void test_age(void)
{
        static const struct {
                int64_t ms;
                const char *want;
        } c[] = {{-5000, "0s"},
                 {0, "0s"},
                 {59999, "59s"},
                 {60000, "1m 0s"},
                 {3599000, "59m 59s"},
                 {3600000, "1h 0m"},
                 {86399000, "23h 59m"},
                 {86400000, "1d 0h"},
                 {INT64_MAX, "106751991167d 7h"}};
        for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
                struct json_buf b = {0};
                console_age(&b, c[i].ms);
                json_buf_append(&b, "", 1);
                is_str(b.data, c[i].want, "age of %lld ms: %s", (long long)c[i].ms, c[i].want);
                json_buf_done(&b);
        }
}

int main(void)
{
        test_age();
        test_parse();
        unsigned char r32[32];
        memset(r32, 0xab, sizeof r32);
        console_auth_token(&a, r32, 1000, 60000);
        is_int((int)strlen(a.token), CONSOLE_TOKEN_HEX, "the token: 64 hex digits");
        char tok[CONSOLE_TOKEN_HEX + 1];
        strcpy(tok, a.token);
        int s1 = login(tok, 1, 2000);
        ok(s1 >= 0, "the token logs in");
        int s2 = login(tok, 2, 3000);
        ok(s2 >= 0 && s2 != s1, "... again, a session of its own");
        ok(strcmp(a.s[s1].id, a.s[s2].id) != 0, "... with another id");
        is_int(login(tok, 3, 61000), -EACCES, "... not once expired");
        char wrong[CONSOLE_TOKEN_HEX + 1];
        strcpy(wrong, tok);
        wrong[10] = wrong[10] == 'a' ? 'b' : 'a';
        is_int(login(wrong, 3, 2000), -EACCES, "a token one digit off: refused");
        is_int(login("", 3, 2000), -EACCES, "an empty token: refused");
        char shortt[40];
        memcpy(shortt, tok, 39);
        shortt[39] = '\0';
        is_int(login(shortt, 3, 2000), -EACCES, "a prefix of the token: refused");

        char cookie[200];
        snprintf(cookie, sizeof cookie, "theme=dark; " CONSOLE_COOKIE "=%s; x=y", a.s[s1].id);
        is_int(session(cookie, 4000), s1, "the session cookie names its session");
        snprintf(cookie, sizeof cookie, CONSOLE_COOKIE "=%s", a.s[s2].id);
        is_int(session(cookie, 4000), s2, "... the other one");
        is_int(session(cookie, 4000 + (int64_t)CONSOLE_SESSION_TTL_S * 1000), -EACCES,
               "... not once the session expired");
        is_int(session(CONSOLE_COOKIE "=00", 4000), -EACCES, "an unknown session: refused");
        is_int(session("other=1", 4000), -EACCES, "no session cookie: refused");
        snprintf(cookie, sizeof cookie, CONSOLE_COOKIE "=bad; " CONSOLE_COOKIE "=%s", a.s[s1].id);
        is_int(session(cookie, 4000), s1,
               "a cookie of ours shadowed by another of that name: found");
        snprintf(cookie, sizeof cookie, "x" CONSOLE_COOKIE "=%s", a.s[s1].id);
        is_int(session(cookie, 4000), -EACCES, "a cookie whose name only ends like ours: refused");
        ok(console_auth_csrf_ok(&a, s1, a.s[s1].csrf, CONSOLE_TOKEN_HEX),
           "the session's CSRF token: accepted");
        ok(!console_auth_csrf_ok(&a, s1, a.s[s2].csrf, CONSOLE_TOKEN_HEX),
           "another session's CSRF token: refused");
        ok(!console_auth_csrf_ok(&a, s1, a.s[s1].id, CONSOLE_TOKEN_HEX),
           "the session id as CSRF token: refused");
        ok(!console_auth_csrf_ok(&a, -1, a.s[s1].csrf, CONSOLE_TOKEN_HEX), "slot -1: refused");
        console_auth_logout(&a, s1);
        snprintf(cookie, sizeof cookie, CONSOLE_COOKIE "=%s", a.s[s2].id);
        is_int(session(cookie, 5000), s2, "after one logout the other session lives");
        /* every slot taken: the oldest goes */
        console_auth_token(&a, r32, 10000, 1000000);
        strcpy(tok, a.token);
        int first = -1;
        for (int i = 0; i < CONSOLE_SESSIONS_MAX + 1; i++) {
                int s = login(tok, (unsigned char)(10 + i), 20000 + i);
                if (i == 0)
                        first = s;
                if (s < 0)
                        break;
        }
        int oldest = 0;
        for (int i = 1; i < CONSOLE_SESSIONS_MAX; i++)
                if (a.s[i].created_ms < a.s[oldest].created_ms)
                        oldest = i;
        ok(a.s[oldest].created_ms == 20001, "all slots taken: the oldest login made room");
        (void)first;

        ok(console_host_ok("127.0.0.1:8650", 14, 8650), "Host 127.0.0.1:PORT");
        ok(console_host_ok("localhost:8650", 14, 8650), "Host localhost:PORT");
        ok(console_host_ok("[::1]:8650", 10, 8650), "Host [::1]:PORT");
        ok(!console_host_ok("127.0.0.1:8651", 14, 8650), "another port: refused");
        ok(!console_host_ok("127.0.0.1", 9, 8650), "no port: refused");
        ok(!console_host_ok("evil.test:8650", 14, 8650), "a rebound name: refused");
        ok(!console_host_ok("127.0.0.1:86500", 15, 8650), "a longer port: refused");
        ok(!console_host_ok("127.0.0.1:8650.", 15, 8650), "a trailing dot: refused");

        size_t off, vl;
        const char *h = " a=1;  b = 2 ; c=3 ";
        is_int(console_cookie(h, strlen(h), "c", &off, &vl), 0, "cookie c found");
        ok(vl == 1 && h[off] == '3', "... its value, spaces trimmed");
        is_int(console_cookie(h, strlen(h), "b", &off, &vl), -ENOENT,
               "a name with a space before '=': not ours");

        char out[CONSOLE_FIELD_MAX + 1];
        const char *q = "x=1&host=a%2Eb%3A443&csrf=z+z";
        is_int(console_field(q, strlen(q), "host", out, sizeof out), 7, "a field, decoded");
        is_str(out, "a.b:443", "... percent escapes");
        is_int(console_field(q, strlen(q), "csrf", out, sizeof out), 3, "'+' is a space");
        is_str(out, "z z", "... decoded");
        is_int(console_field(q, strlen(q), "nope", out, sizeof out), -ENOENT, "no such field");
        is_int(console_field("a=%4", 4, "a", out, sizeof out), -EBADMSG, "a cut escape: refused");
        is_int(console_field("a=%zz", 5, "a", out, sizeof out), -EBADMSG,
               "a non-hex escape: refused");
        is_int(console_field("a=%00", 5, "a", out, sizeof out), -EBADMSG, "a NUL: refused");
        char big[CONSOLE_FIELD_MAX + 8] = "a=";
        memset(big + 2, 'x', CONSOLE_FIELD_MAX + 1);
        big[CONSOLE_FIELD_MAX + 3] = '\0';
        is_int(console_field(big, strlen(big), "a", out, sizeof out), -E2BIG,
               "a value over the bound: refused");
        is_int(console_field("ab=1&a=2", 8, "a", out, sizeof out), 1,
               "a name that only begins like another: the right one");
        is_str(out, "2", "... its value");

        is_str(inert("a\x01"
                     "b\x1b[31m\x7f",
                     9, 0),
               "a\xe2\x90\x81"
               "b\xe2\x90\x9b[31m\xe2\x90\xa1",
               "controls and DEL: their visible pictures");
        is_str(inert("x\xe2\x80\xaey", 5, 0), "x\\u202ey", "a bidi override: spelled out");
        is_str(inert("\xc0\xaf\xff", 3, 0), "\\xc0\\xaf\\xff", "an overlong and 0xff: spelled out");
        is_str(inert("\xed\xa0\x80", 3, 0), "\\xed\\xa0\\x80", "a surrogate: spelled out");
        is_str(inert("caf\xc3\xa9", 5, 0), "caf\xc3\xa9", "UTF-8 text: kept");
        is_str(inert("<script>\"'&", 11, 1), "&lt;script&gt;&quot;&#39;&amp;", "HTML escaped");
        is_str(inert("a\"\\\n", 4, 2), "\"a\\\"\\\\\xe2\x90\x8a\"",
               "a JSON string: quotes escaped, the newline a picture");
        char longs[CONSOLE_TEXT_MAX + 10];
        memset(longs, 'x', sizeof longs);
        const char *cut = inert(longs, sizeof longs, 0);
        ok(strlen(cut) == CONSOLE_TEXT_MAX + 3 && !strcmp(cut + CONSOLE_TEXT_MAX, "\xe2\x80\xa6"),
           "a long string: cut at the bound, with an ellipsis");
        const char *arr = "[{\"a\":\"x]}\\\"\"}, [1,[2]] ,3,\"s,\"]";
        size_t pos = 1, el;
        const char *want[] = {"{\"a\":\"x]}\\\"\"}", "[1,[2]]", "3", "\"s,\""};
        for (size_t i = 0; i < 4; i++) {
                is_int(console_array_next(arr, strlen(arr), &pos, &off, &el), 1,
                       "array element %zu found", i);
                ok(el == strlen(want[i]) && !memcmp(arr + off, want[i], el),
                   "... spanning it whole (brackets inside strings, escapes)");
        }
        is_int(console_array_next(arr, strlen(arr), &pos, &off, &el), 0, "then the array's end");
        pos = 1;
        is_int(console_array_next("[{\"a\":1", 7, &pos, &off, &el), -EBADMSG,
               "a cut element: refused");
        pos = 1;
        is_int(console_array_next("[}", 2, &pos, &off, &el), -EBADMSG, "a stray '}': refused");
        char deep[64] = "[";
        memset(deep + 1, '[', 40);
        pos = 1;
        is_int(console_array_next(deep, strlen(deep), &pos, &off, &el), -EBADMSG,
               "nesting beyond the bound: refused");
        return done();
}
