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
#include "cli.h"
#include "shared/json.h"
#include "policy/policy.h"
#include "shared/macro.h"

#define LOOP_INDEX_MAX (1u << 20)

struct start_rec {
        char run[40], trigger[40];
        char agent[64], task[64];
        int64_t ts_ms;
};

struct loop_index {
        struct start_rec *v;
        size_t n, cap;
};

static void copy_member(const struct json_node *o, const char *key, char *dst, size_t len)
{
        const struct json_node *n = json_object_get(o, key);
        snprintf(dst, len, "%s", n && n->type == JSON_STRING ? n->str : "");
}

static int index_line(struct loop_index *ix, const char *line, size_t len)
{
        _cleanup_json_ struct json_node *o = NULL;
        struct rf_error err = {0};

        if (!memmem(line, len, "\"event\":\"run.start\"", 19))
                return 0;
        if (json_parse(line, len, &o, &err) < 0 || o->type != JSON_OBJECT)
                return 0;
        if (ix->n == ix->cap) {
                if (ix->cap >= LOOP_INDEX_MAX)
                        return -E2BIG;
                size_t cap = ix->cap ? ix->cap * 2 : 1024;
                struct start_rec *v = realloc(ix->v, cap * sizeof *v);
                if (!v)
                        return -ENOMEM;
                ix->v = v;
                ix->cap = cap;
        }
        struct start_rec *r = &ix->v[ix->n++];
        copy_member(o, "run", r->run, sizeof r->run);
        copy_member(o, "triggered_by", r->trigger, sizeof r->trigger);
        copy_member(o, "agent", r->agent, sizeof r->agent);
        copy_member(o, "task", r->task, sizeof r->task);
        const struct json_node *ts = json_object_get(o, "ts");
        r->ts_ms = 0;
        if (ts)
                (void)json_number_int64(ts, &r->ts_ms);
        return 0;
}

static int index_cb(const char *line, size_t len, void *ctx)
{
        return index_line(ctx, line, len);
}

static int build_index(const char *state_dir, struct loop_index *ix)
{
        return audit_foreach_line(state_dir, index_cb, ix);
}

static const struct start_rec *find_run(const struct loop_index *ix, const char *run)
{
        for (size_t i = ix->n; i-- > 0;)
                if (strcmp(ix->v[i].run, run) == 0)
                        return &ix->v[i];
        return NULL;
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
        struct loop_index ix = {0};
        const char *agent = pol->agent, *task = pol->task, *trigger = pol->triggered_by;
        uint64_t max_depth = pol->max_chain_depth ? pol->max_chain_depth : LOOP_MAX_DEPTH;
        uint64_t max_runs = pol->max_runs_per_window ? pol->max_runs_per_window : LOOP_MAX_RUNS;
        uint64_t window_ms = pol->loop_window_ms ? pol->loop_window_ms : LOOP_WINDOW_S * 1000ULL;
        int r = build_index(state_dir, &ix);

        if (r < 0) {
                snprintf(why, why_len, "cannot read the audit log: %s", strerror(-r));
                free(ix.v);
                return r;
        }
        r = 0;
        if (trigger && *trigger) {
                /* the chain: this run, its trigger, the trigger's trigger... */
                char chain[1024];
                size_t depth = 1;
                snprintf(chain, sizeof chain, "%s", trigger);
                const struct start_rec *t = find_run(&ix, trigger);
                if (!t) {
                        snprintf(why, why_len,
                                 "triggered-by %s: no such run in this instance's audit log",
                                 trigger);
                        r = -ENOENT;
                        goto out;
                }
                for (; t && depth <= max_depth;
                     t = t->trigger[0] ? find_run(&ix, t->trigger) : NULL) {
                        depth++;
                        if (t->trigger[0] &&
                            strlen(chain) + strlen(t->trigger) + 4 < sizeof chain) {
                                strcat(chain, " <- ");
                                strcat(chain, t->trigger);
                        }
                }
                if (depth > max_depth) {
                        snprintf(why, why_len,
                                 "wake loop: the causal chain exceeds %llu runs (%s <- ...)",
                                 (unsigned long long)max_depth, chain);
                        r = -ELOOP;
                        goto out;
                }
        }
        /* a burst for one (agent, task) */
        if (task && *task) {
                int64_t now = (int64_t)time(NULL) * 1000, n = 0;
                for (size_t i = 0; i < ix.n; i++)
                        if (!strcmp(ix.v[i].agent, agent ? agent : "") &&
                            !strcmp(ix.v[i].task, task) && ix.v[i].ts_ms > now - (int64_t)window_ms)
                                n++;
                if ((uint64_t)n >= max_runs) {
                        snprintf(why, why_len,
                                 "wake loop: %lld runs of agent %s for task %s in the last %llu s "
                                 "(limit %llu)",
                                 (long long)n, agent, task, (unsigned long long)(window_ms / 1000),
                                 (unsigned long long)max_runs);
                        r = -ELOOP;
                }
        }
out:
        free(ix.v);
        return r;
}
