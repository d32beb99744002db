/*
 * lockdown.h — fork a helper process tied to its parent and locked down.
 *
 * One routine for every helper process ringfence forks that must die with
 * its parent and (most of them) give up privilege before it reads a byte
 * from anyone: the daemon's request parser, its workspace check and audit
 * streams, the run's supervisor children of the daemon, the egress process,
 * exec secret providers. Written once so the steps cannot drift apart
 * (issue 13: one copy ignored bounding-set errors and skipped capset, only
 * some re-checked the parent after PR_SET_PDEATHSIG).
 *
 * The child, in this order (any failure: the child reports {step, errno}
 * to the parent and _exits with RF_LOCKDOWN_EXIT — fail closed):
 *
 *   1. tie:      PR_SET_PDEATHSIG(SIGKILL), then getppid() against the
 *                parent recorded before the fork (the parent may have died
 *                before the prctl: then the child exits at once);
 *   2. fds:      fd i becomes how->fds[i] (-1: closed); every other fd is
 *                closed (the report pipe excepted, until step 7);
 *   3. prepare:  how->prepare(ctx), the caller's own setup while the child
 *                still has its privileges (open files, raise rlimits);
 *   4. ids:      (set_ids, running as root) no supplementary groups,
 *                gid and uid how->gid/how->uid; the kernel clears the
 *                parent-death signal on that change, so step 1 is redone;
 *   5. caps:     (drop_caps) the bounding set emptied while CAP_SETPCAP
 *                allows it (every error is fatal; a process without
 *                CAP_SETPCAP has no capability to lose and no_new_privs
 *                keeps it so), ambient set cleared, capset to empty,
 *                no_new_privs; non-dumpable unless keep_dumpable;
 *   6. seccomp:  how->seccomp installed, if any (no_new_privs first);
 *   7. report:   success written to the parent and the report fd closed
 *                (a seccomp filter must allow write(2) and close(2)).
 *
 * The parent waits for the report: rf_fork_tied returns only once the child
 * is locked down, or fails (the child reaped) if any step failed — unless
 * the caller asked for the report's fd (how->report) and collects it
 * later with rf_fork_tied_wait.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#define RF_LOCKDOWN_FDS_MAX 16
#define RF_LOCKDOWN_EXIT    125 /* the child's exit status when a step failed */

struct sock_fprog;

enum rf_lockdown_step {
        RF_LOCK_TIE = 1,
        RF_LOCK_FDS,
        RF_LOCK_PREPARE,
        RF_LOCK_IDS,
        RF_LOCK_BOUNDING,
        RF_LOCK_CAPSET,
        RF_LOCK_NNP,
        RF_LOCK_SECCOMP,
        _RF_LOCK_STEP_MAX,
};

/* What the child becomes. Borrowed pointers only; zero-initialise and set
 * what applies. */
struct rf_lockdown {
        const char *what;             /* for messages: "request parser", ... */
        bool arrange_fds;             /* step 2 applies (else every fd is inherited) */
        int fds[RF_LOCKDOWN_FDS_MAX]; /* the child's fd i (parent's fd numbers), -1 closed */
        size_t n_fds;                 /* fds 0..n_fds-1; all others closed */
        int (*prepare)(void *ctx);    /* step 3, or NULL; < 0 fails the child */
        void *ctx;
        bool set_ids; /* step 4 (only when running as root) */
        uid_t uid;
        gid_t gid;
        bool drop_caps; /* step 5 */
        bool keep_dumpable;
        const struct sock_fprog *seccomp; /* step 6, or NULL */
        int *pidfd;                       /* non-NULL: a pidfd of the child here (CLONE_PIDFD) */
        /* non-NULL: rf_fork_tied returns the child's pid as soon as it is
         * forked, without waiting for its report, whose read end (O_CLOEXEC)
         * goes here; rf_fork_tied_wait collects it. For a child whose
         * setup overlaps the parent's own work. */
        int *report;
};

/*
 * rf_fork_tied — fork a child locked down as `how` says (see above).
 * Parent: the child's pid once it reported success; or -errno (the child's
 * failed step's errno, -ECHILD if it died without a report) with the child
 * reaped, and, when `step` is not NULL, the step that failed. Child: 0,
 * locked down. Any process may call it; the child must not return into
 * code that assumes the parent's privileges.
 */
pid_t rf_fork_tied(const struct rf_lockdown *how, int *step);

/*
 * rf_fork_tied_wait — the report of a child forked with how->report set:
 * read from `report` (closed here), as rf_fork_tied would have. pid once
 * the child is locked down; or -errno with the child reaped, *pidfd (when
 * not NULL and open) closed, and *step (when not NULL) the step that
 * failed.
 */
pid_t rf_fork_tied_wait(int report, pid_t pid, int *pidfd, int *step);

/* rf_lockdown_step_name — "tie", "capset", ... for messages. */
const char *rf_lockdown_step_name(int step);

#ifdef RF_TEST_BUILD
/* Test builds only (compile-time): the step the next children fail, as if
 * the kernel refused it with EPERM (unit tests: tests/unit/test_lockdown.c). */
extern int rf_lockdown_test_fail_step;
#endif
