/*
 * cgroup.c — create, limit, watch, kill and remove a run's cgroups.
 *
 * Discovery reads /proc/self/mountinfo (where each hierarchy is mounted)
 * and /proc/self/cgroup (where this process sits in each). A run's cgroup
 * is "ringfence-<run id>" directly beneath this process's own cgroup in
 * every hierarchy used — nothing is ever created or moved elsewhere. All
 * file access is by directory fd (openat), O_CLOEXEC.
 *
 * cgroup v2 with the memory/pids/cpu controllers does everything. On a
 * hybrid host the controller-less v2 tree still provides cgroup.kill and
 * cpu.stat, and the v1 memory/pids/cpu hierarchies take the limits the
 * user asked for (defaults fall back to rlimits there: see cgroup_create). v1
 * has no oom.group: the supervisor watches the OOM notification and kills
 * the whole run itself, so any OOM kill ends the run either way.
 *
 * The v2 no-internal-process rule: enabling controllers for children needs
 * a cgroup without processes. If ours has some (us), we create a leaf
 * "ringfence-sup-<pid>" beneath it and move only ourselves there — still
 * beneath where we were — and use our original cgroup as the parent.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "shared/macro.h"

/* From H_CPUACCT on: v1 hierarchies of accounting alone, joined only by a
 * placed run (an engine reads its container's accounting there). */
enum hier {
        H_V2,
        H_MEMORY,
        H_PIDS,
        H_CPU,
        H_FREEZER,
        H_CPUACCT,
        H_BLKIO,
        H_DEVICES,
        H_CPUSET,
        H_SYSTEMD,
        _H_MAX
};
static const char *const hier_ctrl[_H_MAX] = {
        [H_V2] = NULL,           [H_MEMORY] = "memory",
        [H_PIDS] = "pids",       [H_CPU] = "cpu",
        [H_FREEZER] = "freezer", [H_CPUACCT] = "cpuacct",
        [H_BLKIO] = "blkio",     [H_DEVICES] = "devices",
        [H_CPUSET] = "cpuset",   [H_SYSTEMD] = "name=systemd",
};

/* A new v1 cpuset cgroup has no cpus and mems: a task cannot join it until
 * it has its parent's. */
static void cpuset_inherit(int parent, int child)
{
        static const char *const files[] = {"cpuset.cpus", "cpuset.mems"};
        char buf[4096];
        for (size_t i = 0; i < 2; i++) {
                _cleanup_close_ int in = openat(parent, files[i], O_RDONLY | O_CLOEXEC);
                ssize_t n = in >= 0 ? read(in, buf, sizeof buf - 1) : -1;
                if (n <= 0)
                        continue;
                buf[n] = '\0';
                _cleanup_close_ int out = openat(child, files[i], O_WRONLY | O_CLOEXEC);
                if (out >= 0)
                        (void)!write(out, buf, (size_t)n);
        }
}

struct rf_cgroup {
        enum cgroup_mode mode;
        char name[256];                   /* "ringfence-<run id>", or the placed path's leaf */
        const struct cgroup_place *place; /* borrowed during cgroup_create_at; NULL after */
        const struct found *found;        /* the same */
        int place_err;                    /* the first error placing it, 0 */
        char place_what[64];              /* the hierarchy of that error */
        int parent[_H_MAX];               /* owned: our own cgroup dir per hierarchy, or -1 */
        int dir[_H_MAX];                  /* owned: the run's cgroup dir, or -1 */
        bool v2_limits;                   /* v2 has memory/pids/cpu enabled for the run */
        unsigned enforced;                /* CGROUP_REQ_* */
        int oom_fd;                       /* owned: eventfd (v1) or memory.events (v2), -1 */
        int oom_ctl_fd; /* owned: v1 memory.oom_control kept open for the eventfd */
        int pids_fd;    /* owned: pids.events (POLLPRI when pids.max refused a fork), -1 */
        uint64_t oom_seen;
        struct rf_limits created; /* the limits it was made with: cgroup_update's ceiling */
};

const char *cgroup_mode_name(enum cgroup_mode m)
{
        switch (m) {
        case CGROUP_NONE:
                return "none";
        case CGROUP_V2:
                return "v2";
        case CGROUP_HYBRID:
                return "hybrid";
        case CGROUP_V1:
                return "v1";
        case _CGROUP_MODE_MAX:
        case _CGROUP_MODE_INVALID:
        default:
                return "invalid";
        }
}

/* ---- small file helpers ------------------------------------------------- */

static int write_at(int dfd, const char *file, const char *val)
{
        _cleanup_close_ int fd = openat(dfd, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        ssize_t n = write(fd, val, strlen(val));
        if (n < 0)
                return negative_errno();
        return n == (ssize_t)strlen(val) ? 0 : -EIO;
}

static int write_u64_at(int dfd, const char *file, uint64_t v)
{
        char buf[32];
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
        return write_at(dfd, file, buf);
}

static ssize_t read_at(int dfd, const char *file, char *buf, size_t len)
{
        _cleanup_close_ int fd = openat(dfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        ssize_t n = read(fd, buf, len - 1);
        if (n < 0)
                return negative_errno();
        buf[n] = '\0';
        return n;
}

/* "key value" lines (memory.events, cpu.stat, memory.oom_control): value of key. */
static uint64_t keyed_value(const char *buf, const char *key)
{
        size_t kl = strlen(key);
        for (const char *s = buf; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL)
                if (strncmp(s, key, kl) == 0 && s[kl] == ' ')
                        return strtoull(s + kl + 1, NULL, 10);
        return 0;
}

/* ---- discovery ------------------------------------------------------------ */

struct found {
        char mount[_H_MAX][256], root[_H_MAX][256], own[_H_MAX][512];
};

/*
 * Call `line` for each line of the /proc file at `path` (without its
 * newline), reading it in pieces: a host with thousands of mounts has a
 * mountinfo of megabytes, and a size cap there would make every run fail.
 * Only a line longer than CGROUP_LINE_MAX is skipped (the parsers refuse
 * those anyway). Returns 0 or -errno.
 */
static int for_each_line(const char *path, void (*line)(const char *l, size_t len, void *ctx),
                         void *ctx)
{
        static char buf[64 * 1024];
        _Static_assert(sizeof buf > 2 * CGROUP_LINE_MAX, "a whole line must fit with a read");
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        size_t have = 0;
        bool skipping = false; /* inside a line too long to keep */
        for (;;) {
                ssize_t n = read(fd, buf + have, sizeof buf - have);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                have += (size_t)n;
                size_t off = 0;
                for (;;) {
                        char *nl = memchr(buf + off, '\n', have - off);
                        if (!nl)
                                break;
                        size_t len = (size_t)(nl - (buf + off));
                        if (!skipping)
                                line(buf + off, len, ctx);
                        skipping = false;
                        off += len + 1;
                }
                if (n == 0) {
                        if (off < have && !skipping)
                                line(buf + off, have - off, ctx); /* no newline at the end */
                        return 0;
                }
                memmove(buf, buf + off, have - off);
                have -= off;
                if (have > CGROUP_LINE_MAX) {
                        skipping = true;
                        have = 0;
                }
        }
}

/* Copy a field; one that does not fit is dropped (""), never cut: a cut
 * path could name some other cgroup. */
static void copy_field(char *dst, size_t dlen, const char *s, size_t len)
{
        if (len >= dlen)
                len = 0;
        memcpy(dst, s, len);
        dst[len] = '\0';
}

/* A mountinfo line: where each hierarchy is mounted, from which root. */
static void found_mount(const char *line, size_t len, void *ctx)
{
        struct found *f = ctx;
        struct cgroup_mount_line m;
        if (cgroup_parse_mountinfo_line(line, len, &m) < 0)
                return;
        for (int h = 0; h < _H_MAX; h++) {
                bool match = h == H_V2
                                     ? m.fstype_len == 7 && memcmp(m.fstype, "cgroup2", 7) == 0
                                     : m.fstype_len == 6 && memcmp(m.fstype, "cgroup", 6) == 0 &&
                                               cgroup_list_has(m.super, m.super_len, hier_ctrl[h]);
                if (match && !f->mount[h][0]) {
                        copy_field(f->mount[h], sizeof f->mount[h], m.mountpoint, m.mountpoint_len);
                        copy_field(f->root[h], sizeof f->root[h], m.root, m.root_len);
                }
        }
}

/* A /proc/self/cgroup line: our own cgroup in a hierarchy. */
static void found_own(const char *line, size_t len, void *ctx)
{
        struct found *f = ctx;
        struct cgroup_proc_line c;
        if (cgroup_parse_proc_line(line, len, &c) < 0)
                return;
        for (int h = 0; h < _H_MAX; h++) {
                bool match =
                        h == H_V2 ? c.id == 0 && c.controllers_len == 0
                                  : cgroup_list_has(c.controllers, c.controllers_len, hier_ctrl[h]);
                if (match)
                        copy_field(f->own[h], sizeof f->own[h], c.path, c.path_len);
        }
}

static int discover(struct found *f)
{
        int r;

        memset(f, 0, sizeof *f);
        if ((r = for_each_line("/proc/self/mountinfo", found_mount, f)) < 0)
                return r;
        return for_each_line("/proc/self/cgroup", found_own, f);
}

/* Our own cgroup in hierarchy h as seen through its mount ("/a/b", "/"),
 * into base[512]. 0 or -ENOENT. */
static int own_path(const struct found *f, int h, char *base)
{
        const char *own = f->own[h], *root = f->root[h];
        size_t rl = strlen(root);

        if (!f->mount[h][0] || !own[0])
                return -ENOENT;
        /* The mount shows the hierarchy from `root` down: our path must lie beneath. */
        if (strcmp(root, "/") != 0) {
                if (strncmp(own, root, rl) != 0 || (own[rl] != '/' && own[rl] != '\0'))
                        return -ENOENT;
                own += rl;
        }
        /* a leaf we made for ourselves earlier: its parent is our cgroup */
        snprintf(base, 512, "%s", own[0] ? own : "/");
        char *slash = strrchr(base, '/');
        if (slash && strncmp(slash + 1, "ringfence-sup-", 14) == 0)
                *(slash == base ? slash + 1 : slash) = '\0';
        return 0;
}

/* Open our own cgroup directory in hierarchy h (as seen through its mount). */
static int open_own(const struct found *f, int h)
{
        char path[1024], base[512];
        if (own_path(f, h, base) < 0)
                return -ENOENT;
        snprintf(path, sizeof path, "%s%s", f->mount[h], base);
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}

/* Is `path` strictly beneath `dir` (both absolute)? Its part below, or NULL. */
static const char *beneath(const char *path, const char *dir)
{
        size_t dl = strlen(dir);
        if (!strcmp(dir, "/"))
                return path[1] ? path + 1 : NULL;
        return !strncmp(path, dir, dl) && path[dl] == '/' ? path + dl + 1 : NULL;
}

/* v2: make memory/pids/cpu available to our children (see the header comment). */
static bool v2_enable_controllers(struct rf_cgroup *cg, int own)
{
        char ctrls[512], want[64] = "";
        if (read_at(own, "cgroup.controllers", ctrls, sizeof ctrls) < 0)
                return false;
        size_t cl = strcspn(ctrls, "\n");
        static const char *const names[] = {"memory", "pids", "cpu"};
        for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
                /* space-separated list */
                char needle[16];
                snprintf(needle, sizeof needle, "%s", names[i]);
                for (char *s = ctrls; s < ctrls + cl;) {
                        size_t l = strcspn(s, " \n");
                        if (l == strlen(needle) && memcmp(s, needle, l) == 0) {
                                strcat(want, want[0] ? " +" : "+");
                                strcat(want, names[i]);
                        }
                        s += l + 1;
                }
        }
        if (!want[0])
                return false;
        int r = write_at(own, "cgroup.subtree_control", want);
        if (r == -EBUSY) {
                /* processes in our cgroup (us): move ourselves to a leaf beneath it */
                char leaf[48];
                snprintf(leaf, sizeof leaf, "ringfence-sup-%d", (int)getpid());
                if (mkdirat(own, leaf, 0755) < 0 && errno != EEXIST)
                        return false;
                _cleanup_close_ int lfd = openat(own, leaf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (lfd < 0 || write_at(lfd, "cgroup.procs", "0") < 0)
                        return false;
                r = write_at(own, "cgroup.subtree_control", want);
        }
        (void)cg;
        return r == 0 && strstr(want, "memory") && strstr(want, "pids") && strstr(want, "cpu");
}

/*
 * Each supervisor holds a shared flock on its run's cgroup directories for
 * as long as it lives. A "ringfence-*" directory beneath our own cgroup
 * that nobody holds belongs to a supervisor that died (SIGKILL, crash):
 * remove it if it is empty. Never anything else, never anywhere else.
 */
#define SWEEP_MIN_AGE_S 60

static void sweep_stale(int parent)
{
        int fd = openat(parent, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return;
        DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return;
        }
        for (struct dirent *e; (e = readdir(d));) {
                if (e->d_type != DT_DIR || strncmp(e->d_name, "ringfence-", 10) != 0 ||
                    strncmp(e->d_name, "ringfence-sup-", 14) == 0)
                        continue;
                _cleanup_close_ int c =
                        openat(parent, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                struct stat st;
                /* Young directories are skipped: another supervisor may be
                 * between its mkdir and its flock right now. */
                if (c >= 0 && fstat(c, &st) == 0 && time(NULL) - st.st_ctime > SWEEP_MIN_AGE_S &&
                    flock(c, LOCK_EX | LOCK_NB) == 0)
                        (void)unlinkat(parent, e->d_name, AT_REMOVEDIR); /* only if empty */
        }
        closedir(d);
}

/* A placed run (cgroup_create_at): cg->parent[h] becomes the directory its
 * path's leaf goes in, every directory above it made, and cg->name that
 * leaf. Beneath our own cgroup or the delegated root only. 0 or -errno. */
/* Where `pl` lies in hierarchy h: the directory it is made beneath (*base:
 * our own cgroup, in own[512], or the delegated root) and its path below
 * that (*rel). 0, -ENOENT (no such hierarchy), -EPERM (outside both). */
static int place_base(const struct found *f, int h, const struct cgroup_place *pl, char *own,
                      const char **base, const char **rel)
{
        if (own_path(f, h, own) < 0)
                return -ENOENT;
        if (pl->path[0] != '/') {
                *rel = pl->path;
                *base = own;
        } else if ((*rel = beneath(pl->path, own))) {
                *base = own;
        } else if (pl->root && (*rel = beneath(pl->path, pl->root))) {
                *base = pl->root;
        } else
                return -EPERM;
        return 0;
}

static int place_parent(struct rf_cgroup *cg, int h)
{
        char own[512], path[1024];
        const char *rel = NULL, *base = NULL;
        int r = place_base(cg->found, h, cg->place, own, &base, &rel);
        if (r < 0)
                return r;
        snprintf(path, sizeof path, "%s%s", cg->found->mount[h], base);
        _cleanup_close_ int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return negative_errno();
        for (;;) {
                size_t n = strcspn(rel, "/");
                if (n >= sizeof cg->name)
                        return -ENAMETOOLONG;
                char comp[sizeof cg->name];
                memcpy(comp, rel, n);
                comp[n] = '\0';
                if (!rel[n]) { /* the leaf */
                        snprintf(cg->name, sizeof cg->name, "%s", comp);
                        break;
                }
                /* v2 with controllers: each level passes them down */
                if (h == H_V2 && cg->v2_limits)
                        (void)write_at(dir, "cgroup.subtree_control", "+memory +pids +cpu");
                bool made = mkdirat(dir, comp, 0755) == 0;
                if (!made && errno != EEXIST)
                        return negative_errno();
                int next = openat(dir, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return negative_errno();
                if (made && h == H_CPUSET)
                        cpuset_inherit(dir, next);
                safe_close(dir);
                dir = next;
                rel += n + 1;
        }
        if (h == H_V2 && cg->v2_limits &&
            write_at(dir, "cgroup.subtree_control", "+memory +pids +cpu") < 0)
                cg->v2_limits = false;
        safe_close(cg->parent[h]);
        cg->parent[h] = TAKE_FD(dir);
        return 0;
}

static int make_run_dir(struct rf_cgroup *cg, int h)
{
        if (cg->parent[h] < 0)
                return -ENOENT;
        if (cg->place) {
                int r = place_parent(cg, h);
                if (r < 0) {
                        if (!cg->place_err) {
                                cg->place_err = r;
                                snprintf(cg->place_what, sizeof cg->place_what, "%s",
                                         h == H_V2 ? "cgroup2" : hier_ctrl[h]);
                        }
                        return r;
                }
        }
        sweep_stale(cg->parent[h]);
        if (mkdirat(cg->parent[h], cg->name, 0755) < 0) {
                int r = negative_errno();
                if (r != -EEXIST || !cg->place)
                        return r;
                /* a placed leaf that exists: ours only if nothing is in it */
                char procs[8];
                _cleanup_close_ int d = openat(cg->parent[h], cg->name,
                                               O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (d < 0 || read_at(d, "cgroup.procs", procs, sizeof procs) != 0) {
                        if (!cg->place_err) {
                                cg->place_err = -EBUSY;
                                snprintf(cg->place_what, sizeof cg->place_what, "%s",
                                         h == H_V2 ? "cgroup2" : hier_ctrl[h]);
                        }
                        return -EBUSY;
                }
        }
        cg->dir[h] = openat(cg->parent[h], cg->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (cg->dir[h] >= 0 && h == H_CPUSET)
                cpuset_inherit(cg->parent[h], cg->dir[h]);
        if (cg->dir[h] < 0 || flock(cg->dir[h], LOCK_SH) < 0) {
                int r = negative_errno();
                cg->dir[h] = safe_close(cg->dir[h]);
                (void)unlinkat(cg->parent[h], cg->name, AT_REMOVEDIR);
                return r;
        }
        return 0;
}

/* ---- limits ----------------------------------------------------------------- */

uint64_t cgroup_cpu_weight(uint64_t shares)
{
        if (shares < 2)
                shares = 2;
        if (shares > 262144)
                shares = 262144;
        return 1 + ((shares - 2) * 9999) / 262142;
}

static void apply_limits(struct rf_cgroup *cg, const struct rf_limits *lim)
{
        /* µs per period; the kernel wants quota >= 1 ms: tiny shares get a 1 s period */
        uint64_t period = lim->cpus_milli * 100 >= 1000 ? 100000 : 1000000;
        uint64_t quota = lim->cpus_milli * period / 1000;
        char buf[64];

        if (cg->v2_limits) {
                int d = cg->dir[H_V2];
                if (!lim->memory || write_u64_at(d, "memory.max", lim->memory) == 0) {
                        (void)write_at(d, "memory.swap.max", "0");
                        if (write_at(d, "memory.oom.group", "1") == 0 && lim->memory)
                                cg->enforced |= CGROUP_REQ_MEMORY;
                }
                if (!lim->pids || write_u64_at(d, "pids.max", lim->pids) == 0)
                        cg->enforced |= lim->pids ? CGROUP_REQ_PIDS : 0;
                snprintf(buf, sizeof buf, "%llu %llu", (unsigned long long)quota,
                         (unsigned long long)period);
                if (lim->cpus_milli && write_at(d, "cpu.max", buf) == 0)
                        cg->enforced |= CGROUP_REQ_CPU;
                if (lim->cpu_shares &&
                    write_u64_at(d, "cpu.weight", cgroup_cpu_weight(lim->cpu_shares)) == 0)
                        cg->enforced |= CGROUP_REQ_CPU_SHARES;
                return;
        }
        if (lim->memory && cg->dir[H_MEMORY] >= 0 &&
            write_u64_at(cg->dir[H_MEMORY], "memory.limit_in_bytes", lim->memory) == 0) {
                /* no swap beyond the limit where the kernel accounts it */
                (void)write_u64_at(cg->dir[H_MEMORY], "memory.memsw.limit_in_bytes", lim->memory);
                cg->enforced |= CGROUP_REQ_MEMORY;
        }
        if (lim->pids && cg->dir[H_PIDS] >= 0 &&
            write_u64_at(cg->dir[H_PIDS], "pids.max", lim->pids) == 0)
                cg->enforced |= CGROUP_REQ_PIDS;
        if (lim->cpus_milli && cg->dir[H_CPU] >= 0 &&
            write_u64_at(cg->dir[H_CPU], "cpu.cfs_period_us", period) == 0 &&
            write_u64_at(cg->dir[H_CPU], "cpu.cfs_quota_us", quota) == 0)
                cg->enforced |= CGROUP_REQ_CPU;
        if (lim->cpu_shares && cg->dir[H_CPU] >= 0 &&
            write_u64_at(cg->dir[H_CPU], "cpu.shares", lim->cpu_shares) == 0)
                cg->enforced |= CGROUP_REQ_CPU_SHARES;
}

static void setup_oom_watch(struct rf_cgroup *cg)
{
        char buf[64];

        /* pids.events changes (POLLPRI) when pids.max refuses a fork */
        if (cg->enforced & CGROUP_REQ_PIDS)
                cg->pids_fd = openat(cg->v2_limits ? cg->dir[H_V2] : cg->dir[H_PIDS], "pids.events",
                                     O_RDONLY | O_CLOEXEC);

        if (cg->v2_limits) {
                cg->oom_fd = openat(cg->dir[H_V2], "memory.events", O_RDONLY | O_CLOEXEC);
                return;
        }
        if (cg->dir[H_MEMORY] < 0)
                return;
        cg->oom_ctl_fd = openat(cg->dir[H_MEMORY], "memory.oom_control", O_RDONLY | O_CLOEXEC);
        cg->oom_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (cg->oom_ctl_fd < 0 || cg->oom_fd < 0) {
                cg->oom_ctl_fd = safe_close(cg->oom_ctl_fd);
                cg->oom_fd = safe_close(cg->oom_fd);
                return;
        }
        snprintf(buf, sizeof buf, "%d %d", cg->oom_fd, cg->oom_ctl_fd);
        if (write_at(cg->dir[H_MEMORY], "cgroup.event_control", buf) < 0) {
                cg->oom_ctl_fd = safe_close(cg->oom_ctl_fd);
                cg->oom_fd = safe_close(cg->oom_fd);
        }
}

int cgroup_create(const char *run_id, const struct rf_limits *lim, struct rf_cgroup **ret,
                  struct rf_error *err)
{
        return cgroup_create_at(run_id, NULL, lim, ret, err);
}

int cgroup_create_at(const char *run_id, const struct cgroup_place *place,
                     const struct rf_limits *lim, struct rf_cgroup **ret, struct rf_error *err)
{
        struct rf_cgroup *cg = calloc(1, sizeof *cg);
        struct found f;
        int r;

        if (!cg)
                return -ENOMEM;
        cg->oom_fd = cg->oom_ctl_fd = cg->pids_fd = -1;
        for (int h = 0; h < _H_MAX; h++)
                cg->parent[h] = cg->dir[h] = -1;
        snprintf(cg->name, sizeof cg->name, "ringfence-%s", run_id);
        if (place && (r = cgroup_path_check(place->path, strlen(place->path))) < 0) {
                free(cg);
                return rf_error_set(err, r, "cgroup path %.200s: %s", place->path,
                                    r == -EOPNOTSUPP ? "systemd's form (no systemd cgroup driver)"
                                                     : "not a clean cgroup path");
        }
        cg->place = place;
        cg->found = &f;
        /* every hierarchy first: a path outside ours makes nothing anywhere */
        if (place && discover(&f) == 0)
                for (int h = 0; h < _H_MAX; h++) {
                        char own[512];
                        const char *base, *rel;
                        if (place_base(&f, h, place, own, &base, &rel) == -EPERM) {
                                r = rf_error_set(err, -EPERM,
                                                 "cgroup path %.200s (%s): outside ringfence's own "
                                                 "cgroup (%.200s) and any delegated root",
                                                 place->path, h == H_V2 ? "cgroup2" : hier_ctrl[h],
                                                 own);
                                free(cg);
                                return r;
                        }
                }

        if (discover(&f) == 0) {
                for (int h = 0; h < _H_MAX; h++) {
                        int fd = open_own(&f, h);
                        cg->parent[h] = fd >= 0 ? fd : -1;
                }
                if (cg->parent[H_V2] >= 0) {
                        cg->v2_limits = v2_enable_controllers(cg, cg->parent[H_V2]);
                        if (make_run_dir(cg, H_V2) < 0)
                                cg->v2_limits = false;
                }
                /* v1 only for what v2 cannot do here. With a v2 tree for
                 * kill and accounting (hybrid), a v1 controller is used only
                 * for a limit the user asked for: attaching to v1 is a
                 * migration, which can wait a whole RCU grace period (5-15 ms
                 * measured) — default limits then fall back to rlimits. */
                bool hybrid = cg->dir[H_V2] >= 0 && !cg->v2_limits;
                static const unsigned need[_H_MAX] = {[H_MEMORY] = CGROUP_REQ_MEMORY,
                                                      [H_PIDS] = CGROUP_REQ_PIDS,
                                                      [H_CPU] = CGROUP_REQ_CPU |
                                                                CGROUP_REQ_CPU_SHARES};
                if (!cg->v2_limits)
                        for (int h = H_MEMORY; h < _H_MAX; h++) {
                                /* only when asked, or placed: an engine reads its
                                 * container's accounting at the path it named */
                                if (h == H_CPU && !lim->cpus_milli && !lim->cpu_shares && !place)
                                        continue;
                                if (h >= H_CPUACCT && !place)
                                        continue; /* accounting alone */
                                if (hybrid && !(lim->required & need[h]) && !place)
                                        continue;
                                (void)make_run_dir(cg, h);
                        }
        }
        bool any_v1 = false; /* a v1 hierarchy we could use (even if unused now) */
        for (int h = H_MEMORY; h < H_CPUACCT; h++)
                any_v1 |= cg->dir[h] >= 0 || (!cg->v2_limits && cg->parent[h] >= 0 &&
                                              faccessat(cg->parent[h], ".", W_OK, AT_EACCESS) == 0);
        cg->mode = cg->v2_limits                  ? CGROUP_V2
                   : cg->dir[H_V2] >= 0 && any_v1 ? CGROUP_HYBRID
                   : any_v1                       ? CGROUP_V1
                   : cg->dir[H_V2] >= 0           ? CGROUP_V2
                                                  : CGROUP_NONE;
        cg->place = NULL;
        cg->found = NULL;
        if (cg->place_err || (place && cg->dir[H_V2] < 0 && !any_v1)) {
                int e = cg->place_err ? cg->place_err : -ENOENT;
                r = rf_error_set(err, e, "cgroup path %.200s (%s): %s", place->path,
                                 cg->place_what[0] ? cg->place_what : "every hierarchy",
                                 e == -EPERM   ? "outside ringfence's own cgroup and any delegated "
                                                 "root"
                                 : e == -EBUSY ? "a cgroup with processes in it already"
                                 : e == -ENOENT ? "no cgroup hierarchy to place it in"
                                                : strerror(-e));
                cgroup_destroy(cg);
                return r;
        }
        cg->created = *lim;
        apply_limits(cg, lim);
        setup_oom_watch(cg);

        unsigned missing = lim->required & ~cg->enforced;
        if (missing) {
                const char *what = (missing & CGROUP_REQ_MEMORY) ? "memory"
                                   : (missing & CGROUP_REQ_PIDS) ? "pids"
                                   : (missing & CGROUP_REQ_CPU)  ? "cpu"
                                                                 : "cpu shares";
                const char *ctrl = (missing & (CGROUP_REQ_MEMORY | CGROUP_REQ_PIDS)) ? what : "cpu";
                r = rf_error_set(err, -EOPNOTSUPP,
                                 "cannot enforce the %s limit: no writable %s cgroup beneath "
                                 "ringfence's own (cgroup mode: %s)",
                                 what, ctrl, cgroup_mode_name(cg->mode));
                cgroup_destroy(cg);
                return r;
        }
        *ret = cg;
        return 0;
}

int cgroup_reap_stale(const char *run_id)
{
        struct rf_cgroup *cg = calloc(1, sizeof *cg);
        struct found f;
        int n = 0;

        if (!cg)
                return -ENOMEM;
        cg->oom_fd = cg->oom_ctl_fd = cg->pids_fd = -1;
        for (int h = 0; h < _H_MAX; h++)
                cg->parent[h] = cg->dir[h] = -1;
        snprintf(cg->name, sizeof cg->name, "ringfence-%s", run_id);
        if (discover(&f) == 0)
                for (int h = 0; h < _H_MAX; h++) {
                        int fd = open_own(&f, h);
                        cg->parent[h] = fd >= 0 ? fd : -1;
                        if (fd >= 0 && (cg->dir[h] = openat(fd, cg->name,
                                                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                                                                    O_CLOEXEC)) >= 0)
                                n++;
                }
        cgroup_destroy(cg); /* kills what is left, removes the directories */
        return n;
}

enum cgroup_mode cgroup_get_mode(const struct rf_cgroup *cg)
{
        return cg ? cg->mode : CGROUP_NONE;
}

unsigned cgroup_enforced(const struct rf_cgroup *cg)
{
        return cg ? cg->enforced : 0;
}

int cgroup_v2_fd(const struct rf_cgroup *cg)
{
        return cg ? cg->dir[H_V2] : -1;
}

int cgroup_attach(struct rf_cgroup *cg, pid_t pid, bool born_in_v2)
{
        char buf[32];
        int r;

        snprintf(buf, sizeof buf, "%d", (int)pid);
        for (int h = born_in_v2 ? H_V2 + 1 : 0; cg && h < _H_MAX; h++)
                if (cg->dir[h] >= 0 && (r = write_at(cg->dir[h], "cgroup.procs", buf)) < 0)
                        return r;
        return 0;
}

bool cgroup_attach_pending(const struct rf_cgroup *cg, bool born_in_v2)
{
        for (int h = born_in_v2 ? H_V2 + 1 : 0; cg && h < _H_MAX; h++)
                if (cg->dir[h] >= 0)
                        return true;
        return false;
}

int cgroup_oom_fd(const struct rf_cgroup *cg)
{
        return cg ? cg->oom_fd : -1;
}

short cgroup_oom_events(const struct rf_cgroup *cg)
{
        /* a cgroup file always polls readable; only POLLPRI means "changed" */
        return cg && cg->v2_limits ? POLLPRI : POLLIN;
}

int cgroup_pids_fd(const struct rf_cgroup *cg)
{
        return cg ? cg->pids_fd : -1;
}

void cgroup_oom_ack(struct rf_cgroup *cg)
{
        uint64_t v;
        char buf[512];

        if (!cg || cg->oom_fd < 0)
                return;
        if (cg->v2_limits) {
                if (pread(cg->oom_fd, buf, sizeof buf - 1, 0) > 0)
                        buf[sizeof buf - 1] = '\0';
        } else
                (void)!read(cg->oom_fd, &v, sizeof v);
}

bool cgroup_pids_notifies(const struct rf_cgroup *cg)
{
        return cg && cg->pids_fd >= 0 && cg->v2_limits;
}

uint64_t cgroup_pids_ack(struct rf_cgroup *cg)
{
        char buf[256];
        /* kernfs reports POLLPRI until the file is read again */
        ssize_t n = cg && cg->pids_fd >= 0 ? pread(cg->pids_fd, buf, sizeof buf - 1, 0) : -1;
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        return keyed_value(buf, "max");
}

/* Every pid in the run's cgroups, SIGKILLed; returns how many were seen. */
static int kill_listed(struct rf_cgroup *cg)
{
        char buf[65536];
        int seen = 0;

        for (int h = 0; h < _H_MAX; h++) {
                if (cg->dir[h] < 0 || read_at(cg->dir[h], "cgroup.procs", buf, sizeof buf) < 0)
                        continue;
                for (char *s = buf; *s;) {
                        long pid = strtol(s, &s, 10);
                        if (pid > 0) {
                                (void)kill((pid_t)pid, SIGKILL);
                                seen++;
                        }
                        while (*s == '\n')
                                s++;
                        if (*s && (*s < '0' || *s > '9'))
                                break;
                }
        }
        return seen;
}

int cgroup_kill(struct rf_cgroup *cg)
{
        if (!cg)
                return -EINVAL;
        if (cg->dir[H_V2] >= 0 && write_at(cg->dir[H_V2], "cgroup.kill", "1") == 0)
                return 0;
        /* v1: freeze so nothing forks while we kill, then thaw to let them die */
        bool frozen = cg->dir[H_FREEZER] >= 0 &&
                      write_at(cg->dir[H_FREEZER], "freezer.state", "FROZEN") == 0;
        for (int i = 0; i < 100 && kill_listed(cg) > 0; i++)
                ;
        if (frozen)
                (void)write_at(cg->dir[H_FREEZER], "freezer.state", "THAWED");
        return 0;
}

int cgroup_freeze(struct rf_cgroup *cg, bool frozen)
{
        char buf[512];

        if (!cg)
                return -EINVAL;
        if (cg->dir[H_V2] >= 0 &&
            write_at(cg->dir[H_V2], "cgroup.freeze", frozen ? "1" : "0") == 0) {
                /* the write starts it; cgroup.events says when every task is frozen */
                for (int i = 0; frozen && i < 1000; i++) {
                        if (read_at(cg->dir[H_V2], "cgroup.events", buf, sizeof buf) > 0 &&
                            keyed_value(buf, "frozen") == 1)
                                return 0;
                        nanosleep(&(struct timespec){0, 1000000}, NULL);
                }
                if (frozen) /* not frozen in time: thawed again, so "running" stays true */
                        (void)write_at(cg->dir[H_V2], "cgroup.freeze", "0");
                return frozen ? -ETIMEDOUT : 0;
        }
        if (cg->dir[H_FREEZER] >= 0)
                return write_at(cg->dir[H_FREEZER], "freezer.state", frozen ? "FROZEN" : "THAWED");
        return -EOPNOTSUPP;
}

int cgroup_update(struct rf_cgroup *cg, const struct rf_limits *lim)
{
        if (!cg)
                return -EOPNOTSUPP;
        const struct rf_limits *c = &cg->created;
        if ((lim->memory && c->memory && lim->memory > c->memory) ||
            (lim->pids && c->pids && lim->pids > c->pids) ||
            (lim->cpus_milli && c->cpus_milli && lim->cpus_milli > c->cpus_milli))
                return -EPERM;
        /* each one asked for must be one this run enforces already */
        unsigned asked = (lim->memory ? CGROUP_REQ_MEMORY : 0) | (lim->pids ? CGROUP_REQ_PIDS : 0) |
                         (lim->cpus_milli ? CGROUP_REQ_CPU : 0);
        if (asked & ~cg->enforced)
                return -EOPNOTSUPP;
        uint64_t period = lim->cpus_milli * 100 >= 1000 ? 100000 : 1000000;
        uint64_t quota = lim->cpus_milli * period / 1000;
        char buf[64];
        int r = 0;
        if (cg->v2_limits) {
                int d = cg->dir[H_V2];
                if (lim->memory && (r = write_u64_at(d, "memory.max", lim->memory)) < 0)
                        return r;
                if (lim->pids && (r = write_u64_at(d, "pids.max", lim->pids)) < 0)
                        return r;
                snprintf(buf, sizeof buf, "%llu %llu", (unsigned long long)quota,
                         (unsigned long long)period);
                if (lim->cpus_milli && (r = write_at(d, "cpu.max", buf)) < 0)
                        return r;
                return 0;
        }
        if (lim->memory) {
                /* the memsw limit may never be below the memory limit: raise
                 * it first, lower it after */
                int m = cg->dir[H_MEMORY];
                (void)write_u64_at(m, "memory.memsw.limit_in_bytes", lim->memory);
                if ((r = write_u64_at(m, "memory.limit_in_bytes", lim->memory)) < 0)
                        return r;
                (void)write_u64_at(m, "memory.memsw.limit_in_bytes", lim->memory);
        }
        if (lim->pids && (r = write_u64_at(cg->dir[H_PIDS], "pids.max", lim->pids)) < 0)
                return r;
        if (lim->cpus_milli) {
                /* quota first when the period shrinks, so quota/period never
                 * exceeds either setting in between (-EINVAL otherwise) */
                (void)write_u64_at(cg->dir[H_CPU], "cpu.cfs_quota_us", quota);
                if ((r = write_u64_at(cg->dir[H_CPU], "cpu.cfs_period_us", period)) < 0 ||
                    (r = write_u64_at(cg->dir[H_CPU], "cpu.cfs_quota_us", quota)) < 0)
                        return r;
        }
        return 0;
}

int cgroup_stats(const struct rf_cgroup *cg, struct rf_cgroup_stats *st)
{
        char buf[4096];

        memset(st, 0, sizeof *st);
        if (!cg)
                return -EINVAL;
        if (cg->v2_limits) {
                if (read_at(cg->dir[H_V2], "memory.peak", buf, sizeof buf) > 0)
                        st->memory_peak = strtoull(buf, NULL, 10);
                if (read_at(cg->dir[H_V2], "memory.events", buf, sizeof buf) > 0)
                        st->oom_kills = keyed_value(buf, "oom_kill");
        } else if (cg->dir[H_MEMORY] >= 0) {
                if (read_at(cg->dir[H_MEMORY], "memory.max_usage_in_bytes", buf, sizeof buf) > 0)
                        st->memory_peak = strtoull(buf, NULL, 10);
                if (read_at(cg->dir[H_MEMORY], "memory.oom_control", buf, sizeof buf) > 0)
                        st->oom_kills = keyed_value(buf, "oom_kill");
        }
        if (cg->v2_limits) {
                if (read_at(cg->dir[H_V2], "memory.current", buf, sizeof buf) > 0)
                        st->memory_current = strtoull(buf, NULL, 10);
        } else if (cg->dir[H_MEMORY] >= 0 &&
                   read_at(cg->dir[H_MEMORY], "memory.usage_in_bytes", buf, sizeof buf) > 0)
                st->memory_current = strtoull(buf, NULL, 10);
        int pd = cg->v2_limits ? cg->dir[H_V2] : cg->dir[H_PIDS];
        if (pd >= 0 && read_at(pd, "pids.events", buf, sizeof buf) > 0)
                st->pids_max_hits = keyed_value(buf, "max");
        if (pd >= 0 && read_at(pd, "pids.current", buf, sizeof buf) > 0)
                st->pids_current = strtoull(buf, NULL, 10);
        if (cg->dir[H_V2] >= 0 && read_at(cg->dir[H_V2], "cpu.stat", buf, sizeof buf) > 0)
                st->cpu_usec = keyed_value(buf, "usage_usec");
        return 0;
}

struct rf_cgroup *cgroup_destroy(struct rf_cgroup *cg)
{
        if (!cg)
                return NULL;
        cg->oom_fd = safe_close(cg->oom_fd);
        cg->oom_ctl_fd = safe_close(cg->oom_ctl_fd);
        cg->pids_fd = safe_close(cg->pids_fd);
        for (int h = 0; h < _H_MAX; h++) {
                if (cg->dir[h] < 0)
                        continue;
                /* Empty by now (the pid namespace is gone); if not, kill and
                 * wait a little for the kernel to finish tearing down. */
                for (int i = 0; i < 2000; i++) { /* up to ~2 s for a fork bomb to die */
                        if (unlinkat(cg->parent[h], cg->name, AT_REMOVEDIR) == 0 || errno != EBUSY)
                                break;
                        (void)cgroup_kill(cg);
                        nanosleep(&(struct timespec){0, 1000000}, NULL);
                }
                cg->dir[h] = safe_close(cg->dir[h]);
        }
        for (int h = 0; h < _H_MAX; h++)
                cg->parent[h] = safe_close(cg->parent[h]);
        free(cg);
        return NULL;
}
