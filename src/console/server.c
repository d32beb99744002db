/*
 * server.c — `ringfence console`'s HTTP side (see console.h): the loop,
 * the checks every request passes (Host, session, Origin, CSRF), the
 * routes, and the facts they show (registry, control sockets, audit log).
 *
 *   GET  /login?token=T       a session: its cookie, then / (303)
 *   GET  /                    the runs, rendered here, then kept live by /app.js
 *   GET  /api/runs            the runs as JSON (what /app.js polls)
 *   GET  /run/RUN             one run: its facts, its timeline, its actions
 *   GET  /api/run/RUN         its timeline as JSON
 *   POST /run/RUN/ACTION      kill, pause, resume, allow-host, revoke-host (form, CSRF)
 *   POST /logout
 *   GET  /app.js, /app.css    the page's only script and style (assets.c)
 */
#include "console/console.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <limits.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "console/assets.h"
#include "console/auth.h"
#include "console/parse.h"
#include "console/render.h"
#include "egress/http.h"
#include "shared/json.h"
#include "shared/macro.h"
#include "supervisor/control.h"
#include "supervisor/publish.h"
#include "supervisor/registry.h"

#define APPEND(b, lit)     json_buf_append((b), "" lit, sizeof("" lit) - 1) /* literals only */
#define TIMELINE_MAX       2000      /* records one run's page shows (its newest) */
#define TIMELINE_BYTES_MAX (4 << 20) /* bytes of a page's timeline (then older ones are cut) */

struct conn {
        int fd; /* -1: free */
        char *buf;
        size_t len;
        int64_t deadline_ms;
};

struct console {
        const struct console_opts *o;
        uint16_t port;
        bool v6;
        char origin[64]; /* "http://127.0.0.1:PORT" as the browser names us */
        struct console_auth auth;
        struct conn c[CONSOLE_CONNS_MAX];
};

static int64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- responses ---------------------------------------------------------------- */

/* The headers every response carries: no framing, no inline script or
 * style, nothing from elsewhere, nothing cached, nothing sniffed. */
static const char security_headers[] =
        "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; "
        "img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; "
        "base-uri 'none'\r\n"
        "X-Frame-Options: DENY\r\n"
        "X-Content-Type-Options: nosniff\r\n"
        "Referrer-Policy: same-origin\r\n" /* no-referrer would make a form's Origin "null" */
        "Cross-Origin-Opener-Policy: same-origin\r\n"
        "Cross-Origin-Resource-Policy: same-origin\r\n"
        "Cache-Control: no-store\r\n"
        "Connection: close\r\n";

/* CLOCK_MONOTONIC ms, for deadlines */
static int64_t mono_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* When the answer being written must be out (CLOCK_MONOTONIC ms): a peer
 * that reads slowly gives up the whole answer then, not each write. Set
 * per answer (the loop, api_call). */
static int64_t send_deadline_ms;

/* Write all of p[0, n) before send_deadline_ms; false if the peer went
 * or was too slow (the connection is closed after the answer anyway). */
static bool send_all(int fd, const char *p, size_t n)
{
        while (n) {
                ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                        int64_t left = send_deadline_ms - mono_ms();
                        struct pollfd pf = {.fd = fd, .events = POLLOUT};
                        if (left <= 0 || poll(&pf, 1, left > INT_MAX ? INT_MAX : (int)left) <= 0)
                                return false;
                        continue;
                }
                if (w <= 0)
                        return false;
                p += w;
                n -= (size_t)w;
        }
        return true;
}

static const char *status_text(int st)
{
        switch (st) {
        case 200:
                return "OK";
        case 303:
                return "See Other";
        case 400:
                return "Bad Request";
        case 401:
                return "Unauthorized";
        case 403:
                return "Forbidden";
        case 404:
                return "Not Found";
        case 405:
                return "Method Not Allowed";
        case 413:
                return "Content Too Large";
        case 421:
                return "Misdirected Request";
        case 431:
                return "Request Header Fields Too Large";
        case 502:
                return "Bad Gateway";
        default:
                return "Error";
        }
}

/* one response: `extra` header lines (each ending CRLF) or NULL */
static void respond(int fd, int st, const char *type, const char *extra, const char *body,
                    size_t len)
{
        char head[2048];
        int n = snprintf(head, sizeof head,
                         "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s%s\r\n",
                         st, status_text(st), type, len, security_headers, extra ? extra : "");
        if (n <= 0 || (size_t)n >= sizeof head)
                return;
        if (send_all(fd, head, (size_t)n))
                (void)send_all(fd, body, len);
}

static void respond_buf(int fd, int st, const char *type, struct json_buf *b)
{
        if (b->error)
                respond(fd, 500, "text/plain; charset=utf-8", NULL, "out of memory\n", 14);
        else
                respond(fd, st, type, NULL, b->data ? b->data : "", b->len);
}

static void respond_text(int fd, int st, const char *msg)
{
        struct json_buf b = {0};
        json_buf_append(&b, msg, strlen(msg));
        APPEND(&b, "\n");
        respond_buf(fd, st, "text/plain; charset=utf-8", &b);
        json_buf_done(&b);
}

static void redirect(int fd, const char *to, const char *cookie)
{
        char extra[512];
        snprintf(extra, sizeof extra, "Location: %s\r\n%s", to, cookie ? cookie : "");
        respond(fd, 303, "text/plain; charset=utf-8", extra, "", 0);
}

/* ---- the facts ------------------------------------------------------------------ */

/* what the operator may do to a run (the buttons its page shows) */
enum { MAY_KILL = 1, MAY_PAUSE = 2, MAY_RESUME = 4, MAY_GRANT = 8, MAY_AUDIT = 16, MAY_BLOCK = 32 };
#define MAY_ALL (MAY_KILL | MAY_PAUSE | MAY_RESUME | MAY_GRANT | MAY_AUDIT | MAY_BLOCK)

struct run_row {
        struct run_info info;
        bool live;
        char state[32];
        uint64_t cpu_usec, memory, grants; /* what its supervisor says */
        uint32_t allowed, refused;         /* its egress.allow and egress.deny records */
        bool counted; /* allowed and refused are known (the console reads the log) */
        unsigned may; /* MAY_* */
};

struct rows {
        struct run_row *v;
        size_t n, cap;
};

static int rows_add(const struct run_info *info, bool live, void *ctx)
{
        struct rows *r = ctx;
        if (r->n == CONSOLE_RUNS_MAX) { /* oldest first: the newest are kept */
                memmove(r->v, r->v + 1, (r->n - 1) * sizeof *r->v);
                r->n--;
        }
        if (r->n == r->cap) {
                size_t cap = r->cap ? r->cap * 2 : 64;
                struct run_row *v = realloc(r->v, cap * sizeof *v);
                if (!v)
                        return -ENOMEM;
                r->v = v;
                r->cap = cap;
        }
        struct run_row *row = &r->v[r->n++];
        memset(row, 0, sizeof *row);
        row->info = *info;
        row->live = live;
        return 0;
}

/* ---- egress counts: the state dir's log read on from where it was ---------------- */

#define COUNTS_MAX (2 * CONSOLE_RUNS_MAX) /* runs counted; the oldest half goes beyond */

struct egress_count {
        char run[40];
        uint32_t allowed, refused;
};

static struct {
        struct egress_count *v;
        size_t n, cap;
} counts;

static struct egress_count *count_of(const char *run, size_t rl, bool add)
{
        for (size_t i = counts.n; i-- > 0;) /* recent runs last */
                if (strlen(counts.v[i].run) == rl && !memcmp(counts.v[i].run, run, rl))
                        return &counts.v[i];
        if (!add || rl >= sizeof counts.v[0].run)
                return NULL;
        if (counts.n == COUNTS_MAX) {
                memmove(counts.v, counts.v + COUNTS_MAX / 2,
                        (COUNTS_MAX - COUNTS_MAX / 2) * sizeof *counts.v);
                counts.n -= COUNTS_MAX / 2;
        }
        if (counts.n == counts.cap) {
                size_t cap = counts.cap ? counts.cap * 2 : 256;
                struct egress_count *v = realloc(counts.v, cap * sizeof *v);
                if (!v)
                        return NULL;
                counts.v = v;
                counts.cap = cap;
        }
        struct egress_count *c = &counts.v[counts.n++];
        memset(c, 0, sizeof *c);
        memcpy(c->run, run, rl);
        return c;
}

static void count_line(const char *line, size_t len)
{
        size_t rl;
        const char *run;
        int kind = console_egress_line(line, len, &run, &rl);
        struct egress_count *c =
                kind != CONSOLE_EGRESS_NONE && run ? count_of(run, rl, true) : NULL;
        if (c && kind == CONSOLE_EGRESS_ALLOW)
                c->allowed++;
        else if (c)
                c->refused++;
}

/* where a reader of the state dir's log is: the segment and the offset
 * after the last whole line it read (seg 0: nothing read yet) */
struct log_pos {
        unsigned seg;
        off_t off;
};

#define LOG_CHUNK (1 << 16) /* bytes read at a time; a longer line is skipped */

/* fn on every whole line the log gained since *pos (oldest first), then
 * *pos after it: a repeat call costs only the new records. Standalone (the
 * console's own state dir) only. */
static int log_read_on(const struct console *cs, struct log_pos *pos,
                       void (*fn)(const char *line, size_t len, void *ctx), void *ctx)
{
        char path[PATH_MAX];
        char *buf = malloc(LOG_CHUNK);
        int r = 0;
        if (!buf)
                return -ENOMEM;
        for (int rounds = 0; rounds < 64; rounds++) {
                unsigned seg = pos->seg ? pos->seg : 1;
                snprintf(path, sizeof path, "%s/audit/audit-%06u.jsonl", cs->o->state_dir, seg);
                int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0) {
                        /* no log yet: nothing to read; another error: unread */
                        r = errno == ENOENT ? 0 : -errno;
                        break;
                }
                pos->seg = seg;
                ssize_t n;
                size_t have = 0;
                while ((n = pread(fd, buf + have, LOG_CHUNK - have, pos->off + (off_t)have)) > 0) {
                        have += (size_t)n;
                        size_t start = 0;
                        for (size_t i = 0; i < have; i++)
                                if (buf[i] == '\n') {
                                        fn(buf + start, i - start, ctx);
                                        start = i + 1;
                                }
                        pos->off += (off_t)start;
                        memmove(buf, buf + start, have - start);
                        have -= start;
                        if (have == LOG_CHUNK) { /* a line longer than any record: skip it */
                                pos->off += (off_t)have;
                                have = 0;
                        }
                }
                close(fd);
                /* a next segment: this one is done */
                snprintf(path, sizeof path, "%s/audit/audit-%06u.jsonl", cs->o->state_dir, seg + 1);
                if (access(path, F_OK) < 0)
                        break;
                pos->seg = seg + 1;
                pos->off = 0;
        }
        free(buf);
        return r;
}

static struct log_pos counts_pos;

static void count_line_cb(const char *line, size_t len, void *ctx)
{
        (void)ctx;
        count_line(line, len);
}

/* read what the log gained since the last call: 0, or -errno (the log
 * could not be read: the counts are not known) */
static int counts_update(const struct console *cs)
{
        return log_read_on(cs, &counts_pos, count_line_cb, NULL);
}

/* the supervisor's status (or the daemon's "supervisor" object) into w */
static void row_status(struct run_row *w, const struct json_node *doc)
{
        static const struct {
                const char *key;
                size_t off;
        } nums[] = {{"cpu_usec", offsetof(struct run_row, cpu_usec)},
                    {"memory_current", offsetof(struct run_row, memory)},
                    {"grants", offsetof(struct run_row, grants)}};
        const struct json_node *st = doc ? json_object_get(doc, "stats") : NULL;
        for (size_t i = 0; doc && i < ARRAY_SIZE(nums); i++) {
                const struct json_node *n = json_object_get(doc, nums[i].key);
                if (!n && st)
                        n = json_object_get(st, nums[i].key);
                uint64_t v = 0;
                if (n)
                        (void)json_number_uint64(n, &v);
                memcpy((char *)w + nums[i].off, &v, sizeof v);
        }
}

#define API_REPLY_MAX (16 << 20) /* bytes of one collected answer (JSON_OUTPUT_MAX) */
#define API_ANSWER_MS 30000      /* to take one whole answer (an audit stream too) */

/* where the body of the daemon's answer goes: collected into `out`, or a
 * line at a time (NUL-terminated, at most AUDIT_RECORD_MAX bytes: longer
 * ones are skipped) to fn, which returns 0 to go on, > 0 to stop, < 0 to
 * stop with that error; lines go to fn only with a 200 */
struct api_sink {
        struct json_buf *out;
        audit_line_fn fn;
        void *ctx;
};

/* the body bytes p[0..n) into the sink; `line` holds a partial line
 * (AUDIT_RECORD_MAX + 1 bytes), *ll its length (SIZE_MAX: skipping an
 * overlong one). 0 to go on, > 0 or -errno from fn. */
static int api_body(const struct api_sink *k, int status, char *line, size_t *ll, const char *p,
                    size_t n)
{
        if (!k->fn) {
                if (k->out->len + n > API_REPLY_MAX)
                        return -E2BIG;
                json_buf_append(k->out, p, n);
                return k->out->error ? -E2BIG : 0;
        }
        if (status != 200)
                return 0;
        for (size_t i = 0; i < n;) {
                const char *nl = memchr(p + i, '\n', n - i);
                size_t take = nl ? (size_t)(nl - (p + i)) : n - i;
                if (*ll != SIZE_MAX && *ll + take <= AUDIT_RECORD_MAX) {
                        memcpy(line + *ll, p + i, take);
                        *ll += take;
                } else
                        *ll = SIZE_MAX;
                i += take;
                if (!nl)
                        break;
                i++;
                size_t len = *ll;
                *ll = 0;
                if (len == SIZE_MAX || len == 0)
                        continue;
                line[len] = '\0';
                int r = k->fn(line, len, k->ctx);
                if (r)
                        return r;
        }
        return 0;
}

/* One request to the daemon's API (console_opts.api_socket), as this uid:
 * its HTTP status with the body in the sink, or -errno. The daemon answers
 * one request per connection and closes it; an answer collected into
 * `out` is at most API_REPLY_MAX bytes, one given to fn line by line (an
 * audit log) has no bound but API_ANSWER_MS. */
static int api_request(const struct console *cs, const char *method, const char *path,
                       const char *body, const struct api_sink *k)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(cs->o->api_socket) >= sizeof sa.sun_path)
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, cs->o->api_socket);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct timeval tv = {.tv_sec = 15};
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0 ||
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0 ||
            connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
                return negative_errno();
        char head[512];
        size_t bl = body ? strlen(body) : 0;
        int n = snprintf(head, sizeof head,
                         "%s %s HTTP/1.1\r\nHost: ringfence\r\nContent-Type: application/json\r\n"
                         "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                         method, path, bl);
        if (n <= 0 || (size_t)n >= sizeof head)
                return -E2BIG;
        int64_t answer_deadline = send_deadline_ms; /* the browser's, kept */
        send_deadline_ms = mono_ms() + 15000;
        bool sent = send_all(fd, head, (size_t)n) && (!bl || send_all(fd, body, bl));
        send_deadline_ms = answer_deadline;
        if (!sent)
                return -ETIMEDOUT;
        struct json_buf in = {0}; /* the head, until it is whole */
        _cleanup_free_ char *line = k->fn ? malloc(AUDIT_RECORD_MAX + 1) : NULL;
        char *chunk = malloc(65536);
        size_t ll = 0;
        int64_t left = -1; /* body bytes still to come (Content-Length), -1: to the end */
        int status = 0, r = 0;
        int64_t until = now_ms() + API_ANSWER_MS; /* the whole answer, not each read */
        if (!chunk || (k->fn && !line))
                r = -ENOMEM;
        while (r == 0 && left != 0) {
                if (now_ms() > until) {
                        r = -ETIMEDOUT;
                        break;
                }
                ssize_t got = recv(fd, chunk, 65536, 0);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0) {
                        r = negative_errno();
                        break;
                }
                if (got == 0) {
                        if (!status)
                                r = -EPROTO; /* no whole head */
                        break;
                }
                const char *p = chunk;
                size_t pl = (size_t)got;
                if (!status) {
                        json_buf_append(&in, chunk, (size_t)got);
                        struct http_response rs;
                        const char *why = NULL;
                        int hl = in.error ? -ENOMEM
                                          : http_response_parse(in.data, in.len, &rs, &why);
                        if (hl == 0)
                                continue;
                        if (hl < 0 || rs.chunked) {
                                r = hl < 0 && hl != -EBADMSG ? hl : -EPROTO;
                                break;
                        }
                        status = rs.status;
                        left = rs.content_length;
                        p = in.data + hl;
                        pl = in.len - (size_t)hl;
                }
                if (left >= 0 && (uint64_t)left < pl)
                        pl = (size_t)left;
                if (left > 0)
                        left -= (int64_t)pl;
                r = api_body(k, status, line, &ll, p, pl);
        }
        json_buf_done(&in);
        free(chunk);
        if (r == 0 && k->fn && status == 200 && ll && ll != SIZE_MAX) {
                line[ll] = '\0'; /* a last line without its newline */
                r = k->fn(line, ll, k->ctx);
        }
        return r < 0 ? r : status;
}

/* api_request with the body collected into out */
static int api_call(const struct console *cs, const char *method, const char *path,
                    const char *body, struct json_buf *out)
{
        struct api_sink k = {.out = out};
        int st = api_request(cs, method, path, body, &k);
        return st < 0 ? st : out->error ? out->error : st;
}

/* GET `path` (audit records), each line of a 200 to fn: the status or -errno */
static int api_lines(const struct console *cs, const char *path, audit_line_fn fn, void *ctx)
{
        struct api_sink k = {.fn = fn, .ctx = ctx};
        return api_request(cs, "GET", path, NULL, &k);
}

static int row_from_api(struct rows *r, const struct json_node *e);

/* the daemon's runs (GET /v1/runs): those the caller may list, each with
 * what it may do ("may") and its supervisor's view */
static int rows_from_api(const struct console *cs, struct rows *r)
{
        struct json_buf b = {0};
        static const char open_runs[] = "{\"runs\":[";
        int st = api_call(cs, "GET", "/v1/runs", NULL, &b);
        /* element by element: a fleet is more values than one document may
         * hold (JSON_NODES_MAX) */
        if (st != 200 || b.len < sizeof open_runs - 1 ||
            memcmp(b.data, open_runs, sizeof open_runs - 1)) {
                json_buf_done(&b);
                return st < 0 ? st : -EPROTO;
        }
        size_t pos = sizeof open_runs - 1, off, elen;
        int k, rr = 0;
        while (rr == 0 && (k = console_array_next(b.data, b.len, &pos, &off, &elen)) > 0) {
                _cleanup_json_ struct json_node *e = NULL;
                struct rf_error err = {0};
                if (json_parse(b.data + off, elen, &e, &err) < 0 || e->type != JSON_OBJECT)
                        continue;
                rr = row_from_api(r, e);
        }
        json_buf_done(&b);
        return rr < 0 ? rr : k < 0 ? -EPROTO : 0;
}

/* one run of GET /v1/runs into r: 0, 1 (the listing is full), -errno */
static int row_from_api(struct rows *r, const struct json_node *e)
{
        static const struct {
                const char *name;
                unsigned bit;
        } mays[] = {{"kill", MAY_KILL},   {"pause", MAY_PAUSE}, {"resume", MAY_RESUME},
                    {"grant", MAY_GRANT}, {"audit", MAY_AUDIT}, {"block", MAY_BLOCK}};
        {
                struct run_info in = {0};
                static const struct {
                        const char *key;
                        size_t off, size;
                } strs[] = {{"run", offsetof(struct run_info, run), sizeof in.run},
                            {"agent", offsetof(struct run_info, agent), sizeof in.agent},
                            {"command", offsetof(struct run_info, command), sizeof in.command},
                            {"task", offsetof(struct run_info, task), sizeof in.task},
                            {"on_behalf_of", offsetof(struct run_info, on_behalf_of),
                             sizeof in.on_behalf_of}};
                for (size_t i = 0; i < ARRAY_SIZE(strs); i++) {
                        const struct json_node *v = json_object_get(e, strs[i].key);
                        if (v && v->type == JSON_STRING)
                                snprintf((char *)&in + strs[i].off, strs[i].size, "%s", v->str);
                }
                const struct json_node *v;
                if ((v = json_object_get(e, "uid")))
                        (void)json_number_uint64(v, &in.uid);
                if ((v = json_object_get(e, "started_ms")))
                        (void)json_number_int64(v, &in.started_ms);
                int rr = rows_add(&in, true, r);
                if (rr < 0)
                        return rr;
                if (rr > 0)
                        return 1;
                struct run_row *w = &r->v[r->n - 1];
                if ((v = json_object_get(e, "state")) && v->type == JSON_STRING)
                        snprintf(w->state, sizeof w->state, "%s", v->str);
                w->live = strcmp(w->state, "lost") != 0;
                row_status(w, json_object_get(e, "supervisor"));
                const struct json_node *may = json_object_get(e, "may"), *m;
                if (may && may->type == JSON_ARRAY)
                        JSON_FOREACH(m, may)
                for (size_t i = 0; m->type == JSON_STRING && i < ARRAY_SIZE(mays); i++)
                        if (!strcmp(m->str, mays[i].name))
                                w->may |= mays[i].bit;
        }
        return 0;
}

/* every run, newest first, with what its supervisor says (uncached) */
static int rows_read(const struct console *cs, struct rows *r)
{
        int e = cs->o->api_socket ? rows_from_api(cs, r)
                                  : registry_foreach(cs->o->state_dir, rows_add, r);
        if (e < 0)
                return e;
        for (size_t i = 0; i < r->n / 2; i++) {
                struct run_row t = r->v[i];
                r->v[i] = r->v[r->n - 1 - i];
                r->v[r->n - 1 - i] = t;
        }
        for (size_t i = 0; !cs->o->api_socket && i < r->n; i++) {
                /* standalone: the supervisor itself checks the peer */
                struct run_row *w = &r->v[i];
                char status[CONTROL_MSG_MAX];
                _cleanup_json_ struct json_node *doc = NULL;
                struct rf_error err = {0};
                registry_state(cs->o->state_dir, w->info.run, w->live, w->state, sizeof w->state,
                               status, sizeof status);
                if (status[0] == '{' && json_parse(status, strlen(status), &doc, &err) == 0)
                        row_status(w, doc);
                w->may = w->live ? MAY_ALL : MAY_AUDIT;
        }
        /* the egress counts: from the state dir's log when the console may
         * read it (standalone, or --daemon with the daemon's --state-dir as
         * root); through the daemon alone they are not known ("—") */
        bool has_log = !cs->o->api_socket || strcmp(cs->o->state_dir, cs->o->api_socket) != 0;
        if (has_log && counts_update(cs) == 0) {
                for (size_t i = 0; i < r->n; i++) {
                        const struct egress_count *c =
                                count_of(r->v[i].info.run, strlen(r->v[i].info.run), false);
                        r->v[i].allowed = c ? c->allowed : 0;
                        r->v[i].refused = c ? c->refused : 0;
                        r->v[i].counted = true;
                }
        }
        return 0;
}

/* the last listing, shared by every page for ROWS_FRESH_MS (each open
 * runs page polls /api/runs every 500 ms: a run is on it within 500 + 400
 * ms and the time to list, under a second); an action drops it */
#define ROWS_FRESH_MS 400
static struct {
        struct run_row *v;
        size_t n;
        int64_t at_ms; /* 0: none */
} rows_cache;

static void rows_forget(void)
{
        free(rows_cache.v);
        rows_cache.v = NULL;
        rows_cache.n = 0;
        rows_cache.at_ms = 0;
}

/* rows_read, or a copy of a listing younger than ROWS_FRESH_MS; `fresh`:
 * read anew in any case (a page loaded, a run the listing lacks) */
static int rows_collect_as(const struct console *cs, struct rows *r, bool fresh)
{
        int64_t now = now_ms();
        if (fresh || !rows_cache.at_ms || now - rows_cache.at_ms >= ROWS_FRESH_MS ||
            now < rows_cache.at_ms) {
                struct rows got = {0};
                int e = rows_read(cs, &got);
                if (e < 0) {
                        free(got.v);
                        return e;
                }
                rows_forget();
                rows_cache.v = got.v;
                rows_cache.n = got.n;
                rows_cache.at_ms = now;
        }
        if (!rows_cache.n)
                return 0;
        if (!(r->v = malloc(rows_cache.n * sizeof *r->v)))
                return -ENOMEM;
        memcpy(r->v, rows_cache.v, rows_cache.n * sizeof *r->v);
        r->n = r->cap = rows_cache.n;
        return 0;
}

static const struct run_row *rows_find(const struct rows *r, const char *run)
{
        for (size_t i = 0; i < r->n; i++)
                if (!strcmp(r->v[i].info.run, run))
                        return &r->v[i];
        return NULL;
}

/* the polled listing (/api/runs): cached */
static int rows_collect(const struct console *cs, struct rows *r)
{
        return rows_collect_as(cs, r, false);
}

/* a listing with run `run` in it if it is there: the cached one, else
 * read anew (a run younger than the cache) */
static const struct run_row *rows_with(const struct console *cs, struct rows *r, const char *run)
{
        const struct run_row *w = NULL;
        if (rows_collect(cs, r) == 0 && (w = rows_find(r, run)))
                return w;
        free(r->v);
        *r = (struct rows){0};
        return rows_collect_as(cs, r, true) == 0 ? rows_find(r, run) : NULL;
}

/* ---- pages ---------------------------------------------------------------------- */

/*
 * The head of every page. `expect`: the id of an element after the page's
 * long part (NULL: none); the browser renders nothing before it is parsed
 * (`<link rel=expect blocking=render>`): a runs page of 1,000 rows, laid out
 * again and again while it streams in, was interactive in Chromium after
 * ~550 ms here, ~200 ms without those passes (bench/console). A browser
 * that does not know the hint ignores it.
 */
static void page_head(struct json_buf *b, const char *title, const struct console *cs, int slot,
                      const char *expect)
{
        APPEND(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                  "<meta name=\"viewport\" content=\"width=device-width\">"
                  "<link rel=\"stylesheet\" href=\"/app.css\">");
        if (expect) {
                APPEND(b, "<link rel=\"expect\" href=\"#");
                console_html(b, expect, strlen(expect));
                APPEND(b, "\" blocking=\"render\">");
        }
        APPEND(b, "<title>");
        console_html(b, title, strlen(title));
        APPEND(b,
               " — ringfence console</title><script src=\"/app.js\" defer></script>"
               "</head><body><header><a class=\"brand\" href=\"/\">ringfence</a> <a "
               "href=\"/\">runs</a> <a href=\"/health\" id=\"nav-health\">audit health</a> <span "
               "class=\"where\">");
        console_html(b, cs->o->state_dir, strlen(cs->o->state_dir));
        APPEND(b, "</span><form method=\"post\" action=\"/logout\" class=\"logout\">"
                  "<input type=\"hidden\" name=\"csrf\" value=\"");
        json_buf_append(b, cs->auth.s[slot].csrf, CONSOLE_TOKEN_HEX);
        APPEND(b, "\"><button type=\"submit\">log out</button></form></header><main>");
}

static void page_tail(struct json_buf *b)
{
        APPEND(b, "</main></body></html>\n");
}

static void fmt_uint(struct json_buf *b, uint64_t v)
{
        json_buf_append_uint(b, v);
}

static void fmt_time(struct json_buf *b, int64_t ms)
{
        char t[40];
        time_t s = (time_t)(ms / 1000);
        struct tm tm;
        if (!gmtime_r(&s, &tm) || !strftime(t, sizeof t, "%Y-%m-%d %H:%M:%S", &tm))
                return;
        json_buf_append(b, t, strlen(t));
        char f[16];
        int n = snprintf(f, sizeof f, ".%03d", (int)(ms % 1000));
        json_buf_append(b, f, (size_t)n);
}

/* one row of the runs table (the same cells /app.js makes from /api/runs) */
static void run_row_html(struct json_buf *b, const struct run_row *w)
{
        const struct run_info *in = &w->info;
        APPEND(b, "<tr data-run=\"");
        console_html(b, in->run, strlen(in->run));
        APPEND(b, "\" data-agent=\"");
        console_html(b, in->agent, strlen(in->agent));
        APPEND(b, "\" data-state=\"");
        console_html(b, w->state, strlen(w->state));
        APPEND(b, "\"><td class=\"run\"><a href=\"/run/");
        console_html(b, in->run, strlen(in->run));
        APPEND(b, "\">");
        console_html(b, in->run, strlen(in->run));
        APPEND(b, "</a></td><td class=\"agent\">");
        console_html(b, in->agent, strlen(in->agent));
        APPEND(b, "</td><td class=\"uid\">");
        fmt_uint(b, in->uid);
        APPEND(b, "</td><td class=\"state\">");
        console_html(b, w->state, strlen(w->state));
        APPEND(b, "</td><td class=\"started\" data-ms=\"");
        json_buf_append_uint(b, (uint64_t)(in->started_ms > 0 ? in->started_ms : 0));
        APPEND(b, "\">");
        fmt_time(b, in->started_ms);
        APPEND(b, "</td><td class=\"age\">");
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        int64_t now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
        if (in->started_ms > 0 && in->started_ms <= now_ms)
                console_age(b, now_ms - in->started_ms);
        else if (in->started_ms > now_ms)
                console_age(b, 0); /* clocks apart: the start is "now" */
        APPEND(b, "</td><td class=\"cpu\">");
        fmt_uint(b, w->cpu_usec / 1000);
        APPEND(b, " ms</td><td class=\"mem\">");
        /* 0: no memory cgroup serves this run (cgroup v1 without a memory
         * limit): not known, never "0 MiB" */
        if (w->memory) {
                fmt_uint(b, w->memory >> 20);
                APPEND(b, " MiB");
        } else
                APPEND(b, "—");
        APPEND(b, "</td><td class=\"egress\">");
        if (w->counted) {
                json_buf_append_uint(b, w->allowed);
                APPEND(b, " / ");
                json_buf_append_uint(b, w->refused);
        } else
                APPEND(b, "—"); /* not known here: the log is not this console's */
        APPEND(b, "</td><td class=\"grants\">");
        fmt_uint(b, w->grants);
        APPEND(b, "</td><td class=\"command\">");
        console_html(b, in->command, strlen(in->command));
        APPEND(b, "</td></tr>");
}

static void page_runs(const struct console *cs, int slot, int fd)
{
        struct rows r = {0};
        struct json_buf b = {0};
        int e = rows_collect_as(cs, &r, true);   /* a page loaded: as it is now */
        page_head(&b, "runs", cs, slot, "none"); /* the paragraph after the table */
        APPEND(&b, "<h1>Runs</h1><div class=\"filters\"><label>agent <input id=\"f-agent\" "
                   "type=\"search\"></label> <label>state <select id=\"f-state\"><option "
                   "value=\"\">any</option><option>running</option><option>paused</option>"
                   "<option>starting</option><option>lost</option></select></label> <span "
                   "id=\"live\" class=\"live\"></span></div>");
        if (e < 0) {
                APPEND(&b, "<p class=\"error\">cannot read the registry: ");
                const char *m = strerror(-e);
                console_html(&b, m, strlen(m));
                APPEND(&b, "</p>");
        }
        APPEND(&b, "<table id=\"runs\"><thead><tr><th>run</th><th>agent</th><th>uid</th>"
                   "<th>state</th><th>started (UTC)</th><th>age</th><th>CPU</th><th>memory</th>"
                   "<th title=\"egress allowed / refused\">egress ✓/✗</th>"
                   "<th>grants</th><th>command</th></tr></thead><tbody>");
        for (size_t i = 0; i < r.n; i++)
                run_row_html(&b, &r.v[i]);
        APPEND(&b, "</tbody></table><p id=\"none\" class=\"none\"");
        if (r.n)
                APPEND(&b, " hidden");
        APPEND(&b, ">No runs.</p>");
        page_tail(&b);
        respond_buf(fd, 200, "text/html; charset=utf-8", &b);
        json_buf_done(&b);
        free(r.v);
}

static void api_runs(const struct console *cs, int fd)
{
        struct rows r = {0};
        struct json_buf b = {0};
        if (rows_collect(cs, &r) < 0) {
                free(r.v);
                respond_text(fd, 502, "cannot read the registry");
                return;
        }
        APPEND(&b, "{\"now_ms\":");
        json_buf_append_uint(&b, (uint64_t)now_ms());
        APPEND(&b, ",\"runs\":[");
        for (size_t i = 0; i < r.n; i++) {
                const struct run_row *w = &r.v[i];
                if (i)
                        APPEND(&b, ",");
                APPEND(&b, "{\"run\":");
                console_json_str(&b, w->info.run, strlen(w->info.run));
                APPEND(&b, ",\"agent\":");
                console_json_str(&b, w->info.agent, strlen(w->info.agent));
                APPEND(&b, ",\"uid\":");
                json_buf_append_uint(&b, w->info.uid);
                APPEND(&b, ",\"state\":");
                console_json_str(&b, w->state, strlen(w->state));
                APPEND(&b, ",\"started_ms\":");
                json_buf_append_uint(&b,
                                     (uint64_t)(w->info.started_ms > 0 ? w->info.started_ms : 0));
                APPEND(&b, ",\"cpu_ms\":");
                json_buf_append_uint(&b, w->cpu_usec / 1000);
                APPEND(&b, ",\"memory\":");
                json_buf_append_uint(&b, w->memory);
                APPEND(&b, ",\"grants\":");
                json_buf_append_uint(&b, w->grants);
                /* null: not known here (app.js shows "—") */
                APPEND(&b, ",\"egress_allowed\":");
                if (w->counted)
                        json_buf_append_uint(&b, w->allowed);
                else
                        APPEND(&b, "null");
                APPEND(&b, ",\"egress_refused\":");
                if (w->counted)
                        json_buf_append_uint(&b, w->refused);
                else
                        APPEND(&b, "null");
                APPEND(&b, ",\"command\":");
                console_json_str(&b, w->info.command, strlen(w->info.command));
                APPEND(&b, "}");
        }
        APPEND(&b, "]}\n");
        respond_buf(fd, 200, "application/json", &b);
        json_buf_done(&b);
        free(r.v);
}

/* one run's records, newest first, at most TIMELINE_MAX */
struct timeline {
        const char *run;
        char **lines;
        size_t n;
};

static int timeline_line(const char *line, size_t len, void *ctx)
{
        struct timeline *t = ctx;
        char want[64];
        int k = snprintf(want, sizeof want, "\"run\":\"%s\"", t->run);
        if (k <= 0 || !memmem(line, len, want, (size_t)k))
                return 0;
        if (!(t->lines[t->n] = strndup(line, len)))
                return -ENOMEM;
        return ++t->n == TIMELINE_MAX ? 1 : 0;
}

/* what a run's page offers beside a refusal (html only): its run, the
 * session's CSRF token, whether the uid may grant a host to the live run */
struct propose_ctx {
        const char *run;
        const char *csrf;
        bool may_grant;
};

static void action_form(struct json_buf *b, const char *run, const char *action, const char *label,
                        const char *field, const char *csrf, const char *value, const char *id);

/* record `line` as a timeline entry: time, event, its other members; with
 * `pc` (html), a refusal becomes two proposals: allow it for this run (a
 * live grant) and the policy fragment that would allow it */
static void timeline_entry(struct json_buf *b, const char *line, bool html,
                           const struct propose_ctx *pc)
{
        _cleanup_json_ struct json_node *doc = NULL;
        struct rf_error err = {0};
        if (json_parse(line, strlen(line), &doc, &err) < 0 || doc->type != JSON_OBJECT)
                return;
        const struct json_node *ev = json_object_get(doc, "event");
        const struct json_node *ts = json_object_get(doc, "ts");
        int64_t t = 0;
        if (ts)
                (void)json_number_int64(ts, &t);
        const char *evs = ev && ev->type == JSON_STRING ? ev->str : "?";
        size_t evl = ev && ev->type == JSON_STRING ? ev->len : 1;
        if (html) {
                APPEND(b, "<li class=\"ev\" data-event=\"");
                console_html(b, evs, evl);
                APPEND(b, "\"><span class=\"ts\">");
                fmt_time(b, t);
                APPEND(b, "</span> <span class=\"event\">");
                console_html(b, evs, evl);
                APPEND(b, "</span>");
        } else {
                APPEND(b, "{\"ts\":");
                json_buf_append_uint(b, (uint64_t)(t > 0 ? t : 0));
                APPEND(b, ",\"event\":");
                console_json_str(b, evs, evl);
                APPEND(b, ",\"facts\":[");
        }
        static const char *const skip[] = {"event", "ts", "run", "prev", "hash", "version"};
        const struct json_node *m;
        bool first = true;
        JSON_FOREACH(m, doc)
        {
                bool skipped = false;
                for (size_t i = 0; i < ARRAY_SIZE(skip); i++)
                        skipped |= m->key_len == strlen(skip[i]) &&
                                   !memcmp(m->key, skip[i], m->key_len);
                if (skipped || (m->type != JSON_STRING && m->type != JSON_NUMBER))
                        continue;
                const char *v = m->str;
                size_t vl = m->len;
                if (html) {
                        APPEND(b, " <span class=\"fact\"><span class=\"k\">");
                        console_html(b, m->key, m->key_len);
                        APPEND(b, "</span>=<span class=\"v\">");
                        console_html(b, v, vl);
                        APPEND(b, "</span></span>");
                } else {
                        if (!first)
                                APPEND(b, ",");
                        APPEND(b, "[");
                        console_json_str(b, m->key, m->key_len);
                        APPEND(b, ",");
                        console_json_str(b, v, vl);
                        APPEND(b, "]");
                }
                first = false;
        }
        char rule[300];
        if (html && pc && evl == 11 && !memcmp(evs, "egress.deny", 11) &&
            console_deny_rule(doc, rule, sizeof rule)) {
                APPEND(b, "<div class=\"proposal\">");
                if (pc->may_grant)
                        action_form(b, pc->run, "allow-host", "Allow for this run", NULL, pc->csrf,
                                    rule, "propose-grant");
                action_form(b, pc->run, "propose", "Add to the agent's policy", NULL, pc->csrf,
                            rule, "propose-policy");
                APPEND(b, "</div>");
        }
        if (html)
                APPEND(b, "</li>");
        else
                APPEND(b, "]}");
}

/* the run's records from the daemon, oldest first: the newest TIMELINE_MAX
 * kept in a ring */
struct timeline_ring {
        struct timeline *t;
        size_t seen;
};

static int timeline_ring_line(const char *line, size_t len, void *ctx)
{
        struct timeline_ring *g = ctx;
        char want[64];
        int k = snprintf(want, sizeof want, "\"run\":\"%s\"", g->t->run);
        if (k <= 0 || !memmem(line, len, want, (size_t)k))
                return 0;
        char *c = strndup(line, len);
        if (!c)
                return -ENOMEM;
        size_t slot = g->seen++ % TIMELINE_MAX;
        free(g->t->lines[slot]);
        g->t->lines[slot] = c;
        return 0;
}

/* the run's audit records this uid may read (GET /v1/audit?run=RUN: the
 * daemon sends only that run's, after the caller's scope), its newest
 * TIMELINE_MAX, newest first; a log of any size (read line by line) */
static int timeline_from_api(const struct console *cs, struct timeline *t)
{
        char path[96];
        snprintf(path, sizeof path, "/v1/audit?run=%s", t->run);
        struct timeline_ring g = {.t = t};
        int st = api_lines(cs, path, timeline_ring_line, &g);
        size_t n = g.seen < TIMELINE_MAX ? g.seen : TIMELINE_MAX;
        /* the ring, newest first: slot (seen - 1 - i) % TIMELINE_MAX */
        char **v = calloc(TIMELINE_MAX, sizeof *v);
        if (!v) {
                for (size_t i = 0; i < TIMELINE_MAX; i++)
                        free(t->lines[i]);
                memset(t->lines, 0, TIMELINE_MAX * sizeof *t->lines);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                v[i] = t->lines[(g.seen - 1 - i) % TIMELINE_MAX];
        free(t->lines);
        t->lines = v;
        t->n = n;
        return st == 200 ? 0 : st < 0 ? st : -EACCES;
}

static int timeline_read(const struct console *cs, const char *run, struct timeline *t)
{
        t->run = run;
        t->n = 0;
        if (!(t->lines = calloc(TIMELINE_MAX, sizeof *t->lines)))
                return -ENOMEM;
        int r = cs->o->api_socket ? timeline_from_api(cs, t)
                                  : audit_foreach_line_reverse(cs->o->state_dir, timeline_line, t);
        return r < 0 ? r : 0;
}

static void timeline_free(struct timeline *t)
{
        for (size_t i = 0; i < t->n; i++)
                free(t->lines[i]);
        free(t->lines);
}

/* an action's form: a button, the CSRF token, a field to fill in (`field`)
 * or a fixed host (`value`, hidden), the button's id (NULL: do-ACTION) */
static void action_form(struct json_buf *b, const char *run, const char *action, const char *label,
                        const char *field, const char *csrf, const char *value, const char *id)
{
        APPEND(b, "<form method=\"post\" class=\"action\" action=\"/run/");
        console_html(b, run, strlen(run));
        APPEND(b, "/");
        json_buf_append(b, action, strlen(action));
        APPEND(b, "\"><input type=\"hidden\" name=\"csrf\" value=\"");
        json_buf_append(b, csrf, CONSOLE_TOKEN_HEX);
        APPEND(b, "\">");
        if (value) {
                APPEND(b, "<input type=\"hidden\" name=\"host\" value=\"");
                console_html(b, value, strlen(value));
                APPEND(b, "\"><code class=\"rule\">");
                console_html(b, value, strlen(value));
                APPEND(b, "</code> ");
        }
        if (field) {
                APPEND(b, "<input name=\"");
                json_buf_append(b, field, strlen(field));
                APPEND(b, "\" placeholder=\"HOST:PORT\" required maxlength=\"300\"> ");
        }
        if (id) {
                APPEND(b, "<button type=\"submit\" class=\"");
                json_buf_append(b, id, strlen(id));
        } else {
                APPEND(b, "<button type=\"submit\" id=\"do-");
                json_buf_append(b, action, strlen(action));
        }
        APPEND(b, "\">");
        json_buf_append(b, label, strlen(label));
        APPEND(b, "</button></form>");
}

#define OUTPUT_TAIL_MAX 16384 /* bytes of a run's output its page shows (the end) */

/* the end of run `run`'s output, as the supervisor wrote it (secrets
 * masked: STATE_DIR/logs/RUN.log; through the daemon alone, GET
 * /v1/runs/RUN/output, the same file's end as the daemon reads it), inert */
static void output_tail(struct json_buf *b, const struct console *cs, const char *run)
{
        _cleanup_free_ char *buf = NULL;
        struct json_buf api = {0};
        const char *text;
        ssize_t n;
        int64_t size = -1; /* the whole log's, when known */
        if (cs->o->api_socket && !strcmp(cs->o->state_dir, cs->o->api_socket)) {
                char path[128];
                snprintf(path, sizeof path, "/v1/runs/%s/output?tail=%d", run, OUTPUT_TAIL_MAX);
                int st = api_call(cs, "GET", path, NULL, &api);
                if (st != 200 || api.len > OUTPUT_TAIL_MAX) {
                        json_buf_done(&api);
                        return;
                }
                text = api.data ? api.data : "";
                n = (ssize_t)api.len;
        } else {
                char path[PATH_MAX];
                snprintf(path, sizeof path, "%s/logs/%s.log", cs->o->state_dir, run);
                _cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
                struct stat st;
                if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                        return;
                off_t from = st.st_size > OUTPUT_TAIL_MAX ? st.st_size - OUTPUT_TAIL_MAX : 0;
                buf = malloc(OUTPUT_TAIL_MAX);
                n = buf ? pread(fd, buf, OUTPUT_TAIL_MAX, from) : -1;
                if (n < 0)
                        return;
                text = buf;
                size = (int64_t)st.st_size;
        }
        APPEND(b, "<h2>Output</h2><p class=\"hint\">The end of what the run wrote (");
        if (size >= 0) {
                json_buf_append_uint(b, (uint64_t)size);
                APPEND(b, " bytes");
        } else
                APPEND(b, "through the daemon");
        APPEND(b, "), its secrets masked by the supervisor, control bytes shown.</p>"
                  "<pre id=\"output\" class=\"output\">");
        /* line by line: a newline stays a line break, nothing else acts */
        for (ssize_t i = 0, j; i < n; i = j + 1) {
                const char *nl = memchr(text + i, '\n', (size_t)(n - i));
                j = nl ? nl - text : n;
                console_html(b, text + i, (size_t)(j - i));
                if (nl)
                        APPEND(b, "\n");
        }
        APPEND(b, "</pre>");
        json_buf_done(&api);
}

static void page_run(const struct console *cs, int slot, int fd, const char *run, const char *note,
                     const char *fragment)
{
        struct rows r = {0};
        struct timeline t = {0};
        struct json_buf b = {0};
        const struct run_row *w = rows_with(cs, &r, run);
        int e = timeline_read(cs, run, &t);
        if (!w && t.n == 0) {
                free(r.v);
                timeline_free(&t);
                respond_text(fd, 404, "no such run");
                return;
        }
        page_head(&b, run, cs, slot, NULL);
        const char *csrf = cs->auth.s[slot].csrf;
        APPEND(&b, "<h1>Run <span id=\"run-id\">");
        console_html(&b, run, strlen(run));
        APPEND(&b, "</span></h1>");
        if (note) {
                APPEND(&b, "<p class=\"note\" id=\"note\">");
                console_html(&b, note, strlen(note));
                APPEND(&b, "</p>");
        }
        if (fragment) {
                APPEND(&b, "<p>To allow it in every run of the agent, add this to its policy "
                           "(<code>network.allow</code>):</p><pre id=\"fragment\">");
                console_html(&b, fragment, strlen(fragment));
                APPEND(&b, "</pre>");
        }
        APPEND(&b, "<dl class=\"facts\">");
        if (w) {
                static const char *const names[] = {"agent", "state",        "uid",   "command",
                                                    "task",  "on behalf of", "cgroup"};
                char uid[24];
                snprintf(uid, sizeof uid, "%llu", (unsigned long long)w->info.uid);
                const char *vals[] = {w->info.agent,   w->state,     uid,
                                      w->info.command, w->info.task, w->info.on_behalf_of,
                                      w->info.cgroup};
                for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
                        APPEND(&b, "<dt>");
                        json_buf_append(&b, names[i], strlen(names[i]));
                        APPEND(&b, "</dt><dd id=\"f-");
                        for (const char *p = names[i]; *p; p++)
                                json_buf_append(&b, *p == ' ' ? "-" : p, 1);
                        APPEND(&b, "\">");
                        console_html(&b, vals[i], strlen(vals[i]));
                        APPEND(&b, "</dd>");
                }
        } else {
                APPEND(&b, "<dt>state</dt><dd id=\"f-state\">ended</dd>");
        }
        APPEND(&b, "</dl>");
        if (w && w->live &&
            (w->may & (MAY_KILL | MAY_PAUSE | MAY_RESUME | MAY_GRANT | MAY_BLOCK))) {
                /* only what this uid may do: the rest it is not shown */
                APPEND(&b, "<div class=\"actions\">");
                if (w->may & MAY_KILL)
                        action_form(&b, run, "kill", "Kill", NULL, csrf, NULL, NULL);
                if (!strcmp(w->state, "paused") && (w->may & MAY_RESUME))
                        action_form(&b, run, "resume", "Resume", NULL, csrf, NULL, NULL);
                else if (strcmp(w->state, "paused") && (w->may & MAY_PAUSE))
                        action_form(&b, run, "pause", "Pause", NULL, csrf, NULL, NULL);
                if (w->may & MAY_BLOCK)
                        action_form(&b, run, "block", "Block the agent", NULL, csrf, NULL, NULL);
                if (w->may & MAY_GRANT) {
                        action_form(&b, run, "allow-host", "Grant host", "host", csrf, NULL, NULL);
                        action_form(&b, run, "revoke-host", "Revoke host", "host", csrf, NULL,
                                    NULL);
                }
                APPEND(&b, "</div>");
        }
        output_tail(&b, cs, run);
        APPEND(&b, "<h2>Timeline</h2>");
        if (e < 0)
                APPEND(&b, "<p class=\"error\">cannot read the audit log</p>");
        APPEND(&b, "<ol id=\"timeline\" class=\"timeline\">");
        struct propose_ctx pc = {
                .run = run, .csrf = csrf, .may_grant = w && w->live && (w->may & MAY_GRANT)};
        /* a byte budget: a run that fills its records with escapable bytes
         * never makes its page (and its kill button) too big to serve */
        for (size_t i = 0; i < t.n; i++) {
                if (b.len > TIMELINE_BYTES_MAX) {
                        APPEND(&b, "<li class=\"more\">older records not shown (the page's "
                                   "budget): <code>ringfence audit --run</code> has them</li>");
                        break;
                }
                timeline_entry(&b, t.lines[i], true, &pc);
        }
        APPEND(&b, "</ol>");
        page_tail(&b);
        respond_buf(fd, 200, "text/html; charset=utf-8", &b);
        json_buf_done(&b);
        timeline_free(&t);
        free(r.v);
}

static void api_run(const struct console *cs, int fd, const char *run)
{
        struct timeline t = {0};
        struct json_buf b = {0};
        if (timeline_read(cs, run, &t) < 0) {
                timeline_free(&t);
                respond_text(fd, 502, "cannot read the audit log");
                return;
        }
        APPEND(&b, "{\"run\":");
        console_json_str(&b, run, strlen(run));
        APPEND(&b, ",\"timeline\":[");
        bool any = false;
        for (size_t i = 0; i < t.n && b.len <= TIMELINE_BYTES_MAX; i++) {
                size_t before = b.len;
                if (any)
                        APPEND(&b, ",");
                size_t with = b.len;
                timeline_entry(&b, t.lines[i], false, NULL);
                if (b.len == with && !b.error)
                        b.len = before; /* nothing emitted: no comma either */
                else
                        any = true;
        }
        APPEND(&b, "]}\n");
        respond_buf(fd, 200, "application/json", &b);
        json_buf_done(&b);
        timeline_free(&t);
}

/* ---- audit health --------------------------------------------------------------- */

static int health_line(const char *line, size_t len, void *ctx)
{
        (void)console_health_line(ctx, line, len);
        return 0;
}

/* The verification of the state dir's log and its signed head, done by a
 * child process so the console's one thread never waits for it (verifying
 * 144 MB took 4.6 s; a kill posted meanwhile waited): /health starts one
 * when the log's fingerprint is not the one last verified and shows the
 * last result, saying when the log has changed since. */
struct verify_result {
        uint64_t fp; /* the fingerprint of the log it verified */
        int64_t at_ms;
        int rc, head_rc;
        struct audit_verified v;
        char err[512];
        char head[1024];
};

_Static_assert(sizeof(struct verify_result) <= PIPE_BUF, "a verifier's answer is one write");

static struct {
        pid_t pid; /* the child verifying, 0: none */
        int fd;    /* its answer, -1: none */
        uint64_t fp;
        bool have; /* a result */
        struct verify_result r;
} verifier = {.fd = -1};

static void verify_start(const struct console *cs, uint64_t fp)
{
        int pfd[2];
        if (pipe2(pfd, O_CLOEXEC | O_NONBLOCK) < 0)
                return;
        pid_t pid = fork();
        if (pid < 0) {
                close(pfd[0]);
                close(pfd[1]);
                return;
        }
        if (pid == 0) {
                /* nothing of the parent's but the answer's pipe: a browser's
                 * connection the console closes must not stay open here */
                if (dup2(pfd[1], 3) < 0)
                        _exit(1);
                (void)close_range(4, ~0U, 0);
                struct verify_result r = {.fp = fp, .at_ms = now_ms()};
                struct rf_error err = {0}, herr = {0};
                r.rc = audit_verify(cs->o->state_dir, NULL, NULL, &r.v, &err);
                snprintf(r.err, sizeof r.err, "%s", err.msg);
                r.head_rc = audit_head(cs->o->state_dir, r.head, sizeof r.head, &herr);
                int fl = fcntl(3, F_GETFL);
                (void)fcntl(3, F_SETFL, fl & ~O_NONBLOCK);
                _exit(write(3, &r, sizeof r) == (ssize_t)sizeof r ? 0 : 1);
        }
        close(pfd[1]);
        verifier.pid = pid;
        verifier.fd = pfd[0];
        verifier.fp = fp;
}

/* the child's answer (its pipe is readable or closed) */
static void verify_done(void)
{
        struct verify_result r;
        ssize_t n = read(verifier.fd, &r, sizeof r); /* < PIPE_BUF: written whole */
        if (n < 0 && errno == EAGAIN)
                return;
        if (n == (ssize_t)sizeof r) {
                r.err[sizeof r.err - 1] = r.head[sizeof r.head - 1] = '\0';
                verifier.r = r;
                verifier.have = true;
        }
        close(verifier.fd);
        verifier.fd = -1;
        (void)waitpid(verifier.pid, NULL, 0);
        verifier.pid = 0;
}

static void verify_stop(void)
{
        if (verifier.pid > 0) {
                kill(verifier.pid, SIGKILL);
                (void)waitpid(verifier.pid, NULL, 0);
        }
        if (verifier.fd >= 0)
                close(verifier.fd);
        verifier.pid = 0;
        verifier.fd = -1;
}

/* a verification of the log as it is now started unless done or under
 * way; true when the last result is of the log as it is now */
static bool verify_log(const struct console *cs)
{
        uint64_t fp = audit_log_fingerprint(cs->o->state_dir);
        if (verifier.have && verifier.r.fp == fp)
                return true;
        if (!verifier.pid && fp)
                verify_start(cs, fp);
        return false;
}

/* the counts of the state dir's log, read on from where they were */
static struct console_health kept;
static struct log_pos kept_pos;

static void health_line_cb(const char *line, size_t len, void *ctx)
{
        (void)health_line(line, len, ctx);
}

/* the daemon's verification of its log (GET /v1/audit/verify) into *r:
 * 1 with a result (*current: of the log as it is now), 0 while the daemon
 * verifies it for the first time, -errno (-EACCES: this uid may not) */
static int verify_from_api(const struct console *cs, struct verify_result *r, bool *current)
{
        struct json_buf out = {0};
        struct json_node *doc = NULL;
        struct rf_error err = {0};
        int st = api_call(cs, "GET", "/v1/audit/verify", NULL, &out);
        int ret = st == 200 ? -EPROTO : st < 0 ? st : -EACCES;
        if (st == 200 && json_parse(out.data, out.len, &doc, &err) == 0) {
                const struct json_node *s = json_object_get(doc, "state");
                const struct json_node *cur = json_object_get(doc, "current");
                const struct json_node *h = json_object_get(doc, "hash");
                const struct json_node *e = json_object_get(doc, "error");
                const struct json_node *hd = json_object_get(doc, "head");
                const struct json_node *n;
                *current = cur && cur->type == JSON_TRUE;
                memset(r, 0, sizeof *r);
                if (s && s->type == JSON_STRING && !strcmp(s->str, "verifying"))
                        ret = 0;
                else if (s && s->type == JSON_STRING &&
                         (!strcmp(s->str, "verified") || !strcmp(s->str, "broken"))) {
                        ret = 1;
                        r->rc = !strcmp(s->str, "verified") ? 0 : -EBADMSG;
                        if ((n = json_object_get(doc, "records")))
                                (void)json_number_uint64(n, &r->v.records);
                        if ((n = json_object_get(doc, "checkpoints")))
                                (void)json_number_uint64(n, &r->v.checkpoints);
                        if ((n = json_object_get(doc, "checkpoint_seq")))
                                (void)json_number_uint64(n, &r->v.checkpoint_seq);
                        if ((n = json_object_get(doc, "at_ms")))
                                (void)json_number_int64(n, &r->at_ms);
                        if (h && h->type == JSON_STRING)
                                snprintf(r->v.hash, sizeof r->v.hash, "%s", h->str);
                        if (e && e->type == JSON_STRING)
                                snprintf(r->err, sizeof r->err, "%s", e->str);
                        r->head_rc = hd && hd->type == JSON_STRING ? 0 : -ENOENT;
                        if (!r->head_rc)
                                snprintf(r->head, sizeof r->head, "%s", hd->str);
                }
        }
        json_node_free(doc);
        json_buf_done(&out);
        return ret;
}

static void page_health(const struct console *cs, int slot, int fd)
{
        struct console_health fetched = {0}, *h = &fetched;
        struct json_buf b = {0};
        int64_t now = now_ms();
        int64_t from_ms = (now / CONSOLE_HEALTH_BUCKET_MS + 1) * CONSOLE_HEALTH_BUCKET_MS -
                          CONSOLE_HEALTH_BUCKETS * CONSOLE_HEALTH_BUCKET_MS;
        int scan = 0;
        if (cs->o->api_socket) {
                /* line by line: a log of any size, never held whole */
                int st = api_lines(cs, "/v1/audit", health_line, h);
                scan = st == 200 ? 0 : st < 0 ? st : -EACCES;
        } else {
                (void)log_read_on(cs, &kept_pos, health_line_cb, &kept);
                h = &kept;
        }
        bool here = !cs->o->api_socket || strcmp(cs->o->state_dir, cs->o->api_socket) != 0;
        bool current = here && verify_log(cs);
        const struct verify_result *vr = &verifier.r;
        /* through the API alone: the daemon's own verification of its log */
        struct verify_result daemon_vr;
        int dv = here ? 0 : verify_from_api(cs, &daemon_vr, &current);
        bool have = here ? verifier.have : dv > 0;
        if (!here)
                vr = &daemon_vr;
        page_head(&b, "audit health", cs, slot, NULL);
        APPEND(&b, "<h1>Audit health</h1><dl class=\"facts\"><dt>log</dt><dd id=\"verify\">");
        if (!here && dv < 0) {
                if (dv == -EACCES)
                        APPEND(&b, "not verified here: the daemon does not tell this uid (its "
                                   "grants have no audit)");
                else
                        APPEND(&b, "not verified here: the daemon did not answer");
        } else if (!have) {
                APPEND(&b, "<span class=\"pending\">verifying</span> (reload to see the result)");
        } else if (vr->rc == 0) {
                /* what `ringfence audit verify` says (AUDIT.md): never
                 * "intact" without a saved head, which alone shows records
                 * cut from the end */
                APPEND(&b, "<span class=\"good\">verified</span>: ");
                if (vr->v.records) {
                        APPEND(&b, "records 1..");
                        json_buf_append_uint(&b, vr->v.records);
                        APPEND(&b, " (last seq ");
                        json_buf_append_uint(&b, vr->v.records);
                        APPEND(&b, ", hash ");
                        console_html(&b, vr->v.hash, strnlen(vr->v.hash, 16));
                        APPEND(&b, "...)");
                } else
                        APPEND(&b, "empty (no records)");
                if (vr->v.checkpoints) {
                        APPEND(&b, ", ");
                        json_buf_append_uint(&b, vr->v.checkpoints);
                        APPEND(&b, " signed checkpoints, the last at seq ");
                        json_buf_append_uint(&b, vr->v.checkpoint_seq);
                } else
                        APPEND(&b, ", no signed checkpoint yet");
                APPEND(&b, "; <span class=\"caveat\" id=\"not-checked\">not checked: records "
                           "cut from the end of the log (no saved head here: a log cut short is "
                           "a shorter chain that still verifies)</span>");
        } else {
                APPEND(&b, "<span class=\"error\">BROKEN</span>: ");
                console_html(&b, vr->err, strlen(vr->err));
        }
        if (have) {
                APPEND(&b, " <span class=\"when\" id=\"verified-at\">(verified ");
                if (!here)
                        APPEND(&b, "by the daemon ");
                fmt_time(&b, vr->at_ms);
                if (!current)
                        APPEND(&b, "; the log has changed since: verifying it again");
                APPEND(&b, ")</span>");
        }
        APPEND(&b, "</dd><dt>signed head</dt><dd id=\"head\">");
        if (have && vr->head_rc == 0)
                console_html(&b, vr->head, strlen(vr->head));
        else
                APPEND(&b, "—");
        APPEND(&b, "</dd><dt>records read</dt><dd id=\"records\">");
        json_buf_append_uint(&b, h->records);
        if (scan < 0)
                APPEND(&b, " (the log could not be read whole)");
        APPEND(&b, "</dd></dl><p class=\"hint\">Keep the head off this host (<code>ringfence "
                   "audit head &gt; head.json</code>) and verify against it later: only a head "
                   "saved elsewhere shows records cut from the end.</p>");
        /* the chart: drawn by /app.js from data-series (no library) */
        APPEND(&b, "<h2>The last 24 hours</h2><div id=\"chart\" data-from=\"");
        json_buf_append_uint(&b, (uint64_t)from_ms);
        APPEND(&b, "\" data-step=\"");
        json_buf_append_uint(&b, (uint64_t)CONSOLE_HEALTH_BUCKET_MS);
        APPEND(&b, "\" data-series=\"");
        struct json_buf js = {0};
        APPEND(&js, "{");
        for (int k = 0; k < CONSOLE_SERIES_N; k++) {
                if (k)
                        APPEND(&js, ",");
                json_buf_append_string(&js, console_series_event[k],
                                       strlen(console_series_event[k]));
                APPEND(&js, ":[");
                for (int i = 0; i < CONSOLE_HEALTH_BUCKETS; i++) {
                        if (i)
                                APPEND(&js, ",");
                        json_buf_append_uint(
                                &js,
                                console_health_at(h, k, from_ms + i * CONSOLE_HEALTH_BUCKET_MS));
                }
                APPEND(&js, "]");
        }
        APPEND(&js, "}");
        console_html(&b, js.data ? js.data : "{}", js.len);
        json_buf_done(&js);
        APPEND(&b, "\"></div><table id=\"totals\"><thead><tr><th>event</th><th>in the log</th>"
                   "<th>last 24 h</th></tr></thead><tbody>");
        for (int k = 0; k < CONSOLE_SERIES_N; k++) {
                uint64_t day = 0;
                for (int i = 0; i < CONSOLE_HEALTH_BUCKETS; i++)
                        day += console_health_at(h, k, from_ms + i * CONSOLE_HEALTH_BUCKET_MS);
                APPEND(&b, "<tr><td>");
                json_buf_append(&b, console_series_event[k], strlen(console_series_event[k]));
                APPEND(&b, "</td><td>");
                json_buf_append_uint(&b, h->total[k]);
                APPEND(&b, "</td><td>");
                json_buf_append_uint(&b, day);
                APPEND(&b, "</td></tr>");
        }
        APPEND(&b, "</tbody></table><h2>The wake-loop breaker's refusals</h2><ol id=\"loops\" "
                   "class=\"timeline\">");
        size_t shown =
                h->n_loops < CONSOLE_HEALTH_LOOPS_MAX ? h->n_loops : CONSOLE_HEALTH_LOOPS_MAX;
        for (size_t i = 0; i < shown; i++) {
                size_t k = (h->n_loops - 1 - i) % CONSOLE_HEALTH_LOOPS_MAX;
                timeline_entry(&b, h->loops[k], true, NULL);
        }
        APPEND(&b, "</ol>");
        if (!shown)
                APPEND(&b, "<p class=\"none\">None.</p>");
        page_tail(&b);
        respond_buf(fd, 200, "text/html; charset=utf-8", &b);
        json_buf_done(&b);
        console_health_clear(&fetched);
}

/* ---- actions -------------------------------------------------------------------- */

/* the agent of run `run` blocked: no new run of it starts until unblocked
 * (standalone: the registry's block and control.block, as `ringfence block`;
 * through the daemon: PUT /v1/agents/AGENT/block). 0, or -errno with `why`. */
static int block_agent(const struct console *cs, const char *agent, char *why, size_t wl)
{
        if (cs->o->api_socket) {
                /* the name goes into the API's path as it is: only names the
                 * API itself takes (a '/' or '?' would name another agent) */
                size_t al = strlen(agent);
                bool plain = al > 0 && al <= 256;
                for (size_t i = 0; plain && i < al; i++)
                        plain = (agent[i] >= 'a' && agent[i] <= 'z') ||
                                (agent[i] >= 'A' && agent[i] <= 'Z') ||
                                (agent[i] >= '0' && agent[i] <= '9') || strchr("._-", agent[i]);
                if (!plain) {
                        snprintf(why, wl,
                                 "the daemon's API names agents of A-Z a-z 0-9 . _ - only");
                        return -EINVAL;
                }
                char path[REGISTRY_FIELD_MAX + 32];
                struct json_buf out = {0};
                snprintf(path, sizeof path, "/v1/agents/%s/block", agent);
                int st = api_call(cs, "PUT", path, "{\"reason\":\"operator console\"}", &out);
                snprintf(why, wl, "%s", out.data && !out.error ? out.data : "");
                json_buf_done(&out);
                return st == 200 ? 0 : st < 0 ? st : -EACCES;
        }
        struct rf_error err = {0};
        int r = registry_block(cs->o->state_dir, agent, "operator console", getuid(), &err);
        if (r < 0) {
                snprintf(why, wl, "%s", err.msg);
                return r;
        }
        struct audit_log *log = NULL;
        struct audit_field f[] = {
                {.key = "agent", .type = AUDIT_STR, .s = agent},
                {.key = "reason", .type = AUDIT_STR, .s = "operator console"},
                {.key = "actor_uid", .type = AUDIT_UINT, .u = getuid()},
        };
        if (audit_open(cs->o->state_dir, &log, &err) == 0)
                (void)audit_append(log, NULL, "control.block", f, ARRAY_SIZE(f), true, &err);
        audit_close(log);
        snprintf(why, wl, "blocked");
        return 0;
}

/* POST /run/RUN/propose (host=RULE): the policy fragment that allows a
 * refused destination for every run of the agent, shown to copy; recorded
 * as console.proposal with this uid (standalone: the console appends it to
 * the state dir's log; through the daemon: POST /v1/runs/RUN/proposal, the
 * daemon records it if this uid may read the run) */
static void propose(const struct console *cs, int slot, int fd, const char *run, const char *body,
                    size_t blen)
{
        char field[CONSOLE_FIELD_MAX + 1], host[300];
        int n = console_field(body, blen, "host", field, sizeof field);
        if (n <= 0 || !console_proposal_rule(field, (size_t)n, host, sizeof host)) {
                respond_text(fd, 400, "host: HOST:PORT");
                return;
        }
        struct json_buf frag = {0};
        APPEND(&frag, "{\"network\": {\"allow\": [");
        json_buf_append_string(&frag, host, strlen(host));
        APPEND(&frag, "]}}");
        char note[RF_ERROR_MSG_MAX + 32] = "";
        if (cs->o->api_socket) {
                /* the daemon records it, with this uid, if this uid may read the run */
                char path[128];
                struct json_buf out = {0}, jb = {0};
                APPEND(&jb, "{\"rule\":");
                json_buf_append_string(&jb, host, strlen(host));
                APPEND(&jb, "}");
                snprintf(path, sizeof path, "/v1/runs/%s/proposal", run);
                int st = jb.error ? -ENOMEM : api_call(cs, "POST", path, jb.data, &out);
                json_buf_done(&jb);
                json_buf_done(&out);
                if (st == 403 || st == 404) {
                        json_buf_done(&frag);
                        respond_text(fd, 403, "refused by the daemon");
                        return;
                }
                if (st != 200)
                        snprintf(note, sizeof note, "not recorded: %s",
                                 st < 0 ? strerror(-st) : "the daemon refused it");
        } else {
                struct audit_log *log = NULL;
                struct rf_error err = {0};
                struct audit_field f[] = {
                        {.key = "actor_uid", .type = AUDIT_UINT, .u = getuid()},
                        {.key = "rule", .type = AUDIT_STR, .s = host},
                        {.key = "via", .type = AUDIT_STR, .s = "console"},
                };
                if (audit_open(cs->o->state_dir, &log, &err) < 0 ||
                    audit_append(log, run, "console.proposal", f, ARRAY_SIZE(f), true, &err) < 0)
                        snprintf(note, sizeof note, "not recorded: %s", err.msg);
                audit_close(log);
        }
        page_run(cs, slot, fd, run, note[0] ? note : NULL, frag.error ? "" : frag.data);
        json_buf_done(&frag);
}

/* POST /run/RUN/ACTION: the run's supervisor decides (its peer check) and
 * records this uid as the actor */
static void do_action(const struct console *cs, int slot, int fd, const char *run,
                      const char *action, const char *body, size_t blen)
{
        char req[CONTROL_MSG_MAX], reply[CONTROL_MSG_MAX + 512], host[CONSOLE_FIELD_MAX + 1];
        if (!strcmp(action, "kill"))
                snprintf(req, sizeof req, "kill operator console");
        else if (!strcmp(action, "pause") || !strcmp(action, "resume"))
                snprintf(req, sizeof req, "%s", action);
        else if (!strcmp(action, "allow-host") || !strcmp(action, "revoke-host")) {
                int n = console_field(body, blen, "host", host, sizeof host);
                if (n <= 0 || strpbrk(host, " \t\r\n")) {
                        respond_text(fd, 400, "host: HOST:PORT");
                        return;
                }
                snprintf(req, sizeof req, "%s %s", action, host);
        } else if (!strcmp(action, "block")) {
                req[0] = '\0'; /* below: no request to the run */
        } else if (!strcmp(action, "propose")) {
                propose(cs, slot, fd, run, body, blen);
                return;
        } else {
                respond_text(fd, 404, "no such action");
                return;
        }
        /* what the operator may not do is refused here too, not only hidden */
        static const struct {
                const char *action;
                unsigned bit;
        } need[] = {{"kill", MAY_KILL},        {"pause", MAY_PAUSE},       {"resume", MAY_RESUME},
                    {"allow-host", MAY_GRANT}, {"revoke-host", MAY_GRANT}, {"block", MAY_BLOCK}};
        struct rows rs = {0};
        const struct run_row *w = rows_with(cs, &rs, run);
        unsigned may = w ? w->may : 0;
        char agent[sizeof w->info.agent] = "";
        if (w)
                memcpy(agent, w->info.agent, sizeof agent);
        free(rs.v);
        w = NULL;
        for (size_t i = 0; i < ARRAY_SIZE(need); i++)
                if (!strcmp(action, need[i].action) && !(may & need[i].bit)) {
                        respond_text(fd, 403, "refused: this uid may not do that to the run");
                        return;
                }
        int r;
        rows_forget(); /* whatever happens, the next listing is read anew */
        if (!strcmp(action, "block")) {
                char why[RF_ERROR_MSG_MAX], note[RF_ERROR_MSG_MAX + 64];
                r = agent[0] ? block_agent(cs, agent, why, sizeof why) : -ENOENT;
                snprintf(note, sizeof note, "block: %s%s", r < 0 ? "refused: " : "",
                         r == -ENOENT ? "no such run" : why);
                page_run(cs, slot, fd, run, note, NULL);
                return;
        }
        if (cs->o->api_socket) {
                /* the daemon decides again, and records this uid */
                char path[128], jbody[CONSOLE_FIELD_MAX * 2 + 64];
                struct json_buf out = {0}, jb = {0};
                const char *op = !strcmp(action, "allow-host") || !strcmp(action, "revoke-host")
                                         ? "grant"
                                         : action;
                snprintf(path, sizeof path, "/v1/runs/%s/%s", run, op);
                if (!strcmp(op, "grant")) {
                        APPEND(&jb, "{\"");
                        json_buf_append(&jb, action[0] == 'a' ? "allow_host" : "revoke_host",
                                        strlen(action[0] == 'a' ? "allow_host" : "revoke_host"));
                        APPEND(&jb, "\":");
                        json_buf_append_string(&jb, host, strlen(host));
                        APPEND(&jb, "}");
                } else if (!strcmp(op, "kill"))
                        APPEND(&jb, "{\"reason\":\"operator console\"}");
                snprintf(jbody, sizeof jbody, "%s", jb.error ? "" : jb.data ? jb.data : "");
                json_buf_done(&jb);
                r = api_call(cs, "POST", path, jbody[0] ? jbody : NULL, &out);
                if (r == 403 || r == 404) {
                        json_buf_done(&out);
                        respond_text(fd, 403, "refused by the daemon");
                        return;
                }
                snprintf(reply, sizeof reply, "%s%s", r == 200 ? "ok " : "err ",
                         out.data && !out.error ? out.data : "");
                json_buf_done(&out);
                r = r == 200 ? 0 : r < 0 ? r : -EPROTO;
        } else {
                r = registry_request(cs->o->state_dir, run, req, reply, sizeof reply, 15000);
        }
        char note[CONTROL_MSG_MAX + 600];
        if (r < 0)
                snprintf(note, sizeof note, "%s: %s", action,
                         r == -ENOENT ? "no such run" : strerror(-r));
        else
                snprintf(note, sizeof note, "%s: %s", action, reply);
        if (r == 0 && !strncmp(reply, "ok", 2) && !strcmp(action, "kill")) {
                /* the run is gone: its page shows its timeline */
                redirect(fd, "/", NULL);
                return;
        }
        (void)slot;
        page_run(cs, slot, fd, run, note, NULL);
}

/* ---- one request ---------------------------------------------------------------- */

static const struct http_header *header(const struct http_request *r, const char *buf,
                                        const char *name)
{
        for (size_t i = 0; i < r->n_headers; i++)
                if (r->headers[i].name.len == strlen(name) &&
                    !strncasecmp(buf + r->headers[i].name.off, name, r->headers[i].name.len))
                        return &r->headers[i];
        return NULL;
}

static bool hv_is(const struct http_header *h, const char *buf, const char *v)
{
        return h && h->value.len == strlen(v) && !memcmp(buf + h->value.off, v, h->value.len);
}

/* 1: answered (close), 0: more bytes needed */
static int handle(struct console *cs, struct conn *c)
{
        struct http_request r;
        const char *why = NULL;
        int n = http_origin_request_parse(c->buf, c->len, &r, &why);
        if (n == 0)
                return 0;
        if (n == -E2BIG) {
                /* a browser's cookies for this host are every loopback
                 * port's (cookies are not kept per port): a page served
                 * on another port can set so many that each request here
                 * is too large, the login URL's too. The answer clears
                 * them, so that the next request gets through
                 * (docs/CONSOLE.md) */
                static const char msg[] = "request head too large (this host's cookies, which any "
                                          "page on a loopback port may set, are cleared: reload)\n";
                respond(c->fd, 431, "text/plain; charset=utf-8", "Clear-Site-Data: \"cookies\"\r\n",
                        msg, sizeof msg - 1);
                return 1;
        }
        if (n < 0) {
                respond_text(c->fd, 400, why ? why : "bad request");
                return 1;
        }
        if (r.chunked || r.content_length > CONSOLE_BODY_MAX) {
                respond_text(c->fd, 413, "body too large");
                return 1;
        }
        size_t blen = r.content_length > 0 ? (size_t)r.content_length : 0;
        if (c->len < r.head_len + blen)
                return 0;
        const char *buf = c->buf;
        const char *body = buf + r.head_len;
        const struct http_header *host = header(&r, buf, "Host");
        if (!host || !console_host_ok(buf + host->value.off, host->value.len, cs->port)) {
                respond_text(c->fd, 421,
                             "wrong Host: the console answers only its loopback "
                             "address");
                return 1;
        }
        /* nothing for another site, not even a GET: a page on another
         * loopback port is same-site and its requests carry the cookie
         * (an image loop on /health would keep the console busy) */
        const struct http_header *fsite = header(&r, buf, "Sec-Fetch-Site");
        if (fsite && !hv_is(fsite, buf, "same-origin") && !hv_is(fsite, buf, "none")) {
                respond_text(c->fd, 403, "refused: not from this console's own page");
                return 1;
        }
        char method[8] = {0}, path[HTTP_ORIGIN_TARGET_MAX + 1];
        if (r.method.len >= sizeof method) {
                respond_text(c->fd, 405, "method not allowed");
                return 1;
        }
        memcpy(method, buf + r.method.off, r.method.len);
        memcpy(path, buf + r.path.off, r.path.len);
        path[r.path.len] = '\0';
        char *query = strchr(path, '?');
        if (query)
                *query++ = '\0';
        bool get = !strcmp(method, "GET"), post = !strcmp(method, "POST");
        int64_t now = now_ms();

        if (!strcmp(path, "/favicon.ico") && get) {
                respond(c->fd, 204, "image/x-icon", NULL, "", 0); /* none: asked by every browser */
                return 1;
        }
        if (!strcmp(path, "/login") && get) {
                char tok[CONSOLE_FIELD_MAX + 1];
                unsigned char rnd[64];
                int tl = query ? console_field(query, strlen(query), "token", tok, sizeof tok)
                               : -ENOENT;
                int slot = -EACCES;
                if (tl > 0 && getrandom(rnd, sizeof rnd, 0) == (ssize_t)sizeof rnd)
                        slot = console_auth_login(&cs->auth, tok, (size_t)tl, rnd, now);
                explicit_bzero(rnd, sizeof rnd);
                explicit_bzero(tok, sizeof tok);
                if (slot < 0) {
                        respond_text(c->fd, 401,
                                     "this login link is wrong or has expired: run "
                                     "`kill -HUP` on the console for a fresh one");
                        return 1;
                }
                char cookie[256];
                snprintf(cookie, sizeof cookie,
                         "Set-Cookie: " CONSOLE_COOKIE "=%s; Path=/; HttpOnly; SameSite=Strict; "
                         "Max-Age=%d\r\n",
                         cs->auth.s[slot].id, CONSOLE_SESSION_TTL_S);
                redirect(c->fd, "/", cookie);
                return 1;
        }
        const struct http_header *ck = header(&r, buf, "Cookie");
        int slot = ck ? console_auth_session(&cs->auth, buf + ck->value.off, ck->value.len, now)
                      : -EACCES;
        if (slot < 0) {
                respond_text(c->fd, 401, "log in with the URL `ringfence console` printed");
                return 1;
        }
        if (get && !strcmp(path, "/app.js")) {
                respond(c->fd, 200, "text/javascript; charset=utf-8", NULL, console_app_js,
                        strlen(console_app_js));
                return 1;
        }
        if (get && !strcmp(path, "/app.css")) {
                respond(c->fd, 200, "text/css; charset=utf-8", NULL, console_app_css,
                        strlen(console_app_css));
                return 1;
        }
        if (post) {
                /* another origin's form or script: refused before anything */
                const struct http_header *origin = header(&r, buf, "Origin");
                const struct http_header *site = header(&r, buf, "Sec-Fetch-Site");
                char csrf[CONSOLE_FIELD_MAX + 1];
                int cl = console_field(body, blen, "csrf", csrf, sizeof csrf);
                if ((origin && !hv_is(origin, buf, cs->origin) &&
                     !(host && origin->value.len == host->value.len + 7 &&
                       !memcmp(buf + origin->value.off, "http://", 7) &&
                       !memcmp(buf + origin->value.off + 7, buf + host->value.off,
                               host->value.len))) ||
                    (site && !hv_is(site, buf, "same-origin")) || cl <= 0 ||
                    !console_auth_csrf_ok(&cs->auth, slot, csrf, (size_t)cl)) {
                        respond_text(c->fd, 403, "refused: not from this console's own page");
                        return 1;
                }
                if (!strcmp(path, "/logout")) {
                        console_auth_logout(&cs->auth, slot);
                        redirect(c->fd, "/login",
                                 "Set-Cookie: " CONSOLE_COOKIE "=; Path=/; HttpOnly; "
                                 "SameSite=Strict; Max-Age=0\r\n");
                        return 1;
                }
        }
        if (get && !strcmp(path, "/")) {
                page_runs(cs, slot, c->fd);
                return 1;
        }
        if (get && !strcmp(path, "/health")) {
                page_health(cs, slot, c->fd);
                return 1;
        }
        if (get && !strcmp(path, "/api/runs")) {
                api_runs(cs, c->fd);
                return 1;
        }
        struct console_run_path rp;
        int rk = console_run_path(path, &rp);
        if (rk < 0) {
                respond_text(c->fd, 404, "no such page");
                return 1;
        }
        if (rk > 0 && get && !rp.has_action) {
                if (rp.api)
                        api_run(cs, c->fd, rp.run);
                else
                        page_run(cs, slot, c->fd, rp.run, NULL, NULL);
                return 1;
        }
        if (rk > 0 && post && rp.has_action && !rp.api) {
                do_action(cs, slot, c->fd, rp.run, rp.action, body, blen);
                return 1;
        }
        respond_text(c->fd, get || post ? 404 : 405,
                     get || post ? "no such page" : "method not allowed");
        return 1;
}

/* ---- the loop -------------------------------------------------------------------- */

static void conn_close(struct conn *c)
{
        c->fd = safe_close(c->fd);
        free(c->buf);
        c->buf = NULL;
        c->len = 0;
}

/* May the owner of a connection's other end be served? The console's own
 * uid, root, and the uids it was told to allow. */
static bool peer_allowed(const struct console *cs, uint32_t uid)
{
        if (uid == 0 || uid == (uint32_t)geteuid())
                return true;
        for (size_t i = 0; i < cs->o->n_allow_uids; i++)
                if (cs->o->allow_uids[i] == uid)
                        return true;
        return false;
}

static void print_url(const struct console *cs)
{
        char also[CONSOLE_ALLOW_UIDS_MAX * 12 + 16] = "";
        for (size_t i = 0; i < cs->o->n_allow_uids; i++) {
                size_t l = strlen(also);
                snprintf(also + l, sizeof also - l, ", %u", (unsigned)cs->o->allow_uids[i]);
        }
        printf("ringfence console: http://%s:%u/login?token=%s (browsers of uid %u%s and root "
               "only)\n",
               cs->v6 ? "[::1]" : "127.0.0.1", (unsigned)cs->port, cs->auth.token,
               (unsigned)geteuid(), also);
        fflush(stdout);
}

static int new_token(struct console *cs)
{
        unsigned char rnd[32];
        if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
                return -EIO;
        console_auth_token(&cs->auth, rnd, now_ms(), cs->o->token_ttl_s * 1000);
        explicit_bzero(rnd, sizeof rnd);
        return 0;
}

int console_serve(const struct console_opts *o, struct rf_error *err)
{
        static struct console cs; /* sessions live here, not on the stack */
        memset(&cs, 0, sizeof cs);
        cs.o = o;
        for (size_t i = 0; i < CONSOLE_CONNS_MAX; i++)
                cs.c[i].fd = -1;
        int r = console_listen_parse(o->listen, &cs.v6, &cs.port);
        if (r < 0)
                return rf_error_set(err, r, "--listen %s: %s", o->listen, console_listen_why(r));
        _cleanup_close_ int lfd =
                socket(cs.v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (lfd < 0)
                return rf_error_set(err, negative_errno(), "socket: %m");
        int one = 1;
        (void)setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        struct sockaddr_storage ss = {0};
        socklen_t sl;
        if (cs.v6) {
                struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
                a->sin6_family = AF_INET6;
                a->sin6_port = htons(cs.port);
                a->sin6_addr = in6addr_loopback;
                sl = sizeof *a;
        } else {
                struct sockaddr_in *a = (struct sockaddr_in *)&ss;
                a->sin_family = AF_INET;
                a->sin_port = htons(cs.port);
                a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                sl = sizeof *a;
        }
        if (bind(lfd, (struct sockaddr *)&ss, sl) < 0 || listen(lfd, 64) < 0)
                return rf_error_set(err, negative_errno(), "--listen %s: %m", o->listen);
        if (getsockname(lfd, (struct sockaddr *)&ss, &sl) < 0)
                return rf_error_set(err, negative_errno(), "getsockname: %m");
        cs.port = ntohs(cs.v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                              : ((struct sockaddr_in *)&ss)->sin_port);
        snprintf(cs.origin, sizeof cs.origin, "http://%s:%u", cs.v6 ? "[::1]" : "127.0.0.1",
                 (unsigned)cs.port);
        sigset_t sigs;
        sigemptyset(&sigs);
        sigaddset(&sigs, SIGINT);
        sigaddset(&sigs, SIGTERM);
        sigaddset(&sigs, SIGHUP);
        sigaddset(&sigs, SIGPIPE);
        if (sigprocmask(SIG_BLOCK, &sigs, NULL) < 0)
                return rf_error_set(err, negative_errno(), "sigprocmask: %m");
        _cleanup_close_ int sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0)
                return rf_error_set(err, negative_errno(), "signalfd: %m");
        if ((r = new_token(&cs)) < 0)
                return rf_error_set(err, r, "no randomness for the login token");
        print_url(&cs);

        for (;;) {
                struct pollfd p[CONSOLE_CONNS_MAX + 3];
                size_t map[CONSOLE_CONNS_MAX];
                size_t np = 0;
                int64_t now = now_ms(), wait = -1;
                p[np++] = (struct pollfd){.fd = sfd, .events = POLLIN};
                p[np++] = (struct pollfd){.fd = lfd, .events = POLLIN};
                /* the log's verifier (fd -1 while none: poll skips it) */
                p[np++] = (struct pollfd){.fd = verifier.fd, .events = POLLIN};
                for (size_t i = 0; i < CONSOLE_CONNS_MAX; i++) {
                        if (cs.c[i].fd < 0)
                                continue;
                        if (cs.c[i].deadline_ms <= now) {
                                conn_close(&cs.c[i]);
                                continue;
                        }
                        int64_t left = cs.c[i].deadline_ms - now;
                        if (wait < 0 || left < wait)
                                wait = left;
                        map[np - 3] = i;
                        p[np++] = (struct pollfd){.fd = cs.c[i].fd, .events = POLLIN};
                }
                if (poll(p, np, (int)wait) < 0 && errno != EINTR)
                        return rf_error_set(err, negative_errno(), "poll: %m");
                if (p[0].revents & POLLIN) {
                        struct signalfd_siginfo si;
                        while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
                                if (si.ssi_signo == SIGHUP) {
                                        if (new_token(&cs) == 0)
                                                print_url(&cs);
                                } else if (si.ssi_signo != SIGPIPE) {
                                        for (size_t i = 0; i < CONSOLE_CONNS_MAX; i++)
                                                if (cs.c[i].fd >= 0)
                                                        conn_close(&cs.c[i]);
                                        explicit_bzero(&cs.auth, sizeof cs.auth);
                                        rows_forget();
                                        verify_stop();
                                        free(counts.v);
                                        memset(&counts, 0, sizeof counts);
                                        return 0;
                                }
                        }
                }
                if (p[2].revents && verifier.fd >= 0)
                        verify_done();
                for (size_t k = 3; k < np; k++) {
                        if (!p[k].revents)
                                continue;
                        struct conn *c = &cs.c[map[k - 3]];
                        size_t cap = HTTP_HEAD_MAX + CONSOLE_BODY_MAX;
                        if (!c->buf && !(c->buf = malloc(cap))) {
                                conn_close(c);
                                continue;
                        }
                        ssize_t got = recv(c->fd, c->buf + c->len, cap - c->len, 0);
                        if (got < 0 && (errno == EAGAIN || errno == EINTR))
                                continue;
                        if (got <= 0) {
                                conn_close(c);
                                continue;
                        }
                        c->len += (size_t)got;
                        /* answers are written whole, within one deadline (send_all) */
                        send_deadline_ms = mono_ms() + CONSOLE_SEND_TIMEOUT_MS;
                        int done = handle(&cs, c);
                        if (done || c->len == cap)
                                conn_close(c);
                }
                if (p[1].revents & POLLIN) {
                        for (;;) {
                                int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                                if (fd < 0)
                                        break;
                                /* only the console's own uid (its operator's
                                 * browser) and root: another local user's
                                 * connection is closed before it is read,
                                 * whatever cookie it carries, and never
                                 * takes a slot */
                                uint32_t peer = 0;
                                if (publish_peer_uid(fd, &peer) < 0 || !peer_allowed(&cs, peer)) {
                                        close(fd);
                                        continue;
                                }
                                size_t i = 0;
                                while (i < CONSOLE_CONNS_MAX && cs.c[i].fd >= 0)
                                        i++;
                                if (i == CONSOLE_CONNS_MAX) {
                                        close(fd); /* full: the client retries */
                                        continue;
                                }
                                cs.c[i] = (struct conn){.fd = fd,
                                                        .deadline_ms =
                                                                now_ms() + CONSOLE_CONN_TIMEOUT_MS};
                        }
                }
        }
}
