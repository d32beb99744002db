/*
 * run_tls.c — the TLS side of a run with credential injection (issue 15,
 * docs/TLS.md) or HTTP rules (policy/httprule.h): the hosts to terminate,
 * the run CA for them and the run's trust files, made off the start path.
 *
 * Called by run_start (start.c: run_tls_begin before the plan is built;
 * run_tls_start through supervisor_run's trust_begin callback right after
 * init is cloned; run_tls_finish through its trust callback once the run
 * is registered) and only for runs with an injection or an HTTP rule.
 *
 * Design: the supervisor never maps OpenSSL and never holds the run CA's
 * keys. run_tls_begin checks what can be checked cheaply (the module file,
 * the trust files it will read), keeps the trust files open and, last,
 * forks the run CA's keeper, which makes the run CA and the trust files
 * (tls/trustmake.h: nettle for the CA, the host's part from the state
 * dir's cache) on the other CPU while the supervisor builds the plan and
 * clones init; run_tls_start, right after init is cloned, takes the
 * keeper's result (the trust files, the snapshots for the egress
 * processes, or why it failed) and sends init the files at once
 * (MSG_TRUST: init takes them at its first trust-file op);
 * run_tls_finish reports. Each egress process loads the module itself
 * before its lockdown and asks the keeper for the CA (egress_spawn).
 *
 * Where the CA's keys live (docs/TLS.md, "Where the key lives"): in the
 * keeper and in each egress process, nowhere else. The keeper is forked
 * without any capability, holds none of the supervisor's secret memory
 * (wiped in every fork), makes the keys straight into its own secret
 * memory (secmem.h: locked, out of core dumps; besides nettle's key
 * objects while they are made, which runca.c wipes). It works confined
 * (keeper.c: Landlock to the trust cache and the TLS module, a seccomp
 * allowlist; no path at all once it reads the caller's upstream CA file)
 * and once it has sent its result lives under a seccomp filter of strict
 * mode's set: read a request on its socket, write one copy of the export,
 * exit — it can open, map, send an fd or run nothing. The socket's other
 * end is the supervisor's: it reads the keeper's one result there, then
 * only passes the socket to each egress
 * process (which closes it before its lockdown); no export ever comes to
 * the supervisor. The run's init, a fork of the supervisor, inherits that
 * end with every other fd of the supervisor's and closes it as its first
 * step (launch.c close_inherited), before anything of the run exists
 * (inject_cakey.sh: no process of the run holds it). When the run ends
 * the socket is closed: the keeper wipes the export and exits
 * (run_tls_quit, run_tls_free).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/keeper.h"
#include "supervisor/start-internal.h"
#include "supervisor/start.h"
#include "tls/tls-load.h"
#include "policy/addr.h"
#include "egress/egress.h"
#include "policy/httprule.h"
#include "egress/inject.h"
#include "policy/rules.h"
#include "policy/policy.h"
#include "sandbox/msg.h"
#include "sandbox/plan.h"
#include "sandbox/trustfiles.h"
#include "secrets/secmem.h"
#include "shared/lockdown.h"
#include "shared/macro.h"
#include "shared/memfd.h"
#include "tls/trustmake.h"

/* a run without a timeout: the run CA's validity (its key dies with the run) */
#define CA_LIFETIME_DEFAULT_S (30ULL * 24 * 3600)
/* what a trust file may add to the files it is made from (the run CA's
 * certificate, PKCS#12 bags), beyond twice their size */
#define TRUST_SLACK ((size_t)64 << 10)

static void keeper_end(struct run_tls *t);
static int keeper_fork(struct run_tls *t);

void run_tls_free(struct run_tls *t)
{
        if (t->on) {
                keeper_end(t); /* made, maybe not collected (the run was refused meanwhile) */
                safe_close(t->module);
                safe_close(t->bundle);
                safe_close(t->upstream);
                safe_close(t->bundle_src);
                safe_close(t->upstream_src);
        }
        for (size_t i = 0; t->hosts && i < t->n_hosts; i++)
                free(t->hosts[i]);
        free(t->hosts);
        *t = (struct run_tls){.module = -1,
                              .bundle = -1,
                              .upstream = -1,
                              .bundle_src = -1,
                              .upstream_src = -1,
                              .keeper = -1,
                              .keeper_pidfd = -1,
                              .keeper_report = -1};
}

/* ---- the supervisor's side ---------------------------------------------------------- */

/* A trust file run_tls_finish will read: open and readable now (a missing
 * or unreadable one refuses the run before it starts; O_NONBLOCK: a FIFO is
 * refused, never waited on), its size added to *total. An fd or -errno. */
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
        return TAKE_FD(fd);
}

static bool regular_file(const char *path)
{
        struct stat st;
        return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int run_tls_begin(const struct rf_policy *pol, const struct inject_secret *inj, size_t n,
                  const char *state_dir, struct run_tls *t, struct rf_error *err)
{
        static char names[RF_TLS_MAX_HOSTS][SECRET_INJECT_HOST_MAX + 1];
        size_t k = inject_tls_names(inj, n, names, RF_TLS_MAX_HOSTS);
        int r;

        *t = (struct run_tls){.module = -1,
                              .bundle = -1,
                              .upstream = -1,
                              .bundle_src = -1,
                              .upstream_src = -1,
                              .keeper = -1,
                              .keeper_pidfd = -1,
                              .keeper_report = -1};
        if (k > RF_TLS_MAX_HOSTS)
                return rf_error_set(err, -E2BIG, "more than %d injection hosts in one run",
                                    RF_TLS_MAX_HOSTS);
        /* the hosts of HTTP rules are terminated too (names only: a rule
         * never names an address) */
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
        if (!(t->hosts = calloc(k ? k : 1, sizeof *t->hosts)))
                return rf_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < k; i++) {
                uint8_t a[16];
                int fam;
                /* an address has no name to issue a leaf for: plaintext only */
                if (net_ip_parse(names[i], strlen(names[i]), false, a, &fam) == 0)
                        continue;
                if (!(t->hosts[t->n_hosts] = strdup(names[i])))
                        return rf_error_set(err, -ENOMEM, "out of memory");
                t->name_bytes += strlen(names[i]);
                t->n_hosts++;
        }
        if (t->n_hosts == 0)
                return 0; /* no name to terminate TLS for */
        t->what = n ? "credential injection" : "an HTTP rule";

        char path[256] = "ringfence-tls.so";
        if ((r = rf_tls_module_check(path, sizeof path)) < 0)
                return rf_error_set(err, r,
                                    "%s needs the TLS module %s, which could not be loaded: %s",
                                    t->what, path, rf_tls_file_why(r));
        size_t sources = 0;
        t->on = true; /* the fds are run_tls_free's from here on */
        if ((r = t->bundle_src = trust_source(RF_TLS_HOST_BUNDLE, &sources)) < 0 ||
            (pol->net_upstream_ca &&
             (r = t->upstream_src = trust_source(pol->net_upstream_ca, &sources)) < 0)) {
                const char *what = pol->net_upstream_ca
                                           ? "the host's CA bundle " RF_TLS_HOST_BUNDLE
                                             " or the upstream CA file"
                                           : "the host's CA bundle " RF_TLS_HOST_BUNDLE;
                return rf_error_set(err, r, "cannot read %s%s%s: %s", what,
                                    pol->net_upstream_ca ? " " : "",
                                    pol->net_upstream_ca ? pol->net_upstream_ca : "",
                                    r == -EFBIG ? "too large" : strerror(-r));
        }
        t->upstream_path = pol->net_upstream_ca;
        t->state_dir = state_dir;
        t->java = regular_file(RF_TLS_HOST_JAVA);
        t->bound = 2 * sources + TRUST_SLACK;
        if (t->bound > PLAN_TLS_FILE_MAX)
                t->bound = PLAN_TLS_FILE_MAX;
        t->lifetime_s = pol->timeout_ms ? pol->timeout_ms / 1000 + 120 : CA_LIFETIME_DEFAULT_S;
        /* the keeper makes the CA from now on, beside the plan and init's clone */
        if ((r = keeper_fork(t)) < 0)
                return rf_error_set(err, r, "%s: cannot start the run CA's keeper: %s", t->what,
                                    strerror(-r));
        return 0;
}

/* ---- the run CA's keeper (keeper.c) -------------------------------------------------- */

/* How long run_tls_start waits for the keeper's result (a first run on a
 * host also builds the trust cache: tens of ms) */
#define KEEPER_RESULT_MS 30000
/* How long run_tls_free lets the keeper wipe its copy before SIGKILL */
#define KEEPER_END_MS 1000

/*
 * Put the keeper, just forked, on a CPU other than this one, when the
 * supervisor may use another: it then runs at once, beside the supervisor,
 * and has made the trust files before init is cloned. Left where it was,
 * it waited for the supervisor's CPU until the supervisor blocked in that
 * clone, then made them while init built the root, and three processes
 * took turns on two CPUs: measured on 2 CPUs, its work started ~0.9 ms
 * later and the run's command ~0.3 ms later (docs/TLS.md). Best effort (a
 * failure leaves it where the kernel put it); keeper_collect gives it the
 * supervisor's CPUs back once its result is in.
 */
static void keeper_elsewhere(pid_t pid)
{
        cpu_set_t mask;
        int cpu = sched_getcpu();
        if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof mask, &mask) < 0 ||
            !CPU_ISSET(cpu, &mask) || CPU_COUNT(&mask) < 2)
                return;
        CPU_CLR(cpu, &mask);
        (void)sched_setaffinity(pid, sizeof mask, &mask);
}

/* Fork the keeper for t (run_tls_begin, once t is complete). 0 or -errno. */
static int keeper_fork(struct run_tls *t)
{
        int sv[2];

        _cleanup_close_ int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (nul < 0)
                return negative_errno();
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return negative_errno();
        /* 0-2 /dev/null: a library's last words go nowhere, never into a
         * file the keeper has open */
        struct rf_lockdown how = {
                .what = "run CA keeper",
                .arrange_fds = true,
                .fds = {nul, nul, nul, sv[0], t->bundle_src, t->upstream_src},
                .n_fds = 6,
                .drop_caps = true,
                .pidfd = &t->keeper_pidfd,
                .report = &t->keeper_report, /* collected by run_tls_start */
        };
        pid_t pid = rf_fork_tied(&how, NULL);
        if (pid == 0)
                keeper_main(t);
        close(sv[0]);
        if (pid < 0) {
                close(sv[1]);
                t->keeper_pidfd = -1;
                return pid;
        }
        t->keeper_pid = pid;
        keeper_elsewhere(pid);
        t->keeper = sv[1];
        /* the keeper read them or will: its copies stand for them now */
        t->bundle_src = safe_close(t->bundle_src);
        t->upstream_src = safe_close(t->upstream_src);
        return 0;
}

/* The keeper's result on its socket within KEEPER_RESULT_MS: 0 with *res
 * and fds[_KR_MAX] (-1 where none), or -errno (-EPIPE: it went without
 * one). */
static int result_recv(int sock, int timeout_ms, struct keeper_result *res, int fds[_KR_MAX])
{
        union {
                char buf[CMSG_SPACE(_KR_MAX * sizeof(int))];
                struct cmsghdr align;
        } u;
        struct iovec iov = {.iov_base = res, .iov_len = sizeof *res};
        struct msghdr mh = {.msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = u.buf,
                            .msg_controllen = sizeof u.buf};
        struct pollfd p = {.fd = sock, .events = POLLIN};
        int got[_KR_MAX];
        size_t k = 0;
        int r;

        for (size_t i = 0; i < _KR_MAX; i++)
                fds[i] = -1;
        while ((r = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
                ;
        if (r < 0)
                return negative_errno();
        if (r == 0)
                return -ETIMEDOUT;
        ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (n < 0)
                return negative_errno();
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
                        for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
                                int fd;
                                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                                if (k < _KR_MAX)
                                        got[k++] = fd;
                                else
                                        close(fd);
                        }
        size_t want = 0;
        if (n == (ssize_t)sizeof *res && res->r == 0)
                want = 3u + (res->has_jvm ? 1u : 0u) + (res->has_upstream ? 1u : 0u);
        if (n <= 0 || n != (ssize_t)sizeof *res || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
            k != want || res->r > 0) {
                for (size_t i = 0; i < k; i++)
                        close(got[i]);
                return n == 0 ? -EPIPE : -EPROTO;
        }
        res->why[sizeof res->why - 1] = '\0';
        for (size_t i = 0, j = 0; i < _KR_MAX && j < k; i++)
                if ((i != KR_JVM || res->has_jvm) && (i != KR_UPSTREAM || res->has_upstream))
                        fds[i] = got[j++];
        return 0;
}

/*
 * The keeper's lockdown report and result, each waited for at most
 * timeout_ms (0: only if there), and the trust files sent to init on
 * t->chan at once (sandbox/trustfiles.h: the host's parts it copies from,
 * MSG_TRUST with value = the source, then the memfd, value 0); the
 * snapshots for the egress processes kept. 1 when done (t->result says
 * how), 0 when not there yet (timeout 0 only).
 */
static int keeper_collect(struct run_tls *t, int timeout_ms)
{
        struct keeper_result res;
        int fds[_KR_MAX];
        int r;

        if (t->keeper_report >= 0) {
                int step = 0;
                /* a keeper stopped before it reports must not hold the
                 * start: past the deadline it is killed, and the report's
                 * end reads as a death without a word */
                struct pollfd rp = {.fd = t->keeper_report, .events = POLLIN};
                int pr;
                while ((pr = poll(&rp, 1, timeout_ms)) < 0 && errno == EINTR)
                        ;
                if (pr == 0 && timeout_ms == 0)
                        return 0;
                if (pr <= 0)
                        (void)syscall(SYS_pidfd_send_signal, t->keeper_pidfd, SIGKILL, NULL, 0);
                r = rf_fork_tied_wait(t->keeper_report, t->keeper_pid, &t->keeper_pidfd, &step);
                t->keeper_report = -1;
                if (r < 0) {
                        t->keeper_pid = 0; /* reaped */
                        t->result = r;
                        snprintf(t->why, sizeof t->why,
                                 "the run CA's keeper failed its lockdown (%s): %s",
                                 rf_lockdown_step_name(step), strerror(-r));
                        return 1;
                }
        }
        r = result_recv(t->keeper, timeout_ms, &res, fds);
        if (r == -ETIMEDOUT && timeout_ms == 0)
                return 0;
        if (r < 0) {
                t->result = r;
                snprintf(t->why, sizeof t->why, "the run CA's keeper %s",
                         r == -EPIPE       ? "went before it made the CA"
                         : r == -ETIMEDOUT ? "did not make the CA in time"
                                           : "broke its protocol");
                return 1;
        }
        if ((t->result = res.r) < 0) {
                snprintf(t->why, sizeof t->why, "%s", res.why);
                return 1;
        }
        /* its work done: the supervisor's CPUs again (keeper_elsewhere),
         * for the copies it serves while the run lives */
        cpu_set_t mask;
        if (sched_getaffinity(0, sizeof mask, &mask) == 0)
                (void)sched_setaffinity(t->keeper_pid, sizeof mask, &mask);
        struct rf_msg m = {.type = MSG_TRUST, .value = TRUST_SRC_BUNDLE};
        bool sent = rf_msg_send(t->chan, &m, fds[KR_BUNDLE]) == 0;
        if (sent && fds[KR_JVM] >= 0) {
                m.value = TRUST_SRC_JVM;
                sent = rf_msg_send(t->chan, &m, fds[KR_JVM]) == 0;
        }
        m.value = 0;
        t->send_lost = !sent || rf_msg_send(t->chan, &m, fds[KR_FILES]) < 0;
        safe_close(fds[KR_FILES]);
        safe_close(fds[KR_JVM]);
        t->module = fds[KR_MODULE];
        t->bundle = fds[KR_BUNDLE];
        t->upstream = fds[KR_UPSTREAM];
        return 1;
}

void run_tls_start(struct run_tls *t, int chan)
{
        if (!t->on || t->keeper < 0 || t->started)
                return;
        t->started = true;
        t->chan = chan;
        /* most often made by now: sent to init at once; else the supervisor
         * goes on (vetting, registration) and run_tls_finish waits */
        t->collected = keeper_collect(t, 0) == 1;
}

int run_tls_finish(struct run_tls *t, struct rf_error *err)
{
        if (!t->on || !t->started || t->made)
                return rf_error_set(err, -EINVAL, "no TLS trust to make (internal error)");
        if (!t->collected)
                t->collected = keeper_collect(t, KEEPER_RESULT_MS) == 1;
        if (t->result < 0)
                return rf_error_set(err, t->result, "%s: %s", t->what, t->why);
        t->made = true;
        return t->send_lost ? 1 : 0;
}

void run_tls_quit(struct run_tls *t)
{
        if (t->on) /* else nothing of t is set, fds included */
                t->keeper = safe_close(t->keeper);
}

/* The keeper's end: its socket closed here (it then wipes its copy and
 * exits), SIGKILL after KEEPER_END_MS if it has not, reaped. */
static void keeper_end(struct run_tls *t)
{
        t->keeper = safe_close(t->keeper);
        t->keeper_report = safe_close(t->keeper_report); /* never collected: refused before */
        if (t->keeper_pidfd < 0 || t->keeper_pid <= 0)
                return;
        struct pollfd p = {.fd = t->keeper_pidfd, .events = POLLIN};
        if (poll(&p, 1, KEEPER_END_MS) <= 0)
                (void)syscall(SYS_pidfd_send_signal, t->keeper_pidfd, SIGKILL, NULL, 0);
        (void)waitpid(t->keeper_pid, NULL, 0);
        t->keeper_pidfd = safe_close(t->keeper_pidfd);
}
