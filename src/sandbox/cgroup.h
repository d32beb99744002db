/*
 * cgroup.h — a run's cgroups: limits, kill, freeze, accounting.
 *
 * A run's cgroups are created only beneath the cgroups the supervisor is
 * already in, never elsewhere, and removed when the run ends. cgroup v2 is
 * primary (cgroup.kill, cgroup.freeze, memory.max, pids.max, cpu.max,
 * memory.oom.group); on hybrid hosts (v1 controllers plus a v2 tree
 * without controllers, e.g. /sys/fs/cgroup/unified) v2 serves kill and
 * freeze, v1 the limits. Without a writable cgroup (rootless, nothing
 * delegated) the mode is "none": limits fall back to rlimits and the
 * pid-namespace kill.
 *
 * The parsers of /proc/self/cgroup and /proc/self/mountinfo lines are pure
 * functions (unit-tested, fuzzed by tests/fuzz/fuzz_cgroup.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/error.h"

#define CGROUP_LINE_MAX 4096 /* longest /proc/self/{cgroup,mountinfo} line we accept */

struct rf_cgroup; /* opaque; owns its directory fds */

enum cgroup_mode {
        CGROUP_NONE,   /* no writable cgroup: rlimits + pid-ns kill only */
        CGROUP_V2,     /* unified hierarchy */
        CGROUP_HYBRID, /* v2 (kill/freeze) + v1 controllers (limits) */
        CGROUP_V1,     /* v1 only */
        _CGROUP_MODE_MAX,
        _CGROUP_MODE_INVALID = -22,
};

struct rf_limits {
        uint64_t memory;     /* bytes, 0 = none */
        uint64_t pids;       /* 0 = none */
        uint64_t cpus_milli; /* 0 = none */
        uint64_t cpu_shares; /* relative cpu weight as v1's cpu.shares (2-262144), 0 = none */
        unsigned required; /* CGROUP_REQ_*: limits the user asked for (refuse if not enforceable) */
};
enum {
        CGROUP_REQ_MEMORY = 1 << 0,
        CGROUP_REQ_PIDS = 1 << 1,
        CGROUP_REQ_CPU = 1 << 2,
        CGROUP_REQ_CPU_SHARES = 1 << 3,
};

/*
 * cgroup_cpu_weight — v2's cpu.weight (1-10000) for v1's cpu.shares
 * (2-262144, clamped), the conversion runc and crun use. Pure.
 */
uint64_t cgroup_cpu_weight(uint64_t shares);

struct rf_cgroup_stats {
        uint64_t memory_peak;    /* bytes, 0 if unknown */
        uint64_t oom_kills;      /* OOM kills inside the run */
        uint64_t pids_max_hits;  /* forks refused by the pids limit */
        uint64_t cpu_usec;       /* cpu time used */
        uint64_t memory_current; /* bytes in use now, 0 if unknown */
        uint64_t pids_current;   /* tasks now, 0 if unknown */
};

/* One line of /proc/self/cgroup: "ID:CONTROLLERS:PATH". */
struct cgroup_proc_line {
        unsigned id;
        const char *controllers; /* borrowed, not NUL-terminated */
        size_t controllers_len;
        const char *path; /* borrowed, not NUL-terminated; starts with '/' */
        size_t path_len;
};

/* The parts of one /proc/self/mountinfo line a cgroup mount needs. */
struct cgroup_mount_line {
        const char *root, *mountpoint, *fstype, *super; /* borrowed, not NUL-terminated */
        size_t root_len, mountpoint_len, fstype_len, super_len;
};

/*
 * cgroup_parse_proc_line — parse one /proc/self/cgroup line (without the
 * newline). Pure. Returns 0, or -EINVAL if malformed, -E2BIG if longer
 * than CGROUP_LINE_MAX.
 */
int cgroup_parse_proc_line(const char *line, size_t len, struct cgroup_proc_line *out);

/*
 * cgroup_parse_mountinfo_line — parse one /proc/self/mountinfo line
 * (without the newline): fields 4 (root) and 5 (mount point), and after
 * the " - " separator the fs type and super options. The root must be an
 * absolute path for cgroup and cgroup2 mounts; other fs types may show an
 * object there (nsfs: "net:[4026532311]"). Pure. Returns 0, -EINVAL if
 * malformed, -E2BIG if too long.
 */
int cgroup_parse_mountinfo_line(const char *line, size_t len, struct cgroup_mount_line *out);

/* mountinfo_parse_line — the same for a line of any length (an overlay's
 * layer list: its caller bounds what it reads). Pure. */
int mountinfo_parse_line(const char *line, size_t len, struct cgroup_mount_line *out);

#define CGROUP_PATH_MAX 1024 /* bytes of a cgroup path a caller names (OCI cgroupsPath) */

/*
 * cgroup_path_check — is `path` (len bytes) a cgroup path a run may be
 * placed at: absolute (from the hierarchy's root) or relative (beneath
 * ours), components of 1-255 bytes, none "." or "..", no empty one, no
 * trailing '/', no control byte, not "/" itself. Pure. 0, -EINVAL,
 * -E2BIG past CGROUP_PATH_MAX, -EOPNOTSUPP for systemd's
 * "slice:prefix:name" form (any ':').
 */
int cgroup_path_check(const char *path, size_t len);

/* True if the comma-separated `list` (len bytes) contains `name`. Pure. */
bool cgroup_list_has(const char *list, size_t len, const char *name);

/* Name of a mode ("v2", "hybrid", "v1", "none"). */
const char *cgroup_mode_name(enum cgroup_mode m);

/*
 * cgroup_create — create the cgroup(s) of run `run_id` beneath the
 * supervisor's own cgroups and apply `lim`. Returns 0 with *ret set, or
 * -errno with `err` set: -EOPNOTSUPP names a required limit this host
 * cannot enforce (the caller refuses the run: 125). With nothing writable
 * and nothing required, returns 0 with a CGROUP_NONE handle.
 */
int cgroup_create(const char *run_id, const struct rf_limits *lim, struct rf_cgroup **ret,
                  struct rf_error *err);

/* Where a run's cgroup goes instead of "ringfence-<run id>" beneath ours. */
struct cgroup_place {
        const char *path; /* absolute: from the hierarchy's root; relative: beneath ours */
        const char *root; /* a delegated root (absolute) an absolute path may lie
                           * beneath; NULL: only beneath our own cgroup */
};

/*
 * cgroup_create_at — cgroup_create at `place` (cgroup_path_check'ed): in
 * every hierarchy the run uses, the directories of its path are made
 * (mode 0755; an existing one is used) beneath our own cgroup or beneath
 * place->root, never anywhere else: a path outside both is -EPERM with
 * `err` naming the hierarchy. The leaf may exist only if no process is
 * in it (-EBUSY). cgroup_destroy removes the leaf, never its parents.
 */
int cgroup_create_at(const char *run_id, const struct cgroup_place *place,
                     const struct rf_limits *lim, struct rf_cgroup **ret, struct rf_error *err);

enum cgroup_mode cgroup_get_mode(const struct rf_cgroup *cg);

/* Which CGROUP_REQ_* limits are enforced by a cgroup. */
unsigned cgroup_enforced(const struct rf_cgroup *cg);

/* fd of the run's v2 cgroup, for clone3(CLONE_INTO_CGROUP), or -1. Being
 * born into it avoids a migration, whose global lock costs an RCU grace
 * period (~10 ms) when the system is idle. */
int cgroup_v2_fd(const struct rf_cgroup *cg);

/* Move `pid` (the run's init, before it starts the command) into every
 * cgroup of the run — except v2 if `born_in_v2`. 0 or -errno. */
int cgroup_attach(struct rf_cgroup *cg, pid_t pid, bool born_in_v2);

/* Would cgroup_attach(cg, pid, born_in_v2) move anything? false when the
 * run's init was born where it stays (no v1 hierarchy of its own). */
bool cgroup_attach_pending(const struct rf_cgroup *cg, bool born_in_v2);

/* A pollable fd (POLLIN) that fires when the kernel OOM-kills inside the
 * run, or -1. Read it with cgroup_oom_ack(). */
int cgroup_oom_fd(const struct rf_cgroup *cg);
void cgroup_oom_ack(struct rf_cgroup *cg);
/* The poll events to wait for on cgroup_oom_fd(): POLLPRI (v2 file) or POLLIN (v1 eventfd). */
short cgroup_oom_events(const struct rf_cgroup *cg);

/* A pollable fd (POLLPRI) that fires when the pids limit refuses a fork, or -1. */
int cgroup_pids_fd(const struct rf_cgroup *cg);
/* After a POLLPRI on cgroup_pids_fd() (or on a tick): read it, or it
 * stays ready for ever. Returns its "max" count: forks the limit refused
 * so far (0 if none or unreadable). */
uint64_t cgroup_pids_ack(struct rf_cgroup *cg);
/* Does cgroup_pids_fd() get POLLPRI when a fork is refused? v2's does; a
 * v1 pids.events is never notified here: its caller reads it on a tick. */
bool cgroup_pids_notifies(const struct rf_cgroup *cg);

/* Kill every process of the run (cgroup.kill, or freeze + SIGKILL). 0 or -errno. */
int cgroup_kill(struct rf_cgroup *cg);

/*
 * Freeze (`frozen` true) or thaw every process of the run, keeping its
 * memory: v2 cgroup.freeze (waiting until cgroup.events says frozen), else
 * the v1 freezer. -EOPNOTSUPP without either. 0 or -errno.
 */
int cgroup_freeze(struct rf_cgroup *cg, bool frozen);

/*
 * cgroup_update — new limits for a live run (ringfence-oci update): each
 * non-zero field of `lim` replaces that limit. Never above what the run
 * was created with (-EPERM: a policy's ceiling stays one), only for a
 * limit the run enforces already (-EOPNOTSUPP). 0 or -errno (the kernel's,
 * e.g. -EBUSY for a memory limit below what is in use).
 */
int cgroup_update(struct rf_cgroup *cg, const struct rf_limits *lim);

/* Read accounting. 0 or -errno. */
int cgroup_stats(const struct rf_cgroup *cg, struct rf_cgroup_stats *st);

/*
 * cgroup_reap_stale — the cgroups of run `run_id` that a supervisor which
 * died left beneath ours: whatever is still in them is killed, then they
 * are removed. Returns how many hierarchies had one, or -errno.
 */
int cgroup_reap_stale(const char *run_id);

/* Kill what is left, remove the cgroups, free. Accepts NULL; returns NULL. */
struct rf_cgroup *cgroup_destroy(struct rf_cgroup *cg);
