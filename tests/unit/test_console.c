/*
 * test_console.c — the console's pure parts (src/console/auth.c,
 * render.c): the login token logs in several times until it expires, each
 * login its own session; a wrong, short or expired token, an unknown or
 * expired session and a wrong CSRF token are refused; the oldest session
 * goes when all are taken; the Host header must name the console's own
 * loopback address and port; cookies and form fields are found and
 * decoded with every malformed escape refused; and every string a run
 * controls comes out inert: controls visible, bidi overrides and bytes
 * that are not UTF-8 spelled out, HTML and JSON escaped.
 */
#include <errno.h>
#include <string.h>

#include "console/auth.h"
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

int main(void)
{
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
