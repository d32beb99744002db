/*
 * test_egress_events.c — the supervisor's side of the egress process's
 * event channel (src/egress/egress.c: egress_event_serve) with several
 * records in one datagram, written through a real audit log and emitter.
 *
 * Each case sends datagrams over a SOCK_SEQPACKET pair as the egress
 * process does and checks what was answered and what the log holds, in
 * order: records of one datagram are written in order and only its last,
 * if synchronous, is answered; an unrecordable record's failure is the
 * answer to the next synchronous one, which is then not written; a
 * synchronous record before the last is malformed and not written; an
 * event the egress process may not write (run.*) is refused; a record or
 * a datagram over its bounds (bytes, records) is refused; a secret.exfil whose action is
 * kill is reported. Control: the one-record datagram of before.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>

#include "audit/audit.h"
#include "audit/emit.h"
#include "egress/egress.h"
#include "tap.h"

static int sp[2];
static char state[] = "/tmp/rf-test-egress-events.XXXXXX";
static struct audit_log *alog;
static struct audit_emitter *emit;
static int64_t async_fail;

#define ALLOW "{\"event\":\"egress.allow\",\"fields\":{\"host\":\"a.test\",\"port\":443}}"
#define TLS   "{\"async\":true,\"event\":\"egress.tls\",\"fields\":{\"side\":\"client\"}}"
#define RESP  "{\"async\":true,\"event\":\"egress.response\",\"fields\":{\"status\":200}}"
#define CLOSE "{\"async\":true,\"event\":\"egress.close\",\"fields\":{\"host\":\"a.test\"}}"

/* Send one datagram and serve it: what egress_event_serve returned. */
static int serve(const char *dgram, size_t len)
{
        if (send(sp[0], dgram, len, 0) != (ssize_t)len)
                abort();
        return egress_event_serve(sp[1], emit, &async_fail);
}

/* The answer waiting for the egress side, or INT64_MIN for none. */
static int64_t answer(void)
{
        int64_t a;
        if (recv(sp[0], &a, sizeof a, MSG_DONTWAIT) != sizeof a)
                return INT64_MIN;
        return a;
}

struct events {
        char names[64][40];
        size_t n;
};

static int collect(const char *line, size_t len, void *ctx)
{
        struct events *ev = ctx;
        struct audit_record r;
        struct rf_error e = {0};
        if (audit_record_parse(line, len, &r, &e) == 0 && ev->n < 64)
                snprintf(ev->names[ev->n++], sizeof ev->names[0], "%s", r.event);
        return 0;
}

/* The log's events since the last call, space-separated. */
static const char *logged(void)
{
        static size_t seen;
        static char out[1024];
        struct events ev = {0};
        audit_foreach_line(state, collect, &ev);
        out[0] = '\0';
        for (size_t i = seen; i < ev.n; i++) {
                strcat(out, i > seen ? " " : "");
                strcat(out, ev.names[i]);
        }
        seen = ev.n;
        return out;
}

int main(void)
{
        struct rf_error err = {0};
        if (sodium_init() < 0 || !mkdtemp(state) || audit_open(state, &alog, &err) < 0 ||
            audit_emitter_new(alog, "run-events", &(struct audit_budget_cfg){0}, &emit) < 0 ||
            socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
                fprintf(stderr, "setup: %s\n", err.msg);
                return 1;
        }

        /* control: one record, as before */
        is_int(serve(ALLOW, sizeof ALLOW - 1), 1, "a datagram of one synchronous record: served");
        int64_t a = answer();
        ok(a > 0, "... answered with its seq (%lld)", (long long)a);
        is_str(logged(), "egress.allow", "... and written");

        /* two async, then the sync one: one answer, three records in order */
        const char three[] = TLS "\n" RESP "\n" ALLOW;
        is_int(serve(three, sizeof three - 1), 1, "async, async, sync in one datagram: served");
        int64_t b = answer();
        is_int((int)(b - a), 3, "... one answer, the seq of its last record (%lld)", (long long)b);
        ok(answer() == INT64_MIN, "... and no other answer");
        is_str(logged(), "egress.tls egress.response egress.allow",
               "... all three written, in order");

        /* only async records: none answered */
        const char two[] = RESP "\n" CLOSE;
        is_int(serve(two, sizeof two - 1), 1, "a datagram of async records: served");
        ok(answer() == INT64_MIN, "... not answered");
        is_str(logged(), "egress.response egress.close", "... both written");

        /* a run.* record among them: refused; the sync one after it fails */
        const char forged[] =
                CLOSE "\n{\"async\":true,\"event\":\"run.exit\",\"fields\":{}}\n" ALLOW;
        is_int(serve(forged, sizeof forged - 1), 1, "a run.exit among egress records: served");
        is_int((int)answer(), -EBADMSG, "... the synchronous record is refused (-EBADMSG)");
        is_str(logged(), "egress.close", "... run.exit not written, nor what depended on it");
        is_int(serve(ALLOW, sizeof ALLOW - 1), 1, "the next synchronous record");
        ok(answer() > 0, "... is recorded again (the failure was reported once)");
        is_str(logged(), "egress.allow", "... written");

        /* a synchronous record before the last: malformed, not written */
        const char early[] = ALLOW "\n" CLOSE;
        is_int(serve(early, sizeof early - 1), 1, "sync, then async: served");
        ok(answer() == INT64_MIN, "... nothing answered (its last is async)");
        is_str(logged(), "egress.close", "... the early synchronous record not written");
        is_int(serve(ALLOW, sizeof ALLOW - 1), 1, "the next synchronous record");
        is_int((int)answer(), -EBADMSG, "... gets the early one's failure (-EBADMSG)");
        is_str(logged(), "", "... and is not written");

        /* a record over EGRESS_EVENT_MAX inside a datagram */
        static char big[EGRESS_EVENT_BATCH_MAX + 64];
        int k = snprintf(big, sizeof big,
                         "%s\n{\"async\":true,\"event\":\"egress.close\","
                         "\"fields\":{\"host\":\"",
                         CLOSE);
        memset(big + k, 'x', EGRESS_EVENT_MAX);
        k += EGRESS_EVENT_MAX;
        k += snprintf(big + k, sizeof big - (size_t)k, "\"}}\n%s", ALLOW);
        is_int(serve(big, (size_t)k), 1, "a record over EGRESS_EVENT_MAX in a datagram: served");
        is_int((int)answer(), -EBADMSG, "... the synchronous record after it is refused");
        is_str(logged(), "egress.close", "... only the record before it written");

        /* a datagram over EGRESS_EVENT_BATCH_MAX */
        memset(big, ' ', sizeof big);
        memcpy(big, ALLOW, sizeof ALLOW - 1);
        is_int(serve(big, EGRESS_EVENT_BATCH_MAX + 1), 1, "a datagram over the bound: served");
        is_int((int)answer(), -EBADMSG, "... answered -EBADMSG");
        is_str(logged(), "", "... nothing of it written");

        /* EGRESS_EVENT_RECORDS_MAX records: written; one more: none of them */
        size_t at = 0;
        for (int i = 0; i < EGRESS_EVENT_RECORDS_MAX; i++)
                at += (size_t)snprintf(big + at, sizeof big - at, "%s%s", i ? "\n" : "", CLOSE);
        is_int(serve(big, at), 1, "%d async records in a datagram: served",
               EGRESS_EVENT_RECORDS_MAX);
        ok(answer() == INT64_MIN, "... not answered");
        ok(strlen(logged()) == (size_t)EGRESS_EVENT_RECORDS_MAX * (sizeof "egress.close") - 1,
           "... all of them written");
        at += (size_t)snprintf(big + at, sizeof big - at, "\n%s", ALLOW);
        is_int(serve(big, at), 1, "%d records (the last synchronous): served",
               EGRESS_EVENT_RECORDS_MAX + 1);
        is_int((int)answer(), -EBADMSG, "... answered -EBADMSG: more than a datagram may hold");
        is_str(logged(), "", "... nothing of it written");

        /* secret.exfil whose binding kills, inside a batch */
        const char exfil[] = RESP "\n{\"event\":\"secret.exfil\",\"fields\":{\"name\":\"K\","
                                  "\"action\":\"kill\"}}";
        is_int(serve(exfil, sizeof exfil - 1), 2, "a secret.exfil with action kill: reported (2)");
        ok(answer() > 0, "... answered");
        is_str(logged(), "egress.response secret.exfil", "... both written");

        /* the channel gone */
        close(sp[0]);
        is_int(egress_event_serve(sp[1], emit, &async_fail), -ECONNRESET, "a closed channel");

        audit_emitter_free(emit);
        audit_close(alog);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", state);
        if (system(cmd) != 0)
                diag("could not remove %s", state);
        return done();
}
