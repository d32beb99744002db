/*
 * caller.h — whom a run is for, and reading the host with that caller's
 * rights (issue 16: "the caller's own files").
 *
 * A run started by a user (or by root for itself) reads the host as that
 * process: its $HOME, its PATH, its files. A run the daemon starts for
 * another uid (`run --caller-uid UID`, root only) must never resolve a
 * path with root's rights on that caller's behalf: what the caller names
 * (`ro`, `rw` of the API) and what its profiles find (install trees on its
 * PATH, its agent configuration, its ~/.npmrc, its git identity) is
 * opened with the caller's file-system identity (fsuid, fsgid, its
 * groups; no capability) while the process's real and effective uid stay
 * root — so the caller can neither signal nor trace it —, through no
 * symbolic link, and each bind is pinned to the inode so checked: the
 * plan refuses a path that names another inode by the time it is mounted
 * (plan.h, plan_input.pins).
 *
 * `sudo ringfence run` is the same case from the CLI: root started for the
 * user sudo names (SUDO_UID), whose paths are opened as it (caller_sudo).
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "sandbox/plan.h"
#include "shared/error.h"

#define CALLER_GROUPS_MAX 64

struct rf_caller {
        bool other; /* a uid other than this process's (the daemon's or sudo's caller) */
        bool sudo;  /* other, named by sudo's SUDO_UID (caller_sudo) */
        uid_t uid;  /* whose the caller's own files are */
        gid_t gid;
        gid_t groups[CALLER_GROUPS_MAX]; /* other: its groups (passwd and group) */
        int n_groups;
        char home[PATH_MAX]; /* its home: passwd's for another uid, else $HOME; "" none */
};

/*
 * caller_self — this process as the caller: its effective uid and gid,
 * $HOME (or passwd's). Never fails.
 */
void caller_self(struct rf_caller *c);

/*
 * caller_other — uid as the caller, for a run root starts on its behalf:
 * its passwd entry's home and group, its groups. 0, or -errno with err set
 * (-ENOENT: no passwd entry: nothing can be read as it). uid 0 is root
 * itself: caller_self.
 */
int caller_other(struct rf_caller *c, uid_t uid, struct rf_error *err);

/*
 * caller_sudo — the caller of a root process started through sudo: the
 * invoking user SUDO_UID names, as caller_other (c->sudo set). Unchanged
 * (c as the caller left it, 0) unless the real and effective uid are both
 * root and SUDO_UID names a uid other than 0. Trusting SUDO_UID, which any
 * process may put in an environment, is safe only because it can only
 * reduce root's rights: it is read only by a process that is root already
 * (never a set-uid one: the real uid must be root too), and what it changes
 * is that the caller's paths are opened with that uid's rights instead of
 * root's; it lends nothing of root to that uid (which may then only reach
 * the run's published ports, as root could let it do anyway). SUDO_GID and
 * SUDO_USER are not needed: the gid and groups are the passwd and group
 * entries' (as for the daemon's caller). 0, or -errno with err set:
 * -EINVAL a SUDO_UID that is not a uid, -ENOENT one with no passwd entry
 * (nothing is opened as root in its place).
 */
int caller_sudo(struct rf_caller *c, struct rf_error *err);

/*
 * caller_enter — from here the process opens files as c (other only:
 * setgroups, setfsgid, setfsuid; the kernel drops the file capabilities
 * while fsuid is not 0). 0, or -EPERM when the identity did not take
 * (nothing is read then). caller_leave undoes it; both no-ops for a
 * caller that is this process.
 */
int caller_enter(const struct rf_caller *c);
void caller_leave(const struct rf_caller *c);

/*
 * caller_pin — open `path` as c (caller_enter), through no symbolic link,
 * and record its inode in *pin (pin->path points at `path`): a directory
 * or regular file c may read; for `write`, one c owns. 0, or -errno with
 * err naming the path and why it is refused.
 */
int caller_pin(const struct rf_caller *c, const char *path, bool write, struct plan_pin *pin,
               struct rf_error *err);
