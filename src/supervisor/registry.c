/*
 * registry.c — run registrations, control-socket clients, agent blocks.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "shared/json.h"
#include "shared/macro.h"
#include "supervisor/control.h"
#include "supervisor/registry.h"

#define INFO_MAX (16 * 1024)

struct registry {
        int dir;    /* STATE_DIR/runs */
        int rundir; /* STATE_DIR/runs/RUN */
        int info;   /* info.json, flock'ed */
        int sock;
        char run[40];
};

static bool run_id_ok(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n >= 40)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') || s[i] == '-'))
                        return false;
        return true;
}

static int open_sub(const char *state_dir, const char *sub, bool create)
{
        _cleanup_close_ int sd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (sd < 0)
                return negative_errno();
        if (create && mkdirat(sd, sub, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        int fd = openat(sd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}

/* A path naming `name` in directory `dirfd` short enough for sun_path. */
static void fd_path(struct sockaddr_un *a, int dirfd, const char *name)
{
        memset(a, 0, sizeof *a);
        a->sun_family = AF_UNIX;
        snprintf(a->sun_path, sizeof a->sun_path, "/proc/self/fd/%d/%s", dirfd, name);
}

static void put_str(struct json_buf *j, bool *first, const char *k, const char *v)
{
        json_buf_append(j, *first ? "{" : ",", 1);
        *first = false;
        json_buf_append_string(j, k, strlen(k));
        json_buf_append(j, ":", 1);
        json_buf_append_string(j, v, strlen(v));
}

static void put_num(struct json_buf *j, bool *first, const char *k, uint64_t v)
{
        json_buf_append(j, *first ? "{" : ",", 1);
        *first = false;
        json_buf_append_string(j, k, strlen(k));
        json_buf_append(j, ":", 1);
        json_buf_append_uint(j, v);
}

int registry_add(const char *state_dir, const struct run_info *info, struct registry **ret,
                 struct rf_error *err)
{
        struct registry *r = calloc(1, sizeof *r);
        struct json_buf j = {0};
        bool first = true;
        int e;

        if (!r)
                return rf_error_set(err, -ENOMEM, "out of memory");
        r->dir = r->rundir = r->info = r->sock = -1;
        snprintf(r->run, sizeof r->run, "%s", info->run);
        if (!run_id_ok(r->run)) {
                e = rf_error_set(err, -EINVAL, "bad run id");
                goto fail;
        }
        if ((r->dir = open_sub(state_dir, "runs", true)) < 0) {
                e = rf_error_set(err, r->dir, "cannot register the run in %s/runs: %s", state_dir,
                                 strerror(-r->dir));
                goto fail;
        }
        if (mkdirat(r->dir, r->run, 0700) < 0 ||
            (r->rundir = openat(r->dir, r->run, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
                    0) {
                e = rf_error_set(err, negative_errno(), "cannot register the run: %m");
                goto fail;
        }
        put_str(&j, &first, "agent", info->agent);
        put_str(&j, &first, "cgroup", info->cgroup);
        /* the caller's argv[0] may be any bytes: kept as the audit log's
         * run.start keeps it, invalid UTF-8 as U+FFFD */
        json_buf_append(&j, ",", 1);
        json_buf_append_string(&j, "command", 7);
        json_buf_append(&j, ":", 1);
        json_buf_append_string_lossy(&j, info->command, strlen(info->command));
        put_str(&j, &first, "on_behalf_of", info->on_behalf_of);
        put_num(&j, &first, "pid", info->pid);
        put_str(&j, &first, "run", info->run);
        put_num(&j, &first, "started_ms", (uint64_t)info->started_ms);
        put_str(&j, &first, "task", info->task);
        put_num(&j, &first, "uid", info->uid);
        json_buf_append(&j, "}\n", 2);
        r->info = openat(r->rundir, "info.json", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                         0600);
        if (j.error) {
                e = rf_error_set(err, j.error, "cannot register the run: %s", strerror(-j.error));
                goto fail;
        }
        if (r->info < 0 || flock(r->info, LOCK_EX) < 0 ||
            write(r->info, j.data, j.len) != (ssize_t)j.len) {
                e = rf_error_set(err, negative_errno(), "cannot register the run: %m");
                goto fail;
        }
        json_buf_done(&j);
        struct sockaddr_un a;
        fd_path(&a, r->rundir, "control.sock");
        r->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (r->sock < 0 || bind(r->sock, (struct sockaddr *)&a, sizeof a) < 0 ||
            listen(r->sock, 16) < 0) {
                e = rf_error_set(err, negative_errno(),
                                 "cannot create the run's control socket: %m");
                goto fail;
        }
        *ret = r;
        return 0;
fail:
        json_buf_done(&j);
        registry_remove(r);
        return e;
}

int registry_listen_fd(const struct registry *r)
{
        return r ? r->sock : -1;
}

static void remove_rundir(int dir, const char *run, int rundir)
{
        (void)unlinkat(rundir, "control.sock", 0);
        (void)unlinkat(rundir, "info.json", 0);
        (void)unlinkat(dir, run, AT_REMOVEDIR);
}

struct registry *registry_remove(struct registry *r)
{
        if (!r)
                return NULL;
        if (r->rundir >= 0 && r->dir >= 0)
                remove_rundir(r->dir, r->run, r->rundir);
        safe_close(r->sock);
        safe_close(r->info); /* releases the lock last */
        safe_close(r->rundir);
        safe_close(r->dir);
        free(r);
        return NULL;
}

static int parse_info(const char *buf, size_t len, struct run_info *out)
{
        struct json_node *n = NULL;
        struct rf_error err = {0};
        memset(out, 0, sizeof *out);
        if (json_parse(buf, len, &n, &err) < 0)
                return -EBADMSG;
        int r = n->type == JSON_OBJECT ? 0 : -EBADMSG;
        for (size_t i = 0; r == 0 && i < n->n_items; i++) {
                const struct json_node *m = n->items[i];
                char *dst = !strcmp(m->key, "run")            ? out->run
                            : !strcmp(m->key, "agent")        ? out->agent
                            : !strcmp(m->key, "on_behalf_of") ? out->on_behalf_of
                            : !strcmp(m->key, "task")         ? out->task
                            : !strcmp(m->key, "command")      ? out->command
                            : !strcmp(m->key, "cgroup")       ? out->cgroup
                                                              : NULL;
                size_t cap = dst == out->run      ? sizeof out->run
                             : dst == out->cgroup ? sizeof out->cgroup
                                                  : REGISTRY_FIELD_MAX + 1;
                if (dst && m->type == JSON_STRING)
                        snprintf(dst, cap, "%s", m->str);
                else if (m->type == JSON_NUMBER) {
                        uint64_t v = 0;
                        (void)json_number_uint64(m, &v);
                        if (!strcmp(m->key, "uid"))
                                out->uid = v;
                        else if (!strcmp(m->key, "pid"))
                                out->pid = v;
                        else if (!strcmp(m->key, "started_ms"))
                                out->started_ms = (int64_t)v;
                }
        }
        json_node_free(n);
        return r;
}

struct entry {
        struct run_info info;
        bool live;
};

static int entry_cmp(const void *a, const void *b)
{
        const struct entry *x = a, *y = b;
        return x->info.started_ms < y->info.started_ms   ? -1
               : x->info.started_ms > y->info.started_ms ? 1
                                                         : strcmp(x->info.run, y->info.run);
}

int registry_foreach(const char *state_dir, registry_cb cb, void *ctx)
{
        int dir = open_sub(state_dir, "runs", false);
        if (dir == -ENOENT)
                return 0;
        if (dir < 0)
                return dir;
        DIR *d = fdopendir(dir);
        if (!d) {
                close(dir);
                return -ENOMEM;
        }
        struct entry *v = NULL;
        size_t n = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (!run_id_ok(de->d_name))
                        continue;
                _cleanup_close_ int rd = openat(dirfd(d), de->d_name,
                                                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                _cleanup_close_ int fd =
                        rd < 0 ? -1 : openat(rd, "info.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                char buf[INFO_MAX];
                ssize_t k = fd < 0 ? -1 : read(fd, buf, sizeof buf);
                struct entry e = {0};
                if (k <= 0 || parse_info(buf, (size_t)k, &e.info) < 0)
                        continue; /* being created or removed */
                /* the supervisor holds the lock while it lives */
                e.live = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
                struct entry *nv = realloc(v, (n + 1) * sizeof *nv);
                if (!nv)
                        break;
                v = nv;
                v[n++] = e;
        }
        closedir(d);
        if (n)
                qsort(v, n, sizeof *v, entry_cmp);
        for (size_t i = 0; i < n; i++)
                if (cb(&v[i].info, v[i].live, ctx))
                        break;
        free(v);
        return 0;
}

int registry_connect(const char *state_dir, const char *run)
{
        if (!run_id_ok(run))
                return -ENOENT;
        _cleanup_close_ int dir = open_sub(state_dir, "runs", false);
        _cleanup_close_ int rd =
                dir < 0 ? -1 : openat(dir, run, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (rd < 0)
                return -ENOENT;
        struct sockaddr_un a;
        fd_path(&a, rd, "control.sock");
        /* non-blocking: a supervisor that does not accept (stopped, busy)
         * fills its queue, and a blocking connect would then wait for it */
        int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (s < 0)
                return negative_errno();
        if (connect(s, (struct sockaddr *)&a, sizeof a) < 0) {
                int e = errno == ENOENT ? -ECONNREFUSED : negative_errno();
                close(s);
                return e;
        }
        return s;
}

int registry_request(const char *state_dir, const char *run, const char *req, char *reply,
                     size_t size, int timeout_ms)
{
        _cleanup_close_ int s = registry_connect(state_dir, run);
        if (s < 0)
                return s;
        if (send(s, req, strlen(req), MSG_NOSIGNAL) < 0)
                return negative_errno();
        struct pollfd p = {.fd = s, .events = POLLIN};
        int pr = poll(&p, 1, timeout_ms);
        if (pr == 0)
                return -ETIMEDOUT;
        if (pr < 0)
                return negative_errno();
        ssize_t k = recv(s, reply, size - 1, 0);
        if (k < 0)
                return negative_errno();
        if (k == 0)
                return -ECONNRESET;
        reply[k] = '\0';
        return 0;
}

#define STATE_TIMEOUT_MS 1000

/* A status reply ("ok STATE JSON") into out and status; anything else
 * leaves them as they are. */
static void state_from_reply(const char *reply, char *out, size_t len, char *status,
                             size_t status_len)
{
        if (strncmp(reply, "ok ", 3))
                return;
        const char *sp = strchr(reply + 3, ' ');
        snprintf(out, len, "%.*s", (int)(sp ? (size_t)(sp - reply - 3) : strlen(reply + 3)),
                 reply + 3);
        if (status && sp)
                snprintf(status, status_len, "%s", sp + 1);
}

void registry_state(const char *state_dir, const char *run, bool live, char *out, size_t len,
                    char *status, size_t status_len)
{
        char reply[CONTROL_MSG_MAX];
        snprintf(out, len, "%s", live ? "?" : "lost");
        if (status)
                status[0] = '\0';
        if (live &&
            registry_request(state_dir, run, "status", reply, sizeof reply, STATE_TIMEOUT_MS) == 0)
                state_from_reply(reply, out, len, status, status_len);
}

static int64_t mono_ms(void)
{
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

void registry_state_batch(const char *state_dir, struct registry_query *q, size_t n)
{
        struct pollfd pf[REGISTRY_BATCH_MAX];
        size_t of[REGISTRY_BATCH_MAX];     /* the query each slot asks for */
        int64_t until[REGISTRY_BATCH_MAX]; /* its answer's deadline */
        size_t next = 0, busy = 0;
        char reply[CONTROL_MSG_MAX];
        for (size_t i = 0; i < n; i++) {
                snprintf(q[i].st, q[i].st_len, "%s", q[i].live ? "?" : "lost");
                if (q[i].status)
                        q[i].status[0] = '\0';
        }
        for (;;) {
                /* fill the free slots with the next live runs' requests */
                while (busy < REGISTRY_BATCH_MAX && next < n) {
                        size_t i = next++;
                        if (!q[i].live)
                                continue;
                        int s = registry_connect(state_dir, q[i].run);
                        if (s < 0)
                                continue;
                        if (send(s, "status", 6, MSG_NOSIGNAL) != 6) {
                                close(s);
                                continue;
                        }
                        pf[busy] = (struct pollfd){.fd = s, .events = POLLIN};
                        of[busy] = i;
                        until[busy++] = mono_ms() + STATE_TIMEOUT_MS;
                }
                if (!busy)
                        return;
                int64_t now = mono_ms(), wait = STATE_TIMEOUT_MS;
                for (size_t k = 0; k < busy; k++)
                        if (until[k] - now < wait)
                                wait = until[k] - now;
                int pr = poll(pf, busy, wait > 0 ? (int)wait : 0);
                if (pr < 0 && errno != EINTR)
                        wait = -1; /* cannot wait: every slot gives up below */
                now = mono_ms();
                for (size_t k = 0; k < busy;) {
                        bool done = wait < 0 || now >= until[k];
                        if (pr > 0 && pf[k].revents) {
                                ssize_t got = recv(pf[k].fd, reply, sizeof reply - 1, 0);
                                if (got > 0) {
                                        reply[got] = '\0';
                                        struct registry_query *e = &q[of[k]];
                                        state_from_reply(reply, e->st, e->st_len, e->status,
                                                         e->status_len);
                                }
                                done = done || got >= 0 || errno != EAGAIN;
                        }
                        if (!done) {
                                k++;
                                continue;
                        }
                        close(pf[k].fd);
                        busy--;
                        pf[k] = pf[busy];
                        of[k] = of[busy];
                        until[k] = until[busy];
                }
        }
}

int registry_prune(const char *state_dir, const char *run)
{
        if (!run_id_ok(run))
                return -EINVAL;
        _cleanup_close_ int dir = open_sub(state_dir, "runs", false);
        _cleanup_close_ int rd =
                dir < 0 ? -1 : openat(dir, run, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_close_ int fd =
                rd < 0 ? -1 : openat(rd, "info.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -ENOENT;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                return -EBUSY; /* alive after all */
        remove_rundir(dir, run, rd);
        return 0;
}

/* blocks/HASH.json: the agent name hashed (names may hold any character). */
static void block_name(const char *agent, char out[48])
{
        unsigned char h[16];
        crypto_generichash(h, sizeof h, (const unsigned char *)agent, strlen(agent), NULL, 0);
        sodium_bin2hex(out, 33, h, sizeof h);
        strcat(out, ".json");
}

int registry_block(const char *state_dir, const char *agent, const char *reason, uid_t uid,
                   struct rf_error *err)
{
        char name[48], tmp[64];
        struct json_buf j = {0};
        bool first = true;
        _cleanup_close_ int dir = open_sub(state_dir, "blocks", true);
        if (dir < 0)
                return rf_error_set(err, dir, "%s/blocks: %s", state_dir, strerror(-dir));
        block_name(agent, name);
        snprintf(tmp, sizeof tmp, ".tmp-%s", name);
        put_str(&j, &first, "agent", agent);
        put_str(&j, &first, "reason", reason ? reason : "");
        put_num(&j, &first, "since_ms", (uint64_t)time(NULL) * 1000);
        put_num(&j, &first, "uid", uid);
        json_buf_append(&j, "}\n", 2);
        (void)unlinkat(dir, tmp, 0);
        _cleanup_close_ int fd =
                openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        int r = 0;
        if (j.error || fd < 0 || write(fd, j.data, j.len) != (ssize_t)j.len || fsync(fd) < 0 ||
            renameat(dir, tmp, dir, name) < 0 || fsync(dir) < 0)
                r = rf_error_set(err, j.error ? j.error : negative_errno(),
                                 "cannot write the block: %m");
        json_buf_done(&j);
        return r;
}

int registry_unblock(const char *state_dir, const char *agent, struct rf_error *err)
{
        char name[48];
        _cleanup_close_ int dir = open_sub(state_dir, "blocks", false);
        block_name(agent, name);
        if (dir < 0 || unlinkat(dir, name, 0) < 0)
                return rf_error_set(err, dir < 0 ? dir : negative_errno(),
                                    "agent %s is not blocked", agent);
        (void)fsync(dir);
        return 0;
}

int registry_blocked(const char *state_dir, const char *agent, char *why, size_t why_len)
{
        char name[48], buf[4096];
        _cleanup_close_ int dir = open_sub(state_dir, "blocks", false);
        if (dir == -ENOENT)
                return 0;
        if (dir < 0)
                return dir;
        block_name(agent, name);
        _cleanup_close_ int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        ssize_t k = read(fd, buf, sizeof buf - 1);
        snprintf(why, why_len, "agent %s is blocked", agent);
        struct json_node *n = NULL;
        struct rf_error err = {0};
        if (k > 0 && json_parse(buf, (size_t)k, &n, &err) == 0) {
                const struct json_node *rs = json_object_get(n, "reason");
                const struct json_node *u = json_object_get(n, "uid");
                uint64_t uid = 0;
                if (u)
                        (void)json_number_uint64(u, &uid);
                snprintf(why, why_len, "agent %s is blocked (by uid %llu%s%s)", agent,
                         (unsigned long long)uid, rs && rs->len ? ": " : "",
                         rs && rs->type == JSON_STRING ? rs->str : "");
                json_node_free(n);
        }
        return 1;
}
