/*
 * keeper.c — the run CA's keeper (keeper.h): the process that makes a
 * run's CA and trust files and keeps the CA's keys while the run lives.
 *
 * Forked by the supervisor (run_tls.c, keeper_fork) without capabilities
 * and with nothing of its secret memory, before init is cloned. It runs as
 * the supervisor's uid — root for most runs — so it is confined before it
 * reads anything it is given (keeper_confine: Landlock to the trust cache
 * and the TLS module, a seccomp allowlist for what Landlock has no right
 * for), gives up every path of the host once the cache's entries are made
 * and before it parses the caller's upstream CA file (keeper_cache_done),
 * and serves the CA's export under a filter of strict mode's set (read,
 * write, exit) once it has sent its result.
 *
 * Threats: the inputs are the host's bundle (root's), the caller's
 * upstream CA file (bounded, parsed by the fuzzed trust_certs_load) and
 * the trust cache (the state dir's, which no run reaches); its socket's
 * other end is the supervisor's and, one request each, an egress
 * process's. A flaw reached through those finds no capability, no path
 * but the cache (none at all past the cache), no new socket, signal,
 * namespace, exec or chmod, and a key that only this process and the
 * egress processes ever held.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/landlock.h"
#include "secrets/secmem.h"
#include "shared/bpf-filter.h"
#include "shared/lockdown.h"
#include "shared/macro.h"
#include "supervisor/keeper.h"
#include "tls/tls-load.h"
#include "tls/tlsterm.h"
#include "tls/trustmake.h"

#ifdef RF_TEST_BUILD
/*
 * Test builds only: the run CA's private scalars, hex ("ca HEX\nleaf
 * HEX\n"), into the file RINGFENCE_TEST_CA_KEYS names (created, never
 * replaced; opened before the keeper confines itself), so
 * inject_cakey.sh can look for them in the memory of the run's processes
 * from the host side. A release build has no such path.
 */
static int test_keys_open(const char *suffix)
{
        const char *path = getenv("RINGFENCE_TEST_CA_KEYS");
        char name[PATH_MAX];
        if (!path || !path[0] || snprintf(name, sizeof name, "%s%s", path, suffix) >= PATH_MAX)
                return -1;
        return open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

/*
 * Test builds only, with RINGFENCE_TEST_CA_KEYS=PATH: what the keeper's
 * confinement refuses. It tries to create PATH.probe, to read PATH.read
 * (a file of root's the test made), to chmod it and to make a socket,
 * once before keeper_confine and once after, and writes each errno
 * ("write-before 0", ..., "socket-after 1") into `out` (PATH.confined,
 * opened before); and to create an entry in the trust cache, which it may
 * until keeper_cache_done ("cache-done 13").
 */
static int test_probe_fd = -1, test_probe_cache = -1; /* for keeper_cache_done */

static void test_confined(int out, const char *when)
{
        const char *path = getenv("RINGFENCE_TEST_CA_KEYS");
        char name[PATH_MAX], buf[1];
        if (out < 0 || !path)
                return;
        snprintf(name, sizeof name, "%s.probe", path);
        int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        int e = fd < 0 ? errno : 0;
        if (fd >= 0) {
                close(fd);
                (void)unlink(name);
        }
        dprintf(out, "write-%s %d\n", when, e);
        snprintf(name, sizeof name, "%s.read", path);
        fd = open(name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        e = fd < 0 ? errno : read(fd, buf, sizeof buf) < 0 ? errno : 0;
        if (fd >= 0)
                close(fd);
        dprintf(out, "read-%s %d\n", when, e);
        /* what Landlock has no right for: a mode change of root's file (to
         * the mode it has) and a socket of its own */
        e = chmod(name, 0600) < 0 ? errno : 0;
        dprintf(out, "chmod-%s %d\n", when, e);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        e = fd < 0 ? errno : 0;
        if (fd >= 0)
                close(fd);
        dprintf(out, "socket-%s %d\n", when, e);
        /* and an entry of the cache's own */
        fd = test_probe_cache < 0
                     ? -1
                     : openat(test_probe_cache, "probe",
                              O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        e = fd < 0 ? (test_probe_cache < 0 ? ENOENT : errno) : 0;
        if (fd >= 0) {
                close(fd);
                (void)unlinkat(test_probe_cache, "probe", 0);
        }
        dprintf(out, "cache-%s %d\n", when, e);
}

static void test_ca_keys_out(int fd, const unsigned char *ex)
{
        static const struct {
                const char *name;
                size_t off;
        } keys[] = {{"ca", RF_TLS_CA_EXPORT_CA_KEY}, {"leaf", RF_TLS_CA_EXPORT_LEAF_KEY}};
        if (fd < 0)
                return;
        for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
                char line[16 + 2 * RF_TLS_CA_KEY_LEN];
                size_t n = (size_t)snprintf(line, sizeof line, "%s ", keys[k].name);
                for (size_t i = 0; i < RF_TLS_CA_KEY_LEN; i++)
                        n += (size_t)snprintf(line + n, sizeof line - n, "%02x",
                                              ex[keys[k].off + i]);
                line[n++] = '\n';
                (void)!write(fd, line, n);
        }
}
#endif

/* Send res on sock with fds[n] attached (n <= _KR_MAX). 0 or -errno. */
static int result_send(int sock, const struct keeper_result *res, const int *fds, size_t n)
{
        union {
                char buf[CMSG_SPACE(_KR_MAX * sizeof(int))];
                struct cmsghdr align;
        } u;
        struct iovec iov = {.iov_base = (void *)res, .iov_len = sizeof *res};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
        memset(&u, 0, sizeof u);
        if (n) {
                mh.msg_control = u.buf;
                mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(n * sizeof(int));
                memcpy(CMSG_DATA(c), fds, n * sizeof(int));
        }
        return sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof *res ? 0 : -EPROTO;
}

/* ---- the keeper's confinement ------------------------------------------------------- */

/*
 * The keeper's seccomp allowlist while it works (keeper_confine): the
 * files of its cache and the module (Landlock decides which), memory,
 * randomness, its socket, and tightening its own confinement (Landlock,
 * seccomp); anything else fails with EPERM. What Landlock has no right
 * for is among the refused: chmod, chown, extended attributes and times
 * (the keeper is uid 0 for most runs, and owns root's files), sockets of
 * its own (a root-only unix socket would take it for root), signals,
 * namespaces, ptrace, io_uring, exec. Never an executable mapping.
 */
static const struct sock_filter keeper_work_filter[] = {
        RF_BPF_LOAD_NR,
        RF_BPF_NO_X32,
        RF_BPF_MAP_NO_EXEC,
        /* files: the cache's entries, the module, the sealed snapshots */
        RF_BPF_ALLOW(__NR_openat),
        RF_BPF_ALLOW(__NR_close),
        RF_BPF_ALLOW(__NR_read),
        RF_BPF_ALLOW(__NR_pread64),
        RF_BPF_ALLOW(__NR_write),
        RF_BPF_ALLOW(__NR_pwrite64),
        RF_BPF_ALLOW(__NR_lseek),
        RF_BPF_ALLOW(__NR_fstat),
        RF_BPF_ALLOW(__NR_newfstatat),
        RF_BPF_ALLOW(__NR_statx),
        RF_BPF_ALLOW(__NR_fcntl),
        RF_BPF_ALLOW(__NR_getdents64),
        RF_BPF_ALLOW(__NR_readlink),
        RF_BPF_ALLOW(__NR_readlinkat),
        RF_BPF_ALLOW(__NR_mkdirat),
        RF_BPF_ALLOW(__NR_linkat),
        RF_BPF_ALLOW(__NR_unlinkat),
        RF_BPF_ALLOW(__NR_memfd_create),
        RF_BPF_ALLOW(__NR_ftruncate),
        RF_BPF_ALLOW(__NR_copy_file_range),
        RF_BPF_ALLOW(__NR_sendfile),
        /* memory, the secret memory's locking */
        RF_BPF_ALLOW(__NR_brk),
        RF_BPF_ALLOW(__NR_munmap),
        RF_BPF_ALLOW(__NR_mremap),
        RF_BPF_ALLOW(__NR_madvise),
        RF_BPF_ALLOW(__NR_mlock),
        RF_BPF_ALLOW(__NR_munlock),
        RF_BPF_ALLOW(__NR_getrandom),
        /* its socket to the supervisor (made before) */
        RF_BPF_ALLOW(__NR_sendmsg),
        RF_BPF_ALLOW(__NR_recvmsg),
        /* tightening itself: Landlock (the cache read-only), seccomp (the
         * serving filter); prctl for PR_SET_SECCOMP and the like (no
         * capability: nothing it does reaches another process) */
        RF_BPF_ALLOW(__NR_landlock_create_ruleset),
        RF_BPF_ALLOW(__NR_landlock_add_rule),
        RF_BPF_ALLOW(__NR_landlock_restrict_self),
        RF_BPF_ALLOW(__NR_seccomp),
        RF_BPF_ALLOW(__NR_prctl),
        /* the process itself */
        RF_BPF_ALLOW(__NR_getuid),
        RF_BPF_ALLOW(__NR_geteuid),
        RF_BPF_ALLOW(__NR_getgid),
        RF_BPF_ALLOW(__NR_getegid),
        RF_BPF_ALLOW(__NR_getpid),
        RF_BPF_ALLOW(__NR_gettid),
        RF_BPF_ALLOW(__NR_clock_gettime),
        RF_BPF_ALLOW(__NR_gettimeofday),
        RF_BPF_ALLOW(__NR_rt_sigaction),
        RF_BPF_ALLOW(__NR_rt_sigprocmask),
        RF_BPF_ALLOW(__NR_rt_sigreturn),
        RF_BPF_ALLOW(__NR_futex),
        RF_BPF_ALLOW(__NR_restart_syscall),
        /* harmless, and what libc and sanitizer runtimes reach for */
        RF_BPF_ALLOW_RUNTIME,
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
};

/*
 * Once it has sent its result, what the keeper may still do: read its
 * socket, write it, exit — strict mode's set, as a filter (strict mode
 * cannot follow a filter); anything else kills it.
 */
static const struct sock_filter keeper_serve_filter[] = {
        RF_BPF_LOAD_NR,
        RF_BPF_NO_X32,
        RF_BPF_ALLOW(__NR_read),
        RF_BPF_ALLOW(__NR_write),
        RF_BPF_ALLOW(__NR_exit),
        RF_BPF_ALLOW(__NR_exit_group),
        RF_BPF_ALLOW(__NR_rt_sigreturn),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
};

static int keeper_filter(const struct sock_filter *f, size_t n)
{
        struct sock_fprog prog = {.len = (unsigned short)n, .filter = (struct sock_filter *)f};
        return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0 ? negative_errno() : 0;
}

/*
 * The keeper's confinement, before it reads anything it is given. Of the
 * host's filesystem (landlock_confine): the trust cache (read, and its
 * entries written) and the TLS module file (read), nothing else; then the
 * work filter above. It runs as the supervisor's uid — root for most
 * runs — without capabilities: without both, a flaw in what parses the
 * host's bundle or the caller's upstream CA file could still write, chmod
 * or chown every file root owns, or connect to root's unix sockets. The
 * fds it was given (the bundle, the upstream CA file, its socket) are not
 * paths: unaffected. 0 or -errno.
 */
static int keeper_confine(int cache)
{
        char path[PATH_MAX];
        _cleanup_close_ int module = -1;
        if (rf_tls_module_path(path, sizeof path) == 0)
                module = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC); /* -1: it fails later */
        const struct landlock_beneath rules[] = {
                {.fd = cache, .dir = true, .write = true},
                {.fd = module, .dir = false},
        };
        int r = landlock_confine(rules, ARRAY_SIZE(rules));
        return r < 0 ? r : keeper_filter(keeper_work_filter, ARRAY_SIZE(keeper_work_filter));
}

/*
 * trust_make's cache_done: the cache's entries are written (the module
 * read), the caller's upstream CA file is parsed next. From here no path
 * of the host is open to the keeper at all (a second Landlock domain
 * without rules: rights only narrow), so nothing the caller's file could
 * make of it persists for the runs that follow (a cache entry is loaded
 * by their egress processes); the rest is made from fds it holds.
 */
static int keeper_cache_done(void *ctx)
{
        (void)ctx;
        int r = landlock_confine(NULL, 0);
#ifdef RF_TEST_BUILD
        test_confined(test_probe_fd, "done");
#endif
        return r;
}

/*
 * The keeper, once rf_fork_tied returned in it (no capability, the fds
 * above, nothing of the supervisor's secret memory: wiped by the fork).
 * It makes the run CA and the trust files (tls/trustmake.h) with the CA's
 * export — both private keys — straight into its own secret memory, sends
 * the files and the snapshots to the supervisor, and then, under a seccomp
 * filter of strict mode's set (read, write, exit: nothing else), answers each request on
 * its socket with one copy of the export, until the socket's other end is
 * gone (the run ended, or the supervisor died: its parent-death signal
 * kills it too). Then the export is wiped. Never returns.
 */
_noreturn_ void keeper_main(const struct run_tls *t)
{
        struct keeper_result res = {0};
        struct trust_made made = {
                .files = -1, .module = -1, .bundle = -1, .jvm = -1, .upstream = -1};
        size_t max = TRUST_EXPORT_BOUND(t->n_hosts, t->name_bytes);
#ifdef RF_TEST_BUILD
        int keys_fd = -1;
#endif
        if (max > RF_TLS_CA_EXPORT_MAX)
                max = RF_TLS_CA_EXPORT_MAX;
        /* below the run's own processes: on a busy CPU it yields to the
         * supervisor and init, whose work is the run's start */
        (void)setpriority(PRIO_PROCESS, 0, 10);
        unsigned char *ex = secmem_alloc(max);
        if (!ex) {
                res.r = negative_errno();
                snprintf(res.why, sizeof res.why,
                         "cannot keep the run's TLS authority: %s (its keys go into locked "
                         "memory: RLIMIT_MEMLOCK)",
                         strerror(-res.r));
        } else {
                _cleanup_close_ int cache = trust_cache_open(t->state_dir);
#ifdef RF_TEST_BUILD
                keys_fd = test_keys_open("");
                test_probe_fd = test_keys_open(".confined");
                test_probe_cache = cache;
                test_confined(test_probe_fd, "before");
#endif
                res.r = keeper_confine(cache);
#ifdef RF_TEST_BUILD
                test_confined(test_probe_fd, "after");
#endif
                if (res.r < 0)
                        snprintf(res.why, sizeof res.why,
                                 "cannot confine the run CA's keeper (Landlock, seccomp): %s",
                                 strerror(-res.r));
                struct trust_job job = {
                        .hosts = (const char *const *)t->hosts,
                        .n_hosts = t->n_hosts,
                        .bundle = KEEPER_FD_BUNDLE,
                        .upstream = t->upstream_src >= 0 ? KEEPER_FD_UPSTREAM : -1,
                        .upstream_path = t->upstream_path,
                        .lifetime_s = t->lifetime_s,
                        .java = t->java,
                        .bound = t->bound,
                        .cache = cache,
                        .cache_done = keeper_cache_done,
                };
                if (res.r == 0)
                        res.r = trust_make(&job, ex, max, &made, res.why, sizeof res.why);
#ifdef RF_TEST_BUILD
                test_probe_fd = safe_close(test_probe_fd);
#endif
        }
        (void)close(KEEPER_FD_BUNDLE);
        if (t->upstream_src >= 0) /* else fd 5 may be one trust_make opened */
                (void)close(KEEPER_FD_UPSTREAM);
        int all[_KR_MAX] = {made.files, made.jvm, made.module, made.bundle, made.upstream};
        int fds[_KR_MAX];
        size_t n = 0;
        res.has_jvm = made.jvm >= 0;
        res.has_upstream = made.upstream >= 0;
        for (size_t i = 0; res.r == 0 && i < _KR_MAX; i++)
                if (all[i] >= 0)
                        fds[n++] = all[i];
        if (result_send(KEEPER_FD_SOCK, &res, fds, n) < 0 || res.r < 0) {
                secmem_free(ex);
                _exit(0);
        }
        for (size_t i = 0; i < _KR_MAX; i++)
                safe_close(all[i]);
#ifdef RF_TEST_BUILD
        test_ca_keys_out(keys_fd, ex);
        safe_close(keys_fd);
#endif
        /* from here on: read its socket, write the export, exit */
        signal(SIGPIPE, SIG_IGN); /* a gone reader is a failed write */
        if (keeper_filter(keeper_serve_filter, ARRAY_SIZE(keeper_serve_filter)) < 0) {
                secmem_free(ex);
                _exit(RF_LOCKDOWN_EXIT);
        }
        for (;;) {
                char req[8];
                if (read(KEEPER_FD_SOCK, req, sizeof req) <= 0 ||
                    write(KEEPER_FD_SOCK, ex, made.ca_len) != (ssize_t)made.ca_len)
                        break;
        }
        explicit_bzero(ex, max); /* munmap is not allowed any more: the pages go
                                  * with the process */
        for (;;)
                (void)syscall(SYS_exit, 0);
}
