/*
 * seccomp.h — the run's system-call filter.
 *
 * An allowlist: syscalls not on it fail with ENOSYS (libc falls back, and
 * syscalls newer than libseccomp or our headers are covered); the dangerous
 * ones are named and refused with EPERM; any non-native ABI kills the run.
 * Built with libseccomp in the supervisor (it allocates), exported as a BPF
 * program into the plan, installed by the command child just before exec.
 */
#pragma once

#include "plan.h"
#include "shared/error.h"

/*
 * seccomp_plan — build the filter for `p` into p->seccomp (owned by the
 * plan, freed by plan_free). Supervisor, before clone. Returns 0, or
 * -errno with `err` set (the run is then refused: fail closed).
 */
int seccomp_plan(struct rf_plan *p, struct rf_error *err);

/*
 * seccomp_build — build the filter from the rule tables with libseccomp
 * into `out` (filter owned by the caller). Used at build time by
 * seccomp-gen; seccomp_plan() copies the program it generated. Returns 0
 * or -errno with `err` set.
 */
int seccomp_build(struct rf_seccomp_plan *out, struct rf_error *err);

/*
 * seccomp_apply — install p->seccomp in the calling process. Called by the
 * command child after no_new_privs, as the last step before exec; no
 * allocation (async-signal-safe). Returns 0 or -errno (-EINVAL if no
 * filter was built).
 */
int seccomp_apply(const struct rf_plan *p);
