/*
 * landlock.h — Landlock as the run's second filesystem layer.
 *
 * Independently of the mount namespace, the command may only read what the
 * plan mounts, execute only from read-only binds and writable places, and
 * write only where the plan has writable mounts; it cannot signal anything
 * outside its own Landlock domain (the run's init included) nor reach
 * abstract unix sockets created outside it. The best ABI the kernel offers
 * is used (Debian's headers stop at an old ABI; the missing definitions
 * live in landlock.c) and reported in plan->landlock.abi. The rules table
 * is in landlock.c.
 */
#pragma once

#include "plan.h"
#include "shared/error.h"

/*
 * run_secrets_dir — where init mounts a run's file secrets (a ramfs, read
 * by Landlock too): /run/secrets, or /run/ringfence/secrets in a run on an
 * image (--rootfs, every OCI container), whose /run/secrets is the image's
 * and its engine's (a kubelet's service account token, Podman's secrets)
 * and is never covered by ringfence's. Pure.
 */
static inline const char *run_secrets_dir(const struct rf_plan *p)
{
        return p->rootfs ? "/run/ringfence/secrets" : "/run/secrets";
}

/*
 * landlock_plan — detect the kernel's Landlock ABI and derive the rules
 * from p->ops into p->landlock (rule paths are borrowed from the ops).
 * Supervisor, before clone; call it after every op is in place. Returns
 * 0, or -errno with `err` set: no Landlock at all → -EOPNOTSUPP with
 * "Landlock is not available (...)" — the run is refused (exit 125).
 * Test builds: RINGFENCE_TEST_LANDLOCK_ABI=N caps the ABI (0: none);
 * RINGFENCE_TEST_LANDLOCK_NO_RULE=PATH derives no rule from the op at PATH.
 */
int landlock_plan(struct rf_plan *p, struct rf_error *err);

/*
 * landlock_apply — create the ruleset, add p->landlock.rules (paths opened
 * O_PATH inside the new root, symlinks not followed; an optional path that
 * is absent is skipped) and restrict the calling process. Command child,
 * after no_new_privs, before seccomp; no allocation. Returns 0 or -errno
 * (the run is refused: "cannot set up the Landlock filesystem rules").
 */
int landlock_apply(const struct rf_plan *p);

/* One place a confined process may still reach (landlock_confine). */
struct landlock_beneath {
        int fd;     /* the place, open (O_PATH will do; borrowed), or -1: skipped */
        bool dir;   /* a directory: what lies beneath it; else the file alone */
        bool write; /* a directory's regular files may be written, made, removed */
};

/*
 * landlock_confine — confine the calling process, a helper of ringfence's
 * on the host (the run CA's keeper), to rules[0, n): each file may be read,
 * each directory's tree read (and, with `write`, its regular files written,
 * made, removed and truncated); every other path of the host is refused
 * (EACCES) whatever its owner and mode, and with ABI >= 6 signals and
 * abstract unix sockets are scoped to the process's own domain. Every
 * filesystem right the kernel's ABI has is handled. Needs no_new_privs
 * (or CAP_SYS_ADMIN). fds already open are unaffected. 0, or -errno:
 * -EOPNOTSUPP without Landlock (callers fail closed, as a run does).
 */
int landlock_confine(const struct landlock_beneath *rules, size_t n);
