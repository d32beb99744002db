/*
 * plan.h — everything a run's init needs, computed before clone.
 *
 * The supervisor turns (policy, caller, environment) into a plan: the list
 * of filesystem operations that build the run's root, the environment and
 * argv of the command, ids, sizes. All allocation happens here, in the
 * parent. Between clone and exec the child only reads the plan and makes
 * syscalls (no malloc, no stdio, no locks) — see launch.c.
 *
 * The path rules (which workspaces are acceptable) are pure functions so
 * they are unit-tested.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "policy/policy.h"
#include "shared/error.h"
#include "trustfiles.h"

#define PLAN_OPS_MAX 4096
#define PLAN_ENV_MAX (POLICY_ENV_MAX + 32)
enum { PLAN_JOIN_NET, PLAN_JOIN_IPC, PLAN_JOIN_UTS, PLAN_JOIN_NS };
/* The run's egress listeners, inside its network namespace. */
#define RF_EGRESS_HTTP_PORT  3128
#define RF_EGRESS_SOCKS_PORT 1080
#define RF_EGRESS_HTTP_ADDR  "127.0.0.1:3128"
#define RF_EGRESS_SOCKS_ADDR "127.0.0.1:1080"
/* transparent capture (issue 14): the listeners the run's ruleset
 * redirects TCP to, 127.0.0.1:3129 and [::1]:3129 */
#define RF_EGRESS_CAPTURE_PORT 3129
#define PLAN_ARGV_MAX          4096
#define PLAN_ARG_BYTES         (1024 * 1024) /* total argv + envp bytes */
#define RF_RUN_ID_LEN          36
#define RF_HOSTNAME            "ringfence"
#define PLAN_DEFAULT_FSIZE     (16ULL << 30) /* largest file a run may write (RLIMIT_FSIZE) */
#define PLAN_DEFAULT_PIDS      4096 /* processes per run unless the policy says otherwise */

enum plan_op_kind {
        OP_DIR,     /* mkdir -p dst (mode) */
        OP_SYMLINK, /* symlink target `src` at dst */
        OP_FILE,    /* create dst with `data` (mode) */
        OP_BIND,    /* bind host path src at dst; flags: OPF_* */
        OP_TMPFS,   /* tmpfs at dst, `size` bytes, mode */
        OP_PROC,    /* fresh procfs at dst */
        OP_DEVPTS,  /* new devpts instance at dst */
        OP_RO_SELF, /* re-bind an already mounted dst read-only onto itself */
        _OP_MAX,
        _OP_INVALID = -22,
};

enum {
        OPF_RDONLY = 1 << 0,   /* bind read-only */
        OPF_DEVICE = 1 << 1,   /* a device node: keep dev, add noexec */
        OPF_OPTIONAL = 1 << 2, /* source may be missing (skip quietly) */
        OPF_VERIFY = 1 << 3,   /* source must be the inode recorded (dev, ino) */
        OPF_IDMAP = 1 << 4,    /* root runs: idmap owner <-> run uid (workspace) */
        /* OP_BIND: src is a regular file of the new root (put there by an
         * earlier OP_FILE), not a host path: never cloned from the host; at
         * this op it is cloned from the root tmpfs and mounted over the
         * existing regular file dst (which is opened, never created or
         * written: it may lie in a read-only bind). With OPF_OPTIONAL, a
         * missing dst is skipped. */
        OPF_IN_ROOT = 1 << 5,
        /* OP_FILE: the content is one of the run's TLS trust files
         * (data_len: TRUST_*), which init receives from the supervisor when
         * it reaches the first such op (MSG_TRUST: a sealed memfd, see
         * trustfiles.h); an absent optional file (the Java store) is not
         * created. */
        OPF_LATE = 1 << 6,
        /* OP_BIND (root runs, read-only): the tree's owner (owner_uid,
         * owner_gid) appears as the run's own user through an idmapped
         * mount of its own: a --ro path others may not read (a user's 0600
         * ~/.npmrc) is readable in the run, and nothing else changes. */
        OPF_IDMAP_OWNER = 1 << 7,
        /* OP_BIND at "/", the first op (--rootfs): the host directory is the
         * read-only lower layer of the run's root, an overlay whose upper
         * layer is the run's own tmpfs (launch.c, overlay_root); the ops
         * after it build in that root as in the tmpfs one */
        OPF_ROOT = 1 << 8,
        /* OP_BIND of /dev/null (an OCI maskedPath): over a file at dst, that
         * file reads as empty; over a directory, an empty read-only tmpfs
         * instead; nothing there: nothing to do. No Landlock rule. */
        OPF_MASK = 1 << 9,
        /* OP_FILE (--rootfs): an image's own file or link of that name is
         * unlinked first, in the run's upper layer only (launch.c: never
         * on another mount) */
        OPF_REPLACE = 1 << 10,
        /* OP_RO_SELF: programs stay executable there (no noexec): the
         * caller's agent files a profile carries read-only (their skills'
         * and extensions' scripts) */
        OPF_EXEC = 1 << 11,
        /* OP_BIND of an OCI bundle's mount (an engine's volume), with
         * OPF_IDMAP: a source that cannot be idmapped fails the run with a
         * line naming the mount (fail closed, never bound un-idmapped) */
        OPF_VOLUME = 1 << 12,
};

/*
 * One step of building the new root. `dst` is absolute within the new root.
 * Strings are owned by the plan. `step` is what a failure is reported as.
 */
/* The largest trust file a plan takes: the host bundle is at most 8 MiB
 * (RF_TLS_BUNDLE_MAX) before the run CA is added; the PKCS12 of the same
 * roots is smaller (DER). Each file costs the run's root tmpfs its bound. */
#define PLAN_TLS_FILE_MAX TRUSTFILES_FILE_MAX

/* A run's PATH unless its policy sets one. */
#define RF_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

struct plan_op {
        enum plan_op_kind kind;
        int step;        /* enum rf_step */
        unsigned flags;  /* OPF_* */
        const char *src; /* host path (OP_BIND) or link target (OP_SYMLINK) */
        const char *dst;
        const char *data; /* OP_FILE contents */
        size_t data_len;  /* OPF_LATE: which trust file (TRUST_*), no data */
        uint64_t size;    /* OP_TMPFS bytes */
        mode_t mode;
        dev_t dev; /* OPF_VERIFY: expected st_dev/st_ino of src */
        ino_t ino;
        uid_t owner_uid; /* OPF_IDMAP_OWNER: the tree's owner on the host */
        gid_t owner_gid;
};

/* A placeholder the supervisor created for a protected path (plan_cleanup). */
struct plan_created {
        const char *path; /* owned by the plan */
        bool dir;
        dev_t dev;
        ino_t ino;
        off_t size; /* as created (a placeholder may carry content) */
};
#define PLAN_CREATED_MAX 256

/* seccomp.c: the run's filter, built in the supervisor before clone. */
struct rf_seccomp_plan {
        void *filter; /* owned: struct sock_filter[len]; NULL until built */
        unsigned short len;
};

/*
 * landlock.c: rules computed from the plan's mounts (landlock_plan, in the
 * supervisor), applied in the command child (landlock_apply). `path` points
 * into the plan (an op's dst, or a literal): borrowed, never freed here.
 */
struct rf_landlock_rule {
        const char *path; /* borrowed from the plan; absolute within the new root */
        uint64_t access;  /* LANDLOCK_ACCESS_FS_* allowed beneath path */
        bool optional;    /* an OPF_OPTIONAL mount: skip if the path is absent */
};
struct rf_landlock_plan {
        int abi;             /* ABI applied: min(kernel's, newest known here); 0: none */
        int abi_kernel;      /* best ABI the kernel offers */
        int errata;          /* kernel's fixed-issue bitmask; 0 if it cannot say */
        uint64_t handled_fs; /* access rights the ruleset handles */
        uint64_t scoped;     /* LANDLOCK_SCOPE_* (ABI >= 6) */
        struct rf_landlock_rule rules[PLAN_OPS_MAX + 1]; /* + the root itself */
        size_t n_rules;
};

#define PLAN_KEPT_MAX 8 /* kept state directories of one run (struct plan_kept) */

/* A sysctl of the run's own namespaces (net.*, kernel.shm*, kernel.msg*,
 * kernel.sem, fs.mqueue.*: oci/request.c checks), written by init before
 * it builds the root. */
struct plan_sysctl {
        const char *name; /* dotted */
        const char *value;
};
#define PLAN_SYSCTL_MAX 64

struct rf_plan {
        char run_id[RF_RUN_ID_LEN + 1];
        /* Ids. Rootless: the caller's ids, mapped to themselves. As root:
         * the workspace owner's ids inside, mapped to a host uid/gid of
         * this run's own (hostuid.c) — never host 0. */
        uid_t host_uid, uid; /* host side of the map; uid inside the run */
        gid_t host_gid, gid;
        bool map_as_root; /* root caller: run uid allocated, trees cloned by the supervisor */
        int uid_lock_fd;  /* owned: holds the run uid allocation (-1 rootless) */
        /* owned: each kept state directory's lock (flock on PROFILE's
         * directory), held for the run's life: one run at a time keeps a
         * profile's state; -1 none */
        int kept_lock_fds[PLAN_KEPT_MAX];
        size_t n_kept_locks;
        dev_t ws_dev; /* the workspace's inode, as stat'ed for its owner */
        ino_t ws_ino;
        uid_t ws_owner_uid; /* the workspace's owner on the host */
        gid_t ws_owner_gid;
        struct plan_created created[PLAN_CREATED_MAX]; /* placeholders, oldest first */
        size_t n_created;
        char *user;             /* name of the run user inside */
        char *home;             /* $HOME inside (a private tmpfs, or in the workspace) */
        bool home_in_workspace; /* the workspace contains $HOME: no home tmpfs */
        char *workspace;        /* canonical host path, mounted at the same path */
        char *rootfs;           /* --rootfs: the image's root (canonical), or NULL */
        char *cwd;              /* working directory inside */
        char *hostname;         /* the run's host name (RF_HOSTNAME unless given) */

        struct plan_op ops[PLAN_OPS_MAX];
        size_t n_ops;
        uint64_t root_extra; /* bytes the root tmpfs needs beyond its base
                              * (the TLS trust files); 0 for other runs */
        bool trust_late;     /* init waits for MSG_TRUST (OPF_LATE ops) */
        /* network.publish: the run's loopback ports init may connect to
         * for the supervisor (MSG_CONNECT; supervisor/publish.h) */
        uint16_t publish_ports[POLICY_PUBLISH_MAX];
        size_t n_publish;
        size_t trust_bound; /* each trust file's size bound */

        char **argv;    /* NULL-terminated; argv[0] is the command */
        char **envp;    /* NULL-terminated; the run's whole environment */
        char *path_env; /* PATH used for command lookup */
        /* the file executed instead of argv[0] looked up (an OCI
         * startContainer hook's path, its args[0] kept as given), or NULL;
         * not owned */
        const char *exec_file;

        uint64_t nofile;         /* RLIMIT_NOFILE for the command; 0 = keep */
        uint64_t fsize;          /* RLIMIT_FSIZE for the command; 0 = keep */
        uint64_t nproc_fallback; /* RLIMIT_NPROC when no cgroup enforces pids; 0 = none */
        struct rf_limits limits; /* memory/pids/cpu for the run's cgroups */
        bool use_pty;            /* stdin is a terminal: give the run its own pty */
        unsigned short ws_rows, ws_cols;
        /* the OCI process model (docs/OCI.md): init is cloned as a sibling
         * of the supervisor (CLONE_PARENT), a child of the engine's shim,
         * which reaps it; it exits with the command's status (128+N for a
         * signal) and dies with the run channel instead of a parent-death
         * signal */
        bool clone_parent;
        /* OCI --preserve-fds N: the supervisor's fds 3..3+N-1 (the
         * engine's, inherited as they are; nothing of ours is among them)
         * are the command's fds 3..3+N-1, kept through init and exec */
        unsigned preserve_fds;
        /* namespaces init is born in instead of new ones (an OCI pod: the
         * sandbox container's network, ipc and uts namespaces), owned fds,
         * -1: a new one. A joined network namespace is configured by the run
         * that made it (its loopback, DNS stub, egress listeners, capture):
         * this run sets up none of it and starts no egress process of its
         * own; a joined uts namespace keeps its host name. */
        int join_ns[PLAN_JOIN_NS];
        /* the joined network namespace is an engine's (ringfence-oci: a
         * Kubernetes pod's, Podman's bridge) with no ringfence run in it:
         * the supervisor captures it (capture_adopt) and this run's egress
         * is the namespace's, as if the run had made it */
        bool adopt_net;
        /* an OCI container's process.oomScoreAdj, written for init by the
         * supervisor after the clone (inherited by the command) */
        bool has_oom_score_adj;
        int oom_score_adj;
        /* sysctls init writes in the run's namespaces (plan_sysctl), as
         * "/proc/sys/a/b" paths and values, owned by the plan */
        const char *sysctl_path[PLAN_SYSCTL_MAX];
        const char *sysctl_value[PLAN_SYSCTL_MAX];
        size_t n_sysctl;

        struct rf_seccomp_plan seccomp;
        /* an OCI container's own profile (oci/seccomp.c), installed after
         * ringfence's filter: both apply, the stricter verdict wins; owned;
         * filter NULL: none */
        struct rf_seccomp_plan seccomp_extra;
        struct rf_landlock_plan landlock;

        /* secrets (src/secrets/grant.h): what init sets up at STEP_SECRETS */
        bool secrets_files;  /* a /run/secrets tmpfs, filled from the blob */
        bool secrets_broker; /* /run/ringfence/broker.sock */
        int secrets_fd;      /* owned: the blob (memfd) for init, or -1; closed once sent */

        /* transparent capture (capture.h): on iff network.capture is
         * transparent and the policy has an allow rule; then init installs
         * the ruleset at STEP_CAPTURE. capture_rules: the per-run redirect
         * rules (one netlink message per allowed IP/CIDR), owned, NULL if
         * none. */
        bool capture;
        unsigned char *capture_rules;
        size_t capture_rules_len;
        unsigned capture_n_rules;

        int test_fail_step;     /* test builds: inject a failure at this step (-1 none) */
        uint64_t test_skip;     /* test builds: 1ULL << STEP_* of layers left out */
        bool test_switch_error; /* test builds: an unknown name was given */

        /* owned storage behind the pointers above */
        char **strings;
        size_t n_strings, cap_strings;
};

/* A file for the run's $HOME (a profile's configuration, cli/profile_home.h):
 * rel beneath $HOME, its bytes; made by init in the run's home tmpfs, the
 * run user's own (0600, directories 0700).
 *
 * With `tree` set, data holds directory trees the run gets read-only (the
 * caller's agent commands, skills, extensions a profile carries): a
 * sequence of entries, each a struct plan_home_entry, its name (name_len
 * bytes, beneath $HOME, no NUL) and its bytes (data_len). A
 * PLAN_HOME_RODIR entry is a directory that gets a tmpfs of its own (what
 * a kept state directory holds there is hidden, never written), filled
 * with the PLAN_HOME_FILE / PLAN_HOME_EXEC entries beneath it that follow
 * (0600 / 0700, directories 0700), then made read-only (nosuid, nodev;
 * programs stay executable) once every home file is written; rel is
 * unused. At most PLAN_HOME_ENTRIES_MAX entries of PLAN_HOME_TREE_MAX
 * bytes in all, per run. */
struct plan_home_file {
        char rel[PATH_MAX];
        char *data;
        size_t len;
        bool tree;
};
#define PLAN_HOME_FILES_MAX 16

enum {
        PLAN_HOME_RODIR = 1,
        PLAN_HOME_FILE = 2,
        PLAN_HOME_EXEC = 3,
};
struct plan_home_entry {
        uint32_t kind;     /* PLAN_HOME_* */
        uint32_t name_len; /* 1 .. PATH_MAX - 1 */
        uint64_t data_len; /* 0 for a directory */
};
#define PLAN_HOME_ENTRIES_MAX 1024
#define PLAN_HOME_TREE_MAX    (32u << 20) /* bytes of the entries' data, per run */
#define PLAN_HOME_RODIR_SIZE  (64u << 20) /* each read-only directory's tmpfs */

/* An agent's state directory kept across runs (`run --keep-state`):
 * STATE_DIR/kept/UID/PROFILE/REL, made here (0700, the run's identity's:
 * UID is whose files the run acts as) and bound read-write at $HOME/REL,
 * before the profiles' home files are written (so they land in it, anew
 * each run). */
struct plan_kept {
        const char *profile; /* a profile name (a-z 0-9 - _) */
        const char *rel;     /* a directory name beneath $HOME (".codex") */
};

/* Caller facts the plan is computed from (gathered by the CLI). */
/* A path checked as the caller (cli/caller.h): the inode it named then. */
struct plan_pin {
        const char *path;
        dev_t dev;
        ino_t ino;
};

/* A mount an OCI bundle asks for (oci/request.c, oci_mounts): a host path
 * bound at `dst`, or a tmpfs there. Binds are nosuid, nodev; in a root run
 * with a host uid of ringfence's (no id mapping of the engine's) they are
 * idmapped through the run's own user namespace, so the container's uid
 * and gid on disk are its own inside, as under runc (plan.c, oci_mount). */
struct plan_mount {
        const char *dst; /* absolute inside, no "." or ".." component */
        const char *src; /* a bind's host path; NULL: a tmpfs */
        bool rdonly;
        uint64_t size; /* tmpfs bytes */
        mode_t mode;   /* tmpfs mode */
};
#define PLAN_MOUNTS_MAX 256

/* A device an OCI bundle asks for (linux.devices): the host's node `host`
 * bound at `path` (beneath /dev) — a run makes no node of its own */
struct plan_device {
        const char *path; /* absolute inside, beneath /dev, no "." or ".." component */
        const char *host; /* the host's node of the same type and numbers */
        mode_t type;      /* S_IFCHR or S_IFBLK */
};
#define PLAN_DEVICES_MAX         256
#define PLAN_MOUNT_TMPFS_DEFAULT (64ULL << 20) /* an OCI tmpfs without size= */

struct plan_input {
        const struct rf_policy *policy; /* effective policy (defaults applied) */
        char *const *argv;              /* command and arguments */
        const char *cwd;                /* caller's current directory (canonical) */
        /* with a rootfs: the command's directory inside (absolute; an OCI
         * process.cwd), else NULL: cwd when beneath the workspace */
        const char *cwd_inside;
        const char *hostname; /* NULL: RF_HOSTNAME; else a valid host name */
        /* paths inside (absolute, clean) hidden (OPF_MASK) and made
         * read-only (OP_RO_SELF) once /proc is there: an OCI config's
         * maskedPaths and readonlyPaths */
        const char *const *masked;
        size_t n_masked;
        const char *const *readonly;
        size_t n_readonly;
        const struct plan_mount *mounts; /* an OCI bundle's own (with a rootfs) */
        size_t n_mounts;
        const struct plan_device *devices; /* an OCI bundle's linux.devices */
        size_t n_devices;
        const struct plan_sysctl *sysctl;
        size_t n_sysctl;
        const struct rf_seccomp_plan *seccomp_extra; /* a container's profile (copied), or NULL */
        const char *state_dir;                       /* canonical state dir */
        const char *host_home;                       /* caller's home (canonical) or NULL */
        const char *term;                            /* $TERM to pass through or NULL */
        const char *lang;                            /* $LANG to pass through or NULL */
        bool use_pty;
        const char *run_id;         /* the run's id if already chosen, else NULL */
        bool secrets_files;         /* file deliveries: /run/secrets */
        bool secrets_broker;        /* broker deliveries: the socket and ringfence-secret */
        const char *identity_token; /* the run's identity token, or NULL: delivered
                                     * at /run/ringfence/identity (0444, the run's
                                     * own root; no other run can see it) */
        /* credential injection over TLS (src/tls, docs/TLS.md): the run's
         * trust. The files are made while init builds the root (by the
         * supervisor: tls/trustmake.h) and reach init as the trust cache's
         * read-only files and a sealed memfd of the run's own bytes
         * (MSG_TRUST, sandbox/trustfiles.h), so the plan holds their names
         * and bounds only (OPF_LATE). tls_trust: the run has terminated
         * hosts; its bundle (host roots + run CA, PEM) becomes
         * /run/ringfence/ca-certificates.crt and is mounted over the host's
         * /etc/ssl/certs/ca-certificates.crt when that is a regular file;
         * the run CA alone /run/ringfence/run-ca.crt; with tls_java, the
         * PKCS12 store (host roots + run CA, password "changeit")
         * /run/ringfence/cacerts.p12, mounted over the host's
         * /etc/ssl/certs/java/cacerts when that is a regular file.
         * tls_bound: each file's size bound (1 .. PLAN_TLS_FILE_MAX): init
         * refuses a larger one, and the root tmpfs is sized by it. The
         * environment gets SSL_CERT_FILE, REQUESTS_CA_BUNDLE,
         * CURL_CA_BUNDLE, GIT_SSL_CAINFO, PIP_CERT, AWS_CA_BUNDLE (the
         * bundle) and NODE_EXTRA_CA_CERTS (the run CA), over any value the
         * policy gave them. */
        bool tls_trust;
        bool tls_java;
        size_t tls_bound;
        const struct plan_home_file *home_files; /* for the run's $HOME; none when */
        size_t n_home_files;                     /* the workspace holds the home */
        bool expect_ws;                          /* the workspace must be this inode (the daemon */
        dev_t expect_ws_dev;                     /* checked it as the caller's own) */
        ino_t expect_ws_ino;
        /* pinned: every read-only and read-write path must be one of pins[]
         * (the same path) and still that inode — checked as the daemon's
         * caller (cli/caller.h); one that is not, or names another inode by
         * now, refuses the run */
        const struct plan_kept *kept; /* none when the workspace holds the home */
        size_t n_kept;
        /* files beneath $HOME the profiles make (rendered this run or not):
         * removed from a kept directory before it is bound, so what a run
         * wrote there never stands in for them */
        const char *const *home_rels;
        size_t n_home_rels;
        bool pinned;
        uid_t pin_uid; /* the caller: only its own paths are idmapped */
        /* an OCI bundle's own id mapping (linux.uidMappings): the run's user
         * maps to these host ids instead of one allocated (the host's root
         * only) */
        bool host_ids;
        uid_t host_uid;
        gid_t host_gid;
        const struct plan_pin *pins;
        size_t n_pins;
};

/*
 * plan_build — compute the plan for one run. Opens nothing inside the
 * future run; it stats host paths (workspace, binds) to record the inodes
 * the child must find. Returns 0 with *ret set (caller frees with
 * plan_free), or -errno with `err` describing the refusal (a workspace
 * rule, a missing path, a limit).
 */
int plan_build(const struct plan_input *in, struct rf_plan **ret, struct rf_error *err);

/*
 * plan_cleanup — remove the protected-path placeholders plan_build()
 * created, newest first, each only if it is still the very inode created
 * (and, for a directory, empty; for a file, empty). Call after the run has
 * ended. Idempotent.
 */
void plan_cleanup(struct rf_plan *p);

/* Free a plan. Accepts NULL; returns NULL. */
struct rf_plan *plan_free(struct rf_plan *p);
/* plan_empty — a zeroed plan whose fds are -1 (for joinplan_parse); NULL
 * when out of memory. plan_own — `s` (malloc'd) owned by the plan from
 * now on, freed with it; returns s (NULL: s was NULL or is freed). */
struct rf_plan *plan_empty(void);
char *plan_own(struct rf_plan *p, char *s);

static inline void plan_freep(struct rf_plan **p)
{
        *p = plan_free(*p);
}

/*
 * plan_check_workspace — the pure workspace rule. `ws`, `home` and
 * `state_dir` are canonical absolute paths (home may be NULL). `explicit`
 * says the user named the workspace. Returns 0 if acceptable, else -EPERM
 * (or -EINVAL for a pseudo filesystem) with a reason in `err`:
 *  always refused: inside /proc, /sys or /dev; equal to, inside or
 *   containing the state dir;
 *  refused as a default: "/", the home directory or one of its ancestors,
 *   a system directory or an ancestor of one, anything inside /etc, /usr,
 *   /boot, /run.
 */
int plan_check_workspace(const char *ws, bool explicit_ws, const char *home, const char *state_dir,
                         struct rf_error *err);

/*
 * path_absolute — make `path` absolute against `cwd` and normalise it
 * lexically (collapse "//", drop ".", resolve ".." textually, no trailing
 * slash). Touches no filesystem. Returns 0, or -ENAMETOOLONG if the result
 * does not fit `len`, -EINVAL for an empty path or a relative cwd.
 */
int path_absolute(const char *cwd, const char *path, char *out, size_t len);

/* True if canonical path `a` is `b` or lies beneath it (component-wise). */
bool path_is_beneath(const char *a, const char *b);

/* Write a new time-sortable run id (UUIDv7 text, 36 chars + NUL) into buf. */
int rf_run_id_new(char buf[static RF_RUN_ID_LEN + 1]);
