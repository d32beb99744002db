/*
 * landlock.c — Landlock as the run's second filesystem layer.
 *
 * The mount namespace decides what exists inside the run; Landlock decides,
 * independently and per access right, what the command may do with it. If
 * a mount is ever wrong (a writable place too many, a read-only flag
 * missing), Landlock still refuses — with EACCES — whatever the plan did
 * not mean to allow.
 *
 * Design:
 *  - landlock_plan() runs in the supervisor before clone. It asks the kernel
 *    for its ABI, handles every filesystem right that ABI has, scopes
 *    abstract unix sockets and signals (ABI >= 6), and derives one rule per
 *    mount of the plan, by what the mount is for:
 *
 *      the new root "/" (read-only tmpfs)     read_dir
 *      generated files (OP_FILE: /etc/...)    read_file
 *      read-only binds in /etc                read_file, read_dir
 *      other read-only binds (/usr, --ro)     + execute
 *      the /dev tmpfs                         read_file, read_dir
 *      device nodes (/dev/null, ...)          read_file, write_file, truncate
 *      /dev/tty                               + ioctl_dev
 *      /dev/pts (devpts)                      + read_dir, ioctl_dev
 *      /proc                                  read_file, read_dir, write_file, truncate
 *      writable places (tmpfs, --rw, the      every handled right, except
 *        workspace)                             make_fifo/make_sock in host
 *                                               binds (below)
 *
 *    Symlinks, plain directories and read-only re-binds get no rule: a path
 *    walk needs no Landlock right, and a rule on a mount covers what lies
 *    beneath it. Rules are path-beneath rules resolved in the *new* root, so
 *    rule paths are the ops' dst, borrowed from the plan. The last op at a
 *    path is the mount that is visible there, so its rule replaces any
 *    earlier one for the same path.
 *  - landlock_apply() runs in the command child after pivot_root,
 *    no_new_privs and chdir, before seccomp (whose allowlist then no longer
 *    has to include the Landlock syscalls): it opens each rule path O_PATH
 *    without following symlinks, adds the rule (directory-only rights
 *    dropped for a file), and restricts itself. No allocation.
 *
 * Threat notes:
 *  - Landlock rights only add up along a path: a read-only bind nested in a
 *    writable place (a protected path in the workspace) is protected by its
 *    mount flag alone. Landlock is the second layer for everything the
 *    plan did not mount writable, not a way to carve holes.
 *  - Landlock has no right for chmod/chown/utimes, stat or readlink: those
 *    are left to the mounts (read-only) and to file ownership. Listing any
 *    directory is allowed (read_dir on "/"); reading, writing and executing
 *    are not, outside the places above.
 *  - No FIFO and no socket is made where the host can see it: a writable
 *    bind (the workspace, --rw) gets no make_fifo/make_sock, so mkfifo,
 *    mknod(S_IFIFO/S_IFSOCK) and bind() of a pathname socket there fail
 *    with EACCES. A host tool that opens a FIFO blocks forever; a host
 *    tool that connects to a socket (git's fsmonitor IPC in .git) would
 *    talk to the run. Rights add up along a path, so a private tmpfs that
 *    holds such a bind (the workspace under /tmp or the run's HOME) loses
 *    the two rights as well; the other tmpfs mounts keep them.
 *  - Scopes: the command cannot signal the run's init or anything outside
 *    its own Landlock domain (EPERM), and cannot connect to abstract unix
 *    sockets created outside it (EPERM) — in case the network namespace
 *    ever shares an abstract namespace with something else.
 *  - Network rights (ABI >= 4) are not handled yet: the run's netns has only
 *    loopback; the egress work will add them.
 *  - ABI >= 7: denials of nested domains the command creates are kept out
 *    of the host's kernel audit log (LOG_SUBDOMAINS_OFF), and the kernel's
 *    default already leaves out denials after exec: a run must not be able
 *    to flood a log it does not own. ringfence's own pre-exec code keeps
 *    the default (a denial there is a bug worth logging).
 *  - No Landlock at all refuses the run (fail closed). Older ABIs run with
 *    what they have; on ABI 1 (no REFER) the kernel refuses every rename or
 *    link across directories with EXDEV.
 *
 * Debian 12's <linux/landlock.h> stops at ABI 2 or so: the newer constants
 * are defined here, and the ABI is detected at run time.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "landlock.h"
#include "shared/macro.h"

/* ---- what the headers may lack ------------------------------------------ */

#ifndef __NR_landlock_create_ruleset /* the same number on every architecture */
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef LANDLOCK_CREATE_RULESET_ERRATA /* kernel 6.15 */
#define LANDLOCK_CREATE_RULESET_ERRATA (1U << 1)
#endif
/* ABI 2 (5.19) */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
/* ABI 3 (6.2) */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
/* ABI 4 (6.7): TCP; not handled yet (see the header comment) */
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
/* ABI 5 (6.10) */
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
/* ABI 6 (6.12) */
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
/* ABI 7 (6.15): landlock_restrict_self() flags */
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF (1U << 0)
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON
#define LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1)
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF (1U << 2)
#endif

/* The newest ABI this file knows; a newer kernel is used at this level. */
#define LL_ABI_KNOWN 7

/*
 * struct landlock_ruleset_attr as of ABI 6. The header's copy may stop
 * after handled_access_fs; the kernel takes the size we pass (ll_attr_size).
 */
struct ll_ruleset_attr {
        uint64_t handled_access_fs;
        uint64_t handled_access_net;
        uint64_t scoped;
};

/* ---- access classes --------------------------------------------------- */

#define LL_EXEC       LANDLOCK_ACCESS_FS_EXECUTE
#define LL_READ_FILE  LANDLOCK_ACCESS_FS_READ_FILE
#define LL_READ_DIR   LANDLOCK_ACCESS_FS_READ_DIR
#define LL_WRITE_FILE LANDLOCK_ACCESS_FS_WRITE_FILE
#define LL_TRUNCATE   LANDLOCK_ACCESS_FS_TRUNCATE
#define LL_IOCTL_DEV  LANDLOCK_ACCESS_FS_IOCTL_DEV

/* Rights the kernel accepts on a rule for a non-directory. */
#define LL_FILE_RIGHTS (LL_EXEC | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE | LL_IOCTL_DEV)

#define LL_READ      (LL_READ_FILE | LL_READ_DIR)
#define LL_READ_EXEC (LL_READ | LL_EXEC)
#define LL_DEVICE    (LL_READ_FILE | LL_WRITE_FILE | LL_TRUNCATE)
#define LL_TERMINAL  (LL_DEVICE | LL_IOCTL_DEV)
#define LL_PTS       (LL_TERMINAL | LL_READ_DIR)
#define LL_PROC      (LL_READ | LL_WRITE_FILE | LL_TRUNCATE)
#define LL_ALL       UINT64_MAX /* masked down to the handled rights */
/* landlock_confine's directory rule: read what is beneath, and with
 * `write` also write, create, remove and truncate regular files (no
 * directories, links, devices, FIFOs or sockets, no execution). */
#define LL_CONFINE_DIR(write)                                                                      \
        (LL_READ | ((write) ? LL_WRITE_FILE | LL_TRUNCATE | LANDLOCK_ACCESS_FS_MAKE_REG |          \
                                      LANDLOCK_ACCESS_FS_REMOVE_FILE                               \
                            : 0))
/* Special files that would block or talk to host programs (see the header). */
#define LL_MAKE_SPECIAL (LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_SOCK)

/* Filesystem rights of an ABI (ABI 1: bits 0-12; then REFER, TRUNCATE, IOCTL_DEV). */
static uint64_t ll_handled_fs(int abi)
{
        uint64_t fs = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;

        if (abi >= 2)
                fs |= LANDLOCK_ACCESS_FS_REFER;
        if (abi >= 3)
                fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
        if (abi >= 5)
                fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
        return fs;
}

static uint64_t ll_scoped(int abi)
{
        return abi >= 6 ? LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL : 0;
}

/* The part of struct ll_ruleset_attr an ABI knows about. */
static size_t ll_attr_size(int abi)
{
        if (abi >= 6)
                return sizeof(struct ll_ruleset_attr);
        if (abi >= 4)
                return offsetof(struct ll_ruleset_attr, scoped);
        return offsetof(struct ll_ruleset_attr, handled_access_net);
}

/* Terminals: the device nodes whose ioctls (termios, window size) programs need. */
static bool ll_is_terminal(const char *dst)
{
        return strcmp(dst, "/dev/tty") == 0;
}

/*
 * What an op grants beneath its dst; 0 for an op that needs no rule. Pure:
 * the table in the header comment, as code.
 */
static uint64_t ll_op_access(const struct plan_op *op)
{
        switch (op->kind) {
        case OP_FILE:
                return LL_READ_FILE;
        case OP_BIND:
                if (op->flags & OPF_MASK)
                        return 0; /* hides what is there; grants nothing */
                if (op->flags & OPF_DEVICE)
                        return ll_is_terminal(op->dst) ? LL_TERMINAL : LL_DEVICE;
                if (!(op->flags & OPF_RDONLY))
                        return LL_ALL;
                return path_is_beneath(op->dst, "/etc") ? LL_READ : LL_READ_EXEC;
        case OP_TMPFS:
                /* /dev holds device nodes and links, nothing to create. */
                return strcmp(op->dst, "/dev") == 0 ? LL_READ : LL_ALL;
        case OP_PROC:
                /* Processes write /proc/self/{oom_score_adj,comm,...}; the
                 * dangerous knobs are read-only mounts (plan.c add_proc). */
                return LL_PROC;
        case OP_DEVPTS:
                return LL_PTS;
        case OP_DIR:
        case OP_SYMLINK:
        case OP_RO_SELF:
                return 0;
        case _OP_MAX:
        case _OP_INVALID:
        default:
                return 0;
        }
}

/* Add a rule, or replace the rule for the same path (a mount on top). */
static int ll_rule_set(struct rf_landlock_plan *ll, const char *path, uint64_t access,
                       bool optional)
{
        for (size_t i = 0; i < ll->n_rules; i++)
                if (strcmp(ll->rules[i].path, path) == 0) {
                        ll->rules[i] = (struct rf_landlock_rule){path, access, optional};
                        return 0;
                }
        if (ll->n_rules >= ARRAY_SIZE(ll->rules))
                return -E2BIG;
        ll->rules[ll->n_rules++] = (struct rf_landlock_rule){path, access, optional};
        return 0;
}

static long ll_create_ruleset(const struct ll_ruleset_attr *attr, size_t size, uint32_t flags)
{
        return syscall(__NR_landlock_create_ruleset, attr, size, flags);
}

#ifdef RF_TEST_BUILD
/*
 * Test builds only:
 *  RINGFENCE_TEST_LANDLOCK_ABI=N      behave as if the kernel offered ABI
 *                                     min(N, real) (0: no Landlock at all);
 *  RINGFENCE_TEST_LANDLOCK_NO_RULE=P  derive no rule from the op at dst P,
 *                                     so a --rw P the mounts allow is left
 *                                     to Landlock to refuse.
 */
static void ll_test_abi(int *abi)
{
        const char *s = getenv("RINGFENCE_TEST_LANDLOCK_ABI");
        char *end;

        if (!s || !*s)
                return;
        long v = strtol(s, &end, 10);
        if (*end == '\0' && v >= 0 && v < *abi)
                *abi = (int)v;
}

static bool ll_test_no_rule(const char *dst)
{
        const char *s = getenv("RINGFENCE_TEST_LANDLOCK_NO_RULE");
        return s && strcmp(s, dst) == 0;
}
#endif

int landlock_plan(struct rf_plan *p, struct rf_error *err)
{
        struct rf_landlock_plan *ll = &p->landlock;
        int r;

        ll->n_rules = 0;
        long abi = ll_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        if (abi < 0) {
                int e = errno;
                if (e == ENOSYS)
                        return rf_error_set(err, -EOPNOTSUPP,
                                            "Landlock is not available (this kernel has no "
                                            "Landlock support); refusing to run without it");
                if (e == EOPNOTSUPP)
                        return rf_error_set(err, -EOPNOTSUPP,
                                            "Landlock is not available (it is disabled: add "
                                            "\"landlock\" to the kernel's lsm= boot parameter); "
                                            "refusing to run without it");
                return rf_error_set(err, -e, "cannot query the Landlock ABI: %s", strerror(e));
        }
        ll->abi_kernel = (int)abi;
        ll->abi = abi > LL_ABI_KNOWN ? LL_ABI_KNOWN : (int)abi;
#ifdef RF_TEST_BUILD
        ll_test_abi(&ll->abi);
        if (ll->abi == 0)
                return rf_error_set(err, -EOPNOTSUPP,
                                    "Landlock is not available (RINGFENCE_TEST_LANDLOCK_ABI=0); "
                                    "refusing to run without it");
#endif
        if (ll->abi < 1)
                return rf_error_set(err, -EOPNOTSUPP,
                                    "Landlock is not available (the kernel reports ABI %d)",
                                    ll->abi);
        long errata = ll_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_ERRATA);
        ll->errata = errata > 0 ? (int)errata : 0;
        ll->handled_fs = ll_handled_fs(ll->abi);
        ll->scoped = ll_scoped(ll->abi);

        /* The root: directories can be listed; files on it have their own
         * rules (OP_FILE); anything planned nowhere is not readable. */
        if ((r = ll_rule_set(ll, "/", LL_READ_DIR, false)) < 0)
                return rf_error_set(err, r, "too many Landlock rules");
        for (size_t i = 0; i < p->n_ops; i++) {
                const struct plan_op *op = &p->ops[i];
                uint64_t access = ll_op_access(op) & ll->handled_fs;
                if (!access)
                        continue;
#ifdef RF_TEST_BUILD
                if (ll_test_no_rule(op->dst))
                        continue;
#endif
                bool optional = op->kind == OP_BIND && (op->flags & OPF_OPTIONAL);
                if ((r = ll_rule_set(ll, op->dst, access, optional)) < 0)
                        return rf_error_set(err, r, "too many Landlock rules");
        }
        /* No FIFO or socket in a host bind, nor in any place above one. */
        for (size_t i = 0; i < p->n_ops; i++) {
                const struct plan_op *op = &p->ops[i];
                if (op->kind != OP_BIND || (op->flags & (OPF_RDONLY | OPF_DEVICE)))
                        continue;
                for (size_t k = 0; k < ll->n_rules; k++)
                        if (path_is_beneath(op->dst, ll->rules[k].path))
                                ll->rules[k].access &= ~LL_MAKE_SPECIAL;
        }
        /* file secrets: a read-only ramfs init mounts at STEP_SECRETS */
        if (p->secrets_files &&
            (r = ll_rule_set(ll, run_secrets_dir(p), (LL_READ_FILE | LL_READ_DIR) & ll->handled_fs,
                             false)) < 0)
                return rf_error_set(err, r, "too many Landlock rules");
        return 0;
}

/* Async-signal-safe from here on: runs between fork and exec. */

static int ll_open_rule_path(const char *path)
{
        struct open_how how = {
                .flags = O_PATH | O_CLOEXEC,
                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
}

int landlock_apply(const struct rf_plan *p)
{
        const struct rf_landlock_plan *ll = &p->landlock;
        struct ll_ruleset_attr attr = {.handled_access_fs = ll->handled_fs, .scoped = ll->scoped};
        int r = 0;

        if (ll->abi < 1)
                return -EOPNOTSUPP;
        int ruleset = (int)ll_create_ruleset(&attr, ll_attr_size(ll->abi), 0);
        if (ruleset < 0)
                return negative_errno();
        for (size_t i = 0; i < ll->n_rules; i++) {
                const struct rf_landlock_rule *rule = &ll->rules[i];
                int fd = ll_open_rule_path(rule->path);
                if (fd < 0) {
                        if (errno == ENOENT && rule->optional)
                                continue;
                        r = negative_errno();
                        goto out;
                }
                /* Directory-only rights on a file: the kernel refuses the
                 * rule with EINVAL, and the file gets its file rights
                 * instead. Tried rather than asked with fstat: most rule
                 * paths are directories, and a file rule rarely carries
                 * directory rights, so the retry is rare. The rule's other
                 * EINVAL (rights the ruleset does not handle) is ruled out
                 * first, so EINVAL here means "a file". */
                if ((rule->access | ll->handled_fs) != ll->handled_fs) {
                        r = -EINVAL;
                        safe_close(fd);
                        goto out;
                }
                if (!rule->access) {
                        safe_close(fd);
                        continue;
                }
                struct landlock_path_beneath_attr pb = {.allowed_access = rule->access,
                                                        .parent_fd = fd};
                long k = syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb,
                                 0);
                if (k < 0 && errno == EINVAL && (rule->access & ~LL_FILE_RIGHTS)) {
                        pb.allowed_access = rule->access & LL_FILE_RIGHTS;
                        k = pb.allowed_access ? syscall(__NR_landlock_add_rule, ruleset,
                                                        LANDLOCK_RULE_PATH_BENEATH, &pb, 0)
                                              : 0;
                }
                if (k < 0) {
                        r = negative_errno();
                        safe_close(fd);
                        goto out;
                }
                safe_close(fd);
        }
        uint32_t flags = ll->abi >= 7 ? LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF : 0;
        if (syscall(__NR_landlock_restrict_self, ruleset, flags) < 0)
                r = negative_errno();
out:
        safe_close(ruleset);
        return r;
}

/* ---- a helper process of the host's: landlock_confine ------------------- */

int landlock_confine(const struct landlock_beneath *rules, size_t n)
{
        long abi = ll_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        if (abi < 0)
                return errno == ENOSYS || errno == EOPNOTSUPP ? -EOPNOTSUPP : negative_errno();
        if (abi < 1)
                return -EOPNOTSUPP;
        if (abi > LL_ABI_KNOWN)
                abi = LL_ABI_KNOWN;
        uint64_t fs = ll_handled_fs((int)abi);
        struct ll_ruleset_attr attr = {.handled_access_fs = fs, .scoped = ll_scoped((int)abi)};
        _cleanup_close_ int ruleset = (int)ll_create_ruleset(&attr, ll_attr_size((int)abi), 0);
        if (ruleset < 0)
                return negative_errno();
        for (size_t i = 0; i < n; i++) {
                uint64_t want = rules[i].dir ? LL_CONFINE_DIR(rules[i].write) : LL_READ_FILE;
                struct landlock_path_beneath_attr pb = {.allowed_access = want & fs,
                                                        .parent_fd = rules[i].fd};
                if (rules[i].fd < 0)
                        continue;
                if (syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) <
                    0)
                        return negative_errno();
        }
        uint32_t flags = abi >= 7 ? LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF : 0;
        if (syscall(__NR_landlock_restrict_self, ruleset, flags) < 0)
                return negative_errno();
        return 0;
}
