/*
 * daemon.c — `ringfence daemon`: the control API's privileged side.
 *
 * One poll loop: the listening socket, the clients (each identified by
 * SO_PEERCRED at accept), the request parser's socket (parser.c), a
 * signalfd. A client's bytes go to the parser; what comes back is checked
 * (wire_unpack), authorised (config.h) and done:
 *
 *   list / get             the registrations (supervisor/registry.h)
 *   start                  a `ringfence run` child: its own supervisor,
 *                          registration and control socket, PDEATHSIG
 *   kill / pause / resume  the run's control socket, acting for the caller
 *   revoke                 (kill records the caller as the actor)
 *   block / unblock        STATE_DIR/blocks
 *   proposal               a console.proposal record (the caller as actor)
 *   output                 the end of the run's log (STATE_DIR/logs/RUN.log)
 *   audit/verify           the log verified in a child, the result kept
 *   audit                  a `ringfence audit --json [--follow]` child
 *                          writing to the client: a slow reader stalls
 *                          only its own child, never the daemon
 *
 * Clients have DAEMON_CLIENT_MS to send a request; responses are written
 * without blocking (what does not fit is kept and written as the client
 * reads). One request per connection. An answer given before the whole
 * request was read (413, a malformed head) is followed by a lingering
 * close: the write side is shut and what the client still sends is read
 * and dropped (at most DAEMON_LINGER_MAX bytes, DAEMON_LINGER_MS) so its
 * send does not fail with ECONNRESET before it reads the answer.
 */
#include <dirent.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "console/parse.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/scope.h"
#include "daemon/wire.h"
#include "policy/policy.h"
#include "sandbox/cgroup.h"
#include "sandbox/hostuid.h"
#include "sandbox/plan.h"
#include "shared/json.h"
#include "shared/lockdown.h"
#include "shared/macro.h"
#include "shared/memfd.h"
#include "supervisor/control.h"
#include "supervisor/registry.h"
#include "supervisor/runwire.h"

#define DAEMON_GROUPS_MAX 256

struct client {
        int fd; /* -1: free */
        uint32_t id;
        struct ucred cred;
        gid_t groups[DAEMON_GROUPS_MAX]; /* SO_PEERGROUPS */
        size_t n_groups;
        char *in;
        size_t in_len, sent_len; /* bytes read; bytes the parser has seen */
        bool parsing;            /* the parser has our latest bytes */
        bool parse_wait;         /* bytes for the parser, held: it serves another uid now */
        char *out;
        size_t out_len, out_off;
        int64_t deadline;
        bool linger; /* after the answer: drain the unread request, then close */
        size_t drained;
        /* control requests in progress (a kill of one or many runs, or one
         * pause, resume, grant or revoke): the runs' control sockets, whose
         * answers the loop collects — a slow supervisor blocks no one */
        int *ctl_fds;
        char (*ctl_runs)[40];
        size_t n_ctl;
        bool ctl_one;    /* one run was named: no confirmation is an error */
        bool ctl_result; /* not a kill: the one answer is the response */
        struct json_buf killed;
        bool killed_any;
        /* a start waiting on its workspace check (a child as the caller):
         * the request, the child and the pipe it answers on */
        struct api_req *start;
        pid_t check_pid;
        int check_fd;
};

struct child_run {
        pid_t pid;
        uid_t uid;        /* who started it */
        uint64_t log_cap; /* its --log-max: reserved against its uid's state_bytes */
        char run[RF_RUN_ID_LEN + 1];
};

/* GET /v1/runs's facts, shared by every caller for LIST_FRESH_MS (a
 * console's pages poll it): the registrations and their liveness read
 * anew then, each supervisor's status asked at most every LIST_STATUS_MS
 * (and at once for a run new to the list or whose liveness changed); an
 * action on a run through the API drops it. */
#define LIST_FRESH_MS  1000
#define LIST_STATUS_MS 5000
struct listed {
        struct run_info info;
        bool live;
        char st[32];
        char status[CONTROL_MSG_MAX];
        int64_t status_ms;
};

/* The daemon's verification of its own log (GET /v1/audit/verify): done
 * by a child (audit_verify, as `ringfence audit verify`), whose answer,
 * one write under PIPE_BUF, is read when it is reaped; kept with the
 * fingerprint of the log it verified, so a view of an unchanged log
 * costs a directory read. */
struct verify_answer {
        uint64_t fp;
        int64_t at_ms; /* CLOCK_REALTIME */
        int rc, head_rc;
        struct audit_verified v;
        char err[512];
        char head[1024];
};
_Static_assert(sizeof(struct verify_answer) <= PIPE_BUF, "a verifier's answer is one write");

struct daemon {
        const char *state_dir;
        struct {
                pid_t pid; /* verifying now, 0: not */
                int fd;    /* its answer */
                bool have;
                struct verify_answer r;
        } verify;
        int state_fd; /* the state dir: its file system's free space (the reserve) */
        struct {
                struct listed *v;
                size_t n, cap;
                int64_t at_ms; /* 0: stale */
                bool whole;    /* the next refresh asks every supervisor */
        } list;
        const struct dconf *conf;
        char self[4096];      /* the ringfence binary */
        char sock_path[4096]; /* the control socket */
        int listen, parser, sfd;
        pid_t parser_pid;
        struct audit_log *log;
        struct client clients[DAEMON_CLIENTS_MAX];
        uint32_t next_id;
        struct child_run runs[4096];
        bool stopping;
        struct {
                pid_t pid; /* 0: free */
                uid_t uid;
        } streams[DAEMON_STREAMS_MAX]; /* audit streams: children that write to a client */
        unsigned starts;  /* runs started: the logs are pruned every DAEMON_PRUNE_EVERY */
        uid_t parser_uid; /* the parser's own uid (root daemons) */
        uid_t parser_for; /* whose bytes the parser has seen (when !parser_fresh) */
        bool parser_fresh;
        int parser_uid_lock;
};

static int64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- responses ------------------------------------------------------------------ */

static const char *reason_phrase(int s)
{
        switch (s) {
        case 200:
                return "OK";
        case 201:
                return "Created";
        case 400:
                return "Bad Request";
        case 403:
                return "Forbidden";
        case 404:
                return "Not Found";
        case 405:
                return "Method Not Allowed";
        case 408:
                return "Request Timeout";
        case 409:
                return "Conflict";
        case 411:
                return "Length Required";
        case 413:
                return "Content Too Large";
        case 431:
                return "Request Header Fields Too Large";
        case 503:
                return "Service Unavailable";
        default:
                return s >= 500 ? "Internal Server Error" : "Error";
        }
}

static void client_close(struct client *c)
{
        safe_close(c->fd);
        if (c->start) {
                if (c->check_pid > 0)
                        kill(c->check_pid, SIGKILL); /* reaped by reap() */
                safe_close(c->check_fd);
                api_req_clear(c->start);
                free(c->start);
        }
        for (size_t i = 0; i < c->n_ctl; i++)
                safe_close(c->ctl_fds[i]);
        free(c->ctl_fds);
        free(c->ctl_runs);
        json_buf_done(&c->killed);
        free(c->in);
        free(c->out);
        memset(c, 0, sizeof *c);
        c->fd = -1;
        c->check_fd = -1;
}

/* The answer is written: close, or for a lingering client shut the write
 * side, drop its input buffers and keep reading until it closes. */
static void client_done(struct client *c)
{
        if (!c->linger || shutdown(c->fd, SHUT_WR) < 0) {
                client_close(c);
                return;
        }
        free(c->in);
        free(c->out);
        c->in = c->out = NULL;
        c->in_len = c->sent_len = c->out_len = c->out_off = 0;
        c->deadline = now_ms() + DAEMON_LINGER_MS;
}

/* Queue the response (`body`, bl bytes of `type`, then a newline when
 * `nl`) and try to write it now; the loop writes the rest. */
static void respond_as(struct client *c, int status, const char *type, const char *body, size_t bl,
                       bool nl)
{
        char head[256];
        int hl = snprintf(head, sizeof head,
                          "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
                          "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                          status, reason_phrase(status), type, bl + nl);
        free(c->out);
        c->out = malloc((size_t)hl + bl + 1);
        if (!c->out) {
                client_close(c);
                return;
        }
        c->parse_wait = false; /* answered: nothing more goes to the parser */
        /* the answer gets its own time to be written: one that took long to
         * make (a long listing) is not cut by the request's deadline */
        c->deadline = now_ms() + DAEMON_CLIENT_MS;
        memcpy(c->out, head, (size_t)hl);
        memcpy(c->out + hl, body, bl);
        c->out[hl + bl] = '\n';
        c->out_len = (size_t)hl + bl + nl;
        c->out_off = 0;
        ssize_t n = send(c->fd, c->out, c->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0)
                c->out_off = (size_t)n;
        if (n < 0 && errno != EAGAIN)
                client_close(c);
        else if (c->out_off == c->out_len)
                client_done(c);
}

/* a JSON answer, with its newline */
static void respond(struct client *c, int status, const char *json)
{
        respond_as(c, status, "application/json", json, strlen(json), true);
}

static void respond_error(struct client *c, int status, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void respond_error(struct client *c, int status, const char *fmt, ...)
{
        char msg[512];
        struct json_buf j = {0};
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        json_buf_append(&j, "{\"error\":", 9);
        json_buf_append_string(&j, msg, strlen(msg));
        char tail[32];
        snprintf(tail, sizeof tail, ",\"status\":%d}", status);
        json_buf_append(&j, tail, strlen(tail));
        respond(c, status, j.error ? "{\"error\":\"out of memory\"}" : j.data);
        json_buf_done(&j);
}

/* ---- helpers ---------------------------------------------------------------------- */

/* append one record to the daemon's log; 0, or -errno (said on stderr) */
static int record(struct daemon *d, const char *run, const char *event, const struct audit_field *f,
                  size_t n)
{
        struct rf_error err = {0};
        int r = d->log ? audit_append(d->log, run, event, f, n, true, &err) : 0;
        if (r < 0)
                fprintf(stderr, "ringfence: daemon: cannot record %s: %s\n", event, err.msg);
        return r < 0 ? r : 0;
}

struct find {
        const char *run;
        struct run_info info;
        bool found, live;
};

static int find_cb(const struct run_info *info, bool live, void *ctx)
{
        struct find *f = ctx;
        if (strcmp(info->run, f->run))
                return 0;
        f->info = *info;
        f->found = true;
        f->live = live;
        return 1;
}

/* The caller's groups as the kernel had them when it connected (SO_PEERGROUPS),
 * its primary group first. */
static size_t groups_of(const struct client *c, gid_t *g, size_t max)
{
        size_t n = 0;
        g[n++] = c->cred.gid;
        for (size_t i = 0; i < c->n_groups && n < max; i++)
                g[n++] = c->groups[i];
        return n;
}

static bool allowed(const struct daemon *d, const struct client *c, enum api_op op,
                    const char *agent)
{
        gid_t g[DAEMON_GROUPS_MAX + 1];
        size_t n = groups_of(c, g, DAEMON_GROUPS_MAX + 1);
        return dconf_allowed(d->conf, c->cred.uid, g, n, op, agent);
}

/*
 * May the caller run in `path`? Checked in a child that resolves and opens
 * the path with the caller's file-system identity (fsuid, fsgid, its
 * groups) and no capabilities, while its real and effective uid stay root
 * — so the caller cannot signal or stop it —, through no symlink and no
 * /proc magic link; then it requires the directory to be the caller's
 * own: a run started by root acts, inside, as its workspace's owner, so a
 * directory the caller may merely write (/tmp, a group directory) would
 * lend it another user's identity. The child answers on a pipe with a
 * struct check_answer: 0, a positive errno, or NOT_OWNER, and the inode it
 * checked — the run must get that very directory (the request's
 * workspace_inode, supervisor/runwire.h), not
 * whatever the path names by then. The loop waits for the answer (at most
 * CALLER_CHECK_MS) while it serves others: a lookup the caller can stall
 * (a FUSE or NFS path) holds only its own request.
 */
#define NOT_OWNER       200
#define CALLER_CHECK_MS 5000

struct check_answer {
        int32_t err;
        uint64_t dev, ino;
};

/* rf_fork_tied's prepare step for the check child: the caller's
 * file-system identity and groups, while it still may set them. */
static int check_prepare(void *ctx)
{
        struct client *c = ctx;
        gid_t g[256];
        size_t n = groups_of(c, g, 256);
        if (setgroups(n, g) < 0)
                return -EPERM;
        (void)setfsgid(c->cred.gid);
        (void)setfsuid(c->cred.uid);
        if ((uid_t)setfsuid((uid_t)-1) != c->cred.uid)
                return -EPERM;
        return 0;
}

/* Start the check child for c->start; 0, or a positive errno. */
static int check_start(struct client *c)
{
        const char *path = c->start->workspace;
        int pfd[2];
        if (pipe2(pfd, O_CLOEXEC | O_NONBLOCK) < 0)
                return errno;
        /* no capability left (CAP_SYS_PTRACE would follow a root process's
         * /proc/PID/cwd; CAP_DAC_* are gone with fsuid), tied to the
         * daemon, nothing open but its answer pipe (fd 3) */
        struct rf_lockdown how = {.what = "workspace check",
                                  .arrange_fds = true,
                                  .fds = {-1, -1, -1, pfd[1]},
                                  .n_fds = 4,
                                  .prepare = check_prepare,
                                  .ctx = c,
                                  .drop_caps = true};
        pid_t pid = rf_fork_tied(&how, NULL);
        if (pid < 0) {
                close_pair(pfd);
                return (int)-pid;
        }
        if (pid == 0) {
                struct check_answer a = {.err = 0};
#ifdef RF_TEST_BUILD
                /* Test builds only: a lookup that hangs (a stalled FUSE or NFS
                 * path), to show it holds nothing but its own request */
                if (getenv("RINGFENCE_TEST_CHECK_STALL"))
                        pause();
#endif
                struct open_how oh = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                                      .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
                int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &oh, sizeof oh);
                struct stat st;
                if (fd < 0 || fstat(fd, &st) < 0)
                        a.err = errno; /* ELOOP: a symlink on the way */
                else if (st.st_uid != c->cred.uid)
                        a.err = NOT_OWNER;
                else if (faccessat(fd, ".", R_OK | W_OK | X_OK, AT_EACCESS) < 0)
                        a.err = errno;
                else {
                        a.dev = st.st_dev;
                        a.ino = st.st_ino;
                }
                _exit(write(3, &a, sizeof a) == (ssize_t)sizeof a ? 0 : 1);
        }
        close(pfd[1]);
        c->check_pid = pid;
        c->check_fd = pfd[0];
        c->deadline = now_ms() + CALLER_CHECK_MS;
        return 0;
}

static void json_run(struct json_buf *j, const struct run_info *r, const char *state)
{
        char num[64];
        json_buf_append(j, "{\"agent\":", 9);
        json_buf_append_string(j, r->agent, strlen(r->agent));
        json_buf_append(j, ",\"command\":", 11);
        json_buf_append_string(j, r->command, strlen(r->command));
        json_buf_append(j, ",\"on_behalf_of\":", 16);
        json_buf_append_string(j, r->on_behalf_of, strlen(r->on_behalf_of));
        snprintf(num, sizeof num, ",\"pid\":%llu,\"run\":", (unsigned long long)r->pid);
        json_buf_append(j, num, strlen(num));
        json_buf_append_string(j, r->run, strlen(r->run));
        snprintf(num, sizeof num, ",\"started_ms\":%lld,\"state\":", (long long)r->started_ms);
        json_buf_append(j, num, strlen(num));
        json_buf_append_string(j, state, strlen(state));
        json_buf_append(j, ",\"task\":", 8);
        json_buf_append_string(j, r->task, strlen(r->task));
        snprintf(num, sizeof num, ",\"uid\":%llu}", (unsigned long long)r->uid);
        json_buf_append(j, num, strlen(num));
}

/* ---- the operations ------------------------------------------------------------------ */

struct list_ctx {
        struct daemon *d;
        struct client *c;
        struct json_buf j;
        bool first;
};

/* registry_foreach into a new listing, reusing what the old one knew */
struct relist {
        struct listed *v;
        size_t n, cap;
};

static int relist_cb(const struct run_info *info, bool live, void *ctx)
{
        struct relist *r = ctx;
        if (r->n == r->cap) {
                size_t cap = r->cap ? r->cap * 2 : 64;
                struct listed *v = realloc(r->v, cap * sizeof *v);
                if (!v)
                        return -ENOMEM;
                r->v = v;
                r->cap = cap;
        }
        struct listed *e = &r->v[r->n++];
        e->info = *info;
        e->live = live;
        e->status_ms = 0;
        return 0;
}

/* after an authorised change through the API: the next listing reads the
 * registry and every supervisor anew (a caller without the right cannot
 * make the daemon do that) */
static void list_stale(struct daemon *d)
{
        d->list.at_ms = 0;
        d->list.whole = true;
}

static void list_refresh(struct daemon *d)
{
        int64_t now = now_ms();
        if (d->list.at_ms && now - d->list.at_ms < LIST_FRESH_MS)
                return;
        bool whole = d->list.whole;
        d->list.whole = false;
        struct relist r = {0};
        if (registry_foreach(d->state_dir, relist_cb, &r) < 0) {
                free(r.v);
                r = (struct relist){0};
        }
        /* the supervisors to ask: REGISTRY_BATCH_MAX at once */
        struct registry_query ask[REGISTRY_BATCH_MAX];
        size_t n_ask = 0;
        for (size_t i = 0; i < r.n; i++) {
                struct listed *e = &r.v[i];
                const struct listed *old = NULL;
                for (size_t k = 0; k < d->list.n && !old; k++) /* runs are listed in order */
                        if (!strcmp(d->list.v[(i + k) % d->list.n].info.run, e->info.run))
                                old = &d->list.v[(i + k) % d->list.n];
                if (!whole && old && old->live == e->live &&
                    now - old->status_ms < LIST_STATUS_MS) {
                        memcpy(e->st, old->st, sizeof e->st);
                        memcpy(e->status, old->status, sizeof e->status);
                        e->status_ms = old->status_ms;
                        continue;
                }
                e->status_ms = now;
                ask[n_ask++] = (struct registry_query){
                        .run = e->info.run,
                        .live = e->live,
                        .st = e->st,
                        .st_len = sizeof e->st,
                        .status = e->status,
                        .status_len = sizeof e->status,
                };
                if (n_ask == REGISTRY_BATCH_MAX) {
                        registry_state_batch(d->state_dir, ask, n_ask);
                        n_ask = 0;
                }
        }
        registry_state_batch(d->state_dir, ask, n_ask);
        free(d->list.v);
        d->list.v = r.v;
        d->list.n = r.n;
        d->list.cap = r.cap;
        d->list.at_ms = now;
}

static int list_one(struct list_ctx *l, const struct listed *e)
{
        const struct run_info *info = &e->info;
        if (!allowed(l->d, l->c, API_LIST_RUNS, info->agent))
                return 0;
        const char *st = e->st, *status = e->status;
        json_buf_append(&l->j, l->first ? "" : ",", l->first ? 0 : 1);
        l->first = false;
        json_run(&l->j, info, st);
        /* what this caller may do to the run (a console shows those
         * buttons only), and what its supervisor says of it */
        static const enum api_op ops[] = {API_GET_RUN,    API_KILL_RUN,   API_PAUSE_RUN,
                                          API_RESUME_RUN, API_GRANT_RUN,  API_REVOKE_SECRET,
                                          API_AUDIT,      API_BLOCK_AGENT};
        l->j.len--; /* reopen the object */
        json_buf_append(&l->j, ",\"may\":[", 8);
        bool first = true;
        for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
                if (!allowed(l->d, l->c, ops[i], info->agent))
                        continue;
                const char *name = api_op_name(ops[i]);
                json_buf_append(&l->j, first ? "\"" : ",\"", first ? 1 : 2);
                json_buf_append(&l->j, name, strlen(name));
                json_buf_append(&l->j, "\"", 1);
                first = false;
        }
        json_buf_append(&l->j, "]", 1);
        if (status[0] == '{') {
                json_buf_append(&l->j, ",\"supervisor\":", 14);
                json_buf_append(&l->j, status, strlen(status));
        }
        json_buf_append(&l->j, "}", 1);
        return 0;
}

static void op_list(struct daemon *d, struct client *c)
{
        struct list_ctx l = {.d = d, .c = c, .first = true};
        json_buf_append(&l.j, "{\"runs\":[", 9);
        list_refresh(d);
        for (size_t i = 0; i < d->list.n; i++)
                (void)list_one(&l, &d->list.v[i]);
        json_buf_append(&l.j, "]}", 2);
        respond(c, 200, l.j.error ? "{}" : l.j.data);
        json_buf_done(&l.j);
}

struct old_log {
        char name[64];
        time_t mtime;
};

static int old_cmp(const void *a, const void *b)
{
        const struct old_log *x = a, *y = b;
        return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

/* registry_foreach: the ids of the live runs (of `agent`, when set) */
struct live_runs {
        const char *agent;
        char (*runs)[40];
        size_t n, cap;
};

static int live_cb(const struct run_info *info, bool live, void *ctx)
{
        struct live_runs *a = ctx;
        if (!live || (a->agent && strcmp(info->agent, a->agent)))
                return 0;
        if (a->n == a->cap) {
                size_t cap = a->cap ? 2 * a->cap : 64;
                char(*nr)[40] = realloc(a->runs, cap * sizeof *nr);
                if (!nr)
                        return 1;
                a->runs = nr;
                a->cap = cap;
        }
        memcpy(a->runs[a->n++], info->run, 40);
        return 0;
}

/* Keep STATE_DIR/logs to DAEMON_LOGS_MAX files: the oldest logs of runs that
 * are over go first (a caller starting runs cannot fill the disk the audit
 * log lives on with them). */
static void prune_logs(const struct daemon *d)
{
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/logs", d->state_dir);
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *dd = dfd >= 0 ? fdopendir(dfd) : NULL;
        if (!dd) {
                if (dfd >= 0)
                        close(dfd);
                return;
        }
        struct old_log *v = NULL;
        size_t n = 0;
        struct dirent *e;
        while ((e = readdir(dd))) {
                struct stat st;
                size_t l = strlen(e->d_name);
                if (l != RF_RUN_ID_LEN + 4 || strcmp(e->d_name + RF_RUN_ID_LEN, ".log") ||
                    fstatat(dirfd(dd), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if ((n & (n - 1)) == 0) { /* 0, 1, 2, 4, ...: room doubles */
                        struct old_log *nv = realloc(v, (n ? 2 * n : 1) * sizeof *nv);
                        if (!nv)
                                break;
                        v = nv;
                }
                snprintf(v[n].name, sizeof v[n].name, "%s", e->d_name);
                v[n++].mtime = st.st_mtime;
        }
        size_t drop = n > DAEMON_LOGS_MAX ? n - DAEMON_LOGS_MAX : 0;
        if (drop) {
                /* the runs still going keep their logs */
                struct live_runs live = {0};
                registry_foreach(d->state_dir, live_cb, &live);
                for (size_t i = 0; i < n; i++)
                        for (size_t k = 0; k < live.n; k++)
                                if (!strncmp(v[i].name, live.runs[k], RF_RUN_ID_LEN))
                                        v[i].name[0] = '\0';
                free(live.runs);
                qsort(v, n, sizeof *v, old_cmp);
                for (size_t i = 0; i < n && drop > 0; i++)
                        if (v[i].name[0] && unlinkat(dirfd(dd), v[i].name, 0) == 0)
                                drop--;
        }
        free(v);
        closedir(dd);
}

/* Fork a child of the daemon that dies with it, as `how` says
 * (rf_fork_tied): its pid, 0 in the child, or -1 with c answered 500. */
static pid_t fork_tied(struct client *c, const struct rf_lockdown *how)
{
        int step = 0;
        pid_t pid = rf_fork_tied(how, &step);
        if (pid < 0) {
                respond_error(c, 500, "cannot start the %s (%s): %s", how->what,
                              rf_lockdown_step_name(step), strerror((int)-pid));
                return -1;
        }
        return pid;
}

/* What a start gets: the limits it asked for, held to its ceiling. */
struct start_limits {
        uint64_t memory, pids, cpus_milli, timeout_ms, log_max;
};

#define DAEMON_LOG_MIN 4096 /* a start needs this much of its uid's state_bytes left */

/*
 * Bytes of STATE_DIR/logs that count against `uid` (logs it owns: a
 * non-root caller's run log is chowned to it at start): the logs of its
 * runs that are over, plus, for each run still going, its whole --log-max
 * (reserved: the run may still write that much).
 */
static uint64_t state_bytes_of(const struct daemon *d, uid_t uid)
{
        uint64_t used = 0;
        for (size_t i = 0; i < ARRAY_SIZE(d->runs); i++)
                if (d->runs[i].pid > 0 && d->runs[i].run[0] && d->runs[i].uid == uid)
                        used += d->runs[i].log_cap;
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/logs", d->state_dir);
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *dd = dfd >= 0 ? fdopendir(dfd) : NULL;
        if (!dd) {
                safe_close(dfd);
                return used;
        }
        struct dirent *e;
        while ((e = readdir(dd))) {
                struct stat st;
                if (strlen(e->d_name) != RF_RUN_ID_LEN + 4 ||
                    fstatat(dirfd(dd), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISREG(st.st_mode) || st.st_uid != uid)
                        continue;
                bool live = false;
                for (size_t i = 0; i < ARRAY_SIZE(d->runs) && !live; i++)
                        live = d->runs[i].pid > 0 && d->runs[i].uid == uid &&
                               !strncmp(d->runs[i].run, e->d_name, RF_RUN_ID_LEN);
                if (!live)
                        used += (uint64_t)st.st_size;
        }
        closedir(dd);
        return used;
}

/* Free bytes of the file system under `fd` (f_bavail: what any writer
 * may still use), the reserve on it, and whether it reports a size. */
static int fs_room(const struct dconf *conf, int fd, uint64_t *free_b, uint64_t *reserve)
{
        struct statvfs sv;
        uint64_t fs_bytes;
        if (fstatvfs(fd, &sv) < 0)
                return -errno;
        if (sv.f_blocks == 0) /* no size reported (a pseudo file system): no reserve to keep */
                return 0;
        if (__builtin_mul_overflow((uint64_t)sv.f_bavail, (uint64_t)sv.f_frsize, free_b))
                *free_b = UINT64_MAX;
        if (__builtin_mul_overflow((uint64_t)sv.f_blocks, (uint64_t)sv.f_frsize, &fs_bytes))
                fs_bytes = UINT64_MAX;
        *reserve = dconf_reserve_bytes(conf, fs_bytes);
        return 1;
}

/*
 * Room in the state dir for the logs of runs of uids other than root: the
 * free space of its file system (and of STATE_DIR/logs', if that is
 * another one: the less of the two) less the reserve kept there for root
 * (ceiling.state_reserve) and less what the runs going of uids other than
 * root may still write to their logs (each one's cap less what it wrote).
 * 0 with *room (UINT64_MAX: no file system reports a size), *free_b and
 * *reserve (of the file system with the least room) and *pending set, or
 * -errno.
 */
static int state_room(const struct daemon *d, uint64_t *room, uint64_t *free_b, uint64_t *reserve,
                      uint64_t *pending)
{
        _cleanup_close_ int lfd =
                openat(d->state_fd, "logs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        *room = *free_b = UINT64_MAX;
        *reserve = *pending = 0;
        for (size_t i = 0; i < ARRAY_SIZE(d->runs); i++) {
                const struct child_run *cr = &d->runs[i];
                char name[RF_RUN_ID_LEN + 8];
                struct stat st;
                if (cr->pid <= 0 || !cr->run[0] || cr->uid == 0)
                        continue;
                snprintf(name, sizeof name, "%s.log", cr->run);
                uint64_t written = lfd >= 0 && fstatat(lfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0
                                           ? (uint64_t)st.st_size
                                           : 0;
                *pending += cr->log_cap > written ? cr->log_cap - written : 0;
        }
        struct stat sst, lst;
        int fds[2] = {d->state_fd, lfd};
        size_t n = lfd >= 0 && fstat(d->state_fd, &sst) == 0 && fstat(lfd, &lst) == 0 &&
                                   sst.st_dev != lst.st_dev
                           ? 2
                           : 1;
        for (size_t i = 0; i < n; i++) {
                uint64_t fr = 0, res = 0;
                int r = fs_room(d->conf, fds[i], &fr, &res);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                uint64_t kept = res > UINT64_MAX - *pending ? UINT64_MAX : res + *pending;
                uint64_t left = fr > kept ? fr - kept : 0;
                if (left < *room) {
                        *room = left;
                        *free_b = fr;
                        *reserve = res;
                }
        }
        return 0;
}

/* A duration in ms as the largest unit that divides it ("1h", "90s"). */
static void duration_text(uint64_t ms, char *buf, size_t len)
{
        static const struct {
                uint64_t ms;
                const char *unit;
        } u[] = {{3600000, "h"}, {60000, "m"}, {1000, "s"}, {1, "ms"}};
        size_t i = 0;
        while (ms && ms % u[i].ms)
                i++;
        snprintf(buf, len, "%llu%s", (unsigned long long)(ms / u[i].ms), u[i].unit);
}

/* One limit of a start: what the request asked for (`asked`, text, may be
 * ""), held to `ceiling` (0: none) for a caller other than root. 0 with
 * *out set, or -1 with the refusal sent. */
static int start_limit(struct client *c, const char *key, const char *asked, uint64_t ceiling,
                       const char *ceiling_text, uint64_t *out)
{
        uint64_t v = 0;
        int r = 0;
        if (!asked[0]) {
                *out = ceiling;
                return 0;
        }
        if (!strcmp(key, "memory"))
                r = parse_size(asked, &v);
        else if (!strcmp(key, "cpus"))
                r = parse_cpus(asked, &v);
        else {
                char *end = NULL;
                errno = 0;
                unsigned long long x = strtoull(asked, &end, 10);
                r = errno || !end || *end || asked[0] == '-' ? -EINVAL : 0;
                v = x;
        }
        if (r < 0 || v == 0) {
                respond_error(c, 400, "%s: %s is not a %s", key, asked,
                              key[0] == 'm'   ? "size such as \"512M\""
                              : key[0] == 'c' ? "number of CPUs such as \"1.5\""
                                              : "number of processes");
                return -1;
        }
        if (c->cred.uid != 0 && ceiling && v > ceiling) {
                respond_error(c, 403,
                              "%s: %s is above uid %u's ceiling of %s (a request can only "
                              "narrow it: the grant's or the ceiling's %s)",
                              key, asked, (unsigned)c->cred.uid, ceiling_text, key);
                return -1;
        }
        *out = v;
        return 0;
}

/*
 * What a start must pass — before its workspace check and again after it
 * (the agent may have been blocked meanwhile). 0 with *lim and
 * sec[0..q->n_secrets) set, or -1 with the refusal sent.
 */
static int start_admissible(struct daemon *d, struct client *c, const struct api_req *q,
                            struct start_limits *lim, const struct dconf_secret **sec)
{
        const struct dconf *conf = d->conf;
        char why[512];

        if (!allowed(d, c, API_START_RUN, q->agent)) {
                respond_error(c, 403, "uid %u may not start runs of agent %s",
                              (unsigned)c->cred.uid, q->agent);
                return -1;
        }
        if (registry_blocked(d->state_dir, q->agent, why, sizeof why) != 0) {
                respond_error(c, 409, "%s", why);
                return -1;
        }
        /* one uid cannot take the whole run table (4096) from the others */
        size_t live = 0;
        for (size_t i = 0; i < ARRAY_SIZE(d->runs); i++)
                live += d->runs[i].pid > 0 && d->runs[i].run[0] && d->runs[i].uid == c->cred.uid;
        if (c->cred.uid != 0 && live >= conf->runs_per_uid) {
                respond_error(c, 503, "uid %u has %zu runs going (ceiling.runs_per_uid)",
                              (unsigned)c->cred.uid, live);
                return -1;
        }
        /* the operator's ceiling: a request can only narrow it */
        for (size_t i = 0; i < q->n_allow_hosts; i++) {
                bool in = false;
                for (size_t k = 0; k < conf->n_allow_hosts; k++)
                        in |= !strcmp(conf->allow_hosts[k], q->allow_hosts[i]);
                if (!in && c->cred.uid != 0) {
                        respond_error(c, 403,
                                      "allow_hosts: %s is beyond the operator's ceiling "
                                      "(ceiling.allow_hosts)",
                                      q->allow_hosts[i]);
                        return -1;
                }
        }
        /* what the parser checked, again: it is the unprivileged side */
        for (size_t i = 0; i < q->n_ro + q->n_rw; i++)
                if ((i < q->n_ro ? q->ro[i] : q->rw[i - q->n_ro])[0] != '/') {
                        respond_error(c, 400, "ro, rw: absolute paths");
                        return -1;
                }
        /* profiles and static names: only the operator's (a profile's hosts
         * are granted with it; a NAME:IP could reach any address under an
         * allowed name) */
        for (size_t i = 0; c->cred.uid != 0 && i < q->n_profiles + q->n_add_hosts; i++) {
                bool prof = i < q->n_profiles;
                const char *want = prof ? q->profiles[i] : q->add_hosts[i - q->n_profiles];
                char **have = prof ? conf->profiles : conf->add_hosts;
                size_t nh = prof ? conf->n_profiles : conf->n_add_hosts, k = 0;
                while (k < nh && strcmp(have[k], want))
                        k++;
                if (k == nh) {
                        respond_error(c, 403,
                                      "%s: %s is beyond the operator's ceiling (ceiling.%s)",
                                      prof ? "profiles" : "add_hosts", want,
                                      prof ? "profiles" : "add_hosts");
                        return -1;
                }
        }
        /* resources: the grant's limits (or the ceiling's), which a request
         * can only lower; every API run gets a memory and a pids limit */
        gid_t g[DAEMON_GROUPS_MAX + 1];
        size_t ng = groups_of(c, g, DAEMON_GROUPS_MAX + 1);
        struct dconf_limits l = dconf_limits_for(conf, c->cred.uid, g, ng, q->agent);
        char mem_text[32], cpu_text[32], pid_text[32];
        snprintf(mem_text, sizeof mem_text, "%lluK", (unsigned long long)(l.memory >> 10));
        snprintf(cpu_text, sizeof cpu_text, "%llu.%03llu", (unsigned long long)l.cpus_milli / 1000,
                 (unsigned long long)l.cpus_milli % 1000);
        snprintf(pid_text, sizeof pid_text, "%llu", (unsigned long long)l.pids);
        if (start_limit(c, "memory", q->memory, l.memory, mem_text, &lim->memory) < 0 ||
            start_limit(c, "pids", q->pids, l.pids, pid_text, &lim->pids) < 0 ||
            start_limit(c, "cpus", q->cpus, l.cpus_milli, cpu_text, &lim->cpus_milli) < 0)
                return -1;
        uint64_t timeout = 0;
        if (q->timeout[0] && parse_duration(q->timeout, &timeout) < 0) {
                respond_error(c, 400, "timeout: a duration such as \"10m\"");
                return -1;
        }
        if (l.timeout_ms && (!timeout || timeout > l.timeout_ms)) {
                if (timeout) {
                        char max_text[32];
                        duration_text(l.timeout_ms, max_text, sizeof max_text);
                        respond_error(c, 403,
                                      "timeout: %s is above uid %u's ceiling of %s (a request can "
                                      "only narrow it: the grant's limits.timeout or the "
                                      "ceiling's max_timeout)",
                                      q->timeout, (unsigned)c->cred.uid, max_text);
                        return -1;
                }
                timeout = l.timeout_ms;
        }
        lim->timeout_ms = timeout;
        /* the log: its cap, within what is left of the uid's state_bytes
         * (root's runs are not counted: a uid that filled its share cannot
         * keep root from starting runs) */
        lim->log_max = l.log_bytes;
        if (c->cred.uid != 0) {
                uint64_t used = state_bytes_of(d, c->cred.uid);
                uint64_t left = used < l.state_bytes ? l.state_bytes - used : 0;
                if (left < DAEMON_LOG_MIN) {
                        respond_error(c, 403,
                                      "uid %u's run logs take %llu of its %llu bytes of the state "
                                      "dir (limits.state_bytes): no room for another run's log",
                                      (unsigned)c->cred.uid, (unsigned long long)used,
                                      (unsigned long long)l.state_bytes);
                        return -1;
                }
                if (lim->log_max > left)
                        lim->log_max = left;
                /* and within the state dir's file system, less the reserve
                 * kept there for root: uids other than root together cannot
                 * fill the disk the audit log is written to (root's runs
                 * would be refused, 125, when their records cannot be) */
                uint64_t room, free_b, reserve, pending;
                int e = state_room(d, &room, &free_b, &reserve, &pending);
                if (e < 0) {
                        respond_error(c, 500, "cannot read the state dir's free space: %s",
                                      strerror(-e));
                        return -1;
                }
                if (room < DAEMON_LOG_MIN) {
                        respond_error(c, 403,
                                      "the state dir's file system has %llu bytes free, of which "
                                      "%llu are kept for root's runs (ceiling.state_reserve) and "
                                      "%llu may still be written to the logs of runs going: no "
                                      "room for another run's log",
                                      (unsigned long long)free_b, (unsigned long long)reserve,
                                      (unsigned long long)pending);
                        return -1;
                }
                if (lim->log_max > room)
                        lim->log_max = room;
        }
        /* secrets: only the operator's, each on its ACL */
        for (size_t i = 0; i < q->n_secrets; i++)
                if (!(sec[i] = dconf_secret_for(conf, q->secrets[i], q->agent, c->cred.uid))) {
                        respond_error(c, 403, "secret %s: not granted to uid %u for agent %s",
                                      q->secrets[i], (unsigned)c->cred.uid, q->agent);
                        return -1;
                }
        return 0;
}

/*
 * The overlay of a start: what the caller asked, within what
 * start_admissible allowed (lim, the operator's secret bindings sec[]),
 * set through the policy module's own setters, as `ringfence run`'s flags
 * are. 0 or -errno with err set.
 */
static int request_overlay(const struct api_req *q, const struct start_limits *lim,
                           const struct dconf_secret *const *sec, struct rf_policy *o,
                           struct rf_error *err)
{
        char abs[PATH_MAX], num[32];
        int r;

        if ((r = policy_set_string(&o->agent, q->agent, POLICY_IDENT_MAX, err)) < 0)
                return r;
        if ((r = path_absolute("/", q->workspace, abs, sizeof abs)) < 0 ||
            (r = policy_set_string(&o->workspace, abs, PATH_MAX, err)) < 0)
                return err->msg[0] ? r : rf_error_set(err, r, "workspace: not a usable path");
        /* the limits, always given: on a cgroup v1 host the memory
         * controller serves only a limit asked for */
        snprintf(num, sizeof num, "%llu", (unsigned long long)lim->memory);
        if ((r = policy_set_limit(o, "limits.memory", num, err)) < 0)
                return r;
        snprintf(num, sizeof num, "%llu", (unsigned long long)lim->pids);
        if ((r = policy_set_limit(o, "limits.pids", num, err)) < 0)
                return r;
        if (lim->cpus_milli) {
                snprintf(num, sizeof num, "%llu.%03llu", (unsigned long long)lim->cpus_milli / 1000,
                         (unsigned long long)lim->cpus_milli % 1000);
                if ((r = policy_set_limit(o, "limits.cpus", num, err)) < 0)
                        return r;
        }
        if (lim->timeout_ms) {
                snprintf(num, sizeof num, "%llums", (unsigned long long)lim->timeout_ms);
                if ((r = policy_set_limit(o, "limits.timeout", num, err)) < 0)
                        return r;
        }
        if ((q->task[0] && (r = policy_set_string(&o->task, q->task, POLICY_IDENT_MAX, err)) < 0) ||
            (q->on_behalf_of[0] &&
             (r = policy_set_string(&o->on_behalf_of, q->on_behalf_of, POLICY_IDENT_MAX, err)) < 0))
                return r;
        for (size_t i = 0; i < q->n_allow_hosts; i++)
                if ((r = policy_add_net_rule(o, q->allow_hosts[i], err)) < 0)
                        return r;
        for (size_t i = 0; i < q->n_env; i++)
                if ((r = policy_add_env_text(o, "env", q->env[i], err)) < 0)
                        return r;
        /* the run's listener lets only the caller's uid (and root) in */
        for (size_t i = 0; i < q->n_publish; i++)
                if ((r = policy_add_publish_text(o, "publish", q->publish[i], err)) < 0)
                        return r;
        /* opened by the run as the caller (caller_uid), never as root */
        for (size_t i = 0; i < q->n_ro + q->n_rw; i++) {
                bool ro = i < q->n_ro;
                const char *p = ro ? q->ro[i] : q->rw[i - q->n_ro];
                if ((r = path_absolute("/", p, abs, sizeof abs)) < 0)
                        return rf_error_set(err, r, "%s: %.80s: not a usable path",
                                            ro ? "ro" : "rw", p);
                r = ro ? policy_add_path(&o->read_only, &o->n_read_only, abs, err)
                       : policy_add_path(&o->read_write, &o->n_read_write, abs, err);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < q->n_add_hosts; i++)
                if ((r = policy_add_net_host(o, q->add_hosts[i], err)) < 0)
                        return r;
        /* the operator's bindings, which the caller names and never sees;
         * two of one delivery and name would be one replacing the other,
         * as a policy file may not have them either */
        for (size_t i = 0; i < q->n_secrets; i++) {
                char *b = strdup(sec[i]->binding);
                size_t had = o->n_secrets;
                if (!b)
                        return -ENOMEM;
                if ((r = policy_add_secret(o, b, err)) < 0) {
                        free(b);
                        return r;
                }
                if (o->n_secrets == had)
                        return rf_error_set(err, -EINVAL,
                                            "secrets: %s binds the name an earlier secret of "
                                            "the start binds, the same way (one binding per "
                                            "name and delivery)",
                                            q->secrets[i]);
        }
        return 0;
}

/*
 * The start's request for its supervisor (supervisor/runwire.h) in a
 * sealed memfd: an fd, or -errno with err set when the request is at
 * fault.
 */
static int request_memfd(const struct daemon *d, const struct client *c, const struct api_req *q,
                         const char *run, const struct start_limits *lim,
                         const struct dconf_secret *const *sec, dev_t ws_dev, ino_t ws_ino,
                         struct rf_error *err)
{
        _cleanup_policy_ struct rf_policy *o = policy_new();
        _cleanup_free_ char *doc = NULL;
        int r;

        if (!o)
                return -ENOMEM;
        if ((r = request_overlay(q, lim, sec, o, err)) < 0)
                return r;
        struct run_wire w = {
                .state_dir = (char *)d->state_dir, /* only read */
                .caller_uid = c->cred.uid,
                /* a caller other than root: the inode checked as it */
                .expect_ws = c->cred.uid != 0,
                .ws_dev = (uint64_t)ws_dev,
                .ws_ino = (uint64_t)ws_ino,
                .log_max = lim->log_max,
                .mask_output = true,
                .keep_state = q->keep_state,
                .overlay = o,
                /* applied after the rest: a profile finds the caller's
                 * commands on the PATH its env asked for */
                .profiles = q->profiles,
                .n_profiles = q->n_profiles,
                .argv = q->argv,
                .argc = q->argc,
        };
        snprintf(w.run_id, sizeof w.run_id, "%s", run);
        if ((r = run_wire_to_json(&w, &doc)) < 0)
                return r;
        int fd = memfd_new("ringfence-request");
        if (fd >= 0 && ((r = fd_write_all(fd, doc, strlen(doc))) < 0 || (r = memfd_seal(fd)) < 0))
                fd = (close(fd), r);
        explicit_bzero(doc, strlen(doc)); /* the caller's environment values */
        return fd;
}

/* Start the run: the request is admissible and its workspace, for a caller
 * other than root, is the inode ws_dev:ws_ino it checked. */
static void start_go(struct daemon *d, struct client *c, const struct api_req *q, dev_t ws_dev,
                     ino_t ws_ino)
{
        char run[RF_RUN_ID_LEN + 1];
        struct start_limits lim = {0};
        const struct dconf_secret *sec[API_SECRETS_MAX];
        char logp[4200];

        if (start_admissible(d, c, q, &lim, sec) < 0)
                return;
        if (rf_run_id_new(run) < 0) {
                respond_error(c, 500, "cannot make a run id");
                return;
        }
        snprintf(logp, sizeof logp, "%s/logs", d->state_dir);
        (void)mkdir(logp, 0700);
        /* a pass over the logs (and, past the cap, over the live runs)
         * costs ~20 ms with 1,000 runs alive: once every few starts, so
         * the cap is exceeded by fewer than DAEMON_PRUNE_EVERY logs */
        if (d->starts++ % DAEMON_PRUNE_EVERY == 0)
                prune_logs(d);
        snprintf(logp, sizeof logp, "%s/logs/%s.log", d->state_dir, run);
        size_t slot = 0;
        while (slot < ARRAY_SIZE(d->runs) && d->runs[slot].pid > 0)
                slot++;
        if (slot == ARRAY_SIZE(d->runs)) {
                respond_error(c, 503, "too many runs");
                return;
        }
        /* what the caller asked goes to the supervisor typed, in a sealed
         * memfd (supervisor/runwire.h), not in its command line (every
         * local user may read that): it runs `ringfence run --request-fd 3` */
        struct rf_error err = {0};
        int afd = request_memfd(d, c, q, run, &lim, sec, ws_dev, ws_ino, &err);
        if (afd < 0) {
                if (afd == -ENOMEM || !err.msg[0])
                        respond_error(c, 500, "cannot pass the run's request: %s", strerror(-afd));
                else {
                        char line[RF_ERROR_MSG_MAX + RF_ERROR_PATH_MAX + 64];
                        rf_error_format(&err, line, sizeof line);
                        respond_error(c, 400, "%s", line);
                }
                return;
        }
        static const char *const run_av[] = {"ringfence", "run", "--request-fd", "3", NULL};
        /* the run's supervisor: dies with the daemon (and its run with it);
         * stdin /dev/null, its output to the log */
        int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        int lf = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
        /* a caller's log is its own (file owner): what counts against its
         * state_bytes; the logs directory stays root's 0700 */
        if (nul < 0 || lf < 0 || (c->cred.uid != 0 && fchown(lf, c->cred.uid, (gid_t)-1) < 0)) {
                respond_error(c, 500, "cannot open the run's log: %s", strerror(errno));
                safe_close(nul);
                safe_close(lf);
                safe_close(afd);
                return;
        }
        struct rf_lockdown how = {.what = "run's supervisor",
                                  .arrange_fds = true,
                                  .fds = {nul, lf, lf, afd},
                                  .n_fds = 4,
                                  .keep_dumpable = true};
        pid_t pid = fork_tied(c, &how);
        safe_close(nul);
        safe_close(lf);
        safe_close(afd);
        if (pid < 0)
                return;
        if (pid == 0) {
                (void)setsid();
                sigset_t none;
                sigemptyset(&none);
                sigprocmask(SIG_SETMASK, &none, NULL);
                signal(SIGPIPE, SIG_DFL);
                execv(d->self, (char *const *)run_av);
                _exit(127);
        }
        d->runs[slot].pid = pid;
        d->runs[slot].uid = c->cred.uid;
        d->runs[slot].log_cap = lim.log_max;
        memcpy(d->runs[slot].run, run, sizeof run);
        struct audit_field f[] = {
                {.key = "actor_uid", .type = AUDIT_UINT, .u = c->cred.uid},
                {.key = "actor_pid", .type = AUDIT_UINT, .u = (uint64_t)c->cred.pid},
                {.key = "agent", .type = AUDIT_STR, .s = q->agent},
                {.key = "command", .type = AUDIT_STR, .s = q->argv[0]},
        };
        record(d, run, "control.start", f, ARRAY_SIZE(f));
        struct json_buf j = {0};
        json_buf_append(&j, "{\"log\":", 7);
        json_buf_append_string(&j, logp, strlen(logp));
        json_buf_append(&j, ",\"run\":", 7);
        json_buf_append_string(&j, run, strlen(run));
        json_buf_append(&j, "}", 1);
        respond(c, 201, j.error ? "{}" : j.data);
        json_buf_done(&j);
}

/* A start: admissible now, then (a caller other than root) its workspace is
 * checked as the caller in a child while the loop goes on (check_progress). */
static void op_start(struct daemon *d, struct client *c, struct api_req *q)
{
        struct start_limits lim;
        const struct dconf_secret *sec[API_SECRETS_MAX];

        if (start_admissible(d, c, q, &lim, sec) < 0)
                return;
        if (c->cred.uid == 0) {
                start_go(d, c, q, 0, 0);
                return;
        }
        if (!(c->start = malloc(sizeof *c->start))) {
                respond_error(c, 500, "out of memory");
                return;
        }
        *c->start = *q; /* the request is the client's now: its arrays too */
        q->argv = q->secrets = q->allow_hosts = q->env = q->publish = NULL;
        q->ro = q->rw = q->profiles = q->add_hosts = NULL;
        q->argc = q->n_secrets = q->n_allow_hosts = q->n_env = q->n_publish = 0;
        q->n_ro = q->n_rw = q->n_profiles = q->n_add_hosts = 0;
        int e = check_start(c);
        if (e) {
                api_req_clear(c->start);
                free(c->start);
                c->start = NULL;
                respond_error(c, 500, "cannot check the workspace: %s", strerror(e));
        }
}

/* The workspace check's answer (revents: of c->check_fd this round, 0 if
 * not polled): the start goes on, or is refused; or, without an answer by
 * the deadline, refused and the child killed. */
static void check_progress(struct daemon *d, struct client *c, short revents)
{
        struct check_answer a = {.err = EIO};
        ssize_t k = -1;
        bool late = now_ms() >= c->deadline;
        if (revents) {
                k = read(c->check_fd, &a, sizeof a);
                if (k < 0 && errno == EAGAIN && !late)
                        return;
        } else if (!late)
                return;
        int e = k == (ssize_t)sizeof a ? a.err : late ? ETIMEDOUT : EIO;
        if (k != (ssize_t)sizeof a && c->check_pid > 0)
                kill(c->check_pid, SIGKILL); /* reaped by reap() */
        c->check_fd = safe_close(c->check_fd);
        c->check_pid = 0;
        struct api_req *q = c->start;
        c->start = NULL;
        c->deadline = now_ms() + DAEMON_CLIENT_MS; /* for writing the answer */
        if (e == NOT_OWNER)
                respond_error(c, 403,
                              "workspace %s: not owned by uid %u (a run acts as its workspace's "
                              "owner)",
                              q->workspace, (unsigned)c->cred.uid);
        else if (e)
                respond_error(c, 403, "workspace %s: uid %u cannot use it: %s", q->workspace,
                              (unsigned)c->cred.uid, strerror(e));
        else
                start_go(d, c, q, (dev_t)a.dev, (ino_t)a.ino);
        api_req_clear(q);
        free(q);
}

/* The requests are answered (or given up): nothing left to poll. */
static void ctl_end(struct client *c)
{
        for (size_t i = 0; i < c->n_ctl; i++)
                safe_close(c->ctl_fds[i]);
        free(c->ctl_fds);
        free(c->ctl_runs);
        c->ctl_fds = NULL;
        c->ctl_runs = NULL;
        c->n_ctl = 0;
        c->ctl_result = false;
        c->deadline = now_ms() + DAEMON_CLIENT_MS; /* for writing the answer */
}

/* One control request's answer becomes the response: 200 with the
 * supervisor's result, 409 with its refusal, 500 when it gave none. */
static void ctl_result_progress(struct client *c, const struct pollfd *p, bool late)
{
        char reply[CONTROL_MSG_MAX], run[40];
        ssize_t k = -1;
        int e = ETIMEDOUT;
        if (p && p[0].revents) {
                k = recv(c->ctl_fds[0], reply, sizeof reply - 1, MSG_DONTWAIT);
                if (k < 0 && errno == EAGAIN && !late)
                        return;
                if (k < 0 && errno != EAGAIN)
                        e = errno;
        } else if (!late)
                return;
        snprintf(run, sizeof run, "%s", c->ctl_runs[0]);
        ctl_end(c);
        if (k <= 0) {
                if (k == 0)
                        respond_error(c, 500, "run %s: its supervisor went away", run);
                else if (e == ETIMEDOUT)
                        respond_error(c, 500,
                                      "run %s: no answer in time (the request may still take "
                                      "effect when its supervisor runs again)",
                                      run);
                else
                        respond_error(c, 500, "run %s: %s", run, strerror(e));
                return;
        }
        reply[k] = '\0';
        if (strncmp(reply, "ok", 2)) {
                respond_error(c, 409, "run %s: %s", run, k > 4 ? reply + 4 : reply);
                return;
        }
        struct json_buf j = {0};
        json_buf_append(&j, "{\"result\":", 10);
        json_buf_append_string(&j, k > 3 ? reply + 3 : "", k > 3 ? strlen(reply + 3) : 0);
        json_buf_append(&j, "}", 1);
        respond(c, 200, j.error ? "{}" : j.data);
        json_buf_done(&j);
}

/*
 * A kill's confirmations: `p` (poll results for c->ctl_fds, or NULL) read;
 * once every run has answered, gone quiet past the deadline, or was
 * unreachable, the client gets the list of runs killed.
 */
static void ctl_progress(struct client *c, const struct pollfd *p)
{
        char reply[CONTROL_MSG_MAX];
        bool pending = false, late = now_ms() >= c->deadline;
        if (c->ctl_result) {
                ctl_result_progress(c, p, late);
                return;
        }
        for (size_t i = 0; i < c->n_ctl; i++) {
                if (c->ctl_fds[i] < 0)
                        continue;
                if ((p && p[i].revents) || late) {
                        ssize_t k = late && !(p && p[i].revents)
                                            ? -1
                                            : recv(c->ctl_fds[i], reply, sizeof reply - 1,
                                                   MSG_DONTWAIT);
                        if (k < 0 && errno == EAGAIN && !late) {
                                pending = true;
                                continue;
                        }
                        c->ctl_fds[i] = safe_close(c->ctl_fds[i]);
                        /* "ok killed", or its supervisor gone with its run */
                        if (k == 0 || (k > 0 && !strncmp(reply, "ok", 2))) {
                                json_buf_append(&c->killed, c->killed_any ? "," : "",
                                                c->killed_any ? 1 : 0);
                                json_buf_append_string(&c->killed, c->ctl_runs[i],
                                                       strlen(c->ctl_runs[i]));
                                c->killed_any = true;
                        }
                } else
                        pending = true;
        }
        if (pending)
                return;
        json_buf_append(&c->killed, "]}", 2);
        char run[40];
        snprintf(run, sizeof run, "%s", c->n_ctl ? c->ctl_runs[0] : "");
        bool ok = c->killed_any || !c->ctl_one;
        ctl_end(c);
        if (!ok)
                respond_error(c, 500, "run %s did not confirm the kill", run);
        else
                respond(c, 200, c->killed.error ? "{}" : c->killed.data);
}

/* Kill the one run `one`, or every live run of q->agent, acting for the
 * caller (the supervisor records the caller's uid as the actor). Every
 * request is sent first, then the confirmations are collected: the runs
 * die together. */
static void op_kill(struct daemon *d, struct client *c, const struct api_req *q,
                    const struct find *one)
{
        char req[CONTROL_MSG_MAX], reply[CONTROL_MSG_MAX];
        struct live_runs a = {.agent = q->agent};

        snprintf(req, sizeof req, "kill-as %u%s%s", (unsigned)c->cred.uid, q->reason[0] ? " " : "",
                 q->reason);
        if (one) {
                a.runs = calloc(1, sizeof *a.runs);
                if (a.runs) {
                        memcpy(a.runs[0], one->info.run, 40);
                        a.n = 1;
                }
        } else {
                if (q->block) {
                        /* first: no new run of the agent slips in while we kill */
                        struct rf_error err = {0};
                        if (registry_block(d->state_dir, q->agent, q->reason, c->cred.uid, &err) <
                            0) {
                                respond_error(c, 500, "%s", err.msg);
                                return;
                        }
                        struct audit_field f[] = {
                                {.key = "agent", .type = AUDIT_STR, .s = q->agent},
                                {.key = "reason", .type = AUDIT_STR, .s = q->reason},
                                {.key = "actor_uid", .type = AUDIT_UINT, .u = c->cred.uid},
                        };
                        record(d, NULL, "control.block", f, ARRAY_SIZE(f));
                }
                registry_foreach(d->state_dir, live_cb, &a);
        }
        /* send every kill now; the loop collects the confirmations (the runs
         * die together, and the daemon serves others meanwhile) */
        c->ctl_fds = calloc(a.n ? a.n : 1, sizeof *c->ctl_fds);
        if (!c->ctl_fds) {
                free(a.runs);
                respond_error(c, 500, "out of memory");
                return;
        }
        for (size_t i = 0; i < a.n; i++) {
                c->ctl_fds[i] = registry_connect(d->state_dir, a.runs[i]);
                if (c->ctl_fds[i] >= 0 && send(c->ctl_fds[i], req, strlen(req), MSG_NOSIGNAL) < 0)
                        c->ctl_fds[i] = safe_close(c->ctl_fds[i]);
        }
        c->ctl_runs = a.runs;
        c->n_ctl = a.n;
        c->ctl_one = one != NULL;
        c->deadline = now_ms() + DAEMON_KILL_MS;
        json_buf_append(&c->killed, "{\"killed\":[", 11);
        (void)reply;
        ctl_progress(c, NULL);
}

static void op_block(struct daemon *d, struct client *c, const struct api_req *q, bool block)
{
        struct rf_error err = {0};
        int r = block ? registry_block(d->state_dir, q->agent, q->reason, c->cred.uid, &err)
                      : registry_unblock(d->state_dir, q->agent, &err);
        if (r < 0) {
                respond_error(c, block ? 500 : 404, "%s", err.msg);
                return;
        }
        struct audit_field f[] = {
                {.key = "agent", .type = AUDIT_STR, .s = q->agent},
                {.key = "reason", .type = AUDIT_STR, .s = q->reason},
                {.key = "actor_uid", .type = AUDIT_UINT, .u = c->cred.uid},
        };
        record(d, NULL, block ? "control.block" : "control.unblock", f, ARRAY_SIZE(f));
        respond(c, 200, block ? "{\"blocked\":true}" : "{\"blocked\":false}");
}

/*
 * GET /v1/runs/RUN/output: the last q->tail bytes of STATE_DIR/logs/RUN.log
 * as the run's supervisor wrote it — its bound secrets already masked
 * (`--mask-output`: the log never held them) — as text/plain. The logs
 * directory is root's 0700: the file the run's uid owns cannot be swapped
 * for a link or a FIFO by it, and is opened without following one anyway.
 */
static void op_output(struct daemon *d, struct client *c, const struct run_info *info,
                      unsigned tail)
{
        char path[4200];
        snprintf(path, sizeof path, "%s/logs/%s.log", d->state_dir, info->run);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                respond_error(c, 404, "run %s has no log (started without one)", info->run);
                return;
        }
        size_t want = tail > API_TAIL_MAX ? API_TAIL_MAX : tail;
        off_t from = st.st_size > (off_t)want ? st.st_size - (off_t)want : 0;
        _cleanup_free_ char *buf = malloc(want + 1);
        ssize_t n = buf ? pread(fd, buf, want, from) : -1;
        if (n < 0) {
                respond_error(c, 500, "run %s's log: %s", info->run,
                              strerror(buf ? errno : ENOMEM));
                return;
        }
        respond_as(c, 200, "text/plain", buf, (size_t)n, false);
}

/* the verifier child's answer, once it has exited (reap) */
static void verify_collect(struct daemon *d)
{
        struct verify_answer r;
        ssize_t n = read(d->verify.fd, &r, sizeof r);
        if (n == (ssize_t)sizeof r) {
                r.err[sizeof r.err - 1] = r.head[sizeof r.head - 1] = '\0';
                d->verify.r = r;
                d->verify.have = true;
        }
        safe_close(d->verify.fd);
        d->verify.fd = -1;
        d->verify.pid = 0;
}

/*
 * GET /v1/audit/verify: the last verification of the daemon's log, and
 * whether the log is still the one it verified; a view of a log that has
 * changed (or was never verified) starts a verification in a child — no
 * capability, tied to the daemon, nothing but its pipe — and answers at
 * once ("verifying"): verifying a large log takes seconds.
 */
static void op_verify(struct daemon *d, struct client *c)
{
        uint64_t fp = audit_log_fingerprint(d->state_dir);
        bool current = d->verify.have && d->verify.r.fp == fp;
        if (!current && d->verify.pid == 0) {
                int pfd[2];
                if (pipe2(pfd, O_CLOEXEC | O_NONBLOCK) < 0) {
                        respond_error(c, 500, "pipe: %s", strerror(errno));
                        return;
                }
                int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
                struct rf_lockdown how = {.what = "audit verifier",
                                          .arrange_fds = true,
                                          .fds = {nul, pfd[1], nul},
                                          .n_fds = 3,
                                          .drop_caps = true};
                pid_t pid = nul < 0 ? -1 : fork_tied(c, &how);
                safe_close(nul);
                safe_close(pfd[1]);
                if (pid < 0) {
                        safe_close(pfd[0]);
                        if (nul < 0)
                                respond_error(c, 500, "/dev/null: %s", strerror(errno));
                        return;
                }
                if (pid == 0) {
                        struct verify_answer r = {.fp = fp};
                        struct timespec ts;
                        clock_gettime(CLOCK_REALTIME, &ts);
                        r.at_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
                        struct rf_error err = {0}, herr = {0};
                        r.rc = audit_verify(d->state_dir, NULL, NULL, &r.v, &err);
                        snprintf(r.err, sizeof r.err, "%s", err.msg);
                        r.head_rc = audit_head(d->state_dir, r.head, sizeof r.head, &herr);
                        int fl = fcntl(1, F_GETFL);
                        (void)fcntl(1, F_SETFL, fl & ~O_NONBLOCK);
                        _exit(write(1, &r, sizeof r) == (ssize_t)sizeof r ? 0 : 1);
                }
                d->verify.pid = pid;
                d->verify.fd = pfd[0];
        }
        const struct verify_answer *r = &d->verify.r;
        struct json_buf j = {0};
        json_buf_append(&j, "{\"state\":", 9);
        const char *state = !d->verify.have ? "verifying" : r->rc == 0 ? "verified" : "broken";
        json_buf_append_string(&j, state, strlen(state));
        json_buf_append(&j, ",\"current\":", 11);
        json_buf_append(&j, current ? "true" : "false", current ? 4 : 5);
        if (d->verify.have) {
                char num[256];
                snprintf(num, sizeof num,
                         ",\"at_ms\":%lld,\"records\":%llu,\"checkpoints\":%llu,"
                         "\"checkpoint_seq\":%llu,\"hash\":",
                         (long long)r->at_ms, (unsigned long long)r->v.records,
                         (unsigned long long)r->v.checkpoints,
                         (unsigned long long)r->v.checkpoint_seq);
                json_buf_append(&j, num, strlen(num));
                json_buf_append_string(&j, r->v.hash, strnlen(r->v.hash, sizeof r->v.hash));
                if (r->rc != 0) {
                        json_buf_append(&j, ",\"error\":", 9);
                        json_buf_append_string(&j, r->err, strlen(r->err));
                }
                if (r->head_rc == 0) {
                        json_buf_append(&j, ",\"head\":", 8);
                        json_buf_append_string(&j, r->head, strlen(r->head));
                }
        }
        json_buf_append(&j, "}", 1);
        respond(c, 200, j.error ? "{\"error\":\"out of memory\"}" : j.data);
        json_buf_done(&j);
}

/* The audit stream: a child writes the records straight to the client. */
static void op_audit(struct daemon *d, struct client *c, bool follow, const char *run)
{
        static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\n"
                                   "Connection: close\r\n\r\n";
        /* a stream outlives the connection slot it came from: its own caps */
        size_t mine = 0, slot = DAEMON_STREAMS_MAX;
        for (size_t i = 0; i < DAEMON_STREAMS_MAX; i++) {
                if (d->streams[i].pid > 0 && d->streams[i].uid == c->cred.uid)
                        mine++;
                if (d->streams[i].pid <= 0 && slot == DAEMON_STREAMS_MAX)
                        slot = i;
        }
        if (mine >= DAEMON_STREAMS_PER_UID || (slot == DAEMON_STREAMS_MAX) ||
            (c->cred.uid != 0 && slot >= DAEMON_STREAMS_MAX - DAEMON_STREAMS_PER_UID)) {
                respond_error(c, 503, "too many audit streams (%zu of this uid's %d)", mine,
                              DAEMON_STREAMS_PER_UID);
                return;
        }
        /* what the caller may read: its grants' agents, its own runs
         * unless a grant says all_uids (daemon/scope.h); root: everything */
        gid_t g[DAEMON_GROUPS_MAX + 1];
        size_t ng = groups_of(c, g, DAEMON_GROUPS_MAX + 1);
        struct json_buf scope = {0};
        bool scoped = dconf_audit_scope(d->conf, c->cred.uid, g, ng, &scope);
        if (scoped && (scope.error || scope.len > SCOPE_SPEC_MAX)) {
                json_buf_done(&scope);
                respond_error(c, 500, "cannot describe the caller's audit scope");
                return;
        }
        /* the stream: the connection as its stdout, no capability (it
         * reads the log the daemon's uid owns), tied to the daemon */
        int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (nul < 0) {
                json_buf_done(&scope);
                respond_error(c, 500, "/dev/null: %s", strerror(errno));
                return;
        }
        struct rf_lockdown how = {.what = "audit stream",
                                  .arrange_fds = true,
                                  .fds = {nul, c->fd, nul},
                                  .n_fds = 3,
                                  .drop_caps = true};
        pid_t pid = fork_tied(c, &how);
        safe_close(nul);
        if (pid < 0) {
                json_buf_done(&scope);
                return;
        }
        if (pid == 0) {
                int fl = fcntl(1, F_GETFL);
                (void)fcntl(1, F_SETFL, fl & ~O_NONBLOCK);
                if (write(1, head, sizeof head - 1) != (ssize_t)(sizeof head - 1))
                        _exit(1);
                sigset_t none;
                sigemptyset(&none);
                sigprocmask(SIG_SETMASK, &none, NULL);
                signal(SIGPIPE, SIG_DFL); /* a client that goes away ends it */
                const char *av[11];       /* the most: 10 arguments and the NULL */
                size_t n = 0;
                av[n++] = "ringfence";
                av[n++] = "audit";
                av[n++] = "--state-dir";
                av[n++] = d->state_dir;
                av[n++] = "--json";
                if (scoped) {
                        av[n++] = "--scope";
                        av[n++] = scope.data;
                }
                if (follow)
                        av[n++] = "--follow";
                if (run[0]) { /* ?run=RUN: its records only (after the scope) */
                        av[n++] = "--run";
                        av[n++] = run;
                }
                av[n] = NULL;
                execv(d->self, (char *const *)av);
                _exit(127);
        }
        json_buf_done(&scope);
        d->streams[slot].pid = pid;
        d->streams[slot].uid = c->cred.uid;
        client_close(c); /* the child has the connection now */
}

/*
 * GET /v1/daemon: what the daemon holds now, so a caller (a test, a
 * monitor) can wait for a quiescent daemon instead of guessing with
 * sleeps: "quiescent" is no client but the asker, no request in
 * progress (parse, workspace check, control answer, unsent response) and
 * no audit stream. Runs may go on: they are counted, not waited for. "fds"
 * is the daemon's open descriptors but the asker's connection.
 */
static void op_status(struct daemon *d, struct client *me)
{
        size_t clients = 0, pending = 0, runs = 0, streams = 0, checks = 0, fds = 0;
        for (size_t i = 0; i < DAEMON_CLIENTS_MAX; i++) {
                const struct client *c = &d->clients[i];
                if (c->fd < 0 || c == me)
                        continue;
                clients++;
                pending += c->parsing || c->parse_wait || c->n_ctl || c->start || c->out;
                checks += c->start != NULL;
        }
        for (size_t i = 0; i < ARRAY_SIZE(d->runs); i++)
                runs += d->runs[i].pid > 0;
        for (size_t i = 0; i < DAEMON_STREAMS_MAX; i++)
                streams += d->streams[i].pid > 0;
        DIR *dd = opendir("/proc/self/fd");
        for (struct dirent *e; dd && (e = readdir(dd));)
                fds += e->d_name[0] != '.';
        if (dd) {
                closedir(dd);
                fds -= fds > 1 ? 2 : fds; /* the directory's own fd, the asker's connection */
        }
        char out[512];
        snprintf(out, sizeof out,
                 "{\"checks\":%zu,\"clients\":%zu,\"fds\":%zu,\"parser_pid\":%lld,"
                 "\"pending\":%zu,\"quiescent\":%s,\"runs\":%zu,\"streams\":%zu}",
                 checks, clients, fds, (long long)d->parser_pid, pending,
                 !clients && !pending && !streams ? "true" : "false", runs, streams);
        respond(me, 200, out);
}

static void handle(struct daemon *d, struct client *c, struct api_req *q)
{
        struct find f = {.run = q->run};
        char req[CONTROL_MSG_MAX];

        switch (q->op) {
        case API_LIST_RUNS:
                op_list(d, c);
                return;
        case API_START_RUN:
                list_stale(d);
                op_start(d, c, q);
                return;
        case API_KILL_AGENT:
                if (!allowed(d, c, API_KILL_AGENT, q->agent))
                        respond_error(c, 403, "uid %u may not kill runs of agent %s",
                                      (unsigned)c->cred.uid, q->agent);
                else if (q->block && !allowed(d, c, API_BLOCK_AGENT, q->agent))
                        /* "block": true blocks the agent for everyone: the block right */
                        respond_error(c, 403, "uid %u may not block agent %s",
                                      (unsigned)c->cred.uid, q->agent);
                else {
                        list_stale(d);
                        op_kill(d, c, q, NULL);
                }
                return;
        case API_BLOCK_AGENT:
        case API_UNBLOCK_AGENT:
                if (!allowed(d, c, q->op, q->agent))
                        respond_error(c, 403, "uid %u may not block agent %s",
                                      (unsigned)c->cred.uid, q->agent);
                else {
                        list_stale(d);
                        op_block(d, c, q, q->op == API_BLOCK_AGENT);
                }
                return;
        case API_AUDIT:
                if (!allowed(d, c, API_AUDIT, NULL))
                        respond_error(c, 403, "uid %u may not read the audit log",
                                      (unsigned)c->cred.uid);
                else
                        op_audit(d, c, q->follow, q->run);
                return;
        case API_AUDIT_VERIFY:
                if (!allowed(d, c, API_AUDIT, NULL))
                        respond_error(c, 403, "uid %u may not read the audit log",
                                      (unsigned)c->cred.uid);
                else
                        op_verify(d, c);
                return;
        case API_DAEMON_STATUS:
                if (!allowed(d, c, API_DAEMON_STATUS, NULL))
                        respond_error(c, 403, "uid %u may not read the daemon's state",
                                      (unsigned)c->cred.uid);
                else
                        op_status(d, c);
                return;
        case API_GET_RUN:
        case API_KILL_RUN:
        case API_PAUSE_RUN:
        case API_RESUME_RUN:
        case API_REVOKE_SECRET:
        case API_GRANT_RUN:
        case API_PROPOSE_RUN:
        case API_RUN_OUTPUT:
                break;
        case _API_OP_MAX:
        case _API_OP_INVALID:
        default:
                respond_error(c, 400, "unknown request");
                return;
        }
        /* run operations: the run's agent decides who may */
        registry_foreach(d->state_dir, find_cb, &f);
        /* a proposal needs what reading the run needs (get-run) */
        if (!f.found ||
            !allowed(d, c,
                     q->op == API_PROPOSE_RUN || q->op == API_RUN_OUTPUT ? API_GET_RUN : q->op,
                     f.info.agent)) {
                /* not telling a caller without the right whether the run exists */
                respond_error(c, 404, "no run %s", q->run);
                return;
        }
        if (q->op == API_RUN_OUTPUT) {
                op_output(d, c, &f.info, q->tail);
                return;
        }
        char canon[sizeof q->rule];
        if (q->op == API_PROPOSE_RUN &&
            !console_proposal_rule(q->rule, strlen(q->rule), canon, sizeof canon)) {
                /* the parser checked it; a parser that did not is not believed */
                respond_error(c, 400, "rule: HOST:PORT");
                return;
        }
        if (q->op == API_PROPOSE_RUN) {
                /* the console's "add to the agent's policy": only recorded (the
                 * policy is the operator's to change), with the caller as actor */
                struct audit_field pf[] = {
                        {.key = "actor_uid", .type = AUDIT_UINT, .u = c->cred.uid},
                        {.key = "rule", .type = AUDIT_STR, .s = q->rule},
                        {.key = "via", .type = AUDIT_STR, .s = "api"},
                };
                if (record(d, f.info.run, "console.proposal", pf, ARRAY_SIZE(pf)) < 0)
                        respond_error(c, 500, "cannot record the proposal");
                else
                        respond(c, 200, "{\"recorded\":true}");
                return;
        }
        if (q->op != API_GET_RUN)
                list_stale(d); /* an authorised change: the next listing is read whole */
        if (q->op == API_GET_RUN) {
                char st[32], status[CONTROL_MSG_MAX];
                struct json_buf j = {0};
                registry_state(d->state_dir, f.info.run, f.live, st, sizeof st, status,
                               sizeof status);
                json_run(&j, &f.info, st);
                if (status[0] == '{' && j.len && !j.error) {
                        j.len--; /* reopen the object: add the supervisor's view */
                        json_buf_append(&j, ",\"supervisor\":", 14);
                        json_buf_append(&j, status, strlen(status));
                        json_buf_append(&j, "}", 1);
                }
                respond(c, 200, j.error ? "{}" : j.data);
                json_buf_done(&j);
                return;
        }
        if (!f.live) {
                respond_error(c, 409, "run %s is lost (its supervisor is gone)", q->run);
                return;
        }
        if (q->op == API_KILL_RUN) {
                op_kill(d, c, q, &f);
                return;
        }
        if (q->op == API_GRANT_RUN && q->allow && c->cred.uid != 0) {
                bool in = false;
                for (size_t k = 0; k < d->conf->n_allow_hosts; k++)
                        in |= !strcmp(d->conf->allow_hosts[k], q->rule);
                if (!in) {
                        respond_error(c, 403,
                                      "allow_host: %s is beyond the operator's ceiling "
                                      "(ceiling.allow_hosts)",
                                      q->rule);
                        return;
                }
        }
        /* "as UID": the supervisor records the caller, not the daemon */
        if (q->op == API_GRANT_RUN)
                snprintf(req, sizeof req, "as %u %s %s", (unsigned)c->cred.uid,
                         q->allow ? "allow-host" : "revoke-host", q->rule);
        else if (q->op == API_REVOKE_SECRET)
                snprintf(req, sizeof req, "as %u revoke-secret %s", (unsigned)c->cred.uid,
                         q->secret);
        else
                snprintf(req, sizeof req, "as %u %s", (unsigned)c->cred.uid,
                         q->op == API_PAUSE_RUN ? "pause" : "resume");
        /* sent now, answered in the loop (ctl_result_progress) */
        c->ctl_fds = calloc(1, sizeof *c->ctl_fds);
        c->ctl_runs = calloc(1, sizeof *c->ctl_runs);
        if (!c->ctl_fds || !c->ctl_runs) {
                free(c->ctl_fds);
                free(c->ctl_runs);
                c->ctl_fds = NULL;
                c->ctl_runs = NULL;
                respond_error(c, 500, "out of memory");
                return;
        }
        snprintf(c->ctl_runs[0], sizeof c->ctl_runs[0], "%s", q->run);
        c->ctl_fds[0] = registry_connect(d->state_dir, q->run);
        int e = c->ctl_fds[0] < 0 ? -c->ctl_fds[0] : 0;
        if (!e && send(c->ctl_fds[0], req, strlen(req), MSG_NOSIGNAL) < 0)
                e = errno;
        if (e) {
                c->n_ctl = 1;
                ctl_end(c);
                respond_error(c, 500, "run %s: %s", q->run, strerror(e));
                return;
        }
        c->n_ctl = 1;
        c->ctl_one = true;
        c->ctl_result = true;
        c->deadline = now_ms() + DAEMON_CTL_MS;
}

/* ---- the loop ---------------------------------------------------------------------- */

static struct client *client_by_id(struct daemon *d, uint32_t id)
{
        for (size_t i = 0; i < DAEMON_CLIENTS_MAX; i++)
                if (d->clients[i].fd >= 0 && d->clients[i].id == id)
                        return &d->clients[i];
        return NULL;
}

/*
 * The parser died, hung or misbehaved: a new one (the runs go on). Clients
 * it was parsing for get 503; the others are re-parsed by the new one as
 * they send more.
 */
/* The parser goes: its socket closed, the process killed and reaped. */
static void parser_stop(struct daemon *d)
{
        d->parser = safe_close(d->parser);
        if (d->parser_pid > 0) {
                kill(d->parser_pid, SIGKILL);
                (void)waitpid(d->parser_pid, NULL, 0);
                d->parser_pid = 0;
        }
}

/* A new parser, which has seen no one's bytes (the old one, if any, is gone). */
static void parser_fresh_start(struct daemon *d)
{
        pid_t p = parser_spawn(&d->parser, d->parser_uid);
        if (p < 0) {
                fprintf(stderr, "ringfence: daemon: cannot restart the request parser: %s\n",
                        strerror((int)-p));
                d->stopping = true;
                return;
        }
        d->parser_pid = p;
        d->parser_fresh = true;
        (void)fcntl(d->parser, F_SETFL, O_NONBLOCK);
}

static void parser_restart(struct daemon *d, const char *why)
{
        fprintf(stderr, "ringfence: daemon: restarting the request parser: %s\n", why);
        parser_stop(d);
        for (size_t i = 0; i < DAEMON_CLIENTS_MAX; i++)
                if (d->clients[i].fd >= 0 && d->clients[i].parsing)
                        respond_error(&d->clients[i], 503, "the request parser restarted");
        parser_fresh_start(d);
}

/*
 * Hand the client's bytes so far to the parser. The parser only ever holds
 * one caller's bytes: before another uid's it is replaced by a fresh one,
 * once no request of the previous uid is being parsed (the client waits,
 * parse_wait, meanwhile). So a parser that a request has subverted can
 * answer for no other caller's connection.
 */
static void to_parser(struct daemon *d, struct client *c)
{
        static char buf[DAEMON_REQ_MAX + 8];
        if (!d->parser_fresh && d->parser_for != c->cred.uid) {
                for (size_t i = 0; i < DAEMON_CLIENTS_MAX; i++)
                        if (d->clients[i].fd >= 0 && d->clients[i].parsing) {
                                c->parse_wait = true;
                                return;
                        }
                parser_stop(d);
                parser_fresh_start(d);
                if (d->parser < 0) {
                        c->parse_wait = false;
                        respond_error(c, 503, "the request parser is gone");
                        return;
                }
        }
        c->parse_wait = false;
        d->parser_fresh = false;
        d->parser_for = c->cred.uid;
        memcpy(buf, &c->id, 4);
        memcpy(buf + 4, c->in, c->in_len);
        if (send(d->parser, buf, c->in_len + 4, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
                respond_error(c, 503, "the request parser is busy or gone");
                return;
        }
        c->parsing = true;
        c->sent_len = c->in_len;
}

static void on_parser(struct daemon *d)
{
        static char buf[WIRE_MAX];
        struct wire_head h;
        struct api_req q;
        ssize_t n = recv(d->parser, buf, sizeof buf, MSG_DONTWAIT);
        if (n <= 0) {
                if (n == 0 || errno != EAGAIN)
                        parser_restart(d, "its socket closed");
                return;
        }
        if (wire_unpack(buf, (size_t)n, &h, &q) < 0) {
                parser_restart(d, "it sent a malformed answer");
                return;
        }
        /* only for a connection that is waiting on it: a parser gone wrong
         * cannot speak for another client */
        struct client *c = client_by_id(d, h.conn);
        if (!c || !c->parsing || c->cred.uid != d->parser_for) {
                api_req_clear(&q);
                if (c)
                        parser_restart(d, "it answered for a connection it was not asked about");
                return;
        }
        c->parsing = false;
        if (h.kind == WIRE_MORE) {
                if (c->in_len > c->sent_len)
                        to_parser(d, c);
        } else if (h.kind == WIRE_ERROR) {
                c->linger = true; /* the rest of the request may still come */
                respond_error(c, h.status, "%s", h.why);
        } else
                handle(d, c, &q);
        api_req_clear(&q);
}

static void on_client(struct daemon *d, struct client *c, short rev)
{
        if (c->out) {
                ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n > 0)
                        c->out_off += (size_t)n;
                if ((n < 0 && errno != EAGAIN) || (rev & POLLHUP))
                        client_close(c);
                else if (c->out_off == c->out_len)
                        client_done(c);
                return;
        }
        if (c->linger) { /* answered: drop what still comes, until it closes */
                char sink[16384];
                ssize_t n = recv(c->fd, sink, sizeof sink, MSG_DONTWAIT);
                if (n > 0)
                        c->drained += (size_t)n;
                if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) ||
                    c->drained >= DAEMON_LINGER_MAX)
                        client_close(c);
                return;
        }
        if (c->in_len >= DAEMON_REQ_MAX) {
                c->linger = true;
                respond_error(c, 413, "the request is larger than %d bytes", DAEMON_REQ_MAX);
                return;
        }
        ssize_t n = recv(c->fd, c->in + c->in_len, DAEMON_REQ_MAX - c->in_len, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                client_close(c); /* gone before asking anything complete */
                return;
        }
        if (n > 0)
                c->in_len += (size_t)n;
        if (!c->parsing)
                to_parser(d, c);
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

/* The pid a pidfd refers to (its fdinfo's "Pid:"), or -1 if it has exited. */
static pid_t pidfd_pid(int pidfd)
{
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        const char *p = strstr(buf, "\nPid:");
        return p ? (pid_t)strtol(p + 5, NULL, 10) : -1;
}

static void on_accept(struct daemon *d)
{
        for (int k = 0; k < 16; k++) {
                int fd = accept4(d->listen, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0)
                        return;
                struct client *c = NULL;
                size_t mine = 0, free_slots = 0;
                socklen_t l = sizeof(struct ucred);
                struct ucred cred;
                bool known = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &l) == 0;
                for (size_t i = 0; i < DAEMON_CLIENTS_MAX; i++) {
                        if (d->clients[i].fd < 0) {
                                free_slots++;
                                if (!c)
                                        c = &d->clients[i];
                        } else if (known && d->clients[i].cred.uid == cred.uid)
                                mine++;
                }
                /* no uid may hold the daemon: a few connections each, and the
                 * last slots are root's (the kill switch must stay reachable) */
                if (known && cred.uid != 0 &&
                    (mine >= DAEMON_PER_UID_MAX || free_slots <= DAEMON_ROOT_SLOTS))
                        c = NULL;
                if (!c || !known) {
                        static const char busy[] =
                                "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                                "Connection: close\r\n\r\n";
                        (void)send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
                        close(fd);
                        continue;
                }
                /* SO_PEERPIDFD (Linux 6.5+): the peer as a pidfd, which names
                 * exactly the process that connected; its pid is read from it,
                 * not from a number that could be recycled meanwhile */
                int pidfd = -1;
                socklen_t pl = sizeof pidfd;
                if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &pl) == 0 && pidfd >= 0) {
                        pid_t p = pidfd_pid(pidfd);
                        if (p > 0)
                                cred.pid = p;
                        close(pidfd);
                }
                memset(c, 0, sizeof *c);
                c->fd = fd;
                c->check_fd = -1;
                c->cred = cred;
                socklen_t gl = sizeof c->groups;
                if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, c->groups, &gl) == 0)
                        c->n_groups = gl / sizeof(gid_t);
                c->id = ++d->next_id;
                c->deadline = now_ms() + DAEMON_CLIENT_MS;
                if (!(c->in = malloc(DAEMON_REQ_MAX))) {
                        client_close(c);
                        continue;
                }
        }
}

static void reap(struct daemon *d)
{
        int st;
        pid_t pid;
        while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
                if (pid == d->parser_pid) {
                        d->parser_pid = 0; /* on_parser sees its socket close and restarts it */
                        continue;
                }
                if (pid == d->verify.pid) {
                        verify_collect(d);
                        continue;
                }
                for (size_t i = 0; i < DAEMON_STREAMS_MAX; i++)
                        if (d->streams[i].pid == pid)
                                d->streams[i].pid = 0;
                for (size_t i = 0; i < ARRAY_SIZE(d->runs); i++)
                        if (d->runs[i].pid == pid)
                                d->runs[i].pid = 0;
        }
}

/*
 * STATE_DIR/daemon: where a daemon before the typed request
 * (supervisor/runwire.h) wrote each run's secret bindings, root's 0600
 * files; nothing writes there now. Whatever is left (a start refused
 * before its supervisor registered, a daemon killed mid-start) goes, and
 * the directory with it.
 */
static void forget_binding_files(const struct daemon *d)
{
        int dfd = openat(d->state_fd, "daemon", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return;
        DIR *dir = fdopendir(dfd);
        if (!dir) {
                close(dfd);
                return;
        }
        for (struct dirent *e; (e = readdir(dir));) {
                size_t n = strlen(e->d_name);
                if (e->d_type == DT_REG && n > 5 && !strcmp(e->d_name + n - 5, ".json"))
                        (void)unlinkat(dfd, e->d_name, 0);
        }
        closedir(dir);
        (void)unlinkat(d->state_fd, "daemon", AT_REMOVEDIR); /* empty now, or kept */
}

/* What a previous daemon (or a standalone supervisor) that died left behind. */
static int lost_cb(const struct run_info *info, bool live, void *ctx)
{
        struct daemon *d = ctx;
        if (live)
                return 0;
        int cg = cgroup_reap_stale(info->run);
        (void)registry_prune(d->state_dir, info->run);
        struct audit_field f[] = {
                {.key = "agent", .type = AUDIT_STR, .s = info->agent},
                {.key = "supervisor_pid", .type = AUDIT_UINT, .u = info->pid},
                {.key = "cgroups_removed", .type = AUDIT_UINT, .u = cg > 0 ? (uint64_t)cg : 0},
        };
        record(d, info->run, "run.lost", f, ARRAY_SIZE(f));
        fprintf(stderr, "ringfence: daemon: run %s was lost (its supervisor died); cleaned\n",
                info->run);
        return 0;
}

/* On SIGTERM: every run this daemon started is killed (and recorded) first. */
static void stop_runs(struct daemon *d)
{
        char reply[CONTROL_MSG_MAX];
        for (size_t i = 0; i < ARRAY_SIZE(d->runs); i++)
                if (d->runs[i].pid > 0 && d->runs[i].run[0])
                        (void)registry_request(d->state_dir, d->runs[i].run,
                                               "kill the daemon is stopping", reply, sizeof reply,
                                               10000);
}

int daemon_main(const char *state_dir, const struct dconf *conf)
{
        static struct daemon dd;
        struct daemon *d = &dd;
        struct rf_error err = {0};
        int r;

        d->state_dir = state_dir;
        d->conf = conf;
        d->listen = d->parser = d->sfd = d->state_fd = d->verify.fd = -1;
        for (size_t i = 0; i < DAEMON_CLIENTS_MAX; i++)
                d->clients[i].fd = d->clients[i].check_fd = -1;
        ssize_t sl = readlink("/proc/self/exe", d->self, sizeof d->self - 1);
        if (sl <= 0) {
                fprintf(stderr, "ringfence: daemon: cannot find its own binary: %m\n");
                return 1;
        }
        d->self[sl] = '\0';
        /* one daemon per state dir */
        char lp[4200];
        snprintf(lp, sizeof lp, "%s/daemon.lock", state_dir);
        int lock = open(lp, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) < 0) {
                fprintf(stderr, "ringfence: daemon: %s\n",
                        lock < 0 ? strerror(errno) : "another daemon serves this state dir");
                return 1;
        }
        d->state_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (d->state_fd < 0) {
                fprintf(stderr, "ringfence: daemon: %s: %m\n", state_dir);
                return 1;
        }
        if ((r = audit_open(state_dir, &d->log, &err)) < 0) {
                fprintf(stderr, "ringfence: daemon: cannot write the audit log: %s\n", err.msg);
                return 1;
        }
        registry_foreach(state_dir, lost_cb, d);
        forget_binding_files(d);

        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGCHLD);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        signal(SIGPIPE, SIG_IGN);
        d->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        d->parser_uid = 65534;
        d->parser_uid_lock = -1;
        if (geteuid() == 0 && (hostuid_allocate(&d->parser_uid, &d->parser_uid_lock, &err) < 0 ||
                               hostuid_vet(d->parser_uid, (gid_t)d->parser_uid, &err) < 0)) {
                fprintf(stderr, "ringfence: daemon: no uid for the request parser: %s\n", err.msg);
                return 1;
        }
        d->parser_fresh = true;
        if ((d->parser_pid = parser_spawn(&d->parser, d->parser_uid)) < 0) {
                fprintf(stderr, "ringfence: daemon: cannot start the request parser: %s\n",
                        strerror((int)-d->parser_pid));
                return 1;
        }
        (void)fcntl(d->parser, F_SETFL, O_NONBLOCK);
        if (conf->socket)
                snprintf(d->sock_path, sizeof d->sock_path, "%s", conf->socket);
        else
                snprintf(d->sock_path, sizeof d->sock_path, "%s/control.sock", state_dir);
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        if (strlen(d->sock_path) >= sizeof a.sun_path) {
                fprintf(stderr, "ringfence: daemon: socket path too long: %s\n", d->sock_path);
                return 1;
        }
        memcpy(a.sun_path, d->sock_path, strlen(d->sock_path) + 1);
        struct stat st;
        if (lstat(d->sock_path, &st) == 0 && S_ISSOCK(st.st_mode))
                (void)unlink(d->sock_path); /* ours, from a daemon that died (we hold the lock) */
        d->listen = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        mode_t old = umask(0177);
        r = d->listen < 0 ? -1 : bind(d->listen, (struct sockaddr *)&a, sizeof a);
        umask(old);
        if (r < 0 || chmod(d->sock_path, conf->socket_mode) < 0 || listen(d->listen, 64) < 0) {
                fprintf(stderr, "ringfence: daemon: cannot listen on %s: %m\n", d->sock_path);
                return 1;
        }
        fprintf(stderr, "ringfence: daemon: serving %s on %s\n", state_dir, d->sock_path);

        while (!d->stopping) {
                size_t nk = 0;
                for (size_t i = 0; i < DAEMON_CLIENTS_MAX; i++)
                        nk += d->clients[i].fd >= 0 ? d->clients[i].n_ctl : 0;
                struct pollfd *p = calloc(3 + DAEMON_CLIENTS_MAX + nk, sizeof *p);
                size_t ctl_at[DAEMON_CLIENTS_MAX], ctl_polled[DAEMON_CLIENTS_MAX];
                if (!p)
                        break;
                size_t n = 0;
                int64_t now = now_ms(), wake = -1;
                /* requests held while the parser served another uid */
                for (size_t i = 0; i < DAEMON_CLIENTS_MAX; i++)
                        if (d->clients[i].fd >= 0 && d->clients[i].parse_wait &&
                            !d->clients[i].parsing)
                                to_parser(d, &d->clients[i]);
                for (size_t i = 0; i < DAEMON_CLIENTS_MAX; i++)
                        if (d->clients[i].fd >= 0 && d->clients[i].parse_wait)
                                wake = 10;
                p[n++] = (struct pollfd){.fd = d->sfd, .events = POLLIN};
                p[n++] = (struct pollfd){.fd = d->listen, .events = POLLIN};
                p[n++] = (struct pollfd){.fd = d->parser, .events = POLLIN};
                for (size_t i = 0; i < DAEMON_CLIENTS_MAX; i++) {
                        struct client *c = &d->clients[i];
                        /* a client waiting on its control requests or on its
                         * workspace check is not read meanwhile; for the
                         * check, its slot watches the check's pipe */
                        p[n++] = c->start ? (struct pollfd){.fd = c->check_fd, .events = POLLIN}
                                          : (struct pollfd){.fd = c->n_ctl ? -1 : c->fd,
                                                            .events = c->out ? POLLOUT : POLLIN};
                        if (c->fd >= 0) {
                                int64_t left = c->deadline > now ? c->deadline - now : 0;
                                if (wake < 0 || left < wake)
                                        wake = left;
                        }
                }
                size_t nbase = n;
                for (size_t i = 0; i < DAEMON_CLIENTS_MAX; i++) {
                        struct client *c = &d->clients[i];
                        ctl_at[i] = n;
                        ctl_polled[i] = c->fd >= 0 ? c->n_ctl : 0;
                        for (size_t k = 0; c->fd >= 0 && k < c->n_ctl; k++)
                                p[n++] = (struct pollfd){.fd = c->ctl_fds[k], .events = POLLIN};
                }
                (void)nbase;
                if (poll(p, n, wake > INT32_MAX ? INT32_MAX : (int)wake) < 0 && errno != EINTR) {
                        free(p);
                        break;
                }
                if (p[0].revents) {
                        struct signalfd_siginfo si;
                        while (read(d->sfd, &si, sizeof si) == (ssize_t)sizeof si)
                                if (si.ssi_signo == SIGCHLD)
                                        reap(d);
                                else
                                        d->stopping = true;
                }
                if (p[2].revents)
                        on_parser(d);
                now = now_ms();
                for (size_t i = 0; i < DAEMON_CLIENTS_MAX; i++) {
                        struct client *c = &d->clients[i];
                        if (c->fd < 0)
                                continue;
                        if (c->start) {
                                /* a check begun this round was not polled yet */
                                check_progress(d, c,
                                               p[3 + i].fd == c->check_fd ? p[3 + i].revents : 0);
                                continue;
                        }
                        if (c->n_ctl) {
                                /* a kill begun in this round was not polled yet */
                                ctl_progress(c, ctl_polled[i] == c->n_ctl ? p + ctl_at[i] : NULL);
                                continue;
                        }
                        if (p[3 + i].revents)
                                on_client(d, c, p[3 + i].revents);
                        else if (now >= c->deadline) {
                                if (c->out || c->linger)
                                        client_close(c); /* a reader too slow, or done lingering */
                                else
                                        respond_error(c, 408, "no complete request within %d s",
                                                      DAEMON_CLIENT_MS / 1000);
                        }
                }
                if (p[1].revents)
                        on_accept(d);
                free(p);
        }
        stop_runs(d);
        for (size_t i = 0; i < DAEMON_CLIENTS_MAX; i++)
                if (d->clients[i].fd >= 0)
                        client_close(&d->clients[i]);
        (void)unlink(d->sock_path);
        safe_close(d->listen);
        parser_stop(d);
        reap(d);
        free(d->list.v);
        audit_close(d->log);
        d->state_fd = safe_close(d->state_fd);
        close(lock);
        fprintf(stderr, "ringfence: daemon: stopped\n");
        return 0;
}
