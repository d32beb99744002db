/*
 * test_budget.c — per-run audit budgets (pure rules, with a clock the test
 * moves), the event API over a real log (summaries, throttling, secrets
 * refused, totals), and the DNS reader and REFUSED builder.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/budget.h"
#include "audit/emit.h"
#include "egress/dns.h"
#include "tap.h"

/* audit_verify's record count (the last seq verified). */
static int verify_n(const char *state, const char *head, const char *pub, uint64_t *n,
                    struct rf_error *err)
{
        struct audit_verified v = {0};
        int r = audit_verify(state, head, pub, &v, err);
        *n = v.records;
        return r;
}

static void test_bucket(void)
{
        struct audit_budget b;
        struct audit_budget_cfg cfg = {.rate = 10, .burst = 5, .bytes = 1 << 20};
        int64_t t = 1000;

        audit_budget_init(&b, &cfg, t);
        int w = 0;
        for (int i = 0; i < 8; i++)
                w += audit_budget_admit(&b, "egress.allow", NULL, 100, t) == AB_WRITE;
        is_int(w, 5, "a burst of 5: five writes, then refusals");
        ok(b.throttled && b.throttle_new, "the sixth event starts a throttle episode");
        is_int(b.refused, 3, "three refused");
        b.throttle_new = false;
        is_int(audit_budget_admit(&b, "egress.allow", NULL, 100, t + 99), AB_REFUSE,
               "99 ms later (rate 10/s): still no token");
        ok(!b.throttle_new, "... still the same episode (no second throttle record)");
        is_int(audit_budget_admit(&b, "egress.allow", NULL, 100, t + 100), AB_WRITE,
               "100 ms later: one token");
        ok(!b.throttled, "a written record ends the episode");
        is_int(audit_budget_admit(&b, "egress.allow", NULL, 100, t + 100 + 60000), AB_WRITE,
               "a minute later: writes again");
        int w2 = 0;
        for (int i = 0; i < 10; i++)
                w2 += audit_budget_admit(&b, "egress.allow", NULL, 100, t + 100 + 60000) ==
                      AB_WRITE;
        is_int(w2, 4, "the bucket refills to its burst, never beyond (5 less the one just used)");
}

static void test_bytes(void)
{
        struct audit_budget b;
        struct audit_budget_cfg cfg = {.rate = 1000, .burst = 1000, .bytes = 1000};
        audit_budget_init(&b, &cfg, 0);
        is_int(audit_budget_admit(&b, "e.x", NULL, 600, 0), AB_WRITE, "600 of 1000 bytes");
        is_int(audit_budget_admit(&b, "e.x", NULL, 600, 0), AB_REFUSE,
               "another 600: over the byte budget");
        is_int(audit_budget_admit(&b, "e.x", NULL, 400, 3600000), AB_WRITE,
               "exactly the 400 left: written");
        is_int(audit_budget_admit(&b, "e.x", NULL, 1, 7200000), AB_REFUSE,
               "bytes do not refill with time: refused for the rest of the run");
}

static void test_coalesce(void)
{
        struct audit_budget b;
        struct audit_budget_cfg cfg = {.rate = 1, .burst = 2, .coalesce_window_ms = 1000};
        audit_budget_init(&b, &cfg, 0);
        is_int(audit_budget_admit(&b, "dns.refused", "a.example", 100, 0), AB_WRITE,
               "the first refusal for a name is written");
        for (int i = 1; i <= 50; i++)
                if (audit_budget_admit(&b, "dns.refused", "a.example", 100, i) != AB_COALESCE)
                        break;
        is_int(b.coalesced, 50, "50 repeats within the window are coalesced");
        is_int(b.written, 1, "... without spending tokens");
        is_int(audit_budget_admit(&b, "dns.refused", NULL, 100, 60), AB_WRITE,
               "an event without a key is never coalesced");
        ok(audit_budget_expired(&b, 999) == NULL, "the window has not ended at 999 ms");
        is_int(audit_budget_next_ms(&b, 900), 100, "next summary due in 100 ms");
        struct audit_coalesced *s = audit_budget_expired(&b, 1000);
        ok(s && s->count == 50 && !strcmp(s->key, "a.example") && s->first_ms == 1 &&
                   s->last_ms == 50,
           "at 1000 ms the summary is due: count 50, first and last times");
        audit_budget_summary_done(&b, s, 200);
        ok(audit_budget_expired(&b, 1000) == NULL, "... and once written, forgotten");
        is_int(audit_budget_next_ms(&b, 1000), -1, "no summary pending");
        is_int(audit_budget_admit(&b, "dns.refused", "a.example", 100, 1001), AB_WRITE,
               "after the window, the name is written again (a token has refilled)");
        is_int(audit_budget_admit(&b, "dns.refused", "b.example", 100, 1001), AB_REFUSE,
               "a new name with no token left: refused, not coalesced");
        is_int(audit_budget_admit(&b, "dns.refused", "a.example", 100, 1002), AB_COALESCE,
               "a repeat in the new window is coalesced even while throttled");

        /* more distinct keys than slots: the table stays bounded */
        struct audit_budget_cfg big = {.rate = 1000000, .burst = 1000000};
        audit_budget_init(&b, &big, 0);
        char key[32];
        for (int i = 0; i < AUDIT_COALESCE_SLOTS * 3; i++) {
                snprintf(key, sizeof key, "n%d.example", i);
                (void)audit_budget_admit(&b, "dns.refused", key, 100, i);
        }
        size_t used = 0;
        for (size_t i = 0; i < AUDIT_COALESCE_SLOTS; i++)
                used += b.slot[i].used;
        is_int(used, AUDIT_COALESCE_SLOTS, "distinct names beyond the slots reuse the oldest");
        char long_key[AUDIT_COALESCE_KEY_MAX + 10];
        memset(long_key, 'x', sizeof long_key - 1);
        long_key[sizeof long_key - 1] = '\0';
        (void)audit_budget_admit(&b, "dns.refused", long_key, 100, 5000);
        is_int(audit_budget_admit(&b, "dns.refused", long_key, 100, 5001), AB_WRITE,
               "an over-long key is never coalesced (written, budget permitting)");
}

static char *mk_state(void)
{
        char *p = strdup("/tmp/rf-test-budget.XXXXXX");
        if (!p || !mkdtemp(p)) {
                perror("mkdtemp");
                exit(1);
        }
        return p;
}

struct counter {
        const char *needle;
        size_t n;
};

static int count_lines(const char *line, size_t len, void *ctx)
{
        struct counter *c = ctx;
        if (memmem(line, len, c->needle, strlen(c->needle)))
                c->n++;
        return 0;
}

/* Lines of the log that contain `needle`. */
static size_t count(const char *state, const char *needle)
{
        struct counter c = {needle, 0};
        (void)audit_foreach_line(state, count_lines, &c);
        return c.n;
}

static void test_emitter(void)
{
        char *state = mk_state();
        struct audit_log *log = NULL;
        struct audit_emitter *a = NULL, *b = NULL;
        struct rf_error err = {0};
        struct audit_budget_cfg small = {.rate = 1, .burst = 3};

        if (audit_open(state, &log, &err) < 0) {
                diag("open: %s", err.msg);
                exit(1);
        }
        ok(audit_emitter_new(log, "run-a", &small, &a) == 0 &&
                   audit_emitter_new(log, "run-b", NULL, &b) == 0,
           "two runs' emitters over one log");
        struct audit_field f[] = {{.key = "name", .type = AUDIT_STR, .s = "x.example"}};
        ok(audit_emit(a, "dns.refused", "x.example", "refused queries for", f, 1, 0, &err) > 0,
           "run A: the first refusal is written (seq > 0)");
        int64_t r = 0;
        for (int i = 0; i < 9; i++)
                r |= audit_emit(a, "dns.refused", "x.example", "refused queries for", f, 1, 0,
                                &err);
        is_int(r, 0, "run A: 9 repeats are coalesced (0)");
        struct audit_field g[] = {{.key = "host", .type = AUDIT_STR, .s = "api.example"}};
        ok(audit_emit(a, "egress.allow", NULL, NULL, g, 1, 0, &err) > 0 &&
                   audit_emit(a, "egress.allow", NULL, NULL, g, 1, 0, &err) > 0,
           "run A: two must-record events written (burst 3 spent)");
        is_int(audit_emit(a, "egress.allow", NULL, NULL, g, 1, 0, &err), -EDQUOT,
               "run A over its budget: -EDQUOT, the action must be refused");
        is_int(audit_emit(a, "egress.allow", NULL, NULL, g, 1, 0, &err), -EDQUOT, "... again");
        ok(audit_emit(b, "egress.allow", NULL, NULL, g, 1, 0, &err) > 0,
           "run B meanwhile: written (its own budget)");
        struct audit_field s[] = {
                {.key = "value", .type = AUDIT_STR, .s = "hunter2", .flags = AUDIT_F_SECRET}};
        is_int(audit_emit(b, "secret.read", NULL, NULL, s, 1, 0, &err), -EPERM,
               "a field flagged secret is refused (-EPERM)");
        ok(audit_emitter_finish(a, &err) == 0 && audit_emitter_finish(b, &err) == 0,
           "both runs finish");
        is_int(count(state, "\"event\":\"audit.throttled\""), 1,
               "one audit.throttled record for the episode");
        is_int(count(state, "\"summary\":\"9 more refused queries for x.example\""), 1,
               "the summary: 9 more refused queries for x.example");
        is_int(count(state, "\"coalesced\":9,\"event\":\"audit.budget\""), 1,
               "run A's audit.budget: 9 coalesced");
        is_int(count(state, "\"refused\":2,\"run\":\"run-a\""), 1, "... 2 refused");
        is_int(count(state, "hunter2"), 0, "the secret value is nowhere in the log");
        uint64_t n = 0;
        is_int(verify_n(state, NULL, NULL, &n, &err), 0, "the log verifies (%s)", err.msg);
        audit_emitter_free(a);
        audit_emitter_free(b);
        audit_close(log);
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", state);
        if (system(cmd) != 0)
                diag("could not remove %s", state);
        free(state);
}

static void test_dns(void)
{
        /* id 0x1234, RD, one question: WWW.Example.com A IN, then an OPT record */
        static const uint8_t q[] = {0x12, 0x34, 0x01, 0x00, 0,   1,   0,   0,   0,   0,   0,
                                    1,    3,    'W',  'W',  'W', 7,   'E', 'x', 'a', 'm', 'p',
                                    'l',  'e',  3,    'c',  'o', 'm', 0,   0,   1,   0,   1,
                                    0,    0,    41,   4,    0,   0,   0,   0,   0,   0,   0};
        struct dns_query d;
        struct rf_error err = {0};
        uint8_t out[512];

        is_int(dns_query_parse(q, sizeof q, &d, &err), 0, "a query parses");
        is_str(d.name, "www.example.com", "... its name, lower-cased");
        ok(d.id == 0x1234 && d.qtype == 1 && d.qclass == 1, "... id, type and class");
        int n = dns_refused(q, &d, out, sizeof out);
        is_int(n, 33, "REFUSED answer: header and question only");
        ok(out[0] == 0x12 && out[1] == 0x34 && out[2] == 0x81 && out[3] == 5,
           "... same id, QR and RD set, RCODE 5");
        ok(out[6] == 0 && out[7] == 0 && out[10] == 0 && out[11] == 0,
           "... no answer or additional records");

        uint8_t bad[sizeof q];
        memcpy(bad, q, sizeof q);
        bad[12] = 0xc0; /* a compression pointer in the question */
        is_int(dns_query_parse(bad, sizeof bad, &d, &err), -EBADMSG,
               "a compression pointer in the question: refused");
        memcpy(bad, q, sizeof q);
        bad[2] |= 0x80;
        is_int(dns_query_parse(bad, sizeof bad, &d, &err), -EBADMSG, "a response is not a query");
        is_int(dns_formerr(bad, sizeof bad, out), -EBADMSG, "... and gets no FORMERR either");
        memcpy(bad, q, sizeof q);
        bad[5] = 2;
        is_int(dns_query_parse(bad, sizeof bad, &d, &err), -EBADMSG, "two questions: refused");
        is_int(dns_formerr(bad, sizeof bad, out), 12, "... answered FORMERR (header only)");
        is_int(dns_query_parse(q, 20, &d, &err), -EBADMSG, "a truncated name: refused");
        is_int(dns_query_parse(q, 31, &d, &err), -EBADMSG, "no type and class: refused");

        uint8_t odd[] = {0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3, 'a', '.', '\n', 0, 0, 1, 0, 1};
        is_int(dns_query_parse(odd, sizeof odd, &d, &err), 0, "a label with a dot and a newline");
        is_str(d.name, "a\\046\\010", "... is escaped, so it cannot pose as another name");
        uint8_t root[] = {0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1};
        ok(dns_query_parse(root, sizeof root, &d, &err) == 0 && !strcmp(d.name, "."),
           "the root name is \".\"");

        uint8_t longname[12 + 5 * 61 + 1 + 4] = {0, 1, 0, 0, 0, 1};
        size_t p = 12;
        for (int i = 0; i < 5; i++) {
                longname[p++] = 60;
                memset(longname + p, 'a', 60);
                p += 60;
        }
        longname[p++] = 0;
        is_int(dns_query_parse(longname, p + 4, &d, &err), -EBADMSG,
               "a name over 255 bytes: refused");
}

int main(void)
{
        test_bucket();
        test_bytes();
        test_coalesce();
        test_emitter();
        test_dns();
        return done();
}
