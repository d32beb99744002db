/*
 * scope.c — the audit read scope of a daemon caller (scope.h). Pure.
 *
 * Runs the caller may see are kept in an open-addressing hash set of run
 * ids (growing by doubling up to SCOPE_RUNS_MAX); runs it may not see are
 * not kept: a record of a run not in the set is not shown.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/scope.h"
#include "shared/json.h"

#define RUN_ID_MAX 40

struct audit_scope {
        uint64_t uid;
        char **own, **all; /* agents; "*" any */
        size_t n_own, n_all;
        char (*runs)[RUN_ID_MAX]; /* visible runs; "" free */
        size_t n_runs, cap;
};

struct audit_scope *audit_scope_free(struct audit_scope *s)
{
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n_own; i++)
                free(s->own[i]);
        for (size_t i = 0; i < s->n_all; i++)
                free(s->all[i]);
        free(s->own);
        free(s->all);
        free(s->runs);
        free(s);
        return NULL;
}

static int agents(const struct json_node *a, char ***out, size_t *n)
{
        if (!a)
                return 0;
        if (a->type != JSON_ARRAY || a->n_items > SCOPE_AGENTS_MAX)
                return -EINVAL;
        if (!(*out = calloc(a->n_items + 1, sizeof **out)))
                return -ENOMEM;
        for (size_t i = 0; i < a->n_items; i++) {
                if (a->items[i]->type != JSON_STRING || !a->items[i]->len)
                        return -EINVAL;
                if (!((*out)[i] = strdup(a->items[i]->str)))
                        return -ENOMEM;
                (*n)++;
        }
        return 0;
}

int audit_scope_parse(const char *spec, size_t len, struct audit_scope **out)
{
        struct json_node *doc = NULL;
        struct rf_error err = {0};
        int r = -EINVAL;

        *out = NULL;
        if (len > SCOPE_SPEC_MAX || json_parse(spec, len, &doc, &err) < 0)
                return -EINVAL;
        struct audit_scope *s = calloc(1, sizeof *s);
        if (!s) {
                json_node_free(doc);
                return -ENOMEM;
        }
        const struct json_node *uid = json_object_get(doc, "uid");
        if (doc->type == JSON_OBJECT && uid && json_number_uint64(uid, &s->uid) == 0 &&
            (r = agents(json_object_get(doc, "own"), &s->own, &s->n_own)) == 0)
                r = agents(json_object_get(doc, "all"), &s->all, &s->n_all);
        for (size_t i = 0; r == 0 && i < doc->n_items; i++)
                if (strcmp(doc->items[i]->key, "uid") && strcmp(doc->items[i]->key, "own") &&
                    strcmp(doc->items[i]->key, "all"))
                        r = -EINVAL;
        json_node_free(doc);
        if (r < 0) {
                audit_scope_free(s);
                return r;
        }
        *out = s;
        return 0;
}

static bool listed(char *const *v, size_t n, const char *agent)
{
        for (size_t i = 0; i < n; i++)
                if (!strcmp(v[i], "*") || (agent && !strcmp(v[i], agent)))
                        return true;
        return false;
}

static uint64_t hash(const char *run)
{
        uint64_t h = 1469598103934665603ULL; /* FNV-1a */
        for (; *run; run++)
                h = (h ^ (unsigned char)*run) * 1099511628211ULL;
        return h;
}

/* The slot of `run`, or of the free slot where it would go. */
static size_t slot_of(const struct audit_scope *s, const char *run)
{
        size_t i = (size_t)hash(run) & (s->cap - 1);
        while (s->runs[i][0] && strcmp(s->runs[i], run))
                i = (i + 1) & (s->cap - 1);
        return i;
}

static bool run_known(const struct audit_scope *s, const char *run)
{
        return s->cap && s->runs[slot_of(s, run)][0];
}

static void run_add(struct audit_scope *s, const char *run)
{
        if (run_known(s, run) || s->n_runs >= SCOPE_RUNS_MAX)
                return; /* full: newer runs stay unseen (fail closed) */
        if (2 * (s->n_runs + 1) > s->cap) {
                size_t cap = s->cap ? 2 * s->cap : 1024;
                char(*old)[RUN_ID_MAX] = s->runs;
                size_t old_cap = s->cap;
                if (!(s->runs = calloc(cap, sizeof *s->runs))) {
                        s->runs = old;
                        return;
                }
                s->cap = cap;
                for (size_t i = 0; i < old_cap; i++)
                        if (old[i][0])
                                memcpy(s->runs[slot_of(s, old[i])], old[i], RUN_ID_MAX);
                free(old);
        }
        memcpy(s->runs[slot_of(s, run)], run, strlen(run) + 1);
        s->n_runs++;
}

static const char *str_of(const struct json_node *o, const char *key)
{
        const struct json_node *n = json_object_get(o, key);
        return n && n->type == JSON_STRING ? n->str : NULL;
}

/* The uid that started the run this first record describes, or -1. */
static int64_t starter(const struct json_node *o, const char *event)
{
        uint64_t u;
        if (!strcmp(event, "control.start")) {
                const struct json_node *a = json_object_get(o, "actor_uid");
                return a && json_number_uint64(a, &u) == 0 ? (int64_t)u : -1;
        }
        /* run.start: "uid:N(name)" */
        const char *by = str_of(o, "started_by");
        if (!by || strncmp(by, "uid:", 4) || by[4] < '0' || by[4] > '9')
                return -1;
        char *end;
        unsigned long long v = strtoull(by + 4, &end, 10);
        return *end == '(' && v <= UINT32_MAX ? (int64_t)v : -1;
}

bool audit_scope_visible(struct audit_scope *s, const struct json_node *o)
{
        if (!o || o->type != JSON_OBJECT)
                return false;
        const char *run = str_of(o, "run"), *event = str_of(o, "event"),
                   *agent = str_of(o, "agent");
        if (!run || !run[0]) /* an agent's, or (no agent) only under "*" */
                return listed(s->all, s->n_all, agent);
        if (strlen(run) >= RUN_ID_MAX)
                return false;
        if (run_known(s, run))
                return true;
        /* a run's first record decides it */
        if (event && agent && (!strcmp(event, "control.start") || !strcmp(event, "run.start"))) {
                int64_t uid = starter(o, event);
                if (listed(s->all, s->n_all, agent) ||
                    (uid >= 0 && (uint64_t)uid == s->uid && listed(s->own, s->n_own, agent))) {
                        run_add(s, run);
                        return run_known(s, run);
                }
        }
        return false;
}
