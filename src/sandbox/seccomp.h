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
 * allocation (async-signal-safe). Returns the filter's notification
 * listener (an O_CLOEXEC fd the caller hands to init, see
 * seccomp_umask_answer), or -errno (-EINVAL if no filter was built).
 */
int seccomp_apply(const struct rf_plan *p);

/*
 * seccomp_umask_answer — receive and answer one notification from the
 * listener seccomp_apply() returned: a umask() call that would clear S_IWGRP
 * or S_IWOTH. The umask is left as it is; the call returns it when it asked
 * for no bit the umask lacks (the `m = umask(0); umask(m)` read idiom,
 * umask 0, umask 002), else fails with EPERM. Called by the run's init
 * when the listener is readable; no allocation. Returns 0 (also when the
 * caller died meanwhile) or -errno when the listener is unusable.
 */
int seccomp_umask_answer(int listener);
