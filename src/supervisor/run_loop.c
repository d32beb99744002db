/*
 * run_loop.c — the wake-loop breaker.
 *
 * A run started with --triggered-by names the run (or carries the verified
 * run identity token) that caused it. The trigger must be a run this
 * instance's audit log knows — never an unchecked string — and the causal
 * chain it starts may not grow beyond audit.max_chain_depth runs (default
 * LOOP_MAX_DEPTH), nor may one (agent, task) start more than
 * audit.max_runs_per_window runs within audit.loop_window (defaults
 * LOOP_MAX_RUNS, LOOP_WINDOW_S):
 * an agent whose own output wakes it again is stopped, before anything
 * executes, with run.refused reason=loop and the chain.
 *
 * The index is built by one pass over the log's run.start records (a
 * substring test first, the strict JSON parser only for those lines).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit/audit.h"
#include "audit/token.h"
#include "supervisor/start-internal.h"
#include "shared/json.h"
#include "policy/policy.h"
#include "shared/macro.h"

/*
 * One backward pass over the log (newest first), parsing only run.start
 * lines, that stops as soon as it knows enough: the burst window is
 * covered (a run.start older than it was seen) and the causal chain is
 * resolved (its root reached, or more ancestors found than allowed). So a
 * run start reads the last loop_window of the log, plus, with a trigger,
 * back to the chain's oldest ancestor — never the whole log of a busy host.
 */
struct loop_scan {
        const char *agent, *task;
        int64_t since_ms; /* window start */
        bool window_done; /* a run.start older than the window was seen */
        uint64_t burst;   /* run.starts of (agent, task) within the window */
        char want[40];    /* the ancestor to find next ("" = chain resolved) */
        bool found_first; /* the direct trigger was found */
        uint64_t depth;   /* runs in the chain so far, this one included */
        uint64_t max_depth;
        char chain[1024]; /* "T <- T's trigger <- ..." */
};

static const char *member(const struct json_node *o, const char *key)
{
        const struct json_node *n = json_object_get(o, key);
        return n && n->type == JSON_STRING ? n->str : "";
}

static int scan_line(const char *line, size_t len, void *ctx)
{
        struct loop_scan *sc = ctx;
        _cleanup_json_ struct json_node *o = NULL;
        struct rf_error err = {0};

        if (!memmem(line, len, "\"event\":\"run.start\"", 19))
                return 0;
        if (json_parse(line, len, &o, &err) < 0 || o->type != JSON_OBJECT)
                return 0;
        int64_t ts = 0;
        const struct json_node *t = json_object_get(o, "ts");
        if (t)
                (void)json_number_int64(t, &ts);
        if (ts < sc->since_ms)
                sc->window_done = true;
        else if (sc->task && !strcmp(member(o, "agent"), sc->agent) &&
                 !strcmp(member(o, "task"), sc->task))
                sc->burst++;
        if (sc->want[0] && !strcmp(member(o, "run"), sc->want)) {
                const char *up = member(o, "triggered_by");
                sc->found_first = true;
                sc->depth++;
                if (*up && strlen(up) < sizeof sc->want && sc->depth <= sc->max_depth) {
                        size_t l = strlen(sc->chain);
                        if (l + strlen(up) + 5 < sizeof sc->chain)
                                snprintf(sc->chain + l, sizeof sc->chain - l, " <- %s", up);
                        snprintf(sc->want, sizeof sc->want, "%s", up);
                } else
                        sc->want[0] = '\0';
        }
        return (sc->window_done || !sc->task) && !sc->want[0] ? 1 : 0;
}

int run_trigger_token(const char *state_dir, const char *token, struct rf_policy *pol,
                      struct rf_error *err)
{
        unsigned char pk[32];
        struct token_claims c;
        struct rf_error e = {0};

        if (!token)
                return 0;
        int r = token_public_key(state_dir, pk, &e);
        if (r >= 0)
                r = token_verify(token, pk, (int64_t)time(NULL), &c, &e);
        if (r < 0)
                return rf_error_set(err, r,
                                    "--triggered-by: not a valid run identity token of "
                                    "this instance: %s",
                                    e.msg);
        r = policy_set_string(&pol->triggered_by, c.run, POLICY_IDENT_MAX, err);
        explicit_bzero(&c, sizeof c);
        return r;
}

int run_loop_check(const char *state_dir, const struct rf_policy *pol, char *why, size_t why_len)
{
        const char *trigger = pol->triggered_by;
        uint64_t max_runs = pol->max_runs_per_window ? pol->max_runs_per_window : LOOP_MAX_RUNS;
        uint64_t window_ms = pol->loop_window_ms ? pol->loop_window_ms : LOOP_WINDOW_S * 1000ULL;
        struct loop_scan sc = {
                .agent = pol->agent ? pol->agent : "",
                .task = pol->task && *pol->task ? pol->task : NULL,
                .since_ms = (int64_t)time(NULL) * 1000 - (int64_t)window_ms,
                .depth = 1,
                .max_depth = pol->max_chain_depth ? pol->max_chain_depth : LOOP_MAX_DEPTH,
        };

        if (trigger && *trigger) {
                if (strlen(trigger) >= sizeof sc.want) {
                        snprintf(why, why_len, "triggered-by %s: not a run id", trigger);
                        return -ENOENT;
                }
                snprintf(sc.want, sizeof sc.want, "%s", trigger);
                snprintf(sc.chain, sizeof sc.chain, "%s", trigger);
        }
        /* Neither a task (the burst limit) nor a trigger (the chain): no
         * limit can apply, and the log is not read at all. */
        if (!sc.task && !sc.want[0])
                return 0;
        int r = audit_foreach_line_reverse(state_dir, scan_line, &sc);
        if (r < 0) {
                snprintf(why, why_len, "cannot read the audit log: %s", strerror(-r));
                return r;
        }
        if (trigger && *trigger && !sc.found_first) {
                snprintf(why, why_len, "triggered-by %s: no such run in this instance's audit log",
                         trigger);
                return -ENOENT;
        }
        if (sc.depth > sc.max_depth) {
                snprintf(why, why_len, "wake loop: the causal chain exceeds %llu runs (%s <- ...)",
                         (unsigned long long)sc.max_depth, sc.chain);
                return -ELOOP;
        }
        if (sc.task && sc.burst >= max_runs) {
                snprintf(why, why_len,
                         "wake loop: %llu runs of agent %s for task %s in the last %llu s "
                         "(limit %llu)",
                         (unsigned long long)sc.burst, sc.agent, sc.task,
                         (unsigned long long)(window_ms / 1000), (unsigned long long)max_runs);
                return -ELOOP;
        }
        return 0;
}
