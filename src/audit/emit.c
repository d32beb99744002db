/*
 * emit.c — the per-run event API over the shared audit log. See emit.h.
 *
 * The budget is charged an estimate of the record's size before it is
 * written (the fields' bytes plus the fixed members); summaries and
 * `audit.throttled` are charged bytes but no token, and both are bounded:
 * one summary per coalescing slot per window, one throttle record per
 * episode (an episode ends only with a written record, which costs a token).
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit/emit.h"
#include "shared/macro.h"

#define RECORD_OVERHEAD 320 /* version, seq, ts, run, event, prev, hash, punctuation */

struct audit_emitter {
        struct audit_log *log;
        char run[AUDIT_RUN_MAX];
        const char *what[AUDIT_COALESCE_SLOTS];
        bool finished;
        audit_redact_fn redact; /* or NULL */
        void *redact_ctx;
        struct audit_budget budget; /* last: its unused slots are never touched */
};

static int64_t mono_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t real_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static size_t estimate(const char *event, const struct audit_field *f, size_t n)
{
        size_t b = RECORD_OVERHEAD + strlen(event);
        for (size_t i = 0; i < n; i++) {
                b += strlen(f[i].key) + 6;
                if (f[i].type == AUDIT_STR || f[i].type == AUDIT_RAW)
                        b += f[i].s ? strlen(f[i].s) : 0;
                else
                        b += 20;
        }
        return b;
}

int audit_emitter_new(struct audit_log *log, const char *run, const struct audit_budget_cfg *cfg,
                      struct audit_emitter **ret)
{
        /* ~130 KiB, most of it coalescing slots a run may never use: only
         * what comes before them is zeroed (audit_budget_init zeroes the
         * budget's own head), so a start faults in none of their pages */
        struct audit_emitter *e = malloc(sizeof *e);
        if (!e)
                return -ENOMEM;
        memset(e, 0, offsetof(struct audit_emitter, budget));
        e->log = log;
        snprintf(e->run, sizeof e->run, "%s", run ? run : "");
        audit_budget_init(&e->budget, cfg, mono_ms());
        *ret = e;
        return 0;
}

static int write_throttled(struct audit_emitter *e, const char *event, struct rf_error *err)
{
        const struct audit_budget *b = &e->budget;
        bool bytes = b->bytes_used + RECORD_OVERHEAD > b->cfg.bytes;
        struct audit_field f[] = {
                {.key = "reason", .type = AUDIT_STR, .s = bytes ? "bytes" : "rate"},
                {.key = "first_refused", .type = AUDIT_STR, .s = event},
                {.key = "rate", .type = AUDIT_UINT, .u = b->cfg.rate},
                {.key = "burst", .type = AUDIT_UINT, .u = b->cfg.burst},
                {.key = "bytes", .type = AUDIT_UINT, .u = b->cfg.bytes},
                {.key = "summary",
                 .type = AUDIT_STR,
                 .s = "this run's events are refused until its budget allows more; its "
                      "actions that need a record are refused meanwhile"},
        };
        int64_t r = audit_append(e->log, e->run, "audit.throttled", f, ARRAY_SIZE(f), false, err);
        if (r > 0)
                e->budget.bytes_used += RECORD_OVERHEAD + 200;
        return r < 0 ? (int)r : 0;
}

static int write_summary(struct audit_emitter *e, struct audit_coalesced *s, struct rf_error *err)
{
        size_t i = (size_t)(s - e->budget.slot);
        char summary[AUDIT_COALESCE_KEY_MAX + 96];
        snprintf(summary, sizeof summary, "%" PRIu64 " more %s %s", s->count,
                 e->what[i] ? e->what[i] : "more events for", s->key);
        int64_t now = real_ms(), mono = mono_ms();
        struct audit_field f[] = {
                {.key = "coalesced", .type = AUDIT_BOOL, .b = true},
                {.key = "key", .type = AUDIT_STR, .s = s->key},
                {.key = "count", .type = AUDIT_UINT, .u = s->count},
                {.key = "first_ts", .type = AUDIT_INT, .i = now - (mono - s->first_ms)},
                {.key = "last_ts", .type = AUDIT_INT, .i = now - (mono - s->last_ms)},
                {.key = "summary", .type = AUDIT_STR, .s = summary},
        };
        char event[AUDIT_COALESCE_EVENT_MAX];
        snprintf(event, sizeof event, "%s", s->event);
        int64_t r = audit_append(e->log, e->run, event, f, ARRAY_SIZE(f), false, err);
        if (r < 0)
                return (int)r;
        audit_budget_summary_done(&e->budget, s, estimate(event, f, ARRAY_SIZE(f)));
        e->what[i] = NULL;
        return 0;
}

static int write_expired(struct audit_emitter *e, int64_t now, struct rf_error *err)
{
        struct audit_coalesced *s;
        while ((s = audit_budget_expired(&e->budget, now))) {
                int r = write_summary(e, s, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

void audit_emitter_set_redact(struct audit_emitter *e, audit_redact_fn fn, void *ctx)
{
        e->redact = fn;
        e->redact_ctx = ctx;
}

static void free_copies(char **c, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(c[i]);
}

int64_t audit_emit(struct audit_emitter *e, const char *event, const char *coalesce_key,
                   const char *what, const struct audit_field *fields, size_t n_fields,
                   unsigned flags, struct rf_error *err)
{
        if (e->redact) {
                /* every string of the event (and the coalescing key, which a
                 * summary records) with the run's bound values redacted */
                struct audit_field copy[AUDIT_EMIT_FIELDS_MAX];
                char *red[AUDIT_EMIT_FIELDS_MAX + 1] = {0};
                if (n_fields > AUDIT_EMIT_FIELDS_MAX)
                        return rf_error_set(err, -E2BIG, "event %s: too many fields", event);
                for (size_t i = 0; i < n_fields; i++) {
                        copy[i] = fields[i];
                        if (fields[i].type != AUDIT_STR || !fields[i].s)
                                continue;
                        int r = e->redact(e->redact_ctx, fields[i].s, &red[i]);
                        if (r < 0) {
                                free_copies(red, i);
                                return rf_error_set(err, r, "out of memory");
                        }
                        if (r > 0)
                                copy[i].s = red[i];
                }
                const char *key = coalesce_key;
                if (key) {
                        int r = e->redact(e->redact_ctx, key, &red[n_fields]);
                        if (r < 0) {
                                free_copies(red, n_fields);
                                return rf_error_set(err, r, "out of memory");
                        }
                        if (r > 0)
                                key = red[n_fields];
                }
                audit_redact_fn fn = e->redact;
                e->redact = NULL;
                int64_t seq = audit_emit(e, event, key, what, copy, n_fields, flags, err);
                e->redact = fn;
                free_copies(red, n_fields + 1);
                return seq;
        }
        int64_t now = mono_ms();
        int r;

        for (size_t i = 0; i < n_fields; i++)
                if (fields[i].flags & AUDIT_F_SECRET)
                        return rf_error_set(err, -EPERM, "audit field %s is a secret value",
                                            fields[i].key);
        if ((r = write_expired(e, now, err)) < 0)
                return r;
        switch (audit_budget_admit(&e->budget, event, coalesce_key,
                                   estimate(event, fields, n_fields), now)) {
        case AB_COALESCE:
                return 0;
        case AB_REFUSE:
                if (e->budget.throttle_new) {
                        e->budget.throttle_new = false;
                        if ((r = write_throttled(e, event, err)) < 0)
                                return r;
                }
                return rf_error_set(err, -EDQUOT, "run %s is over its audit budget", e->run);
        case AB_WRITE:
                break;
        default:
                return rf_error_set(err, -EINVAL, "audit budget: bad verdict");
        }
        int64_t seq = audit_append(e->log, e->run, event, fields, n_fields,
                                   flags & AUDIT_EMIT_DURABLE, err);
        if (seq > 0 && coalesce_key) {
                /* remember how to name the repeats of the slot just opened */
                for (size_t i = 0; i < e->budget.n_slots; i++) {
                        const struct audit_coalesced *s = &e->budget.slot[i];
                        if (s->used && s->count == 0 && !strcmp(s->event, event) &&
                            !strcmp(s->key, coalesce_key) && s->until_ms > now) {
                                e->what[i] = what;
                                break;
                        }
                }
        }
        return seq;
}

int audit_emitter_tick(struct audit_emitter *e, struct rf_error *err)
{
        int64_t now = mono_ms();
        /* the commit even when a summary failed: what is written is
         * made durable on time (audit_set_ticked leaves it to this) */
        int w = write_expired(e, now, err), r;
        int64_t d = audit_dirty_ms(e->log);
        if (d && now - d >= AUDIT_COMMIT_WINDOW_MS && (r = audit_flush(e->log)) < 0)
                return w < 0 ? w : rf_error_set(err, r, "sync audit log: %s", strerror(-r));
        return w < 0 ? w : 0;
}

void audit_emitter_set_ticked(struct audit_emitter *e, bool ticked)
{
        audit_set_ticked(e->log, ticked);
}

int64_t audit_emitter_next_ms(const struct audit_emitter *e)
{
        int64_t now = mono_ms();
        int64_t next = audit_budget_next_ms(&e->budget, now);
        int64_t d = audit_dirty_ms(e->log);
        if (d) {
                int64_t c = d + AUDIT_COMMIT_WINDOW_MS - now;
                if (c < 0)
                        c = 0;
                if (next < 0 || c < next)
                        next = c;
        }
        return next;
}

int audit_emitter_finish(struct audit_emitter *e, struct rf_error *err)
{
        if (e->finished)
                return 0;
        e->finished = true;
        /* every window ends now */
        int r = write_expired(e, INT64_MAX, err);
        if (r < 0)
                return r;
        const struct audit_budget *b = &e->budget;
        if (b->coalesced || b->refused) {
                struct audit_field f[] = {
                        {.key = "written", .type = AUDIT_UINT, .u = b->written},
                        {.key = "coalesced", .type = AUDIT_UINT, .u = b->coalesced},
                        {.key = "refused", .type = AUDIT_UINT, .u = b->refused},
                        {.key = "bytes", .type = AUDIT_UINT, .u = b->bytes_used},
                };
                int64_t s =
                        audit_append(e->log, e->run, "audit.budget", f, ARRAY_SIZE(f), false, err);
                if (s < 0)
                        return (int)s;
        }
        return 0;
}

int audit_emitter_hold(struct audit_emitter *e, struct rf_error *err)
{
        return audit_hold(e->log, err);
}

void audit_emitter_release(struct audit_emitter *e)
{
        audit_release(e->log);
}

const struct audit_budget *audit_emitter_budget(const struct audit_emitter *e)
{
        return &e->budget;
}

struct audit_emitter *audit_emitter_free(struct audit_emitter *e)
{
        free(e);
        return NULL;
}
