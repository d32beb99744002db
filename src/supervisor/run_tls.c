/*
 * run_tls.c — the TLS side of a run with credential injection (issue 15,
 * docs/TLS.md) or HTTP rules (policy/httprule.h): the hosts to terminate,
 * the run CA for them and the run's trust files, made off the start path.
 *
 * Called by run_start (start.c: run_tls_begin before the plan is built, run_tls_finish
 * through supervisor_run's trust callback once init builds the root) and
 * only for runs with an injection or an HTTP rule.
 *
 * Design: the supervisor never maps OpenSSL. run_tls_begin checks what can
 * be checked cheaply (the module file, the trust files it will read) and
 * forks a helper, which loads the module (~1.5 ms of dlopen, ~1.5 ms of
 * OpenSSL's first use), makes the CA and writes the trust files into one
 * sealed memfd (sandbox/trustfiles.h), on the other CPU while this process
 * clones the run and init builds its root; init receives the memfd at its
 * first trust-file op (MSG_TRUST). The helper then sends the CA's export
 * (certificate, hosts, both private keys: tlsterm.h ca_export) over its
 * socket and exits without any cleanup (_exit: OpenSSL's exit handlers are
 * the helper's only other cost). Each egress process loads the module
 * itself before its lockdown and imports the CA (egress_spawn).
 *
 * Where the CA's keys live: in the helper until it exits (non-dumpable,
 * killed with the supervisor), in the socket's buffer for the moment
 * between its send and this process's receive, then in this process's
 * secret memory (secmem.h: locked, out of core dumps, wiped in every fork:
 * the run's init, cloned before the keys arrive, never had them; a provider
 * command or later fork inherits wiped pages) and in each egress process.
 * The export is never written anywhere and is wiped when the run ends
 * (run_tls_free).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/start-internal.h"
#include "supervisor/start.h"
#include "tls/tls-load.h"
#include "policy/addr.h"
#include "egress/egress.h"
#include "policy/httprule.h"
#include "egress/inject.h"
#include "policy/rules.h"
#include "policy/policy.h"
#include "sandbox/plan.h"
#include "sandbox/trustfiles.h"
#include "secrets/secmem.h"
#include "shared/macro.h"
#include "shared/memfd.h"
#include "tls/helper.h"

/* a run without a timeout: the run CA's validity (its key dies with the run) */
#define CA_LIFETIME_DEFAULT_S (30ULL * 24 * 3600)
/* what a trust file may add to the files it is made from (the run CA's
 * certificate, PKCS#12 bags), beyond twice their size */
#define TRUST_SLACK ((size_t)64 << 10)

/* How long the supervisor waits for the helper (it needs ~5 ms). */
#define HELPER_TIMEOUT_MS 30000

void run_tls_free(struct run_tls *t)
{
        if (t->helper > 0) {
                (void)kill(t->helper, SIGKILL);
                (void)RETRY_EINTR(waitpid(t->helper, NULL, 0));
        }
        if (t->on) {
                safe_close(t->sock);
                safe_close(t->files);
                safe_close(t->module);
                safe_close(t->bundle);
                safe_close(t->upstream);
        }
        secmem_free(t->ca); /* wipes the keys */
        *t = (struct run_tls){.sock = -1, .files = -1, .module = -1, .bundle = -1, .upstream = -1};
}

#ifdef RF_TEST_BUILD
/*
 * Test builds only: the run CA's private scalars, hex ("ca HEX\nleaf
 * HEX\n"), into the file RINGFENCE_TEST_CA_KEYS names (created, never
 * replaced), so inject_cakey.sh can look for them in the memory of the
 * run's processes from the host side. A release build has no such path.
 */
static void test_ca_keys_out(const struct egress_tls_ca *ca)
{
        const char *path = getenv("RINGFENCE_TEST_CA_KEYS");
        static const struct {
                const char *name;
                size_t off;
        } keys[] = {{"ca", RF_TLS_CA_EXPORT_CA_KEY}, {"leaf", RF_TLS_CA_EXPORT_LEAF_KEY}};
        if (!path || !path[0])
                return;
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return;
        for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
                char line[16 + 2 * RF_TLS_CA_KEY_LEN];
                size_t n = (size_t)snprintf(line, sizeof line, "%s ", keys[k].name);
                for (size_t i = 0; i < RF_TLS_CA_KEY_LEN; i++)
                        n += (size_t)snprintf(line + n, sizeof line - n, "%02x",
                                              ca->bytes[keys[k].off + i]);
                line[n++] = '\n';
                (void)!write(fd, line, n);
        }
        close(fd);
}
#endif

/* ---- the supervisor's side ---------------------------------------------------------- */

/* A trust file the helper will read: readable now (a missing or unreadable
 * one refuses the run before it starts), its size added to *total. */
static int trust_source(const char *path, size_t *total)
{
        struct stat st;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        if ((uint64_t)st.st_size > RF_TLS_BUNDLE_MAX)
                return -EFBIG;
        *total += (size_t)st.st_size;
        return 0;
}

static bool regular_file(const char *path)
{
        struct stat st;
        return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int run_tls_begin(const struct rf_policy *pol, const struct inject_secret *inj, size_t n,
                  struct run_tls *t, struct rf_error *err)
{
        static char names[RF_TLS_MAX_HOSTS][SECRET_INJECT_HOST_MAX + 1];
        static const char *list[RF_TLS_MAX_HOSTS];
        size_t k = inject_tls_names(inj, n, names, RF_TLS_MAX_HOSTS), nl = 0;
        int r;

        *t = (struct run_tls){.sock = -1, .files = -1, .module = -1, .bundle = -1, .upstream = -1};
        if (k > RF_TLS_MAX_HOSTS)
                return rf_error_set(err, -E2BIG, "more than %d injection hosts in one run",
                                    RF_TLS_MAX_HOSTS);
        /* the hosts HTTP rules name: their requests are read in the egress
         * process too (names only: a rule never names an address) */
        for (size_t i = 0; i < pol->n_net_http; i++) {
                struct http_rule hr;
                const char *why = "invalid";
                if (httprule_parse(pol->net_http[i], strlen(pol->net_http[i]), &hr, &why) < 0)
                        return rf_error_set(err, -EINVAL, "HTTP rule %.200s: %s", pol->net_http[i],
                                            why);
                if (httprule_names(&hr, 1, names, &k, RF_TLS_MAX_HOSTS) < 0)
                        return rf_error_set(err, -E2BIG,
                                            "more than %d hosts to terminate TLS for (injections "
                                            "and HTTP rules) in one run",
                                            RF_TLS_MAX_HOSTS);
        }
        for (size_t i = 0; i < k; i++) {
                uint8_t a[16];
                int fam;
                /* an address has no name to issue a leaf for: plaintext only */
                if (net_ip_parse(names[i], strlen(names[i]), false, a, &fam) < 0)
                        list[nl++] = names[i];
        }
        if (nl == 0)
                return 0; /* no name to terminate TLS for */
        t->what = n ? "credential injection" : "an HTTP rule";

        char path[256] = "ringfence-tls.so";
        if ((r = rf_tls_module_check(path, sizeof path)) < 0)
                return rf_error_set(err, r,
                                    "%s needs the TLS module %s, which could not be loaded: %s",
                                    t->what, path, rf_tls_file_why(r));
        size_t sources = 0;
        if ((r = trust_source(RF_TLS_HOST_BUNDLE, &sources)) < 0 ||
            (pol->net_upstream_ca && (r = trust_source(pol->net_upstream_ca, &sources)) < 0)) {
                const char *what = pol->net_upstream_ca
                                           ? "the host's CA bundle " RF_TLS_HOST_BUNDLE
                                             " or the upstream CA file"
                                           : "the host's CA bundle " RF_TLS_HOST_BUNDLE;
                return rf_error_set(err, r, "cannot read %s%s%s: %s", what,
                                    pol->net_upstream_ca ? " " : "",
                                    pol->net_upstream_ca ? pol->net_upstream_ca : "",
                                    r == -EFBIG ? "too large" : strerror(-r));
        }
        t->java = regular_file(RF_TLS_HOST_JAVA);
        t->bound = 2 * sources + TRUST_SLACK;
        if (t->bound > PLAN_TLS_FILE_MAX)
                t->bound = PLAN_TLS_FILE_MAX;

        /* the helper: ringfence-tls-helper (helper.h), opened and checked
         * as the module is and executed through that fd (what was checked
         * is what runs), spawned without copying this process
         * (posix_spawn: vfork-like), its job in argv, its socket at
         * HELPER_FD, nothing else open, no environment */
        char hpath[PATH_MAX], exe[64];
        _cleanup_close_ int hfd = rf_tls_helper_open(hpath, sizeof hpath);
        if (hfd < 0)
                return rf_error_set(err, hfd,
                                    "%s needs the TLS helper %s, which could not be started: %s",
                                    t->what, hpath, rf_tls_file_why(hfd));
        snprintf(exe, sizeof exe, "/proc/self/fd/%d", hfd);
        char a_ppid[24], a_life[24], a_bound[24];
        char *argv[8 + RF_TLS_MAX_HOSTS] = {"ringfence-tls-helper",
                                            RUN_TLS_HELPER_ARG,
                                            a_ppid,
                                            a_life,
                                            t->java ? "1" : "0",
                                            a_bound,
                                            pol->net_upstream_ca ? pol->net_upstream_ca : "-"};
        char *envp[] = {NULL};
        snprintf(a_ppid, sizeof a_ppid, "%d", (int)getpid());
        snprintf(a_life, sizeof a_life, "%llu",
                 (unsigned long long)(pol->timeout_ms ? pol->timeout_ms / 1000 + 120
                                                      : CA_LIFETIME_DEFAULT_S));
        snprintf(a_bound, sizeof a_bound, "%zu", t->bound);
        for (size_t i = 0; i < nl; i++)
                argv[7 + i] = (char *)list[i];
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return rf_error_set(err, negative_errno(), "cannot start the TLS helper: %m");
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t at;
        sigset_t none, dfl;
        sigemptyset(&none);
        sigemptyset(&dfl);
        sigaddset(&dfl, SIGPIPE);
        pid_t pid = -1;
        r = posix_spawn_file_actions_init(&fa);
        if (r == 0 && (r = posix_spawnattr_init(&at)) != 0)
                posix_spawn_file_actions_destroy(&fa);
        if (r == 0) {
                if ((r = posix_spawn_file_actions_adddup2(&fa, sv[1], HELPER_FD)) == 0 &&
                    (r = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
                                                               POSIX_SPAWN_SETSIGDEF |
                                                               POSIX_SPAWN_SETSID)) == 0 &&
                    (r = posix_spawnattr_setsigmask(&at, &none)) == 0 &&
                    (r = posix_spawnattr_setsigdefault(&at, &dfl)) == 0)
                        r = posix_spawn(&pid, exe, &fa, &at, argv, envp);
                posix_spawn_file_actions_destroy(&fa);
                posix_spawnattr_destroy(&at);
        }
        if (r != 0) {
                close_pair(sv);
                return rf_error_set(err, -r, "cannot start the TLS helper: %s", strerror(r));
        }
        close(sv[1]);
        t->on = true;
        t->helper = pid;
        t->sock = sv[0];
        return 0;
}

/* The helper did not answer properly: it goes (SIGKILL, reaped). */
static void helper_end(struct run_tls *t, int *status)
{
        if (t->helper > 0) {
                (void)kill(t->helper, SIGKILL);
                (void)RETRY_EINTR(waitpid(t->helper, status, 0));
        }
        t->helper = 0;
}

int run_tls_finish(struct run_tls *t, struct rf_error *err)
{
        struct tls_result res = {0};
        char cbuf[CMSG_SPACE(sizeof(int) * HELPER_FDS)];
        int fds[HELPER_FDS] = {-1, -1, -1, -1}, status = 0, r;
        struct egress_tls_ca *k = NULL;

        if (!t->on || t->ca)
                return rf_error_set(err, -EINVAL, "no TLS helper to wait for (internal error)");
        /* its answer, within HELPER_TIMEOUT_MS (it needs ~5 ms: a helper
         * that hangs, on a file or the kernel's random pool, must not hang
         * the run, whose signals and control socket wait meanwhile) */
        struct pollfd pf = {.fd = t->sock, .events = POLLIN};
        int pr = RETRY_EINTR(poll(&pf, 1, HELPER_TIMEOUT_MS));
        if (pr <= 0) {
                helper_end(t, &status);
                return rf_error_set(err, pr < 0 ? negative_errno() : -ETIMEDOUT,
                                    "%s: the TLS helper did not answer within %d s", t->what,
                                    HELPER_TIMEOUT_MS / 1000);
        }
        /* the header first (peeked), so that the secret memory is just as
         * large as the export it announces */
        ssize_t n = RETRY_EINTR(recv(t->sock, &res, sizeof res, MSG_PEEK | MSG_DONTWAIT));
        if (n == (ssize_t)sizeof res && res.err == 0 && res.ca_len > 0 &&
            res.ca_len <= RF_TLS_CA_EXPORT_MAX && !(k = secmem_alloc(sizeof *k + res.ca_len))) {
                r = rf_error_set(err, negative_errno(),
                                 "cannot keep the run's TLS authority: %m (its keys go into "
                                 "locked memory: RLIMIT_MEMLOCK)");
                helper_end(t, &status);
                return r;
        }
        uint32_t want = res.ca_len;
        struct iovec iov[2] = {{.iov_base = &res, .iov_len = sizeof res},
                               {.iov_base = k ? k->bytes : NULL, .iov_len = k ? want : 0}};
        struct msghdr mh = {.msg_iov = iov,
                            .msg_iovlen = 2,
                            .msg_control = cbuf,
                            .msg_controllen = sizeof cbuf};
        n = RETRY_EINTR(recvmsg(t->sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT));
        int e = errno;
        size_t got = 0;
        if (n > 0)
                for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
                        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
                                size_t c = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                                int *in = (int *)(void *)CMSG_DATA(cm);
                                for (size_t i = 0; i < c; i++) {
                                        if (got < HELPER_FDS)
                                                fds[got++] = in[i];
                                        else
                                                close(in[i]); /* more than asked for */
                                }
                        }
        t->sock = safe_close(t->sock);
        if (n < (ssize_t)sizeof res || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
                helper_end(t, &status);
                r = rf_error_set(err, n < 0 ? -e : -EIO,
                                 "%s: the TLS helper ended without a result (%s %d)", t->what,
                                 WIFSIGNALED(status) ? "signal" : "status",
                                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
                goto fail;
        }
        /* the helper is exiting (unmapping OpenSSL takes a while): reaped
         * now if it is gone, else by run_tls_free, not waited for here */
        if (RETRY_EINTR(waitpid(t->helper, &status, WNOHANG)) == t->helper)
                t->helper = 0;
        res.why[sizeof res.why - 1] = '\0';
        if (res.err < 0) {
                r = rf_error_set(err, res.err, "%s: %s", t->what, res.why);
                goto fail;
        }
        /* what init will check, checked here too: a result that does not
         * fit the plan refuses the run with a reason, not a failed step */
        size_t size = 0;
        void *map = MAP_FAILED;
        struct trustfiles tf;
        if (!k || res.ca_len != want || (size_t)n != sizeof res + want || got != HELPER_FDS ||
            memfd_sealed_size(fds[HF_FILES], TRUSTFILES_HDR + TRUST_FILES * t->bound, &size) < 0 ||
            memfd_sealed_size(fds[HF_MODULE], RF_TLS_MODULE_MAX, NULL) < 0 ||
            memfd_sealed_size(fds[HF_BUNDLE], RF_TLS_BUNDLE_MAX, NULL) < 0 ||
            memfd_sealed_size(fds[HF_UPSTREAM], RF_TLS_BUNDLE_MAX, NULL) < 0 ||
            size < TRUSTFILES_HDR ||
            (map = mmap(NULL, size, PROT_READ, MAP_SHARED, fds[HF_FILES], 0)) == MAP_FAILED ||
            trustfiles_parse(map, size, t->bound, &tf) < 0 || !tf.data[TRUST_JAVA] != !t->java) {
                if (map != MAP_FAILED)
                        munmap(map, size);
                r = rf_error_set(err, -EPROTO, "%s: the TLS helper's result is malformed", t->what);
                goto fail;
        }
        munmap(map, size);
        k->len = res.ca_len;
#ifdef RF_TEST_BUILD
        test_ca_keys_out(k);
#endif
        t->ca = k;
        t->files = fds[HF_FILES];
        t->module = fds[HF_MODULE];
        t->bundle = fds[HF_BUNDLE];
        if (res.upstream)
                t->upstream = fds[HF_UPSTREAM];
        else
                close(fds[HF_UPSTREAM]);
        return 0;
fail:
        for (size_t i = 0; i < got; i++)
                safe_close(fds[i]);
        secmem_free(k);
        return r;
}
