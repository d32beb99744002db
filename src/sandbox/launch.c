/*
 * launch.c — the run's init: from clone to the command's exec.
 *
 * Everything between clone and exec follows one rule: no malloc, no stdio,
 * no locks — only syscalls on data the parent prepared (plan.h). A failing
 * step sends {step, errno} to the supervisor and _exit()s; the supervisor
 * prints the one line and exits 125. The command never runs after a
 * failed step.
 *
 * Privilege changes, in order (read this top to bottom):
 *  1. clone3 into new user+mount+pid+net+ipc+uts+cgroup namespaces. Init
 *     holds every capability — of its own user namespace only.
 *  2. The supervisor writes uid_map/gid_map (the caller's ids map to
 *     themselves; setgroups denied) and sends GO.
 *  3. Mount propagation to the host is cut (MS_SLAVE|MS_REC). Every host
 *     path the run will see is opened by fd with RESOLVE_NO_SYMLINKS and
 *     cloned into a detached tree (open_tree) *before* anything is mounted,
 *     with nosuid,nodev (and ro) set on the whole tree (mount_setattr).
 *  4. A fresh tmpfs becomes the new root; the plan's operations populate it
 *     by fd (mkdirat/symlinkat under RESOLVE_BENEATH, move_mount by fd).
 *     The only sources not cloned from the host beforehand are files init
 *     itself wrote on the new root (the run's TLS trust bundle): cloned
 *     from there and mounted read-only over a file of a read-only bind
 *     (OPF_IN_ROOT, bind_in_root).
 *  5. pivot_root(".", ".") and a lazy unmount of the old root: the host's
 *     tree is gone from this mount namespace.
 *  6. hostname, loopback up, the DNS stub socket (to the supervisor), the
 *     pty (from the run's own devpts).
 *  7. The capability bounding set is emptied, securebits locked so uid 0
 *     gains nothing at exec, ambient/effective/permitted/inheritable
 *     cleared, no_new_privs set, core dumps off, init non-dumpable.
 *  8. init vforks the command child (its own stack; init suspended until
 *     it has executed or failed): own session, controlling tty if any,
 *     only fds 0-2, its cwd, rlimits, Landlock, seccomp, then it waits for
 *     the supervisor's START on init's channel and executes the command.
 *     init stays as pid 1: reaps and forwards.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <linux/securebits.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <grp.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "capture.h"
#include "cgroup.h"
#include "ovl.h"
#include "landlock.h"
#include "launch.h"
#include "msg.h"
#include "seccomp.h"
#include "shared/macro.h"
#include "shared/memfd.h"
#include "trustfiles.h"
#include "steps.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

#define ROOT_TMPFS_SIZE "1m" /* plus plan->root_extra when the plan asks for more */
#define ROOT_TMPFS_BASE (1ULL << 20)
#define ROOT_MOUNTPOINT "/tmp" /* where the new root is attached before pivot */

/* ---- child-side helpers (async-signal-safe) ------------------------------ */

struct child {
        const struct rf_plan *plan;
        int chan;
        /* the supervisor's secret deliveries (MSG_SECRETS), mapped read-only
         * until the command child has been made */
        const unsigned char *secrets;
        size_t secrets_len;
        char **envp; /* the command's environment: the plan's plus env secrets */
        /* the run's TLS trust files (MSG_TRUST), taken at the first
         * OPF_LATE op, kept until the root is built */
        struct trust_late *trust;
};

struct trust_late {
        bool got;
        int fd;                  /* the memfd: the run's own bytes and the layout */
        int src[TRUST_SOURCES];  /* the host's parts, read-only (src[0] unused) */
        struct trustfiles files; /* how each file is put together */
};

static _noreturn_ void child_fail(const struct child *c, int step, int err)
{
        struct rf_msg m = {.type = MSG_FAIL, .step = step, .err = err > 0 ? err : EIO};
        (void)rf_msg_send(c->chan, &m, -1);
        _exit(125);
}

/* Begin a step: in test builds, fail here if asked to. */
static void step_begin(const struct child *c, int step)
{
        if (c->plan->test_fail_step == step)
                child_fail(c, step, EPERM);
}

static bool skipped(const struct rf_plan *p, int step)
{
        return (p->test_skip & (1ULL << step)) != 0;
}

/* Root runs in a network namespace of their own: the supervisor, host
 * root, sets it up (net_setup) while init builds the root; init does it
 * itself for rootless runs, whose supervisor holds no capability there.
 * Not with sysctls to write (an OCI container's, init's before the root):
 * they could change what the setup finds. */
static bool net_by_supervisor(const struct rf_plan *p)
{
        return p->map_as_root && !p->clone_parent && !p->adopt_net && p->n_sysctl == 0 &&
               p->join_ns[PLAN_JOIN_NET] < 0 && !skipped(p, STEP_NETNS);
}

#define TRY(c, step, expr)                                                                         \
        do {                                                                                       \
                if ((long)(expr) < 0)                                                              \
                        child_fail((c), (step), errno);                                            \
        } while (0)

static int sys_openat2(int dirfd, const char *path, int flags, uint64_t resolve)
{
        struct open_how how = {.flags = (uint64_t)flags, .resolve = resolve};
        return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}

#define RESOLVE_STRICT (RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

/* Open `path` (absolute within the new root) beneath rootfd, no symlinks. */
static int open_in_root(int rootfd, const char *path, int flags)
{
        while (*path == '/')
                path++;
        if (!*path)
                path = ".";
        return sys_openat2(rootfd, path, flags | O_CLOEXEC, RESOLVE_STRICT | RESOLVE_BENEATH);
}

/* mkdir -p of a path beneath rootfd; every component by fd. Returns the
 * last directory's O_PATH fd (owned by the caller) or -1 with errno. */
static int mkdir_p_in_root(int rootfd, const char *path, mode_t mode)
{
        char comp[256];
        int dfd = -1, nfd;
        const char *s = path;

        dfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
        if (dfd < 0)
                return -1;
        for (;;) {
                while (*s == '/')
                        s++;
                if (!*s)
                        break;
                const char *e = strchr(s, '/');
                size_t len = e ? (size_t)(e - s) : strlen(s);
                if (len == 0 || len >= sizeof comp) {
                        close(dfd);
                        errno = ENAMETOOLONG;
                        return -1;
                }
                memcpy(comp, s, len);
                comp[len] = '\0';
                if (mkdirat(dfd, comp, mode) < 0 && errno != EEXIST) {
                        int e2 = errno;
                        close(dfd);
                        errno = e2;
                        return -1;
                }
                nfd = sys_openat2(dfd, comp, O_PATH | O_DIRECTORY | O_CLOEXEC,
                                  RESOLVE_STRICT | RESOLVE_BENEATH);
                int e2 = errno;
                close(dfd);
                if (nfd < 0) {
                        errno = e2;
                        return -1;
                }
                dfd = nfd;
                s += len;
        }
        return dfd;
}

/*
 * The directory of the new root that the last operations used, kept open:
 * the plan's entries come grouped by directory (a dozen files in /etc, the
 * devices and links in /dev), so each directory is opened once instead of
 * once per entry. The fd is right only until something is mounted on that
 * directory or one above it (the path then names another inode): such a
 * mount forgets it (attach_dir, OP_RO_SELF). A file mount inside it leaves
 * it as it is. No allocation.
 */
struct root_dir {
        int fd;              /* O_PATH directory beneath the new root, or -1 */
        char path[PATH_MAX]; /* its path, relative ("etc", "dev/pts"; "" is the root) */
};

static void root_dir_forget(struct root_dir *d)
{
        if (d->fd >= 0)
                close(d->fd);
        d->fd = -1;
        d->path[0] = '\0';
}

/*
 * The directory `path` (relative to the root, "" for the root itself)
 * beneath rootfd, created (mode) with its missing parents when `create`.
 * Returns a borrowed fd (the cache's, or rootfd) or -1 with errno.
 */
static int root_dir_get(struct root_dir *d, int rootfd, const char *path, bool create, mode_t mode)
{
        size_t len = strlen(path);
        int fd;

        if (len == 0)
                return rootfd;
        if (len >= sizeof d->path) {
                errno = ENAMETOOLONG;
                return -1;
        }
        if (d->fd >= 0 && strcmp(d->path, path) == 0)
                return d->fd;
        /* in the root or in the directory held: one mkdirat + one openat2 */
        const char *last = strrchr(path, '/');
        size_t plen = last ? (size_t)(last - path) : 0;
        int pfd = -1;
        if (create && plen == 0)
                pfd = rootfd;
        else if (create && d->fd >= 0 && strlen(d->path) == plen &&
                 strncmp(path, d->path, plen) == 0)
                pfd = d->fd;
        if (pfd >= 0) {
                const char *base = last ? last + 1 : path;
                if (mkdirat(pfd, base, mode) < 0 && errno != EEXIST)
                        return -1;
                fd = sys_openat2(pfd, base, O_PATH | O_DIRECTORY | O_CLOEXEC,
                                 RESOLVE_STRICT | RESOLVE_BENEATH);
        } else {
                fd = open_in_root(rootfd, path, O_PATH | O_DIRECTORY);
                if (fd < 0 && errno == ENOENT && create)
                        fd = mkdir_p_in_root(rootfd, path, mode);
        }
        if (fd < 0)
                return -1;
        root_dir_forget(d);
        d->fd = fd;
        memcpy(d->path, path, len + 1);
        return fd;
}

/* Split "/a/b/c" into the directory "/a/b" (created; a borrowed fd, see
 * root_dir_get) and the last name "c". */
static int open_parent(struct root_dir *d, int rootfd, const char *path, char *name,
                       size_t name_len)
{
        char parent[PATH_MAX];

        while (*path == '/')
                path++;
        const char *slash = strrchr(path, '/');
        const char *base = slash ? slash + 1 : path;
        size_t plen = slash ? (size_t)(slash - path) : 0;
        if (!*base || strlen(base) >= name_len || plen >= sizeof parent) {
                errno = EINVAL;
                return -1;
        }
        memcpy(parent, path, plen);
        parent[plen] = '\0';
        strcpy(name, base);
        return root_dir_get(d, rootfd, parent, true, 0755);
}

static int set_tree_attr(int tree, uint64_t attr, bool recursive)
{
        struct mount_attr a = {.attr_set = attr, .propagation = MS_PRIVATE};
        return mount_setattr(tree, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a,
                             sizeof a);
}

/*
 * Clone the host tree at op->src as a detached mount with nosuid, nodev
 * (devices: noexec instead), ro as planned, and — with `userns_fd` >= 0 —
 * idmapped through that user namespace. Returns the tree fd, -ENOENT for a
 * missing optional source (reported as 0 tree: caller skips), or -errno.
 * Used by the child (rootless) and by the supervisor (root runs: the run
 * uid cannot traverse the caller's directories, and only host root may
 * create idmapped mounts). No allocation.
 */
/* The super options of the overlay mounted at `path` (the topmost mount
 * there, whose root is its filesystem's): into buf, 0 or -errno. */
static int overlay_super(const char *path, char *buf, size_t len)
{
        _cleanup_close_ int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
        _cleanup_free_ char *mi = malloc(OVL_MOUNTINFO_MAX);
        size_t got = 0;
        ssize_t n;
        int r = -ENOENT;
        if (fd < 0 || !mi)
                return fd < 0 ? negative_errno() : -ENOMEM;
        while (got < OVL_MOUNTINFO_MAX && (n = read(fd, mi + got, OVL_MOUNTINFO_MAX - got)) > 0)
                got += (size_t)n;
        if (got == OVL_MOUNTINFO_MAX)
                return -E2BIG;
        for (size_t i = 0; i < got;) {
                char *nl = memchr(mi + i, '\n', got - i);
                size_t ll = nl ? (size_t)(nl - (mi + i)) : got - i;
                struct cgroup_mount_line m;
                if (mountinfo_parse_line(mi + i, ll, &m) == 0 && m.fstype_len == 7 &&
                    !memcmp(m.fstype, "overlay", 7) && m.root_len == 1 && m.root[0] == '/' &&
                    m.mountpoint_len == strlen(path) &&
                    !memcmp(m.mountpoint, path, m.mountpoint_len)) {
                        if (m.super_len >= len)
                                return -E2BIG;
                        memcpy(buf, m.super, m.super_len);
                        buf[m.super_len] = '\0';
                        r = 0; /* the last one is the topmost */
                }
                i += ll + 1;
        }
        return r;
}

/*
 * A container root that is an overlay mount (an engine's), which the
 * kernel does not idmap as a whole: its layers, each cloned, read-only
 * and idmapped through `userns_fd` (if >= 0), stacked topmost first into
 * an overlay of our own (read-only: the run's writes go to its own upper
 * layer, launch.c overlay_root). The layers are the engine's paths, its
 * own symlinks (Podman's l/ names) followed. Returns the tree, or -errno.
 */
static int overlay_tree(const char *path, int userns_fd)
{
        _cleanup_free_ char *super = malloc(OVL_SUPER_MAX + 1);
        _cleanup_free_ struct ovl_layers *l = malloc(sizeof *l);
        int r;
        if (!super || !l)
                return -ENOMEM;
        if ((r = overlay_super(path, super, OVL_SUPER_MAX + 1)) < 0 ||
            (r = ovl_parse_super(super, strlen(super), l)) < 0)
                return r;
        _cleanup_close_ int fs = fsopen("overlay", FSOPEN_CLOEXEC);
        if (fs < 0)
                return negative_errno();
        /* each layer's detached tree lives until the overlay is made: the
         * last fd of a detached mount unmounts it */
        int t[OVL_LAYERS_MAX];
        size_t nt = 0;
        for (; nt < l->n; nt++) {
                t[nt] = open_tree(AT_FDCWD, l->path[nt], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
                if (t[nt] < 0)
                        break;
                struct mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP,
                                       .userns_fd = (uint64_t)userns_fd};
                if (set_tree_attr(t[nt], MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                                  false) < 0 ||
                    (userns_fd >= 0 && mount_setattr(t[nt], "", AT_EMPTY_PATH, &a, sizeof a) < 0) ||
                    fsconfig(fs, FSCONFIG_SET_FD, "lowerdir+", NULL, t[nt]) < 0) {
                        nt++;
                        break;
                }
        }
        r = nt == l->n && t[nt - 1] >= 0 && fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0
                    ? fsmount(fs, FSMOUNT_CLOEXEC,
                              MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
                    : -1;
        if (r < 0)
                r = negative_errno();
        for (size_t i = 0; i < nt; i++)
                safe_close(t[i]);
        return r;
}

static int tree_from_host(const struct plan_op *op, int userns_fd)
{
        int fd = sys_openat2(AT_FDCWD, op->src, O_PATH | O_CLOEXEC, RESOLVE_STRICT);
        if (fd < 0)
                return negative_errno();
        if (op->flags & OPF_VERIFY) {
                struct stat st;
                if (fstat(fd, &st) < 0) {
                        int e = errno;
                        close(fd);
                        return -e;
                }
                /* The path now names another inode than the one planned:
                 * something was swapped in between. Refuse. */
                if (st.st_dev != op->dev || st.st_ino != op->ino) {
                        close(fd);
                        return -ESTALE;
                }
        }
        /* an engine's overlay root: rebuilt from its layers (the kernel
         * idmaps no overlay mount) */
        struct statfs sf;
        if ((op->flags & OPF_ROOT) && fstatfs(fd, &sf) == 0 && sf.f_type == OVERLAYFS_SUPER_MAGIC) {
                close(fd);
                return overlay_tree(op->src, userns_fd);
        }
        int tree = open_tree(fd, "",
                             OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
        int e = errno;
        close(fd);
        if (tree < 0)
                return -e;
        uint64_t attr = MOUNT_ATTR_NOSUID;
        if (op->flags & OPF_DEVICE)
                attr |= MOUNT_ATTR_NOEXEC;
        else
                attr |= MOUNT_ATTR_NODEV;
        if (op->flags & OPF_RDONLY)
                attr |= MOUNT_ATTR_RDONLY;
        if (set_tree_attr(tree, attr, true) < 0) {
                e = errno;
                close(tree);
                return -e;
        }
        if (userns_fd >= 0) {
                struct mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP,
                                       .userns_fd = (uint64_t)userns_fd};
                if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) < 0) {
                        e = errno;
                        close(tree);
                        return -e;
                }
        }
        return tree;
}

static int clone_source(const struct child *c, const struct plan_op *op)
{
        int tree = tree_from_host(op, -1);
        if (tree == -ENOENT && (op->flags & OPF_OPTIONAL))
                return -1;
        if (tree < 0)
                child_fail(c, op->step, -tree);
        return tree;
}

static int new_fs(const struct child *c, int step, const char *type, const char *const *opts,
                  uint64_t attr)
{
        int fs = fsopen(type, FSOPEN_CLOEXEC);
        if (fs < 0)
                child_fail(c, step, errno);
        if (fsconfig(fs, FSCONFIG_SET_STRING, "source", type, 0) < 0)
                child_fail(c, step, errno);
        for (; opts && opts[0]; opts += 2) {
                int r = opts[1] ? fsconfig(fs, FSCONFIG_SET_STRING, opts[0], opts[1], 0)
                                : fsconfig(fs, FSCONFIG_SET_FLAG, opts[0], NULL, 0);
                if (r < 0)
                        child_fail(c, step, errno);
        }
        if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                child_fail(c, step, errno);
        int mnt = fsmount(fs, FSMOUNT_CLOEXEC, (unsigned)attr);
        if (mnt < 0)
                child_fail(c, step, errno);
        close(fs);
        return mnt;
}

static void fmt_u64(char *buf, size_t len, uint64_t v)
{
        char tmp[24];
        size_t n = 0;

        do
                tmp[n++] = (char)('0' + v % 10);
        while ((v /= 10) && n < sizeof tmp);
        if (n >= len)
                n = len - 1;
        for (size_t i = 0; i < n; i++)
                buf[i] = tmp[n - 1 - i];
        buf[n] = '\0';
}

static void fmt_mode(char *buf, mode_t m)
{
        buf[0] = '0';
        buf[1] = (char)('0' + ((m >> 9) & 7));
        buf[2] = (char)('0' + ((m >> 6) & 7));
        buf[3] = (char)('0' + ((m >> 3) & 7));
        buf[4] = (char)('0' + (m & 7));
        buf[5] = '\0';
}

/* Is `m` the directory `h` or one above it (paths relative to the root)? */
static bool at_or_above(const char *m, const char *h)
{
        size_t n = strlen(m);
        return strncmp(h, m, n) == 0 && (n == 0 || h[n] == '\0' || h[n] == '/');
}

/*
 * Mount `tree` on the directory `dst` (created with its parents when
 * `create`). The target comes from the held directory when it is dst or
 * dst's parent; the held fd is forgotten when the mount covers it.
 */
static void attach_dir(const struct child *c, int step, int tree, struct root_dir *d, int rootfd,
                       const char *dst, bool create)
{
        char name[256];
        int target, owned = -1;

        while (*dst == '/')
                dst++;
        if (d->fd >= 0 && strcmp(d->path, dst) == 0)
                target = d->fd;
        else {
                int pfd = open_parent(d, rootfd, dst, name, sizeof name);
                if (pfd < 0 || (create && mkdirat(pfd, name, 0755) < 0 && errno != EEXIST))
                        child_fail(c, step, errno);
                target = owned = sys_openat2(pfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC,
                                             RESOLVE_STRICT | RESOLVE_BENEATH);
                if (target < 0)
                        child_fail(c, step, errno);
        }
        if (move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                child_fail(c, step, errno);
        close(tree);
        if (owned >= 0)
                close(owned);
        if (d->fd >= 0 && at_or_above(dst, d->path))
                root_dir_forget(d); /* covered now: the path names the new mount */
}

/*
 * OPF_IN_ROOT: mount the file op->src of the new root, read-only, over the
 * existing regular file op->dst. The target is opened O_PATH|O_NOFOLLOW,
 * never created or written — it lies in a read-only bind (/etc/ssl) — and
 * must be a regular file; with OPF_OPTIONAL a missing one is skipped. The
 * source must be a regular file on the root tmpfs itself (RESOLVE_NO_XDEV):
 * the one init wrote at an earlier op, not a file of some bind. The clone
 * is read-only, nosuid, nodev, noexec. Mounting on a file leaves the held
 * directory valid. No allocation.
 */
static void bind_in_root(const struct child *c, const struct plan_op *op, int rootfd)
{
        struct stat st;

        int dst = open_in_root(rootfd, op->dst, O_PATH | O_NOFOLLOW);
        if (dst < 0) {
                if (errno == ENOENT && (op->flags & OPF_OPTIONAL))
                        return;
                child_fail(c, op->step, errno);
        }
        if (fstat(dst, &st) < 0)
                child_fail(c, op->step, errno);
        if (!S_ISREG(st.st_mode))
                child_fail(c, op->step, S_ISLNK(st.st_mode) ? ELOOP : EINVAL);
        const char *s = op->src;
        while (*s == '/')
                s++;
        int src = sys_openat2(rootfd, s, O_PATH | O_NOFOLLOW | O_CLOEXEC,
                              RESOLVE_STRICT | RESOLVE_BENEATH | RESOLVE_NO_XDEV);
        if (src < 0 || fstat(src, &st) < 0)
                child_fail(c, op->step, errno);
        if (!S_ISREG(st.st_mode))
                child_fail(c, op->step, S_ISLNK(st.st_mode) ? ELOOP : EINVAL);
        int tree = open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
        if (tree < 0)
                child_fail(c, op->step, errno);
        if (set_tree_attr(tree,
                          MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                  MOUNT_ATTR_NOEXEC,
                          false) < 0 ||
            move_mount(tree, "", dst, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                child_fail(c, op->step, errno);
        close(tree);
        close(src);
        close(dst);
}

/*
 * The run's TLS trust files, at the first OPF_LATE op: the supervisor sends
 * them once they are made (MSG_TRUST, before START: nothing else can come
 * first): up to two read-only sources (value = the source's number, each
 * once), then the memfd (value 0), which must be sealed against writes and
 * resizing, within the plan's bound, and say how each file is put together
 * (trustfiles_parse); anything else fails the step with EPROTO. A source
 * is a regular file (a trust cache entry, nothing writes it once linked,
 * or a sealed memfd); one that holds less than its range fails the copy.
 */
static void trust_receive(const struct child *c, int step)
{
        struct trust_late *t = c->trust;
        unsigned char hdr[TRUSTFILES_HDR];
        struct rf_msg m;
        struct stat st;
        size_t len = 0;
        int fd = -1;

        if (t->got)
                return;
        for (int i = 0; i < TRUST_SOURCES; i++)
                t->src[i] = -1;
        for (;;) {
                int r = rf_msg_recv(c->chan, &m, &fd);
                if (r <= 0)
                        _exit(125);
                if (m.type != MSG_TRUST || fd < 0 || m.value < 0 || m.value >= TRUST_SOURCES ||
                    (m.value > 0 && t->src[m.value] >= 0))
                        child_fail(c, step, EPROTO);
                if (m.value == 0)
                        break;
                if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                        child_fail(c, step, EPROTO);
                t->src[m.value] = fd;
        }
        if (memfd_sealed_size(fd, TRUSTFILES_HDR + TRUST_FILES * c->plan->trust_bound, &len) < 0 ||
            pread(fd, hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr ||
            trustfiles_parse(hdr, len, c->plan->trust_bound, &t->files) < 0)
                child_fail(c, step, EPROTO);
        t->fd = fd; /* closed once the root is built */
        t->got = true;
}

/* Trust file k of the run (trustfiles.h) appended to `out`, copied by the
 * kernel from the memfd and its source: no page of init's is touched for
 * the bytes (the Java store's MAC came made, in its post bytes). */
static int trust_copy(const struct trust_late *t, size_t k, int out)
{
        const struct trustfile *f = &t->files.f[k];
        int src = f->src_len ? t->src[f->src] : -1;
        if (f->src_len && src < 0)
                return -EPROTO;
        int r = fd_copy_all(t->fd, (long long)f->pre_off, out, (size_t)f->pre);
        if (r >= 0 && f->src_len)
                r = fd_copy_all(src, (long long)f->src_off, out, (size_t)f->src_len);
        if (r < 0)
                return r;
        return fd_copy_all(t->fd, (long long)f->post_off, out, (size_t)f->post);
}

/* Are the directories `a` and `b` on one mount (statx's mount id)? */
static bool same_mount(const struct child *c, int a, int b)
{
        struct statx sa, sb;
        if (statx(a, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sa) < 0 ||
            statx(b, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sb) < 0)
                child_fail(c, STEP_ROOTFS, errno);
        if (!(sa.stx_mask & STATX_MNT_ID) || !(sb.stx_mask & STATX_MNT_ID))
                return false; /* cannot tell: nothing is removed */
        return sa.stx_mnt_id == sb.stx_mnt_id;
}

/*
 * A masked path (OPF_MASK): a file gets the /dev/null tree over it, a
 * directory an empty read-only tmpfs; an absent one is left absent. The
 * path is opened beneath the root without following a link.
 */
static void mask_path(const struct child *c, const struct plan_op *op, int tree, int rootfd)
{
        struct stat st;
        int fd = open_in_root(rootfd, op->dst, O_PATH | O_NOFOLLOW);
        if (fd < 0) {
                if (errno != ENOENT)
                        child_fail(c, op->step, errno);
                if (tree >= 0)
                        close(tree);
                return;
        }
        if (fstat(fd, &st) < 0)
                child_fail(c, op->step, errno);
        if (S_ISDIR(st.st_mode)) {
                if (tree >= 0)
                        close(tree);
                const char *opts[] = {"size", "4096", "mode", "0555", NULL, NULL};
                tree = new_fs(c, op->step, "tmpfs", opts,
                              MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                      MOUNT_ATTR_NOEXEC);
        } else if (tree < 0)
                child_fail(c, op->step, ENOENT); /* no /dev/null to mask with */
        if (move_mount(tree, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                child_fail(c, op->step, errno);
        close(tree);
        close(fd);
}

static void do_op(const struct child *c, const struct plan_op *op, int tree, struct root_dir *d,
                  int rootfd)
{
        char name[256], size[24], mode[8];
        int pfd, fd;

        switch (op->kind) {
        case OP_DIR: {
                const char *dst = op->dst;
                while (*dst == '/')
                        dst++;
                TRY(c, op->step, root_dir_get(d, rootfd, dst, true, op->mode));
                break;
        }
        case OP_SYMLINK:
                TRY(c, op->step, pfd = open_parent(d, rootfd, op->dst, name, sizeof name));
                TRY(c, op->step, symlinkat(op->src, pfd, name));
                break;
        case OP_FILE: {
                const char *data = op->data;
                size_t len = op->data_len;
                if (op->flags & OPF_LATE) {
                        trust_receive(c, op->step);
                        if (!c->trust->files.f[op->data_len % TRUST_FILES].len)
                                break; /* an optional file the run does not get */
                        data = "";     /* present: copied below */
                }
                TRY(c, op->step, pfd = open_parent(d, rootfd, op->dst, name, sizeof name));
                /* an image's own file (or link) of that name goes first
                 * (OPF_REPLACE: /etc/hosts, hostname, resolv.conf): it is
                 * removed in the run's upper layer, never written through;
                 * only there: a directory on another mount (a bind from
                 * the host) keeps its file, and the O_EXCL below refuses
                 * the run; a directory of that name refuses it too */
                if ((op->flags & OPF_REPLACE) && same_mount(c, pfd, rootfd) &&
                    unlinkat(pfd, name, 0) < 0 && errno != ENOENT)
                        child_fail(c, op->step, errno);
                fd = openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                            op->mode);
                if (fd < 0 && !(errno == EEXIST && !data))
                        child_fail(c, op->step, errno);
                if (fd >= 0 && (op->flags & OPF_LATE)) {
                        int r = trust_copy(c->trust, op->data_len % TRUST_FILES, fd);
                        if (r < 0)
                                child_fail(c, op->step, -r);
                } else {
                        for (size_t off = 0; fd >= 0 && off < len;) {
                                ssize_t n = write(fd, data + off, len - off);
                                if (n < 0 && errno != EINTR)
                                        child_fail(c, op->step, errno);
                                off += n > 0 ? (size_t)n : 0;
                        }
                }
                safe_close(fd);
                break;
        }
        case OP_BIND:
                if (op->flags & OPF_IN_ROOT) {
                        bind_in_root(c, op, rootfd);
                        break;
                }
                if (op->flags & OPF_MASK) {
                        mask_path(c, op, tree, rootfd);
                        break;
                }
                if (tree < 0)
                        break; /* optional source absent */
                if (op->mode == S_IFDIR) {
                        attach_dir(c, op->step, tree, d, rootfd, op->dst, true);
                        break;
                }
                /* a file: its mount point, created and used by the same fd;
                 * the directory holding it stays as it was (not covered) */
                TRY(c, op->step, pfd = open_parent(d, rootfd, op->dst, name, sizeof name));
                fd = openat(pfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (fd < 0 || move_mount(tree, "", fd, "",
                                         MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                        child_fail(c, op->step, errno);
                close(fd);
                close(tree);
                break;
        case OP_TMPFS: {
                fmt_u64(size, sizeof size, op->size);
                fmt_mode(mode, op->mode);
                const char *opts[] = {"size", size, "mode", mode, NULL, NULL};
                uint64_t attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
                if (op->step == STEP_DEV)
                        attr |= MOUNT_ATTR_NOEXEC;
                attach_dir(c, op->step, new_fs(c, op->step, "tmpfs", opts, attr), d, rootfd,
                           op->dst, false);
                break;
        }
        case OP_PROC:
                attach_dir(c, op->step,
                           new_fs(c, op->step, "proc", NULL,
                                  MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC),
                           d, rootfd, op->dst, false);
                break;
        case OP_DEVPTS: {
                const char *opts[] = {"newinstance", NULL,  "ptmxmode", "0666",
                                      "mode",        "620", NULL,       NULL};
                attach_dir(
                        c, op->step,
                        new_fs(c, op->step, "devpts", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC),
                        d, rootfd, op->dst, false);
                break;
        }
        case OP_RO_SELF:
                fd = open_in_root(rootfd, op->dst, O_PATH);
                if (fd < 0) {
                        if (errno == ENOENT && (op->flags & OPF_OPTIONAL))
                                break;
                        child_fail(c, op->step, errno);
                }
                tree = open_tree(
                        fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
                if (tree < 0)
                        child_fail(c, op->step, errno);
                if (set_tree_attr(tree,
                                  MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                          (op->flags & OPF_EXEC ? 0 : MOUNT_ATTR_NOEXEC),
                                  true) < 0 ||
                    move_mount(tree, "", fd, "",
                               MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                        child_fail(c, op->step, errno);
                close(tree);
                close(fd);
                if (d->fd >= 0 && at_or_above(op->dst + strspn(op->dst, "/"), d->path))
                        root_dir_forget(d); /* covered now: the path names the mount */
                break;
        case _OP_MAX:
        case _OP_INVALID:
        default:
                child_fail(c, op->step, EINVAL);
        }
}

static void secrets_in_root(const struct child *c, int rootfd);

/*
 * --rootfs (OPF_ROOT): the run's root is an overlay of the image's tree
 * (`lower`, cloned from the host read-only, nosuid, nodev) under an upper
 * layer on a tmpfs of the run's own, so the ops that follow (mount points,
 * /etc files) never write to the image. The tmpfs is attached at
 * ROOT_MOUNTPOINT with the image's tree beside the layers (overlayfs takes
 * its layers by path); the overlay is mounted over it there. Returns the
 * overlay's mount fd.
 */
static int overlay_root(const struct child *c, int lower, const char *rsize)
{
        const char *sopts[] = {"size", rsize, "mode", "0755", NULL, NULL};
        int scratch = new_fs(c, STEP_ROOTFS, "tmpfs", sopts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
        int mp = sys_openat2(AT_FDCWD, ROOT_MOUNTPOINT, O_PATH | O_DIRECTORY | O_CLOEXEC,
                             RESOLVE_STRICT);
        if (mp < 0 ||
            move_mount(scratch, "", mp, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                child_fail(c, STEP_ROOTFS, errno);
        close(mp);
        TRY(c, STEP_ROOTFS, mkdirat(scratch, "lower", 0755));
        TRY(c, STEP_ROOTFS, mkdirat(scratch, "upper", 0755));
        TRY(c, STEP_ROOTFS, mkdirat(scratch, "work", 0700));
        int l = sys_openat2(scratch, "lower", O_PATH | O_DIRECTORY | O_CLOEXEC, RESOLVE_STRICT);
        if (l < 0 ||
            move_mount(lower, "", l, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                child_fail(c, STEP_ROOTFS, errno);
        close(l);
        close(lower);
        close(scratch);
        const char *oopts[] = {
                "lowerdir", ROOT_MOUNTPOINT "/lower", "upperdir", ROOT_MOUNTPOINT "/upper",
                "workdir",  ROOT_MOUNTPOINT "/work",  NULL,       NULL};
        return new_fs(c, STEP_ROOTFS, "overlay", oopts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
}

static void build_root(const struct child *c, int trees[])
{
        const struct rf_plan *p = c->plan;
        int last_step = -1;

        step_begin(c, STEP_MOUNTNS);
        TRY(c, STEP_MOUNTNS, mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL));

        /* Every host source is cloned before anything is mounted, so no
         * mount of ours can shadow or redirect a source path. */
        for (size_t i = 0; i < p->n_ops; i++) {
                const struct plan_op *op = &p->ops[i];
                if (op->kind != OP_BIND)
                        continue;
                /* a file of the new root (bind_in_root): no host source;
                 * nor may the supervisor have sent a tree for it */
                if (op->flags & OPF_IN_ROOT) {
                        if (trees[i] >= 0)
                                child_fail(c, op->step, EPROTO);
                        continue;
                }
                if (trees[i] >= 0)
                        continue;
                /* root runs: the supervisor must have sent every user path */
                if (p->map_as_root && (op->flags & OPF_VERIFY))
                        child_fail(c, op->step, EBADF);
                trees[i] = clone_source(c, op);
        }

        step_begin(c, STEP_ROOTFS);
        char rsize[24] = ROOT_TMPFS_SIZE;
        if (p->root_extra) /* the plan bounds it (a few trust files) */
                fmt_u64(rsize, sizeof rsize, ROOT_TMPFS_BASE + p->root_extra);
        const char *ropts[] = {"size", rsize, "mode", "0755", NULL, NULL};
        bool image = p->n_ops && (p->ops[0].flags & OPF_ROOT) && p->ops[0].kind == OP_BIND;
        int rootfd = image ? overlay_root(c, trees[0], rsize)
                           : new_fs(c, STEP_ROOTFS, "tmpfs", ropts,
                                    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
        if (image)
                trees[0] = -1; /* the overlay's now */
        int mp = sys_openat2(AT_FDCWD, ROOT_MOUNTPOINT, O_PATH | O_DIRECTORY | O_CLOEXEC,
                             RESOLVE_STRICT);
        if (mp < 0 ||
            move_mount(rootfd, "", mp, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                child_fail(c, STEP_ROOTFS, errno);
        close(mp);

        struct root_dir held = {.fd = -1};
        for (size_t i = image ? 1 : 0; i < p->n_ops; i++) {
                if (p->ops[i].step != last_step)
                        step_begin(c, last_step = p->ops[i].step);
                do_op(c, &p->ops[i], trees[i], &held, rootfd);
        }
        root_dir_forget(&held);
        if (c->trust->got) {
                close(c->trust->fd);
                for (int i = 1; i < TRUST_SOURCES; i++)
                        safe_close(c->trust->src[i]);
                *c->trust = (struct trust_late){0};
        }

        step_begin(c, STEP_SECRETS);
        secrets_in_root(c, rootfd);

        /* The root itself is read-only from here on; only the planned
         * writable mounts (tmpfs, workspace, rw binds) accept writes. */
        if (set_tree_attr(rootfd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false) <
            0)
                child_fail(c, STEP_ROOTFS, errno);

        step_begin(c, STEP_PIVOT);
        TRY(c, STEP_PIVOT, fchdir(rootfd));
        TRY(c, STEP_PIVOT, syscall(SYS_pivot_root, ".", "."));
        TRY(c, STEP_PIVOT, umount2(".", MNT_DETACH));
        TRY(c, STEP_PIVOT, chdir("/"));
        close(rootfd);
}

/*
 * The blob (grant.c's grants_blob): u32 count, u32 size, then records of
 * {u8 kind, 3 pad, u32 name_len, u32 data_len, name, data}: kind 1 (env)
 * carries "NAME=value\0" as data, kind 2 (file) a NUL-terminated file name
 * and the raw value. Written by the supervisor; bounds-checked anyway.
 */
struct secret_rec {
        unsigned kind;
        const char *name;
        const unsigned char *data;
        uint32_t name_len, data_len;
};

static bool secret_next(const struct child *c, size_t *off, struct secret_rec *r)
{
        if (*off < 8)
                *off = 8;
        if (*off + 12 > c->secrets_len)
                return false;
        const unsigned char *b = c->secrets + *off;
        r->kind = b[0];
        memcpy(&r->name_len, b + 4, 4);
        memcpy(&r->data_len, b + 8, 4);
        if ((uint64_t)*off + 12 + r->name_len + r->data_len > c->secrets_len)
                return false;
        r->name = (const char *)b + 12;
        r->data = b + 12 + r->name_len;
        *off += 12 + (size_t)r->name_len + r->data_len;
        return true;
}

static void write_all(const struct child *c, int fd, const unsigned char *d, size_t n)
{
        while (n > 0) {
                ssize_t k = write(fd, d, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        child_fail(c, STEP_SECRETS, k < 0 ? errno : EIO);
                d += k;
                n -= (size_t)k;
        }
}

/*
 * File deliveries: a ramfs at /run/secrets (0700, the run user's; in a run
 * on an image /run/ringfence/secrets: run_secrets_dir), each
 * file 0400; the run's mount of it is then made read-only (the run can
 * neither add links to a value nor chmod its way around), and a writable
 * clone of it goes to the supervisor, which unlinks a file when its grant
 * is revoked. The broker socket is bound here too, while the root is still
 * writable. Runs before the root becomes read-only; no allocation.
 */
static void secrets_in_root(const struct child *c, int rootfd)
{
        const struct rf_plan *p = c->plan;

        if (p->secrets_files) {
                /* ramfs, not tmpfs: its pages are never swapped out, so a
                 * value never reaches a swap device (tmpfs's noswap is for
                 * the initial user namespace only). It has no size limit,
                 * but only init writes it, once, the values it was given;
                 * the run's view is read-only. */
                const char *opts[] = {"mode", "0700", NULL, NULL};
                int mnt = new_fs(c, STEP_SECRETS, "ramfs", opts,
                                 MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
                /* made on the root, each component without a symlink
                 * (an OCI container's mounts never reach /run/ringfence) */
                int mp = mkdir_p_in_root(rootfd, run_secrets_dir(p), 0755);
                if (mp < 0 || move_mount(mnt, "", mp, "",
                                         MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                        child_fail(c, STEP_SECRETS, errno);
                close(mp);
                int dir = sys_openat2(mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                                      RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
                if (dir < 0)
                        child_fail(c, STEP_SECRETS, errno);
                struct secret_rec r;
                for (size_t off = 0; secret_next(c, &off, &r);) {
                        if (r.kind != 2)
                                continue;
                        if (r.name_len < 2 || r.name[r.name_len - 1] != '\0')
                                child_fail(c, STEP_SECRETS, EPROTO);
                        int fd = openat(dir, r.name,
                                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
                        if (fd < 0)
                                child_fail(c, STEP_SECRETS, errno);
                        write_all(c, fd, r.data, r.data_len);
                        close(fd);
                }
                close(dir);
                /* the supervisor's writable clone, then the run's view read-only */
                int clone = open_tree(mnt, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
                if (clone < 0)
                        child_fail(c, STEP_SECRETS, errno);
                int sdir = sys_openat2(clone, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                                       RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
                if (sdir < 0 || set_tree_attr(mnt,
                                              MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                                      MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                                              false) < 0)
                        child_fail(c, STEP_SECRETS, errno);
                struct rf_msg m = {.type = MSG_SECRETS_DIR};
                int e = rf_msg_send(c->chan, &m, sdir);
                if (e < 0)
                        child_fail(c, STEP_SECRETS, -e);
                close(sdir);
                close(clone);
                close(mnt);
        }
        if (p->secrets_broker) {
                /* on the root tmpfs itself: no symlink, no other mount (a --rw
                 * bind over /run would otherwise put the socket on the host) */
                int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                int dir = sys_openat2(rootfd, "run/ringfence", O_PATH | O_DIRECTORY | O_CLOEXEC,
                                      RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV);
                if (s < 0 || dir < 0)
                        child_fail(c, STEP_SECRETS, errno);
                struct sockaddr_un a = {.sun_family = AF_UNIX};
                char num[24];
                fmt_u64(num, sizeof num, (uint64_t)dir);
                size_t o = 0;
                for (const char *q = "/proc/self/fd/"; *q;)
                        a.sun_path[o++] = *q++;
                for (const char *q = num; *q;)
                        a.sun_path[o++] = *q++;
                for (const char *q = "/broker.sock"; *q;)
                        a.sun_path[o++] = *q++;
                mode_t old = umask(0177); /* 0600: the run user's */
                int b = bind(s, (struct sockaddr *)&a, sizeof a);
                umask(old);
                close(dir);
                if (b < 0 || listen(s, 16) < 0)
                        child_fail(c, STEP_SECRETS, errno);
                struct rf_msg m = {.type = MSG_BROKER};
                int e = rf_msg_send(c->chan, &m, s);
                if (e < 0)
                        child_fail(c, STEP_SECRETS, -e);
                close(s);
        }
}

/* The command's environment: the plan's, less any name an env secret
 * binds, plus the env secrets (pointers into the blob). */
static void secrets_env(struct child *c)
{
        static char *env[PLAN_ENV_MAX + 64 + 1];
        const struct rf_plan *p = c->plan;
        struct secret_rec r;
        size_t n = 0;

        if (!c->secrets)
                return;
        for (char **e = p->envp; *e && n < PLAN_ENV_MAX; e++) {
                bool bound = false;
                for (size_t off = 0; !bound && secret_next(c, &off, &r);) {
                        const char *eq = r.kind == 1 ? memchr(r.data, '=', r.data_len) : NULL;
                        size_t l = eq ? (size_t)(eq - (const char *)r.data) : 0;
                        bound = eq && !strncmp(*e, (const char *)r.data, l + 1);
                }
                if (!bound)
                        env[n++] = *e;
        }
        for (size_t off = 0; secret_next(c, &off, &r) && n < ARRAY_SIZE(env) - 1;)
                if (r.kind == 1 && r.data_len > 0 && r.data[r.data_len - 1] == '\0')
                        env[n++] = (char *)r.data;
        env[n] = NULL;
        c->envp = env;
}

static void loopback_up(const struct child *c)
{
        int r = capture_lo_up();
        if (r < 0)
                child_fail(c, STEP_LOOPBACK, -r);
}

/*
 * The run's resolver (/etc/resolv.conf: 127.0.0.1) is a UDP socket bound
 * here, in the run's network namespace, while init still holds
 * CAP_NET_BIND_SERVICE there, and handed to the supervisor: no helper
 * process runs inside the sandbox, and the command (capability-less) can
 * neither take the port nor read the socket. The supervisor answers every
 * query REFUSED and audits it.
 */
static void dns_stub(const struct child *c)
{
        int s = capture_local_socket(SOCK_DGRAM, 53);
        if (s < 0)
                child_fail(c, STEP_DNS, -s);
        struct rf_msg m = {.type = MSG_DNS};
        int r = rf_msg_send(c->chan, &m, s);
        if (r < 0)
                child_fail(c, STEP_DNS, -r);
        close(s);
}

/*
 * The run's only ways out: 127.0.0.1:3128 (HTTP proxy) and 127.0.0.1:1080
 * (SOCKS5), listening sockets bound here inside the run's network namespace
 * and handed to the supervisor, which gives them to the run's egress
 * process outside. Nothing of ringfence's runs in the sandbox to serve them.
 */
static void egress_listeners(const struct child *c)
{
        static const uint16_t ports[] = {RF_EGRESS_HTTP_PORT, RF_EGRESS_SOCKS_PORT};
        for (size_t i = 0; i < ARRAY_SIZE(ports); i++) {
                int s = capture_local_socket(SOCK_STREAM, ports[i]);
                if (s < 0)
                        child_fail(c, STEP_EGRESS, -s);
                struct rf_msg m = {.type = MSG_LISTEN, .value = ports[i]};
                int r = rf_msg_send(c->chan, &m, s);
                if (r < 0)
                        child_fail(c, STEP_EGRESS, -r);
                close(s);
        }
}

/*
 * Transparent capture (issue 14, capture.h): the run's pool addresses,
 * default routes and nftables ruleset, installed here while init still
 * holds CAP_NET_ADMIN over the run's network namespace, then the capture
 * listeners and the NFLOG socket of refusals handed to the supervisor.
 * Every netlink reply is checked, and the table read back after the
 * commit: the command cannot start (MSG_START comes after) unless the
 * ruleset is committed, and once drop_privileges() has run nothing in the
 * run can change it. The last
 * message, MSG_CAPTURE, says which families are in place.
 */
static void capture(const struct child *c)
{
        bool v6 = false;
        /* test builds: a batch the kernel refuses, so a failing commit is
         * the real one, not a simulated errno */
#ifdef RF_TEST_BUILD
        bool fail_commit = c->plan->test_fail_step == STEP_CAPTURE;
#else
        bool fail_commit = false;
#endif
        int r = capture_install(c->plan, fail_commit, false, &v6);
        if (r < 0)
                child_fail(c, STEP_CAPTURE, -r);
        for (int fam = 0; fam < (v6 ? 2 : 1); fam++) {
                int s = capture_listener(fam == 1);
                if (s < 0)
                        child_fail(c, STEP_CAPTURE, -s);
                struct rf_msg m = {.type = MSG_LISTEN,
                                   .value = RF_EGRESS_CAPTURE_PORT | (fam ? CAPTURE_LISTEN_V6 : 0)};
                r = rf_msg_send(c->chan, &m, s);
                close(s);
                if (r < 0)
                        child_fail(c, STEP_CAPTURE, -r);
        }
        int s = capture_nflog_open();
        if (s < 0)
                child_fail(c, STEP_CAPTURE, -s);
        struct rf_msg m = {.type = MSG_NFLOG};
        r = rf_msg_send(c->chan, &m, s);
        close(s);
        if (r < 0)
                child_fail(c, STEP_CAPTURE, -r);
        m = (struct rf_msg){.type = MSG_CAPTURE, .value = CAPTURE_V4 | (v6 ? CAPTURE_V6 : 0)};
        if ((r = rf_msg_send(c->chan, &m, -1)) < 0)
                child_fail(c, STEP_CAPTURE, -r);
}

int sandbox_ptmx_open(void)
{
        struct statfs sf;
        struct stat st;

        int pts =
                sys_openat2(AT_FDCWD, "/dev/pts", O_PATH | O_DIRECTORY | O_CLOEXEC, RESOLVE_STRICT);
        if (pts < 0)
                return negative_errno();
        if (fstatfs(pts, &sf) < 0) {
                int e = errno;
                close(pts);
                return -e;
        }
        if (sf.f_type != DEVPTS_SUPER_MAGIC) {
                close(pts);
                return -ENOTTY; /* not the run's devpts: something else at /dev/pts */
        }
        int m = sys_openat2(pts, "ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC,
                            RESOLVE_STRICT | RESOLVE_BENEATH | RESOLVE_NO_XDEV);
        int e = errno;
        close(pts);
        if (m < 0)
                return -e;
        if (fstat(m, &st) < 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) != 5 ||
            minor(st.st_rdev) != 2) {
                close(m);
                return -ENOTTY;
        }
        return m;
}

/* The run's terminal comes from its own devpts instance: TIOCSTI on it
 * reaches only this pty, which the supervisor relays. */
static int make_pty(const struct child *c, unsigned short rows, unsigned short cols)
{
        int unlock = 0;
        int master = sandbox_ptmx_open();

        if (master < 0)
                child_fail(c, STEP_PTY, -master);
        TRY(c, STEP_PTY, ioctl(master, TIOCSPTLCK, &unlock));
        if (rows && cols) {
                struct winsize ws = {.ws_row = rows, .ws_col = cols};
                TRY(c, STEP_PTY, ioctl(master, TIOCSWINSZ, &ws));
        }
        int slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (slave < 0)
                child_fail(c, STEP_PTY, errno);
        struct rf_msg m = {.type = MSG_PTY};
        int r = rf_msg_send(c->chan, &m, master);
        if (r < 0)
                child_fail(c, STEP_PTY, -r);
        close(master);
        return slave;
}

/* Drop every capability for good; see the header comment, step 7. */
static void drop_privileges(const struct child *c)
{
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct d[2];

        step_begin(c, STEP_RLIMITS);
        struct rlimit core = {0, 0};
        TRY(c, STEP_RLIMITS, setrlimit(RLIMIT_CORE, &core));

        step_begin(c, STEP_CAPS);
        if (skipped(c->plan, STEP_CAPS))
                goto nnp; /* test builds only: the caps layer switched off */
        /* Capabilities are numbered 0..CAP_LAST_CAP of the running kernel
         * without gaps, and PR_CAPBSET_DROP fails with EINVAL exactly for a
         * number above it (cap_valid): the first EINVAL ends the set, so
         * the loop stops there instead of trying every number up to 63.
         * EINVAL on capability 0 would mean no capability was dropped. */
        for (int cap = 0; cap <= 63; cap++)
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
                        if (errno != EINVAL || cap == 0)
                                child_fail(c, STEP_CAPS, errno);
                        break;
                }
        TRY(c, STEP_CAPS,
            prctl(PR_SET_SECUREBITS,
                  SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                          SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                          SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
                  0, 0, 0));
        TRY(c, STEP_CAPS, prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0));
        memset(d, 0, sizeof d);
        TRY(c, STEP_CAPS, syscall(SYS_capset, &h, d));

nnp:
        step_begin(c, STEP_NNP);
        if (!skipped(c->plan, STEP_NNP))
                TRY(c, STEP_NNP, prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
        TRY(c, STEP_NNP, prctl(PR_SET_DUMPABLE, 0, 0, 0, 0));
}

/* execvp without allocation: search PATH with a stack buffer. */
static int exec_command(const struct rf_plan *p, char *const *envp)
{
        const char *file = p->exec_file ? p->exec_file : p->argv[0];
        char buf[4096];
        bool eacces = false;

        if (strchr(file, '/')) {
                execve(file, p->argv, envp);
                return -errno;
        }
        for (const char *s = p->path_env; s && *s;) {
                const char *e = strchr(s, ':');
                size_t len = e ? (size_t)(e - s) : strlen(s);
                size_t fl = strlen(file);
                if (len > 0 && len + 1 + fl < sizeof buf) {
                        memcpy(buf, s, len);
                        buf[len] = '/';
                        memcpy(buf + len + 1, file, fl + 1);
                        execve(buf, p->argv, envp);
                        if (errno == EACCES)
                                eacces = true;
                        else if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP &&
                                 errno != ENAMETOOLONG)
                                return -errno;
                }
                if (!e)
                        break;
                s = e + 1;
        }
        return eacces ? -EACCES : -ENOENT;
}

/* A "SigIgn:\t" or "SigCgt:\t" mask of /proc/self/status text (16 hex
 * digits, bit n-1 for signal n); false if absent or malformed. */
static bool status_mask(const char *text, const char *key, uint64_t *mask)
{
        const char *q = strstr(text, key);
        uint64_t v = 0;
        int n = 0;

        if (!q)
                return false;
        for (q += strlen(key); n < 16; q++, n++) {
                char ch = *q;
                unsigned d = ch >= '0' && ch <= '9'   ? (unsigned)(ch - '0')
                             : ch >= 'a' && ch <= 'f' ? (unsigned)(ch - 'a' + 10)
                                                      : 16;
                if (d == 16)
                        return false;
                v = v << 4 | d;
        }
        if (*q != '\n')
                return false;
        *mask = v;
        return true;
}

/*
 * Signal s back to SIG_DFL, by the system call: glibc's signal() refuses
 * its own real-time signals (32 and 33, EINVAL), and a caller that ignores
 * them would otherwise hand that on to the command. SIGKILL and SIGSTOP
 * fail with EINVAL, as they should.
 */
static void signal_default(int s)
{
        struct {
                void *handler;
                unsigned long flags;
                void *restorer;
                uint64_t mask;
        } ksa = {.handler = SIG_DFL};
        (void)syscall(SYS_rt_sigaction, s, &ksa, NULL, sizeof ksa.mask);
}

/*
 * Every signal back to SIG_DFL for the command. Only a disposition that is
 * not SIG_DFL needs a call, and /proc/self/status names them all: ignored
 * (SigIgn: from ringfence's caller, or SIGPIPE of the supervisor) or caught
 * (SigCgt: none in this process, reset all the same). One read instead of
 * a sigaction per signal; without a readable status, every signal.
 */
static void reset_signals(void)
{
        char buf[2048];
        uint64_t ign, cgt;
        ssize_t n = -1;

        int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                n = read(fd, buf, sizeof buf - 1);
                close(fd);
        }
        if (n <= 0 || (buf[n] = '\0', !status_mask(buf, "\nSigIgn:\t", &ign)) ||
            !status_mask(buf, "\nSigCgt:\t", &cgt))
                ign = cgt = ~(uint64_t)0;
        for (int s = 1; s <= 64; s++)
                if ((ign | cgt) >> (s - 1) & 1)
                        signal_default(s);
}

struct exec_report {
        int32_t step, err;
};
/* exec_report.step of the message that carries the seccomp listener. */
#define REPORT_LISTENER (-1)
/* exec_report.step sent right before the first execve: EOF after it means
 * the command was executed; EOF without it, that the child ended first
 * (killed while it waited for START, say). */
#define REPORT_EXECUTING (-2)

/* Send `rep` over the report socket, with `fd` attached if >= 0. */
static ssize_t report_send(int sock, const struct exec_report *rep, int fd)
{
        char cbuf[CMSG_SPACE(sizeof(int))] = {0};
        struct iovec iov = {(void *)rep, sizeof *rep};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

        if (fd >= 0) {
                mh.msg_control = cbuf;
                mh.msg_controllen = sizeof cbuf;
                struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
                cm->cmsg_level = SOL_SOCKET;
                cm->cmsg_type = SCM_RIGHTS;
                cm->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(cm), &fd, sizeof fd);
        }
        return RETRY_EINTR(sendmsg(sock, &mh, MSG_NOSIGNAL));
}

/* Receive one report; *fd gets an attached descriptor or -1. Returns the
 * bytes read (0: the command exec'd, the socket closed), or -1. */
static ssize_t report_recv(int sock, struct exec_report *rep, int *fd)
{
        char cbuf[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {rep, sizeof *rep};
        struct msghdr mh = {.msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = cbuf,
                            .msg_controllen = sizeof cbuf};
        ssize_t n = RETRY_EINTR(recvmsg(sock, &mh, MSG_CMSG_CLOEXEC));

        *fd = -1;
        if (n >= 0)
                for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
                        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
                            cm->cmsg_len == CMSG_LEN(sizeof(int)) && *fd < 0)
                                memcpy(fd, CMSG_DATA(cm), sizeof *fd);
        return n;
}

static _noreturn_ void command_child(const struct child *c, int slave, const int stdio[3],
                                     int report, uint64_t *pending)
{
        const struct rf_plan *p = c->plan;
        struct exec_report rep;
        sigset_t all;

#define CFAIL(step)                                                                                \
        do {                                                                                       \
                rep = (struct exec_report){(step), errno};                                         \
                goto fail;                                                                         \
        } while (0)

        reset_signals();
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);

        if (p->test_fail_step == STEP_SESSION) {
                errno = EPERM;
                CFAIL(STEP_SESSION);
        }
        if (setsid() < 0)
                CFAIL(STEP_SESSION);
        if (slave >= 0) {
                if (ioctl(slave, TIOCSCTTY, 0) < 0)
                        CFAIL(STEP_SESSION);
                for (int i = 0; i < 3; i++)
                        if (dup2(slave, i) < 0)
                                CFAIL(STEP_SESSION);
        } else {
                /* stdio may sit on 0..2 already; dup3 to a high slot first */
                int hi[3];
                for (int i = 0; i < 3; i++)
                        if ((hi[i] = fcntl(stdio[i], F_DUPFD_CLOEXEC, 10)) < 0)
                                CFAIL(STEP_SESSION);
                for (int i = 0; i < 3; i++)
                        if (dup2(hi[i], i) < 0)
                                CFAIL(STEP_SESSION);
        }
        /* Only 0, 1, 2 and the engine's preserved fds (3..3+N-1, passed
         * close-on-exec until here) survive exec; the report pipe closes on
         * success. */
        unsigned keep = 3 + p->preserve_fds;
        if (syscall(SYS_close_range, keep, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
                CFAIL(STEP_SESSION);
        for (unsigned fd = 3; fd < keep; fd++)
                if (fcntl((int)fd, F_SETFD, 0) < 0)
                        CFAIL(STEP_SESSION);
        if (p->test_fail_step == STEP_CWD) {
                errno = EPERM;
                CFAIL(STEP_CWD);
        }
        if (chdir(p->cwd) < 0)
                CFAIL(STEP_CWD);
        /* The CVE-2024-21626 class: a cwd reached through a descriptor
         * (/proc/self/fd/N) the caller leaked in may lie outside the root;
         * the kernel then reports it unreachable, glibc's getcwd as ENOENT
         * (or a path not starting with '/'). Such a cwd is refused. */
        {
                char wd[PATH_MAX];
                if (!getcwd(wd, sizeof wd))
                        CFAIL(STEP_CWD);
                if (wd[0] != '/') {
                        errno = ENOENT;
                        CFAIL(STEP_CWD);
                }
        }
        if (p->nofile) {
                struct rlimit rl = {p->nofile, p->nofile};
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        CFAIL(STEP_RLIMITS);
        }
        if (p->fsize) {
                struct rlimit rl = {p->fsize, p->fsize};
                if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
                        CFAIL(STEP_RLIMITS);
        }
        if (p->nproc_fallback) {
                /* no cgroup for the pids limit: RLIMIT_NPROC (per uid) instead */
                struct rlimit rl = {p->nproc_fallback, p->nproc_fallback};
                if (setrlimit(RLIMIT_NPROC, &rl) < 0)
                        CFAIL(STEP_RLIMITS);
        }
        /* The workspace stays its owner's: created files and directories
         * never get group/other write (the filter keeps the umask's 022,
         * see seccomp.c). The caller's stricter bits stay. */
        umask(umask(022) | 022);
        /* The last two layers, in this order: Landlock needs its own
         * syscalls, which the seccomp filter then no longer allows. */
        if (!skipped(p, STEP_LANDLOCK)) {
                int r = p->test_fail_step == STEP_LANDLOCK ? -EPERM : landlock_apply(p);
                if (r < 0) {
                        errno = -r;
                        CFAIL(STEP_LANDLOCK);
                }
        }
        if (!skipped(p, STEP_SECCOMP)) {
                int r = p->test_fail_step == STEP_SECCOMP ? -EPERM : seccomp_apply(p);
                if (r < 0) {
                        errno = -r;
                        CFAIL(STEP_SECCOMP);
                }
                /* init answers the umask() calls the filter hands on */
                rep = (struct exec_report){REPORT_LISTENER, 0};
                if (report_send(report, &rep, r) < 0)
                        CFAIL(STEP_SECCOMP);
                close(r);
                /* a container's own profile on top: the stricter verdict wins */
                if (p->seccomp_extra.filter) {
                        struct sock_fprog extra = {.len = p->seccomp_extra.len,
                                                   .filter = p->seccomp_extra.filter};
                        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &extra) < 0)
                                CFAIL(STEP_SECCOMP);
                }
        }
        /* Made before START (spawn_command): every layer is on, and the
         * command waits for the supervisor's START here, on init's channel
         * (init is suspended until the command is executed). A signal the
         * supervisor forwards meanwhile is kept for the command (`pending`,
         * which init reads); the supervisor gone (EOF) or anything else,
         * and nothing of the command ever runs. */
        /* test builds: the child ends before it executes anything (as if
         * killed while it waited); raw system calls: glibc's raise() would
         * take init's thread id from the TLS this child shares */
        if (p->test_fail_step == STEP_EXEC)
                (void)syscall(SYS_kill, (pid_t)syscall(SYS_getpid), SIGKILL);
        if (pending) {
                struct rf_msg m;
                for (;;) {
                        if (rf_msg_recv(c->chan, &m, NULL) <= 0) {
                                errno = ECANCELED;
                                CFAIL(STEP_EXEC);
                        }
                        if (m.type == MSG_START)
                                break;
                        if (m.type != MSG_SIGNAL) {
                                errno = EPROTO;
                                CFAIL(STEP_CGROUP);
                        }
                        if (m.value > 0 && m.value < 64)
                                __atomic_or_fetch(pending, 1ULL << m.value, __ATOMIC_RELAXED);
                }
        }
        rep = (struct exec_report){REPORT_EXECUTING, 0};
        if (report_send(report, &rep, -1) < 0)
                CFAIL(STEP_EXEC);
        errno = -exec_command(p, c->envp ? c->envp : p->envp);
        rep = (struct exec_report){STEP_EXEC, errno};
fail:
        (void)report_send(report, &rep, -1);
        _exit(127);
#undef CFAIL
}

/* ---- joining a run (OCI exec) ---------------------------------------------- */

_noreturn_ void sandbox_join(const struct rf_plan *p, int slave, const int stdio[3], int report)
{
        struct trust_late trust = {0};
        struct child c = {.plan = p, .chan = report, .trust = &trust};

        /* the run's user, as init became it (a rootless run's is the
         * caller's own, mapped to itself: nothing to change) */
        if (p->map_as_root) {
                step_begin(&c, STEP_IDMAP);
                TRY(&c, STEP_IDMAP, setgroups(0, NULL));
                TRY(&c, STEP_IDMAP, setresgid(p->gid, p->gid, p->gid));
                TRY(&c, STEP_IDMAP, setresuid(p->uid, p->uid, p->uid));
        }
        drop_privileges(&c);
        command_child(&c, slave, stdio, report, NULL);
}

int sandbox_join_report(int report, int *step)
{
        union {
                struct exec_report rep;
                struct rf_msg msg;
        } u;
        for (;;) {
                char cbuf[CMSG_SPACE(sizeof(int))];
                struct iovec iov = {&u, sizeof u};
                struct msghdr mh = {.msg_iov = &iov,
                                    .msg_iovlen = 1,
                                    .msg_control = cbuf,
                                    .msg_controllen = sizeof cbuf};
                ssize_t n = RETRY_EINTR(recvmsg(report, &mh, MSG_CMSG_CLOEXEC));
                for (struct cmsghdr *cm = n >= 0 ? CMSG_FIRSTHDR(&mh) : NULL; cm;
                     cm = CMSG_NXTHDR(&mh, cm))
                        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
                                int fd;
                                memcpy(&fd, CMSG_DATA(cm), sizeof fd);
                                close(fd); /* the umask listener: nobody answers, ENOSYS */
                        }
                if (n == 0)
                        return 0; /* closed on exec */
                *step = STEP_EXEC;
                if (n == (ssize_t)sizeof u.rep &&
                    (u.rep.step == REPORT_LISTENER || u.rep.step == REPORT_EXECUTING))
                        continue;
                if (n == (ssize_t)sizeof u.rep) {
                        *step = u.rep.step;
                        return -(u.rep.err > 0 ? u.rep.err : EIO);
                }
                if (n == (ssize_t)sizeof u.msg && u.msg.type == MSG_FAIL) {
                        *step = u.msg.step;
                        return -(u.msg.err > 0 ? u.msg.err : EIO);
                }
                return n < 0 ? negative_errno() : -EPROTO;
        }
}

/*
 * A published port (supervisor/publish.h): a socket connected, from inside
 * the run's network namespace, to the run's 127.0.0.1 — or, where nothing
 * listens there, [::1] — port m->value, sent back for the supervisor to
 * relay. Only the plan's published run ports: the supervisor cannot make
 * init connect anywhere else. init waits at most 100 ms for the loopback's
 * answer (it must go on reaping): a connect still going is handed over.
 */
static void publish_connect(const struct child *c, const struct rf_msg *m)
{
        struct rf_msg rep = {
                .type = MSG_CONNECTED, .step = m->step, .value = m->value, .err = EPERM};
        int s = -1;
        bool listed = false;

        for (size_t i = 0; i < c->plan->n_publish; i++)
                listed |= m->value == c->plan->publish_ports[i];
        for (int fam = 0; listed && fam < 2; fam++) {
                union {
                        struct sockaddr sa;
                        struct sockaddr_in in;
                        struct sockaddr_in6 in6;
                } a = {0};
                socklen_t alen = fam ? sizeof a.in6 : sizeof a.in;
                if (fam)
                        a.in6 = (struct sockaddr_in6){.sin6_family = AF_INET6,
                                                      .sin6_port = htons((uint16_t)m->value),
                                                      .sin6_addr = IN6ADDR_LOOPBACK_INIT};
                else
                        a.in = (struct sockaddr_in){.sin_family = AF_INET,
                                                    .sin_port = htons((uint16_t)m->value),
                                                    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
                s = socket(a.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                int r = s < 0 ? -1 : connect(s, &a.sa, alen);
                if (r < 0 && s >= 0 && errno == EINPROGRESS) {
                        /* the loopback answers within microseconds; a full
                         * backlog leaves it connecting, handed over as is */
                        struct pollfd pw = {.fd = s, .events = POLLOUT};
                        int e = 0;
                        socklen_t el = sizeof e;
                        r = poll(&pw, 1, 100) <= 0                             ? 0
                            : getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &el) < 0 ? -1
                            : e                                                ? (errno = e, -1)
                                                                               : 0;
                }
                if (r == 0) {
                        rep.err = 0;
                        rep.value |= fam ? CONNECTED_V6 : 0;
                        break;
                }
                rep.err = errno;
                s = safe_close(s);
        }
        (void)rf_msg_send(c->chan, &rep, s);
        safe_close(s);
}

/* After the command's end: reap what else has ended and tell whether any
 * process of the run is left (msg.h, EXIT_ALONE). __WALL: whatever a
 * child's exit signal (orphans given to init get SIGCHLD anyway). An
 * engine's process joining the namespaces (OCI exec) is not init's child:
 * clone_parent runs never ask. */
static bool init_alone(void)
{
        for (;;) {
                siginfo_t si = {0};
                if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | __WALL) < 0) {
                        if (errno == EINTR)
                                continue;
                        return errno == ECHILD;
                }
                if (si.si_pid == 0)
                        return false; /* a child still runs */
        }
}

/* pid 1 of the run after the command started: reap, forward, report, and
 * answer the seccomp filter's umask() notifications (listener, or -1). */
static _noreturn_ void init_loop(const struct child *c, pid_t cmd, int listener)
{
        sigset_t chld;
        struct rf_msg m;

        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0)
                _exit(125);
        for (;;) {
                int status;
                pid_t pid;
                while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
                        if (pid == cmd) {
                                m = (struct rf_msg){.type = MSG_EXIT,
                                                    .value = status,
                                                    .step = !c->plan->clone_parent && init_alone()
                                                                    ? EXIT_ALONE
                                                                    : 0};
                                (void)rf_msg_send(c->chan, &m, -1);
                                /* Our exit takes every other process of the
                                 * run with it (pid namespace teardown). The
                                 * shim that reaps an OCI init reads the
                                 * command's status from it. */
                                if (!c->plan->clone_parent)
                                        _exit(0);
                                _exit(WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                                          : WEXITSTATUS(status));
                        }
                struct pollfd pfd[3] = {{.fd = sfd, .events = POLLIN},
                                        {.fd = c->chan, .events = POLLIN},
                                        {.fd = listener, .events = POLLIN}};
                if (poll(pfd, 3, -1) < 0 && errno != EINTR)
                        _exit(125);
                if (pfd[2].revents & POLLIN) {
                        if (seccomp_umask_answer(listener) < 0)
                                listener = safe_close(listener); /* callers get ENOSYS */
                } else if (pfd[2].revents) {
                        listener = safe_close(listener); /* no filtered process left */
                }
                if (pfd[0].revents) {
                        struct signalfd_siginfo si;
                        while (read(sfd, &si, sizeof si) > 0)
                                ;
                }
                if (pfd[1].revents) {
                        int r = rf_msg_recv(c->chan, &m, NULL);
                        if (r <= 0 && r != -EBADMSG)
                                _exit(125); /* supervisor gone: the run goes too */
                        if (r > 0 && m.type == MSG_SIGNAL && m.value > 0 && m.value < NSIG &&
                            m.value != SIGKILL && m.value != SIGSTOP)
                                (void)kill(-cmd, m.value);
                        /* negative: every process of the namespace but
                         * init itself (ringfence-oci kill --all) */
                        if (r > 0 && m.type == MSG_SIGNAL && m.value < 0 && m.value > -NSIG &&
                            m.value != -SIGKILL && m.value != -SIGSTOP)
                                (void)kill(-1, -m.value);
                        if (r > 0 && m.type == MSG_CONNECT)
                                publish_connect(c, &m);
                }
        }
}

/* init inherits the supervisor's whole fd table: keep only the channel,
 * the command's stdio and the fds it is to keep (preserve_fds: 3..3+N-1,
 * which the supervisor opened nothing over); host fds 0-2 become
 * /dev/null. */
static void close_inherited(const struct child *c, const int stdio[3])
{
        int keep[4] = {c->chan, stdio[0], stdio[1], stdio[2]};
        unsigned next = 3 + c->plan->preserve_fds;

        for (int i = 0; i < 4; i++)
                if (keep[i] >= 3 && (unsigned)keep[i] < next)
                        child_fail(c, STEP_PIDNS, EBADF); /* ours among the engine's */

        for (int i = 0; i < 4; i++) /* insertion sort, four elements */
                for (int j = i; j > 0 && keep[j] < keep[j - 1]; j--) {
                        int t = keep[j];
                        keep[j] = keep[j - 1];
                        keep[j - 1] = t;
                }
        for (int i = 0; i < 4; i++) {
                if (keep[i] < (int)next)
                        continue;
                if ((unsigned)keep[i] > next &&
                    syscall(SYS_close_range, next, (unsigned)keep[i] - 1, 0) < 0)
                        child_fail(c, STEP_PIDNS, errno);
                next = (unsigned)keep[i] + 1;
        }
        if (syscall(SYS_close_range, next, ~0U, 0) < 0)
                child_fail(c, STEP_PIDNS, errno);
        int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (nul < 0)
                child_fail(c, STEP_PIDNS, errno);
        for (int i = 0; i < 3; i++)
                if (dup2(nul, i) < 0)
                        child_fail(c, STEP_PIDNS, errno);
        if (nul > 2)
                close(nul);
}

/*
 * init is a fork of the supervisor without exec, so /proc/1/cmdline inside
 * would show ringfence's whole command line (policy paths, --env values,
 * identities). Zero the argument and environment areas of this copy: the
 * kernel reads cmdline from that memory, and nothing of it is needed here.
 */
/* [start, end) of this process's argument and environment strings, as
 * main saw them (sandbox_note_cmdline), or NULL */
static char *cmdline_start, *cmdline_end;

void sandbox_note_cmdline(char **argv)
{
        char *lo = NULL, *hi = NULL;
        size_t sum = 0;
        char **lists[2] = {argv, environ};
        for (int l = 0; l < 2; l++)
                for (char **v = lists[l]; v && *v; v++) {
                        size_t len = strlen(*v) + 1;
                        char *e = *v + len;
                        sum += len;
                        if (!lo || *v < lo)
                                lo = *v;
                        if (!hi || e > hi)
                                hi = e;
                }
        /* The kernel lays them out back to back from argv[0]: anything else
         * (a string put in the environment before main, say) and init
         * finds them in /proc/self/stat instead. */
        if (argv && lo == argv[0] && hi > lo && (size_t)(hi - lo) == sum && sum < (1UL << 24)) {
                cmdline_start = lo;
                cmdline_end = hi;
        }
}

static void wipe_cmdline(void)
{
        if (cmdline_start) {
                explicit_bzero(cmdline_start, (size_t)(cmdline_end - cmdline_start));
                return;
        }
        char buf[2048];
        int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
                return;
        buf[n] = '\0';
        char *s = strrchr(buf, ')'); /* comm may contain spaces */
        if (!s)
                return;
        /* after ") " comes field 3; we want fields 48..51 */
        unsigned long v[52] = {0};
        int field = 2;
        for (char *t = s + 1; *t && field < 51;) {
                while (*t == ' ')
                        t++;
                field++;
                unsigned long x = 0;
                while (*t >= '0' && *t <= '9')
                        x = x * 10 + (unsigned long)(*t++ - '0');
                while (*t && *t != ' ')
                        t++;
                v[field] = x;
        }
        if (field < 51)
                return;
        for (int f = 48; f <= 50; f += 2)
                if (v[f] && v[f + 1] > v[f] && v[f + 1] - v[f] < (1UL << 24))
                        explicit_bzero((void *)v[f], v[f + 1] - v[f]);
}

/* A sanitizer keeps its state per address space and per thread (meson
 * defines RF_SANITIZED with b_sanitize): such a build's command child
 * copies init's memory rather than share it. */
#ifndef RF_SANITIZED
#define RF_SANITIZED 0
#endif

/* The command child's stack (spawn_command), above a guard page. */
#define CMD_STACK_SIZE (256 * 1024)

struct cmd_args {
        const struct child *c;
        int slave;
        const int *stdio;
        int report;        /* the child's end of the report socket */
        uint64_t *pending; /* non-NULL: wait for START, keep forwarded signals here */
};

static int command_main(void *arg)
{
        const struct cmd_args *a = arg;
        command_child(a->c, a->slave, a->stdio, a->report, a->pending);
}

/*
 * Start the command child and return once it has executed the command or
 * failed (its report says which): a vfork, on a stack of its own, so init
 * copies no page table and the child runs at once on init's CPU. With
 * `pending` (a MAP_SHARED page's word), the child puts every layer on and
 * then waits for START itself (command_child), so its setup overlaps the
 * supervisor's last checks. Init keeps report[0]; the command keeps the
 * pty slave, stdio and the secrets' environment, which init lets go of
 * here. Sanitizer builds copy init's memory instead (RF_SANITIZED).
 */
static pid_t spawn_command(struct child *c, int *slave, const int stdio[3], int report[2],
                           uint64_t *pending)
{
        /* a socket, not a pipe: it also carries the seccomp listener */
        TRY(c, STEP_EXEC, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, report));
        long page = sysconf(_SC_PAGESIZE);
        size_t size = CMD_STACK_SIZE + (size_t)page;
        char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack == MAP_FAILED)
                child_fail(c, STEP_EXEC, errno);
        if (mprotect(stack, (size_t)page, PROT_NONE) < 0)
                child_fail(c, STEP_EXEC, errno);
        struct cmd_args a = {
                .c = c, .slave = *slave, .stdio = stdio, .report = report[1], .pending = pending};
#if RF_SANITIZED
        int flags = CLONE_VFORK | SIGCHLD;
#else
        int flags = CLONE_VM | CLONE_VFORK | SIGCHLD;
#endif
        pid_t cmd = clone(command_main, stack + size, flags, &a);
        int e = errno;
        /* the stack stays mapped for init's life: an unmap now would flush
         * the TLB of every CPU the child ran on, for 256 KiB of address
         * space of which it touched a few pages */
        if (cmd < 0)
                child_fail(c, STEP_EXEC, e);
        close(report[1]);
        *slave = safe_close(*slave);
        /* the command has its environment: init keeps no secret */
        if (c->secrets)
                munmap((void *)c->secrets, c->secrets_len);
        c->secrets = NULL;
        /* The command has its stdio now; ours must go, or the supervisor
         * would never see EOF on the run's output. */
        for (int i = 0; i < 3; i++)
                if (stdio[i] > 2)
                        (void)close(stdio[i]);
        return cmd;
}

static _noreturn_ void run_init(const struct rf_plan *p, int chan, const int stdio[3])
{
        struct trust_late trust = {0};
        struct child c = {.plan = p, .chan = chan, .trust = &trust};
        struct rf_msg m;

        /* If the supervisor dies, so does the run (and with init, everything
         * in its pid namespace). The GO handshake below closes the race of
         * the supervisor dying before this prctl. */
        if (!p->clone_parent && prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                child_fail(&c, STEP_PIDNS, errno);
        /* cloned beside the supervisor (clone_parent), init's parent is the
         * engine's shim: the channel's end (EOF at every wait below and in
         * init_loop) is what ends the run when the supervisor dies */
        close_inherited(&c, stdio);
        wipe_cmdline();
        /* Leave the caller's session: init has no controlling terminal. */
        if (setsid() < 0)
                child_fail(&c, STEP_SESSION, errno);
        /* The supervisor (non-dumpable) can open /proc/PID/uid_map of a
         * non-dumpable child only as host root. So, unless it is host root
         * (map_as_root: it writes the maps as soon as the clone returns,
         * while this process starts), init is dumpable just while the maps
         * are written — nothing of the run exists yet — then non-dumpable
         * for good. */
        if (!p->map_as_root) {
                (void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
                m = (struct rf_msg){.type = MSG_READY};
                if (rf_msg_send(chan, &m, -1) < 0)
                        _exit(125);
        }
        /* Trees the supervisor cloned for us (root runs), then GO. Static:
         * init is this fork's only thread, and a 16 KiB array on its stack
         * would cost a page fault per page it spans (only the plan's
         * n_ops entries are used, and touched). */
        static int trees[PLAN_OPS_MAX];
        bool placed = false;
        for (size_t i = 0; i < p->n_ops; i++)
                trees[i] = -1;
        for (;;) {
                int fd = -1;
                int r = rf_msg_recv(chan, &m, &fd);
                if (r <= 0)
                        _exit(125);
                if (m.type == MSG_GO) {
                        placed = m.value & GO_PLACED;
                        break;
                }
                if (m.type == MSG_SECRETS && fd >= 0 && !c.secrets) {
                        struct stat st;
                        if (fstat(fd, &st) < 0 || st.st_size < 8 || st.st_size > (8 << 20))
                                child_fail(&c, STEP_SECRETS, EPROTO);
                        void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
                        if (map == MAP_FAILED)
                                child_fail(&c, STEP_SECRETS, errno);
                        close(fd);
                        c.secrets = map;
                        c.secrets_len = (size_t)st.st_size;
                        continue;
                }
                if (m.type != MSG_TREE || m.value < 0 || (size_t)m.value >= p->n_ops ||
                    trees[m.value] >= 0 || fd < 0)
                        child_fail(&c, STEP_IDMAP, EPROTO);
                trees[m.value] = fd;
        }
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                child_fail(&c, STEP_USERNS, errno);
        if (p->map_as_root) {
                /* Become the run user: no supplementary groups (root's would
                 * otherwise survive), the mapped gid and uid. Capabilities
                 * in this user namespace are kept until drop_privileges(). */
                step_begin(&c, STEP_IDMAP);
                TRY(&c, STEP_IDMAP, setgroups(0, NULL));
                TRY(&c, STEP_IDMAP, setresgid(p->gid, p->gid, p->gid));
                TRY(&c, STEP_IDMAP, setresuid(p->uid, p->uid, p->uid));
        }

        /* the run's own namespaces' sysctls: the files a /proc/sys name
         * opens are those of the opener's namespaces (net, ipc). Through a
         * procfs of init's own, detached (never attached anywhere, so
         * nothing can be mounted over a file of it), each file reached
         * with no symlink and no mount crossed and checked to be procfs's:
         * a write meant for /proc/sys never lands on another file (the
         * runc CVE-2025-52881 class: the host's /proc, which this mount
         * namespace copied, may have something mounted over a file) */
        if (p->n_sysctl) {
                step_begin(&c, STEP_SYSCTL);
                int proc = new_fs(&c, STEP_SYSCTL, "proc", NULL,
                                  MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
                for (size_t i = 0; i < p->n_sysctl; i++) {
                        struct statfs sf;
                        int fd = sys_openat2(proc, p->sysctl_path[i] + strlen("/proc/"),
                                             O_WRONLY | O_CLOEXEC,
                                             RESOLVE_STRICT | RESOLVE_BENEATH | RESOLVE_NO_XDEV);
                        if (fd < 0)
                                child_fail(&c, STEP_SYSCTL, errno);
                        if (fstatfs(fd, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC)
                                child_fail(&c, STEP_SYSCTL, EXDEV);
                        size_t vl = strlen(p->sysctl_value[i]);
                        if (write(fd, p->sysctl_value[i], vl) != (ssize_t)vl)
                                child_fail(&c, STEP_SYSCTL, errno ? errno : EIO);
                        close(fd);
                }
                close(proc);
        }
        build_root(&c, trees);

        step_begin(&c, STEP_HOSTNAME);
        if (p->join_ns[PLAN_JOIN_UTS] < 0) /* a pod's keeps its own */
                TRY(&c, STEP_HOSTNAME, sethostname(p->hostname, strlen(p->hostname)));
        /* a pod's network namespace is configured by the run that made it,
         * a root run's by the supervisor (net_setup) */
        if (!skipped(p, STEP_NETNS) && p->join_ns[PLAN_JOIN_NET] < 0 && !net_by_supervisor(p)) {
                step_begin(&c, STEP_LOOPBACK);
                loopback_up(&c);
                step_begin(&c, STEP_DNS);
                dns_stub(&c);
                step_begin(&c, STEP_EGRESS);
                egress_listeners(&c);
                if (p->capture)
                        capture(&c);
        }
        int slave = -1;
        if (p->use_pty) {
                step_begin(&c, STEP_PTY);
                slave = make_pty(&c, m.rows, m.cols);
        }
        secrets_env(&c);
        drop_privileges(&c);
        if (p->clone_parent) { /* OCI create returns now (docs/OCI.md) */
                m = (struct rf_msg){.type = MSG_BUILT};
                if (rf_msg_send(chan, &m, -1) < 0)
                        _exit(125);
        }

        /* The command starts only when the supervisor says so: inside the
         * run's cgroups, with the run registered and its uid vetted. Where
         * init is in its cgroups already (no v1 migration follows), the
         * command child is made now, puts its layers on and takes START
         * itself (spawn_command); where a migration follows, or for an OCI
         * create's init (held until `start`, its hooks' processes reaped
         * by the kernel meanwhile), init takes START and makes it after. A
         * signal the supervisor forwards meanwhile is kept for the
         * command. */
        int report[2];
        uint64_t pending = 0;
        pid_t cmd;
        /* the command's end is init's to reap, whatever ringfence's caller
         * left SIGCHLD at */
        struct sigaction dfl = {.sa_handler = SIG_DFL}, ign = {.sa_handler = SIG_IGN};
        if (placed && !p->clone_parent) {
                (void)sigaction(SIGCHLD, &dfl, NULL);
                uint64_t *shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE,
                                        MAP_SHARED | MAP_ANONYMOUS, -1, 0); /* zeroed */
                if (shared == MAP_FAILED)
                        child_fail(&c, STEP_EXEC, errno);
                cmd = spawn_command(&c, &slave, stdio, report, shared);
                pending = __atomic_load_n(shared, __ATOMIC_RELAXED); /* page kept: as the stack */
        } else {
                /* meanwhile (an OCI create's hold), what a process of a
                 * createContainer or startContainer hook left here
                 * (ringfence-oci kills it) is reaped by the kernel: init
                 * has no child of its own */
                (void)sigaction(SIGCHLD, &ign, NULL);
                for (;;) {
                        int r = rf_msg_recv(chan, &m, NULL);
                        if (r <= 0)
                                _exit(125);
                        if (m.type == MSG_START)
                                break;
                        if (m.type == MSG_SIGNAL && m.value > 0 && m.value < 64)
                                pending |= 1ULL << m.value;
                        else if (m.type != MSG_SIGNAL)
                                child_fail(&c, STEP_CGROUP, EPROTO);
                }
                (void)sigaction(SIGCHLD, &dfl, NULL);
                cmd = spawn_command(&c, &slave, stdio, report, NULL);
        }

        struct exec_report rep;
        int listener = -1, fd = -1;
        bool executing = false;
        ssize_t n;
        for (;;) {
                n = report_recv(report[0], &rep, &fd);
                if (n != (ssize_t)sizeof rep)
                        break; /* EOF: executed, or ended (see executing) */
                if (rep.step == REPORT_LISTENER && fd >= 0 && listener < 0) {
                        listener = fd;
                        fd = -1;
                        continue;
                }
                fd = safe_close(fd);
                if (rep.step == REPORT_EXECUTING && !executing) {
                        executing = true;
                        continue;
                }
                break; /* a step that failed */
        }
        safe_close(fd);
        close(report[0]);
        /* the child ended before it executed anything: never EXEC_OK */
        if (n != (ssize_t)sizeof rep && !executing) {
                n = (ssize_t)sizeof rep;
                rep = (struct exec_report){STEP_EXEC, ECANCELED};
        }
        if (n == (ssize_t)sizeof rep) {
                m = (struct rf_msg){.type = MSG_FAIL, .step = rep.step, .err = rep.err};
                (void)rf_msg_send(chan, &m, -1);
                (void)waitpid(cmd, NULL, 0);
                /* the shim of an OCI init reads its status: 127 for a
                 * command not found, 126 for one not executable, as a
                 * shell (and runc) would say */
                if (p->clone_parent && rep.step == STEP_EXEC)
                        _exit(rep.err == ENOENT ? 127 : 126);
                _exit(125);
        }
        m = (struct rf_msg){.type = MSG_EXEC_OK};
        (void)rf_msg_send(chan, &m, -1);
        for (int sig = 1; sig < 64; sig++)
                if ((pending & (1ULL << sig)) && sig != SIGKILL && sig != SIGSTOP)
                        (void)kill(-cmd, sig);
        init_loop(&c, cmd, listener);
}

/* ---- parent side ----------------------------------------------------------- */

static int write_file(pid_t pid, const char *name, const char *data)
{
        char path[64];

        snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        ssize_t n = write(fd, data, strlen(data));
        if (n < 0)
                return negative_errno();
        return n == (ssize_t)strlen(data) ? 0 : -EIO;
}

int sandbox_start(const struct rf_child *c, struct rf_error *err)
{
        struct rf_msg start = {.type = MSG_START};
        int r = rf_msg_send(c->chan, &start, -1);
        if (r < 0)
                return rf_error_set(err, r, "cannot start the run's command: %s", strerror(-r));
        return 0;
}

/*
 * Root runs: clone every user-named path (workspace, policy binds) here,
 * as host root, and hand the detached trees to init. The workspace (and
 * writable paths owned like it) is idmapped through the run's own user
 * namespace: its owner on disk appears as the run uid, and what the run
 * writes lands owned by the owner — never by the run's host uid.
 */
/*
 * A user namespace mapping the host ids ou/og (a tree's owner) to hu/hg
 * (the run's host ids), for an OPF_IDMAP_OWNER tree's idmap (an idmapped
 * mount shows an on-disk id as the outside id its namespace maps it to).
 * Made by a child that unshares and waits while root writes its maps; the
 * namespace outlives it through the returned fd. An fd or -errno.
 */
static int owner_userns(uid_t ou, gid_t og, uid_t hu, gid_t hg)
{
        int up[2], go[2];
        char map[64];
        if (pipe2(up, O_CLOEXEC) < 0)
                return negative_errno();
        if (pipe2(go, O_CLOEXEC) < 0) {
                int e = negative_errno();
                close_pair(up);
                return e;
        }
        pid_t pid = fork();
        if (pid == 0) {
                close(up[0]);
                close(go[1]); /* so that the parent's close ends the read below */
                char c = unshare(CLONE_NEWUSER) == 0 ? 'u' : 'x';
                (void)!write(up[1], &c, 1);
                (void)!read(go[0], &c, 1); /* until the maps are written and read */
                _exit(0);
        }
        close(up[1]);
        close(go[0]);
        int r = pid < 0 ? negative_errno() : 0, fd = -1;
        char c = 0;
        if (r == 0 && (RETRY_EINTR(read(up[0], &c, 1)) != 1 || c != 'u'))
                r = -EPERM;
        if (r == 0 && (r = write_file(pid, "setgroups", "deny")) >= 0) {
                snprintf(map, sizeof map, "%u %u 1\n", (unsigned)ou, (unsigned)hu);
                if ((r = write_file(pid, "uid_map", map)) >= 0) {
                        snprintf(map, sizeof map, "%u %u 1\n", (unsigned)og, (unsigned)hg);
                        r = write_file(pid, "gid_map", map);
                }
        }
        if (r >= 0) {
                snprintf(map, sizeof map, "/proc/%d/ns/user", (int)pid);
                if ((fd = open(map, O_RDONLY | O_CLOEXEC)) < 0)
                        r = negative_errno();
        }
        close(go[1]); /* the child ends */
        close(up[0]);
        if (pid > 0)
                (void)RETRY_EINTR(waitpid(pid, NULL, 0));
        return r < 0 ? r : fd;
}

/* The type of the filesystem at `path` as /proc/self/mountinfo names it
 * (the topmost mount of its device: "ramfs", "fuse.sshfs"), else its
 * statfs magic number, into buf: for an error line only (the supervisor). */
static void fs_type_name(const char *path, char *buf, size_t len)
{
        struct stat st;
        struct statfs sf;
        snprintf(buf, len, "type 0x%lx", statfs(path, &sf) == 0 ? (unsigned long)sf.f_type : 0UL);
        if (stat(path, &st) < 0)
                return;
        FILE *f = fopen("/proc/self/mountinfo", "re");
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        if (!f)
                return;
        while (getline(&line, &cap, f) > 0) {
                unsigned maj, min;
                const char *sep = strstr(line, " - ");
                if (!sep || sscanf(line, "%*s %*s %u:%u", &maj, &min) != 2)
                        continue;
                size_t n = strcspn(sep + 3, " \n");
                if (maj == major(st.st_dev) && min == minor(st.st_dev) && n > 0 && n < len)
                        snprintf(buf, len, "%.*s", (int)n, sep + 3); /* the last: topmost */
        }
        fclose(f);
}

static int send_trees(const struct rf_plan *plan, pid_t pid, int chan, struct rf_error *err)
{
        char path[64];
        int r = 0;

        snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
        _cleanup_close_ int userns = open(path, O_RDONLY | O_CLOEXEC);
        if (userns < 0)
                return rf_error_set(err, negative_errno(), "cannot set up %s (%s): %m",
                                    rf_step_what(STEP_IDMAP), rf_step_name(STEP_IDMAP));
        for (size_t i = 0; i < plan->n_ops; i++) {
                const struct plan_op *op = &plan->ops[i];
                if (op->kind != OP_BIND || !(op->flags & OPF_VERIFY))
                        continue;
                if (plan->test_fail_step == STEP_IDMAP)
                        r = -EPERM;
                else if (op->flags & OPF_IDMAP_OWNER) {
                        /* its owner shown as the run's user (plan.h) */
                        _cleanup_close_ int own = owner_userns(op->owner_uid, op->owner_gid,
                                                               plan->host_uid, plan->host_gid);
                        r = own < 0 ? own : tree_from_host(op, own);
                } else
                        r = tree_from_host(op, (op->flags & OPF_IDMAP) ? userns : -1);
                if (r == -EINVAL && (op->flags & OPF_VOLUME)) {
                        /* an engine's volume: never bound un-idmapped */
                        char type[64];
                        fs_type_name(op->src, type, sizeof type);
                        return rf_error_set(err, r,
                                            "mount %s: its source %s (%s), or a mount beneath "
                                            "it, cannot be idmapped: a container with a host "
                                            "uid of its own gets its binds idmapped "
                                            "(docs/OCI.md)",
                                            op->dst, op->src, type);
                }
                if (r < 0) {
                        bool idmap = plan->test_fail_step == STEP_IDMAP ||
                                     (r == -EINVAL && (op->flags & (OPF_IDMAP | OPF_IDMAP_OWNER)));
                        int step = idmap ? STEP_IDMAP : op->step;
                        return rf_error_set(
                                err, r, "cannot set up %s (%s): %s: %s", rf_step_what(step),
                                rf_step_name(step), op->src,
                                r == -EINVAL && (op->flags & (OPF_IDMAP | OPF_IDMAP_OWNER))
                                        ? "its filesystem cannot be idmapped"
                                        : strerror(-r));
                }
                struct rf_msg m = {.type = MSG_TREE, .value = (int32_t)i};
                int tree = r;
                r = rf_msg_send(chan, &m, tree);
                close(tree);
                if (r < 0)
                        return rf_error_set(err, r, "cannot pass %s to the run: %s", op->src,
                                            strerror(-r));
        }
        return 0;
}

int sandbox_diagnose_clone(int *err)
{
        static const struct {
                int flag, step;
        } ns[] = {
                {CLONE_NEWUSER, STEP_USERNS},     {CLONE_NEWNS, STEP_MOUNTNS},
                {CLONE_NEWPID, STEP_PIDNS},       {CLONE_NEWNET, STEP_NETNS},
                {CLONE_NEWIPC, STEP_IPCNS},       {CLONE_NEWUTS, STEP_UTSNS},
                {CLONE_NEWCGROUP, STEP_CGROUPNS},
        };
        int pfd[2];

        if (pipe2(pfd, O_CLOEXEC) < 0)
                return STEP_USERNS;
        pid_t pid = fork();
        if (pid == 0) {
                int32_t res[2] = {STEP_USERNS, 0};
                for (size_t i = 0; i < ARRAY_SIZE(ns); i++)
                        if (unshare(ns[i].flag) < 0) {
                                res[0] = ns[i].step;
                                res[1] = errno;
                                break;
                        }
                (void)!write(pfd[1], res, sizeof res);
                _exit(0);
        }
        close(pfd[1]);
        int32_t res[2] = {STEP_USERNS, 0};
        if (pid > 0) {
                (void)!read(pfd[0], res, sizeof res);
                (void)waitpid(pid, NULL, 0);
        }
        close(pfd[0]);
        if (res[1])
                *err = res[1];
        return res[0];
}

int sandbox_idmap_probe(const char *path, uid_t host_uid, gid_t host_gid)
{
        struct stat st;
        if (stat(path, &st) < 0)
                return negative_errno();
        /* the workspace's op as plan.c makes it for a root run, less the
         * inode pin (nothing is handed on: the tree is closed at once) */
        const struct plan_op op = {.kind = OP_BIND, .step = STEP_WORKSPACE, .src = path};
        _cleanup_close_ int ns = owner_userns(st.st_uid, st.st_gid, host_uid, host_gid);
        if (ns < 0)
                return ns;
        int tree = tree_from_host(&op, ns);
        if (tree < 0)
                return tree;
        close(tree); /* its last fd: the detached clone is gone */
        return 0;
}

/*
 * The supervisor's side of a root run's network namespace
 * (net_by_supervisor): entered through init's pidfd, set up as init would
 * (capture_fresh), left again. The sockets made keep the run's namespace.
 * *step: what failed. 0 (also when init is gone already: nothing to set
 * up) or -errno.
 */
static int net_setup(const struct rf_plan *p, int pidfd, struct capture_fds *out, int *step)
{
        *step = STEP_LOOPBACK;
        int own = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        if (own < 0)
                return negative_errno();
        if (setns(pidfd, CLONE_NEWNET) < 0) {
                int e = negative_errno();
                close(own);
                /* init is gone already: a setup step of its own failed
                 * (its FAIL is on the channel, for the loop to report) or
                 * it was killed; without init no command starts */
                return e == -ESRCH ? 0 : e;
        }
        int r = capture_fresh(p, p->test_fail_step, out, step);
        /* the supervisor outside its own network namespace: nothing of it
         * may go on */
        if (setns(own, CLONE_NEWNET) < 0)
                abort();
        close(own);
        return r;
}

int sandbox_spawn(const struct rf_plan *plan, const int stdio[3], struct rf_cgroup *cg,
                  struct rf_child *out, struct rf_error *err)
{
        int sv[2];
        char map[64];
        int r, pidfd = -1;

        out->pid = -1;
        out->pidfd = out->chan = -1;
        out->adopted = false;
        capture_fds_init(&out->net);

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return rf_error_set(err, negative_errno(), "cannot create the run channel: %m");

        uint64_t flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
                         CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_PIDFD;
        if (skipped(plan, STEP_NETNS))
                flags &= ~(uint64_t)CLONE_NEWNET;
        static const int join_flag[PLAN_JOIN_NS] = {CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS};
        for (int i = 0; i < PLAN_JOIN_NS; i++)
                if (plan->join_ns[i] >= 0)
                        flags &= ~(uint64_t)join_flag[i];
        for (int s = STEP_USERNS; s <= STEP_CGROUPNS; s++)
                if (plan->test_fail_step == s && s != STEP_UIDMAP) {
                        close_pair(sv);
                        return rf_error_set(err, -EPERM, "cannot set up %s (%s): %s",
                                            rf_step_what(s), rf_step_name(s), strerror(EPERM));
                }

        if (plan->clone_parent)
                flags |= CLONE_PARENT; /* the shim's child, not ours (docs/OCI.md) */
        /* a sibling's exit signal is ours (SIGCHLD), set by the kernel:
         * clone3 refuses one given with CLONE_PARENT */
        struct clone_args ca = {.flags = flags,
                                .pidfd = (uint64_t)(uintptr_t)&pidfd,
                                .exit_signal = plan->clone_parent ? 0 : SIGCHLD};
        bool born_in_cgroup = cg && cgroup_v2_fd(cg) >= 0;
        if (born_in_cgroup) {
                ca.flags |= CLONE_INTO_CGROUP;
                ca.cgroup = (uint64_t)cgroup_v2_fd(cg);
        }
        /* namespaces to be born in (an OCI pod): this thread enters them
         * for the clone only, then returns to its own */
        int own[PLAN_JOIN_NS] = {-1, -1, -1};
        static const char *const own_path[PLAN_JOIN_NS] = {
                "/proc/thread-self/ns/net", "/proc/thread-self/ns/ipc", "/proc/thread-self/ns/uts"};
        for (int i = 0; i < PLAN_JOIN_NS; i++) {
                if (plan->join_ns[i] < 0)
                        continue;
                if ((own[i] = open(own_path[i], O_RDONLY | O_CLOEXEC)) < 0 ||
                    setns(plan->join_ns[i], join_flag[i]) < 0) {
                        int e = errno;
                        for (int k = 0; k <= i; k++)
                                if (own[k] >= 0) {
                                        (void)setns(own[k], join_flag[k]);
                                        close(own[k]);
                                }
                        close_pair(sv);
                        return rf_error_set(err, -e, "cannot enter the pod's %s namespace: %s",
                                            own_path[i] + 21, strerror(e));
                }
        }
        pid_t pid = (pid_t)syscall(SYS_clone3, &ca, sizeof ca);
        int clone_errno = errno, adopt_r = 0;
        /* an engine's network namespace (ringfence-oci): captured from here,
         * still inside it with the host's capabilities, after the clone so
         * that init never holds what is made (capture_adopt) */
        if (pid > 0 && plan->adopt_net) {
#ifdef RF_TEST_BUILD
                bool fail_commit = plan->test_fail_step == STEP_CAPTURE;
#else
                bool fail_commit = false;
#endif
                adopt_r = capture_adopt(plan, fail_commit, &out->net);
        }
        for (int i = 0; i < PLAN_JOIN_NS; i++)
                if (own[i] >= 0) {
                        /* the supervisor: its own again (failing that, nothing
                         * of it may go on); init: never a way back */
                        if (pid != 0 && setns(own[i], join_flag[i]) < 0)
                                abort();
                        close(own[i]);
                }
        errno = clone_errno;
        if (pid < 0) {
                int e = errno, de = 0;
                int step = sandbox_diagnose_clone(&de);
                close_pair(sv);
                if (de) /* a namespace the kernel refuses on its own */
                        return rf_error_set(err, -de, "cannot set up %s (%s): %s",
                                            rf_step_what(step), rf_step_name(step), strerror(de));
                return rf_error_set(err, -e, "cannot start the run's init (clone3%s): %s",
                                    born_in_cgroup ? " into its cgroup" : "", strerror(e));
        }
        if (pid == 0) {
                close(sv[0]);
                run_init(plan, sv[1], stdio);
        }
        close(sv[1]);
        out->pid = pid;
        out->pidfd = pidfd;
        out->chan = sv[0];
        out->adopted = plan->clone_parent;
        if (adopt_r < 0) {
                r = adopt_r;
                if (r == -EEXIST)
                        rf_error_set(err, r,
                                     "cannot capture in the engine's network namespace: it has "
                                     "ringfence's table already (another container's capture)");
                else
                        rf_error_set(err, r, "cannot capture in the engine's network namespace: %s",
                                     strerror(-r));
                goto kill;
        }

        /* a rootless init says when it can take its maps (run_init) */
        struct rf_msg ready;
        if (!plan->map_as_root &&
            ((r = rf_msg_recv(out->chan, &ready, NULL)) <= 0 || ready.type != MSG_READY)) {
                rf_error_set(err, r < 0 ? r : -EIO, "the run's init did not start");
                goto kill;
        }
        /* Id maps, written from outside: the caller's ids map to
         * themselves; nothing else is mapped; setgroups is denied so the
         * run cannot drop supplementary groups to escape a negative ACL. */
        if (plan->test_fail_step == STEP_UIDMAP)
                r = -EPERM;
        else if ((r = plan->map_as_root ? 0 : write_file(pid, "setgroups", "deny")) >= 0) {
                snprintf(map, sizeof map, "%u %u 1\n", plan->gid, plan->host_gid);
                if ((r = write_file(pid, "gid_map", map)) >= 0) {
                        snprintf(map, sizeof map, "%u %u 1\n", plan->uid, plan->host_uid);
                        r = write_file(pid, "uid_map", map);
                }
        }
        if (r < 0) {
                rf_error_set(err, r, "cannot set up %s (%s): %s", rf_step_what(STEP_UIDMAP),
                             rf_step_name(STEP_UIDMAP), strerror(-r));
                goto kill;
        }
        if (plan->has_oom_score_adj) {
                char v[16];
                snprintf(v, sizeof v, "%d", plan->oom_score_adj);
                if ((r = write_file(pid, "oom_score_adj", v)) < 0) {
                        rf_error_set(err, r, "cannot set the OOM score adjustment %d: %s",
                                     plan->oom_score_adj, strerror(-r));
                        goto kill;
                }
        }
        if (plan->map_as_root && (r = send_trees(plan, pid, out->chan, err)) < 0)
                goto kill;
        if (plan->secrets_fd >= 0) {
                struct rf_msg sm = {.type = MSG_SECRETS};
                if ((r = rf_msg_send(out->chan, &sm, plan->secrets_fd)) < 0) {
                        rf_error_set(err, r, "cannot hand the run its secrets: %s", strerror(-r));
                        goto kill;
                }
        }
        /* GO first, cgroups second: init builds the root while we migrate it
         * into the run's v1 cgroups (a migration can wait for an RCU grace
         * period); it does not start the command before START
         * (sandbox_start). */
        struct rf_msg go = {.type = MSG_GO,
                            .value = cgroup_attach_pending(cg, born_in_cgroup) ? 0 : GO_PLACED,
                            .rows = plan->ws_rows,
                            .cols = plan->ws_cols};
        if ((r = rf_msg_send(out->chan, &go, -1)) < 0) {
                rf_error_set(err, r, "cannot start the run's init: %s", strerror(-r));
                goto kill;
        }
        if (cg) {
                r = plan->test_fail_step == STEP_CGROUP ? -EPERM
                                                        : cgroup_attach(cg, pid, born_in_cgroup);
                if (r < 0) {
                        rf_error_set(err, r, "cannot set up %s (%s): %s", rf_step_what(STEP_CGROUP),
                                     rf_step_name(STEP_CGROUP), strerror(-r));
                        goto kill;
                }
        }
        /* while init builds the root; the command starts only after START */
        if (net_by_supervisor(plan)) {
                int step;
#ifdef RF_TEST_BUILD
                /* test builds: a step of init's after GO fails (rootfs) and init
                 * is gone before the namespace is entered, every time (the
                 * race net_setup answers: init's own FAIL is reported) */
                if (plan->test_fail_step == STEP_ROOTFS) {
                        struct pollfd gone = {.fd = pidfd, .events = POLLIN};
                        while (poll(&gone, 1, -1) < 0 && errno == EINTR)
                                ;
                }
#endif
                if ((r = net_setup(plan, pidfd, &out->net, &step)) < 0) {
                        rf_error_set(err, r, "cannot set up %s (%s): %s", rf_step_what(step),
                                     rf_step_name(step), strerror(-r));
                        goto kill;
                }
        }
        return 0;
kill:
        capture_fds_close(&out->net);
        (void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
        sandbox_reap(out, NULL);
        out->pid = -1;
        out->pidfd = safe_close(out->pidfd);
        out->chan = safe_close(out->chan);
        return r;
}

void sandbox_reap(const struct rf_child *c, int *status)
{
        int st = SIGKILL; /* what an adopted init's end is taken for */
        if (c->pid <= 0)
                return;
        if (!c->adopted) {
                if (RETRY_EINTR(waitpid(c->pid, &st, 0)) != c->pid)
                        st = SIGKILL;
        } else if (c->pidfd >= 0) {
                struct pollfd p = {.fd = c->pidfd, .events = POLLIN};
                while (poll(&p, 1, -1) < 0 && errno == EINTR)
                        ;
        }
        if (status)
                *status = st;
}
