/*
 * egress.c — the run's egress process: its configuration, its lockdown,
 * and the supervisor's end of its event channel. The loop is proxy.c.
 *
 * Lockdown, in the child, before it reads a byte from the run (rf_fork_tied,
 * shared/lockdown.h, the routine every helper process uses):
 *   1. PR_SET_PDEATHSIG(SIGKILL), and a check that the supervisor did not
 *      already go (it dies with the run's supervisor);
 *   2. every fd closed but its listeners (proxy, capture), the event
 *      channel and the resolver's map channel (synth.h);
 *   3. root: supplementary groups dropped, uid/gid nobody; everyone: every
 *      capability dropped (bounding set included), no_new_privs;
 *   4. a seccomp allowlist: sockets of AF_INET/AF_INET6 only, no open,
 *      no exec, no kill, no ptrace, no mapping of executable memory.
 * Its only file system access is what happened before step 4 (nothing:
 * the configuration is built by the supervisor before the fork).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <grp.h>
#include <ifaddrs.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "audit/emit.h"
#include "policy/addr.h"
#include "egress/egress-internal.h"
#include "egress/evwire.h"
#include "policy/httprule.h"
#include "egress/inject.h"
#include "shared/bpf-filter.h"
#include "shared/lockdown.h"
#include "policy/policy.h"
#include "shared/json.h"
#include "shared/macro.h"
#include "shared/memfd.h"
#include "tls/tls-load.h"
#include "tls/tlsterm.h"

/* ---- configuration ----------------------------------------------------------- */

/* n typed rules copied (the configuration's own: a live grant edits it) */
static int copy_rules(const struct net_rule *v, size_t n, struct net_rule **ret,
                      struct rf_error *err)
{
        *ret = NULL;
        if (n == 0)
                return 0;
        if (!v)
                return rf_error_set(err, -EINVAL, "the policy's rules are not compiled");
        if (!(*ret = malloc(n * sizeof **ret)))
                return rf_error_set(err, -ENOMEM, "out of memory");
        memcpy(*ret, v, n * sizeof **ret);
        return 0;
}

int egress_config_build(const struct rf_policy *pol, const char *run_id, const char *resolv_conf,
                        struct egress_config *c, struct rf_error *err)
{
        int r;

        memset(c, 0, sizeof *c);
        c->tls_module_fd = c->tls_bundle_fd = c->tls_upstream_fd = c->tls_keeper_fd = -1;
        snprintf(c->run_id, sizeof c->run_id, "%s", run_id);
        snprintf(c->agent, sizeof c->agent, "%s", pol->agent ? pol->agent : "agent");
        /* the agent name goes into a header: keep it to token characters */
        for (char *p = c->agent; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (*p >= '0' && *p <= '9') || strchr("-._~", *p)))
                        *p = '_';
        if ((r = copy_rules(pol->allow_rules, pol->n_net_allow, &c->allow, err)) < 0 ||
            (r = copy_rules(pol->deny_rules, pol->n_net_deny, &c->deny, err)) < 0) {
                egress_config_free(c);
                return r;
        }
        c->n_allow = pol->n_net_allow;
        c->n_deny = pol->n_net_deny;
        if (pol->n_net_hosts) {
                c->hosts = calloc(pol->n_net_hosts, sizeof *c->hosts);
                if (!c->hosts) {
                        egress_config_free(c);
                        return rf_error_set(err, -ENOMEM, "out of memory");
                }
        }
        for (size_t i = 0; i < pol->n_net_hosts; i++) {
                const char *e = pol->net_hosts[i], *eq = strchr(e, '=');
                struct egress_host *h = &c->hosts[c->n_hosts];
                if (!eq || (size_t)(eq - e) > NET_HOST_MAX ||
                    net_ip_parse(eq + 1, strlen(eq + 1), false, h->addr, &h->family) < 0)
                        continue;
                memcpy(h->name, e, (size_t)(eq - e));
                h->name[eq - e] = '\0';
                c->n_hosts++;
        }
        /* HTTP rules (httprule.h), typed by the policy */
        if (pol->n_net_http) {
                if (!pol->http_rules) {
                        egress_config_free(c);
                        return rf_error_set(err, -EINVAL, "the policy's rules are not compiled");
                }
                if (!(c->http = malloc(pol->n_net_http * sizeof *c->http))) {
                        egress_config_free(c);
                        return rf_error_set(err, -ENOMEM, "out of memory");
                }
                memcpy(c->http, pol->http_rules, pol->n_net_http * sizeof *c->http);
                c->n_http = pol->n_net_http;
        }
        memcpy(c->plain_ports, pol->net_plain_ports, sizeof c->plain_ports);
        c->n_plain_ports = pol->n_net_plain_ports;
        c->bytes_quota = pol->egress_bytes;
        c->max_conns =
                pol->egress_connections ? (unsigned)pol->egress_connections : EGRESS_CONNS_DEFAULT;

        snprintf(c->resolv_conf, sizeof c->resolv_conf, "%s",
                 resolv_conf ? resolv_conf : "/etc/resolv.conf");
        return 0;
}

/*
 * What the egress process learns from the host, in the child before it
 * locks down (so a run that never connects never pays for it): the
 * nameservers of c->resolv_conf and the host's own addresses.
 */
static void read_host_facts(struct egress_config *c)
{
        char buf[16384];
        int fd = open(c->resolv_conf, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                ssize_t n = read(fd, buf, sizeof buf);
                close(fd);
                if (n > 0)
                        c->n_ns = resolv_conf_parse(buf, (size_t)n, c->ns, c->ns_len);
        }
        /* the host's own addresses: never a destination unless an IP rule says so */
        struct ifaddrs *ifa = NULL;
        if (getifaddrs(&ifa) == 0) {
                for (struct ifaddrs *i = ifa; i && c->n_own < EGRESS_OWN_MAX; i = i->ifa_next) {
                        if (!i->ifa_addr)
                                continue;
                        if (i->ifa_addr->sa_family == AF_INET) {
                                memcpy(c->own[c->n_own],
                                       &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
                                c->own_family[c->n_own++] = AF_INET;
                        } else if (i->ifa_addr->sa_family == AF_INET6) {
                                memcpy(c->own[c->n_own],
                                       &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
                                c->own_family[c->n_own++] = AF_INET6;
                        }
                }
                freeifaddrs(ifa);
        }
}

int egress_config_allow(struct egress_config *c, const char *rule, bool add, struct rf_error *err)
{
        struct net_rule nr;
        const char *why = "invalid";
        if (net_rule_parse(rule, strlen(rule), &nr, &why) < 0)
                return rf_error_set(err, -EINVAL, "%s: %s", rule, why);
        size_t at = c->n_allow;
        for (size_t i = 0; i < c->n_allow; i++)
                if (!strcmp(c->allow[i].text, nr.text))
                        at = i;
        if (!add) {
                if (at == c->n_allow)
                        return rf_error_set(err, -ENOENT, "%s is not an allow rule of this run",
                                            nr.text);
                memmove(&c->allow[at], &c->allow[at + 1], (c->n_allow - at - 1) * sizeof nr);
                c->n_allow--;
                return 0;
        }
        if (at < c->n_allow)
                return 0; /* already there */
        if (c->n_allow >= POLICY_NET_RULES_MAX)
                return rf_error_set(err, -E2BIG, "more than %d allow rules", POLICY_NET_RULES_MAX);
        struct net_rule *v = realloc(c->allow, (c->n_allow + 1) * sizeof *v);
        if (!v)
                return rf_error_set(err, -ENOMEM, "out of memory");
        c->allow = v;
        c->allow[c->n_allow++] = nr;
        return 0;
}

int egress_config_inject(struct egress_config *c, const struct inject_secret *s, size_t n)
{
        free(c->inject);
        c->inject = NULL;
        c->n_inject = 0;
        if (!n)
                return 0;
        if (!(c->inject = calloc(n, sizeof *c->inject)))
                return -ENOMEM;
        memcpy(c->inject, s, n * sizeof *s);
        c->n_inject = n;
        return 0;
}

size_t egress_config_inject_drop(struct egress_config *c, bool (*live)(const void *, const char *),
                                 const void *ctx)
{
        size_t kept = 0, dropped = 0;
        for (size_t i = 0; i < c->n_inject; i++) {
                if (live(ctx, c->inject[i].name))
                        c->inject[kept++] = c->inject[i];
                else
                        dropped++;
        }
        if (dropped)
                explicit_bzero(c->inject + kept, dropped * sizeof *c->inject);
        c->n_inject = kept;
        return dropped;
}

void egress_config_free(struct egress_config *c)
{
        if (c->inject)
                explicit_bzero(c->inject, c->n_inject * sizeof *c->inject);
        free(c->inject);
        c->inject = NULL;
        c->n_inject = 0;
        free(c->allow);
        free(c->deny);
        free(c->hosts);
        free(c->http);
        c->allow = c->deny = NULL;
        c->hosts = NULL;
        c->http = NULL;
        c->n_http = 0;
        c->n_allow = c->n_deny = c->n_hosts = 0;
}

/* ---- lockdown ------------------------------------------------------------------ */

/* The egress process's seccomp allowlist (installed by rf_fork_tied). */
static const struct sock_fprog *egress_filter(void)
{
        static const struct sock_filter f[] = {
                RF_BPF_LOAD_NR,
                RF_BPF_NO_X32,
                /* socket(AF_INET|AF_INET6, ...) only */
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 5),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 2, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EAFNOSUPPORT),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                /* mmap / mprotect: never executable */
                RF_BPF_MAP_NO_EXEC,
                RF_BPF_ALLOW(__NR_read),
                RF_BPF_ALLOW(__NR_write),
                RF_BPF_ALLOW(__NR_readv),
                RF_BPF_ALLOW(__NR_writev),
                RF_BPF_ALLOW(__NR_close),
                RF_BPF_ALLOW(__NR_poll),
                RF_BPF_ALLOW(__NR_epoll_create1),
                RF_BPF_ALLOW(__NR_epoll_ctl),
                RF_BPF_ALLOW(__NR_epoll_wait),
                RF_BPF_ALLOW(__NR_epoll_pwait),
                RF_BPF_ALLOW(__NR_ppoll),
                RF_BPF_ALLOW(__NR_accept4),
                RF_BPF_ALLOW(__NR_connect),
                RF_BPF_ALLOW(__NR_sendto),
                RF_BPF_ALLOW(__NR_recvfrom),
                RF_BPF_ALLOW(__NR_sendmsg),
                RF_BPF_ALLOW(__NR_recvmsg),
                RF_BPF_ALLOW(__NR_shutdown),
                RF_BPF_ALLOW(__NR_getsockopt),
                RF_BPF_ALLOW(__NR_setsockopt),
                RF_BPF_ALLOW(__NR_getsockname),
                RF_BPF_ALLOW(__NR_getpeername),
                RF_BPF_ALLOW(__NR_fcntl),
                RF_BPF_ALLOW(__NR_pipe2),
                RF_BPF_ALLOW(__NR_splice),
                RF_BPF_ALLOW(__NR_clock_gettime),
                RF_BPF_ALLOW(__NR_gettimeofday),
                RF_BPF_ALLOW(__NR_getrandom),
                RF_BPF_ALLOW(__NR_brk),
                RF_BPF_ALLOW(__NR_munmap),
                RF_BPF_ALLOW(__NR_mremap),
                RF_BPF_ALLOW(__NR_madvise),
                RF_BPF_ALLOW(__NR_rt_sigreturn),
                RF_BPF_ALLOW(__NR_rt_sigprocmask),
                RF_BPF_ALLOW(__NR_futex),
                RF_BPF_ALLOW(__NR_restart_syscall),
                RF_BPF_ALLOW(__NR_getpid),
                RF_BPF_ALLOW(__NR_gettid),
                /* harmless, and what libc and sanitizer runtimes reach for */
                RF_BPF_ALLOW(__NR_rt_sigaction),
                RF_BPF_ALLOW_RUNTIME,
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        };
        static const struct sock_fprog prog = {.len = ARRAY_SIZE(f),
                                               .filter = (struct sock_filter *)f};
        return &prog;
}

/* What the egress child does while it may still open files and raise
 * rlimits (rf_fork_tied's prepare step): fds 3..8 are its listeners, the
 * event channel and the map channel by then, 9..11 the TLS snapshots, 12
 * the run CA keeper's socket (egress_spawn). */
#define EGRESS_FD_MODULE   9
#define EGRESS_FD_BUNDLE   10
#define EGRESS_FD_UPSTREAM 11
#define EGRESS_FD_KEEPER   12
/* how long the child waits for the keeper's export */
#define EGRESS_KEEPER_MS 5000
struct egress_prep {
        const struct egress_config *c;
        struct egress_config *mine;
        unsigned char *values; /* the injected values, copied across the fork */
};

/* fd as a sealed snapshot: left as it is when it is one (the upstream CA
 * file's), else — the module and the host's bundle are the state dir's
 * cache files (tls/trustmake.h), which nothing writes once made — copied
 * by the kernel into a new sealed memfd that takes its number, before
 * anything reads it. 0 or -errno. */
static int sealed_copy(int fd, size_t max, const char *name)
{
        if (memfd_sealed_size(fd, max, NULL) == 0)
                return 0;
        int s = rf_tls_snapshot(fd, max, name);
        if (s < 0)
                return s;
        int r = dup2(s, fd) < 0 ? negative_errno() : 0;
        close(s);
        return r;
}

/* A mapping of `len` bytes for one fork's copy of secrets: locked and out
 * of core dumps, NOT wiped on fork (the child must find the bytes there).
 * NULL with errno set. */
static unsigned char *fork_copy_map(size_t len)
{
        unsigned char *m =
                mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
                return NULL;
        (void)madvise(m, len, MADV_DONTDUMP);
        (void)mlock(m, len);
        return m;
}

static void fork_copy_unmap(unsigned char *m, size_t len)
{
        if (!m)
                return;
        explicit_bzero(m, len);
        munmap(m, len);
}

/*
 * The run CA, from its keeper (supervisor/run_tls.c) over `fd`: whatever a
 * predecessor killed mid-request left queued is dropped (the same export),
 * one request sent, one export received — into a mapping of this
 * process's own (locked, out of core dumps), imported into *ca, then wiped
 * and unmapped; the keeper's socket is closed by the caller. 0 or -errno.
 */
static int ca_from_keeper(int fd, const struct rf_tls_vtable *tls, struct rf_tls_ca **ca)
{
        unsigned char *m = fork_copy_map(RF_TLS_CA_EXPORT_MAX);
        if (!m)
                return negative_errno();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t n;
        int r = 0;
        while (recv(fd, m, RF_TLS_CA_EXPORT_MAX, MSG_DONTWAIT) > 0)
                ;
        if (send(fd, "E", 1, MSG_NOSIGNAL) != 1)
                r = negative_errno();
        else if ((r = poll(&p, 1, EGRESS_KEEPER_MS)) <= 0)
                r = r < 0 ? negative_errno() : -ETIMEDOUT;
        else if ((n = recv(fd, m, RF_TLS_CA_EXPORT_MAX, MSG_TRUNC | MSG_DONTWAIT)) <= 0 ||
                 (size_t)n > RF_TLS_CA_EXPORT_MAX)
                r = n < 0 ? negative_errno() : -EPROTO;
        else
                r = tls->ca_import(m, (size_t)n, ca);
        fork_copy_unmap(m, RF_TLS_CA_EXPORT_MAX);
        return r < 0 ? r : 0;
}

static int egress_prepare(void *ctx)
{
        struct egress_prep *p = ctx;
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        signal(SIGPIPE, SIG_IGN);
        /* the host's nameservers and addresses, read while files still open */
        if (!(p->mine = malloc(sizeof *p->mine)))
                return -ENOMEM;
        *p->mine = *p->c;
        if (p->c->n_inject) {
                /* this process's own injection table, its values in the copy
                 * made for this fork (not in the supervisor's secret memory,
                 * which the fork wiped) */
                struct inject_secret *v = calloc(p->c->n_inject, sizeof *v);
                if (!v)
                        return -ENOMEM;
                size_t off = 0;
                for (size_t i = 0; i < p->c->n_inject; i++) {
                        v[i] = p->c->inject[i];
                        v[i].value = p->values + off;
                        off += v[i].len;
                }
                p->mine->inject = v;
        }
        /* the run CA, from its keeper (the supervisor never holds it):
         * from then on its keys live in this process's CA handle only */
        p->mine->tls_ca_own = NULL;
        p->mine->tls_keeper_fd = -1;
        p->mine->tls = NULL;
        p->mine->tls_trust = NULL;
        if (p->c->tls_on) {
                /* the TLS module and the upstream trust, from the snapshots
                 * (fds 9-11), loaded here and kept for this process's life
                 * (nothing is opened after the lockdown); then those fds go */
                static struct rf_tls_module mod;
                char bpath[32], upath[32];
                snprintf(bpath, sizeof bpath, "/proc/self/fd/%d", EGRESS_FD_BUNDLE);
                snprintf(upath, sizeof upath, "/proc/self/fd/%d", EGRESS_FD_UPSTREAM);
                int r = sealed_copy(EGRESS_FD_MODULE, RF_TLS_MODULE_MAX, "ringfence-tls.so");
                if (r >= 0)
                        r = sealed_copy(EGRESS_FD_BUNDLE, RF_TLS_BUNDLE_MAX, "ca-bundle");
                if (r >= 0 && !mod.vt)
                        r = rf_tls_load_fd(EGRESS_FD_MODULE, &mod); /* init() too */
                if (r >= 0 &&
                    (r = memfd_sealed_size(EGRESS_FD_BUNDLE, RF_TLS_BUNDLE_MAX, NULL)) >= 0 &&
                    (p->c->tls_upstream_fd < 0 ||
                     (r = memfd_sealed_size(EGRESS_FD_UPSTREAM, RF_TLS_BUNDLE_MAX, NULL)) >= 0))
                        r = mod.vt->trust_load(bpath, p->c->tls_upstream_fd >= 0 ? upath : NULL,
                                               &p->mine->tls_trust);
                if (r >= 0)
                        r = ca_from_keeper(EGRESS_FD_KEEPER, mod.vt, &p->mine->tls_ca_own);
                for (int fd = EGRESS_FD_MODULE; fd <= EGRESS_FD_KEEPER; fd++)
                        (void)close(fd);
                if (r < 0)
                        return r;
                p->mine->tls = mod.vt;
        }
        read_host_facts(p->mine);
        /* file descriptors for the connections allowed (a client, an
         * upstream, a DNS socket and two pipes each), and no more — set
         * while root may still raise the hard limit */
        struct rlimit nofile = {.rlim_cur = 16 + 6 * (rlim_t)p->mine->max_conns,
                                .rlim_max = 16 + 6 * (rlim_t)p->mine->max_conns};
        if (setrlimit(RLIMIT_NOFILE, &nofile) < 0 && getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
                nofile.rlim_cur = nofile.rlim_max; /* unprivileged: as many as allowed */
                (void)setrlimit(RLIMIT_NOFILE, &nofile);
        }
        return 0;
}

pid_t egress_spawn(const struct egress_config *c, const struct egress_fds *fds, int *events_fd,
                   int *pidfd)
{
        int sp[2];

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
                return negative_errno();
        /* tied to the supervisor, root's uid and gid become nobody, no
         * capability, no_new_privs, the seccomp allowlist above: all of it
         * rf_fork_tied (shared/lockdown.h), which returns once it is done.
         * The child's fds: 3 HTTP, 4 SOCKS, 5 events, 6 and 7 the capture
         * listeners, 8 the synth map channel (each -1: closed) */
        struct egress_prep prep = {.c = c};
        /*
         * The injected values: the supervisor's copies live in wipe-on-fork
         * secret memory; the egress process gets them through one mapping
         * made for this fork only (locked, out of core dumps, not wiped on
         * fork), wiped and unmapped here as soon as the child is set up.
         * Nothing else is forked while it exists.
         */
        size_t vsize = 0;
        for (size_t i = 0; i < c->n_inject; i++)
                vsize += c->inject[i].len;
        if (vsize) {
                if (!(prep.values = fork_copy_map(vsize))) {
                        close_pair(sp);
                        return negative_errno();
                }
                size_t off = 0;
                for (size_t i = 0; i < c->n_inject; i++) {
                        memcpy(prep.values + off, c->inject[i].value, c->inject[i].len);
                        off += c->inject[i].len;
                }
        }
        /* TLS termination needs its CA's keeper, its module and its trust */
        if (c->tls_on && (c->tls_keeper_fd < 0 || c->tls_module_fd < 0 || c->tls_bundle_fd < 0)) {
                fork_copy_unmap(prep.values, vsize);
                close_pair(sp);
                return -EINVAL;
        }
        struct rf_lockdown how = {
                .what = "egress process",
                .arrange_fds = true,
                .fds = {-1, -1, -1, fds->http, fds->socks, sp[1], fds->cap4, fds->cap6,
                        fds->synth_rx, c->tls_on ? c->tls_module_fd : -1,
                        c->tls_on ? c->tls_bundle_fd : -1, c->tls_on ? c->tls_upstream_fd : -1,
                        c->tls_on ? c->tls_keeper_fd : -1},
                .n_fds = 13,
                .prepare = egress_prepare,
                .ctx = &prep,
                .set_ids = true,
                .uid = 65534,
                .gid = 65534,
                .drop_caps = true,
                .seccomp = egress_filter(),
                .pidfd = pidfd};
        pid_t pid = rf_fork_tied(&how, NULL);
        if (pid != 0)
                fork_copy_unmap(prep.values, vsize);
        if (pid < 0) {
                close_pair(sp);
                return pid;
        }
        if (pid > 0) {
                close(sp[1]);
                *events_fd = sp[0];
                return pid;
        }
        /* the map as the supervisor had it at the fork: this process's own
         * copy from now on (its heap is this process's) */
        struct synth_map map = {0};
        if (fds->synth)
                map = *fds->synth;
        struct egress_fds mine = {
                .http = fds->http >= 0 ? 3 : -1,
                .socks = fds->socks >= 0 ? 4 : -1,
                .cap4 = fds->cap4 >= 0 ? 6 : -1,
                .cap6 = fds->cap6 >= 0 ? 7 : -1,
                .synth_rx = fds->synth_rx >= 0 ? 8 : -1,
        };
        egress_loop(prep.mine, &mine, 5, &map);
}

/* ---- the supervisor's end of the event channel ------------------------------------ */

/* ---- the refusals of the run, for its end-of-run summary ------------------------ */

static struct {
        struct egress_refusals *t;
        int (*redact)(void *, const char *, char **);
        void *ctx;
} tally;

void egress_refusals_track(struct egress_refusals *t, int (*redact)(void *, const char *, char **),
                           void *ctx)
{
        tally.t = t;
        tally.redact = redact;
        tally.ctx = ctx;
        if (t && t->n == 0)
                t->storm = -1;
}

/* s (NULL: "") into out[n], redacted; cut at n - 1 bytes. */
static void tally_copy(char *out, size_t n, const char *s)
{
        char *red = NULL;
        if (!s)
                s = "";
        if (tally.redact && tally.redact(tally.ctx, s, &red) > 0 && red)
                s = red;
        snprintf(out, n, "%s", s);
        free(red);
}

static int64_t mono_now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * e counted into the pairs v[*n] (allocated here, EGRESS_REFUSALS_MAX
 * slots, once one came): added to an equal (dest, reason, fix) one, else
 * kept in a free slot, else only in *overflow. Returns the slot, or -1.
 */
static long tally_insert(struct egress_refusal **v, size_t *n, uint64_t *overflow,
                         const struct egress_refusal *e)
{
        for (size_t i = 0; i < *n; i++)
                if (!strcmp((*v)[i].dest, e->dest) && !strcmp((*v)[i].reason, e->reason) &&
                    !strcmp((*v)[i].fix, e->fix)) {
                        (*v)[i].count++;
                        return (long)i;
                }
        if ((!*v && !(*v = calloc(EGRESS_REFUSALS_MAX, sizeof **v))) || *n == EGRESS_REFUSALS_MAX) {
                (*overflow)++;
                return -1;
        }
        (*v)[*n] = *e;
        return (long)(*n)++;
}

/* One egress.deny with these fields (host, port, reason, fix), counted. */
static void tally_add(const struct audit_field *f, size_t nf)
{
        struct egress_refusals *t = tally.t;
        const char *host = NULL, *reason = NULL, *fix = NULL;
        int64_t port = 0;
        if (!t)
                return;
        for (size_t i = 0; i < nf; i++) {
                if (!strcmp(f[i].key, "host") && f[i].type == AUDIT_STR)
                        host = f[i].s;
                else if (!strcmp(f[i].key, "port") && f[i].type == AUDIT_INT)
                        port = f[i].i;
                else if (!strcmp(f[i].key, "reason") && f[i].type == AUDIT_STR)
                        reason = f[i].s;
                else if (!strcmp(f[i].key, "fix") && f[i].type == AUDIT_STR)
                        fix = f[i].s;
        }
        struct egress_refusal e = {.count = 1};
        char h[EGRESS_DEST_MAX];
        tally_copy(h, sizeof h - 8, host);
        if (h[0])
                snprintf(e.dest, sizeof e.dest, strchr(h, ':') ? "[%s]:%" PRId64 : "%s:%" PRId64, h,
                         port);
        else
                snprintf(e.dest, sizeof e.dest, "(malformed request)");
        tally_copy(e.reason, sizeof e.reason, reason);
        tally_copy(e.fix, sizeof e.fix, fix);
        t->total++;
        int64_t now = mono_now_ms();
        e.window_ms = now;
        e.in_window = 1;
        size_t had = t->n;
        long i = tally_insert(&t->v, &t->n, &t->overflow, &e);
        if (i < 0 || (size_t)i == had)
                return; /* not kept, or new: its window starts now */
        struct egress_refusal *x = &t->v[i];
        if (now - x->window_ms > EGRESS_STORM_WINDOW_MS) {
                x->window_ms = now;
                x->in_window = 1;
        } else if (++x->in_window >= EGRESS_STORM_COUNT && !x->stormed) {
                x->stormed = true;
                if (t->storm < 0)
                        t->storm = i;
        }
}

void egress_refusal_name_note(const char *name, const char *reason, const char *fix)
{
        struct egress_refusals *t = tally.t;
        struct egress_refusal e = {.count = 1};
        if (!t)
                return;
        tally_copy(e.dest, sizeof e.dest, name);
        if (!e.dest[0])
                snprintf(e.dest, sizeof e.dest, ".");
        tally_copy(e.reason, sizeof e.reason, reason);
        tally_copy(e.fix, sizeof e.fix, fix);
        t->names_total++;
        (void)tally_insert(&t->names, &t->n_names, &t->names_overflow, &e);
}

void egress_refusal_note(const struct audit_field *f, size_t nf)
{
        tally_add(f, nf);
}

int egress_refusals_storm(const struct egress_refusal **r)
{
        struct egress_refusals *t = tally.t;
        if (!t || t->storm < 0 || (size_t)t->storm >= t->n)
                return 0;
        *r = &t->v[t->storm];
        t->storm = -1;
        return 1;
}

/* s escaped for a terminal (the one display escaper) into out[size]. */
static void display_escape(const char *s, char *out, size_t size)
{
        out[0] = '\0';
        json_escape_for_message(out, size, s, strlen(s));
}

/* Most refusals first; equal counts in the order they came. */
static int by_count(const void *a, const void *b)
{
        const struct egress_refusal *x = *(const struct egress_refusal *const *)a,
                                    *y = *(const struct egress_refusal *const *)b;
        if (x->count != y->count)
                return x->count > y->count ? -1 : 1;
        return x < y ? -1 : x > y;
}

/* The EGRESS_SUMMARY_SHOWN most frequent of v[n], a line each, then "and N
 * more" refusals (`one`, `many`: the word for them) of `what`s ("destination",
 * "name"); `record` is the event that lists every one. */
static void print_pairs(FILE *f, const struct egress_refusal *v, size_t n, uint64_t overflow,
                        const char *one, const char *many, const char *what, const char *record)
{
        const struct egress_refusal *order[EGRESS_REFUSALS_MAX];
        if (!v)
                n = 0;
        for (size_t i = 0; i < n; i++)
                order[i] = &v[i];
        qsort(order, n, sizeof order[0], by_count);
        size_t shown = n < EGRESS_SUMMARY_SHOWN ? n : EGRESS_SUMMARY_SHOWN;
        for (size_t i = 0; i < shown; i++) {
                char d[6 * EGRESS_DEST_MAX + 1], r[6 * EGRESS_REASON_MAX + 1],
                        x[6 * EGRESS_FIX_MAX + 1];
                display_escape(order[i]->dest, d, sizeof d);
                display_escape(order[i]->reason, r, sizeof r);
                display_escape(order[i]->fix, x, sizeof x);
                fprintf(f, "  %s  %" PRIu64 "x  %s%s%s\n", d, order[i]->count, r,
                        x[0] ? "  -> " : "", x);
        }
        uint64_t rest = overflow;
        for (size_t i = shown; i < n; i++)
                rest += order[i]->count;
        if (rest)
                fprintf(f,
                        "  and %" PRIu64 " more %s of %zu%s other %s%s "
                        "(`ringfence audit` lists every %s)\n",
                        rest, rest == 1 ? one : many, n - shown, overflow ? "+" : "", what,
                        n - shown == 1 && !overflow ? "" : "s", record);
}

void egress_refusals_print(const struct egress_refusals *t, FILE *f)
{
        if (!t)
                return;
        if (t->total) {
                fprintf(f,
                        "ringfence: egress refused %" PRIu64 " time%s during the run "
                        "(destination, count, reason, what would allow it):\n",
                        t->total, t->total == 1 ? "" : "s");
                print_pairs(f, t->v, t->n, t->overflow, "refusal", "refusals", "destination",
                            "egress.deny");
        }
        if (t->names_total) {
                fprintf(f,
                        "ringfence: the run's resolver refused %" PRIu64 " quer%s during the run "
                        "(name, count, reason, what would allow it):\n",
                        t->names_total, t->names_total == 1 ? "y" : "ies");
                print_pairs(f, t->names, t->n_names, t->names_overflow, "refused query",
                            "refused queries", "name", "dns.refused");
        }
}

void egress_refusals_free(struct egress_refusals *t)
{
        free(t->v);
        t->v = NULL;
        t->n = 0;
        t->total = t->overflow = 0;
        free(t->names);
        t->names = NULL;
        t->n_names = 0;
        t->names_total = t->names_overflow = 0;
}

/* One record of a datagram (evwire.h): its answer (> 0 seq, 0
 * coalesced, -errno); *is_async says whether it wants none, *kill_run is
 * set by a secret.exfil whose binding kills. */
static int64_t event_record(const char *msg, size_t n, bool last, struct audit_emitter *emit,
                            const int64_t *async_fail, bool *is_async, bool *kill_run)
{
        struct egress_record r;
        struct rf_error err = {0};
        int64_t ans = egress_record_parse(msg, n, last, &r);
        *is_async = r.is_async;
        if (ans < 0)
                return ans;
        if (!r.is_async && *async_fail < 0)
                ans = *async_fail; /* the record it depends on failed: no record */
        else
                ans = emit ? audit_emit(emit, r.event, r.key && r.what ? r.key : NULL, r.what, r.f,
                                        r.n_fields, 0, &err)
                           : 1;
        if (!strcmp(r.event, "egress.deny"))
                tally_add(r.f, r.n_fields); /* refused, whether recorded or not */
        *kill_run |= r.kill;
        egress_record_free(&r);
        return ans;
}

int egress_event_serve(int fd, struct audit_emitter *emit, int64_t *async_fail)
{
        static char msg[EGRESS_EVENT_BATCH_MAX + 1];
        ssize_t n = recv(fd, msg, sizeof msg, MSG_DONTWAIT);
        if (n == 0)
                return -ECONNRESET;
        if (n < 0)
                return errno == EAGAIN ? 0 : negative_errno();
        bool kill_run = false, answer = false;
        int64_t ans = -EBADMSG;
        /* a longer datagram was cut, one of more records would hold the
         * log's lock longer than a batch may: malformed as a whole */
        size_t records = 1;
        for (const char *q = msg;
             (size_t)n <= EGRESS_EVENT_BATCH_MAX && (q = memchr(q, '\n', (size_t)(msg + n - q)));
             q++)
                records++;
        bool whole = (size_t)n <= EGRESS_EVENT_BATCH_MAX && records <= EGRESS_EVENT_RECORDS_MAX;
        const char *p = whole ? msg : msg + n;
        const char *end = msg + n;
        while (p < end) {
                bool last, is_async;
                size_t len = egress_batch_next(p, (size_t)(end - p), &last);
                int64_t a = event_record(p, len, last, emit, async_fail, &is_async, &kill_run);
                p += len + !last;
                if (!is_async && !last)
                        is_async = true; /* only the last is answered: this one failed */
                if (is_async && a < 0 && *async_fail == 0)
                        *async_fail = a; /* no answer awaited: reported with the next one */
                answer = !is_async;
                ans = a;
        }
        if (!whole)
                answer = true; /* malformed: the -EBADMSG a waiting sender needs */
        /* the records' text is not redacted yet (their fields are, when
         * written): it does not stay in this buffer */
        explicit_bzero(msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg);
        if (!answer)
                return kill_run ? 2 : 1;
        if (*async_fail < 0) {
                ans = *async_fail;
                *async_fail = 0;
        }
        if (send(fd, &ans, sizeof ans, MSG_NOSIGNAL | MSG_DONTWAIT) != sizeof ans)
                return kill_run ? 2 : -EPIPE;
        return kill_run ? 2 : 1;
}
