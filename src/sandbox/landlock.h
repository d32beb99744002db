/*
 * landlock.h — Landlock as the run's second filesystem layer.
 *
 * Independently of the mount namespace, the command may only read what the
 * plan binds read-only and write where the plan has writable mounts. The
 * best ABI the kernel offers is used (Debian's headers stop at an old ABI;
 * the missing definitions live in landlock.c) and reported.
 */
#pragma once

#include "plan.h"
#include "shared/error.h"

/*
 * landlock_plan — detect the kernel's Landlock ABI and derive the rules
 * from p->ops into p->landlock. Supervisor, before clone. Returns 0, or
 * -errno with `err` set (no Landlock at all: -EOPNOTSUPP — the run is
 * refused).
 */
int landlock_plan(struct rf_plan *p, struct rf_error *err);

/*
 * landlock_apply — create the ruleset, add p->landlock.rules (paths opened
 * O_PATH inside the new root) and restrict the calling process. Command
 * child, after no_new_privs, before seccomp; no allocation. Returns 0 or
 * -errno.
 */
int landlock_apply(const struct rf_plan *p);
