/*
 * launch.h — create a run: namespaces, the new root, the run's init.
 *
 * sandbox_spawn() clones the run's init into new user, mount, pid, net,
 * ipc, uts and cgroup namespaces, writes its id maps from outside, and lets
 * it build the root described by the plan. From then on the supervisor
 * talks to init only through the message channel (msg.h):
 *
 *   S ──GO──▶ init: builds root, pivots, drops every capability, makes
 *               the command child (a vfork: every layer on, then it waits)
 *   S ──START──▶ the command child: executes the command; init reports
 *               (where init is still to be moved into v1 cgroups, or is
 *               held for an OCI start, init takes START and makes it then)
 *   S ◀─FAIL{step,errno} | PTY(fd) | EXEC_OK | EXIT(status)── init
 *   S ──SIGNAL(n)──▶ init: forwards n to the command's process group
 *
 * When init exits the kernel kills every process left in the run's pid
 * namespace, and the namespaces and mounts go with them.
 */
#pragma once

#include <sys/types.h>

#include "capture.h"
#include "cgroup.h"
#include "plan.h"
#include "shared/error.h"

struct rf_child {
        pid_t pid;    /* the run's init, as seen from the supervisor */
        int pidfd;    /* owned; a pidfd for init */
        int chan;     /* owned; supervisor end of the message channel */
        bool adopted; /* init is not our child (plan->clone_parent): no waitpid */
        /* what the supervisor's setup of the run's network namespace made
         * (a root run's own, or an engine's: plan->adopt_net), for it to
         * take as if init had sent it */
        struct capture_fds net;
};

/*
 * sandbox_spawn — start the run's init for `plan`. `stdio` are the fds the
 * command gets as 0, 1, 2 when the plan has no pty (ignored otherwise);
 * they are inherited by init, which closes its copies after forking the
 * command. Blocks nothing: setup progress arrives as messages on out->chan.
 * Must be called with every signal the supervisor handles blocked (init
 * inherits the mask). With `cg`, init is moved into the run's cgroups
 * before it is let go, so every process of the run is inside them. Returns 0, or -errno with `err`
 * naming the step (a namespace that could not be created, the id maps).
 */
int sandbox_spawn(const struct rf_plan *plan, const int stdio[3], struct rf_cgroup *cg,
                  struct rf_child *out, struct rf_error *err);

/*
 * sandbox_start — let the run's command start: until then init builds the
 * root and waits. The supervisor calls it once everything that must hold
 * before the command runs does (init in its cgroups — sandbox_spawn saw to
 * that —, the run registered, its host uid vetted). Returns 0, or -errno
 * with `err` set (init is gone).
 */
int sandbox_start(const struct rf_child *c, struct rf_error *err);

/*
 * sandbox_reap — wait for the run's init to be gone: waitpid for a child
 * of ours (its status in *status), its pidfd for an adopted one, whose
 * status only its parent can read (*status says SIGKILL; the real one
 * came as MSG_EXIT). Never fails; returns at once if init is gone.
 */
void sandbox_reap(const struct rf_child *c, int *status);

/* Probe which namespace the kernel refuses (after clone failed), for the
 * message. Returns an enum rf_step, or STEP_USERNS if none is singled out. */
int sandbox_diagnose_clone(int *err);

/*
 * sandbox_idmap_probe — can the directory `path` (canonical: no symlink on
 * the way) be a root-started run's workspace, idmapped as send_trees
 * idmaps it: cloned as a detached tree (open_tree, recursive, nosuid and
 * nodev) and idmapped (MOUNT_ATTR_IDMAP, recursive) through a user
 * namespace mapping its owner to host_uid/host_gid, as a run's maps the
 * workspace owner to the run's host ids. The clone is closed at once and
 * never attached: nothing of the host changes. Host root only (only it
 * may create idmapped mounts; ringfence doctor's check). 0, -EINVAL when
 * its filesystem (or one mounted beneath it) cannot be idmapped, or
 * another -errno.
 */
int sandbox_idmap_probe(const char *path, uid_t host_uid, gid_t host_gid);

/*
 * sandbox_ptmx_open — the pty master of the devpts instance at /dev/pts of
 * the calling process's root (a run's own: init's, or an OCI exec's after
 * it entered the run), opened O_RDWR | O_NOCTTY | O_CLOEXEC without
 * following any link: /dev/pts must be a devpts mount (fstatfs) and
 * "ptmx" in it the ptmx node (char 5:2) of that mount (RESOLVE_NO_XDEV).
 * A /dev/ptmx swapped for a symlink, or anything mounted over /dev/pts or
 * its ptmx (the runc CVE-2025-52565 class), is never opened: -ELOOP,
 * -EXDEV, -ENOTTY (not devpts's ptmx). No allocation, async-signal-safe.
 * Returns the fd or -errno.
 */
int sandbox_ptmx_open(void);

/*
 * sandbox_join — become a process of a running run (OCI exec): called in a
 * process that already entered the run's namespaces (setns through its
 * init's pidfd) and its cgroups, with `p` its join plan (joinplan.h). Takes
 * the run's user, drops every privilege as init does, then starts
 * p->argv as init's command child does (own session, `slave` — a pty of
 * the run's own devpts — or stdio[] as fds 0-2, cwd, rlimits, umask,
 * Landlock, ringfence's seccomp filter and the container's on top).
 * Reports on `report` (SOCK_SEQPACKET, close-on-exec): nothing when the
 * exec happened. Does not return.
 */
_noreturn_ void sandbox_join(const struct rf_plan *p, int slave, const int stdio[3], int report);

/*
 * sandbox_note_cmdline — remember where this process's argument and
 * environment strings lie (main's argv, before anything moves environ),
 * so that each run's init wipes them without reading /proc/self/stat
 * (the run must not read the supervisor's command line or environment in
 * /proc/1/). Optional: without it init finds them in /proc/self/stat.
 */
void sandbox_note_cmdline(char **argv);

/*
 * sandbox_join_report — what sandbox_join said on `report`: 0 when the
 * command was executed (the socket closed without a failure), else -errno
 * with *step the step (enum rf_step) that failed. Blocks until then.
 */
int sandbox_join_report(int report, int *step);
