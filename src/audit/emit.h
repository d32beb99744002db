/*
 * emit.h — the event API: how a run's supervisor (and, later, its egress
 * process, secret broker and the daemon) records what the run does.
 *
 * One struct audit_emitter per run, over the instance's shared audit log.
 * Every event goes through the run's budget (budget.h):
 *
 *   r = audit_emit(e, "egress.allow", NULL, NULL, fields, n, &err);
 *   if (r < 0) refuse the connection;    -- must-succeed: no record, no action
 *
 *   audit_emit(e, "dns.refused", name, "refused queries for", fields, n, &err);
 *                                        -- a refusal: coalescible per name
 *
 * Returns: > 0 the record's seq (written; durable within the group-commit
 * window, or at once for AUDIT_EMIT_DURABLE); 0 coalesced (counted, to be
 * summarised as "N refused queries for NAME"); -EDQUOT the run is over its
 * event rate or byte budget (an `audit.throttled` record says so, once per
 * episode); -EPERM a field flagged AUDIT_F_SECRET; -ENOSPC/-EIO/... the log
 * cannot be written. For any r < 0 the action the event records must not
 * proceed; a refusal (which does not proceed anyway) may ignore it.
 *
 * Event names: `<area>.<what>` in [a-z0-9_.]: run.*, log.*, audit.*,
 * dns.*, egress.*, secret.*, control.* (docs/AUDIT.md lists them and
 * their fields). Secret values never reach an event: fields carry a
 * secret's name, version and keyed fingerprint only.
 */
#pragma once

#include "audit/audit.h"
#include "audit/budget.h"

enum {
        AUDIT_EMIT_DURABLE = 1 << 0, /* fdatasync before returning */
};

struct audit_emitter;

/*
 * audit_emitter_new — an emitter for run `run` over `log` (borrowed; must
 * outlive the emitter) with budget `cfg` (NULL: defaults). 0 or -ENOMEM.
 */
int audit_emitter_new(struct audit_log *log, const char *run, const struct audit_budget_cfg *cfg,
                      struct audit_emitter **ret);

/*
 * audit_emit — record one event of the run (see the header comment).
 * `coalesce_key` non-NULL marks the event coalescible under that key;
 * `what` (a static string) names the repeats in the summary
 * ("refused queries for"). `flags`: AUDIT_EMIT_DURABLE.
 */
int64_t audit_emit(struct audit_emitter *e, const char *event, const char *coalesce_key,
                   const char *what, const struct audit_field *fields, size_t n_fields,
                   unsigned flags, struct rf_error *err);

/*
 * audit_emitter_set_redact — every string field of the run's later events
 * (and their coalescing keys) passes through `fn` first: it returns 1 with
 * a malloc'd redacted copy in *ret, 0 to keep the string, or -ENOMEM. The
 * run's secret grants use it so that a bound value hidden in a request
 * path or a DNS name is not recorded. `ctx` is borrowed; NULL fn: none.
 */
#define AUDIT_EMIT_FIELDS_MAX 32
typedef int (*audit_redact_fn)(void *ctx, const char *s, char **ret);
void audit_emitter_set_redact(struct audit_emitter *e, audit_redact_fn fn, void *ctx);

/*
 * audit_emitter_tick — write the summaries of coalescing windows that have
 * ended and make appended records durable once the oldest is
 * AUDIT_COMMIT_WINDOW_MS old. Call when audit_emitter_next_ms says so.
 * 0 or -errno (the log failed: later actions are refused by audit_emit).
 */
int audit_emitter_tick(struct audit_emitter *e, struct rf_error *err);

/* audit_emitter_next_ms — ms until audit_emitter_tick has work (0: now), or -1 for none. */
int64_t audit_emitter_next_ms(const struct audit_emitter *e);

/*
 * audit_emitter_set_ticked — `ticked`: the caller's loop calls
 * audit_emitter_tick as audit_emitter_next_ms says, so the log's appends
 * leave the window's commit to it (audit_set_ticked): an event's answer
 * never waits for the records before it to reach the disk.
 */
void audit_emitter_set_ticked(struct audit_emitter *e, bool ticked);

/*
 * audit_emitter_finish — at run end: write every pending summary and, if
 * the run was ever coalesced or throttled, one `audit.budget` record with
 * its totals. Not flushed: they become durable with the caller's next
 * commit (run.exit's: one fdatasync for the run's end, not two). 0 or
 * -errno. Idempotent.
 */
int audit_emitter_finish(struct audit_emitter *e, struct rf_error *err);

/* The run's budget counters (for tests and run.exit). */
const struct audit_budget *audit_emitter_budget(const struct audit_emitter *e);

/* audit_hold/audit_release on the emitter's log (audit.h). */
int audit_emitter_hold(struct audit_emitter *e, struct rf_error *err);
void audit_emitter_release(struct audit_emitter *e);

/* Free (without finishing). Accepts NULL; returns NULL. */
struct audit_emitter *audit_emitter_free(struct audit_emitter *e);
