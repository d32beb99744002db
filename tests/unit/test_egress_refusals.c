/*
 * test_egress_refusals.c — the end-of-run summary of egress refusals
 * (src/egress/egress.c: egress_refusals_*, fed by egress_event_serve).
 *
 * Messages go through the real supervisor side of the event channel (a
 * SOCK_SEQPACKET pair, no audit emitter), as the egress process sends
 * them; the summary is printed into a memory stream and checked: counts per
 * (destination, reason), most frequent first, the fix, the bound of
 * EGRESS_SUMMARY_SHOWN lines and "and N more", the EGRESS_REFUSALS_MAX
 * bound on distinct pairs, redaction, and escaping of run-controlled bytes
 * (C0, DEL, C1; valid UTF-8 kept; invalid UTF-8 never crosses the channel:
 * the egress process escapes it first, see egress_compat.sh). Controls: other events
 * are not counted, an empty tally prints nothing.
 *
 * The names the run's resolver refused (egress_refusal_name_note, as
 * dnsstub.c counts them; test_dnsstub.c checks what the stub counts):
 * their own section after the destinations' (or alone), per (name,
 * reason) with count and fix, most frequent first, the same bounds, "and N
 * more refused queries of M other names", redaction and escaping (a name
 * is run-controlled bytes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress/egress.h"
#include "shared/json.h"
#include "tap.h"

static int sp[2];

/* One message from the egress side, served by the supervisor's side. */
static void send_event(const char *event, const char *host, int port, const char *reason,
                       const char *fix)
{
        struct json_buf b = {0};
        int64_t fail = 0;

        json_buf_append(&b, "{\"async\":true,\"event\":", 22);
        json_buf_append_string(&b, event, strlen(event));
        json_buf_append(&b, ",\"fields\":{\"host\":", 18);
        json_buf_append_string(&b, host, strlen(host));
        char num[32];
        int n = snprintf(num, sizeof num, ",\"port\":%d,\"reason\":", port);
        json_buf_append(&b, num, (size_t)n);
        json_buf_append_string(&b, reason, strlen(reason));
        json_buf_append(&b, ",\"fix\":", 7);
        json_buf_append_string(&b, fix, strlen(fix));
        json_buf_append(&b, "}}", 2);
        if (b.error || send(sp[0], b.data, b.len, 0) != (ssize_t)b.len)
                abort();
        json_buf_done(&b);
        if (egress_event_serve(sp[1], NULL, &fail) != 1)
                abort();
}

static char *summary(const struct egress_refusals *t)
{
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);

        if (!f)
                abort();
        egress_refusals_print(t, f);
        fclose(f);
        return out;
}

static int count_of(const char *hay, const char *needle)
{
        int n = 0;
        for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

/* A redactor standing in for the run's bound secrets: "s3cret" → "[secret:T]". */
static int redact(void *ctx, const char *s, char **ret)
{
        const char *hit = strstr(s, "s3cret");
        (void)ctx;
        if (!hit)
                return 0;
        if (asprintf(ret, "%.*s[secret:T]%s", (int)(hit - s), s, hit + 6) < 0)
                return -ENOMEM;
        return 1;
}

#define NOT_ALLOWED "no allow rule lets the run reach this name (default: no egress)"
#define TUNNEL      "a query type that only carries data (DNS tunnelling)"

/* The names the run's resolver refused: t tracked, emptied here. */
static void test_names(struct egress_refusals *t)
{
        char *s;

        egress_refusals_free(t);
        /* names alone: their section only */
        egress_refusal_name_note("other.test", NOT_ALLOWED, "--allow-host other.test");
        egress_refusal_name_note("other.test", NOT_ALLOWED, "--allow-host other.test");
        egress_refusal_name_note("t.example", TUNNEL, NULL);
        egress_refusal_name_note("other.test", NOT_ALLOWED, "--allow-host other.test");
        s = summary(t);
        ok(strstr(s, "ringfence: the run's resolver refused 4 queries during the run (name, count, "
                     "reason, what would allow it):\n") == s,
           "refused names alone: their header with the total (4 queries), first");
        ok(!strstr(s, "egress refused"), "... no destinations' header when none was refused");
        const char *o = strstr(s,
                               "  other.test  3x  " NOT_ALLOWED "  -> --allow-host other.test\n"),
                   *x = strstr(s, "  t.example  1x  " TUNNEL "\n");
        ok(o && x, "each name with its count, reason and fix (none for a tunnelling shape)");
        ok(o && x && o < x, "... most frequent first");
        is_int(count_of(s, "and "), 0, "... all shown: no \"and N more\"");
        free(s);
        egress_refusals_free(t);
        egress_refusal_name_note("one.test", NOT_ALLOWED, "--allow-host one.test");
        s = summary(t);
        ok(strstr(s, "resolver refused 1 query during"), "one refused query: \"1 query\"");
        free(s);

        /* with refused destinations: theirs first, then the names' */
        send_event("egress.deny", "a.example", 443, "no allow rule matches",
                   "--allow-host a.example:443");
        s = summary(t);
        const char *d = strstr(s, "ringfence: egress refused 1 time during the run"),
                   *n = strstr(s, "ringfence: the run's resolver refused 1 query during the run");
        ok(d == s && n && d < n, "destinations first, then names, each under its own header");
        ok(strstr(s, "  one.test  1x  ") && strstr(s, "  a.example:443  1x  "),
           "... a name without a port, a destination with one");
        free(s);
        is_int(t->total, 1, "a refused name is not an egress refusal (total)");
        is_int(t->names_total, 1, "... and the other way round");
        egress_refusals_free(t);

        /* escaping and redaction: a name is the run's bytes */
        egress_refusal_name_note("\x1b]0;pwned\x07x\x7f\xc2\x9b.test", NOT_ALLOWED, "");
        egress_refusal_name_note("s3cret.exfil.test", NOT_ALLOWED,
                                 "--allow-host s3cret.exfil.test");
        egress_refusal_name_note("", NOT_ALLOWED, "");
        s = summary(t);
        ok(strstr(s, "  \\u001b]0;pwned\\u0007x\\u007f\\u009b.test  1x"),
           "a name's controls, DEL and C1 print as \\u00NN");
        bool raw = false;
        for (const unsigned char *p = (const unsigned char *)s; *p; p++)
                if ((*p < 0x20 && *p != '\n') || *p == 0x7f)
                        raw = true;
        ok(!raw, "... no raw control byte in the summary");
        ok(strstr(s, "[secret:T].exfil.test  1x") &&
                   strstr(s, "--allow-host [secret:T].exfil.test") && !strstr(s, "s3cret"),
           "a bound value in a refused name is redacted (name and fix)");
        ok(strstr(s, "\n  .  1x"), "an empty name shows as the root, \".\"");
        free(s);
        egress_refusals_free(t);

        /* bounds: EGRESS_SUMMARY_SHOWN lines, "and N more"; EGRESS_REFUSALS_MAX kept */
        for (int i = 0; i < 20; i++) {
                char h[32];
                snprintf(h, sizeof h, "h%d.test", i);
                egress_refusal_name_note(h, NOT_ALLOWED, "");
        }
        s = summary(t);
        is_int(count_of(s, ".test  1x"), EGRESS_SUMMARY_SHOWN, "20 names: 16 lines");
        ok(strstr(s, "h0.test  1x") && strstr(s, "h15.test  1x") && !strstr(s, "h16.test"),
           "... the first 16 of equal count, in the order they came");
        ok(strstr(s, "and 4 more refused queries of 4 other names (`ringfence audit` lists every "
                     "dns.refused)"),
           "... then \"and 4 more refused queries of 4 other names\"");
        free(s);
        egress_refusals_free(t);
        for (int i = 0; i < EGRESS_REFUSALS_MAX + 10; i++) {
                char h[32];
                snprintf(h, sizeof h, "n%d.test", i);
                egress_refusal_name_note(h, NOT_ALLOWED, "");
        }
        is_int(t->n_names, EGRESS_REFUSALS_MAX, "distinct names kept: EGRESS_REFUSALS_MAX");
        is_int(t->names_overflow, 10, "... the 10 beyond it counted as overflow");
        s = summary(t);
        ok(strstr(s, "resolver refused 266 queries"), "... and in the total");
        ok(strstr(s, "and 250 more refused queries of 240+ other names"),
           "... \"and N more\" says the count is a lower bound");
        free(s);
        egress_refusal_name_note("n0.test", NOT_ALLOWED, "");
        is_int(t->names[0].count, 2, "a name already kept still counts when the table is full");
        is_int(t->n, 0, "refused names take no slot of the destinations");
        egress_refusals_free(t);
        s = summary(t);
        is_str(s, "", "freed: nothing printed");
        free(s);
}

int main(void)
{
        struct egress_refusals t = {0};
        char *s;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
                abort();

        /* nothing refused: nothing printed */
        egress_refusals_track(&t, redact, NULL);
        s = summary(&t);
        is_str(s, "", "no refusal: no summary");
        free(s);
        send_event("egress.allow", "ok.example", 443, "", "");
        send_event("egress.close", "ok.example", 443, "", "");
        s = summary(&t);
        is_str(s, "", "control: allow and close records are not refusals");
        free(s);

        /* counts, order, fix */
        send_event("egress.deny", "a.example", 443, "no allow rule matches",
                   "--allow-host a.example:443");
        for (int i = 0; i < 3; i++)
                send_event("egress.deny", "b.example", 80, "the name does not resolve: NXDOMAIN",
                           "--add-host b.example:ADDR if the name has a fixed address");
        send_event("egress.deny", "a.example", 443, "no allow rule matches",
                   "--allow-host a.example:443");
        send_event("egress.deny", "", 0, "HTTP version other than 1.1 or 1.0", "");
        s = summary(&t);
        ok(strstr(s, "ringfence: egress refused 6 times during the run") == s,
           "a header with the total (6)");
        const char *
                b = strstr(
                       s, "  b.example:80  3x  the name does not resolve: NXDOMAIN  -> --add-host"),
               *a = strstr(s, "  a.example:443  2x  no allow rule matches  -> --allow-host "
                              "a.example:443\n"),
               *m = strstr(s, "  (malformed request)  1x  HTTP version other than 1.1 or 1.0\n");
        ok(b && a && m, "each pair with its count, reason and fix (none for a malformed request)");
        ok(b && a && m && b < a && a < m, "most frequent first");
        is_int(count_of(s, "and "), 0, "all shown: no \"and N more\"");
        free(s);

        /* escaping: ESC, BEL, DEL, C1 (U+009B CSI); valid UTF-8 kept */
        send_event("egress.deny", "\x1b]0;pwned\x07x\x7f\xc2\x9b.example", 1080, "bad name", "");
        send_event("egress.deny", "caf\xc3\xa9.example", 443, "no allow rule matches", "");
        send_event("egress.deny", "back\\slash", 443, "no allow rule matches", "");
        s = summary(&t);
        ok(strstr(s, "\\u001b]0;pwned\\u0007x\\u007f\\u009b.example:1080"),
           "controls, DEL and C1 print as \\u00NN");
        ok(strstr(s, "caf\xc3\xa9.example:443"), "valid UTF-8 is kept");
        ok(strstr(s, "back\\\\slash:443"), "a backslash is doubled (an escape cannot be forged)");
        bool raw = false;
        for (const unsigned char *p = (const unsigned char *)s; *p; p++)
                if ((*p < 0x20 && *p != '\n') || *p == 0x7f)
                        raw = true;
        ok(!raw, "no raw control byte in the summary");
        free(s);

        /* redaction of bound values, in hosts and fixes */
        send_event("egress.deny", "s3cret.exfil.example", 443, "no allow rule matches",
                   "--allow-host s3cret.exfil.example:443");
        s = summary(&t);
        ok(strstr(s, "[secret:T].exfil.example:443") && !strstr(s, "s3cret"),
           "a bound value in a refused name is redacted (host and fix)");
        free(s);

        /* bounds: EGRESS_SUMMARY_SHOWN lines, then "and N more" */
        egress_refusals_free(&t);
        for (int i = 0; i < 20; i++) {
                char h[32];
                snprintf(h, sizeof h, "h%d.example", i);
                send_event("egress.deny", h, 443, "no allow rule matches", "");
        }
        s = summary(&t);
        is_int(count_of(s, ".example:443  1x"), EGRESS_SUMMARY_SHOWN, "20 destinations: 16 lines");
        ok(strstr(s, "h0.example:443") && strstr(s, "h15.example:443") && !strstr(s, "h16.example"),
           "... the first 16 of equal count, in the order they came");
        ok(strstr(s, "and 4 more refusals of 4 other destinations"), "... then \"and 4 more\"");
        free(s);

        /* at most EGRESS_REFUSALS_MAX distinct pairs are kept; the rest still count */
        egress_refusals_free(&t);
        for (int i = 0; i < EGRESS_REFUSALS_MAX + 10; i++) {
                char h[32];
                snprintf(h, sizeof h, "n%d.example", i);
                send_event("egress.deny", h, 443, "r", "");
        }
        is_int(t.n, EGRESS_REFUSALS_MAX, "distinct pairs kept: EGRESS_REFUSALS_MAX");
        is_int(t.overflow, 10, "... the 10 beyond it counted as overflow");
        s = summary(&t);
        ok(strstr(s, "egress refused 266 times"), "... and in the total");
        ok(strstr(s, "and 250 more refusals of 240+ other destinations"),
           "... \"and N more\" says the count is a lower bound");
        free(s);
        send_event("egress.deny", "n0.example", 443, "r", "");
        is_int(t.v[0].count, 2, "a pair already kept still counts when the table is full");

        test_names(&t);

        /* untracked: not counted */
        egress_refusals_track(NULL, NULL, NULL);
        uint64_t total = t.total;
        send_event("egress.deny", "late.example", 443, "r", "");
        is_int(t.total, total, "after tracking stops nothing is counted");
        egress_refusal_name_note("late.example", "r", "");
        is_int(t.names_total, 0, "... nor a refused name");
        egress_refusals_free(&t);
        close(sp[0]);
        close(sp[1]);
        return done();
}
