/*
 * rf-probe — the attack and probe program the integration tests run inside
 * a ringfence sandbox (and, as a control, outside it).
 *
 * Design: one subcommand per attempt, each doing exactly one thing, directly
 * with the system call that matters (raw syscall() where libc would wrap,
 * retry or hide the attempt). The first line of output is the result:
 *
 *     ok [DATA...]        the attempt succeeded   (exit 0)
 *     errno=ENAME         the kernel said no      (exit 1)
 *
 * A few subcommands print further lines of data after "ok" (env, status,
 * cat, mountinfo). Usage errors print "usage: ..." and exit 2, so a test can
 * tell a broken probe from a refused attack.
 *
 * The tests assert on the errno *name*, because an attack that fails for the
 * wrong reason (a missing file instead of a permission check) proves nothing.
 *
 * Safe when the sandbox fails open. If ringfence were broken and ran the
 * probe on the host (as root), every attempt must still be harmless, so
 * each subcommand is shaped to succeed without damage: `kill` refuses to
 * broadcast anything but signal 0 or SIGWINCH, `ptrace-attach` seizes
 * (does not stop) and detaches, `sethostname` sets the current name again,
 * `rewrite` writes back a file's own bytes, `mount`/`umount` need an
 * explicit target (tests use their own directories), `write` and `create`
 * are only used on fresh unique paths.
 *
 * This program must stay self-contained (no ringfence library): it is copied
 * into each test's workspace and run inside the sandbox, where only the
 * workspace and the system directories are visible.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* How long a network attempt may take before it counts as ETIMEDOUT. */
#define PROBE_NET_TIMEOUT_MS 5000
/* Bytes of a file `read` shows after "ok". */
#define PROBE_READ_SHOW 200
/* Longest a `listen` helper stays alive if nobody kills it. */
#define PROBE_LISTEN_MAX_S 600

/* A global whose address is the same in a forked child (process-vm-read). */
static volatile uint64_t probe_marker = 0x7266706f72626521ULL;

static const char *errno_name(int e)
{
        static char buf[32];
        const char *n = strerrorname_np(e);

        if (n)
                return n;
        snprintf(buf, sizeof buf, "%d", e);
        return buf;
}

/* Report a failed attempt: one line, exit 1. */
static int fail(int e)
{
        printf("errno=%s\n", errno_name(e));
        fflush(stdout);
        return 1;
}

static int usage(const char *msg)
{
        printf("usage: %s\n", msg);
        return 2;
}

static int parse_int(const char *s, long *out)
{
        char *end;

        errno = 0;
        *out = strtol(s, &end, 10);
        if (errno || end == s || *end)
                return -1;
        return 0;
}

/* Print bytes with anything unprintable shown as '.'. */
static void print_sanitized(const char *buf, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)buf[i];
                putchar(c >= 0x20 && c < 0x7f ? c : '.');
        }
}

/* ---- files ------------------------------------------------------------- */

static int cmd_read(int argc, char **argv)
{
        char buf[PROBE_READ_SHOW];
        ssize_t n;
        int fd;

        if (argc != 1)
                return usage("read PATH");
        fd = (int)syscall(SYS_openat, AT_FDCWD, argv[0], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return fail(errno);
        n = read(fd, buf, sizeof buf);
        if (n < 0)
                return fail(errno);
        close(fd);
        printf("ok ");
        print_sanitized(buf, (size_t)n);
        putchar('\n');
        return 0;
}

/* Whole file after an "ok" line (for /proc/self/mountinfo and friends). */
static int cmd_cat(int argc, char **argv)
{
        char buf[4096];
        ssize_t n;
        int fd;

        if (argc != 1)
                return usage("cat PATH");
        fd = (int)syscall(SYS_openat, AT_FDCWD, argv[0], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return fail(errno);
        printf("ok\n");
        fflush(stdout);
        while ((n = read(fd, buf, sizeof buf)) > 0)
                if (write(STDOUT_FILENO, buf, (size_t)n) != n)
                        return 1;
        close(fd);
        return n < 0 ? 1 : 0;
}

static int cmd_write(int argc, char **argv)
{
        const char *data = argc > 1 ? argv[1] : "rf-probe\n";
        size_t len = strlen(data);
        ssize_t n;
        int fd;

        if (argc < 1 || argc > 2)
                return usage("write PATH [DATA]");
        fd = (int)syscall(SYS_openat, AT_FDCWD, argv[0], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                          0644);
        if (fd < 0)
                return fail(errno);
        n = write(fd, data, len);
        if (n < 0)
                return fail(errno);
        if (close(fd) < 0)
                return fail(errno);
        printf("ok %zd\n", n);
        return 0;
}

/* Create a new file only (O_EXCL): never touches an existing file. */
static int cmd_create(int argc, char **argv)
{
        int fd;

        if (argc != 1)
                return usage("create PATH");
        fd = (int)syscall(SYS_openat, AT_FDCWD, argv[0], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                          0644);
        if (fd < 0)
                return fail(errno);
        close(fd);
        printf("ok\n");
        return 0;
}

/*
 * rewrite PATH: open an existing file for writing (no create, no truncate)
 * and write back its own first bytes — the write permission and read-only
 * mount checks, without changing anything if they pass.
 */
static int cmd_rewrite(int argc, char **argv)
{
        char buf[4096];
        ssize_t n;
        int fd;

        if (argc != 1)
                return usage("rewrite PATH");
        fd = (int)syscall(SYS_openat, AT_FDCWD, argv[0], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return fail(errno);
        n = read(fd, buf, sizeof buf);
        close(fd);
        if (n < 0)
                return fail(errno);
        fd = (int)syscall(SYS_openat, AT_FDCWD, argv[0], O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return fail(errno);
        if (n > 0 && pwrite(fd, buf, (size_t)n, 0) < 0)
                return fail(errno);
        close(fd);
        printf("ok\n");
        return 0;
}

/*
 * catch SIG FILE: create FILE.ready, wait for SIG (at most
 * PROBE_LISTEN_MAX_S s), then write "caught SIG" to FILE and exit 0. The
 * signal-broadcast test uses it on both sides of the sandbox.
 */
static volatile sig_atomic_t probe_caught;

static void on_signal(int sig)
{
        probe_caught = sig;
}

static int cmd_catch(int argc, char **argv)
{
        char path[PATH_MAX];
        struct sigaction sa = {.sa_handler = on_signal};
        sigset_t mask, old;
        long sig;
        int fd;

        if (argc != 2 || parse_int(argv[0], &sig) < 0 || sig <= 0 || sig >= NSIG)
                return usage("catch SIG FILE");
        sigemptyset(&mask);
        sigaddset(&mask, (int)sig);
        sigprocmask(SIG_BLOCK, &mask, &old);
        if (sigaction((int)sig, &sa, NULL) < 0)
                return fail(errno);
        snprintf(path, sizeof path, "%s.ready", argv[1]);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return fail(errno);
        close(fd);
        alarm(PROBE_LISTEN_MAX_S);
        while (!probe_caught)
                sigsuspend(&old);
        fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return fail(errno);
        dprintf(fd, "caught %d\n", (int)probe_caught);
        close(fd);
        printf("ok caught %d\n", (int)probe_caught);
        return 0;
}

static int cmd_mkdir(int argc, char **argv)
{
        if (argc != 1)
                return usage("mkdir PATH");
        if (syscall(SYS_mkdirat, AT_FDCWD, argv[0], 0755) < 0)
                return fail(errno);
        printf("ok\n");
        return 0;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmd_ls(int argc, char **argv)
{
        char *names[4096];
        size_t n = 0;
        struct dirent *de;
        DIR *d;

        if (argc != 1)
                return usage("ls PATH");
        d = opendir(argv[0]);
        if (!d)
                return fail(errno);
        errno = 0;
        while ((de = readdir(d)) && n < sizeof names / sizeof names[0]) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                names[n] = strdup(de->d_name);
                if (!names[n])
                        return fail(ENOMEM);
                n++;
        }
        if (errno)
                return fail(errno);
        closedir(d);
        qsort(names, n, sizeof names[0], cmp_str);
        printf("ok");
        for (size_t i = 0; i < n; i++) {
                printf(" %s", names[i]);
                free(names[i]);
        }
        putchar('\n');
        return 0;
}

static void print_stat(const struct stat *st)
{
        printf("ok mode=%04o type=%s uid=%u gid=%u dev=%u:%u ino=%llu rdev=%u:%u size=%lld\n",
               (unsigned)(st->st_mode & 07777),
               S_ISREG(st->st_mode)    ? "file"
               : S_ISDIR(st->st_mode)  ? "dir"
               : S_ISLNK(st->st_mode)  ? "link"
               : S_ISCHR(st->st_mode)  ? "chr"
               : S_ISBLK(st->st_mode)  ? "blk"
               : S_ISFIFO(st->st_mode) ? "fifo"
               : S_ISSOCK(st->st_mode) ? "sock"
                                       : "other",
               (unsigned)st->st_uid, (unsigned)st->st_gid, major(st->st_dev), minor(st->st_dev),
               (unsigned long long)st->st_ino, major(st->st_rdev), minor(st->st_rdev),
               (long long)st->st_size);
}

static int do_stat(int argc, char **argv, int flags)
{
        struct stat st;

        if (argc != 1)
                return usage("stat|lstat PATH");
        if (syscall(SYS_newfstatat, AT_FDCWD, argv[0], &st, flags) < 0)
                return fail(errno);
        print_stat(&st);
        return 0;
}

static int cmd_stat(int argc, char **argv)
{
        return do_stat(argc, argv, 0);
}

static int cmd_lstat(int argc, char **argv)
{
        return do_stat(argc, argv, AT_SYMLINK_NOFOLLOW);
}

static int cmd_readlink(int argc, char **argv)
{
        char buf[PATH_MAX];
        ssize_t n;

        if (argc != 1)
                return usage("readlink PATH");
        n = syscall(SYS_readlinkat, AT_FDCWD, argv[0], buf, sizeof buf - 1);
        if (n < 0)
                return fail(errno);
        buf[n] = '\0';
        printf("ok %s\n", buf);
        return 0;
}

static int cmd_chmod(int argc, char **argv)
{
        long mode;
        char *end;

        if (argc != 2)
                return usage("chmod PATH OCTAL-MODE");
        mode = strtol(argv[1], &end, 8);
        if (*end || end == argv[1])
                return usage("chmod PATH OCTAL-MODE");
        if (syscall(SYS_fchmodat, AT_FDCWD, argv[0], (mode_t)mode) < 0)
                return fail(errno);
        printf("ok\n");
        return 0;
}

/* ---- processes --------------------------------------------------------- */

/* A child that waits to be probed; killed and reaped by the caller. */
static pid_t spawn_sleeper(void)
{
        pid_t pid = fork();

        if (pid == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                for (;;)
                        pause();
        }
        return pid;
}

static void reap(pid_t pid)
{
        if (pid > 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
        }
}

/* PID argument: a number, "self", or "child" (a forked sleeper). */
static int target_pid(const char *s, pid_t *pid, pid_t *child)
{
        long v;

        *child = -1;
        if (strcmp(s, "self") == 0) {
                *pid = getpid();
                return 0;
        }
        if (strcmp(s, "child") == 0) {
                *child = spawn_sleeper();
                if (*child < 0)
                        return -1;
                *pid = *child;
                return 0;
        }
        if (parse_int(s, &v) < 0)
                return -1;
        *pid = (pid_t)v;
        return 0;
}

static int cmd_kill(int argc, char **argv)
{
        pid_t pid, child;
        long sig;
        int r;

        if (argc != 2 || target_pid(argv[0], &pid, &child) < 0 || parse_int(argv[1], &sig) < 0)
                return usage("kill PID|self|child SIG");
        /* A broadcast (-1) or group kill of a real signal would, outside a
         * sandbox, hit the host: only the harmless ones are allowed. */
        if (pid <= 0 && sig != 0 && sig != SIGWINCH)
                return usage("kill: broadcast/group only with signal 0 or SIGWINCH (28)");
        r = (int)syscall(SYS_kill, pid, (int)sig);
        if (r < 0) {
                int e = errno;
                reap(child);
                return fail(e);
        }
        reap(child);
        printf("ok\n");
        return 0;
}

/*
 * ptrace-attach: PTRACE_SEIZE, which makes the same permission checks as
 * PTRACE_ATTACH (ptrace_may_access, PTRACE_MODE_ATTACH) but does not stop
 * the target; then detach.
 */
static int cmd_ptrace_attach(int argc, char **argv)
{
        pid_t pid, child;

        if (argc != 1 || target_pid(argv[0], &pid, &child) < 0)
                return usage("ptrace-attach PID|child");
        if (syscall(SYS_ptrace, PTRACE_SEIZE, pid, NULL, NULL) < 0) {
                int e = errno;
                reap(child);
                return fail(e);
        }
        /* Detaching a seized, running tracee needs it stopped; interrupt. */
        syscall(SYS_ptrace, PTRACE_INTERRUPT, pid, NULL, NULL);
        waitpid(pid, NULL, __WALL);
        syscall(SYS_ptrace, PTRACE_DETACH, pid, NULL, NULL);
        reap(child);
        printf("ok\n");
        return 0;
}

static int cmd_process_vm_read(int argc, char **argv)
{
        uint64_t val = 0;
        struct iovec local = {&val, sizeof val};
        struct iovec remote = {(void *)&probe_marker, sizeof val};
        pid_t pid, child;
        ssize_t n;

        if (argc != 1 || target_pid(argv[0], &pid, &child) < 0)
                return usage("process-vm-read PID|child");
        n = syscall(SYS_process_vm_readv, pid, &local, 1UL, &remote, 1UL, 0UL);
        if (n < 0) {
                int e = errno;
                reap(child);
                return fail(e);
        }
        reap(child);
        printf("ok %s\n", val == probe_marker ? "marker" : "data");
        return 0;
}

static int cmd_dumpable(int argc, char **argv)
{
        int r = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);

        if (r < 0)
                return fail(errno);
        printf("ok %d\n", r);
        return 0;
}

static int cmd_rlimit_core(int argc, char **argv)
{
        struct rlimit rl;

        if (syscall(SYS_prlimit64, 0, RLIMIT_CORE, NULL, &rl) < 0)
                return fail(errno);
        printf("ok %llu %llu\n", (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
        return 0;
}

/*
 * setsid-check: "ok sid=S pid=P pgid=G leader=0|1 ctty=0|1". getsid() is 0
 * when the session leader lives outside our pid namespace, i.e. we share
 * the host's session. ctty says whether /dev/tty opens (a controlling tty).
 */
static int cmd_setsid_check(int argc, char **argv)
{
        pid_t pid = getpid();
        long sid = syscall(SYS_getsid, 0);
        long pgid = syscall(SYS_getpgid, 0);
        int fd, ctty;

        if (sid < 0)
                return fail(errno);
        fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
        ctty = fd >= 0;
        if (fd >= 0)
                close(fd);
        printf("ok sid=%ld pid=%d pgid=%ld leader=%d ctty=%d\n", sid, (int)pid, pgid, sid == pid,
               ctty);
        return 0;
}

/*
 * tty: "ok name=/dev/pts/N own=0|1 dev=MAJ:MIN": the terminal on fd 0,
 * whether it lives on the devpts instance mounted at /dev/pts here (own=1)
 * rather than on some other devpts (a terminal passed in from outside), and
 * that devpts instance's device number (to compare with the host's).
 */
static int cmd_tty(int argc, char **argv)
{
        struct stat fst, pst;
        char name[PATH_MAX];
        int r;

        if (!isatty(STDIN_FILENO))
                return fail(errno);
        r = ttyname_r(STDIN_FILENO, name, sizeof name);
        if (r)
                snprintf(name, sizeof name, "?(%s)", errno_name(r));
        if (fstat(STDIN_FILENO, &fst) < 0)
                return fail(errno);
        if (stat("/dev/pts", &pst) < 0)
                return fail(errno);
        printf("ok name=%s own=%d dev=%u:%u\n", name, fst.st_dev == pst.st_dev, major(fst.st_dev),
               minor(fst.st_dev));
        return 0;
}

static int cmd_tiocsti(int argc, char **argv)
{
        long fd;
        char c;

        if (argc != 2 || parse_int(argv[0], &fd) < 0 || strlen(argv[1]) != 1)
                return usage("tiocsti FD CHAR");
        c = argv[1][0];
        if (syscall(SYS_ioctl, (int)fd, TIOCSTI, &c) < 0)
                return fail(errno);
        printf("ok\n");
        return 0;
}

/*
 * tty-drain: read whatever is pending on the terminal on fd 0 without
 * waiting (non-canonical, VMIN=0 VTIME=0), print it, restore the settings.
 * The host side of the TIOCSTI test uses it.
 */
static int cmd_tty_drain(int argc, char **argv)
{
        struct termios old, raw;
        char buf[256];
        ssize_t n;

        if (tcgetattr(STDIN_FILENO, &old) < 0)
                return fail(errno);
        raw = old;
        raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        raw.c_cc[VMIN] = 0;
        raw.c_cc[VTIME] = 0;
        if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) < 0)
                return fail(errno);
        n = read(STDIN_FILENO, buf, sizeof buf);
        tcsetattr(STDIN_FILENO, TCSANOW, &old);
        if (n < 0)
                return fail(errno);
        printf("ok [");
        print_sanitized(buf, (size_t)n);
        printf("]\n");
        return 0;
}

/* fds: "ok 0 1 2" — every open fd except the one used to list them. */
static int cmd_fds(int argc, char **argv)
{
        char buf[4096];
        long fds[1024];
        size_t n = 0;
        long self;
        int dfd;

        dfd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/fd",
                           O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return fail(errno);
        self = dfd;
        for (;;) {
                long nread = syscall(SYS_getdents64, dfd, buf, sizeof buf);
                if (nread < 0)
                        return fail(errno);
                if (nread == 0)
                        break;
                for (long off = 0; off < nread;) {
                        struct {
                                uint64_t ino;
                                int64_t off;
                                unsigned short reclen;
                                unsigned char type;
                                char name[];
                        } *d = (void *)(buf + off);
                        long v;
                        if (parse_int(d->name, &v) == 0 && v != self && n < 1024)
                                fds[n++] = v;
                        off += d->reclen;
                }
        }
        close(dfd);
        /* getdents order is not numeric; sort. */
        for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
                        long t = fds[j];
                        fds[j] = fds[j - 1];
                        fds[j - 1] = t;
                }
        printf("ok");
        for (size_t i = 0; i < n; i++)
                printf(" %ld", fds[i]);
        putchar('\n');
        return 0;
}

static int cmd_env(int argc, char **argv)
{
        printf("ok\n");
        for (char **e = environ; *e; e++)
                printf("%s\n", *e);
        return 0;
}

static int cmd_status(int argc, char **argv)
{
        static const char *const keys[] = {
                "Uid:",    "Gid:",    "CapInh:",     "CapPrm:", "CapEff:",
                "CapBnd:", "CapAmb:", "NoNewPrivs:", "Seccomp:"};
        char line[512];
        FILE *f = fopen("/proc/self/status", "re");

        if (!f)
                return fail(errno);
        printf("ok\n");
        while (fgets(line, sizeof line, f))
                for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
                        if (strncmp(line, keys[i], strlen(keys[i])) == 0) {
                                char *p = line + strlen(keys[i]);
                                p += strspn(p, " \t");
                                /* "CapEff: 0000..." -> "CapEff=0000..." */
                                printf("%.*s=%s", (int)strlen(keys[i]) - 1, keys[i], p);
                        }
        fclose(f);
        return 0;
}

static int cmd_id(int argc, char **argv)
{
        printf("ok uid=%ld gid=%ld euid=%ld egid=%ld\n", syscall(SYS_getuid), syscall(SYS_getgid),
               syscall(SYS_geteuid), syscall(SYS_getegid));
        return 0;
}

/* ns PID|self: "ok cgroup=I ipc=I mnt=I net=I pid=I user=I uts=I". */
static int cmd_ns(int argc, char **argv)
{
        static const char *const kinds[] = {"cgroup", "ipc", "mnt", "net", "pid", "user", "uts"};
        char path[128], out[512];
        size_t used = 0;

        if (argc != 1)
                return usage("ns PID|self");
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
                struct stat st;
                snprintf(path, sizeof path, "/proc/%s/ns/%s", argv[0], kinds[i]);
                if (stat(path, &st) < 0)
                        return fail(errno);
                used += (size_t)snprintf(out + used, sizeof out - used, " %s=%llu", kinds[i],
                                         (unsigned long long)st.st_ino);
        }
        printf("ok%s\n", out);
        return 0;
}

/* ---- privilege --------------------------------------------------------- */

static int cmd_mount(int argc, char **argv)
{
        if (argc != 1)
                return usage("mount TARGET (a directory of the test's own)");
        const char *target = argv[0];

        if (syscall(SYS_mount, "tmpfs", target, "tmpfs", 0UL, "size=1m") < 0)
                return fail(errno);
        printf("ok\n");
        return 0;
}

static int cmd_umount(int argc, char **argv)
{
        if (argc != 1)
                return usage("umount PATH");
        if (syscall(SYS_umount2, argv[0], MNT_DETACH) < 0)
                return fail(errno);
        printf("ok\n");
        return 0;
}

static int write_file(const char *path, const char *data)
{
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = write(fd, data, strlen(data));
        if (n < 0) {
                int e = errno;
                close(fd);
                return -e;
        }
        close(fd);
        return 0;
}

/*
 * unshare-user: unshare(CLONE_NEWUSER); then map ourselves to root there;
 * then a new mount namespace and a tmpfs on /tmp. Prints the first step
 * that failed as "errno=E step=S", or "ok nested-root" if all of it worked
 * (capabilities regained — over the nested namespaces only).
 */
static int cmd_unshare_user(int argc, char **argv)
{
        char map[64];
        uid_t uid = (uid_t)syscall(SYS_getuid);
        gid_t gid = (gid_t)syscall(SYS_getgid);
        int r;

        if (syscall(SYS_unshare, CLONE_NEWUSER) < 0) {
                printf("errno=%s step=unshare\n", errno_name(errno));
                return 1;
        }
        write_file("/proc/self/setgroups", "deny");
        snprintf(map, sizeof map, "0 %u 1\n", (unsigned)uid);
        if ((r = write_file("/proc/self/uid_map", map)) < 0) {
                printf("errno=%s step=uid_map\n", errno_name(-r));
                return 1;
        }
        snprintf(map, sizeof map, "0 %u 1\n", (unsigned)gid);
        if ((r = write_file("/proc/self/gid_map", map)) < 0) {
                printf("errno=%s step=gid_map\n", errno_name(-r));
                return 1;
        }
        if (syscall(SYS_unshare, CLONE_NEWNS) < 0) {
                printf("errno=%s step=mountns\n", errno_name(errno));
                return 1;
        }
        if (syscall(SYS_mount, "tmpfs", "/tmp", "tmpfs", 0UL, "size=1m") < 0) {
                printf("errno=%s step=mount\n", errno_name(errno));
                return 1;
        }
        printf("ok nested-root\n");
        return 0;
}

static int cmd_chroot(int argc, char **argv)
{
        if (syscall(SYS_chroot, argc > 0 ? argv[0] : "/") < 0)
                return fail(errno);
        printf("ok\n");
        return 0;
}

/* sethostname to the current name: the permission check without a change. */
static int cmd_sethostname(int argc, char **argv)
{
        struct utsname u;

        if (argc != 0)
                return usage("sethostname (sets the current name again)");
        if (uname(&u) < 0)
                return fail(errno);
        const char *name = u.nodename;
        if (syscall(SYS_sethostname, name, strlen(name)) < 0)
                return fail(errno);
        printf("ok\n");
        return 0;
}

static int cmd_setns(int argc, char **argv)
{
        int fd;

        if (argc != 1)
                return usage("setns NSFILE");
        fd = open(argv[0], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return fail(errno);
        if (syscall(SYS_setns, fd, 0) < 0)
                return fail(errno);
        printf("ok\n");
        return 0;
}

static int cmd_hostname(int argc, char **argv)
{
        struct utsname u;

        if (uname(&u) < 0)
                return fail(errno);
        printf("ok %s\n", u.nodename);
        return 0;
}

static int cmd_cwd(int argc, char **argv)
{
        char buf[PATH_MAX];

        if (syscall(SYS_getcwd, buf, sizeof buf) < 0)
                return fail(errno);
        printf("ok %s\n", buf);
        return 0;
}

/* ---- network ----------------------------------------------------------- */

static int cmd_ifaces(int argc, char **argv)
{
        struct if_nameindex *ifs = if_nameindex();
        int s;

        if (!ifs)
                return fail(errno);
        s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return fail(errno);
        printf("ok");
        for (struct if_nameindex *i = ifs; i->if_index; i++) {
                struct ifreq ifr;
                memset(&ifr, 0, sizeof ifr);
                snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", i->if_name);
                if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
                        printf(" %s:?", i->if_name);
                else
                        printf(" %s:%s", i->if_name, (ifr.ifr_flags & IFF_UP) ? "up" : "down");
        }
        putchar('\n');
        close(s);
        if_freenameindex(ifs);
        return 0;
}

/* Fill a sockaddr for IP (v4 or v6) and PORT. Returns its length or 0. */
static socklen_t make_inet(const char *ip, const char *port, struct sockaddr_storage *ss)
{
        long p;

        memset(ss, 0, sizeof *ss);
        if (parse_int(port, &p) < 0 || p < 0 || p > 65535)
                return 0;
        struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
        if (inet_pton(AF_INET, ip, &in4->sin_addr) == 1) {
                in4->sin_family = AF_INET;
                in4->sin_port = htons((uint16_t)p);
                return sizeof *in4;
        }
        if (inet_pton(AF_INET6, ip, &in6->sin6_addr) == 1) {
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons((uint16_t)p);
                return sizeof *in6;
        }
        return 0;
}

/* "PATH" or "@abstract". */
static socklen_t make_unix(const char *name, struct sockaddr_un *un)
{
        size_t len = strlen(name);

        memset(un, 0, sizeof *un);
        un->sun_family = AF_UNIX;
        if (len == 0 || len >= sizeof un->sun_path)
                return 0;
        memcpy(un->sun_path, name, len);
        if (name[0] == '@')
                un->sun_path[0] = '\0'; /* abstract: no trailing NUL counted */
        else
                len++;
        return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
}

/* Connect with a bound wait; the result is the kernel's answer (SO_ERROR). */
static int connect_wait(int s, const struct sockaddr *sa, socklen_t len)
{
        struct pollfd p = {.fd = s, .events = POLLOUT};
        int err = 0;
        socklen_t el = sizeof err;

        if (syscall(SYS_connect, s, sa, len) == 0)
                return 0;
        if (errno != EINPROGRESS)
                return -errno;
        int r = poll(&p, 1, PROBE_NET_TIMEOUT_MS);
        if (r < 0)
                return -errno;
        if (r == 0)
                return -ETIMEDOUT;
        if (getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
                return -errno;
        return -err;
}

/*
 * dns NAME COUNT [same|distinct] — send COUNT A queries to the resolver in
 * /etc/resolv.conf's place, 127.0.0.1:53 (for NAME each time, or for
 * iN.NAME), one at a time, each waiting for its answer. "ok rcode=R n=N"
 * if all N answers came with the same RCODE (R by name: REFUSED, ...).
 */
static int cmd_dns(int argc, char **argv)
{
        long count;
        bool distinct = argc > 2 && !strcmp(argv[2], "distinct");
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons(53),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int rcode = -1;

        if (argc < 2 || argc > 3 || parse_int(argv[1], &count) < 0 || count < 1 ||
            strlen(argv[0]) > 200)
                return usage("dns NAME COUNT [same|distinct]");
        int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) < 0)
                return fail(errno);
        for (long i = 0; i < count; i++) {
                unsigned char q[300], r[512];
                char name[256];
                size_t n = 12;
                memset(q, 0, 12);
                q[0] = (unsigned char)(i >> 8), q[1] = (unsigned char)i;
                q[2] = 0x01; /* RD */
                q[5] = 1;    /* QDCOUNT */
                if (distinct)
                        snprintf(name, sizeof name, "i%ld.%s", i, argv[0]);
                else
                        snprintf(name, sizeof name, "%s", argv[0]);
                for (char *l = name; *l;) {
                        char *dot = strchr(l, '.');
                        size_t len = dot ? (size_t)(dot - l) : strlen(l);
                        if (len == 0 || len > 63)
                                return usage("dns: bad NAME");
                        q[n++] = (unsigned char)len;
                        memcpy(q + n, l, len);
                        n += len;
                        l += len + (dot ? 1 : 0);
                }
                q[n++] = 0;
                q[n++] = 0, q[n++] = 1; /* A */
                q[n++] = 0, q[n++] = 1; /* IN */
                if (send(s, q, n, 0) != (ssize_t)n)
                        return fail(errno);
                struct pollfd p = {.fd = s, .events = POLLIN};
                int k = poll(&p, 1, PROBE_NET_TIMEOUT_MS);
                if (k == 0)
                        return fail(ETIMEDOUT);
                ssize_t got = recv(s, r, sizeof r, 0);
                if (got < 0)
                        return fail(errno);
                if (got < 12 || r[0] != q[0] || r[1] != q[1] || !(r[2] & 0x80)) {
                        printf("bad answer\n");
                        return 1;
                }
                if (rcode >= 0 && (r[3] & 0x0f) != rcode) {
                        printf("mixed rcodes %d and %d\n", rcode, r[3] & 0x0f);
                        return 1;
                }
                rcode = r[3] & 0x0f;
        }
        static const char *const names[] = {"NOERROR",  "FORMERR", "SERVFAIL",
                                            "NXDOMAIN", "NOTIMP",  "REFUSED"};
        if (rcode >= 0 && rcode < 6)
                printf("ok rcode=%s n=%ld\n", names[rcode], count);
        else
                printf("ok rcode=%d n=%ld\n", rcode, count);
        return 0;
}

static int cmd_tcp_connect(int argc, char **argv)
{
        struct sockaddr_storage ss;
        socklen_t len;
        int s, r;

        if (argc != 2 || !(len = make_inet(argv[0], argv[1], &ss)))
                return usage("tcp-connect IP PORT");
        s = (int)syscall(SYS_socket, ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (s < 0)
                return fail(errno);
        r = connect_wait(s, (struct sockaddr *)&ss, len);
        close(s);
        if (r < 0)
                return fail(-r);
        printf("ok\n");
        return 0;
}

/* http-get IP PORT HOST PATH: one HTTP/1.0 GET (Host: HOST), the answer
 * printed (at most 4 KiB) — a client of our own where an image has none
 * that works (a static busybox's wget cannot resolve or even connect) */
static int cmd_http_get(int argc, char **argv)
{
        struct sockaddr_storage ss;
        socklen_t len;
        char req[600], buf[4097];

        if (argc != 4 || !(len = make_inet(argv[0], argv[1], &ss)) || strlen(argv[2]) > 200 ||
            strlen(argv[3]) > 200)
                return usage("http-get IP PORT HOST PATH");
        int s = (int)syscall(SYS_socket, ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                             0);
        if (s < 0)
                return fail(errno);
        int r = connect_wait(s, (struct sockaddr *)&ss, len);
        if (r < 0) {
                close(s);
                return fail(-r);
        }
        int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", argv[3], argv[2]);
        if (write(s, req, (size_t)n) != n) {
                close(s);
                return fail(errno);
        }
        size_t got = 0;
        while (got < sizeof buf - 1) {
                struct pollfd p = {.fd = s, .events = POLLIN};
                if (poll(&p, 1, PROBE_NET_TIMEOUT_MS) <= 0)
                        break;
                ssize_t k = read(s, buf + got, sizeof buf - 1 - got);
                if (k <= 0)
                        break;
                got += (size_t)k;
        }
        close(s);
        buf[got] = '\0';
        if (!got)
                return fail(ECONNRESET);
        printf("ok %s\n", buf);
        return 0;
}

static int cmd_udp_send(int argc, char **argv)
{
        struct sockaddr_storage ss;
        socklen_t len;
        int s;

        if (argc != 2 || !(len = make_inet(argv[0], argv[1], &ss)))
                return usage("udp-send IP PORT");
        s = (int)syscall(SYS_socket, ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return fail(errno);
        if (syscall(SYS_sendto, s, "rf-probe", 8UL, 0, &ss, len) < 0)
                return fail(errno);
        close(s);
        printf("ok\n");
        return 0;
}

/* udp-freebind SRC-IP SRC-PORT DST-IP DST-PORT: one datagram from a source
 * address the namespace need not own (IP_FREEBIND / IPV6_FREEBIND: no
 * capability needed) — the way a process would forge a flow whose reply
 * direction leads out */
static int cmd_udp_freebind(int argc, char **argv)
{
        struct sockaddr_storage src, dst;
        socklen_t sl, dl;
        int one = 1, s;

        if (argc != 4 || !(sl = make_inet(argv[0], argv[1], &src)) ||
            !(dl = make_inet(argv[2], argv[3], &dst)) || src.ss_family != dst.ss_family)
                return usage("udp-freebind SRC-IP SRC-PORT DST-IP DST-PORT");
        s = (int)syscall(SYS_socket, src.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return fail(errno);
        if ((src.ss_family == AF_INET6
                     ? setsockopt(s, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof one)
                     : setsockopt(s, IPPROTO_IP, IP_FREEBIND, &one, sizeof one)) < 0 ||
            bind(s, (struct sockaddr *)&src, sl) < 0)
                return fail(errno);
        if (syscall(SYS_sendto, s, "rf-probe", 8UL, 0, &dst, dl) < 0)
                return fail(errno);
        close(s);
        printf("ok\n");
        return 0;
}

static int cmd_unix_connect(int argc, char **argv)
{
        struct sockaddr_un un;
        socklen_t len;
        int s, r;

        if (argc != 1 || !(len = make_unix(argv[0], &un)))
                return usage("unix-connect PATH|@NAME");
        s = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (s < 0)
                return fail(errno);
        r = connect_wait(s, (struct sockaddr *)&un, len);
        close(s);
        if (r < 0)
                return fail(-r);
        printf("ok\n");
        return 0;
}

/*
 * listen tcp IP PORT | listen unix PATH|@NAME — a host-side helper for the
 * tests: binds, listens, prints "ok PORT" (the bound port, useful with PORT
 * 0) and then accepts and closes connections until killed (at most
 * PROBE_LISTEN_MAX_S seconds, so a forgotten helper does not live forever).
 */
static int cmd_listen(int argc, char **argv)
{
        struct sockaddr_storage ss;
        socklen_t len;
        int s, port = 0;

        if (argc == 3 && strcmp(argv[0], "tcp") == 0) {
                int one = 1;
                if (!(len = make_inet(argv[1], argv[2], &ss)))
                        return usage("listen tcp IP PORT");
                s = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (s < 0)
                        return fail(errno);
                setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        } else if (argc == 2 && strcmp(argv[0], "unix") == 0) {
                if (!(len = make_unix(argv[1], (struct sockaddr_un *)&ss)))
                        return usage("listen unix PATH|@NAME");
                s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (s < 0)
                        return fail(errno);
        } else {
                return usage("listen tcp IP PORT | listen unix PATH|@NAME");
        }
        if (bind(s, (struct sockaddr *)&ss, len) < 0 || listen(s, 64) < 0)
                return fail(errno);
        if (ss.ss_family != AF_UNIX) {
                struct sockaddr_storage b;
                socklen_t bl = sizeof b;
                if (getsockname(s, (struct sockaddr *)&b, &bl) < 0)
                        return fail(errno);
                port = ntohs(b.ss_family == AF_INET ? ((struct sockaddr_in *)&b)->sin_port
                                                    : ((struct sockaddr_in6 *)&b)->sin6_port);
        }
        printf("ok %d\n", port);
        fflush(stdout);
        alarm(PROBE_LISTEN_MAX_S);
        for (;;) {
                int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
                if (c >= 0)
                        close(c);
        }
}

/* ---- who may write the workspace (harden_workspace.sh) ------------------- */

static int parse_mode(const char *s, mode_t *out)
{
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 8);
        if (errno || end == s || *end || v < 0 || v > 07777)
                return -1;
        *out = (mode_t)v;
        return 0;
}

/* chmod-via chmod|fchmod|proc|fchmodat2 PATH MODE — change a mode with the
 * named call: chmod(2), fchmod(2) on an O_RDONLY fd, chmod(2) of
 * /proc/self/fd/N of an O_PATH fd, or fchmodat2 with AT_SYMLINK_NOFOLLOW. */
static int cmd_chmod_via(int argc, char **argv)
{
        char proc[64];
        mode_t m;
        long r;
        int fd;

        if (argc != 3 || parse_mode(argv[2], &m) < 0)
                return usage("chmod-via chmod|fchmod|proc|fchmodat2 PATH MODE");
        if (strcmp(argv[0], "chmod") == 0) {
                r = syscall(SYS_chmod, argv[1], m);
        } else if (strcmp(argv[0], "fchmodat2") == 0) {
                r = syscall(452 /* fchmodat2 */, AT_FDCWD, argv[1], m, AT_SYMLINK_NOFOLLOW);
        } else if (strcmp(argv[0], "fchmod") == 0 || strcmp(argv[0], "proc") == 0) {
                bool viaproc = argv[0][0] == 'p';
                fd = open(argv[1], (viaproc ? O_PATH : O_RDONLY) | O_CLOEXEC);
                if (fd < 0)
                        return fail(errno);
                snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
                r = viaproc ? syscall(SYS_chmod, proc, m) : syscall(SYS_fchmod, fd, m);
        } else {
                return usage("chmod-via chmod|fchmod|proc|fchmodat2 PATH MODE");
        }
        if (r < 0)
                return fail(errno);
        printf("ok\n");
        return 0;
}

/* umask MASK — the raw umask(2); prints "ok OLD" (octal) or the errno. */
static int cmd_umask(int argc, char **argv)
{
        mode_t m;
        long r;

        if (argc != 1 || parse_mode(argv[0], &m) < 0)
                return usage("umask OCTAL");
        r = syscall(SYS_umask, m);
        if (r < 0)
                return fail(errno);
        printf("ok %04lo\n", r);
        return 0;
}

/* umask-create MASK PATH open|mkdir|tmpfile — set the umask with umask(2)
 * (its answer ignored, as programs do), create PATH with mode 0666/0777 (a
 * file, a directory, or an O_TMPFILE linked at PATH) and print its mode. */
static int cmd_umask_create(int argc, char **argv)
{
        char proc[64];
        struct stat st;
        mode_t m;
        int fd = -1;

        if (argc != 3 || parse_mode(argv[0], &m) < 0)
                return usage("umask-create MASK PATH open|mkdir|tmpfile");
        (void)syscall(SYS_umask, m);
        if (strcmp(argv[2], "open") == 0) {
                fd = open(argv[1], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
        } else if (strcmp(argv[2], "mkdir") == 0) {
                if (mkdir(argv[1], 0777) < 0)
                        return fail(errno);
        } else if (strcmp(argv[2], "tmpfile") == 0) {
                fd = open(".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
                if (fd < 0)
                        return fail(errno);
                snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
                if (linkat(AT_FDCWD, proc, AT_FDCWD, argv[1], AT_SYMLINK_FOLLOW) < 0)
                        return fail(errno);
        } else {
                return usage("umask-create MASK PATH open|mkdir|tmpfile");
        }
        if (strcmp(argv[2], "mkdir") != 0 && fd < 0)
                return fail(errno);
        if (stat(argv[1], &st) < 0)
                return fail(errno);
        printf("ok mode=%04o\n", (unsigned)(st.st_mode & 07777));
        return 0;
}

/* setxattr PATH NAME — set NAME on PATH (no symlink follow for the value's
 * sake: lsetxattr). A system.posix_acl_* name gets an ACL granting others
 * rwx (user::rwx group::r-x other::rwx), any other name the value "1". */
static int cmd_setxattr(int argc, char **argv)
{
        /* struct posix_acl_xattr_header + entries {tag, perm, id} (LE) */
        static const unsigned char acl[] = {
                2,    0, 0, 0,                         /* version 2 */
                0x01, 0, 7, 0, 0xff, 0xff, 0xff, 0xff, /* ACL_USER_OBJ rwx */
                0x04, 0, 5, 0, 0xff, 0xff, 0xff, 0xff, /* ACL_GROUP_OBJ r-x */
                0x20, 0, 7, 0, 0xff, 0xff, 0xff, 0xff, /* ACL_OTHER rwx */
        };
        bool is_acl;

        if (argc != 2)
                return usage("setxattr PATH NAME");
        is_acl = strncmp(argv[1], "system.posix_acl_", 17) == 0;
        if (syscall(SYS_lsetxattr, argv[0], argv[1], is_acl ? (const void *)acl : "1",
                    is_acl ? sizeof acl : (size_t)1, 0) < 0)
                return fail(errno);
        printf("ok\n");
        return 0;
}

/* mknod PATH fifo|sock — the raw mknodat(2), mode 0600. */
static int cmd_mknod(int argc, char **argv)
{
        mode_t type;

        if (argc != 2)
                return usage("mknod PATH fifo|sock");
        if (strcmp(argv[1], "fifo") == 0)
                type = S_IFIFO;
        else if (strcmp(argv[1], "sock") == 0)
                type = S_IFSOCK;
        else
                return usage("mknod PATH fifo|sock");
        if (syscall(SYS_mknodat, AT_FDCWD, argv[0], type | 0600, 0) < 0)
                return fail(errno);
        printf("ok\n");
        return 0;
}

/* unix-bind PATH — bind an AF_UNIX socket to a path (creates the inode). */
static int cmd_unix_bind(int argc, char **argv)
{
        struct sockaddr_un un;
        socklen_t len;
        int s;

        if (argc != 1 || !(len = make_unix(argv[0], &un)))
                return usage("unix-bind PATH");
        if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
                return fail(errno);
        if (bind(s, (struct sockaddr *)&un, len) < 0)
                return fail(errno);
        printf("ok\n");
        return 0;
}

/* fcntl PATH setlease|notify|setlk|getfl — one fcntl(2) on PATH (opened
 * O_RDONLY): a read lease, a dnotify watch (PATH a directory), a read
 * lock, or the status flags. */
static int cmd_fcntl(int argc, char **argv)
{
        struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
        long r;
        int fd;

        if (argc != 2)
                return usage("fcntl PATH setlease|notify|setlk|getfl");
        if ((fd = open(argv[0], O_RDONLY | O_CLOEXEC)) < 0)
                return fail(errno);
        if (strcmp(argv[1], "setlease") == 0)
                r = syscall(SYS_fcntl, fd, F_SETLEASE, F_RDLCK);
        else if (strcmp(argv[1], "notify") == 0)
                r = syscall(SYS_fcntl, fd, F_NOTIFY, DN_CREATE);
        else if (strcmp(argv[1], "setlk") == 0)
                r = syscall(SYS_fcntl, fd, F_SETLK, &fl);
        else if (strcmp(argv[1], "getfl") == 0)
                r = syscall(SYS_fcntl, fd, F_GETFL);
        else
                return usage("fcntl PATH setlease|notify|setlk|getfl");
        if (r < 0)
                return fail(errno);
        printf("ok %ld\n", r);
        return 0;
}

/* ---- dispatch ---------------------------------------------------------- */

static const struct {
        const char *name;
        int (*fn)(int argc, char **argv);
        const char *help;
} commands[] = {
        {"read", cmd_read, "PATH"},
        {"dns", cmd_dns, "NAME COUNT [same|distinct]"},
        {"cat", cmd_cat, "PATH"},
        {"write", cmd_write, "PATH [DATA]"},
        {"create", cmd_create, "PATH"},
        {"rewrite", cmd_rewrite, "PATH"},
        {"catch", cmd_catch, "SIG FILE"},
        {"mkdir", cmd_mkdir, "PATH"},
        {"ls", cmd_ls, "PATH"},
        {"stat", cmd_stat, "PATH"},
        {"lstat", cmd_lstat, "PATH"},
        {"readlink", cmd_readlink, "PATH"},
        {"chmod", cmd_chmod, "PATH MODE"},
        {"kill", cmd_kill, "PID|self|child SIG"},
        {"ptrace-attach", cmd_ptrace_attach, "PID|child"},
        {"process-vm-read", cmd_process_vm_read, "PID|child"},
        {"dumpable", cmd_dumpable, ""},
        {"rlimit-core", cmd_rlimit_core, ""},
        {"setsid-check", cmd_setsid_check, ""},
        {"tty", cmd_tty, ""},
        {"tiocsti", cmd_tiocsti, "FD CHAR"},
        {"tty-drain", cmd_tty_drain, ""},
        {"fds", cmd_fds, ""},
        {"env", cmd_env, ""},
        {"status", cmd_status, ""},
        {"id", cmd_id, ""},
        {"ns", cmd_ns, "PID|self"},
        {"mount", cmd_mount, "TARGET"},
        {"umount", cmd_umount, "PATH"},
        {"unshare-user", cmd_unshare_user, ""},
        {"chroot", cmd_chroot, "[PATH]"},
        {"sethostname", cmd_sethostname, "(current name)"},
        {"setns", cmd_setns, "NSFILE"},
        {"hostname", cmd_hostname, ""},
        {"cwd", cmd_cwd, ""},
        {"ifaces", cmd_ifaces, ""},
        {"tcp-connect", cmd_tcp_connect, "IP PORT"},
        {"http-get", cmd_http_get, "IP PORT HOST PATH"},
        {"udp-send", cmd_udp_send, "IP PORT"},
        {"udp-freebind", cmd_udp_freebind, "SRC-IP SRC-PORT DST-IP DST-PORT"},
        {"unix-connect", cmd_unix_connect, "PATH|@NAME"},
        {"listen", cmd_listen, "tcp IP PORT | unix PATH|@NAME"},
        {"chmod-via", cmd_chmod_via, "chmod|fchmod|proc|fchmodat2 PATH MODE"},
        {"umask", cmd_umask, "OCTAL"},
        {"umask-create", cmd_umask_create, "MASK PATH open|mkdir|tmpfile"},
        {"setxattr", cmd_setxattr, "PATH NAME"},
        {"mknod", cmd_mknod, "PATH fifo|sock"},
        {"unix-bind", cmd_unix_bind, "PATH"},
        {"fcntl", cmd_fcntl, "PATH setlease|notify|setlk|getfl"},
};

int main(int argc, char **argv)
{
        /* One result line even if the caller's stdout is a pipe and we crash after. */
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc >= 2)
                for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
                        if (strcmp(argv[1], commands[i].name) == 0)
                                return commands[i].fn(argc - 2, argv + 2);
        printf("usage: rf-probe COMMAND [ARGS]\n");
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
                printf("  %s %s\n", commands[i].name, commands[i].help);
        return 2;
}
