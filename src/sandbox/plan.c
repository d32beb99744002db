/*
 * plan.c — compute a run's plan in the supervisor, before clone.
 *
 * Design: the new root is a fresh tmpfs. Into it go, in this order,
 *   1. the host's top-level system entries: /usr read-only; /bin, /sbin,
 *      /lib* as the same symlinks (merged /usr) or read-only binds;
 *   2. a minimal /etc of the run's own: generated passwd/group/hosts/
 *      hostname/resolv.conf/nsswitch.conf, and read-only binds of what
 *      programs need (TLS roots, alternatives, ld.so config) — never shadow;
 *   3. /dev (tmpfs + bound null, zero, full, random, urandom, tty; a new
 *      devpts instance) and a fresh /proc with its dangerous knobs held
 *      read-only;
 *   4. the user-visible writable places, sorted so parents precede
 *      children: private size-limited /tmp, /var/tmp and $HOME, the policy's extra
 *      read-only/read-write paths, the workspace at its host path;
 *   5. the run's own files in /run/ringfence (identity token, the broker's
 *      client, TLS trust files), and — for a run with a terminated host —
 *      the run's trust bundle mounted read-only over the host's, last, on
 *      top of everything it could lie in.
 * Everything else of the host — its home directories, ringfence's state
 * dir, its sockets, other runs' workspaces — is simply never mounted.
 *
 * Host paths named by the user are canonicalised here and their (dev, ino)
 * recorded; the child re-opens each with RESOLVE_NO_SYMLINKS and refuses if
 * it finds another inode, so a symlink swapped in between fails closed.
 */
#include <errno.h>
#include <linux/filter.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "config.h"
#include "secrets/broker.h"
#include "hostuid.h"
#include "capture.h"
#include "landlock.h"
#include "plan.h"
#include "seccomp.h"
#include "shared/macro.h"
#include "steps.h"
#include "trustfiles.h"
#include "tls/tls-load.h"

#define DEV_TMPFS_SIZE (1ULL << 20)

/* Credential injection over TLS (plan_input.tls_*): the run's trust files,
 * on the root tmpfs, and the host files they are mounted over. */
#define RUN_TLS_BUNDLE "/run/ringfence/ca-certificates.crt"
#define RUN_TLS_CA     "/run/ringfence/run-ca.crt"
#define RUN_TLS_JAVA   "/run/ringfence/cacerts.p12"

int path_absolute(const char *cwd, const char *path, char *out, size_t len)
{
        char tmp[PATH_MAX * 2];
        size_t n = 0;

        if (!path || !*path || len < 2)
                return -EINVAL;
        if (path[0] == '/')
                snprintf(tmp, sizeof tmp, "%s", path);
        else if (cwd && cwd[0] == '/')
                snprintf(tmp, sizeof tmp, "%s/%s", cwd, path);
        else
                return -EINVAL;
        if (strlen(tmp) >= sizeof tmp - 1)
                return -ENAMETOOLONG;
        out[n++] = '/';
        for (char *save = NULL, *c = strtok_r(tmp, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                if (strcmp(c, ".") == 0)
                        continue;
                if (strcmp(c, "..") == 0) {
                        while (n > 1 && out[n - 1] != '/')
                                n--;
                        if (n > 1)
                                n--; /* the slash before the dropped component */
                        continue;
                }
                size_t cl = strlen(c);
                if (n + (n > 1) + cl + 1 > len)
                        return -ENAMETOOLONG;
                if (n > 1)
                        out[n++] = '/';
                memcpy(out + n, c, cl);
                n += cl;
        }
        out[n] = '\0';
        return 0;
}

bool path_is_beneath(const char *a, const char *b)
{
        size_t lb = strlen(b);

        if (strcmp(b, "/") == 0)
                return a[0] == '/';
        if (strncmp(a, b, lb) != 0)
                return false;
        return a[lb] == '\0' || a[lb] == '/';
}

int plan_check_workspace(const char *ws, bool explicit_ws, const char *home, const char *state_dir,
                         struct rf_error *err)
{
        static const char *const pseudo[] = {"/proc", "/sys", "/dev"};
        static const char *const system_dirs[] = {
                "/etc",   "/usr",    "/var",  "/boot", "/run", "/bin", "/sbin", "/lib",   "/lib32",
                "/lib64", "/libx32", "/home", "/root", "/srv", "/opt", "/mnt",  "/media",
        };
        static const char *const system_inside[] = {"/etc", "/usr", "/boot", "/run"};

        if (!ws || ws[0] != '/')
                return rf_error_set(err, -EINVAL, "workspace must be an absolute path");
        for (size_t i = 0; i < ARRAY_SIZE(pseudo); i++)
                if (path_is_beneath(ws, pseudo[i]))
                        return rf_error_set(err, -EINVAL,
                                            "workspace %s is on a pseudo filesystem (%s)", ws,
                                            pseudo[i]);
        if (state_dir && (path_is_beneath(ws, state_dir) || path_is_beneath(state_dir, ws)))
                return rf_error_set(err, -EPERM,
                                    "workspace %s would expose ringfence state (%s); "
                                    "choose a directory that does not contain it",
                                    ws, state_dir);
        if (explicit_ws)
                return 0;

        if (strcmp(ws, "/") == 0)
                return rf_error_set(err, -EPERM,
                                    "refusing to default the workspace to /; "
                                    "pass --workspace DIR to state the intent");
        if (home && path_is_beneath(home, ws))
                return rf_error_set(err, -EPERM,
                                    "refusing to default the workspace to %s (your home "
                                    "directory or above); pass --workspace DIR",
                                    ws);
        for (size_t i = 0; i < ARRAY_SIZE(system_dirs); i++)
                if (path_is_beneath(system_dirs[i], ws))
                        return rf_error_set(err, -EPERM,
                                            "refusing to default the workspace to %s "
                                            "(it contains system directory %s); pass "
                                            "--workspace DIR",
                                            ws, system_dirs[i]);
        for (size_t i = 0; i < ARRAY_SIZE(system_inside); i++)
                if (path_is_beneath(ws, system_inside[i]))
                        return rf_error_set(err, -EPERM,
                                            "refusing to default the workspace to %s (inside "
                                            "system directory %s); pass --workspace DIR",
                                            ws, system_inside[i]);
        return 0;
}

int rf_run_id_new(char buf[static RF_RUN_ID_LEN + 1])
{
        uint8_t b[16];
        struct timespec ts;

        if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
                return negative_errno();
        if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
                return -EIO;
        uint64_t ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
        for (int i = 0; i < 6; i++)
                b[i] = (uint8_t)(ms >> (40 - 8 * i));
        b[6] = (uint8_t)(0x70 | (b[6] & 0x0f)); /* version 7 */
        b[8] = (uint8_t)(0x80 | (b[8] & 0x3f)); /* variant 10 */
        snprintf(buf, RF_RUN_ID_LEN + 1,
                 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                 b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                 b[15]);
        return 0;
}

/* ---- owned string storage ------------------------------------------------ */

static char *plan_keep(struct rf_plan *p, char *s)
{
        return plan_own(p, s); /* joinplan.c: the core library's */
}

static char *plan_strdup(struct rf_plan *p, const char *s)
{
        return plan_keep(p, strdup(s));
}

static char *plan_printf(struct rf_plan *p, const char *fmt, ...) _printf_(2, 3);
static char *plan_printf(struct rf_plan *p, const char *fmt, ...)
{
        char *s = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                s = NULL;
        va_end(ap);
        return plan_keep(p, s);
}

static struct plan_op *op_add(struct rf_plan *p, enum plan_op_kind kind, int step, const char *dst)
{
        if (p->n_ops >= PLAN_OPS_MAX)
                return NULL;
        struct plan_op *op = &p->ops[p->n_ops++];
        *op = (struct plan_op){.kind = kind, .step = step, .dst = dst, .mode = 0755};
        return op;
}

/* ---- the pieces of the root ---------------------------------------------- */

/* Mirror a host top-level entry: same symlink, or a read-only bind. */
static int add_system_entry(struct rf_plan *p, const char *path)
{
        struct stat st;
        char target[PATH_MAX];

        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if (S_ISLNK(st.st_mode)) {
                ssize_t n = readlink(path, target, sizeof target - 1);
                if (n < 0)
                        return negative_errno();
                target[n] = '\0';
                struct plan_op *op = op_add(p, OP_SYMLINK, STEP_SYSTEM, path);
                if (!op || !(op->src = plan_strdup(p, target)))
                        return -ENOMEM;
                return 0;
        }
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
                return 0;
        struct plan_op *op = op_add(p, OP_BIND, STEP_SYSTEM, path);
        if (!op)
                return -E2BIG;
        op->src = path;
        op->flags = OPF_RDONLY;
        op->mode = st.st_mode & S_IFMT;
        return 0;
}

static int add_file(struct rf_plan *p, int step, const char *dst, const char *data, mode_t mode)
{
        struct plan_op *op = op_add(p, OP_FILE, step, dst);
        if (!op)
                return -E2BIG;
        op->data = data;
        op->data_len = data ? strlen(data) : 0;
        op->mode = mode;
        /* the files every run gets in place of an image's own */
        if (p->rootfs && (!strcmp(dst, "/etc/hosts") || !strcmp(dst, "/etc/hostname") ||
                          !strcmp(dst, "/etc/resolv.conf")))
                op->flags |= OPF_REPLACE;
        return data ? 0 : -ENOMEM;
}

/* A name beneath $HOME: relative, without empty, "." or ".." components,
 * no trailing slash, shorter than PATH_MAX. */
static bool home_rel_ok(const char *rel, size_t n)
{
        bool ok = n > 0 && n < PATH_MAX && rel[0] != '/' && !memchr(rel, '\0', n);
        for (size_t i = 0; ok && i < n;) {
                size_t l = 0;
                while (i + l < n && rel[i + l] != '/')
                        l++;
                ok = l > 0 && !(l == 1 && rel[i] == '.') &&
                     !(l == 2 && rel[i] == '.' && rel[i + 1] == '.');
                i += l;
                if (i < n)
                        ok = ok && ++i < n; /* a slash, and something after it */
        }
        return ok;
}

/* OP_DIRs (0700) for rel's parents from the component after `from` bytes
 * (0: all of them) */
static int home_parents(struct rf_plan *p, const char *rel, size_t from)
{
        for (const char *sl = strchr(rel + from, '/'); sl; sl = strchr(sl + 1, '/')) {
                struct plan_op *d =
                        op_add(p, OP_DIR, STEP_HOME,
                               plan_printf(p, "%s/%.*s", p->home, (int)(sl - rel), rel));
                if (!d || !d->dst)
                        return -E2BIG;
                d->mode = 0700;
        }
        return 0;
}

/* An OP_FILE at $HOME/rel with len bytes of data (copied), mode. */
static int home_file(struct rf_plan *p, const char *rel, const char *data, size_t len, mode_t mode)
{
        char *copy = plan_keep(p, malloc(len + 1));
        struct plan_op *op =
                copy ? op_add(p, OP_FILE, STEP_HOME, plan_printf(p, "%s/%s", p->home, rel)) : NULL;
        if (!op || !op->dst)
                return -E2BIG;
        memcpy(copy, data, len);
        copy[len] = '\0';
        op->data = copy;
        op->data_len = len;
        op->mode = mode;
        return 0;
}

/*
 * One tree entry list (plan_home_file.tree): each read-only directory a
 * tmpfs of its own at its place, its files written into it, and its name
 * added to ro[] (made read-only once every home file is written). Each
 * file must lie beneath the directory entry before it. The list comes from
 * this process (cli/profile_home.c), but its bounds are checked as if it
 * did not.
 */
static int home_tree(struct rf_plan *p, const struct plan_home_file *f, const char **ro,
                     size_t *n_ro, size_t *entries, uint64_t *bytes, struct rf_error *err)
{
        char dir[PATH_MAX] = "", prev[PATH_MAX] = "";
        size_t dl = 0;
        for (size_t off = 0; off < f->len;) {
                struct plan_home_entry e;
                if (f->len - off < sizeof e)
                        return rf_error_set(err, -EINVAL, "a home tree entry cut short");
                memcpy(&e, f->data + off, sizeof e);
                off += sizeof e;
                if (e.name_len == 0 || e.name_len >= PATH_MAX || e.name_len > f->len - off ||
                    e.data_len > f->len - off - e.name_len ||
                    (e.kind == PLAN_HOME_RODIR && e.data_len))
                        return rf_error_set(err, -EINVAL, "a home tree entry out of bounds");
                char rel[PATH_MAX];
                memcpy(rel, f->data + off, e.name_len);
                rel[e.name_len] = '\0';
                const char *data = f->data + off + e.name_len;
                off += e.name_len + e.data_len;
                if (!home_rel_ok(rel, e.name_len))
                        return rf_error_set(err, -EINVAL, "~/%.200s: not a name beneath $HOME",
                                            rel);
                if (++*entries > PLAN_HOME_ENTRIES_MAX ||
                    (*bytes += e.data_len) > PLAN_HOME_TREE_MAX)
                        return rf_error_set(err, -E2BIG,
                                            "more than %d files or %u bytes carried into the "
                                            "run's $HOME",
                                            PLAN_HOME_ENTRIES_MAX, PLAN_HOME_TREE_MAX);
                if (e.kind == PLAN_HOME_RODIR) {
                        if (*n_ro == PLAN_HOME_FILES_MAX)
                                return rf_error_set(err, -E2BIG, "too many read-only directories");
                        struct plan_op *op;
                        char *dst = plan_printf(p, "%s/%s", p->home, rel);
                        if (home_parents(p, rel, 0) < 0 || !dst ||
                            !(op = op_add(p, OP_DIR, STEP_HOME, dst)))
                                return rf_error_set(err, -E2BIG, "too many mounts and files");
                        op->mode = 0700;
                        if (!(op = op_add(p, OP_TMPFS, STEP_HOME, dst)))
                                return rf_error_set(err, -E2BIG, "too many mounts and files");
                        op->size = PLAN_HOME_RODIR_SIZE;
                        op->mode = 0700;
                        ro[(*n_ro)++] = dst;
                        memcpy(dir, rel, e.name_len + 1);
                        memcpy(prev, rel, e.name_len + 1);
                        dl = e.name_len;
                        continue;
                }
                if (e.kind != PLAN_HOME_FILE && e.kind != PLAN_HOME_EXEC)
                        return rf_error_set(err, -EINVAL, "~/%.200s: an unknown home tree entry",
                                            rel);
                if (!dl || strncmp(rel, dir, dl) || rel[dl] != '/')
                        return rf_error_set(err, -EINVAL,
                                            "~/%.200s: a home tree file outside its directory",
                                            rel);
                /* the directories not made for the file before it (a
                 * walk gives a directory's files one after another) */
                size_t from = dl + 1;
                for (const char *sl = strchr(rel + from, '/'); sl; sl = strchr(sl + 1, '/')) {
                        size_t k = (size_t)(sl - rel);
                        if (strncmp(prev, rel, k) || (prev[k] != '/' && prev[k]))
                                break;
                        from = k + 1;
                }
                snprintf(prev, sizeof prev, "%.*s", (int)(strrchr(rel, '/') - rel), rel);
                if (home_parents(p, rel, from) < 0 ||
                    home_file(p, rel, data, e.data_len, e.kind == PLAN_HOME_EXEC ? 0700 : 0600) < 0)
                        return rf_error_set(err, -E2BIG, "too many mounts and files");
        }
        return 0;
}

/*
 * A profile's files for the run's $HOME (plan_input.home_files): the
 * directories of each (0700) and the file (0600), made by init in the home
 * tmpfs as the run user, after the tmpfs is mounted; then the trees
 * (home_tree), each read-only directory remounted read-only last. None when
 * the workspace holds the home: they would be written into the caller's
 * own files.
 */
static int add_home_files(struct rf_plan *p, const struct plan_input *in, struct rf_error *err)
{
        const char *ro[PLAN_HOME_FILES_MAX];
        size_t n_ro = 0, entries = 0;
        uint64_t bytes = 0;
        int r;

        if (p->home_in_workspace || in->n_home_files == 0)
                return 0;
        if (in->n_home_files > PLAN_HOME_FILES_MAX)
                return rf_error_set(err, -E2BIG, "more than %d files for the run's $HOME",
                                    PLAN_HOME_FILES_MAX);
        for (size_t i = 0; i < in->n_home_files; i++) {
                const struct plan_home_file *f = &in->home_files[i];
                if (f->tree) {
                        if ((r = home_tree(p, f, ro, &n_ro, &entries, &bytes, err)) < 0)
                                return r;
                        continue;
                }
                size_t n = strnlen(f->rel, sizeof f->rel);
                if (!home_rel_ok(f->rel, n))
                        return rf_error_set(err, -EINVAL, "~/%.200s: not a file name beneath $HOME",
                                            f->rel);
                if (home_parents(p, f->rel, 0) < 0 ||
                    home_file(p, f->rel, f->data, f->len, 0600) < 0)
                        return rf_error_set(err, -E2BIG, "too many mounts and files");
        }
        for (size_t i = 0; i < n_ro; i++) {
                struct plan_op *op = op_add(p, OP_RO_SELF, STEP_HOME, ro[i]);
                if (!op)
                        return rf_error_set(err, -E2BIG, "too many mounts and files");
                op->flags = OPF_EXEC;
        }
        return 0;
}

static bool passwd_safe(const char *s)
{
        if (!s || !*s || strlen(s) > 64)
                return false;
        for (const char *c = s; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                      (*c >= '0' && *c <= '9') || *c == '_' || *c == '-' || *c == '.'))
                        return false;
        return true;
}

/* A host name the run may be given: 1-64 bytes of letters, digits, '-'
 * and '.', not starting with '-' or '.' (it lands in /etc/hosts). */
static bool hostname_valid(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n > 64 || s[0] == '-' || s[0] == '.')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
                      (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '.'))
                        return false;
        return true;
}

/* Does the image (--rootfs) have `rel` (a name beneath its root, however
 * it is: a file, a link)? Looked up from its root without following a
 * link, so nothing outside it is looked at. */
static bool image_has(const struct rf_plan *p, const char *rel)
{
        if (!p->rootfs)
                return false;
        _cleanup_close_ int root = open(p->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
        struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                               .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
        _cleanup_close_ int fd =
                root < 0 ? -1 : (int)syscall(SYS_openat2, root, rel, &how, sizeof how);
        return fd >= 0;
}

static int add_etc(struct rf_plan *p)
{
        static const struct {
                const char *path;
                bool dir;
        } binds[] = {
                {"/etc/ssl", true},          {"/etc/ca-certificates", true},
                {"/etc/alternatives", true}, {"/etc/ld.so.conf.d", true},
                {"/etc/ld.so.cache", false}, {"/etc/ld.so.conf", false},
                {"/etc/protocols", false},   {"/etc/services", false},
                {"/etc/mime.types", false},  {"/etc/localtime", false},
        };
        char *passwd, *group;
        int r;

        if (!op_add(p, OP_DIR, STEP_ETC, "/etc"))
                return -E2BIG;
        /* root, the run user (if not root), nobody (if not the run user) */
        const char *nobody = "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
        passwd = plan_printf(p, "root:x:0:0:root:/root:/bin/sh\n");
        if (passwd && p->uid != 0)
                passwd = plan_printf(p, "%s%s:x:%u:%u:%s:%s:/bin/sh\n", passwd, p->user, p->uid,
                                     p->gid, p->user, p->home);
        if (passwd && p->uid != 65534)
                passwd = plan_printf(p, "%s%s", passwd, nobody);
        group = plan_printf(p, "root:x:0:\n");
        if (group && p->gid != 0)
                group = plan_printf(p, "%s%s:x:%u:\n", group, p->gid == 65534 ? "nogroup" : p->user,
                                    p->gid);
        if (group && p->gid != 65534)
                group = plan_printf(p, "%snogroup:x:65534:\n", group);
        /* an image's own users, groups and name service stay its own */
        if ((!image_has(p, "etc/passwd") &&
             (r = add_file(p, STEP_ETC, "/etc/passwd", passwd, 0644)) < 0) ||
            (!image_has(p, "etc/group") &&
             (r = add_file(p, STEP_ETC, "/etc/group", group, 0644)) < 0) ||
            (r = add_file(p, STEP_ETC, "/etc/hostname", plan_printf(p, "%s\n", p->hostname),
                          0644)) < 0 ||
            (r = add_file(p, STEP_ETC, "/etc/hosts",
                          plan_printf(p,
                                      "127.0.0.1\tlocalhost\n127.0.1.1\t%s\n"
                                      "::1\tlocalhost ip6-localhost ip6-loopback\n",
                                      p->hostname),
                          0644)) < 0 ||
            /* Nothing answers on the run's own loopback :53, so lookups fail
             * at once (ECONNREFUSED) instead of hanging. */
            (r = add_file(p, STEP_ETC, "/etc/resolv.conf",
                          "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n", 0644)) < 0 ||
            (!image_has(p, "etc/nsswitch.conf") &&
             (r = add_file(p, STEP_ETC, "/etc/nsswitch.conf",
                           "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n"
                           "networks: files\nprotocols: files\nservices: files\n",
                           0644)) < 0))
                return r;
        if (p->rootfs)
                return 0; /* the image's own certificates, libraries, services */

        for (size_t i = 0; i < ARRAY_SIZE(binds); i++) {
                struct stat st;
                if (lstat(binds[i].path, &st) < 0)
                        continue;
                if (S_ISLNK(st.st_mode)) {
                        char target[PATH_MAX];
                        ssize_t n = readlink(binds[i].path, target, sizeof target - 1);
                        if (n < 0)
                                continue;
                        target[n] = '\0';
                        struct plan_op *op = op_add(p, OP_SYMLINK, STEP_ETC, binds[i].path);
                        if (!op || !(op->src = plan_strdup(p, target)))
                                return -ENOMEM;
                        continue;
                }
                if (binds[i].dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
                        continue;
                struct plan_op *op = op_add(p, OP_BIND, STEP_ETC, binds[i].path);
                if (!op)
                        return -E2BIG;
                op->src = binds[i].path;
                op->flags = OPF_RDONLY | OPF_OPTIONAL;
                op->mode = st.st_mode & S_IFMT;
        }
        return 0;
}

/* an OCI bundle's devices: each the host's node, bound like null's, its
 * directories beneath /dev made first */
static int add_devices(struct rf_plan *p, const struct plan_input *in)
{
        if (in->n_devices > PLAN_DEVICES_MAX)
                return -E2BIG;
        for (size_t i = 0; i < in->n_devices; i++) {
                const struct plan_device *d = &in->devices[i];
                struct plan_op *op;
                if (strncmp(d->path, "/dev/", 5) != 0 || (d->type != S_IFCHR && d->type != S_IFBLK))
                        return -EINVAL;
                for (const char *sl = strchr(d->path + 5, '/'); sl; sl = strchr(sl + 1, '/')) {
                        char *dir = plan_printf(p, "%.*s", (int)(sl - d->path), d->path);
                        if (!dir || !(op = op_add(p, OP_DIR, STEP_DEV, dir)))
                                return dir ? -E2BIG : -ENOMEM;
                        op->mode = 0755;
                }
                char *dst = plan_strdup(p, d->path), *src = plan_strdup(p, d->host);
                if (!dst || !src)
                        return -ENOMEM;
                if (!(op = op_add(p, OP_BIND, STEP_DEV, dst)))
                        return -E2BIG;
                op->src = src;
                op->flags = OPF_DEVICE;
                op->mode = d->type;
        }
        return 0;
}

static int add_dev(struct rf_plan *p, uint64_t shm_size)
{
        static const char *const nodes[] = {"/dev/null",   "/dev/zero",    "/dev/full",
                                            "/dev/random", "/dev/urandom", "/dev/tty"};
        static const char *const links[][2] = {
                {"/dev/ptmx", "pts/ptmx"},          {"/dev/fd", "/proc/self/fd"},
                {"/dev/stdin", "/proc/self/fd/0"},  {"/dev/stdout", "/proc/self/fd/1"},
                {"/dev/stderr", "/proc/self/fd/2"},
        };
        struct plan_op *op;

        if (!(op = op_add(p, OP_DIR, STEP_DEV, "/dev")))
                return -E2BIG;
        if (!(op = op_add(p, OP_TMPFS, STEP_DEV, "/dev")))
                return -E2BIG;
        op->size = DEV_TMPFS_SIZE;
        op->mode = 0755;
        for (size_t i = 0; i < ARRAY_SIZE(nodes); i++) {
                if (!(op = op_add(p, OP_BIND, STEP_DEV, nodes[i])))
                        return -E2BIG;
                op->src = nodes[i];
                op->flags = OPF_DEVICE;
                op->mode = S_IFCHR;
        }
        for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
                if (!(op = op_add(p, OP_SYMLINK, STEP_DEV, links[i][0])))
                        return -E2BIG;
                op->src = links[i][1];
        }
        if (!(op = op_add(p, OP_DIR, STEP_DEV, "/dev/pts")) ||
            !(op = op_add(p, OP_DEVPTS, STEP_DEV, "/dev/pts")) ||
            !(op = op_add(p, OP_DIR, STEP_DEV, "/dev/shm")))
                return -E2BIG;
        if (!(op = op_add(p, OP_TMPFS, STEP_DEV, "/dev/shm")))
                return -E2BIG;
        op->size = shm_size;
        op->mode = 01777;
        return 0;
}

static int add_proc(struct rf_plan *p)
{
        static const char *const ro[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq",
                                         "/proc/bus"};
        struct plan_op *op;

        if (!op_add(p, OP_DIR, STEP_PROC, "/proc") || !op_add(p, OP_PROC, STEP_PROC, "/proc"))
                return -E2BIG;
        for (size_t i = 0; i < ARRAY_SIZE(ro); i++) {
                if (!(op = op_add(p, OP_RO_SELF, STEP_PROC, ro[i])))
                        return -E2BIG;
                op->flags = OPF_OPTIONAL;
        }
        return 0;
}

/* maskedPaths and readonlyPaths (plan_input): after every mount of the
 * run (/proc, /tmp, the workspace), so each covers what is there; each
 * path absolute without "." or "..". */
static int add_masked(struct rf_plan *p, const struct plan_input *in, struct rf_error *err)
{
        struct plan_op *op;

        for (size_t i = 0; i < in->n_masked + in->n_readonly; i++) {
                bool mask = i < in->n_masked;
                const char *path = mask ? in->masked[i] : in->readonly[i - in->n_masked];
                if (path[0] != '/' || strstr(path, "/..") || strstr(path, "/./") ||
                    strlen(path) >= PATH_MAX)
                        return rf_error_set(err, -EINVAL, "%s path %.200s: not absolute and clean",
                                            mask ? "masked" : "read-only", path);
                if (!(op = op_add(p, mask ? OP_BIND : OP_RO_SELF, STEP_PROC, path)) ||
                    !(op->dst = plan_strdup(p, path)))
                        return -E2BIG;
                op->flags = OPF_OPTIONAL;
                if (mask) {
                        op->src = "/dev/null";
                        op->flags |= OPF_MASK | OPF_DEVICE | OPF_RDONLY;
                        op->mode = S_IFCHR;
                }
        }
        return 0;
}

/* A user-visible mount, to be sorted so that parents come first. */
struct user_mount {
        enum plan_op_kind kind;
        int step;
        const char *path;
        const char *src; /* a bind's source when not path (a kept directory) */
        unsigned flags;
        uint64_t size;
        mode_t mode; /* tmpfs mode, or S_IFDIR/S_IFREG of a bind source */
        dev_t dev;
        ino_t ino;
        uid_t owner_uid; /* OPF_IDMAP_OWNER */
        gid_t owner_gid;
};

static int user_mount_cmp(const void *a, const void *b)
{
        const struct user_mount *x = a, *y = b;
        int c = strcmp(x->path, y->path);

        /* Same path: the private tmpfs first, so an explicit bind there
         * (e.g. --workspace /tmp) lies on top of it. */
        if (c == 0)
                c = (x->kind == OP_BIND) - (y->kind == OP_BIND);
        return c;
}

/*
 * A user-named path must name its inode directly: a symlink anywhere in it
 * could have been planted by an earlier run inside a writable root, and
 * following it would hand this run whatever it points to. `given` is the
 * lexically normalised absolute path, `resolved` its realpath().
 */
static int refuse_symlinks(const char *what, const char *given, const char *resolved,
                           struct rf_error *err)
{
        if (strcmp(given, resolved) == 0)
                return 0;
        return rf_error_set(err, -ELOOP,
                            "%s %s goes through a symbolic link (it resolves to %s); "
                            "name the resolved path",
                            what, given, resolved);
}

/* Canonicalise a user-named host path and record what it is. */
static int resolve_bind(struct rf_plan *p, const struct plan_input *in, const char *what,
                        const char *path, struct user_mount *m, struct rf_error *err)
{
        const char *state_dir = in->state_dir;
        char buf[PATH_MAX];
        struct stat st;
        int r;

        if (in->pinned) {
                /* the daemon's caller: the inode checked as that caller, or
                 * nothing — before root resolves anything its errors could
                 * tell the caller about */
                const struct plan_pin *pin = NULL;
                for (size_t i = 0; i < in->n_pins && !pin; i++)
                        if (!strcmp(in->pins[i].path, path))
                                pin = &in->pins[i];
                if (!pin || stat(path, &st) < 0 || pin->dev != st.st_dev || pin->ino != st.st_ino)
                        return rf_error_set(err, -EPERM, "%s %s: %s", what, path,
                                            pin ? "changed since it was checked as the caller"
                                                : "not checked as the caller (internal error)");
        }

        if (!realpath(path, buf))
                return rf_error_set(err, negative_errno(), "%s %s: %s", what, path,
                                    strerror(errno));
        if ((r = refuse_symlinks(what, path, buf, err)) < 0)
                return r;
        if (state_dir && (path_is_beneath(buf, state_dir) || path_is_beneath(state_dir, buf)))
                return rf_error_set(err, -EPERM, "%s %s would expose ringfence state (%s)", what,
                                    buf, state_dir);
        if (path_is_beneath(buf, "/proc") || path_is_beneath(buf, "/sys") ||
            path_is_beneath(buf, "/dev"))
                return rf_error_set(err, -EINVAL, "%s %s: pseudo filesystems cannot be bound", what,
                                    buf);
        if (stat(buf, &st) < 0)
                return rf_error_set(err, negative_errno(), "%s %s: %s", what, buf, strerror(errno));
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
                return rf_error_set(err, -EINVAL, "%s %s: not a directory or regular file", what,
                                    buf);
        m->path = plan_strdup(p, buf);
        if (!m->path)
                return -ENOMEM;
        m->mode = st.st_mode & S_IFMT;
        m->dev = st.st_dev;
        m->ino = st.st_ino;
        m->flags |= OPF_VERIFY;
        /* A read-only path others may not read (a user's 0600 config) is
         * shown to a root-started run as its own, through an idmapped
         * mount from the path's owner: root named it, so the run may read
         * it; it stays read-only and nothing else of the host changes.
         * Never root's own: a run is not host root, whatever it is given. */
        if (in->pinned) {
                /* the daemon's caller: only its own paths are shown as the
                 * run's (like the workspace: its uid and its primary
                 * group); any other path as it is, with the rights of
                 * others — never another owner's (or a group's the caller
                 * may not hold) lent through an idmap */
                if (p->map_as_root && st.st_uid == in->pin_uid && p->uid == in->pin_uid)
                        m->flags |= OPF_IDMAP;
                return 0;
        }
        if (p->map_as_root && (m->flags & OPF_RDONLY) && !(st.st_mode & S_IROTH) &&
            st.st_uid != 0) {
                if (st.st_uid == p->uid && st.st_gid == p->gid)
                        m->flags |= OPF_IDMAP; /* the workspace owner's: as the workspace */
                else {
                        m->flags |= OPF_IDMAP_OWNER;
                        m->owner_uid = st.st_uid;
                        m->owner_gid = st.st_gid;
                }
        }
        /* A writable path owned like the workspace is idmapped like it; one
         * owned by another user (not root) through an idmap from that
         * owner, so what the run writes there lands as the owner (setuid
         * and setgid bits are refused by the run's seccomp filter, as in
         * the workspace). Root's own trees are refused: the run would
         * become the owner of every root-owned file beneath. */
        if (p->map_as_root && !(m->flags & OPF_RDONLY)) {
                if (st.st_uid == 0 && p->uid != 0)
                        return rf_error_set(err, -EPERM,
                                            "%s %s is owned by root; a run started by root "
                                            "writes only its workspace owner's paths or "
                                            "another user's, never root's",
                                            what, buf);
                if (st.st_uid == p->uid && st.st_gid == p->gid)
                        m->flags |= OPF_IDMAP;
                else {
                        m->flags |= OPF_IDMAP_OWNER;
                        m->owner_uid = st.st_uid;
                        m->owner_gid = st.st_gid;
                }
        }
        return 0;
}

/* ---- protected paths --------------------------------------------------------
 *
 * A protected path inside the workspace is bound read-only onto itself, and
 * every ancestor between it and the workspace root is bound read-write onto
 * itself: a mount point cannot be renamed or removed (EBUSY), so the run
 * cannot move `.git` aside and recreate `.git/hooks`. A protected path that
 * does not exist yet gets an empty placeholder (and missing ancestors),
 * created here by the supervisor, walked by fd with O_NOFOLLOW, recorded,
 * and removed by plan_cleanup() after the run if still unchanged.
 */

#define PROTECT_DEPTH_MAX 16

static int record_created(struct rf_plan *p, const char *path, bool dir, int dfd, const char *name)
{
        struct stat st;

        if (p->n_created >= PLAN_CREATED_MAX)
                return -E2BIG;
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return negative_errno();
        struct plan_created *c = &p->created[p->n_created++];
        c->path = plan_strdup(p, path);
        c->dir = dir;
        c->dev = st.st_dev;
        c->ino = st.st_ino;
        c->size = st.st_size;
        return c->path ? 0 : -ENOMEM;
}

static int push_mount(struct user_mount **m, size_t *n, size_t *max, struct user_mount v)
{
        for (size_t i = 0; i < *n; i++)
                if ((*m)[i].kind == OP_BIND && strcmp((*m)[i].path, v.path) == 0) {
                        /* the same path twice: read-only wins */
                        (*m)[i].flags |= v.flags & OPF_RDONLY;
                        return 0;
                }
        if (*n == *max) {
                size_t cap = *max * 2 + 16;
                struct user_mount *x = realloc(*m, cap * sizeof *x);
                if (!x)
                        return -ENOMEM;
                *m = x;
                *max = cap;
        }
        (*m)[(*n)++] = v;
        return 0;
}

/* Walk `rel` beneath the workspace by fd, creating what is missing, and
 * add the self-binds. */
static int protect_one(struct rf_plan *p, const char *rel, bool want_dir, const char *content,
                       struct user_mount **m, size_t *n, size_t *max, struct rf_error *err)
{
        char comp[NAME_MAX + 1], path[PATH_MAX];
        const char *s = rel;
        int depth = 0, r;

        _cleanup_close_ int dfd = open(p->workspace, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return rf_error_set(err, negative_errno(), "workspace %s: %m", p->workspace);
        snprintf(path, sizeof path, "%s", p->workspace);
        for (;;) {
                while (*s == '/')
                        s++;
                if (!*s)
                        return 0;
                const char *e = strchr(s, '/');
                size_t len = e ? (size_t)(e - s) : strlen(s);
                if (len > NAME_MAX || strlen(path) + 1 + len >= sizeof path ||
                    ++depth > PROTECT_DEPTH_MAX)
                        return rf_error_set(err, -ENAMETOOLONG, "protected path %s: too long", rel);
                memcpy(comp, s, len);
                comp[len] = '\0';
                s += len;
                while (*s == '/')
                        s++;
                bool leaf = *s == '\0';
                strcat(path, "/");
                strcat(path, comp);

                struct stat st;
                if (fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno != ENOENT)
                                return rf_error_set(err, negative_errno(), "protected path %s: %m",
                                                    path);
                        /* Missing: create an empty placeholder. */
                        bool dir = !leaf || want_dir;
                        if (dir)
                                r = mkdirat(dfd, comp, 0755);
                        else {
                                r = openat(dfd, comp,
                                           O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                                           0444);
                                if (r >= 0 && content &&
                                    write(r, content, strlen(content)) !=
                                            (ssize_t)strlen(content)) {
                                        int werr = errno ? errno : EIO;
                                        close(r);
                                        (void)unlinkat(dfd, comp, 0);
                                        errno = werr;
                                        r = -1;
                                } else if (r >= 0)
                                        close(r);
                        }
                        if (r < 0)
                                return rf_error_set(err, negative_errno(),
                                                    "cannot create placeholder %s: %m", path);
                        /* owned like the workspace, not by whoever runs us */
                        if (fchownat(dfd, comp, p->ws_owner_uid, p->ws_owner_gid,
                                     AT_SYMLINK_NOFOLLOW) < 0 &&
                            errno != EPERM)
                                return rf_error_set(err, negative_errno(),
                                                    "cannot chown placeholder %s: %m", path);
                        if ((r = record_created(p, path, dir, dfd, comp)) < 0)
                                return rf_error_set(err, r, "protected path %s: %s", path,
                                                    strerror(-r));
                        if (fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) < 0)
                                return rf_error_set(err, negative_errno(), "protected path %s: %m",
                                                    path);
                } else if (S_ISLNK(st.st_mode)) {
                        return rf_error_set(err, -ELOOP,
                                            "protected path %s is a symbolic link; refusing "
                                            "to follow it",
                                            path);
                } else if (!leaf && !S_ISDIR(st.st_mode)) {
                        return 0; /* e.g. a .git file (worktree): nothing beneath to protect */
                } else if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
                        return rf_error_set(err, -EINVAL,
                                            "protected path %s: not a file or directory", path);
                } else if (leaf && S_ISREG(st.st_mode) && st.st_nlink > 1) {
                        /* another name for the same inode could be written */
                        return rf_error_set(err, -EMLINK,
                                            "protected path %s has %ju hard links; refusing "
                                            "(a second name would write through)",
                                            path, (uintmax_t)st.st_nlink);
                }
                struct user_mount um = {
                        .kind = OP_BIND,
                        .step = STEP_PROTECT,
                        .path = plan_strdup(p, path),
                        .flags = OPF_VERIFY | (leaf ? OPF_RDONLY : 0) |
                                 (p->map_as_root ? OPF_IDMAP : 0),
                        .mode = st.st_mode & S_IFMT,
                        .dev = st.st_dev,
                        .ino = st.st_ino,
                };
                if (!um.path || (r = push_mount(m, n, max, um)) < 0)
                        return -ENOMEM;
                if (leaf)
                        return 0;
                int nfd = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (nfd < 0)
                        return rf_error_set(err, negative_errno(), "protected path %s: %m", path);
                close(dfd);
                dfd = nfd;
        }
}

/*
 * The workspace root must not become a bare repository that the host's
 * git would pick up once the run has invalidated .git (git tries the
 * directory itself when .git is not a valid git dir): a root-level HEAD or
 * config is held read-only (an empty read-only placeholder when missing, so
 * git finds no valid HEAD there); a directory of that name is pinned as a
 * mount point so it cannot be renamed away and replaced by a file.
 */
static int protect_root_name(struct rf_plan *p, const char *name, struct user_mount **m, size_t *n,
                             size_t *max, struct rf_error *err)
{
        char path[PATH_MAX];
        struct stat st;

        snprintf(path, sizeof path, "%s/%s", p->workspace, name);
        if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
                return protect_one(p, name, false, NULL, m, n, max, err);
        struct user_mount um = {
                .kind = OP_BIND,
                .step = STEP_PROTECT,
                .path = plan_strdup(p, path),
                .flags = OPF_VERIFY | (p->map_as_root ? OPF_IDMAP : 0),
                .mode = S_IFDIR,
                .dev = st.st_dev,
                .ino = st.st_ino,
        };
        return um.path ? push_mount(m, n, max, um) : -ENOMEM;
}

static int add_protected(struct rf_plan *p, const struct rf_policy *pol, struct user_mount **m,
                         size_t *n, size_t *max, struct rf_error *err)
{
        char git[PATH_MAX];
        struct stat st;
        int r;

        /* Default, unless the policy explicitly says "protected": []: what
         * of a git repository makes git run code later on the host. */
        snprintf(git, sizeof git, "%s/.git", p->workspace);
        bool defaults = !pol->protected_set || pol->n_protected > 0;
        bool have_git = defaults && lstat(git, &st) == 0; /* one lstat for the three uses */
        if (have_git && S_ISDIR(st.st_mode)) {
                /* hooks; config (core.fsmonitor, hooksPath, filters);
                 * commondir, which can point git at another config ("."
                 * when missing: the repository itself, as if absent); the
                 * configs of submodules and worktrees. */
                static const struct {
                        const char *path;
                        bool dir;
                        const char *content;
                } git_paths[] = {
                        {".git/hooks", true, NULL},       {".git/config", false, NULL},
                        {".git/commondir", false, ".\n"}, {".git/modules", true, NULL},
                        {".git/worktrees", true, NULL},
                };
                for (size_t i = 0; i < ARRAY_SIZE(git_paths); i++)
                        if ((r = protect_one(p, git_paths[i].path, git_paths[i].dir,
                                             git_paths[i].content, m, n, max, err)) < 0)
                                return r;
        } else if (have_git && S_ISREG(st.st_mode)) {
                /* a worktree or submodule checkout: ".git" is a "gitdir:"
                 * file; rewritten, it would point git at a config the run
                 * wrote. */
                if ((r = protect_one(p, ".git", false, NULL, m, n, max, err)) < 0)
                        return r;
        }
        if (have_git && ((r = protect_root_name(p, "HEAD", m, n, max, err)) < 0 ||
                         (r = protect_root_name(p, "config", m, n, max, err)) < 0))
                return r;
        for (size_t i = 0; i < pol->n_protected; i++)
                if ((r = protect_one(p, pol->protected[i], pol -> protected_dir[i], NULL, m, n, max,
                                     err)) < 0)
                        return r;
        return 0;
}

void plan_cleanup(struct rf_plan *p)
{
        /* Newest first: a placeholder file before the directory holding it. */
        while (p && p->n_created > 0) {
                struct plan_created *c = &p->created[--p->n_created];
                struct stat st;
                if (!c->path || lstat(c->path, &st) < 0 || st.st_dev != c->dev ||
                    st.st_ino != c->ino)
                        continue; /* replaced or gone: not ours to remove */
                if (c->dir)
                        (void)rmdir(c->path); /* only if still empty */
                else if (S_ISREG(st.st_mode) && st.st_size == c->size)
                        (void)unlink(c->path);
        }
}

/* One name beneath dfd: a directory of uid:gid, mode 0700, made if absent
 * (chowned where this process may), never through a symbolic link. The
 * fd, or -errno. */
static int kept_dir(int dfd, const char *name, uid_t uid, gid_t gid)
{
        bool made = mkdirat(dfd, name, 0700) == 0;
        if (!made && errno != EEXIST)
                return negative_errno();
        int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0)
                return negative_errno();
        if (made && geteuid() == 0 && fchown(fd, uid, gid) < 0) {
                int e = negative_errno();
                close(fd);
                return e;
        }
        /* a mode the run itself set (its own directory): put back, the
         * owner being right is what matters */
        if (fstat(fd, &st) < 0 || st.st_uid != uid ||
            ((st.st_mode & 077) && fchmod(fd, 0700) < 0)) {
                close(fd);
                return -EPERM;
        }
        return fd;
}

/*
 * An agent's kept state (plan.h, struct plan_kept): its directory under
 * STATE_DIR/kept made (the path root's, the last two levels the run's
 * identity's) and bound at $HOME/REL, idmapped like the workspace.
 */
static int kept_mount(struct rf_plan *p, const struct plan_input *in, const struct plan_kept *k,
                      struct user_mount *m, struct rf_error *err)
{
        char uid[16];
        uid_t owner = p->map_as_root ? p->ws_owner_uid : geteuid();
        gid_t group = p->map_as_root ? p->ws_owner_gid : getegid();
        snprintf(uid, sizeof uid, "%u", (unsigned)owner);
        if (!in->state_dir || strchr(k->rel, '/') || k->rel[0] != '.' || !strcmp(k->rel, ".") ||
            !strcmp(k->rel, "..") || strchr(k->profile, '/') || k->profile[0] == '.')
                return rf_error_set(err, -EINVAL, "kept state %s/%s: not a name", k->profile,
                                    k->rel);
        _cleanup_close_ int sd = open(in->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (sd < 0)
                return rf_error_set(err, negative_errno(), "kept state: %s: %m", in->state_dir);
        /* kept/ and kept/UID/ are this process's (0700): no run reaches them */
        _cleanup_close_ int kd = kept_dir(sd, "kept", geteuid(), getegid());
        _cleanup_close_ int ud = kd < 0 ? kd : kept_dir(kd, uid, geteuid(), getegid());
        _cleanup_close_ int pd = ud < 0 ? ud : kept_dir(ud, k->profile, owner, group);
        /* one run at a time keeps a profile's state: another one's
         * files would stand in for this one's, and it would read this
         * one's sessions (the lock lives with the plan: the run's life) */
        if (pd >= 0 && p->n_kept_locks < PLAN_KEPT_MAX) {
                int lk = fcntl(pd, F_DUPFD_CLOEXEC, 3);
                if (lk < 0 || flock(lk, LOCK_EX | LOCK_NB) < 0) {
                        int e = lk < 0 ? negative_errno() : -EBUSY;
                        if (lk >= 0)
                                close(lk);
                        return rf_error_set(err, e,
                                            "kept state of %s: %s (one run at a time keeps a "
                                            "profile's state)",
                                            k->profile,
                                            e == -EBUSY ? "another run keeps it now"
                                                        : strerror(-e));
                }
                p->kept_lock_fds[p->n_kept_locks++] = lk;
        }
        _cleanup_close_ int rd = pd < 0 ? pd : kept_dir(pd, k->rel, owner, group);
        char *src = plan_printf(p, "%s/kept/%s/%s/%s", in->state_dir, uid, k->profile, k->rel);
        if (rd < 0)
                return rf_error_set(err, rd,
                                    "kept state %s: %s (each level a 0700 directory of its "
                                    "owner, no symbolic link)",
                                    src ? src : k->rel, strerror(-rd));
        /* the profiles' own files in it go: they are made anew (or not at
         * all, where the caller has none to copy) */
        size_t rl = strlen(k->rel);
        for (size_t i = 0; i < in->n_home_rels; i++) {
                const char *f = in->home_rels[i];
                if (strncmp(f, k->rel, rl) || f[rl] != '/')
                        continue;
                _cleanup_close_ int dfd = fcntl(rd, F_DUPFD_CLOEXEC, 3);
                for (const char *c = f + rl + 1; dfd >= 0;) {
                        size_t l = strcspn(c, "/");
                        char comp[NAME_MAX + 1];
                        if (l == 0 || l > NAME_MAX)
                                break;
                        memcpy(comp, c, l);
                        comp[l] = '\0';
                        if (!c[l]) {
                                /* a file, or an empty directory the run put
                                 * in its place */
                                if (unlinkat(dfd, comp, 0) < 0 && errno != ENOENT &&
                                    !(errno == EISDIR && unlinkat(dfd, comp, AT_REMOVEDIR) == 0))
                                        return rf_error_set(err, negative_errno(),
                                                            "kept state %s/%s: %m (ringfence "
                                                            "profile forget %s clears it)",
                                                            src, f + rl + 1, k->profile);
                                break;
                        }
                        int nd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        close(dfd);
                        dfd = nd;
                        c += l + 1;
                }
        }
        struct stat st;
        if (!src || fstat(rd, &st) < 0)
                return -ENOMEM;
        *m = (struct user_mount){.kind = OP_BIND,
                                 .step = STEP_BINDS,
                                 .path = plan_printf(p, "%s/%s", p->home, k->rel),
                                 .src = src,
                                 .mode = S_IFDIR,
                                 .dev = st.st_dev,
                                 .ino = st.st_ino,
                                 .flags = OPF_VERIFY | (p->map_as_root ? OPF_IDMAP : 0)};
        return m->path ? 0 : -ENOMEM;
}

/* An OCI bundle's mount (plan_mount): a tmpfs, or a host path the engine
 * named (a volume, .containerenv), not the agent, bound with the owners
 * runc would show. runc without a user namespace shows host uid N as uid N
 * and writes as the container's uid; a root run gives the container a
 * host uid of its own, so the bind is idmapped through the run's user
 * namespace (OPF_IDMAP, as the workspace): the container's uid and gid on
 * disk (0 for a root container) are its own inside and what it creates
 * lands as them, other owners are nobody (the namespace maps one id). A
 * source that cannot be idmapped fails the run (OPF_VOLUME: the line names
 * the mount). With the engine's own id mapping (host_ids: runc's user
 * namespace) or rootless, binds are as they are, as under runc. The run's
 * seccomp filter refuses setuid and setgid bits, and it has no capability:
 * a root container cannot leave a setuid-root file on the host. */
static int oci_mount(struct rf_plan *p, const struct plan_input *in, const struct plan_mount *pm,
                     struct user_mount *m, struct rf_error *err)
{
        char buf[PATH_MAX];
        struct stat st;

        if (!p->rootfs || pm->dst[0] != '/' || !pm->dst[1])
                return rf_error_set(err, -EINVAL, "mount %s: only beneath a container's root",
                                    pm->dst);
        if (!pm->src) {
                /* never size=0, which is tmpfs for "no limit" */
                *m = (struct user_mount){.kind = OP_TMPFS,
                                         .step = STEP_BINDS,
                                         .path = plan_strdup(p, pm->dst),
                                         .size = pm->size ? pm->size : PLAN_MOUNT_TMPFS_DEFAULT,
                                         .mode = pm->mode & 07777};
                return m->path ? 0 : -ENOMEM;
        }
        if (!realpath(pm->src, buf) || stat(buf, &st) < 0)
                return rf_error_set(err, negative_errno(), "mount %s: its source %s: %s", pm->dst,
                                    pm->src, strerror(errno));
        if (in->state_dir &&
            (path_is_beneath(buf, in->state_dir) || path_is_beneath(in->state_dir, buf)))
                return rf_error_set(err, -EPERM,
                                    "mount %s: its source %s would expose ringfence "
                                    "state (%s)",
                                    pm->dst, buf, in->state_dir);
        if (path_is_beneath(buf, "/proc") || path_is_beneath(buf, "/sys") ||
            path_is_beneath(buf, "/dev") || !strcmp(buf, "/"))
                return rf_error_set(err, -EINVAL,
                                    "mount %s: its source %s: the host's root and pseudo "
                                    "filesystems are never bound",
                                    pm->dst, buf);
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
                return rf_error_set(err, -EINVAL,
                                    "mount %s: its source %s: not a directory or regular file",
                                    pm->dst, buf);
        *m = (struct user_mount){
                .kind = OP_BIND,
                .step = STEP_BINDS,
                .path = plan_strdup(p, pm->dst),
                .src = plan_strdup(p, buf),
                .flags = OPF_VERIFY | (pm->rdonly ? OPF_RDONLY : 0) |
                         (p->map_as_root && !in->host_ids ? OPF_IDMAP | OPF_VOLUME : 0),
                .mode = st.st_mode & S_IFMT,
                .dev = st.st_dev,
                .ino = st.st_ino};
        return m->src && m->path ? 0 : -ENOMEM;
}

/* Namespaced sysctls (plan_sysctl) as the paths init writes: names of
 * [a-z0-9_] words joined by dots, under one of the prefixes the run's own
 * namespaces hold; values printable, one line. */
static int add_sysctl(struct rf_plan *p, const struct plan_input *in, struct rf_error *err)
{
        static const char *const ours[] = {"net.", "kernel.shm", "kernel.msg", "kernel.sem",
                                           "fs.mqueue."};
        if (in->n_sysctl > PLAN_SYSCTL_MAX)
                return rf_error_set(err, -E2BIG, "more than %d sysctls", PLAN_SYSCTL_MAX);
        for (size_t i = 0; i < in->n_sysctl; i++) {
                const char *n = in->sysctl[i].name, *v = in->sysctl[i].value;
                bool known = false;
                for (size_t k = 0; k < ARRAY_SIZE(ours); k++)
                        known |= !strncmp(n, ours[k], strlen(ours[k]));
                size_t len = strlen(n);
                if (!known || len > 128 || strstr(n, "..") || n[len - 1] == '.' ||
                    strspn(n, "abcdefghijklmnopqrstuvwxyz0123456789_.-") != len)
                        return rf_error_set(err, -EPERM,
                                            "sysctl %.130s: only the run's own namespaces' "
                                            "(net.*, kernel.shm*, kernel.msg*, kernel.sem, "
                                            "fs.mqueue.*)",
                                            n);
                for (const char *c = v; *c; c++)
                        if ((unsigned char)*c < 0x20 || *c == 0x7f)
                                return rf_error_set(err, -EINVAL,
                                                    "sysctl %s: a value of one "
                                                    "printable line",
                                                    n);
                if (strlen(v) > 256)
                        return rf_error_set(err, -E2BIG, "sysctl %s: a value too long", n);
                char *path = plan_printf(p, "/proc/sys/%s", n);
                if (!path || !(p->sysctl_value[i] = plan_strdup(p, v)))
                        return -ENOMEM;
                for (char *c = path + 10; *c; c++)
                        if (*c == '.')
                                *c = '/';
                p->sysctl_path[i] = path;
                p->n_sysctl = i + 1;
        }
        return 0;
}

static int add_user_mounts(struct rf_plan *p, const struct plan_input *in, struct rf_error *err)
{
        const struct rf_policy *pol = in->policy;
        size_t n = 0, max = pol->n_read_only + pol->n_read_write + in->n_kept + in->n_mounts + 4;
        _cleanup_free_ struct user_mount *m = calloc(max, sizeof *m);
        int r;

        if (!m)
                return -ENOMEM;
        m[n++] = (struct user_mount){.kind = OP_TMPFS,
                                     .step = STEP_TMP,
                                     .path = "/tmp",
                                     .size = pol->tmp_size,
                                     .mode = 01777};
        m[n++] = (struct user_mount){.kind = OP_TMPFS,
                                     .step = STEP_TMP,
                                     .path = "/var/tmp",
                                     .size = pol->tmp_size,
                                     .mode = 01777};
        if (!p->home_in_workspace)
                m[n++] = (struct user_mount){.kind = OP_TMPFS,
                                             .step = STEP_HOME,
                                             .path = p->home,
                                             .size = pol->home_size,
                                             .mode = 0700};
        for (size_t i = 0; i < pol->n_read_only; i++, n++) {
                m[n] = (struct user_mount){
                        .kind = OP_BIND, .step = STEP_BINDS, .flags = OPF_RDONLY};
                if ((r = resolve_bind(p, in, "read-only path", pol->read_only[i], &m[n], err)) < 0)
                        return r;
        }
        for (size_t i = 0; i < pol->n_read_write; i++, n++) {
                m[n] = (struct user_mount){.kind = OP_BIND, .step = STEP_BINDS};
                if ((r = resolve_bind(p, in, "read-write path", pol->read_write[i], &m[n], err)) <
                    0)
                        return r;
        }
        for (size_t i = 0; !p->home_in_workspace && i < in->n_kept; i++, n++)
                if ((r = kept_mount(p, in, &in->kept[i], &m[n], err)) < 0)
                        return r;
        for (size_t i = 0; i < in->n_mounts && i < PLAN_MOUNTS_MAX; i++, n++)
                if ((r = oci_mount(p, in, &in->mounts[i], &m[n], err)) < 0)
                        return r;
        m[n] = (struct user_mount){.kind = OP_BIND, .step = STEP_WORKSPACE, .path = p->workspace};
        struct stat st;
        if (stat(p->workspace, &st) < 0)
                return rf_error_set(err, negative_errno(), "workspace %s: %s", p->workspace,
                                    strerror(errno));
        /* the directory whose owner the run acts as, and no other: a path
         * swapped since (renameat2 RENAME_EXCHANGE by whoever may write its
         * parent) would lend the run another owner's identity; the child
         * checks the inode it opens against this one (OPF_VERIFY) */
        if (st.st_dev != p->ws_dev || st.st_ino != p->ws_ino)
                return rf_error_set(err, -ESTALE,
                                    "workspace %s: changed while the run was planned (refused)",
                                    p->workspace);
        m[n].mode = S_IFDIR;
        m[n].dev = st.st_dev;
        m[n].ino = st.st_ino;
        m[n].flags = OPF_VERIFY | (p->map_as_root ? OPF_IDMAP : 0);
        n++;
        if ((r = add_protected(p, pol, &m, &n, &max, err)) < 0)
                return r;

        /* Stable sort by path: a parent ("/a") sorts before its children
         * ("/a/b"), so nested mounts stack the right way round. */
        qsort(m, n, sizeof *m, user_mount_cmp);
        for (size_t i = 0; i < n; i++) {
                struct plan_op *op;
                if (!(op = op_add(p, OP_DIR, m[i].step, m[i].path)))
                        return -E2BIG;
                if (m[i].kind == OP_BIND && m[i].mode == S_IFREG)
                        op->kind = OP_FILE, op->mode = 0644; /* mount point for a file */
                if (!(op = op_add(p, m[i].kind, m[i].step, m[i].path)))
                        return -E2BIG;
                op->src = m[i].src ? m[i].src : m[i].path;
                op->flags = m[i].flags;
                op->size = m[i].size;
                op->mode = m[i].mode;
                op->dev = m[i].dev;
                op->ino = m[i].ino;
                op->owner_uid = m[i].owner_uid;
                op->owner_gid = m[i].owner_gid;
        }
        return 0;
}

/* Default memory limit: half of physical memory. */
static uint64_t default_memory_limit(void)
{
        long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
        if (pages <= 0 || size <= 0)
                return 0;
        return (uint64_t)pages * (uint64_t)size / 2;
}

/* ---- environment ---------------------------------------------------------- */

static bool env_value_safe(const char *s)
{
        if (!s || strlen(s) > 64)
                return false;
        for (const char *c = s; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                      (*c >= '0' && *c <= '9') || strchr("._+-@", *c)))
                        return false;
        return true;
}

static int env_set(struct rf_plan *p, size_t *n, const char *name, const char *value)
{
        size_t ln = strlen(name);

        for (size_t i = 0; i < *n; i++)
                if (strncmp(p->envp[i], name, ln) == 0 && p->envp[i][ln] == '=') {
                        p->envp[i] = plan_printf(p, "%s=%s", name, value);
                        return p->envp[i] ? 0 : -ENOMEM;
                }
        if (*n + 1 >= PLAN_ENV_MAX)
                return -E2BIG;
        p->envp[*n] = plan_printf(p, "%s=%s", name, value);
        if (!p->envp[*n])
                return -ENOMEM;
        (*n)++;
        p->envp[*n] = NULL;
        return 0;
}

static int build_env(struct rf_plan *p, const struct plan_input *in)
{
        const struct rf_policy *pol = in->policy;
        size_t n = 0;
        int r;

        p->envp = calloc(PLAN_ENV_MAX + 1, sizeof *p->envp);
        if (!p->envp)
                return -ENOMEM;
        /* Defaults, then the policy's env (which may override any of them),
         * then ringfence's own variables, which nothing overrides. */
        if ((r = env_set(p, &n, "PATH", RF_DEFAULT_PATH)) < 0 ||
            (r = env_set(p, &n, "HOME", p->home)) < 0 ||
            (r = env_set(p, &n, "USER", p->user)) < 0 ||
            (r = env_set(p, &n, "LOGNAME", p->user)) < 0 ||
            (r = env_set(p, &n, "SHELL", "/bin/sh")) < 0 ||
            (r = env_set(p, &n, "TMPDIR", "/tmp")) < 0)
                return r;
        if (env_value_safe(in->term) && (r = env_set(p, &n, "TERM", in->term)) < 0)
                return r;
        if (env_value_safe(in->lang) && (r = env_set(p, &n, "LANG", in->lang)) < 0)
                return r;
        for (size_t i = 0; i < pol->n_env; i++)
                if ((r = env_set(p, &n, pol->env_names[i], pol->env_values[i])) < 0)
                        return r;
        if ((r = env_set(p, &n, "RINGFENCE_RUN_ID", p->run_id)) < 0 ||
            (r = env_set(p, &n, "RINGFENCE_AGENT", pol->agent ? pol->agent : "agent")) < 0)
                return r;
        /* the run's only ways out: its own egress proxy (see src/egress/) */
        static const char *const proxy_env[][2] = {
                {"HTTP_PROXY", "http://" RF_EGRESS_HTTP_ADDR},
                {"HTTPS_PROXY", "http://" RF_EGRESS_HTTP_ADDR},
                {"ALL_PROXY", "socks5h://" RF_EGRESS_SOCKS_ADDR},
                {"http_proxy", "http://" RF_EGRESS_HTTP_ADDR},
                {"https_proxy", "http://" RF_EGRESS_HTTP_ADDR},
                {"all_proxy", "socks5h://" RF_EGRESS_SOCKS_ADDR},
                {"NO_PROXY", "localhost,127.0.0.1,::1"},
                {"no_proxy", "localhost,127.0.0.1,::1"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(proxy_env); i++)
                if ((r = env_set(p, &n, proxy_env[i][0], proxy_env[i][1])) < 0)
                        return r;
        if (in->tls_trust) {
                /* the run's trust (add_tls_trust), for clients that do not
                 * read /etc/ssl/certs by default or bring roots of their
                 * own; Node adds NODE_EXTRA_CA_CERTS to its built-in roots */
                static const char *const bundle_env[] = {
                        "SSL_CERT_FILE",  "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
                        "GIT_SSL_CAINFO", "PIP_CERT",           "AWS_CA_BUNDLE",
                };
                for (size_t i = 0; i < ARRAY_SIZE(bundle_env); i++)
                        if ((r = env_set(p, &n, bundle_env[i], RUN_TLS_BUNDLE)) < 0)
                                return r;
                if ((r = env_set(p, &n, "NODE_EXTRA_CA_CERTS", RUN_TLS_CA)) < 0)
                        return r;
        }
        const char *path = RF_DEFAULT_PATH;
        bool own_path = false;
        for (size_t i = 0; i < pol->n_env; i++)
                if (strcmp(pol->env_names[i], "PATH") == 0) {
                        path = pol->env_values[i];
                        own_path = true;
                }
        if (in->secrets_broker) {
                /* the broker and its client (see add_secret_helper) */
                if ((r = env_set(p, &n, "RINGFENCE_BROKER", BROKER_SOCKET)) < 0)
                        return r;
                if (!own_path) {
                        path = RF_DEFAULT_PATH ":/run/ringfence/bin";
                        if ((r = env_set(p, &n, "PATH", path)) < 0)
                                return r;
                }
        }
        p->path_env = plan_strdup(p, path);
        return p->path_env ? 0 : -ENOMEM;
}

/*
 * Broker deliveries: the `ringfence-secret` client (installed beside the
 * ringfence binary) at /run/ringfence/bin, read-only, when it is there;
 * the socket is also reachable without it (docs/SECRETS.md).
 */
static int add_secret_helper(struct rf_plan *p)
{
        char self[PATH_MAX];
        struct stat st;
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 32);
        if (n <= 0)
                return 0;
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (!slash)
                return 0;
        strcpy(slash + 1, "ringfence-secret");
        if (stat(self, &st) < 0 || !S_ISREG(st.st_mode))
                return 0;
        struct plan_op *op;
        if (!op_add(p, OP_DIR, STEP_SECRETS, "/run/ringfence/bin") ||
            !(op = op_add(p, OP_BIND, STEP_SECRETS, "/run/ringfence/bin/ringfence-secret")))
                return -E2BIG;
        if (!(op->src = plan_strdup(p, self)))
                return -ENOMEM;
        op->flags = OPF_RDONLY | OPF_OPTIONAL;
        op->mode = S_IFREG;
        return 0;
}

/* ---- TLS trust (credential injection over TLS) ---------------------------- */

/* The caller's trust: a bound within PLAN_TLS_FILE_MAX, nothing without
 * tls_trust. */
static int tls_input_check(const struct plan_input *in, struct rf_error *err)
{
        if (!in->tls_trust) {
                if (in->tls_java || in->tls_bound)
                        return rf_error_set(err, -EINVAL,
                                            "TLS trust files without the bundle (internal error)");
                return 0;
        }
        if (!in->tls_bound)
                return rf_error_set(err, -EINVAL, "TLS trust files of no size (internal error)");
        if (in->tls_bound > PLAN_TLS_FILE_MAX)
                return rf_error_set(err, -E2BIG, "the run's TLS trust files exceed %llu bytes",
                                    (unsigned long long)PLAN_TLS_FILE_MAX);
        return 0;
}

/* Bytes a file of `len` takes on a tmpfs (whole pages). */
static uint64_t tmpfs_bytes(size_t len)
{
        return ((uint64_t)len + 4095) & ~(uint64_t)4095;
}

/*
 * Mount the run's file `src` (on the root tmpfs) read-only over `dst` when
 * the run will see the host's `dst` there: the host has a regular file at
 * that very path (no symlink on the way: the child resolves none), and the
 * last mount the plan puts at or above it is a same-path bind of a host
 * directory (/etc/ssl, or a policy path). Anything else — no such file, a
 * symlink, a tmpfs or nothing mounted there — leaves dst as it is: the
 * environment still names the run's files.
 */
static int add_trust_overlay(struct rf_plan *p, const char *src, const char *dst)
{
        char real[PATH_MAX];
        struct stat st;

        if (lstat(dst, &st) < 0 || !S_ISREG(st.st_mode) || !realpath(dst, real) ||
            strcmp(real, dst) != 0)
                return 0;
        for (size_t i = p->n_ops; i-- > 0;) {
                const struct plan_op *m = &p->ops[i];
                if (m->kind == OP_DIR || m->kind == OP_SYMLINK || m->kind == OP_FILE ||
                    !path_is_beneath(dst, m->dst))
                        continue;
                if (m->kind != OP_BIND || (m->flags & OPF_IN_ROOT) || m->mode != S_IFDIR ||
                    !m->src || strcmp(m->src, m->dst) != 0)
                        return 0;
                struct plan_op *op = op_add(p, OP_BIND, STEP_ETC, dst);
                if (!op)
                        return -E2BIG;
                op->src = src;
                op->flags = OPF_IN_ROOT | OPF_RDONLY | OPF_OPTIONAL;
                op->mode = S_IFREG;
                return 0;
        }
        return 0;
}

/*
 * The run's trust (plan_input.tls_*): the files in /run/ringfence (0444,
 * on the root tmpfs, which is read-only once built), then the overlays of
 * the host's bundle and Java store — after the /etc/ssl bind and every
 * policy mount, and after the files they clone. /run/ringfence must be the
 * root tmpfs's own: a policy mount at or above it would take the files
 * somewhere else (onto the host, for a --rw /run), so it is refused.
 */
static int add_tls_trust(struct rf_plan *p, const struct plan_input *in, struct rf_error *err)
{
        int r;

        for (size_t i = 0; i < p->n_ops; i++) {
                const struct plan_op *op = &p->ops[i];
                if ((op->kind == OP_BIND || op->kind == OP_TMPFS) &&
                    path_is_beneath("/run/ringfence", op->dst))
                        return rf_error_set(err, -EPERM,
                                            "%s is mounted at or above /run/ringfence, where the "
                                            "run's TLS trust files go; refusing",
                                            op->dst);
        }
        static const struct {
                const char *path;
                int which;
        } files[] = {
                {RUN_TLS_BUNDLE, TRUST_BUNDLE}, {RUN_TLS_CA, TRUST_CA}, {RUN_TLS_JAVA, TRUST_JAVA}};
        for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
                if (files[i].which == TRUST_JAVA && !in->tls_java)
                        continue;
                struct plan_op *op = op_add(p, OP_FILE, STEP_ETC, files[i].path);
                if (!op)
                        return -E2BIG;
                op->flags = OPF_LATE;
                op->data_len = (size_t)files[i].which;
                op->mode = 0444;
                /* the root tmpfs holds them (launch.c sizes it by this) */
                p->root_extra += tmpfs_bytes(in->tls_bound);
        }
        p->trust_late = true;
        p->trust_bound = in->tls_bound;
        if ((r = add_trust_overlay(p, RUN_TLS_BUNDLE, RF_TLS_HOST_BUNDLE)) < 0 ||
            (in->tls_java && (r = add_trust_overlay(p, RUN_TLS_JAVA, RF_TLS_HOST_JAVA)) < 0))
                return r;
        return 0;
}

static int build_argv(struct rf_plan *p, char *const *argv, struct rf_error *err)
{
        size_t n = 0, bytes = 0;

        while (argv[n]) {
                bytes += strlen(argv[n]) + 1;
                if (++n > PLAN_ARGV_MAX || bytes > PLAN_ARG_BYTES)
                        return rf_error_set(err, -E2BIG, "command line too long");
        }
        if (n == 0)
                return rf_error_set(err, -EINVAL, "no command given");
        p->argv = calloc(n + 1, sizeof *p->argv);
        if (!p->argv)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (!(p->argv[i] = plan_strdup(p, argv[i])))
                        return -ENOMEM;
        return 0;
}

#ifdef RF_TEST_BUILD
/* Test builds only: failure injection and layer switches by step name. */
static void plan_test_switches(struct rf_plan *p)
{
        const char *f = getenv("RINGFENCE_TEST_FAIL"), *s = getenv("RINGFENCE_TEST_SKIP");

        /* An unknown name is an error: a typo must not silently test nothing. */
        if (f && (p->test_fail_step = rf_step_from_name(f)) < 0)
                p->test_switch_error = true;
        /* A comma-separated list: "netns,landlock" leaves out both, for
         * attacks that two layers stop. */
        for (const char *c = s; c && *c;) {
                char name[32];
                size_t n = strcspn(c, ",");
                if (n < sizeof name) {
                        memcpy(name, c, n);
                        name[n] = '\0';
                        int st = rf_step_from_name(name);
                        if (st >= 0)
                                p->test_skip |= 1ULL << st;
                        else
                                p->test_switch_error = true;
                }
                c += n + (c[n] == ',');
        }
}
#endif

/*
 * Who the run is. Rootless: the caller, mapped to itself. As root: the
 * workspace owner's uid/gid inside (so tools that check ownership, like
 * git, are content), mapped to a host uid allocated for this run alone —
 * a namespace escape lands as nobody in particular, never as host root.
 */
/*
 * --rootfs DIR: the run's root is DIR (an image's root filesystem, the
 * lower layer of an overlay, never written: the run's upper layer is its
 * own tmpfs). DIR is named without a symbolic link, is a directory other
 * than the host's root, and holds neither ringfence's state nor the
 * caller's home; its inode is pinned (OPF_VERIFY). The first op.
 */
static int add_rootfs(struct rf_plan *p, const struct plan_input *in, const char *dir,
                      struct rf_error *err)
{
        char canon[PATH_MAX];
        struct stat st;
        int r;

        if (in->pinned)
                return rf_error_set(err, -EPERM,
                                    "rootfs %s: not for a run started through the daemon", dir);
        if (!realpath(dir, canon))
                return rf_error_set(err, negative_errno(), "rootfs %s: %s", dir, strerror(errno));
        if ((r = refuse_symlinks("rootfs", dir, canon, err)) < 0)
                return r;
        if (stat(canon, &st) < 0 || !S_ISDIR(st.st_mode))
                return rf_error_set(err, -ENOTDIR, "rootfs %s: not a directory", canon);
        if (!strcmp(canon, "/"))
                return rf_error_set(err, -EINVAL, "rootfs /: the host's own root is the default");
        if (in->state_dir &&
            (path_is_beneath(in->state_dir, canon) || path_is_beneath(canon, in->state_dir)))
                return rf_error_set(err, -EPERM,
                                    "rootfs %s would expose ringfence state (%s); choose a "
                                    "directory that does not contain it",
                                    canon, in->state_dir);
        /* an image's root is a directory of its own: never the host's
         * system or configuration trees (their owner, root, would be the
         * run's user on the lower layer) nor a pseudo filesystem */
        static const char *const never_above[] = {"/etc",   "/usr", "/var", "/boot", "/root",
                                                  "/home",  "/run", "/bin", "/sbin", "/lib",
                                                  "/lib64", "/srv", "/opt"};
        static const char *const never_below[] = {"/proc", "/sys", "/dev", "/etc", "/boot"};
        for (size_t i = 0; i < ARRAY_SIZE(never_above); i++)
                if (path_is_beneath(never_above[i], canon))
                        return rf_error_set(err, -EPERM,
                                            "rootfs %s is (or holds) the host's %s, not an "
                                            "image's root filesystem",
                                            canon, never_above[i]);
        for (size_t i = 0; i < ARRAY_SIZE(never_below); i++)
                if (path_is_beneath(canon, never_below[i]))
                        return rf_error_set(err, -EPERM,
                                            "rootfs %s is inside the host's %s, not an image's "
                                            "root filesystem",
                                            canon, never_below[i]);
        if (in->host_home && path_is_beneath(in->host_home, canon))
                return rf_error_set(err, -EPERM,
                                    "rootfs %s contains your home directory (%s); an image's "
                                    "root filesystem never does",
                                    canon, in->host_home);
        if (p->n_ops != 0)
                return -EINVAL; /* the root comes first */
        struct plan_op *op = op_add(p, OP_BIND, STEP_ROOTFS, "/");
        if (!op || !(p->rootfs = plan_strdup(p, canon)))
                return -ENOMEM;
        op->src = p->rootfs;
        op->flags = OPF_ROOT | OPF_RDONLY | OPF_VERIFY;
        op->mode = S_IFDIR;
        op->dev = st.st_dev;
        op->ino = st.st_ino;
        /* root runs: the image's owner (root, as a rule) is the run's user
         * on the lower layer, so init may make its mount points and files
         * in the upper one (a copy-up keeps the owner) */
        if (p->map_as_root) {
                op->flags |= OPF_IDMAP_OWNER;
                op->owner_uid = st.st_uid;
                op->owner_gid = st.st_gid;
        }
        return 0;
}

static int plan_identity(struct rf_plan *p, const struct plan_input *in, const struct stat *ws,
                         struct rf_error *err)
{
        int r;

        p->uid_lock_fd = -1;
        p->ws_owner_uid = ws->st_uid;
        p->ws_owner_gid = ws->st_gid;
        bool root = hostuid_root();
        /* an engine's mapping picks an unprivileged host id: never the
         * host's root, never one of ringfence's own allocated run ids (held
         * by their runs' locks); an account or group of the id is refused
         * by hostuid_vet, as for allocated ones */
        bool ours = (uid_t)(in->host_uid - (uid_t)RF_RUN_UID_BASE) < (uid_t)RF_RUN_UID_COUNT ||
                    (gid_t)(in->host_gid - (gid_t)RF_RUN_UID_BASE) < (gid_t)RF_RUN_UID_COUNT;
        if (in->host_ids && (!root || in->host_uid == 0 || in->host_gid == 0 || ours))
                return rf_error_set(err, -EPERM, "an id mapping of its own: %s",
                                    !root  ? "only where ringfence runs as the host's root"
                                    : ours ? "never into ringfence's own run ids"
                                           : "never to the host's root");
        if (root && !(p->test_skip & (1ULL << STEP_IDMAP))) {
                uid_t h = in->host_uid;
                if (!in->host_ids && (r = hostuid_allocate(&h, &p->uid_lock_fd, err)) < 0)
                        return r;
                p->map_as_root = true;
                p->host_uid = h;
                p->host_gid = in->host_ids ? in->host_gid : (gid_t)h;
                p->uid = ws->st_uid;
                p->gid = ws->st_gid;
        } else {
                p->host_uid = p->uid = getuid();
                p->host_gid = p->gid = getgid();
        }
        /* root is "root" whatever the host calls uid 0: no lookup */
        struct passwd *pw = p->uid == 0 ? NULL : getpwuid(p->uid);
        const char *name = p->uid == 0                      ? "root"
                           : pw && passwd_safe(pw->pw_name) ? pw->pw_name
                                                            : "agent";
        p->user = plan_strdup(p, name);
        p->home = p->uid == 0 ? plan_strdup(p, "/root") : plan_printf(p, "/home/%s", name);
        return p->user && p->home ? 0 : -ENOMEM;
}

int plan_build(const struct plan_input *in, struct rf_plan **ret, struct rf_error *err)
{
        const struct rf_policy *pol = in->policy;
        struct rf_plan *p = calloc(1, sizeof *p);
        char buf[PATH_MAX];
        int r;

        if (!p)
                return -ENOMEM;
        p->test_fail_step = -1;
        p->uid_lock_fd = -1;
        p->secrets_fd = -1;
        for (int i = 0; i < PLAN_JOIN_NS; i++)
                p->join_ns[i] = -1;
        p->secrets_files = in->secrets_files;
        p->secrets_broker = in->secrets_broker;
        for (size_t i = 0; i < pol->n_net_publish; i++)
                p->publish_ports[p->n_publish++] = pol->net_publish[i].run_port;
#ifdef RF_TEST_BUILD
        plan_test_switches(p);
        if (p->test_switch_error) {
                r = rf_error_set(err, -EINVAL,
                                 "unknown step in RINGFENCE_TEST_FAIL or RINGFENCE_TEST_SKIP");
                goto fail;
        }
#endif
        if ((r = tls_input_check(in, err)) < 0)
                goto fail;
        if (in->run_id && strlen(in->run_id) == RF_RUN_ID_LEN)
                memcpy(p->run_id, in->run_id, RF_RUN_ID_LEN + 1);
        else if ((r = rf_run_id_new(p->run_id)) < 0)
                goto fail;

        /* Workspace: explicit, or the current directory under the default rules. */
        bool explicit_ws = pol->workspace != NULL;
        const char *ws = explicit_ws ? pol->workspace : in->cwd;
        if (!realpath(ws, buf)) {
                r = rf_error_set(err, negative_errno(), "workspace %s: %s", ws, strerror(errno));
                goto fail;
        }
        struct stat st;
        if (stat(buf, &st) < 0 || !S_ISDIR(st.st_mode)) {
                r = rf_error_set(err, -ENOTDIR, "workspace %s: not a directory", buf);
                goto fail;
        }
        if ((r = plan_check_workspace(buf, explicit_ws, in->host_home, in->state_dir, err)) < 0)
                goto fail;
        if ((r = refuse_symlinks("workspace", ws, buf, err)) < 0)
                goto fail;
        if (in->expect_ws && (st.st_dev != in->expect_ws_dev || st.st_ino != in->expect_ws_ino)) {
                r = rf_error_set(err, -ESTALE,
                                 "workspace %s: not the directory that was checked (it changed "
                                 "since; refused)",
                                 buf);
                goto fail;
        }
        p->ws_dev = st.st_dev;
        p->ws_ino = st.st_ino;
        if ((r = plan_identity(p, in, &st, err)) < 0)
                goto fail;
        /* A workspace that contains the run's home provides it: no private
         * home tmpfs then (it would mean creating directories on the host
         * through the workspace bind); HOME is the home path if it exists
         * there, else the workspace itself. */
        p->home_in_workspace = path_is_beneath(p->home, buf);
        if (p->home_in_workspace && strcmp(p->home, buf) != 0) {
                struct stat hst;
                if (lstat(p->home, &hst) < 0 || !S_ISDIR(hst.st_mode))
                        p->home = plan_strdup(p, buf);
        }
        p->workspace = plan_strdup(p, buf);
        p->cwd = plan_strdup(p, in->cwd_inside && pol->rootfs              ? in->cwd_inside
                                : in->cwd && path_is_beneath(in->cwd, buf) ? in->cwd
                                                                           : buf);
        if (in->hostname && !hostname_valid(in->hostname)) {
                r = rf_error_set(err, -EINVAL,
                                 "host name \"%.64s\": letters, digits, '-' and "
                                 "'.', at most 64 bytes",
                                 in->hostname);
                goto fail;
        }
        p->hostname = plan_strdup(p, in->hostname ? in->hostname : RF_HOSTNAME);
        if (!p->workspace || !p->cwd || !p->hostname) {
                r = -ENOMEM;
                goto fail;
        }

        static const char *const system_entries[] = {"/usr",   "/bin",   "/sbin",  "/lib",
                                                     "/lib32", "/lib64", "/libx32"};
        if (pol->rootfs && (r = add_rootfs(p, in, pol->rootfs, err)) < 0)
                goto fail;
        for (size_t i = 0; !pol->rootfs && i < ARRAY_SIZE(system_entries); i++)
                if ((r = add_system_entry(p, system_entries[i])) < 0) {
                        rf_error_set(err, r, "cannot inspect %s: %s", system_entries[i],
                                     strerror(-r));
                        goto fail;
                }
        if ((r = add_etc(p)) < 0 || (r = add_dev(p, pol->shm_size)) < 0 ||
            (r = add_devices(p, in)) < 0 || (r = add_proc(p)) < 0)
                goto fail;
        if (!op_add(p, OP_DIR, STEP_ROOTFS, "/run")) {
                r = -E2BIG;
                goto fail;
        }
        if ((r = add_user_mounts(p, in, err)) < 0 || (r = add_home_files(p, in, err)) < 0 ||
            (r = add_masked(p, in, err)) < 0)
                goto fail;
        if ((r = build_env(p, in)) < 0 || (r = build_argv(p, in->argv, err)) < 0)
                goto fail;
        if ((r = add_sysctl(p, in, err)) < 0)
                goto fail;
        if (in->seccomp_extra && in->seccomp_extra->filter && in->seccomp_extra->len) {
                size_t bytes = in->seccomp_extra->len * sizeof(struct sock_filter);
                if (!(p->seccomp_extra.filter = malloc(bytes))) {
                        r = -ENOMEM;
                        goto fail;
                }
                memcpy(p->seccomp_extra.filter, in->seccomp_extra->filter, bytes);
                p->seccomp_extra.len = in->seccomp_extra->len;
        }
        if ((in->identity_token || in->secrets_broker || in->tls_trust) &&
            !op_add(p, OP_DIR, STEP_ETC, "/run/ringfence")) {
                r = -E2BIG;
                goto fail;
        }
        if (in->identity_token) {
                char *tok = plan_strdup(p, in->identity_token);
                if ((r = add_file(p, STEP_ETC, "/run/ringfence/identity", tok, 0444)) < 0)
                        goto fail;
        }
        if (in->secrets_broker && (r = add_secret_helper(p)) < 0)
                goto fail;
        if (in->tls_trust && (r = add_tls_trust(p, in, err)) < 0)
                goto fail;
        if ((r = landlock_plan(p, err)) < 0 || (r = seccomp_plan(p, err)) < 0)
                goto fail;
        p->nofile = pol->nofile;
        /* One file cannot fill the disk under the workspace: RLIMIT_FSIZE
         * (SIGXFSZ beyond it), never above what the caller itself has. */
        struct rlimit fs;
        p->fsize = PLAN_DEFAULT_FSIZE;
        if (getrlimit(RLIMIT_FSIZE, &fs) == 0 && fs.rlim_max != RLIM_INFINITY &&
            fs.rlim_max < p->fsize)
                p->fsize = fs.rlim_max;
        /* Limits asked for are required (refused if not enforceable); the
         * defaults bound every run anyway and fall back to rlimits. */
        p->limits.memory = pol->memory ? pol->memory : default_memory_limit();
        p->limits.pids = pol->pids ? pol->pids : PLAN_DEFAULT_PIDS;
        p->limits.cpus_milli = pol->cpus_milli;
        p->limits.required = (pol->memory ? CGROUP_REQ_MEMORY : 0) |
                             (pol->pids ? CGROUP_REQ_PIDS : 0) |
                             (pol->cpus_milli ? CGROUP_REQ_CPU : 0);
        p->use_pty = in->use_pty;
        p->capture = capture_wanted(pol);
        if (p->capture && (r = capture_rules_build(pol, &p->capture_rules, &p->capture_rules_len,
                                                   &p->capture_n_rules)) < 0) {
                rf_error_set(err, r, "cannot plan the run's capture rules: %s", strerror(-r));
                goto fail;
        }
        *ret = p;
        return 0;
fail:
        if (r == -E2BIG && !err->msg[0])
                rf_error_set(err, r, "too many paths in the policy");
        if (!err->msg[0])
                rf_error_set(err, r, "cannot plan the run: %s", strerror(-r));
        plan_cleanup(p);
        plan_free(p);
        return r;
}
