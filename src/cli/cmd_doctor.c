/*
 * cmd_doctor.c — `ringfence doctor [--json] [--state-dir DIR] [--workspace
 * DIR]`: will runs work on this host, and if not, exactly what to change.
 *
 * Design: a table of checks, each a function filling one result (status,
 * what was seen, the fix), run in order as the caller (never elevated).
 * The probes are the ones a run itself depends on, made the way a run
 * makes them: a forked child that unshares each namespace
 * (sandbox_diagnose_clone), a child that installs a seccomp filter, the
 * Landlock ABI (landlock_plan), a cgroup created and removed beneath our
 * own (cgroup_create, as `version --layers` does), the state dir resolved
 * as `run` would (created nowhere), the workspace's filesystem idmapped
 * for real where a run would idmap it (root: a detached clone, never
 * attached, through sandbox_idmap_probe — the run's own code), the
 * resolver the egress process reads, and the IA-32 `int $0x80` entry in
 * a child (some hypervisors fault on it: only a note). A failed check
 * means a run would be refused; "note" and "warn" never change the exit
 * status. Exit 0 when runs will work, 1 otherwise, 2 for usage errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <linux/filter.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "egress/egress.h"
#include "sandbox/capture.h"
#include "sandbox/cgroup.h"
#include "sandbox/hostuid.h"
#include "sandbox/landlock.h"
#include "sandbox/launch.h"
#include "sandbox/plan.h"
#include "sandbox/steps.h"
#include "shared/json.h"
#include "shared/macro.h"
#include "tls/tls-load.h"

enum status { ST_OK, ST_NOTE, ST_WARN, ST_FAIL };
static const char *const status_name[] = {"ok", "note", "warn", "fail"};

struct result {
        enum status st;
        char detail[512];
        char fix[512];
};

struct doctor {
        const char *state_flag; /* --state-dir, or NULL */
        const char *workspace;  /* --workspace, or NULL: the current directory */
};

static void set(struct result *r, enum status st, const char *fix, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void set(struct result *r, enum status st, const char *fix, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->detail, sizeof r->detail, fmt, ap);
        va_end(ap);
        snprintf(r->fix, sizeof r->fix, "%s", fix ? fix : "");
        r->st = st;
}

/* The first line of a small /proc or /sys file into buf; false if unreadable. */
static bool read_line(const char *path, char *buf, size_t size)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 || size == 0)
                return false;
        ssize_t n = read(fd, buf, size - 1);
        if (n < 0)
                return false;
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        return true;
}

static long read_long(const char *path, long dflt)
{
        char b[32];
        if (!read_line(path, b, sizeof b))
                return dflt;
        char *end = NULL;
        long v = strtol(b, &end, 10);
        return end && end != b ? v : dflt;
}

/* ---- the checks -------------------------------------------------------------------- */

static void check_userns(const struct doctor *d, struct result *r)
{
        (void)d;
        int e = 0;
        int step = sandbox_diagnose_clone(&e);
        if (!e) {
                set(r, ST_OK, NULL,
                    "user, mount, pid, net, ipc, uts and cgroup namespaces can be created");
                return;
        }
        const char *fix = "enable unprivileged user namespaces for ringfence";
        long clone = read_long("/proc/sys/kernel/unprivileged_userns_clone", -1);
        long maxns = read_long("/proc/sys/user/max_user_namespaces", -1);
        long aa = read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", -1);
        if (maxns == 0)
                fix = "sysctl -w user.max_user_namespaces=15000 (and in /etc/sysctl.d/ to keep it)";
        else if (clone == 0 && getuid() != 0)
                fix = "sysctl -w kernel.unprivileged_userns_clone=1 (and in /etc/sysctl.d/)";
        else if (aa == 1 && getuid() != 0)
                fix = "load ringfence's AppArmor profile (apparmor_parser -r "
                      "/etc/apparmor.d/ringfence; the Debian package installs it), or sysctl -w "
                      "kernel.apparmor_restrict_unprivileged_userns=0";
        else if (e == EPERM || e == ENOSPC)
                fix = "run outside a sandbox or container that forbids new namespaces (seccomp, "
                      "a nested user namespace limit), or as a user allowed to create them";
        set(r, ST_FAIL, fix, "%s (%s) cannot be created: %s", rf_step_what(step),
            rf_step_name(step), strerror(e));
}

static void check_apparmor(const struct doctor *d, struct result *r)
{
        (void)d;
        char en[8] = "";
        long aa = read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", -1);
        if (!read_line("/sys/module/apparmor/parameters/enabled", en, sizeof en) || en[0] != 'Y') {
                set(r, ST_NOTE, NULL, "AppArmor is not enabled: nothing of it applies");
                return;
        }
        bool loaded = false;
        FILE *f = fopen("/sys/kernel/security/apparmor/profiles", "re");
        if (f) {
                char line[512];
                while (!loaded && fgets(line, sizeof line, f))
                        loaded = !strncmp(line, "ringfence ", 10);
                fclose(f);
        } else if (aa == 1) {
                /* the kernel lists loaded profiles to root only: as a user,
                 * whether the restriction bites is told by trying */
                int e = 0;
                (void)sandbox_diagnose_clone(&e);
                if (!e) {
                        set(r, ST_NOTE, NULL,
                            "AppArmor restricts unprivileged user namespaces; ringfence may "
                            "create them here (its profile, or another rule, allows it; the "
                            "list of loaded profiles is root's to read)");
                        return;
                }
        }
        if (aa == 1 && !loaded)
                set(r, getuid() == 0 ? ST_NOTE : ST_WARN,
                    "apparmor_parser -r /etc/apparmor.d/ringfence (installed by the Debian "
                    "package)",
                    "AppArmor restricts unprivileged user namespaces "
                    "(kernel.apparmor_restrict_unprivileged_userns=1) and ringfence's profile is "
                    "not loaded%s",
                    getuid() == 0 ? " (root is not restricted)" : "");
        else
                set(r, ST_NOTE, NULL, "AppArmor is enabled%s%s",
                    aa == 1 ? "; it restricts unprivileged user namespaces" : "",
                    loaded ? "; ringfence's profile is loaded" : "");
}

static void check_landlock(const struct doctor *d, struct result *r)
{
        (void)d;
        static struct rf_plan p; /* large: not on the stack */
        struct rf_error err = {0};
        char lsm[256] = "";
        (void)read_line("/sys/kernel/security/lsm", lsm, sizeof lsm);
        if (landlock_plan(&p, &err) < 0) {
                set(r, ST_FAIL,
                    "boot with Landlock among the LSMs (lsm=...,landlock on the kernel command "
                    "line; kernel 5.13 or later with CONFIG_SECURITY_LANDLOCK)",
                    "Landlock is unavailable: %s%s%s", err.msg, lsm[0] ? " (lsm=" : "",
                    lsm[0] ? lsm : "");
                if (lsm[0])
                        strncat(r->detail, ")", sizeof r->detail - strlen(r->detail) - 1);
                return;
        }
        set(r, ST_OK, NULL, "Landlock ABI %d (ringfence applies %d)", p.landlock.abi_kernel,
            p.landlock.abi);
}

static void check_seccomp(const struct doctor *d, struct result *r)
{
        (void)d;
        /* a child installs an allow-everything filter, as init installs its own */
        pid_t pid = fork();
        if (pid == 0) {
                struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
                struct sock_fprog prog = {.len = 1, .filter = &allow};
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
                        _exit(errno & 0x7f);
                _exit(0);
        }
        int status = 0;
        if (pid < 0 || RETRY_EINTR(waitpid(pid, &status, 0)) != pid) {
                set(r, ST_FAIL, NULL, "cannot fork the probe: %m");
                return;
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                set(r, ST_OK, NULL, "seccomp filters can be installed");
        else
                set(r, ST_FAIL, "a kernel with CONFIG_SECCOMP_FILTER",
                    "seccomp filters cannot be installed: %s",
                    WIFEXITED(status) ? strerror(WEXITSTATUS(status)) : "the probe died");
}

static void check_cgroup(const struct doctor *d, struct result *r)
{
        (void)d;
        struct rf_error err = {0};
        struct rf_cgroup *cg = NULL;
        struct rf_limits lim = {0};
        char id[RF_RUN_ID_LEN + 1];
        if (rf_run_id_new(id) == 0 && cgroup_create(id, &lim, &cg, &err) == 0) {
                enum cgroup_mode m = cgroup_get_mode(cg);
                if (m == CGROUP_NONE) {
                        cgroup_destroy(cg);
                        set(r, ST_WARN,
                            "give ringfence a cgroup v2 subtree it may write (systemd: a unit or "
                            "scope with Delegate=yes, e.g. systemd-run --user --scope -p "
                            "Delegate=yes ringfence ...)",
                            "no cgroup this user may create: runs work, but without memory, "
                            "pids or CPU limits, accounting or cgroup.kill");
                        return;
                }
                set(r, m == CGROUP_V2 ? ST_OK : ST_NOTE, NULL, "cgroup %s%s", cgroup_mode_name(m),
                    m == CGROUP_V2 ? " (delegated: kill, accounting and limits)"
                    : m == CGROUP_HYBRID
                            ? " (v2 for kill and accounting, v1 controllers for limits)"
                            : " (the v1 fallback)");
                cgroup_destroy(cg);
                return;
        }
        set(r, ST_FAIL,
            "give ringfence a cgroup v2 subtree it may write (systemd: run it in a unit or "
            "scope with Delegate=yes, e.g. systemd-run --user --scope -p Delegate=yes ringfence "
            "...; or set a delegated root in the daemon's config)",
            "no cgroup beneath this process's own can be created: %s", err.msg);
}

/* the probe's exit status when it could not even make its namespaces */
#define NO_NAMESPACE 100

static void check_nftables(const struct doctor *d, struct result *r)
{
        (void)d;
        /* a child installs the capture ruleset a run with an allow rule
         * gets, in a network namespace of its own (its own user namespace
         * too, so this works unprivileged as it does for a run) */
        static struct rf_plan p; /* large: not on the stack; no rule of a policy */
        pid_t pid = fork();
        if (pid == 0) {
                bool v6 = false;
                if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
                        _exit(NO_NAMESPACE);
                /* loopback up first, as init brings it up before capture */
                struct ifreq ifr = {0};
                int s4 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
                snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
                if (s4 < 0 || ioctl(s4, SIOCGIFFLAGS, &ifr) < 0)
                        _exit(errno & 0x7f);
                ifr.ifr_flags |= IFF_UP;
                if (ioctl(s4, SIOCSIFFLAGS, &ifr) < 0)
                        _exit(errno & 0x7f);
                int e = capture_install(&p, false, false, &v6);
                _exit(e < 0 ? -e & 0x7f : 0);
        }
        int status = 0;
        if (pid < 0 || RETRY_EINTR(waitpid(pid, &status, 0)) != pid) {
                set(r, ST_FAIL, NULL, "cannot fork the probe: %m");
                return;
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == NO_NAMESPACE)
                set(r, ST_NOTE, NULL,
                    "not checked: no network namespace can be made here (see user_namespaces)");
        else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                set(r, ST_OK, NULL,
                    "nftables with NAT: runs with an allow rule get transparent capture");
        else
                set(r, ST_FAIL,
                    "a kernel with nf_tables, nft_nat and nft_redir (modprobe nf_tables nft_nat "
                    "nft_redir nft_fib_inet nfnetlink_log)",
                    "the capture ruleset cannot be installed in a new network namespace: %s "
                    "(runs with an allow rule would be refused)",
                    WIFEXITED(status) ? strerror(WEXITSTATUS(status)) : "the probe died");
}

static void check_state_dir(const struct doctor *d, struct result *r)
{
        struct rf_error err = {0};
        _cleanup_free_ char *dir = NULL;
        struct stat st;
        if (cli_state_dir_path(d->state_flag, &dir, &err) < 0) {
                set(r, ST_FAIL, "pass --state-dir DIR (or RINGFENCE_STATE_DIR)", "%s", err.msg);
                return;
        }
        if (stat(dir, &st) < 0) {
                /* `run` creates it (and its missing parents, 0700): the
                 * nearest existing parent must take a new directory */
                char parent[PATH_MAX];
                snprintf(parent, sizeof parent, "%s", dir);
                char *slash;
                while ((slash = strrchr(parent, '/')) && slash != parent) {
                        *slash = '\0';
                        if (stat(parent, &st) == 0)
                                break;
                }
                if (slash == parent)
                        strcpy(parent, "/");
                if (access(parent, W_OK | X_OK) == 0)
                        set(r, ST_OK, NULL, "%s (made at the first run, mode 0700)", dir);
                else
                        set(r, ST_FAIL, "pass --state-dir DIR naming a directory you may create",
                            "%s does not exist and %s does not take a new directory: %m", dir,
                            parent);
                return;
        }
        if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
                set(r, ST_FAIL, "use a state dir you own (--state-dir DIR)", "%s is %s", dir,
                    S_ISDIR(st.st_mode) ? "owned by another user" : "not a directory");
        else if (st.st_mode & 077)
                set(r, ST_WARN, "chmod 0700 the directory", "%s is open to others (mode %04o)", dir,
                    (unsigned)(st.st_mode & 07777));
        else
                set(r, ST_OK, NULL, "%s", dir);
}

/* A mountinfo path field (spaces, tabs, newlines and backslashes as \ooo)
 * of n bytes, decoded into out (size PATH_MAX); false if too long. */
static bool mountinfo_path(const char *f, size_t n, char *out)
{
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                if (k + 1 >= PATH_MAX)
                        return false;
                if (f[i] == '\\' && i + 3 < n && f[i + 1] >= '0' && f[i + 1] <= '3' &&
                    f[i + 2] >= '0' && f[i + 2] <= '7' && f[i + 3] >= '0' && f[i + 3] <= '7') {
                        out[k++] = (char)((f[i + 1] - '0') << 6 | (f[i + 2] - '0') << 3 |
                                          (f[i + 3] - '0'));
                        i += 3;
                } else
                        out[k++] = f[i];
        }
        out[k] = '\0';
        return true;
}

/* What /proc/self/mountinfo says of the tree at `path` (canonical), whose
 * stat is `st`: the type of its filesystem as the kernel names it
 * ("ramfs", "fuse.sshfs": the topmost mount of its device; else the statfs
 * magic number) into type, and how many mounts lie beneath it (a run's
 * workspace clone takes them along, each to be idmapped). */
static unsigned fs_describe(const char *path, const struct stat *st, long magic, char *type,
                            size_t len)
{
        unsigned beneath = 0;
        size_t plen = strlen(path);
        snprintf(type, len, "type 0x%lx", (unsigned long)magic);
        FILE *f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return 0;
        _cleanup_free_ char *line = NULL, *mp = malloc(PATH_MAX);
        size_t cap = 0;
        while (mp && getline(&line, &cap, f) > 0) {
                unsigned maj, min;
                int at = -1;
                const char *sep = strstr(line, " - ");
                if (!sep || sscanf(line, "%*s %*s %u:%u %*s %n", &maj, &min, &at) != 2 || at < 0)
                        continue;
                size_t n = strcspn(line + at, " \n");
                if (mountinfo_path(line + at, n, mp) && plen > 0 && !strncmp(mp, path, plen) &&
                    (mp[plen] == '/' || (plen == 1 && mp[1])))
                        beneath++;
                n = strcspn(sep + 3, " \n");
                if (maj == major(st->st_dev) && min == minor(st->st_dev) && n > 0 && n < len)
                        snprintf(type, len, "%.*s", (int)n, sep + 3); /* the last: topmost */
        }
        fclose(f);
        return beneath;
}

static void check_workspace(const struct doctor *d, struct result *r)
{
        const char *ws = d->workspace ? d->workspace : ".";
        char canon[PATH_MAX], type[64];
        struct stat st;
        struct statfs sf;
        if (!realpath(ws, canon) || stat(canon, &st) < 0) {
                set(r, ST_FAIL,
                    "pass --workspace DIR naming an existing directory (a run's is "
                    "the current directory unless --workspace names one)",
                    "workspace %s: %m", ws);
                return;
        }
        if (!S_ISDIR(st.st_mode)) {
                set(r, ST_FAIL, "pass --workspace DIR naming a directory",
                    "workspace %s: not a directory", canon);
                return;
        }
        if (statfs(canon, &sf) < 0)
                sf.f_type = 0;
        unsigned beneath = fs_describe(canon, &st, (long)sf.f_type, type, sizeof type);
        /* the run's own decision (plan.c plan_identity): only host root's
         * runs are idmapped — the workspace owner shown as the run's own
         * user, an allocated unprivileged host uid */
        if (!hostuid_root()) {
                set(r, ST_NOTE, NULL,
                    "does not apply: runs started by this user do not idmap the workspace (%s, "
                    "%s); root-started and daemon runs do (check it with ringfence doctor as "
                    "root)",
                    canon, type);
                return;
        }
        int e = sandbox_idmap_probe(canon, (uid_t)RF_RUN_UID_BASE, (gid_t)RF_RUN_UID_BASE);
        if (e == 0)
                set(r, ST_OK, NULL, "%s (%s) can be idmapped to a run's uid", canon, type);
        else if (e == -EINVAL)
                set(r, ST_FAIL,
                    "put the workspace on a filesystem that supports idmapped mounts (ext4, xfs, "
                    "btrfs, tmpfs on Linux 6.3 or later, ...) and pass it with --workspace DIR, "
                    "or run ringfence as an ordinary user (rootless runs are not idmapped)",
                    "%s: its filesystem (%s)%s cannot be idmapped: root-started runs there "
                    "would be refused",
                    canon, type, beneath ? " or one of those mounted beneath it" : "");
        else
                set(r, ST_FAIL,
                    "put the workspace on a local filesystem that supports idmapped mounts "
                    "(ext4, xfs, btrfs, tmpfs) and pass it with --workspace DIR",
                    "%s (%s) cannot be cloned and idmapped: %s: root-started runs there would "
                    "be refused",
                    canon, type, strerror(-e));
}

static void check_resolver(const struct doctor *d, struct result *r)
{
        (void)d;
        char buf[8192];
        _cleanup_close_ int fd = open("/etc/resolv.conf", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (n < 0) {
                set(r, ST_WARN,
                    "create /etc/resolv.conf with a nameserver line (the egress process resolves "
                    "allowed names with it)",
                    "/etc/resolv.conf cannot be read: %m");
                return;
        }
        struct sockaddr_storage ns[EGRESS_NS_MAX];
        socklen_t ns_len[EGRESS_NS_MAX];
        size_t k = resolv_conf_parse(buf, (size_t)n, ns, ns_len);
        if (k == 0)
                set(r, ST_WARN, "add a nameserver line to /etc/resolv.conf",
                    "/etc/resolv.conf names no nameserver: allowed names will not resolve");
        else
                set(r, ST_OK, NULL, "%zu nameserver%s in /etc/resolv.conf", k, k == 1 ? "" : "s");
}

static void check_tls_module(const struct doctor *d, struct result *r)
{
        (void)d;
        char path[256] = "ringfence-tls.so";
        int e = rf_tls_module_check(path, sizeof path);
        if (e == 0)
                set(r, ST_OK, NULL, "%s (credential injection over HTTPS, HTTP rules)", path);
        else
                set(r, ST_WARN,
                    "install ringfence-tls.so beside ringfence (make install; the Debian package "
                    "does); runs without --inject or HTTP rules do not need it",
                    "the TLS module %s: %s", path, rf_tls_file_why(e));
}

static void check_int80(const struct doctor *d, struct result *r)
{
        (void)d;
#if defined(__x86_64__)
        pid_t pid = fork();
        if (pid == 0) {
                long ret = 20; /* i386 getpid */
                __asm__ volatile("int $0x80" : "+a"(ret) : : "memory");
                _exit(ret > 0 ? 0 : 1);
        }
        int status = 0;
        if (pid < 0 || RETRY_EINTR(waitpid(pid, &status, 0)) != pid) {
                set(r, ST_NOTE, NULL, "cannot fork the probe: %m");
                return;
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                set(r, ST_OK, NULL,
                    "the IA-32 entry works (runs refuse it: the seccomp filter kills i386 calls)");
        else
                set(r, ST_NOTE, NULL,
                    "the IA-32 int $0x80 entry fails here (%s; some hypervisors fault on "
                    "it, and a run's filter refuses it); runs are unaffected",
                    WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "fails");
#else
        set(r, ST_NOTE, NULL, "not an x86_64 host: no IA-32 entry to check");
#endif
}

static const struct {
        const char *name;
        void (*fn)(const struct doctor *, struct result *);
} checks[] = {
        {"user_namespaces", check_userns},
        {"apparmor", check_apparmor},
        {"landlock", check_landlock},
        {"seccomp", check_seccomp},
        {"cgroups", check_cgroup},
        {"nftables", check_nftables},
        {"state_dir", check_state_dir},
        {"workspace_idmap", check_workspace},
        {"resolver", check_resolver},
        {"tls_module", check_tls_module},
        {"int80", check_int80},
};

static void doctor_usage(FILE *f)
{
        fputs("Usage: ringfence doctor [--json] [--state-dir DIR] [--workspace DIR]\n"
              "\n"
              "Check that runs will work on this host, as the calling user, and say what to\n"
              "change where they would not. Exit 0 when they will, 1 when not.\n"
              "\n"
              "  --json           {\"checks\": [{\"name\", \"status\", \"detail\", \"fix\"}]}\n"
              "  --state-dir DIR  the state dir to check (else as `run` would pick it)\n"
              "  --workspace DIR  the workspace whose filesystem to check (default: the\n"
              "                   current directory, as for `run`)\n",
              f);
}

/* "key":"value" into b; a value that is not UTF-8 (a path's bytes) has
 * its non-ASCII bytes shown as '?'. */
static void json_member(struct json_buf *b, const char *key, const char *v, bool comma)
{
        char safe[sizeof((struct result *)0)->detail];
        size_t n = strlen(v);
        if (!json_utf8_valid(v, n, NULL)) {
                n = n < sizeof safe ? n : sizeof safe - 1;
                for (size_t i = 0; i < n; i++)
                        safe[i] = (unsigned char)v[i] < 0x80 ? v[i] : '?';
                v = safe;
        }
        (void)json_buf_append(b, "\"", 1);
        (void)json_buf_append(b, key, strlen(key));
        (void)json_buf_append(b, "\":", 2);
        (void)json_buf_append_string(b, v, n);
        if (comma)
                (void)json_buf_append(b, ",", 1);
}

int cmd_doctor(int argc, char **argv)
{
        static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                             {"state-dir", required_argument, NULL, 's'},
                                             {"workspace", required_argument, NULL, 'w'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
        struct doctor d = {0};
        bool json = false;
        int c;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
                if (c == 'h') {
                        doctor_usage(stdout);
                        return 0;
                }
                if (c == 'j')
                        json = true;
                else if (c == 's')
                        d.state_flag = optarg;
                else if (c == 'w')
                        d.workspace = optarg;
                else {
                        cli_error("doctor: unknown option %s (see ringfence doctor --help)",
                                  argv[optind - 1]);
                        return CLI_EXIT_USAGE;
                }
        }
        if (optind < argc) {
                cli_error("doctor: unexpected argument '%s'", argv[optind]);
                return CLI_EXIT_USAGE;
        }
        bool fail = false;
        struct json_buf b = {0};
        (void)json_buf_append(&b, "{\"checks\":[", 11);
        for (size_t i = 0; i < ARRAY_SIZE(checks); i++) {
                struct result r = {0};
                checks[i].fn(&d, &r);
                fail |= r.st == ST_FAIL;
                if (json) {
                        (void)json_buf_append(&b, i ? ",{" : "{", i ? 2 : 1);
                        json_member(&b, "name", checks[i].name, true);
                        json_member(&b, "status", status_name[r.st], true);
                        json_member(&b, "detail", r.detail, true);
                        json_member(&b, "fix", r.fix, false);
                        (void)json_buf_append(&b, "}", 1);
                        continue;
                }
                printf("%-5s %-16s %s\n", status_name[r.st], checks[i].name, r.detail);
                if (r.fix[0] && r.st != ST_OK)
                        printf("      %-16s fix: %s\n", "", r.fix);
        }
        (void)json_buf_append(&b, "]}\n", 3);
        if (json && (b.error || fwrite(b.data, 1, b.len, stdout) != b.len)) {
                json_buf_done(&b);
                cli_error("doctor: cannot write the report");
                return CLI_EXIT_USAGE;
        }
        json_buf_done(&b);
        if (!json)
                printf("%s\n", fail ? "runs will NOT work here: see the fixes above"
                                    : "runs will work here");
        return fail ? 1 : 0;
}
