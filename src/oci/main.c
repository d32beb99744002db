/*
 * main.c — ringfence-oci: ringfence behind runc's command line (issue 17).
 *
 * A container is a ringfence run (supervisor/start.h) whose root is the
 * bundle's root filesystem (--rootfs) and whose settings come from its
 * config.json (oci/spec.h, oci/request.h). It has `create` and `start`
 * (the init a child of the engine's shim, held until start), `run`
 * (create, start and wait, in the foreground), `exec` (a process joining
 * the container with every layer its init got), `state`, `list`, `kill`,
 * `pause`, `resume`, `delete`, `ps`, `events`, `update`, `spec`,
 * `features` and `--version`; runc's
 * other commands are known and refused with a line saying they are not
 * there yet, and an unknown command or option fails
 * (exit 1, or 125 once a container was asked for and refused).
 *
 * Global options as runc's: --root DIR (the containers' state, default
 * /run/ringfence-oci), --log FILE and --log-format text|json (errors also
 * go there, as engines read them), --debug, --rootless, and
 * --systemd-cgroup, refused: there is no systemd cgroup driver yet.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/ioctl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "config.h"
#include "oci/hooks.h"
#include "oci/mountpath.h"
#include "oci/request.h"
#include "oci/seccomp.h"
#include "sandbox/joinplan.h"
#include "sandbox/launch.h"
#include "sandbox/steps.h"
#include "oci/spec.h"
#include "sandbox/hostuid.h"
#include "policy/policy.h"
#include "shared/execkind.h"
#include "shared/json.h"
#include "shared/macro.h"
#include "shared/procstat.h"
#include "sandbox/plan.h"
#include "supervisor/control.h"
#include "supervisor/registry.h"
#include "supervisor/run.h"
#include "supervisor/start.h"

#define OCI_ROOT_DEFAULT "/run/ringfence-oci"
#define OCI_ID_MAX       128
#define OCI_PRESERVE_MAX 1024 /* fds --preserve-fds may pass (3..1026) */
/* a string literal appended to a json_buf, its length counted here */
#define APPEND(b, lit) json_buf_append((b), "" lit, sizeof("" lit) - 1) /* literals only */

static int oci_delete(int argc, char **argv);
static int read_own(const char *path, size_t max, bool ours, char **buf, size_t *len);

static struct {
        const char *root;
        const char *log;
        bool log_json;
        bool debug;
        bool quiet;              /* a created container's supervisor: fds 0-2 are the container's */
        const char *state_dir;   /* --state-dir: ringfence's (audit log, registry); NULL: default */
        const char *cgroup_root; /* --cgroup-root: a delegated cgroup root; NULL: none */
} g = {.root = OCI_ROOT_DEFAULT};

/* One error line: stderr, and the --log file (JSON lines with
 * --log-format json, as runc writes them). */
static void oci_error(const char *fmt, ...) _printf_(1, 2);
static void oci_error(const char *fmt, ...)
{
        char msg[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (!g.quiet) {
                fputs("ringfence-oci: ", stderr);
                (void)json_escape_fwrite(stderr, msg, strlen(msg), true);
                fputc('\n', stderr);
        }
        if (!g.log)
                return;
        int fd = open(g.log, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        FILE *f = fd >= 0 ? fdopen(fd, "a") : NULL;
        if (!f) {
                safe_close(fd);
                return;
        }
        if (g.log_json) {
                struct json_buf b = {0};
                char ts[64];
                time_t now = time(NULL);
                struct tm tm;
                strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
                APPEND(&b, "{\"level\":\"error\",\"msg\":");
                json_buf_append_string(&b, msg, strlen(msg));
                APPEND(&b, ",\"time\":");
                json_buf_append_string(&b, ts, strlen(ts));
                APPEND(&b, "}\n");
                if (!b.error)
                        fputs(b.data, f);
                json_buf_done(&b);
        } else {
                fputs("ringfence-oci: ", f);
                (void)json_escape_fwrite(f, msg, strlen(msg), true);
                fputc('\n', f);
        }
        fclose(f);
}

static void oci_print_error(const struct rf_error *err)
{
        char buf[RF_ERROR_MSG_MAX + 2 * RF_ERROR_PATH_MAX + 32];
        rf_error_format(err, buf, sizeof buf);
        oci_error("%s", buf);
}

static void usage(FILE *f)
{
        fputs("Usage: ringfence-oci [GLOBAL OPTIONS] COMMAND [OPTIONS] [ID]\n"
              "\n"
              "ringfence as an OCI runtime (runc's command line).\n"
              "\n"
              "Commands:\n"
              "  create [-b BUNDLE] [--pid-file F] [--console-socket S] ID\n"
              "                       make container ID, held before its command (engines)\n"
              "  start ID             start a created container's command\n"
              "  exec [-p PROCESS.json] [-d] [--pid-file F] [-t --console-socket S]\n"
              "       [--cwd DIR] [-e NAME=VALUE] ID [COMMAND...]\n"
              "                       a process joining running container ID, with every\n"
              "                       layer its init got\n"
              "  run [-b BUNDLE] ID   create, start and wait for container ID (foreground)\n"
              "  state ID             its state (JSON, as the runtime spec says)\n"
              "  list [-q] [--format json]   the containers\n"
              "  kill [--all] ID [SIGNAL]    TERM (default), INT, HUP, QUIT; KILL ends it all\n"
              "  pause ID | resume ID freeze or thaw it\n"
              "  delete [--force] ID  a stopped container's leftovers; --force kills first\n"
              "  ps [--format table|json] ID   its processes (host pids)\n"
              "  events [--stats] [--interval N] ID   its cpu, memory and tasks (JSON)\n"
              "  update [-r FILE|-] [--memory B] [--pids-limit N] [--cpu-quota Q]\n"
              "       [--cpu-period P] ID   lower its limits (never above its own)\n"
              "  spec [-b BUNDLE]     write a config.json that ringfence-oci runs\n"
              "  features             what this runtime implements (JSON)\n"
              "  --version            the versions of ringfence-oci and the runtime spec\n"
              "\n"
              "Not there yet (refused): checkpoint, restore.\n"
              "\n"
              "Global options:\n"
              "  --root DIR           the containers' state (default " OCI_ROOT_DEFAULT ";\n"
              "                       rootless: $XDG_RUNTIME_DIR/ringfence-oci)\n"
              "  --state-dir DIR      ringfence's state dir (audit log, runs; default as\n"
              "                       ringfence's: engines pass no environment)\n"
              "  --cgroup-root PATH   a cgroup delegated to ringfence-oci: a container's\n"
              "                       absolute cgroupsPath may lie beneath it (default:\n"
              "                       only beneath ringfence-oci's own cgroup)\n"
              "  --log FILE           errors also to FILE\n"
              "  --log-format FMT     text or json\n"
              "  --debug              more detail\n"
              "  --rootless true|false|auto   accepted (ringfence decides by its uid)\n"
              "  --systemd-cgroup     refused: no systemd cgroup driver yet\n"
              "\n"
              "See docs/OCI.md.\n",
              f);
}

/* A container id as runc takes them: [A-Za-z0-9_+.-], 1-128 bytes, not
 * "." or "..". */
static bool id_valid(const char *id)
{
        size_t n = strlen(id);
        if (n == 0 || n > OCI_ID_MAX || !strcmp(id, ".") || !strcmp(id, ".."))
                return false;
        return strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+.-") ==
               n;
}

/* The bundle's config.json, whole (at most JSON_INPUT_MAX bytes). */
static int read_config(int bundle, char **buf, size_t *len, struct rf_error *err)
{
        _cleanup_close_ int fd = openat(bundle, "config.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0)
                return rf_error_set(err, -errno, "config.json: %s", strerror(errno));
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return rf_error_set(err, -EINVAL, "config.json: not a regular file");
        if (st.st_size > JSON_INPUT_MAX)
                return rf_error_set(err, -E2BIG, "config.json: larger than %d bytes",
                                    JSON_INPUT_MAX);
        _cleanup_free_ char *b = malloc((size_t)st.st_size + 1);
        size_t got = 0;
        if (!b)
                return rf_error_set(err, -ENOMEM, "out of memory");
        while (got < (size_t)st.st_size) {
                ssize_t n = read(fd, b + got, (size_t)st.st_size - got);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return rf_error_set(err, n < 0 ? -errno : -EIO, "config.json: short read");
                got += (size_t)n;
        }
        *buf = TAKE_PTR(b);
        *len = got;
        return 0;
}

/* --- run ---------------------------------------------------------------------- */

struct container {
        char dir[PATH_MAX]; /* ROOT/ID, made here; removed at the end */
        char ws[PATH_MAX];  /* ROOT/ID/ws: the run's (empty) workspace */
        bool made;
};

static void container_done(struct container *c)
{
        char path[PATH_MAX + 16];
        if (!c->made)
                return;
        snprintf(path, sizeof path, "%s/state.json", c->dir);
        (void)unlink(path);
        snprintf(path, sizeof path, "%s/start", c->dir);
        (void)unlink(path);
        snprintf(path, sizeof path, "%s/join", c->dir);
        (void)unlink(path);
        snprintf(path, sizeof path, "%s/hooks.json", c->dir);
        (void)unlink(path);
        (void)rmdir(c->ws);
        (void)rmdir(c->dir);
        c->made = false;
}

static int container_make(struct container *c, const char *id, uid_t uid, gid_t gid,
                          struct rf_error *err)
{
        struct stat st;
        char path[PATH_MAX];
        /* with its parents, as runc makes it (a new containerd namespace,
         * a shim's own --root) */
        if (snprintf(path, sizeof path, "%s", g.root) >= (int)sizeof path)
                return rf_error_set(err, -ENAMETOOLONG, "--root %s: too long", g.root);
        for (char *sl = strchr(path + 1, '/');; sl = strchr(sl + 1, '/')) {
                if (sl)
                        *sl = '\0';
                if (mkdir(path, 0700) < 0 && errno != EEXIST)
                        return rf_error_set(err, -errno, "--root %s: %s: %s", g.root, path,
                                            strerror(errno));
                if (!sl)
                        break;
                *sl = '/';
        }
        /* the containers' state is ours alone: what it names is signalled */
        if (lstat(g.root, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
            (st.st_mode & 022))
                return rf_error_set(err, -EPERM,
                                    "--root %s: not a directory of this user's that only it "
                                    "may write",
                                    g.root);
        if (snprintf(c->dir, sizeof c->dir, "%s/%s", g.root, id) >= (int)sizeof c->dir - 3)
                return rf_error_set(err, -ENAMETOOLONG, "--root %s: too long", g.root);
        memcpy(c->ws, c->dir, strlen(c->dir));
        memcpy(c->ws + strlen(c->dir), "/ws", 4);
        if (mkdir(c->dir, 0711) < 0)
                return rf_error_set(err, -errno, "container %s: %s", id,
                                    errno == EEXIST ? "exists already" : strerror(errno));
        c->made = true;
        if (mkdir(c->ws, 0700) < 0 || chown(c->ws, uid, gid) < 0)
                return rf_error_set(err, -errno, "container %s: its directory: %s", id,
                                    strerror(errno));
        return 0;
}

/*
 * ROOT/ID/state.json: what `state`, `list`, `kill`, `pause`, `resume` and
 * `delete` need of a container: its run (id and ringfence's state dir),
 * its supervisor, its bundle, when it was made, its annotations. Written
 * whole (a temporary file renamed) before the run starts.
 */
static int state_write(const struct container *c, const char *id, const char *bundle,
                       const char *run, const char *state_dir, const struct oci_spec *s,
                       struct rf_error *err)
{
        struct json_buf b = {0};
        char tmp[PATH_MAX + 16], path[PATH_MAX + 16], created[64];
        time_t now = time(NULL);
        struct tm tm;

        strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
        APPEND(&b, "{\"id\":");
        json_buf_append_string(&b, id, strlen(id));
        APPEND(&b, ",\"run\":");
        json_buf_append_string(&b, run, strlen(run));
        APPEND(&b, ",\"state_dir\":");
        json_buf_append_string(&b, state_dir, strlen(state_dir));
        APPEND(&b, ",\"bundle\":");
        json_buf_append_string(&b, bundle, strlen(bundle));
        APPEND(&b, ",\"created\":");
        json_buf_append_string(&b, created, strlen(created));
        char sup[32];
        int n = snprintf(sup, sizeof sup, ",\"supervisor\":%d", (int)getpid());
        json_buf_append(&b, sup, (size_t)n);
        APPEND(&b, ",\"annotations\":{");
        for (size_t i = 0; i < s->n_annotations; i++) {
                if (i)
                        APPEND(&b, ",");
                json_buf_append_string(&b, s->annotations[i].key, strlen(s->annotations[i].key));
                APPEND(&b, ":");
                json_buf_append_string(&b, s->annotations[i].value,
                                       strlen(s->annotations[i].value));
        }
        APPEND(&b, "}}\n");
        snprintf(tmp, sizeof tmp, "%s/state.json.new", c->dir);
        snprintf(path, sizeof path, "%s/state.json", c->dir);
        int fd = b.error ? -1
                         : open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        bool good = fd >= 0 && write(fd, b.data, b.len) == (ssize_t)b.len;
        good = fd >= 0 && close(fd) == 0 && good && rename(tmp, path) == 0;
        json_buf_done(&b);
        if (!good) {
                (void)unlink(tmp);
                return rf_error_set(err, -EIO, "container %s: cannot write its state", id);
        }
        return 0;
}

/* state.json's lock, held by this process (and the run's, which inherit
 * it) for the container's life: `state`, `kill`, `delete` tell a live
 * container by it (held_live). */
static int state_lock(const struct container *c, int *fd, struct rf_error *err)
{
        char path[PATH_MAX + 16];
        snprintf(path, sizeof path, "%s/state.json", c->dir);
        *fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (*fd < 0 || flock(*fd, LOCK_EX | LOCK_NB) < 0)
                return rf_error_set(err, -errno, "cannot lock %s: %s", path, strerror(errno));
        return 0;
}

/* With ringfence.io/policy: the named policy, loaded, is the ceiling
 * (oci_policy_ceiling). 0, or -errno with err set. */
static int policy_ceiling(const char *file, struct rf_policy *o, struct rf_error *err)
{
        _cleanup_policy_ struct rf_policy *p = NULL;
        int r = policy_load_file(file, &p, err);
        return r < 0 ? r : oci_policy_ceiling(p, o, err);
}

static void hook_note(void *ctx, const char *line)
{
        oci_error("%s", line);
}

/* What run and create share: the bundle, read and checked, and the
 * request's settings made from it. */
struct bundle {
        char path[PATH_MAX], rootfs[PATH_MAX], pfile[PATH_MAX];
        char *doc;
        struct oci_spec *spec;
        struct rf_policy *overlay;
        bool named_policy;
        struct plan_mount mounts[OCI_MOUNTS_MAX];
        size_t n_mounts;
        struct plan_sysctl sysctl[PLAN_SYSCTL_MAX];
        size_t n_sysctl;
        struct rf_seccomp_plan seccomp; /* the container's own profile, or none */
        struct cgroup_place cgroup;     /* linux.cgroupsPath; path NULL: none */
        /* a pod's namespaces to join (PLAN_JOIN_*), valid when `joins`:
         * owned fds, -1 for a new one; `pod` names the container whose they are */
        bool joins;
        int join_ns[PLAN_JOIN_NS];
        char pod[OCI_ID_MAX + 1];
        bool adopt_net; /* join_ns[PLAN_JOIN_NET] is an engine's, captured by this run */
        /* linux.devices, each with the host's node found (devices_find) */
        struct plan_device devices[OCI_DEVICES_MAX];
        bool host_ids; /* linux.uidMappings/gidMappings: the host ids of its user */
        uint32_t host_uid, host_gid;
        char *device_host[OCI_DEVICES_MAX]; /* owned */
        size_t n_devices;
        char *mount_dst[OCI_MOUNTS_MAX]; /* owned: mounts[i].dst resolved in the root */
};

static int pod_join(const char *what, struct bundle *b);

static void bundle_done(struct bundle *b)
{
        free(b->doc);
        b->doc = NULL;
        oci_spec_freep(&b->spec);
        policy_free(b->overlay);
        b->overlay = NULL;
        free(b->seccomp.filter);
        b->seccomp.filter = NULL;
        for (int i = 0; b->joins && i < PLAN_JOIN_NS; i++)
                b->join_ns[i] = safe_close(b->join_ns[i]);
        for (size_t i = 0; i < b->n_devices; i++)
                free(b->device_host[i]);
        b->n_devices = 0;
        for (size_t i = 0; i < OCI_MOUNTS_MAX; i++) {
                free(b->mount_dst[i]);
                b->mount_dst[i] = NULL;
        }
}

/* Each mount's destination resolved inside the bundle's root, the image's
 * symlinks followed there and never out of it (mountpath.h), then checked
 * again: the path a mount lands on is the one checked, ordered and made.
 * A root that cannot be opened is left to the run, which refuses it with
 * its own line. 0, or the exit status with the line printed. */
static int mounts_resolve(const char *what, struct bundle *b)
{
        /* where ringfence's own layout hides the image's tree */
        static const char *const owned[] = {"/dev",     "/proc",     "/sys", "/tmp",
                                            "/var/tmp", OCI_RUN_OWN, NULL};
        if (!b->n_mounts)
                return 0;
        _cleanup_close_ int rfd = open(b->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rfd < 0)
                return 0;
        for (size_t i = 0; i < b->n_mounts; i++) {
                char dst[PATH_MAX];
                struct rf_error err = {0};
                int r = oci_path_in_rootfs(rfd, b->mounts[i].dst, owned, dst, sizeof dst);
                if (r < 0) {
                        oci_error("%s: mounts: %.200s: cannot be resolved inside the root: %s",
                                  what, b->mounts[i].dst, strerror(-r));
                        return RF_EXIT_REFUSED;
                }
                if (oci_mount_dest_check(dst, b->mounts[i].src != NULL, &err) < 0) {
                        oci_error("%s: mounts: %.200s is %s inside the root: %s", what,
                                  b->mounts[i].dst, dst, err.msg);
                        return RF_EXIT_REFUSED;
                }
                if (!strcmp(dst, b->mounts[i].dst))
                        continue;
                if (!(b->mount_dst[i] = strdup(dst))) {
                        oci_error("%s: out of memory", what);
                        return RF_EXIT_REFUSED;
                }
                b->mounts[i].dst = b->mount_dst[i];
        }
        return 0;
}

static void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

#define DEV_SCAN_MAX 8192 /* entries of the host's /dev a device is looked for in */

/* A host node the container's user can open: its "other" bits (the node
 * is bound with its host owner and mode). */
static bool dev_usable(const struct stat *st)
{
        return (st->st_mode & 0006) == 0006;
}

/* The host's node of type `type` (S_IFCHR, S_IFBLK) and number `rdev`
 * beneath /dev (at most 3 levels, DEV_SCAN_MAX entries), one the
 * container's user can open when `usable`, into out. 0 or -ENOENT. */
static int dev_scan(const char *dir, int depth, mode_t type, dev_t rdev, bool usable, size_t *seen,
                    char *out, size_t len)
{
        /* /dev's own file system only: never into another mount beneath
         * it (a user's tmpfs or FUSE mount in /dev/shm) */
        struct stat top;
        if (lstat("/dev", &top) < 0)
                return -ENOENT;
        _cleanup_(closedirp) DIR *d = opendir(dir);
        if (!d)
                return -ENOENT;
        for (struct dirent *e; (e = readdir(d)) && (*seen)++ < DEV_SCAN_MAX;) {
                char path[PATH_MAX];
                struct stat st;
                if (e->d_name[0] == '.' ||
                    snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path ||
                    lstat(path, &st) < 0)
                        continue;
                if ((st.st_mode & S_IFMT) == type && st.st_rdev == rdev &&
                    (!usable || dev_usable(&st))) {
                        snprintf(out, len, "%s", path);
                        return 0;
                }
                if (S_ISDIR(st.st_mode) && depth < 3 && st.st_dev == top.st_dev &&
                    dev_scan(path, depth + 1, type, rdev, usable, seen, out, len) == 0)
                        return 0;
        }
        return -ENOENT;
}

/* linux.devices: each the host's node of the same type and numbers — at
 * the same path if it is there, else the first beneath /dev — which the
 * container's user can open (the node's "other" bits: ringfence binds the
 * host's node, with its owner and mode, and makes none). 0, or the exit
 * status with the line printed. */
static int devices_find(const char *what, struct bundle *b)
{
        const struct oci_spec *sp = b->spec;
        for (size_t i = 0; i < sp->n_devices; i++) {
                const struct oci_device *d = &sp->devices[i];
                mode_t type = d->type == 'b' ? S_IFBLK : S_IFCHR;
                dev_t rdev = makedev((unsigned)d->major, (unsigned)d->minor);
                char host[PATH_MAX];
                struct stat st;
                size_t seen = 0, seen2 = 0;
                /* the config's own path, else a node the user can open,
                 * else any (to say why it cannot be used) */
                if (!(lstat(d->path, &st) == 0 && (st.st_mode & S_IFMT) == type &&
                      st.st_rdev == rdev && snprintf(host, sizeof host, "%s", d->path) > 0) &&
                    dev_scan("/dev", 0, type, rdev, true, &seen, host, sizeof host) < 0 &&
                    dev_scan("/dev", 0, type, rdev, false, &seen2, host, sizeof host) < 0) {
                        oci_error("%s: linux.devices[%zu] %.200s (%c %lld:%lld): no such node on "
                                  "the host (ringfence-oci binds the host's nodes, it makes none)",
                                  what, i, d->path, d->type, (long long)d->major,
                                  (long long)d->minor);
                        return RF_EXIT_REFUSED;
                }
                if (stat(host, &st) < 0 || !dev_usable(&st)) {
                        oci_error("%s: linux.devices[%zu] %.200s: the host's node %.200s is mode "
                                  "%04o: the container's user could not open it",
                                  what, i, d->path, host, (unsigned)(st.st_mode & 07777));
                        return RF_EXIT_REFUSED;
                }
                if (!(b->device_host[i] = strdup(host))) {
                        oci_error("%s: out of memory", what);
                        return RF_EXIT_REFUSED;
                }
                b->devices[i] = (struct plan_device){
                        .path = d->path, .host = b->device_host[i], .type = type};
                b->n_devices = i + 1;
        }
        return 0;
}

/* Huge pages of `kb` KiB the host could give a container: its pool and
 * overcommit (sysfs). 0 where the kernel has no such size. */
static uint64_t hugepages_available(uint64_t kb)
{
        static const char *const files[] = {"nr_hugepages", "nr_overcommit_hugepages"};
        uint64_t total = 0;
        for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
                char path[128], buf[32];
                snprintf(path, sizeof path, "/sys/kernel/mm/hugepages/hugepages-%llukB/%s",
                         (unsigned long long)kb, files[i]);
                _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0 && errno == ENOENT)
                        return 0;
                ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
                if (n <= 0)
                        return UINT64_MAX; /* cannot tell: taken as some */
                buf[n] = '\0';
                char *end;
                unsigned long long v = strtoull(buf, &end, 10);
                if (end == buf || (*end && *end != '\n'))
                        return UINT64_MAX;
                total += v;
        }
        return total;
}

/* Read and check bundle `dir` for `what`: 0, or the exit status with the
 * line printed (nothing is made before this says yes). */
static int bundle_load(const char *what, const char *dir, struct bundle *b)
{
        struct rf_error err = {0};
        size_t len = 0;
        int r;
        if (!realpath(dir, b->path)) {
                oci_error("%s: bundle %s: %s", what, dir, strerror(errno));
                return 1;
        }
        _cleanup_close_ int bfd = open(b->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        b->overlay = policy_new();
        if (bfd < 0 || !b->overlay) {
                oci_error("%s: bundle %s: %s", what, b->path, strerror(bfd < 0 ? errno : ENOMEM));
                return 1;
        }
        if ((r = read_config(bfd, &b->doc, &len, &err)) < 0 ||
            (r = oci_spec_parse(b->doc, len, &b->spec, &err)) < 0 ||
            (r = oci_overlay(b->spec, b->overlay, &err)) < 0 ||
            (r = oci_mounts(b->spec, b->mounts, &b->n_mounts, &err)) < 0 ||
            (r = oci_sysctls(b->spec, b->sysctl, &b->n_sysctl, &err)) < 0 ||
            (b->spec->seccomp.present &&
             (r = oci_seccomp_build(&b->spec->seccomp, &b->seccomp, &err)) < 0) ||
            (r = oci_host_ids(b->spec, &b->host_ids, &b->host_uid, &b->host_gid, &err)) < 0 ||
            (r = oci_policy_path(b->spec, b->pfile, sizeof b->pfile, &err)) < 0) {
                oci_print_error(&err);
                return RF_EXIT_REFUSED;
        }
        b->named_policy = r == 1;
        /* a huge page limit holds where the host has no such pages to give
         * (ringfence has no hugetlb controller): Kubernetes writes a limit
         * of 0 for every size into every container */
        for (size_t i = 0; i < b->spec->n_hugepages; i++)
                if (hugepages_available(b->spec->hugepages[i].page_kb) > 0) {
                        oci_error("%s: linux.resources.hugepageLimits[%zu]: the host has huge "
                                  "pages of %llu KiB to give and ringfence-oci cannot limit them "
                                  "(no hugetlb controller): refused",
                                  what, i, (unsigned long long)b->spec->hugepages[i].page_kb);
                        return RF_EXIT_REFUSED;
                }
        if ((r = devices_find(what, b)) != 0)
                return r;
        const char *cp = b->spec->cgroups_path;
        if (cp && cp[0]) {
                if ((r = cgroup_path_check(cp, strlen(cp))) < 0) {
                        oci_error("%s: linux.cgroupsPath %.200s: %s", what, cp,
                                  r == -EOPNOTSUPP ? "systemd's slice:prefix:name form: no "
                                                     "systemd cgroup driver (cgroupfs only)"
                                                   : "not a clean cgroup path");
                        return RF_EXIT_REFUSED;
                }
                b->cgroup = (struct cgroup_place){.path = cp, .root = g.cgroup_root};
        }
        int n = b->spec->root_path[0] == '/'
                        ? snprintf(b->rootfs, sizeof b->rootfs, "%s", b->spec->root_path)
                        : snprintf(b->rootfs, sizeof b->rootfs, "%s/%s", b->path,
                                   b->spec->root_path);
        if (n < 0 || (size_t)n >= sizeof b->rootfs) {
                oci_error("%s: root.path: too long", what);
                return RF_EXIT_REFUSED;
        }
        return mounts_resolve(what, b);
}

/* A container's run, made ready to start: its directory and state (locked
 * by this process for the run's life), its run id, ringfence's state dir. */
struct made {
        struct container ct;
        int lock;
        char *state_dir;
        char run_id[RF_RUN_ID_LEN + 1];
        char identity[OCI_IDENTITY_MAX]; /* run.start's container= */
};

static void made_done(struct made *m)
{
        container_done(&m->ct); /* before the lock goes: no one sees it half gone */
        m->lock = safe_close(m->lock);
        free(m->state_dir);
        m->state_dir = NULL;
}

/* ROOT/ID/hooks.json: the config's startContainer, poststart and poststop
 * hooks, for `start` and `delete` (the bundle may be gone by then) */
static int hooks_keep(const struct container *c, const struct oci_spec *s, struct rf_error *err)
{
        char path[PATH_MAX + 16];
        struct json_buf b = {0};
        /* a config of its own (oci_spec_parse wants a root) */
        APPEND(&b, "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"/\"},\"hooks\":");
        oci_hooks_json(s, &b);
        APPEND(&b, "}\n");
        snprintf(path, sizeof path, "%s/hooks.json", c->dir);
        int fd = b.error ? -1
                         : open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        bool good = fd >= 0 && write(fd, b.data, b.len) == (ssize_t)b.len;
        good = fd >= 0 && close(fd) == 0 && good;
        json_buf_done(&b);
        return good ? 0 : rf_error_set(err, -EIO, "%s: cannot write it", path);
}

static int made_begin(const char *id, struct bundle *b, struct made *m, struct rf_error *err)
{
        int r;
        m->lock = -1;
        if ((r = rf_run_id_new(m->run_id)) < 0)
                return rf_error_set(err, r, "cannot make a run id: %s", strerror(-r));
        oci_identity(b->spec, id, m->identity, sizeof m->identity);
        if ((r = policy_set_string(&b->overlay->rootfs, b->rootfs, PATH_MAX, err)) < 0 ||
            (r = cli_state_dir(g.state_dir, 1, &m->state_dir, err)) < 0 ||
            (r = container_make(&m->ct, id, b->spec->uid, b->spec->gid, err)) < 0 ||
            (r = policy_set_string(&b->overlay->workspace, m->ct.ws, PATH_MAX, err)) < 0 ||
            (r = state_write(&m->ct, id, b->path, m->run_id, m->state_dir, b->spec, err)) < 0 ||
            (r = state_lock(&m->ct, &m->lock, err)) < 0)
                return r;
        if (b->named_policy && (r = policy_ceiling(b->pfile, b->overlay, err)) < 0)
                return r;
        if (b->spec->n_hooks[OCI_HOOK_START_CONTAINER] || b->spec->n_hooks[OCI_HOOK_POSTSTART] ||
            b->spec->n_hooks[OCI_HOOK_POSTSTOP])
                return hooks_keep(&m->ct, b->spec, err);
        return 0;
}

static struct run_request request_of(const struct bundle *b, const struct made *m)
{
        const struct oci_spec *sp = b->spec;
        return (struct run_request){
                .policy_file = b->named_policy ? b->pfile : NULL,
                .overlay = b->overlay,
                .argv = (char *const *)sp->args,
                .container = m->identity,
                .state_dir = m->state_dir,
                .run_id = m->run_id,
                .cwd = m->ct.ws,
                .cwd_inside = sp->cwd,
                .hostname = sp->hostname && sp->hostname[0] ? sp->hostname : NULL,
                .masked = sp->masked_paths,
                .n_masked = sp->n_masked_paths,
                .readonly = sp->readonly_paths,
                .n_readonly = sp->n_readonly_paths,
                .mounts = b->mounts,
                .n_mounts = b->n_mounts,
                .sysctl = b->sysctl,
                .n_sysctl = b->n_sysctl,
                .seccomp_extra = b->seccomp.filter ? &b->seccomp : NULL,
                .cgroup = b->cgroup.path ? &b->cgroup : NULL,
                .join_ns = b->joins ? b->join_ns : NULL,
                .adopt_net = b->adopt_net,
                .has_oom_score_adj = sp->has_oom_score_adj,
                .oom_score_adj = (int)sp->oom_score_adj,
                .cpu_shares = sp->cpu_shares,
                .devices = b->devices,
                .n_devices = b->n_devices,
                .host_ids = b->host_ids,
                .host_uid = b->host_uid,
                .host_gid = b->host_gid,
                .keep_secrets = oci_spec_annotation(sp, OCI_ANN_SECRETS),
                .uid = getuid(),
                .raw_terminal = true, /* the container's output is the engine's */
                .note = hook_note,
        };
}

/*
 * --preserve-fds N (runc's: socket activation, Podman's --preserve-fds):
 * our fds 3..3+N-1, each open, made close-on-exec here, so that no program
 * ringfence-oci or its supervisor runs (a hook, the egress process) gets
 * them; the container's command does (launch.c clears the flag for it).
 * 0, or -errno with the line printed.
 */
static int preserve_fds_take(const char *what, const char *arg, unsigned *n)
{
        char *end;
        errno = 0;
        unsigned long v = strtoul(arg, &end, 10);
        if (errno || end == arg || *end || arg[0] == '-' || v > OCI_PRESERVE_MAX) {
                oci_error("%s: --preserve-fds %.40s: a number of fds, at most %d", what, arg,
                          OCI_PRESERVE_MAX);
                return -EINVAL;
        }
        for (unsigned fd = 3; fd < 3 + v; fd++) {
                int fl = fcntl((int)fd, F_GETFD);
                if (fl < 0 || fcntl((int)fd, F_SETFD, fl | FD_CLOEXEC) < 0) {
                        oci_error("%s: --preserve-fds %lu: fd %u: %s", what, v, fd,
                                  strerror(errno));
                        return -EBADF;
                }
        }
        *n = (unsigned)v;
        return 0;
}

static int oci_run(int argc, char **argv)
{
        static const struct option opts[] = {
                {"bundle", required_argument, NULL, 'b'},
                {"pid-file", required_argument, NULL, 'P'},
                {"console-socket", required_argument, NULL, 'C'},
                {"detach", no_argument, NULL, 'd'},
                {"keep", no_argument, NULL, 'k'},
                {"no-pivot", no_argument, NULL, 'N'},
                {"no-new-keyring", no_argument, NULL, 'K'},
                {"no-subreaper", no_argument, NULL, 'S'},
                {"preserve-fds", required_argument, NULL, 'F'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        const char *bundle = ".";
        struct rf_error err = {0};
        unsigned preserve = 0;
        int c, r;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+b:dh", opts, NULL)) != -1) {
                switch (c) {
                case 'b':
                        bundle = optarg;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                case 'N': /* ringfence always pivots (the host's root is gone) */
                case 'K': /* no session keyring is reachable from a run */
                case 'S':
                case 'k':
                        break;
                case 'F':
                        if (preserve_fds_take("run", optarg, &preserve) < 0)
                                return 1;
                        break;
                case 'P':
                case 'C':
                case 'd':
                        oci_error("run: %s: not with run (create and start do it; see "
                                  "docs/OCI.md)",
                                  argv[optind - 1]);
                        return 1;
                default:
                        oci_error("run: unknown option %s", argv[optind - 1]);
                        return 1;
                }
        }
        if (optind != argc - 1) {
                oci_error("run: one container id (usage: ringfence-oci run [-b BUNDLE] ID)");
                return 1;
        }
        const char *id = argv[optind];
        if (!id_valid(id)) {
                oci_error("run: container id \"%.130s\": 1-128 of [A-Za-z0-9_+.-]", id);
                return 1;
        }
        _cleanup_(bundle_done) struct bundle b = {0};
        if ((r = bundle_load("run", bundle, &b)) != 0 || (r = pod_join("run", &b)) != 0)
                return r;
        for (size_t st = 0; st < _OCI_HOOK_COUNT; st++)
                if (b.spec->n_hooks[st]) {
                        oci_error("run: hooks.%s: not with run yet (create and start run them)",
                                  oci_hook_stage_name(st));
                        return RF_EXIT_REFUSED;
                }
        _cleanup_(made_done) struct made m = {.lock = -1};
        if (made_begin(id, &b, &m, &err) < 0) {
                oci_print_error(&err);
                return RF_EXIT_REFUSED;
        }
        struct run_request req = request_of(&b, &m);
        req.use_pty = b.spec->terminal && isatty(STDIN_FILENO);
        req.raw_terminal = false; /* a terminal of the caller's own */
        req.refusals_to = stderr;
        req.preserve_fds = preserve; /* ours stay open beside the container's until it ends */
        int status = run_start(&req, &err);
        if (err.msg[0])
                oci_print_error(&err);
        return status;
}

/* --- state, list, kill, pause, resume, delete ------------------------------- */

/* What state.json holds (strings into `doc`, which owns them). */
struct held {
        struct json_node *doc;
        int fd; /* state.json: its lock says whether the container's run lives */
        const char *id, *run, *state_dir, *bundle, *created;
        int supervisor;
        const struct json_node *annotations;
};

static void held_done(struct held *h)
{
        h->doc = json_node_free(h->doc);
        h->fd = safe_close(h->fd);
}

static const char *str_of(const struct json_node *o, const char *k)
{
        const struct json_node *n = json_object_get(o, k);
        return n && n->type == JSON_STRING ? n->str : NULL;
}

/* Container `id`'s state.json: 0, -ENOENT (no such container), -errno. */
static int held_read(const char *id, struct held *h, struct rf_error *err)
{
        char path[PATH_MAX + 160];
        struct stat st;
        h->fd = -1;
        if (!id_valid(id))
                return rf_error_set(err, -EINVAL,
                                    "container id \"%.130s\": 1-128 of "
                                    "[A-Za-z0-9_+.-]",
                                    id);
        snprintf(path, sizeof path, "%s/%s/state.json", g.root, id);
        h->fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (h->fd < 0)
                return rf_error_set(err, -errno, "container %s: %s", id,
                                    errno == ENOENT ? "does not exist" : strerror(errno));
        /* written by this uid's ringfence-oci only (--root is its own) */
        if (fstat(h->fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
            st.st_size <= 0 || st.st_size > JSON_INPUT_MAX)
                return rf_error_set(err, -EBADMSG, "container %s: its state is not ours", id);
        _cleanup_free_ char *buf = malloc((size_t)st.st_size);
        ssize_t n = buf ? pread(h->fd, buf, (size_t)st.st_size, 0) : -1;
        if (n != st.st_size || json_parse(buf, (size_t)n, &h->doc, err) < 0)
                return rf_error_set(err, -EBADMSG, "container %s: its state is unreadable", id);
        uint64_t sup = 0;
        const struct json_node *sn = json_object_get(h->doc, "supervisor");
        h->id = str_of(h->doc, "id");
        h->run = str_of(h->doc, "run");
        h->state_dir = str_of(h->doc, "state_dir");
        h->bundle = str_of(h->doc, "bundle");
        h->created = str_of(h->doc, "created");
        h->annotations = json_object_get(h->doc, "annotations");
        if (!h->id || !h->run || !h->state_dir || !h->bundle || !sn ||
            json_number_uint64(sn, &sup) < 0 || sup == 0 || sup > INT32_MAX)
                return rf_error_set(err, -EBADMSG, "container %s: its state is unreadable", id);
        h->supervisor = (int)sup;
        if (strcmp(h->id, id) != 0)
                return rf_error_set(err, -EBADMSG, "container %s: its state names %.130s", id,
                                    h->id);
        return 0;
}

/* Does the container's run live? Its `run` process holds state.json's
 * lock (flock) for its whole life, its run's processes with it. */
static bool held_live(const struct held *h)
{
        if (flock(h->fd, LOCK_SH | LOCK_NB) == 0) {
                (void)flock(h->fd, LOCK_UN);
                return false;
        }
        return errno == EWOULDBLOCK;
}

/* The container's status as the spec names them, and its init's pid (0
 * when it is gone): what its supervisor says, "stopped" when it says
 * nothing. */
static const char *held_status(const struct held *h, int *pid)
{
        char reply[CONTROL_MSG_MAX + 512];
        *pid = 0;
        if (!held_live(h))
                return "stopped";
        int r = registry_request(h->state_dir, h->run, "status", reply, sizeof reply, 1000);
        if (r == -ENOENT)
                return "creating"; /* alive, not registered yet */
        if (r < 0 || strncmp(reply, "ok ", 3) != 0)
                return "running"; /* alive; its supervisor did not answer in time */
        const char *p = strstr(reply, "\"init_pid\":");
        if (p)
                *pid = atoi(p + 11);
        static const struct {
                const char *run, *oci;
        } names[] = {{"paused ", "paused"},
                     {"running ", "running"},
                     {"created ", "created"},
                     {"starting ", "creating"},
                     {"setup ", "creating"}};
        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                if (!strncmp(reply + 3, names[i].run, strlen(names[i].run)))
                        return *pid > 0 ? names[i].oci : "stopped";
        /* exited, killed, timed-out, ending: its supervisor is finishing */
        *pid = 0;
        return "stopped";
}

/* the spec's state of container `h`: its status and init's pid as its
 * supervisor says (status NULL), or as given (a hook's state) */
static void state_json_as(const struct held *h, const char *st, int pid, struct json_buf *b)
{
        char num[32];
        if (!st)
                st = held_status(h, &pid);
        APPEND(b, "{\"ociVersion\":\"1.2.1\",\"id\":");
        json_buf_append_string(b, h->id, strlen(h->id));
        APPEND(b, ",\"status\":");
        json_buf_append_string(b, st, strlen(st));
        int n = snprintf(num, sizeof num, ",\"pid\":%d", pid);
        json_buf_append(b, num, (size_t)n);
        APPEND(b, ",\"bundle\":");
        json_buf_append_string(b, h->bundle, strlen(h->bundle));
        if (h->created) {
                APPEND(b, ",\"created\":");
                json_buf_append_string(b, h->created, strlen(h->created));
        }
        APPEND(b, ",\"annotations\":{");
        const struct json_node *a;
        bool first = true;
        if (h->annotations && h->annotations->type == JSON_OBJECT)
                JSON_FOREACH(a, h->annotations)
                {
                        if (a->type != JSON_STRING)
                                continue;
                        if (!first)
                                APPEND(b, ",");
                        first = false;
                        json_buf_append_string(b, a->key, a->key_len);
                        APPEND(b, ":");
                        json_buf_append_string(b, a->str, a->len);
                }
        APPEND(b, "}}");
}

static void state_json(const struct held *h, struct json_buf *b)
{
        state_json_as(h, NULL, 0, b);
}

/* Container `id`'s hooks of stage `st` (`s`: its config, or NULL: the
 * later stages kept in ROOT/ID/hooks.json), with its state as `status`
 * and `pid`. 0, or -errno with the line printed. */
static int hooks_run(const char *id, const struct oci_spec *s, enum oci_hook_stage st,
                     const char *status, int pid)
{
        struct rf_error err = {0};
        _cleanup_(held_done) struct held h = {.fd = -1};
        struct json_buf b = {0};
        int r = held_read(id, &h, &err);
        if (r == 0) {
                state_json_as(&h, status, pid, &b);
                r = b.error ? -ENOMEM : oci_hooks_run(s, st, b.data, b.len, &err);
        }
        json_buf_done(&b);
        if (r < 0)
                oci_print_error(&err);
        return r;
}

/* The later stages' hooks kept at create (ROOT/ID/hooks.json, written by
 * made_begin only when there are some), read as a config. 0 with *s NULL
 * when there are none. */
static int hooks_load(const char *id, char **doc, struct oci_spec **s, struct rf_error *err)
{
        char path[PATH_MAX + 160];
        size_t len = 0;
        *s = NULL;
        snprintf(path, sizeof path, "%s/%s/hooks.json", g.root, id);
        int r = read_own(path, JSON_INPUT_MAX, true, doc, &len);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return rf_error_set(err, r, "container %s: its hooks: %s", id, strerror(-r));
        return oci_spec_parse(*doc, len, s, err);
}

static int one_id(int argc, char **argv, const char *what, const char **id)
{
        if (argc != 2 || argv[1][0] == '-') {
                oci_error("%s: one container id (usage: ringfence-oci %s ID)", what, what);
                return -1;
        }
        *id = argv[1];
        return 0;
}

static int oci_state(int argc, char **argv)
{
        const char *id;
        struct rf_error err = {0};
        _cleanup_(held_done) struct held h = {.fd = -1};
        if (one_id(argc, argv, "state", &id) < 0)
                return 1;
        if (held_read(id, &h, &err) < 0) {
                oci_print_error(&err);
                return 1;
        }
        struct json_buf b = {0};
        state_json(&h, &b);
        if (!b.error)
                printf("%s\n", b.data);
        json_buf_done(&b);
        return b.error ? 1 : 0;
}

static int oci_list(int argc, char **argv)
{
        bool json = false, quiet = false;
        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet"))
                        quiet = true;
                else if ((!strcmp(argv[i], "-f") || !strcmp(argv[i], "--format")) && i + 1 < argc &&
                         (!strcmp(argv[i + 1], "json") || !strcmp(argv[i + 1], "table")))
                        json = !strcmp(argv[++i], "json");
                else if (!strcmp(argv[i], "--format=json"))
                        json = true;
                else if (strcmp(argv[i], "--format=table")) {
                        oci_error("list: unknown option %s (--format is json or table)", argv[i]);
                        return 1;
                }
        }
        DIR *d = opendir(g.root);
        struct dirent *de;
        bool first = true;
        if (json)
                fputs("[", stdout);
        else if (!quiet)
                printf("%-24s %-8s %-8s %s\n", "ID", "PID", "STATUS", "BUNDLE");
        while (d && (de = readdir(d))) {
                _cleanup_(held_done) struct held h = {.fd = -1};
                struct rf_error err = {0};
                if (de->d_name[0] == '.' || held_read(de->d_name, &h, &err) < 0)
                        continue;
                if (quiet) {
                        printf("%s\n", h.id);
                        continue;
                }
                if (json) {
                        struct json_buf b = {0};
                        state_json(&h, &b);
                        if (!b.error)
                                printf("%s%s", first ? "" : ",", b.data);
                        json_buf_done(&b);
                        first = false;
                        continue;
                }
                int pid;
                const char *st = held_status(&h, &pid);
                printf("%-24s %-8d %-8s %s\n", h.id, pid, st, h.bundle);
        }
        if (json)
                fputs("]\n", stdout);
        if (d)
                closedir(d);
        return 0;
}

struct find_run {
        const char *run;
        bool live;
        int pid;
};

static int find_run_cb(const struct run_info *info, bool live, void *ctx)
{
        struct find_run *f = ctx;
        if (strcmp(info->run, f->run) != 0)
                return 0;
        f->live = live;
        f->pid = info->pid <= INT32_MAX ? (int)info->pid : 0;
        return 1;
}

/* A signal's number from its name ("TERM", "SIGTERM", "WINCH", "RTMIN+3",
 * "RTMAX-1") or its number ("15"); 0 if none. Pure. */
static int signal_of(const char *s)
{
        char *end;
        if (!strncmp(s, "SIG", 3))
                s += 3;
        if (s[0] >= '0' && s[0] <= '9') {
                errno = 0;
                long v = strtol(s, &end, 10);
                return !errno && !*end && v > 0 && v < NSIG ? (int)v : 0;
        }
        if (!strncmp(s, "RTMIN", 5) || !strncmp(s, "RTMAX", 5)) {
                bool min = s[4] == 'N';
                long off = 0;
                if (s[5] == '+' || s[5] == '-') {
                        if ((s[5] == '+') != min)
                                return 0;
                        errno = 0;
                        off = strtol(s + 6, &end, 10);
                        if (errno || *end || s[6] < '0' || s[6] > '9')
                                return 0;
                } else if (s[5]) {
                        return 0;
                }
                long v = min ? SIGRTMIN + off : SIGRTMAX - off;
                return v >= SIGRTMIN && v <= SIGRTMAX ? (int)v : 0;
        }
        for (int i = 1; i < SIGRTMIN; i++) {
                const char *n = sigabbrev_np(i);
                if (n && !strcmp(n, s))
                        return i;
        }
        return 0;
}

/* kill [--all] ID [SIGNAL]: KILL ends the whole run (ringfence's kill
 * switch); TERM, INT, HUP, QUIT, USR1, USR2 go to its supervisor, which
 * forwards them to the command (and ends a created container that never
 * started); any other signal, and any with --all, the supervisor has the
 * run's init send: to the command's process group, or with --all to every
 * process of the container (exec'd ones too). STOP is refused: pause. */
static int oci_kill(int argc, char **argv)
{
        static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
        int i = 1, sig = SIGTERM;
        bool all = false;
        struct rf_error err = {0};
        _cleanup_(held_done) struct held h = {.fd = -1};
        if (i < argc && (!strcmp(argv[i], "--all") || !strcmp(argv[i], "-a"))) {
                i++;
                all = true;
        }
        if (i >= argc || argc - i > 2) {
                oci_error("kill: usage: ringfence-oci kill [--all] ID [SIGNAL]");
                return 1;
        }
        const char *id = argv[i], *s = i + 1 < argc ? argv[i + 1] : "TERM";
        sig = signal_of(s);
        if (!sig) {
                oci_error("kill: %.40s: not a signal", s);
                return 1;
        }
        if (sig == SIGSTOP) {
                oci_error("kill: STOP: refused (ringfence-oci pause freezes the whole container)");
                return 1;
        }
        bool plain = false;
        for (size_t k = 0; k < ARRAY_SIZE(forwarded); k++)
                plain |= forwarded[k] == sig;
        if (held_read(id, &h, &err) < 0) {
                oci_print_error(&err);
                return 1;
        }
        int pid;
        if (!strcmp(held_status(&h, &pid), "stopped")) {
                /* runc's words: the shims take "container not running" for
                 * a process already gone, not for a failed kill */
                oci_error("kill: %s: container not running", id);
                return 1;
        }
        if (sig == SIGKILL) {
                char reply[CONTROL_MSG_MAX + 512];
                int r = registry_request(h.state_dir, h.run, "kill ringfence-oci kill", reply,
                                         sizeof reply, 30000);
                if (r < 0 || strncmp(reply, "ok", 2)) {
                        oci_error("kill: container %s: %s", id, r < 0 ? strerror(-r) : reply);
                        return 1;
                }
                return 0;
        }
        if (all || !plain) {
                char req[32], reply[CONTROL_MSG_MAX + 512];
                snprintf(req, sizeof req, "signal %d%s", sig, all ? " all" : "");
                int r = registry_request(h.state_dir, h.run, req, reply, sizeof reply, 10000);
                if (r < 0 || strncmp(reply, "ok", 2)) {
                        oci_error("kill: container %s: %s", id, r < 0 ? strerror(-r) : reply);
                        return 1;
                }
                return 0;
        }
        /* the supervisor by pidfd, opened before it is checked: the run
         * is live and registered with that very pid, so the pidfd names it
         * (a pid reused after the check cannot be signalled) */
        _cleanup_close_ int pfd = (int)syscall(SYS_pidfd_open, h.supervisor, 0);
        struct find_run fr = {.run = h.run};
        if (pfd < 0 || registry_foreach(h.state_dir, find_run_cb, &fr) < 0 || !fr.live ||
            fr.pid != h.supervisor || !held_live(&h)) {
                oci_error("kill: container %s: its supervisor is not the one it names", id);
                return 1;
        }
        if (syscall(SYS_pidfd_send_signal, pfd, sig, NULL, 0) < 0) {
                oci_error("kill: container %s: %s", id, strerror(errno));
                return 1;
        }
        return 0;
}

static int oci_pause_resume(int argc, char **argv, bool pause)
{
        const char *id, *what = pause ? "pause" : "resume";
        struct rf_error err = {0};
        _cleanup_(held_done) struct held h = {.fd = -1};
        char reply[CONTROL_MSG_MAX + 512];
        if (one_id(argc, argv, what, &id) < 0)
                return 1;
        if (held_read(id, &h, &err) < 0) {
                oci_print_error(&err);
                return 1;
        }
        int r = registry_request(h.state_dir, h.run, what, reply, sizeof reply, 10000);
        if (r < 0 || strncmp(reply, "ok", 2)) {
                oci_error("%s: container %s: %s", what, id, r < 0 ? strerror(-r) : reply);
                return 1;
        }
        return 0;
}

/* ---- a pod: joining its sandbox container's namespaces ------------------------ */

#define OCI_SCAN_MAX 4096 /* containers under --root a pod's namespace is looked for in */

/* The live container of ours (under --root) whose init is in the namespace
 * `st` (of /proc/PID/ns/`kind`): its id into id[OCI_ID_MAX + 1]. 0,
 * -ENOENT. */
/* Is container `name`'s init live and in the namespace `st` (of
 * /proc/PID/ns/`kind`)? */
static bool container_in_ns(const char *name, const char *kind, const struct stat *st)
{
        struct rf_error err = {0};
        _cleanup_(held_done) struct held h = {.fd = -1};
        char path[64];
        struct stat ns;
        int pid;
        if (!id_valid(name) || held_read(name, &h, &err) < 0 || !held_live(&h))
                return false;
        (void)held_status(&h, &pid);
        snprintf(path, sizeof path, "/proc/%d/ns/%s", pid, kind);
        return pid > 0 && stat(path, &ns) == 0 && ns.st_ino == st->st_ino &&
               ns.st_dev == st->st_dev;
}

/* The live container of ours (under --root) whose init is in the namespace
 * `st` (of /proc/PID/ns/`kind`): its id into id[OCI_ID_MAX + 1]. The pod's
 * sandbox the engine names (`hint`, or NULL) is tried first, then every
 * container. 0, -ENOENT. */
static int container_of_ns(const char *kind, const struct stat *st, const char *hint, char *id)
{
        if (hint && container_in_ns(hint, kind, st)) {
                memcpy(id, hint, strlen(hint) + 1); /* id_valid: fits */
                return 0;
        }
        _cleanup_(closedirp) DIR *d = opendir(g.root);
        size_t seen = 0;
        if (!d)
                return -ENOENT;
        for (struct dirent *e; (e = readdir(d)) && seen < OCI_SCAN_MAX;) {
                if (e->d_name[0] == '.' || !id_valid(e->d_name))
                        continue;
                seen++;
                if (container_in_ns(e->d_name, kind, st)) {
                        memcpy(id, e->d_name, strlen(e->d_name) + 1);
                        return 0;
                }
        }
        return -ENOENT;
}

/* Is the namespace `st` (a network namespace) the host's: pid 1's or this
 * process's own (where the run's egress dials from)? */
static bool netns_host(const struct stat *st)
{
        static const char *const paths[] = {"/proc/1/ns/net", "/proc/self/ns/net"};
        struct stat h;
        for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
                if (stat(paths[i], &h) == 0 && h.st_ino == st->st_ino && h.st_dev == st->st_dev)
                        return true;
        return false;
}

/* Is any process in the network namespace `st`? A new namespace an engine
 * made (a bind-mounted nsfs file) has none; a live container's has its
 * processes. One stat per process of the host. */
static bool netns_busy(const struct stat *st)
{
        _cleanup_(closedirp) DIR *d = opendir("/proc");
        if (!d)
                return true; /* cannot tell: taken as busy (refused) */
        for (struct dirent *e; (e = readdir(d));) {
                char path[64];
                struct stat ns;
                if (e->d_name[0] < '1' || e->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof path, "%.20s/ns/net", e->d_name);
                if (fstatat(dirfd(d), path, &ns, 0) == 0 && ns.st_ino == st->st_ino &&
                    ns.st_dev == st->st_dev)
                        return true;
        }
        return false;
}

/* The namespaces the config joins by path (a pod's network, ipc and uts:
 * request.c refuses any other). An ipc or uts namespace must be a live
 * ringfence container's under the same --root; a network namespace is a
 * pod's (that container's: its run captures it) or a new one an engine
 * made, which this container's run captures (b->adopt_net) —
 * oci_netns_use decides. Never one whose egress would go unenforced. 0, or
 * the exit status with the line printed. */
static int pod_join(const char *what, struct bundle *b)
{
        static const struct {
                enum oci_ns type;
                int slot, nstype;
                const char *kind;
        } kinds[] = {{OCI_NS_NETWORK, PLAN_JOIN_NET, CLONE_NEWNET, "net"},
                     {OCI_NS_IPC, PLAN_JOIN_IPC, CLONE_NEWIPC, "ipc"},
                     {OCI_NS_UTS, PLAN_JOIN_UTS, CLONE_NEWUTS, "uts"}};
        const struct oci_spec *sp = b->spec;
        b->joins = true;
        for (int i = 0; i < PLAN_JOIN_NS; i++)
                b->join_ns[i] = -1;
        for (size_t n = 0; n < sp->n_namespaces; n++) {
                const struct oci_namespace *ns = &sp->namespaces[n];
                size_t k = 0;
                while (k < ARRAY_SIZE(kinds) && kinds[k].type != ns->type)
                        k++;
                if (!ns->path || k == ARRAY_SIZE(kinds))
                        continue;
                const char *name = oci_ns_name(ns->type);
                struct stat st;
                char owner[OCI_ID_MAX + 1];
                int fd = open(ns->path, O_RDONLY | O_CLOEXEC);
                if (fd < 0 || fstat(fd, &st) < 0) {
                        oci_error("%s: joining the %s namespace %.200s: %s", what, name, ns->path,
                                  strerror(errno));
                        safe_close(fd);
                        return RF_EXIT_REFUSED;
                }
                b->join_ns[kinds[k].slot] = fd;
                if (ioctl(fd, NS_GET_NSTYPE) != kinds[k].nstype) {
                        oci_error("%s: joining the %s namespace %.200s: not a %s namespace", what,
                                  name, ns->path, name);
                        return RF_EXIT_REFUSED;
                }
                /* Podman and CRI-O name the pod's sandbox container */
                const char *hint = oci_spec_annotation(sp, "io.kubernetes.cri-o.SandboxID");
                if (!hint)
                        hint = oci_spec_annotation(sp, "io.kubernetes.cri.sandbox-id");
                bool owned = container_of_ns(kinds[k].kind, &st, hint, owner) == 0;
                if (ns->type == OCI_NS_NETWORK) {
                        struct oci_netns_facts f = {.owned = owned, .host = netns_host(&st)};
                        /* containerd passes a pod's annotations on to its
                         * containers: the pod's egress (allow-hosts, a named
                         * policy), restated word for word, is no egress of
                         * the container's own */
                        static const char *const egress_keys[] = {OCI_ANN_ALLOW_HOSTS,
                                                                  OCI_ANN_POLICY};
                        f.pods_egress = true;
                        _cleanup_(held_done) struct held oh = {.fd = -1};
                        struct rf_error e2 = {0};
                        bool read = false;
                        for (size_t q = 0; owned && q < ARRAY_SIZE(egress_keys); q++) {
                                const char *mine = oci_spec_annotation(sp, egress_keys[q]);
                                if (!mine)
                                        continue;
                                if (!read && held_read(owner, &oh, &e2) < 0)
                                        oh.annotations = NULL;
                                read = true;
                                const struct json_node *a =
                                        oh.annotations
                                                ? json_object_get(oh.annotations, egress_keys[q])
                                                : NULL;
                                f.pods_egress &= a && a->type == JSON_STRING &&
                                                 a->len == strlen(mine) &&
                                                 !memcmp(a->str, mine, a->len);
                        }
                        f.busy = !owned && !f.host && netns_busy(&st);
                        struct rf_error err = {0};
                        int use = oci_netns_use(sp, &f, &err);
                        if (use < 0) {
                                oci_error("%s: joining the network namespace %.200s: %s", what,
                                          ns->path, err.msg);
                                return RF_EXIT_REFUSED;
                        }
                        if (use == OCI_NETNS_ADOPT) {
                                b->adopt_net = true;
                                continue;
                        }
                } else if (!owned) {
                        oci_error("%s: joining the %s namespace %.200s: not a ringfence-oci "
                                  "container's under %s (refused)",
                                  what, name, ns->path, g.root);
                        return RF_EXIT_REFUSED;
                }
                if (b->pod[0] && strcmp(b->pod, owner)) {
                        oci_error("%s: the namespaces joined are two containers' (%s, %s)", what,
                                  b->pod, owner);
                        return RF_EXIT_REFUSED;
                }
                snprintf(b->pod, sizeof b->pod, "%s", owner);
        }
        if (b->adopt_net && b->pod[0]) {
                oci_error("%s: a new network namespace of an engine's with container %s's other "
                          "namespaces: refused (a pod's are all its sandbox's)",
                          what, b->pod);
                return RF_EXIT_REFUSED;
        }
        return 0;
}

/* ---- ps, events, update ---------------------------------------------------- */

/* A stream (stdin), whole: at most `max` bytes, NUL-terminated. 0 or -errno. */
static int read_stream(int fd, size_t max, char **buf, size_t *len)
{
        size_t n = 0;
        _cleanup_free_ char *b = malloc(max + 1);
        if (!b)
                return -ENOMEM;
        for (;;) {
                ssize_t got = read(fd, b + n, max + 1 - n);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0)
                        return negative_errno();
                if (got == 0)
                        break;
                n += (size_t)got;
                if (n > max)
                        return -EFBIG;
        }
        if (n == 0)
                return -ENODATA;
        b[n] = '\0';
        *len = n;
        *buf = TAKE_PTR(b);
        return 0;
}

/* The host pids of the container's processes: every process in its init's
 * pid namespace (exec'd ones included), ascending, at most `max`. Their
 * count, or -errno (-ESRCH: the container is not running). */
static int container_pids(const struct held *h, pid_t *out, size_t max)
{
        int init;
        char path[64];
        struct stat ns, st;
        (void)held_status(h, &init);
        snprintf(path, sizeof path, "/proc/%d/ns/pid", init);
        if (init <= 0 || stat(path, &ns) < 0)
                return -ESRCH;
        _cleanup_(closedirp) DIR *d = opendir("/proc");
        if (!d)
                return negative_errno();
        size_t n = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
                char *end;
                long pid = strtol(e->d_name, &end, 10);
                if (*end || pid <= 0)
                        continue;
                snprintf(path, sizeof path, "/proc/%ld/ns/pid", pid);
                if (stat(path, &st) < 0 || st.st_ino != ns.st_ino || st.st_dev != ns.st_dev)
                        continue;
                if (n == max)
                        return -E2BIG;
                size_t k = n++;
                for (; k > 0 && out[k - 1] > (pid_t)pid; k--) /* sorted as it goes */
                        out[k] = out[k - 1];
                out[k] = (pid_t)pid;
        }
        return (int)n;
}

#define OCI_PS_MAX 65536 /* processes one `ps` lists */

/* ps [--format table|json] ID: the container's processes (host pids). */
static int oci_ps(int argc, char **argv)
{
        bool json = false;
        int i = 1;
        for (; i < argc && argv[i][0] == '-'; i++) {
                const char *v = NULL;
                if (!strcmp(argv[i], "--format") || !strcmp(argv[i], "-f"))
                        v = i + 1 < argc ? argv[++i] : NULL;
                else if (!strncmp(argv[i], "--format=", 9))
                        v = argv[i] + 9;
                else {
                        oci_error("ps: unknown option %s", argv[i]);
                        return 1;
                }
                if (!v || (strcmp(v, "json") && strcmp(v, "table"))) {
                        oci_error("ps: --format table or json");
                        return 1;
                }
                json = !strcmp(v, "json");
        }
        if (i + 1 != argc) {
                oci_error(i < argc ? "ps: ps(1) options are not passed on (use --format json)"
                                   : "ps: usage: ringfence-oci ps [--format table|json] ID");
                return 1;
        }
        struct rf_error err = {0};
        _cleanup_(held_done) struct held h = {.fd = -1};
        if (held_read(argv[i], &h, &err) < 0) {
                oci_print_error(&err);
                return 1;
        }
        _cleanup_free_ pid_t *pids = malloc(OCI_PS_MAX * sizeof *pids);
        int n = pids ? container_pids(&h, pids, OCI_PS_MAX) : -ENOMEM;
        if (n < 0) {
                oci_error("ps: container %s: %s", argv[i],
                          n == -ESRCH ? "not running" : strerror(-n));
                return 1;
        }
        if (json) {
                putchar('[');
                for (int k = 0; k < n; k++)
                        printf("%s%d", k ? "," : "", (int)pids[k]);
                puts("]");
                return 0;
        }
        printf("%-10s %-10s %s\n", "PID", "PPID", "COMMAND");
        for (int k = 0; k < n; k++) {
                struct procstat ps;
                if (procstat_read(pids[k], &ps) < 0)
                        continue; /* gone meanwhile */
                /* the command's name is the container's: shown inert */
                printf("%-10d %-10d ", (int)pids[k], (int)ps.ppid);
                for (const char *c = ps.comm; *c; c++)
                        putchar((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c);
                putchar('\n');
        }
        return 0;
}

/* A number of the status reply's "stats" object, 0 when absent. */
static unsigned long long stat_of(const char *reply, const char *key)
{
        char k[48];
        const char *st = strstr(reply, "\"stats\":{");
        snprintf(k, sizeof k, "\"%s\":", key);
        const char *p = st ? strstr(st, k) : NULL;
        return p ? strtoull(p + strlen(k), NULL, 10) : 0;
}

/* One runc-shaped stats event of the container, from its supervisor: 0,
 * 1 when it is not running. *oom: its OOM kill count. */
static int print_stats(const struct held *h, unsigned long long *oom)
{
        char reply[CONTROL_MSG_MAX + 512];
        if (!held_live(h) ||
            registry_request(h->state_dir, h->run, "status", reply, sizeof reply, 2000) < 0 ||
            strncmp(reply, "ok ", 3))
                return 1;
        struct json_buf b = {0};
        APPEND(&b, "{\"type\":\"stats\",\"id\":");
        json_buf_append_string(&b, h->id, strlen(h->id));
        APPEND(&b, ",\"data\":{\"cpu\":{\"usage\":{\"total\":");
        json_buf_append_uint(&b, stat_of(reply, "cpu_usec") * 1000);
        APPEND(&b, "}},\"memory\":{\"usage\":{\"usage\":");
        json_buf_append_uint(&b, stat_of(reply, "memory_current"));
        APPEND(&b, ",\"max\":");
        json_buf_append_uint(&b, stat_of(reply, "memory_peak"));
        APPEND(&b, "}},\"pids\":{\"current\":");
        json_buf_append_uint(&b, stat_of(reply, "pids_current"));
        APPEND(&b, "}}}");
        if (!b.error)
                printf("%s\n", b.data);
        json_buf_done(&b);
        *oom = stat_of(reply, "oom_kills");
        fflush(stdout);
        return 0;
}

/* events [--stats] [--interval SECONDS] ID: the container's stats once
 * (--stats), else every interval, with an "oom" event for each new OOM
 * kill, until it stops. */
static int oci_events(int argc, char **argv)
{
        bool once = false;
        unsigned interval = 5;
        int i = 1;
        for (; i < argc && argv[i][0] == '-'; i++) {
                const char *v = NULL;
                if (!strcmp(argv[i], "--stats")) {
                        once = true;
                        continue;
                }
                if (!strcmp(argv[i], "--interval"))
                        v = i + 1 < argc ? argv[++i] : NULL;
                else if (!strncmp(argv[i], "--interval=", 11))
                        v = argv[i] + 11;
                else {
                        oci_error("events: unknown option %s", argv[i]);
                        return 1;
                }
                char *end = NULL;
                unsigned long sec = v ? strtoul(v, &end, 10) : 0;
                if (!v || end == v || (*end && strcmp(end, "s")) || sec == 0 || sec > 3600) {
                        oci_error("events: --interval 1s to 3600s");
                        return 1;
                }
                interval = (unsigned)sec;
        }
        if (i + 1 != argc) {
                oci_error("events: usage: ringfence-oci events [--stats] [--interval N] ID");
                return 1;
        }
        struct rf_error err = {0};
        _cleanup_(held_done) struct held h = {.fd = -1};
        if (held_read(argv[i], &h, &err) < 0) {
                oci_print_error(&err);
                return 1;
        }
        unsigned long long oom = 0, seen = 0;
        if (print_stats(&h, &seen)) {
                oci_error("events: container %s: not running", argv[i]);
                return 1;
        }
        while (!once) {
                sleep(interval);
                if (print_stats(&h, &oom))
                        break;
                if (oom > seen) {
                        printf("{\"type\":\"oom\",\"id\":");
                        json_escape_fwrite(stdout, h.id, strlen(h.id), true);
                        printf("}\n");
                        fflush(stdout);
                        seen = oom;
                }
        }
        return 0;
}

/* A byte count as runc takes one: digits with an optional k/m/g (powers
 * of 1024). 0 for none or a bad one. */
static uint64_t bytes_of(const char *v)
{
        char *end;
        errno = 0;
        unsigned long long n = strtoull(v, &end, 10);
        unsigned shift = !*end                                               ? 0
                         : (!strcasecmp(end, "k") || !strcasecmp(end, "kb")) ? 10
                         : (!strcasecmp(end, "m") || !strcasecmp(end, "mb")) ? 20
                         : (!strcasecmp(end, "g") || !strcasecmp(end, "gb")) ? 30
                                                                             : 64;
        if (errno || end == v || v[0] == '-' || shift == 64 || n > (UINT64_MAX >> shift))
                return 0;
        return (uint64_t)n << shift;
}

/* The cpu shares container `id` was created with (its bundle's config), 0
 * if unknown. */
static uint64_t created_shares(const char *id)
{
        struct rf_error err = {0};
        _cleanup_(held_done) struct held h = {.fd = -1};
        _cleanup_free_ char *doc = NULL, *path = NULL;
        _cleanup_(oci_spec_freep) struct oci_spec *sp = NULL;
        size_t len = 0;
        if (held_read(id, &h, &err) < 0 || !h.bundle ||
            asprintf(&path, "%s/config.json", h.bundle) < 0 ||
            read_own(path, JSON_INPUT_MAX, false, &doc, &len) < 0 ||
            oci_spec_parse(doc, len, &sp, &err) < 0)
                return 0;
        return sp->cpu_shares;
}

/* update [--resources FILE|-] [--memory B] [--pids-limit N] [--cpu-quota Q]
 * [--cpu-period P] ID: new limits for a running container, through its
 * supervisor (never above what it was created with). */
static int oci_update(int argc, char **argv)
{
        const char *resources = NULL;
        uint64_t mem = 0, pids = 0, quota = 0, period = 0;
        bool has_quota = false;
        int i = 1;
        for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
                const char *o = argv[i], *eq = strchr(o, '=');
                size_t ol = eq ? (size_t)(eq - o) : strlen(o);
                const char *v = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
#define OPT(name) (ol == strlen(name) && !strncmp(o, name, ol))
                if (!v) {
                        oci_error("update: %s needs a value", o);
                        return 1;
                }
                if (OPT("--resources") || OPT("-r"))
                        resources = v;
                else if (OPT("--memory") || OPT("-m")) {
                        if (!(mem = bytes_of(v)))
                                goto bad;
                } else if (OPT("--pids-limit")) {
                        if (!(pids = bytes_of(v)) || strpbrk(v, "kKmMgG"))
                                goto bad;
                } else if (OPT("--cpu-quota")) {
                        if (!(quota = bytes_of(v)) || strpbrk(v, "kKmMgG"))
                                goto bad;
                        has_quota = true;
                } else if (OPT("--cpu-period")) {
                        if (!(period = bytes_of(v)) || strpbrk(v, "kKmMgG"))
                                goto bad;
                } else if (OPT("--memory-swap") || OPT("--memory-reservation") ||
                           OPT("--kernel-memory") || OPT("--kernel-memory-tcp") ||
                           OPT("--cpu-share") || OPT("--cpu-rt-period") ||
                           OPT("--cpu-rt-runtime") || OPT("--cpuset-cpus") ||
                           OPT("--cpuset-mems") || OPT("--blkio-weight") ||
                           OPT("--l3-cache-schema") || OPT("--mem-bw-schema") ||
                           OPT("--cpu-idle")) {
                        oci_error("update: %.*s: not supported (memory, pids and cpu quota only)",
                                  (int)ol, o);
                        return 1;
                } else {
                        oci_error("update: unknown option %.*s", (int)ol, o);
                        return 1;
                }
                continue;
        bad:
                oci_error("update: %.*s %s: a number > 0", (int)ol, o, v);
                return 1;
#undef OPT
        }
        if (i + 1 != argc) {
                oci_error("update: usage: ringfence-oci update [--resources FILE|-] [--memory B] "
                          "[--pids-limit N] [--cpu-quota Q] [--cpu-period P] ID");
                return 1;
        }
        const char *id = argv[i];
        struct rf_error err = {0};
        if (resources) {
                /* the runtime spec's linux.resources object, read as the
                 * config's (the same refusals) */
                _cleanup_free_ char *doc = NULL, *wrapped = NULL;
                size_t len = 0;
                int r = !strcmp(resources, "-")
                                ? read_stream(STDIN_FILENO, JSON_INPUT_MAX - 128, &doc, &len)
                                : read_own(resources, JSON_INPUT_MAX - 128, false, &doc, &len);
                if (r < 0) {
                        oci_error("update: --resources %s: %s", resources, strerror(-r));
                        return 1;
                }
                _cleanup_(oci_spec_freep) struct oci_spec *sp = NULL;
                if (asprintf(&wrapped,
                             "{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"/\"},"
                             "\"linux\":{\"resources\":%s}}",
                             doc) < 0 ||
                    oci_spec_parse(wrapped, strlen(wrapped), &sp, &err) < 0) {
                        oci_print_error(&err);
                        return 1;
                }
                if (sp->memory_swap && sp->memory_swap != sp->memory_limit) {
                        oci_error("update: memory.swap other than memory.limit: not supported");
                        return 1;
                }
                /* The CRI sends the whole of a container's resources with
                 * every update: shares the container already has (its
                 * bundle's, or the default) and empty cpus/mems change
                 * nothing and are taken; a change is not supported yet. */
                if ((sp->cpu_shares && sp->cpu_shares != 1024 &&
                     sp->cpu_shares != created_shares(id)) ||
                    (sp->cpu_cpus && sp->cpu_cpus[0]) || (sp->cpu_mems && sp->cpu_mems[0])) {
                        oci_error("update: a change of cpu shares, cpus or mems: not supported "
                                  "(unchanged shares and empty cpus/mems are taken)");
                        return 1;
                }
                mem = sp->memory_limit ? sp->memory_limit : mem;
                pids = sp->pids_limit ? sp->pids_limit : pids;
                if (sp->has_cpu_quota) {
                        quota = sp->cpu_quota;
                        has_quota = true;
                }
                period = sp->cpu_period ? sp->cpu_period : period;
        }
        uint64_t milli = 0;
        if (has_quota) {
                uint64_t p = period ? period : 100000;
                milli = quota * 1000 / p;
                milli = milli ? milli : 1;
        } else if (period) {
                oci_error("update: --cpu-period without a quota: not supported");
                return 1;
        }
        if (!mem && !pids && !milli) {
                if (resources)
                        return 0; /* resources the container has already: nothing to do */
                oci_error("update: nothing to change");
                return 1;
        }
        _cleanup_(held_done) struct held h = {.fd = -1};
        if (held_read(id, &h, &err) < 0) {
                oci_print_error(&err);
                return 1;
        }
        char req[128], reply[CONTROL_MSG_MAX + 512], a[24], b[24], c[24];
#define FIELD(buf, v) (v ? (snprintf(buf, sizeof buf, "%llu", (unsigned long long)v), buf) : "-")
        snprintf(req, sizeof req, "limits %s %s %s", FIELD(a, mem), FIELD(b, pids),
                 FIELD(c, milli));
#undef FIELD
        int r = registry_request(h.state_dir, h.run, req, reply, sizeof reply, 10000);
        if (r < 0 || strncmp(reply, "ok", 2)) {
                oci_error("update: container %s: %s", id,
                          r < 0 ? strerror(-r) : reply + (strncmp(reply, "err ", 4) ? 0 : 4));
                return 1;
        }
        return 0;
}

/* Is the container's init (pid, 0: none) there, and not a zombie? */
static bool init_alive(int pid)
{
        struct procstat ps;
        return procstat_read(pid, &ps) == 0 && ps.state != 'Z' && ps.state != 'X';
}

/* The state file's lock, exclusively: its supervisor (and with it the
 * run) is gone. At most `ms`; false on a timeout or an error. */
static bool lock_wait(int fd, int ms)
{
        for (int waited = 0;; waited += 10) {
                if (flock(fd, LOCK_EX | LOCK_NB) == 0)
                        return true;
                if (errno != EWOULDBLOCK && errno != EINTR)
                        return false;
                if (waited >= ms)
                        return false;
                nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        }
}

/* delete [--force] ID: a stopped container's leftovers (its supervisor
 * died: the run removes them itself when it ends); --force kills a
 * running one first. */
static int oci_delete(int argc, char **argv)
{
        bool force = argc == 3 && (!strcmp(argv[1], "--force") || !strcmp(argv[1], "-f"));
        const char *id = argv[argc - 1];
        struct rf_error err = {0};
        _cleanup_(held_done) struct held h = {.fd = -1};
        if (argc != 2 + force || id[0] == '-') {
                oci_error("delete: usage: ringfence-oci delete [--force] ID");
                return 1;
        }
        if (held_read(id, &h, &err) < 0) {
                /* gone already: what --force asked for (containerd's shim
                 * deletes once plainly, then once with --force) */
                if (force && err.code == -ENOENT)
                        return 0;
                oci_print_error(&err);
                return 1;
        }
        if (held_live(&h)) {
                char reply[CONTROL_MSG_MAX + 512];
                int pid;
                const char *st = held_status(&h, &pid);
                /* stopped: its supervisor is recording the end; created:
                 * its command never ran, so it goes (as runc's does); an
                 * init the shim has reaped already: its supervisor is
                 * finishing (the shim deletes at once) */
                bool kill = strcmp(st, "stopped") != 0 && init_alive(pid);
                if (kill && !force && strcmp(st, "created") != 0) {
                        oci_error("delete: container %s is %s (stop it, or --force)", id, st);
                        return 1;
                }
                int r = kill ? registry_request(h.state_dir, h.run, "kill ringfence-oci delete",
                                                reply, sizeof reply, 30000)
                             : 0;
                /* a supervisor already ending has no control socket: what
                 * is left is to wait for it */
                if ((r < 0 && r != -ENOENT && r != -ECONNREFUSED) || !lock_wait(h.fd, 30000)) {
                        oci_error("delete: container %s: cannot kill it%s%s", id, r < 0 ? ": " : "",
                                  r < 0 ? strerror(-r) : " (its supervisor holds on)");
                        return 1;
                }
        }
        struct container c = {.made = true};
        if (snprintf(c.dir, sizeof c.dir, "%s/%s", g.root, id) >= (int)sizeof c.dir - 3) {
                oci_error("delete: --root %s: too long", g.root);
                return 1;
        }
        memcpy(c.ws, c.dir, strlen(c.dir));
        memcpy(c.ws + strlen(c.dir), "/ws", 4);
        /* poststop, once the container is gone: read first, with its state;
         * a failing one is a warning (runtime-spec) */
        _cleanup_free_ char *doc = NULL;
        _cleanup_(oci_spec_freep) struct oci_spec *hs = NULL;
        struct json_buf st = {0};
        if (hooks_load(id, &doc, &hs, &err) < 0)
                oci_error("delete: warning: %s", err.msg);
        if (hs)
                state_json_as(&h, "stopped", 0, &st);
        container_done(&c);
        (void)registry_prune(h.state_dir, h.run);
        if (hs && (st.error || oci_hooks_run(hs, OCI_HOOK_POSTSTOP, st.data, st.len, &err) < 0))
                oci_error("delete: warning: %s", st.error ? "out of memory" : err.msg);
        json_buf_done(&st);
        return 0;
}

/* --- hooks in the container's namespaces ----------------------------------------- */

/* Container `id`'s join plan (ROOT/ID/join, written at create) into `plan`
 * (from plan_empty): 0, or -errno with err set. */
static int join_plan_load(const char *id, struct rf_plan *plan, struct rf_error *err)
{
        char path[PATH_MAX + 160];
        _cleanup_free_ char *jp = NULL;
        size_t jl = 0;
        snprintf(path, sizeof path, "%s/%s/join", g.root, id);
        int r = read_own(path, JOINPLAN_MAX, true, &jp, &jl);
        if (r < 0)
                return rf_error_set(err, r, "%s: %s", path, strerror(-r));
        if ((r = joinplan_parse(jp, jl, plan, err)) < 0)
                return r;
        plan->test_fail_step = -1;
        return 0;
}

/* A hook of the container's namespaces (oci_hook_spawner's ctx): the
 * container's init, its join plan, and whether the hook gets every layer
 * an exec'd process gets (startContainer: its path is the container's) or
 * only the container's user namespace, as the container's user
 * (createContainer: the runtime's binary, opened here). */
struct hook_join {
        const struct held *h;
        int pidfd;
        struct rf_plan *plan;
        bool layered;
};

/* The joining process's side (after `go`): the container's namespaces, a
 * child there, its pid to `pids`. The child: the state on stdin, stderr
 * as stdout too, then the hook. */
static _noreturn_ void hook_enter(const struct hook_join *j, const struct oci_hook *hk, int in,
                                  int bin, int go, int pids, int report)
{
        char b;
        if (read(go, &b, 1) != 1 ||
            setns(j->pidfd, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
                                    CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP) < 0)
                _exit(125);
        pid_t pid = fork();
        if (pid < 0)
                _exit(125);
        if (pid == 0) {
                struct rf_plan *p = j->plan; /* this process's copy */
                char *const none[] = {NULL};
                char *const self[] = {(char *)hk->path, NULL};
                char *const *args = hk->args && hk->n_args ? (char *const *)hk->args : self;
                char *const *env = hk->env ? (char *const *)hk->env : none;
                if (dup2(in, 0) < 0 || dup2(2, 1) < 0)
                        _exit(125);
                if (j->layered) {
                        const int stdio[3] = {0, 1, 2};
                        p->argv = (char **)args;
                        p->envp = (char **)env;
                        p->exec_file = hk->path;
                        p->path_env = NULL;
                        sandbox_join(p, -1, stdio, report);
                }
                if (p->map_as_root &&
                    (setgroups(0, NULL) < 0 || setresgid(p->gid, p->gid, p->gid) < 0 ||
                     setresuid(p->uid, p->uid, p->uid) < 0))
                        _exit(125);
                sigset_t all;
                sigemptyset(&all);
                (void)sigprocmask(SIG_SETMASK, &all, NULL);
                for (int sig = 1; sig < NSIG; sig++)
                        if (sig != SIGKILL && sig != SIGSTOP)
                                (void)signal(sig, SIG_DFL);
                if (syscall(SYS_close_range, 1U, ~0U, CLOSE_RANGE_CLOEXEC) < 0 ||
                    fcntl(0, F_SETFD, 0) < 0 || fcntl(1, F_SETFD, 0) < 0 ||
                    fcntl(2, F_SETFD, 0) < 0)
                        _exit(125);
                /* a static ELF (hook_static): nothing looked up by path, and
                 * bin itself closed by the exec (close-on-exec) */
                syscall(SYS_execveat, bin, "", args, env, AT_EMPTY_PATH);
                _exit(errno == ENOENT ? 127 : 126);
        }
        (void)!write(pids, &pid, sizeof pid);
        _exit(0);
}

/*
 * A createContainer hook's binary (bin, the runtime's), read: it runs in
 * the container's root, as the container's root with every capability of
 * its user namespace and none of ringfence's layers, so whatever the
 * kernel or a loader would look up by path there — a script's interpreter,
 * an ELF's dynamic loader and its libraries — would be the image's code
 * (runc runs these hooks before pivot_root, where those are the host's).
 * Only a static ELF runs nothing but itself: anything else is refused,
 * before any of it runs. 0, or -ENOEXEC with err saying why.
 */
static int hook_static(int bin, struct rf_error *err)
{
        _cleanup_free_ unsigned char *head = malloc(EXEC_HEAD_MAX);
        if (!head)
                return rf_error_set(err, -ENOMEM, "out of memory");
        ssize_t n = pread(bin, head, EXEC_HEAD_MAX, 0);
        if (n < 0)
                return rf_error_set(err, negative_errno(), "cannot read it: %s", strerror(errno));
        int k = exec_kind(head, (size_t)n);
        if (k == EXEC_STATIC)
                return 0;
        return rf_error_set(err, -ENOEXEC,
                            "%s: a createContainer hook runs in the container's root, where "
                            "%s would be the image's; give a statically linked binary (or a "
                            "prestart or createRuntime hook, which runs in the runtime's "
                            "namespace)",
                            k == EXEC_SCRIPT   ? "a script"
                            : k == EXEC_LOADER ? "dynamically linked"
                            : k == EXEC_OTHER  ? "not an ELF executable"
                                               : "a malformed ELF file",
                            k == EXEC_SCRIPT   ? "its interpreter"
                            : k == EXEC_LOADER ? "its loader and libraries"
                                               : "what would run it");
}

/* oci_hook_spawner.spawn: hook `hk` joins the container (hook_join) */
static pid_t hook_spawn(void *ctx, const struct oci_hook *hk, int in, struct rf_error *err)
{
        struct hook_join *j = ctx;
        _cleanup_close_ int bin = -1;
        /* createContainer's path resolves in the runtime's namespace; the
         * binary is read and executed through this one open file */
        if (!j->layered) {
                if ((bin = open(hk->path, O_RDONLY | O_CLOEXEC)) < 0)
                        return rf_error_set(err, negative_errno(), "%s", strerror(errno));
                int r = hook_static(bin, err);
                if (r < 0)
                        return r;
        }
        int rep[2], go[2], pids[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rep) < 0)
                return rf_error_set(err, negative_errno(), "%s", strerror(errno));
        if (pipe2(go, O_CLOEXEC) < 0 || pipe2(pids, O_CLOEXEC) < 0) {
                int e = errno;
                close_pair(rep);
                close_pair(go);
                return rf_error_set(err, -e, "%s", strerror(e));
        }
        pid_t ch = fork();
        if (ch == 0) {
                close(rep[0]);
                close(go[1]);
                close(pids[0]);
                hook_enter(j, hk, in, bin, go[0], pids[1], rep[1]);
        }
        int e = errno;
        close(rep[1]);
        close(go[0]);
        close(pids[1]);
        if (ch < 0) {
                close(rep[0]);
                close(go[1]);
                close(pids[0]);
                return rf_error_set(err, -e, "cannot fork: %s", strerror(e));
        }
        /* into the run's cgroups before it enters (recorded as run.exec) */
        char cmd[64], reply[CONTROL_MSG_MAX + 512];
        snprintf(cmd, sizeof cmd, "attach %d", (int)ch);
        int r = registry_request(j->h->state_dir, j->h->run, cmd, reply, sizeof reply, 10000);
        bool went = r >= 0 && !strncmp(reply, "ok", 2) && write(go[1], "g", 1) == 1;
        close(go[1]);
        pid_t pid = 0;
        if (went && read(pids[0], &pid, sizeof pid) != sizeof pid)
                pid = 0;
        close(pids[0]);
        (void)RETRY_EINTR(waitpid(ch, NULL, 0));
        if (!went || pid <= 0) {
                close(rep[0]);
                return rf_error_set(err, -EPERM, "cannot join the container: %s",
                                    !went ? (r < 0 ? strerror(-r) : reply)
                                          : "cannot enter its namespaces");
        }
        int step = 0;
        r = j->layered ? sandbox_join_report(rep[0], &step) : 0;
        close(rep[0]);
        if (r < 0) {
                (void)RETRY_EINTR(waitpid(pid, NULL, 0));
                return rf_error_set(err, r, "%s (%s)", strerror(-r), rf_step_name(step));
        }
        return pid;
}

/* Container `id`'s hooks of stage `st` (createContainer, startContainer:
 * `layered`), each joining the created container (hook_join); then every
 * process a hook left in the container is killed: until the command
 * starts, init is the container's only process. 0, or -errno with the
 * line printed. */
static int hooks_join(const char *id, const struct oci_spec *s, enum oci_hook_stage st,
                      bool layered)
{
        struct rf_error err = {0};
        _cleanup_(held_done) struct held h = {.fd = -1};
        _cleanup_(plan_freep) struct rf_plan *plan = plan_empty();
        struct json_buf b = {0};
        int init = 0, r;
        if (!plan)
                r = rf_error_set(&err, -ENOMEM, "out of memory");
        else if ((r = held_read(id, &h, &err)) == 0 && (r = join_plan_load(id, plan, &err)) == 0 &&
                 strcmp(held_status(&h, &init), "created") != 0)
                r = rf_error_set(&err, -ESRCH, "container %s is not created", id);
        _cleanup_close_ int pidfd = r == 0 ? (int)syscall(SYS_pidfd_open, init, 0) : -1;
        if (r == 0 && pidfd < 0)
                r = rf_error_set(&err, -ESRCH, "container %s: its init is gone", id);
        if (r == 0) {
                struct hook_join j = {.h = &h, .pidfd = pidfd, .plan = plan, .layered = layered};
                struct oci_hook_spawner how = {.spawn = hook_spawn, .ctx = &j};
                state_json_as(&h, "created", init, &b);
                (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
                r = b.error ? rf_error_set(&err, -ENOMEM, "out of memory")
                            : oci_hooks_run_as(s, st, b.data, b.len, &how, &err);
                (void)prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
                /* what a hook left behind, as its pid namespace's now */
                pid_t pids[1024];
                for (int round = 0, n;
                     round < 64 && (n = container_pids(&h, pids, ARRAY_SIZE(pids))) > 1; round++)
                        for (int i = 0; i < n; i++)
                                if (pids[i] != init)
                                        (void)kill(pids[i], SIGKILL);
        }
        json_buf_done(&b);
        if (r < 0)
                oci_print_error(&err);
        return r;
}

/* --- create, start ------------------------------------------------------------ */

/* The supervisor of a created container (the child `create` forks): what
 * its hooks need. */
struct creating {
        int report;         /* to `create`: init's pid, once; -1 after */
        const char *socket; /* --console-socket, or NULL */
        bool console_sent;
        const char *dir;   /* ROOT/ID */
        unsigned preserve; /* --preserve-fds: 3..3+N-1 are the container's */
};

/* ROOT/ID/join: the run's join plan (sandbox/joinplan.h), for exec. */
static int create_planned(void *ctx, const struct rf_plan *plan, struct rf_error *err)
{
        struct creating *k = ctx;
        char path[PATH_MAX + 16];
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = joinplan_format(plan, &text, &len);
        if (r < 0)
                return rf_error_set(err, r, "the container's join plan: %s", strerror(-r));
        snprintf(path, sizeof path, "%s/join", k->dir);
        _cleanup_close_ int fd =
                open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 || write(fd, text, len) != (ssize_t)len)
                return rf_error_set(err, fd < 0 ? negative_errno() : -EIO, "%s: %s", path,
                                    strerror(errno));
        return 0;
}

/* The engine's console socket, connected (runc's protocol: one message,
 * one fd). The fd, or -errno. */
static int console_connect(const char *path)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(path) >= sizeof sa.sun_path)
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, path, strlen(path) + 1);
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
                int r = negative_errno();
                safe_close(s);
                return r;
        }
        return s;
}

/* `fd` over the connected unix socket `s` (SCM_RIGHTS), with `name` as
 * the message (runc's way: the pty master is "/dev/ptmx"). 0 or -errno. */
static int fd_send_named(int s, int fd, const char *name)
{
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u = {0};
        struct iovec iov = {.iov_base = (char *)name, .iov_len = strlen(name)};
        struct msghdr msg = {.msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = u.buf,
                             .msg_controllen = sizeof u.buf};
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof(int));
        return RETRY_EINTR(sendmsg(s, &msg, MSG_NOSIGNAL)) < 0 ? negative_errno() : 0;
}

/* The pty master over a connected console socket. */
static int console_send_fd(int s, int master)
{
        return fd_send_named(s, master, "/dev/ptmx");
}

static int console_send(const char *path, int master)
{
        int s = console_connect(path);
        if (s < 0)
                return s;
        int r = console_send_fd(s, master);
        close(s);
        return r;
}

/*
 * --pidfd-socket PATH: a pidfd of the container's init over the unix
 * socket at PATH (SCM_RIGHTS, the message "pidfd"), as runc 1.2 sends it.
 * `pid` is our own child (init is cloned beside the supervisor, our
 * child): unreaped, its pid cannot name another process. 0 or -errno.
 */
static int pidfd_send(const char *path, int pid)
{
        _cleanup_close_ int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pfd < 0)
                return negative_errno();
        _cleanup_close_ int s = console_connect(path);
        if (s < 0)
                return s;
        return fd_send_named(s, pfd, "pidfd");
}

static void create_console(void *ctx, int master)
{
        struct creating *k = ctx;
        int r = k->socket ? console_send(k->socket, master) : -EINVAL;
        if (r < 0)
                oci_error("create: --console-socket %s: %s", k->socket ? k->socket : "(none)",
                          strerror(-r));
        k->console_sent = r == 0;
}

static void create_held(void *ctx, pid_t init)
{
        struct creating *k = ctx;
        char line[32];
        int n = snprintf(line, sizeof line, "%d\n", (int)init);
        if (k->report < 0)
                return;
        (void)!write(k->report, line, (size_t)n);
        k->report = safe_close(k->report);
        /* init has the preserved fds: the container's alone from now on
         * (a pipe's reader sees its end when the container closes it) */
        if (k->preserve)
                (void)syscall(SYS_close_range, 3U, 2U + k->preserve, 0U);
        /* from now on fds 0-2 are the container's (the engine's pipes or
         * nothing): errors go to --log only */
        g.quiet = true;
}

/* The pid file, as runc writes it: whole, then renamed into place. */
static int pid_file_write(const char *path, int pid)
{
        char tmp[PATH_MAX], line[32];
        int n = snprintf(line, sizeof line, "%d", pid);
        if (snprintf(tmp, sizeof tmp, "%s.rf-tmp", path) >= (int)sizeof tmp)
                return -ENAMETOOLONG;
        _cleanup_close_ int fd =
                open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return negative_errno();
        if (write(fd, line, (size_t)n) != n || rename(tmp, path) < 0) {
                int r = negative_errno();
                (void)unlink(tmp);
                return r;
        }
        return 0;
}

/* The supervisor of container `id`: made, held created, run to its end.
 * Its exit status is nobody's (the engine reads init's). */
/* What `create` is told when the container is not made: "E " and the
 * line (it prints and logs it: the supervisor's stderr is not the
 * caller's by then). */
static void create_refused(int report, const struct rf_error *err, const char *fallback)
{
        char buf[RF_ERROR_MSG_MAX + 2 * RF_ERROR_PATH_MAX + 32];
        if (err && err->msg[0])
                rf_error_format(err, buf, sizeof buf);
        else
                snprintf(buf, sizeof buf, "%s", fallback);
        if (report >= 0)
                (void)!write(report, "E ", 2), (void)!write(report, buf, strlen(buf));
}

/* The supervisor of container `id`: made, held created, run to its end.
 * Its exit status is nobody's (the engine reads init's). */
static _noreturn_ void create_supervise(const char *id, struct bundle *b, const char *console,
                                        unsigned preserve, int report)
{
        struct rf_error err = {0};
        struct creating k = {.report = report, .socket = console, .preserve = preserve};
        char gate_path[PATH_MAX + 16];
        int status = RF_EXIT_REFUSED;

        (void)setsid(); /* the engine's session and terminal are not the run's */
        g.quiet = true; /* `create` says what goes wrong until the container is made */
        if (b->spec->terminal) {
                /* the command's stdio is the pty: the engine's pipes are
                 * create's alone (containerd's shim reads them to their end
                 * before it takes the console) */
                int n = open("/dev/null", O_RDWR | O_CLOEXEC);
                for (int fd = 0; n >= 0 && fd < 3; fd++)
                        (void)dup2(n, fd);
                if (n > 2)
                        close(n);
        }
        {
                _cleanup_(made_done) struct made m = {.lock = -1};
                _cleanup_close_ int gate = -1;
                if (made_begin(id, b, &m, &err) < 0) {
                        create_refused(k.report, &err, "cannot make the container");
                        goto out;
                }
                snprintf(gate_path, sizeof gate_path, "%s/start", m.ct.dir);
                if (mkfifo(gate_path, 0600) < 0 ||
                    (gate = open(gate_path, O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)) < 0) {
                        rf_error_set(&err, -errno, "container %s: its start gate: %s", id,
                                     strerror(errno));
                        create_refused(k.report, &err, "");
                        goto out;
                }
                struct run_request req = request_of(b, &m);
                req.use_pty = b->spec->terminal;
                req.ctx = &k;
                req.held = create_held;
                req.start_gate = gate;
                req.console = create_console;
                req.preserve_fds = preserve;
                req.planned = create_planned;
                k.dir = m.ct.dir;
                status = run_start(&req, &err);
                if (k.report >= 0) /* never held: refused, or failed on the way */
                        create_refused(k.report, &err, "the container's init ended during setup");
                else if (err.msg[0])
                        oci_print_error(&err); /* to --log */
                if (k.report < 0)
                        m.ct.made = false; /* created: its state stays until `delete` */
        }
out:
        safe_close(k.report);
        _exit(status);
}

static int oci_create(int argc, char **argv)
{
        static const struct option opts[] = {
                {"bundle", required_argument, NULL, 'b'},
                {"pid-file", required_argument, NULL, 'P'},
                {"console-socket", required_argument, NULL, 'C'},
                {"no-pivot", no_argument, NULL, 'N'},
                {"no-new-keyring", no_argument, NULL, 'K'},
                {"preserve-fds", required_argument, NULL, 'F'},
                {"pidfd-socket", required_argument, NULL, 'D'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        const char *bundle = ".", *pid_file = NULL, *console = NULL, *pidfd_socket = NULL;
        unsigned preserve = 0;
        int c, r;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+b:h", opts, NULL)) != -1) {
                switch (c) {
                case 'b':
                        bundle = optarg;
                        break;
                case 'P':
                        pid_file = optarg;
                        break;
                case 'C':
                        console = optarg;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                case 'N': /* ringfence always pivots (the host's root is gone) */
                case 'K': /* no session keyring is reachable from a run */
                        break;
                case 'F':
                        if (preserve_fds_take("create", optarg, &preserve) < 0)
                                return 1;
                        break;
                case 'D':
                        pidfd_socket = optarg;
                        break;
                default:
                        oci_error("create: unknown option %s", argv[optind - 1]);
                        return 1;
                }
        }
        if (optind != argc - 1) {
                oci_error("create: one container id (usage: ringfence-oci create [-b BUNDLE] "
                          "[--pid-file F] [--console-socket S] ID)");
                return 1;
        }
        const char *id = argv[optind];
        if (!id_valid(id)) {
                oci_error("create: container id \"%.130s\": 1-128 of [A-Za-z0-9_+.-]", id);
                return 1;
        }
        _cleanup_(bundle_done) struct bundle b = {0};
        if ((r = bundle_load("create", bundle, &b)) != 0 || (r = pod_join("create", &b)) != 0)
                return r;
        if (b.spec->terminal != (console != NULL)) {
                oci_error("create: %s", console ? "--console-socket without process.terminal"
                                                : "process.terminal needs --console-socket");
                return 1;
        }
        char pid_path[PATH_MAX];
        if (pid_file &&
            !(pid_file[0] == '/'
                      ? snprintf(pid_path, sizeof pid_path, "%s", pid_file) < (int)sizeof pid_path
                      : getcwd(pid_path, sizeof pid_path) &&
                                strlen(pid_path) + strlen(pid_file) + 2 < sizeof pid_path &&
                                strcat(strcat(pid_path, "/"), pid_file))) {
                oci_error("create: --pid-file %s: too long", pid_file);
                return 1;
        }
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0) {
                oci_error("create: %s", strerror(errno));
                return RF_EXIT_REFUSED;
        }
        /* The supervisor is our child, so the init it clones beside itself
         * (CLONE_PARENT) is our child too: the engine's shim, a subreaper,
         * inherits and reaps it when we exit. */
        pid_t sup = fork();
        if (sup < 0) {
                oci_error("create: %s", strerror(errno));
                return RF_EXIT_REFUSED;
        }
        if (sup == 0) {
                close(p[0]);
                create_supervise(id, &b, console, preserve, p[1]);
        }
        close(p[1]);
        char line[RF_ERROR_MSG_MAX + 2 * RF_ERROR_PATH_MAX + 64] = {0};
        size_t got = 0;
        ssize_t n;
        /* the pid line, or "E " and why it was refused */
        while (got < 32 && (got == 0 || line[got - 1] != '\n') &&
               (n = RETRY_EINTR(read(p[0], line + got, 32 - got))) > 0)
                got += (size_t)n;
        int pid = got && line[got - 1] == '\n' && line[0] != 'E' ? atoi(line) : 0;
        if (pid <= 0) { /* refused: the supervisor says why */
                while (got < sizeof line - 1 &&
                       (n = RETRY_EINTR(read(p[0], line + got, sizeof line - 1 - got))) > 0)
                        got += (size_t)n;
                line[got] = '\0';
                oci_error("create: %s", got > 2 && line[0] == 'E' ? line + 2 : "refused");
                int st = 0;
                (void)RETRY_EINTR(waitpid(sup, &st, 0));
                close(p[0]);
                return RF_EXIT_REFUSED;
        }
        close(p[0]);
        /* prestart, createRuntime, then createContainer (joining the
         * container): it is built, its command held; one that fails ends
         * it (delete, poststop included) */
        static const enum oci_hook_stage early[] = {OCI_HOOK_PRESTART, OCI_HOOK_CREATE_RUNTIME,
                                                    OCI_HOOK_CREATE_CONTAINER};
        for (size_t i = 0; i < ARRAY_SIZE(early); i++)
                if (b.spec->n_hooks[early[i]] &&
                    (early[i] == OCI_HOOK_CREATE_CONTAINER
                             ? hooks_join(id, b.spec, early[i], false)
                             : hooks_run(id, b.spec, early[i], "creating", pid)) < 0) {
                        char *del[] = {"delete", "--force", (char *)id, NULL};
                        (void)oci_delete(3, del);
                        return RF_EXIT_REFUSED;
                }
        /* the engine's handles on init: a pidfd (runc 1.2's --pidfd-socket),
         * then the pid file; one that cannot be given ends the container */
        const char *failed = NULL, *arg = NULL;
        if (pidfd_socket && (r = pidfd_send(pidfd_socket, pid)) < 0)
                failed = "--pidfd-socket", arg = pidfd_socket;
        else if (pid_file && (r = pid_file_write(pid_path, pid)) < 0)
                failed = "--pid-file", arg = pid_file;
        if (failed) {
                oci_error("create: %s %s: %s", failed, arg, strerror(-r));
                /* as for a failing hook: ended and gone, nothing left */
                char *del[] = {"delete", "--force", (char *)id, NULL};
                (void)oci_delete(3, del);
                return RF_EXIT_REFUSED;
        }
        return 0;
}

/* start ID: a created container's command starts (a byte through its
 * start gate, which its supervisor waits on). */
static int oci_start(int argc, char **argv)
{
        const char *id;
        struct rf_error err = {0};
        _cleanup_(held_done) struct held h = {.fd = -1};
        char path[PATH_MAX + 160];
        int pid;
        if (one_id(argc, argv, "start", &id) < 0)
                return 1;
        if (held_read(id, &h, &err) < 0) {
                oci_print_error(&err);
                return 1;
        }
        const char *st = held_status(&h, &pid);
        if (strcmp(st, "created") != 0) {
                oci_error("start: container %s is %s, not created", id, st);
                return 1;
        }
        /* startContainer: in the container with every layer, before the
         * command; one that fails ends the container (runc's init dies) */
        _cleanup_free_ char *doc = NULL;
        _cleanup_(oci_spec_freep) struct oci_spec *hs = NULL;
        if (hooks_load(id, &doc, &hs, &err) < 0) {
                oci_print_error(&err);
                return 1;
        }
        if (hs && hs->n_hooks[OCI_HOOK_START_CONTAINER] &&
            hooks_join(id, hs, OCI_HOOK_START_CONTAINER, true) < 0) {
                char reply[CONTROL_MSG_MAX + 512];
                (void)registry_request(h.state_dir, h.run, "kill ringfence-oci start", reply,
                                       sizeof reply, 30000);
                return 1;
        }
        snprintf(path, sizeof path, "%s/%s/start", g.root, id);
        _cleanup_close_ int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
        struct stat sb;
        if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISFIFO(sb.st_mode) || sb.st_uid != geteuid() ||
            write(fd, "s", 1) != 1) {
                oci_error("start: container %s: %s", id,
                          fd < 0 && errno == ENXIO ? "its supervisor is gone" : strerror(errno));
                return 1;
        }
        /* poststart: a failing one is a warning, the container runs on
         * (runtime-spec) */
        if (hs && hooks_run(id, hs, OCI_HOOK_POSTSTART, "running", pid) < 0)
                oci_error("start: warning: a poststart hook failed; the container runs");
        return 0;
}

/* --- exec --------------------------------------------------------------------- */

/* A file of ours, whole (at most `max` bytes): 0 or -errno. */
static int read_own(const char *path, size_t max, bool ours, char **buf, size_t *len)
{
        struct stat st;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (size_t)st.st_size > max ||
            (ours && (st.st_uid != geteuid() || (st.st_mode & 077))))
                return -EBADMSG;
        *buf = malloc((size_t)st.st_size + 1);
        if (!*buf)
                return -ENOMEM;
        ssize_t n = pread(fd, *buf, (size_t)st.st_size, 0);
        if (n != st.st_size)
                return n < 0 ? negative_errno() : -EIO;
        (*buf)[n] = '\0';
        *len = (size_t)n;
        return 0;
}

/* name=value into envp (NULL-terminated, room for PLAN_ENV_MAX): replaces
 * the same name, else appends. 0, -E2BIG, -EINVAL. */
static int env_put(char **envp, const char *kv)
{
        const char *eq = strchr(kv, '=');
        if (!eq || eq == kv)
                return -EINVAL;
        size_t nl = (size_t)(eq - kv) + 1, i = 0;
        for (; envp[i]; i++)
                if (!strncmp(envp[i], kv, nl)) {
                        envp[i] = (char *)kv;
                        return 0;
                }
        if (i >= PLAN_ENV_MAX)
                return -E2BIG;
        envp[i] = (char *)kv;
        envp[i + 1] = NULL;
        return 0;
}

/* The joining process's side after fork (its parent waits for `go`):
 * the run's namespaces through init's pidfd, a child there (the run's pid
 * namespace only takes children), its pid to `pids`. */
static _noreturn_ void exec_enter(int pidfd, int go, int pids, const struct rf_plan *plan,
                                  int console, int report)
{
        char b;
        if (read(go, &b, 1) != 1 ||
            setns(pidfd, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
                                 CLONE_NEWUTS | CLONE_NEWCGROUP) < 0)
                _exit(125);
        pid_t pid = fork();
        if (pid < 0)
                _exit(125);
        if (pid == 0) {
                int slave = -1, stdio[3] = {0, 1, 2};
                if (console >= 0) {
                        /* the run's own devpts: the terminal is the container's.
                         * Its ptmx is opened by sandbox_ptmx_open, never
                         * through /dev/ptmx, a link the container may have
                         * replaced (the runc CVE-2025-52565 class) */
                        int master = sandbox_ptmx_open();
                        int unlock = 0;
                        if (master < 0 || ioctl(master, TIOCSPTLCK, &unlock) < 0 ||
                            (slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY)) < 0 ||
                            console_send_fd(console, master) < 0)
                                _exit(125);
                        close(master);
                        close(console);
                }
                sandbox_join(plan, slave, stdio, report);
        }
        (void)!write(pids, &pid, sizeof pid);
        _exit(0);
}

static int oci_exec(int argc, char **argv)
{
        static const struct option opts[] = {
                {"process", required_argument, NULL, 'p'},
                {"pid-file", required_argument, NULL, 'P'},
                {"console-socket", required_argument, NULL, 'C'},
                {"detach", no_argument, NULL, 'd'},
                {"tty", no_argument, NULL, 't'},
                {"cwd", required_argument, NULL, 'w'},
                {"env", required_argument, NULL, 'e'},
                {"user", required_argument, NULL, 'u'},
                {"no-new-privs", no_argument, NULL, 'n'},
                {"preserve-fds", required_argument, NULL, 'F'},
                {"cap", required_argument, NULL, 'c'},
                {"additional-gids", required_argument, NULL, 'g'},
                {"process-label", required_argument, NULL, 'l'},
                {"apparmor", required_argument, NULL, 'a'},
                {"cgroup", required_argument, NULL, 'G'},
                {"ignore-paused", no_argument, NULL, 'I'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        const char *process = NULL, *pid_file = NULL, *console = NULL, *cwd = NULL, *user = NULL;
        const char *envs[64];
        size_t n_envs = 0;
        bool detach = false, tty = false;
        struct rf_error err = {0};
        unsigned preserve = 0;
        int c, r;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+p:dte:u:w:c:g:h", opts, NULL)) != -1) {
                switch (c) {
                case 'p':
                        process = optarg;
                        break;
                case 'P':
                        pid_file = optarg;
                        break;
                case 'C':
                        console = optarg;
                        break;
                case 'd':
                        detach = true;
                        break;
                case 't':
                        tty = true;
                        break;
                case 'w':
                        cwd = optarg;
                        break;
                case 'e':
                        if (n_envs >= ARRAY_SIZE(envs)) {
                                oci_error("exec: more than %zu --env", ARRAY_SIZE(envs));
                                return 1;
                        }
                        envs[n_envs++] = optarg;
                        break;
                case 'u':
                        user = optarg;
                        break;
                case 'n': /* every process of a run has no_new_privs */
                case 'I':
                        break;
                case 'F':
                        if (preserve_fds_take("exec", optarg, &preserve) < 0)
                                return 1;
                        break;
                case 'l':
                case 'a':
                        if (optarg[0]) {
                                oci_error("exec: %s: not supported (see docs/OCI.md)",
                                          argv[optind - 2]);
                                return 1;
                        }
                        break;
                case 'c':
                case 'g':
                case 'G':
                        oci_error("exec: %s: not yet (a process joining a container gets what "
                                  "its init's command got; see docs/OCI.md)",
                                  argv[optind - 2]);
                        return 1;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        oci_error("exec: unknown option %s", argv[optind - 1]);
                        return 1;
                }
        }
        if (optind >= argc || (!process && optind + 1 >= argc)) {
                oci_error("exec: usage: ringfence-oci exec [--process FILE | ID COMMAND...] ...");
                return 1;
        }
        const char *id = argv[optind];
        _cleanup_(held_done) struct held h = {.fd = -1};
        if (held_read(id, &h, &err) < 0) {
                oci_print_error(&err);
                return 1;
        }
        int init;
        const char *st = held_status(&h, &init);
        if (strcmp(st, "running") != 0 || init <= 0) {
                oci_error("exec: container %s is %s, not running", id, st);
                return 1;
        }
        _cleanup_free_ char *pdoc = NULL, *wrapped = NULL;
        size_t pl = 0;
        _cleanup_(plan_freep) struct rf_plan *plan = plan_empty();
        if (!plan || (r = join_plan_load(id, plan, &err)) < 0) {
                if (!plan)
                        rf_error_set(&err, -ENOMEM, "exec: out of memory");
                oci_print_error(&err);
                return RF_EXIT_REFUSED;
        }
        /* the process: --process (runtime-spec's process object), else the
         * command line's */
        _cleanup_(oci_spec_freep) struct oci_spec *ps = NULL;
        size_t n_args = 0;
        const char *const *args = NULL;
        if (process) {
                if ((r = read_own(process, JSON_INPUT_MAX - 128, false, &pdoc, &pl)) < 0) {
                        oci_error("exec: --process %s: %s", process,
                                  r == -EBADMSG ? "not a regular file of a sane size"
                                                : strerror(-r));
                        return 1;
                }
                if (asprintf(&wrapped,
                             "{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"/\"},\"process\":%s}",
                             pdoc) < 0 ||
                    (r = oci_spec_parse(wrapped, strlen(wrapped), &ps, &err)) < 0) {
                        oci_print_error(&err);
                        return RF_EXIT_REFUSED;
                }
                args = ps->args;
                n_args = ps->n_args;
                tty = ps->terminal;
                if (!cwd && ps->cwd)
                        cwd = ps->cwd;
                if (ps->uid != plan->uid || ps->gid != plan->gid) {
                        oci_error("exec: process.user %u:%u: refused: the container's user "
                                  "namespace maps one user, its own (%u:%u)",
                                  (unsigned)ps->uid, (unsigned)ps->gid, (unsigned)plan->uid,
                                  (unsigned)plan->gid);
                        return RF_EXIT_REFUSED;
                }
                for (size_t i = 0; i < ps->n_gids; i++)
                        if (ps->gids[i] != ps->gid) {
                                oci_error("exec: process.user.additionalGids: not yet");
                                return RF_EXIT_REFUSED;
                        }
        } else {
                args = (const char *const *)argv + optind + 1;
                n_args = (size_t)(argc - optind - 1);
        }
        if (user) {
                /* UID or UID:GID, the container's own (one id is mapped) */
                char uid_only[16], both[32];
                snprintf(uid_only, sizeof uid_only, "%u", (unsigned)plan->uid);
                snprintf(both, sizeof both, "%u:%u", (unsigned)plan->uid, (unsigned)plan->gid);
                if (strcmp(user, uid_only) && strcmp(user, both)) {
                        oci_error("exec: --user %s: refused: the container's user namespace maps "
                                  "one user, its own (%s)",
                                  user, both);
                        return RF_EXIT_REFUSED;
                }
        }
        if (n_args == 0 || n_args > PLAN_ARGV_MAX || tty != (console != NULL)) {
                oci_error("exec: %s", n_args == 0 ? "no command"
                                      : tty       ? "a terminal needs --console-socket"
                                                  : "--console-socket without a terminal");
                return 1;
        }
        if (cwd && cwd[0] != '/') {
                oci_error("exec: --cwd %s: an absolute path", cwd);
                return 1;
        }
        /* argv, envp: the run's environment, the process's on top */
        plan->argv = calloc(n_args + 1, sizeof *plan->argv);
        char **envp = calloc(PLAN_ENV_MAX + 1, sizeof *envp);
        if (!plan->argv || !envp) {
                free(envp);
                oci_error("exec: out of memory");
                return RF_EXIT_REFUSED;
        }
        for (size_t i = 0; i < n_args; i++)
                plan->argv[i] = (char *)args[i];
        for (size_t i = 0; plan->envp && plan->envp[i]; i++)
                envp[i] = plan->envp[i];
        free(plan->envp);
        plan->envp = envp;
        for (size_t i = 0; ps && i < ps->n_env; i++)
                if (env_put(envp, ps->env[i]) < 0) {
                        oci_error("exec: process.env[%zu]: NAME=VALUE, at most %d", i,
                                  PLAN_ENV_MAX);
                        return RF_EXIT_REFUSED;
                }
        for (size_t i = 0; i < n_envs; i++)
                if (env_put(envp, envs[i]) < 0) {
                        oci_error("exec: --env %s: NAME=VALUE", envs[i]);
                        return 1;
                }
        for (size_t i = 0; envp[i]; i++)
                if (!strncmp(envp[i], "PATH=", 5))
                        plan->path_env = envp[i] + 5;
        if (cwd)
                plan->cwd = (char *)cwd;
        /* our fds 3..3+N-1 (opened before anything of ours) are the
         * joined process's, as init's command got the engine's */
        plan->preserve_fds = preserve;

        /* init, by pidfd, checked against its supervisor's word after */
        _cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, init, 0);
        int p2 = 0;
        if (pidfd < 0 || strcmp(held_status(&h, &p2), "running") || p2 != init) {
                oci_error("exec: container %s: its init is gone", id);
                return 1;
        }
        _cleanup_close_ int cons = -1;
        if (console && (cons = console_connect(console)) < 0) {
                oci_error("exec: --console-socket %s: %s", console, strerror(-cons));
                return 1;
        }
        int rep[2], go[2], pids[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rep) < 0 ||
            pipe2(go, O_CLOEXEC) < 0 || pipe2(pids, O_CLOEXEC) < 0) {
                oci_error("exec: %s", strerror(errno));
                return RF_EXIT_REFUSED;
        }
        /* not detached: the joined process is ours to wait for */
        if (!detach)
                (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        pid_t ch = fork();
        if (ch < 0) {
                oci_error("exec: %s", strerror(errno));
                return RF_EXIT_REFUSED;
        }
        if (ch == 0) {
                close(rep[0]);
                close(go[1]);
                close(pids[0]);
                exec_enter(pidfd, go[0], pids[1], plan, cons, rep[1]);
        }
        close(rep[1]);
        close(go[0]);
        close(pids[1]);
        char cmd[64], reply[CONTROL_MSG_MAX + 512];
        snprintf(cmd, sizeof cmd, "attach %d", (int)ch);
        r = registry_request(h.state_dir, h.run, cmd, reply, sizeof reply, 10000);
        pid_t joined = 0;
        bool went = r >= 0 && !strncmp(reply, "ok", 2) && write(go[1], "g", 1) == 1;
        close(go[1]);
        int cst = 0;
        if (went && read(pids[0], &joined, sizeof joined) != sizeof joined)
                joined = 0;
        close(pids[0]);
        (void)RETRY_EINTR(waitpid(ch, &cst, 0));
        if (!went || joined <= 0) {
                oci_error("exec: container %s: %s", id,
                          !went ? (r < 0 ? strerror(-r) : reply) : "cannot enter its namespaces");
                close(rep[0]);
                return RF_EXIT_REFUSED;
        }
        int step = 0;
        r = sandbox_join_report(rep[0], &step);
        close(rep[0]);
        if (r < 0) {
                oci_error("exec: %s: %s (%s)", plan->argv[0], strerror(-r), rf_step_name(step));
                int code = step == STEP_EXEC ? (r == -ENOENT ? 127 : 126) : RF_EXIT_REFUSED;
                if (!detach)
                        (void)RETRY_EINTR(waitpid(joined, NULL, 0));
                return code;
        }
        if (pid_file && (r = pid_file_write(pid_file, joined)) < 0) {
                oci_error("exec: --pid-file %s: %s", pid_file, strerror(-r));
                return RF_EXIT_REFUSED;
        }
        if (detach)
                return 0;
        int status = 0;
        while (RETRY_EINTR(waitpid(joined, &status, 0)) < 0 && errno == ECHILD)
                return RF_EXIT_REFUSED;
        return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

/* --- spec, features, version ------------------------------------------------- */

static const char default_spec[] =
        "{\n"
        "  \"ociVersion\": \"1.0.2\",\n"
        "  \"process\": {\n"
        "    \"terminal\": true,\n"
        "    \"user\": {\"uid\": 0, \"gid\": 0},\n"
        "    \"args\": [\"sh\"],\n"
        "    \"env\": [\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\",\n"
        "            \"TERM=xterm\"],\n"
        "    \"cwd\": \"/\",\n"
        "    \"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"hard\": 1024, \"soft\": 1024}],\n"
        "    \"noNewPrivileges\": true\n"
        "  },\n"
        "  \"root\": {\"path\": \"rootfs\", \"readonly\": true},\n"
        "  \"hostname\": \"ringfence\",\n"
        "  \"mounts\": [\n"
        "    {\"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\"},\n"
        "    {\"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": \"tmpfs\",\n"
        "     \"options\": [\"nosuid\", \"strictatime\", \"mode=755\", \"size=65536k\"]},\n"
        "    {\"destination\": \"/dev/pts\", \"type\": \"devpts\", \"source\": \"devpts\",\n"
        "     \"options\": [\"nosuid\", \"noexec\", \"newinstance\", \"ptmxmode=0666\", "
        "\"mode=0620\"]},\n"
        "    {\"destination\": \"/dev/shm\", \"type\": \"tmpfs\", \"source\": \"shm\",\n"
        "     \"options\": [\"nosuid\", \"noexec\", \"nodev\", \"mode=1777\", \"size=65536k\"]}\n"
        "  ],\n"
        "  \"annotations\": {\"ringfence.io/agent\": \"container\"},\n"
        "  \"linux\": {\n"
        "    \"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"network\"}, {\"type\": \"ipc\"},\n"
        "                   {\"type\": \"uts\"}, {\"type\": \"mount\"}, {\"type\": \"cgroup\"}],\n"
        "    \"maskedPaths\": [\"/proc/acpi\", \"/proc/asound\", \"/proc/kcore\", \"/proc/keys\",\n"
        "                    \"/proc/latency_stats\", \"/proc/timer_list\", "
        "\"/proc/timer_stats\",\n"
        "                    \"/proc/sched_debug\", \"/proc/scsi\", \"/sys/firmware\"],\n"
        "    \"readonlyPaths\": [\"/proc/bus\", \"/proc/fs\", \"/proc/irq\", \"/proc/sys\",\n"
        "                      \"/proc/sysrq-trigger\"]\n"
        "  }\n"
        "}\n";

static int cmd_spec(int argc, char **argv)
{
        const char *bundle = ".";
        for (int i = 1; i < argc; i++) {
                if ((!strcmp(argv[i], "-b") || !strcmp(argv[i], "--bundle")) && i + 1 < argc)
                        bundle = argv[++i];
                else if (!strcmp(argv[i], "--rootless"))
                        ; /* the same config: ringfence maps the user itself */
                else {
                        oci_error("spec: unknown option %s", argv[i]);
                        return 1;
                }
        }
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/config.json", bundle);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0) {
                oci_error("spec: %s: %s", path, strerror(errno));
                return 1;
        }
        ssize_t n = write(fd, default_spec, sizeof default_spec - 1);
        if (close(fd) < 0 || n != (ssize_t)sizeof default_spec - 1) {
                oci_error("spec: %s: cannot write it", path);
                return 1;
        }
        return 0;
}

static int cmd_features(void)
{
        fputs("{\n"
              "  \"ociVersionMin\": \"1.0.0\",\n"
              "  \"ociVersionMax\": \"1.2.1\",\n"
              "  \"hooks\": [\"prestart\", \"createRuntime\", \"createContainer\",\n"
              "            \"startContainer\", \"poststart\", \"poststop\"],\n"
              "  \"mountOptions\": [],\n"
              "  \"linux\": {\n"
              "    \"namespaces\": [\"cgroup\", \"ipc\", \"mount\", \"network\", \"pid\", "
              "\"user\", \"uts\"],\n"
              "    \"capabilities\": [],\n"
              "    \"cgroup\": {\"v1\": true, \"v2\": true, \"systemd\": false, "
              "\"systemdUser\": false},\n"
              "    \"seccomp\": {\"enabled\": true, \"actions\": [\"SCMP_ACT_ALLOW\", "
              "\"SCMP_ACT_ERRNO\", \"SCMP_ACT_KILL\", \"SCMP_ACT_KILL_PROCESS\", "
              "\"SCMP_ACT_KILL_THREAD\", \"SCMP_ACT_LOG\", \"SCMP_ACT_TRAP\"], "
              "\"operators\": [\"SCMP_CMP_NE\", \"SCMP_CMP_LT\", \"SCMP_CMP_LE\", "
              "\"SCMP_CMP_EQ\", \"SCMP_CMP_GE\", \"SCMP_CMP_GT\", \"SCMP_CMP_MASKED_EQ\"], "
              "\"archs\": [\"SCMP_ARCH_X86_64\"]},\n"
              "    \"apparmor\": {\"enabled\": false},\n"
              "    \"selinux\": {\"enabled\": false},\n"
              "    \"intelRdt\": {\"enabled\": false}\n"
              "  },\n"
              "  \"annotations\": {\n"
              "    \"io.github.ringfence.oci.commands\": \"create start exec run state list kill "
              "pause resume delete ps events update spec features\",\n"
              "    \"io.github.ringfence.oci.floor\": \"no capabilities, ringfence's seccomp "
              "filter, Landlock, no /sys\"\n"
              "  }\n"
              "}\n",
              stdout);
        return 0;
}

int main(int argc, char **argv)
{
        sandbox_note_cmdline(argv); /* what each run's init wipes */
        static const char *const later[] = {"checkpoint", "restore"};
        /* fds 0-2 exist (a run's relay and the log need them) */
        for (int fd = 0; fd < 3; fd++)
                if (fcntl(fd, F_GETFD) < 0) {
                        int n = open("/dev/null", O_RDWR);
                        if (n < 0)
                                return RF_EXIT_REFUSED;
                        if (n != fd) {
                                dup2(n, fd);
                                close(n);
                        }
                }
        struct rlimit core = {0, 0};
        (void)setrlimit(RLIMIT_CORE, &core);
        (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

        int i = 1;
        for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
                const char *o = argv[i], *eq = strchr(o, '=');
                size_t ol = eq ? (size_t)(eq - o) : strlen(o);
                bool takes = !strncmp(o, "--root", ol) || !strncmp(o, "--log", ol) ||
                             !strncmp(o, "--state-dir", ol) || !strncmp(o, "--log-format", ol) ||
                             !strncmp(o, "--cgroup-root", ol) || !strncmp(o, "--rootless", ol) ||
                             !strncmp(o, "--criu", ol);
                const char *v = eq ? eq + 1 : NULL;
                if (takes && !v) {
                        if (i + 1 >= argc) {
                                oci_error("%s: needs a value", o);
                                return 1;
                        }
                        v = argv[++i];
                }
                if (!strncmp(o, "--root", ol) && ol == 6)
                        g.root = v;
                else if (!strncmp(o, "--log", ol) && ol == 5)
                        g.log = v;
                else if (!strncmp(o, "--state-dir", ol) && ol == 11)
                        g.state_dir = v;
                else if (!strncmp(o, "--cgroup-root", ol) && ol == 13) {
                        if (v[0] != '/' ||
                            (strcmp(v, "/") && cgroup_path_check(v, strlen(v)) < 0)) {
                                oci_error("--cgroup-root %s: an absolute, clean cgroup path", v);
                                return 1;
                        }
                        g.cgroup_root = v;
                } else if (!strncmp(o, "--log-format", ol) && ol == 12) {
                        if (strcmp(v, "json") && strcmp(v, "text")) {
                                oci_error("--log-format %s: text or json", v);
                                return 1;
                        }
                        g.log_json = !strcmp(v, "json");
                } else if (!strncmp(o, "--rootless", ol) && ol == 10) {
                        if (strcmp(v, "true") && strcmp(v, "false") && strcmp(v, "auto")) {
                                oci_error("--rootless %s: true, false or auto", v);
                                return 1;
                        }
                } else if (!strcmp(o, "--debug"))
                        g.debug = true;
                else if (!strcmp(o, "--systemd-cgroup")) {
                        oci_error("--systemd-cgroup: no systemd cgroup driver yet (cgroupfs only)");
                        return 1;
                } else if (!strcmp(o, "--version"))
                        break;
                else if (!strcmp(o, "--help")) {
                        usage(stdout);
                        return 0;
                } else {
                        oci_error("unknown global option %s (see ringfence-oci --help)", o);
                        return 1;
                }
        }
        if (i >= argc) {
                usage(stderr);
                return 1;
        }
        /* root of a user namespace an engine made (rootless Podman): its
         * containers' state goes where runc's does, in XDG_RUNTIME_DIR */
        _cleanup_free_ char *xdg_root = NULL;
        const char *xdg = getenv("XDG_RUNTIME_DIR");
        if (!strcmp(g.root, OCI_ROOT_DEFAULT) && !hostuid_root() && xdg && xdg[0] == '/') {
                if (asprintf(&xdg_root, "%s/ringfence-oci", xdg) < 0) {
                        oci_error("out of memory");
                        return 1;
                }
                g.root = xdg_root;
        }
        if (g.root[0] != '/') {
                oci_error("--root %s: an absolute path", g.root);
                return 1;
        }
        const char *cmd = argv[i];
        if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
                printf("ringfence-oci version %s%s\nspec: 1.2.1\n", RF_VERSION,
                       RF_CONFIG_TEST_BUILD ? " (test build)" : "");
                return 0;
        }
        if (!strcmp(cmd, "run"))
                return oci_run(argc - i, argv + i);
        if (!strcmp(cmd, "create"))
                return oci_create(argc - i, argv + i);
        if (!strcmp(cmd, "start"))
                return oci_start(argc - i, argv + i);
        if (!strcmp(cmd, "exec"))
                return oci_exec(argc - i, argv + i);
        if (!strcmp(cmd, "spec"))
                return cmd_spec(argc - i, argv + i);
        if (!strcmp(cmd, "features")) {
                if (argc - i > 1) {
                        oci_error("features: takes no argument (%.60s)", argv[i + 1]);
                        return 1;
                }
                return cmd_features();
        }
        if (!strcmp(cmd, "state"))
                return oci_state(argc - i, argv + i);
        if (!strcmp(cmd, "list"))
                return oci_list(argc - i, argv + i);
        if (!strcmp(cmd, "kill"))
                return oci_kill(argc - i, argv + i);
        if (!strcmp(cmd, "pause") || !strcmp(cmd, "resume"))
                return oci_pause_resume(argc - i, argv + i, !strcmp(cmd, "pause"));
        if (!strcmp(cmd, "delete"))
                return oci_delete(argc - i, argv + i);
        if (!strcmp(cmd, "ps"))
                return oci_ps(argc - i, argv + i);
        if (!strcmp(cmd, "events"))
                return oci_events(argc - i, argv + i);
        if (!strcmp(cmd, "update"))
                return oci_update(argc - i, argv + i);
        for (size_t k = 0; k < ARRAY_SIZE(later); k++)
                if (!strcmp(cmd, later[k])) {
                        oci_error("%s: not there yet (see docs/OCI.md)", cmd);
                        return 1;
                }
        oci_error("unknown command %s (see ringfence-oci --help)", cmd);
        return 1;
}
