/*
 * scope.h — which audit records a daemon caller may read (pure; unit-tested).
 *
 * GET /v1/audit streams `ringfence audit --json --scope SPEC`; SPEC says
 * what the caller's `audit` grants cover (dconf_audit_scope builds it):
 *
 *   {"uid": 1000, "own": ["claude"], "all": ["ci-*"...]}
 *
 * "own": agents whose runs the caller sees when the run is its own (started
 * through the daemon by this uid — control.start's actor_uid —, or by this
 * uid on the command line — run.start's started_by); "all": agents whose
 * runs it sees whoever started them (a grant with "all_uids": true); "*"
 * names every agent. A record tied to no run (control.block, secret.set,
 * ...) is shown only under "all": for its "agent", or under "*" when it
 * names none. Root's reads have no scope.
 *
 * The filter is a single pass in log order (a run's first record —
 * control.start or run.start — decides the run; a record of a run not seen
 * start is not shown), so it works on a --follow stream too. At most
 * SCOPE_RUNS_MAX runs are remembered: past that, records of newer runs
 * are not shown (fail closed).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SCOPE_AGENTS_MAX 256
#define SCOPE_RUNS_MAX   (1u << 18)
#define SCOPE_SPEC_MAX   (128 * 1024)

struct json_node;
struct audit_scope;

/* audit_scope_parse — SPEC (above) into *out (free with audit_scope_free).
 * 0 or -EINVAL (-ENOMEM). */
int audit_scope_parse(const char *spec, size_t len, struct audit_scope **out);

/* audit_scope_visible — may the caller see `record` (a parsed audit line)?
 * Must be given every record in log order (it learns the runs from them). */
bool audit_scope_visible(struct audit_scope *s, const struct json_node *record);

struct audit_scope *audit_scope_free(struct audit_scope *s);
