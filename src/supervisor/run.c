/*
 * run.c — the standalone supervisor of one run.
 *
 * One poll loop over: the run channel (messages from init), init's pidfd
 * (readable when init is gone, i.e. the whole run is gone), a signalfd, the
 * timeout timerfd and the stdio/pty relay. The lifecycle is a table of
 * state × event → (next state, exit status rule), so every path to an exit
 * status is in one place:
 *
 *   SETUP    --PTY-->        SETUP     (keep the master, start relaying)
 *   SETUP    --FAIL-->       FAILED    (125, or 126/127 for exec errors)
 *   SETUP    --EXEC_OK-->    RUNNING
 *   RUNNING  --EXIT-->       EXITED    (status / 128+N)
 *   any      --TIMEOUT-->    TIMED_OUT (TERM, grace, kill init: 124)
 *   any      --KILL-->       KILLED    (`ringfence kill`: the whole run, 137)
 *   any      --INIT_GONE-->  DONE      (status decided by the state)
 *
 * Anything else is a protocol violation by init: the run is killed and
 * ringfence exits 125.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "audit/emit.h"
#include "egress/dnsstub.h"
#include "supervisor/nflog.h"
#include "supervisor/publish.h"
#include "egress/egress.h"
#include "run.h"
#include "sandbox/cgroup.h"
#include "sandbox/hostuid.h"
#include "sandbox/launch.h"
#include "sandbox/msg.h"
#include "sandbox/steps.h"
#include "secrets/grant.h"
#include "secrets/secmem.h"
#include "supervisor/control.h"
#include "supervisor/registry.h"
#include "supervisor/termfilter.h"
#include "shared/hostcmd.h"
#include "shared/macro.h"
#include "shared/procstat.h"

#define PUMP_BUF (64 * 1024)

#define BROKER_CONNS_MAX 8
#define BROKER_IDLE_MS   5000 /* a connection silent this long is closed */

struct broker_conn {
        int fd;
        size_t len;
        int64_t deadline;
        char buf[BROKER_REQ_MAX];
};

#define CTL_CONNS_MAX 8
#define CTL_IDLE_MS   2000 /* a control client that says nothing this long is dropped */

struct ctl_conn {
        int fd; /* -1: free */
        int64_t deadline;
};

/* ---- stdio / pty relay ----------------------------------------------------- */

struct pump {
        int in, out;            /* borrowed */
        bool in_eof;            /* no more input */
        bool out_dead;          /* output refused (EPIPE): drain and discard */
        bool is_output;         /* run → host (finishing requires EOF here) */
        bool close_out;         /* close `out` once drained after in_eof */
        struct masker *mask;    /* --mask-output: bound values become *** (secret memory) */
        uint64_t *file_written; /* output to a regular file under --log-max: bytes written
                                 * by all such pumps; else NULL */
        uint64_t file_max;
        bool wipe;             /* the run has grants: bytes are zeroed once passed on, so no
                                * value it prints lingers in this heap (or in a later fork) */
        struct termfilter *tf; /* output: what may reach a terminal (owned, or NULL
                                * under --raw-terminal); the pty's input: the same
                                * filter, borrowed, which counts the replies */
        size_t off, len;
        size_t touched; /* buf[0, touched) ever held bytes: what sup_free wipes */
        char buf[PUMP_BUF];
};

static bool pump_wants_read(const struct pump *p)
{
        size_t reserve =
                (p->mask ? MASK_VALUE_MAX : 0) + (p->tf && p->is_output ? TERMFILTER_SEQ_MAX : 0);
        return !p->in_eof && p->len + reserve < PUMP_BUF && p->in >= 0;
}

/* Output bound for a terminal: read, mask (if --mask-output), then filter
 * (termfilter.h) into the buffer, which the filter's bound keeps in room. */
static void pump_read_filtered(struct pump *p)
{
        unsigned char raw[16384], mid[sizeof raw + MASK_VALUE_MAX];
        size_t reserve = TERMFILTER_SEQ_MAX + (p->mask ? MASK_VALUE_MAX : 0);
        size_t room = PUMP_BUF - p->len, len = 0;
        bool eof = false;

        if (room <= reserve)
                return;
        ssize_t n = read(p->in, raw, room - reserve < sizeof raw ? room - reserve : sizeof raw);
        if (n > 0)
                len = (size_t)n;
        else if (n == 0 || (errno != EAGAIN && errno != EINTR))
                eof = true; /* EOF, or EIO on a pty whose slave is gone */
        else
                return;
        const unsigned char *src = raw;
        if (p->mask) {
                len = masker_feed(p->mask, raw, len, mid, eof);
                src = mid;
        }
        p->len += termfilter_output(p->tf, src, len, p->buf + p->len);
        explicit_bzero(raw, n > 0 ? (size_t)n : 0);
        if (p->mask)
                explicit_bzero(mid, len);
        p->in_eof = p->in_eof || eof;
}

/* The run is gone: what the masker held back goes out (through the filter). */
static void pump_flush_masker(struct pump *p)
{
        unsigned char mid[MASK_VALUE_MAX];

        p->off = 0;
        if (!p->tf) {
                p->len = masker_feed(p->mask, NULL, 0, p->buf, true);
                return;
        }
        size_t m = masker_feed(p->mask, NULL, 0, mid, true);
        p->len = termfilter_output(p->tf, mid, m, p->buf);
        explicit_bzero(mid, m);
}

/* The held-back bytes at the end (pump_flush_masker), counted as touched
 * so that sup_free wipes them too. */
static void pump_flush(struct pump *p)
{
        pump_flush_masker(p);
        if (p->len > p->touched)
                p->touched = p->len;
}

/* Masked reading: the raw bytes pass through the masker into the buffer
 * (never larger: *** is shorter than any masked value); what might begin a
 * value is held back until the next read or the end. */
static void pump_read_masked(struct pump *p)
{
        unsigned char raw[16384];
        size_t room = PUMP_BUF - p->len;
        if (room <= MASK_VALUE_MAX)
                return;
        size_t want = room - MASK_VALUE_MAX < sizeof raw ? room - MASK_VALUE_MAX : sizeof raw;
        ssize_t n = read(p->in, raw, want);
        if (n > 0) {
                p->len += masker_feed(p->mask, raw, (size_t)n, p->buf + p->len, false);
                explicit_bzero(raw, (size_t)n);
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                p->in_eof = true;
                p->len += masker_feed(p->mask, NULL, 0, p->buf + p->len, true);
        }
}

static bool pump_wants_write(const struct pump *p)
{
        return p->len > 0 && !p->out_dead && p->out >= 0;
}

static void pump_read(struct pump *p)
{
        if (p->off > 0 && p->len > 0) {
                memmove(p->buf, p->buf + p->off, p->len);
                if (p->wipe)
                        explicit_bzero(p->buf + p->len, p->off);
        }
        p->off = 0;
        /* every way in appends at buf + len (off is 0 now); the end's
         * held-back bytes come in through pump_flush */
        if (p->tf && p->is_output) {
                pump_read_filtered(p);
        } else if (p->mask) {
                pump_read_masked(p);
        } else {
                ssize_t n = read(p->in, p->buf + p->len, PUMP_BUF - p->len);
                if (n > 0 && p->tf) /* the pty's input: replies the run is owed */
                        termfilter_input(p->tf, p->buf + p->len, (size_t)n);
                if (n > 0)
                        p->len += (size_t)n;
                else if (n == 0 || (errno != EAGAIN && errno != EINTR))
                        p->in_eof = true; /* EOF, or EIO on a pty whose slave is gone */
        }
        if (p->len > p->touched)
                p->touched = p->len;
        if (p->out_dead)
                p->len = 0;
}

static void pump_write(struct pump *p)
{
        if (p->file_written && *p->file_written + p->len > p->file_max) {
                /* the log is full: say so once, then discard (the run goes on) */
                static const char note[] = "\n[ringfence: output truncated: the log reached "
                                           "its --log-max]\n";
                if (*p->file_written <= p->file_max) {
                        size_t fits = (size_t)(p->file_max - *p->file_written);
                        (void)!write(p->out, p->buf + p->off, fits < p->len ? fits : p->len);
                        (void)!write(p->out, note, sizeof note - 1);
                }
                *p->file_written = p->file_max + 1;
                if (p->wipe)
                        explicit_bzero(p->buf + p->off, p->len);
                p->out_dead = true;
                p->len = 0;
                return;
        }
        ssize_t n = write(p->out, p->buf + p->off, p->len);
        if (n > 0 && p->file_written)
                *p->file_written += (uint64_t)n;
        if (n > 0) {
                if (p->wipe)
                        explicit_bzero(p->buf + p->off, (size_t)n);
                p->off += (size_t)n;
                p->len -= (size_t)n;
        } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
                p->out_dead = true;
                p->len = 0;
        }
}

/* After input EOF and a drained buffer, close the run side so it sees EOF. */
static void pump_settle(struct pump *p)
{
        if (p->in_eof && (p->len == 0 || p->out_dead) && p->close_out && p->out >= 0)
                p->out = safe_close(p->out);
}

/*
 * Host stdout/stderr must never block the loop (a slow reader would freeze
 * timeouts and signal handling): pipes, FIFOs and ttys are reopened through
 * /proc/self/fd with O_NONBLOCK — a new open file description, so the
 * caller's own is left as it was. Regular files do not block.
 */
static int host_out_fd(int fd)
{
        char path[32];
        struct stat st;

        if (fstat(fd, &st) < 0 || !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))
                return -1;
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        return open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
}

/* Read one signal from sfd: true if it asks the relay to stop (INT, TERM,
 * HUP, QUIT). */
static bool signalfd_says_stop(int sfd)
{
        struct signalfd_siginfo si;
        return read(sfd, &si, sizeof si) == (ssize_t)sizeof si &&
               (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM || si.ssi_signo == SIGHUP ||
                si.ssi_signo == SIGQUIT);
}

/*
 * Once init is gone the run is gone: whatever is still buffered in its
 * pipes or pty is written out, but we never wait for EOF — a process
 * outside the run may hold a copy of the pipe (passed over a socket) and
 * would otherwise keep ringfence alive and inject output after the run.
 * Waiting for a slow host reader stays interruptible by a terminating signal.
 */
static void pump_final_drain(struct pump *p, int sfd)
{
        while (p->is_output) {
                if (p->len == 0) {
                        if (p->in_eof)
                                return;
                        pump_read(p);
                        if (p->len == 0 && p->mask && p->mask->n_pending)
                                pump_flush(p);
                        if (p->len == 0)
                                return; /* EAGAIN: nothing left that the run wrote */
                }
                if (p->out_dead) {
                        p->len = 0;
                        continue;
                }
                struct pollfd w[2] = {{.fd = p->out, .events = POLLOUT},
                                      {.fd = sfd, .events = POLLIN}};
                if (poll(w, 2, -1) < 0 && errno != EINTR)
                        return;
                if (w[1].revents && signalfd_says_stop(sfd))
                        return;
                if (w[0].revents & (POLLERR | POLLHUP))
                        p->out_dead = true, p->len = 0;
                else if (w[0].revents)
                        pump_write(p);
        }
}

/* ---- terminal mode ------------------------------------------------------- */

struct term {
        bool raw;
        struct termios saved;
};

static void term_raw(struct term *t)
{
        struct termios tio;

        if (t->raw || tcgetattr(STDIN_FILENO, &t->saved) < 0)
                return;
        tio = t->saved;
        cfmakeraw(&tio);
        if (tcsetattr(STDIN_FILENO, TCSADRAIN, &tio) == 0)
                t->raw = true;
}

static void term_restore(struct term *t)
{
        if (t->raw) {
                (void)tcsetattr(STDIN_FILENO, TCSADRAIN, &t->saved);
                /* Answers the terminal sent to queries the run printed must
                 * not end up as input to the user's shell. */
                (void)tcflush(STDIN_FILENO, TCIFLUSH);
        }
        t->raw = false;
}

static void copy_winsize(int master)
{
        struct winsize ws;

        if (master >= 0 && ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
                (void)ioctl(master, TIOCSWINSZ, &ws);
}

/* ---- lifecycle table ------------------------------------------------------- */

enum run_state {
        RS_SETUP,
        RS_RUNNING,
        RS_EXITED,
        RS_FAILED,
        RS_TIMED_OUT,
        RS_LIMIT,  /* an OOM kill or the pids limit inside the run: the whole run is killed */
        RS_KILLED, /* `ringfence kill`: the whole run is killed */
        RS_BROKEN,
        _RS_MAX
};
enum run_event { EV_PTY, EV_FAIL, EV_EXEC_OK, EV_EXIT, EV_TIMEOUT, EV_LIMIT, EV_KILL, _EV_MAX };

/* next state for (state, event); RS_BROKEN marks a protocol violation */
static const enum run_state transitions[_RS_MAX][_EV_MAX] = {
        [RS_SETUP] = {[EV_PTY] = RS_SETUP,
                      [EV_FAIL] = RS_FAILED,
                      [EV_EXEC_OK] = RS_RUNNING,
                      [EV_EXIT] = RS_BROKEN,
                      [EV_TIMEOUT] = RS_TIMED_OUT,
                      [EV_LIMIT] = RS_LIMIT,
                      [EV_KILL] = RS_KILLED},
        [RS_RUNNING] = {[EV_PTY] = RS_BROKEN,
                        [EV_FAIL] = RS_BROKEN,
                        [EV_EXEC_OK] = RS_BROKEN,
                        [EV_EXIT] = RS_EXITED,
                        [EV_TIMEOUT] = RS_TIMED_OUT,
                        [EV_LIMIT] = RS_LIMIT,
                        [EV_KILL] = RS_KILLED},
        [RS_EXITED] = {[EV_PTY] = RS_BROKEN,
                       [EV_FAIL] = RS_BROKEN,
                       [EV_EXEC_OK] = RS_BROKEN,
                       [EV_EXIT] = RS_BROKEN,
                       [EV_TIMEOUT] = RS_EXITED,
                       [EV_LIMIT] = RS_LIMIT,
                       [EV_KILL] = RS_EXITED},
        [RS_FAILED] = {[EV_PTY] = RS_BROKEN,
                       [EV_FAIL] = RS_BROKEN,
                       [EV_EXEC_OK] = RS_BROKEN,
                       [EV_EXIT] = RS_BROKEN,
                       [EV_TIMEOUT] = RS_FAILED,
                       [EV_LIMIT] = RS_FAILED,
                       [EV_KILL] = RS_FAILED},
        [RS_TIMED_OUT] = {[EV_PTY] = RS_TIMED_OUT,
                          [EV_FAIL] = RS_TIMED_OUT,
                          [EV_EXEC_OK] = RS_TIMED_OUT,
                          [EV_EXIT] = RS_TIMED_OUT,
                          [EV_TIMEOUT] = RS_TIMED_OUT,
                          [EV_LIMIT] = RS_LIMIT,
                          [EV_KILL] = RS_KILLED},
        [RS_LIMIT] = {[EV_PTY] = RS_LIMIT,
                      [EV_FAIL] = RS_LIMIT,
                      [EV_EXEC_OK] = RS_LIMIT,
                      [EV_EXIT] = RS_LIMIT,
                      [EV_TIMEOUT] = RS_LIMIT,
                      [EV_LIMIT] = RS_LIMIT,
                      [EV_KILL] = RS_LIMIT},
        [RS_KILLED] = {[EV_PTY] = RS_KILLED,
                       [EV_FAIL] = RS_KILLED,
                       [EV_EXEC_OK] = RS_KILLED,
                       [EV_EXIT] = RS_KILLED,
                       [EV_TIMEOUT] = RS_KILLED,
                       [EV_LIMIT] = RS_KILLED,
                       [EV_KILL] = RS_KILLED},
        [RS_BROKEN] = {[EV_PTY] = RS_BROKEN,
                       [EV_FAIL] = RS_BROKEN,
                       [EV_EXEC_OK] = RS_BROKEN,
                       [EV_EXIT] = RS_BROKEN,
                       [EV_TIMEOUT] = RS_BROKEN,
                       [EV_LIMIT] = RS_BROKEN,
                       [EV_KILL] = RS_BROKEN},
};

struct sup {
        struct rf_child child;
        enum run_state state;
        int wait_status;    /* MSG_EXIT */
        struct rf_msg fail; /* MSG_FAIL */
        int master;         /* pty master (owned) */
        bool init_gone;
        /* MSG_EXIT with EXIT_ALONE (msg.h): nothing of the run but init is
         * left and init ends by itself; it is reaped last (sup_init_last) */
        bool init_alone;
        int init_status;
        struct term term;
        struct pump *pumps[3];
        size_t n_pumps;
        int pipes[3][2];      /* non-pty stdio pipes: run side / our side */
        struct rf_cgroup *cg; /* borrowed: the run's cgroups (may be mode none) */
        bool pids_hit;        /* RS_LIMIT because of the pids limit (else memory) */
        uint64_t pids_limit;
        int host_out[3]; /* owned: non-blocking reopenings of our fds 1, 2 (or -1) */
        uint64_t memory_limit;
        int dns;                       /* owned: the run's DNS stub socket (MSG_DNS) or -1 */
        struct audit_emitter *ev;      /* borrowed: the run's events, or NULL */
        struct egress_config *egress;  /* borrowed: NULL = no egress process; `grant` edits it */
        int listen_http, listen_socks; /* owned until the egress process has them */
        /* transparent capture (issue 14): CAPTURE_* from MSG_CAPTURE (0: no
         * capture), the capture listeners (MSG_LISTEN, owned like the two
         * above), the NFLOG socket of the ruleset's refusals (MSG_NFLOG),
         * and the synthetic-address map channel (synth.h): the stub's end
         * and the egress process's end, both owned */
        unsigned capture;
        int listen_cap4, listen_cap6;
        int nflog;
        struct nflog_seen *nflog_seen; /* owned: destinations recorded once (nflog.c) */
        int synth_tx, synth_rx;
        struct synth_map synth; /* owned: the run's name ↔ address map, written by the stub */
        pid_t egress_pid;
        int egress_pidfd, egress_events; /* owned */
        int64_t egress_async_fail;       /* an unanswered egress record that failed */
        unsigned egress_lost;            /* egress processes that went on their own */
        struct rf_grants *grants;        /* borrowed: the run's secrets, or NULL */
        int broker;                      /* owned: the listening broker socket, or -1 */
        struct broker_conn *bconns[BROKER_CONNS_MAX];
        int ctl;                             /* borrowed: the run's control socket, or -1 */
        struct ctl_conn ctls[CTL_CONNS_MAX]; /* control requests being read */
        int kill_waiters[CTL_CONNS_MAX]; /* owned: `kill` requests, answered when the run is gone */
        bool paused;
        char killed_by[160];     /* "uid 0 (root): reason" */
        char storm_note[2048];   /* a refusal storm's notice, held back for the end (pty runs) */
        uint64_t file_written;   /* the run's output written to a log file */
        uint64_t log_max;        /* --log-max: 0 none */
        struct publish *publish; /* borrowed: published ports (publish.h), or NULL */
        /* OCI create (run_services.held): GATE_NONE for other runs */
        enum { GATE_NONE, GATE_BUILDING, GATE_HELD, GATE_OPEN } gate_state;
        int gate; /* borrowed: readable when `start` came */
        void (*held)(void *ctx, pid_t init);
        void (*console)(void *ctx, int master); /* OCI: the pty master goes there */
        bool direct_stdio; /* OCI create: the command's stdio is ours, not relayed */
        bool console_given;
        void *held_ctx;
};

/* ---- the secret broker ------------------------------------------------------ */

static int64_t sup_now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void bconn_close(struct broker_conn **c)
{
        if (!*c)
                return;
        safe_close((*c)->fd);
        free(*c);
        *c = NULL;
}

static void broker_accept(struct rf_grants *g, int lfd, struct broker_conn **slots)
{
        for (int k = 0; k < 16; k++) {
                int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0)
                        return;
                size_t i = 0;
                while (i < BROKER_CONNS_MAX && slots[i])
                        i++;
                struct broker_conn *c = i < BROKER_CONNS_MAX ? calloc(1, sizeof *c) : NULL;
                if (!c) {
                        char line[BROKER_REPLY_HEAD_MAX];
                        int n = broker_reply_err(line, sizeof line, BROKER_E_BUSY);
                        if (n > 0)
                                (void)!write(fd, line, (size_t)n);
                        close(fd);
                        continue;
                }
                c->fd = fd;
                c->deadline = sup_now_ms() + BROKER_IDLE_MS;
                slots[i] = c;
        }
        (void)g;
}

/* Serve what a connection sent: each complete request is answered in
 * order; a malformed one gets an error and the connection is closed. A
 * reply that does not fit the socket at once ends the connection too (the
 * client sees a short value and reports it): the supervisor never blocks. */
static void broker_serve(struct rf_grants *g, struct broker_conn **cp)
{
        struct broker_conn *c = *cp;
        ssize_t n = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                bconn_close(cp);
                return;
        }
        if (n > 0)
                c->len += (size_t)n;
        c->deadline = sup_now_ms() + BROKER_IDLE_MS;
        for (;;) {
                struct broker_req req;
                char head[BROKER_REPLY_HEAD_MAX];
                int r = broker_req_parse(c->buf, c->len, &req), hl;
                if (r == 0)
                        return;
                if (r < 0) {
                        hl = broker_reply_err(head, sizeof head, BROKER_E_BADREQ);
                        if (hl > 0)
                                (void)!write(c->fd, head, (size_t)hl);
                        bconn_close(cp);
                        return;
                }
                memmove(c->buf, c->buf + r, c->len - (size_t)r);
                c->len -= (size_t)r;
                const unsigned char *v;
                size_t vl;
                enum broker_err code;
                ssize_t want, w;
                if (grants_read(g, req.name, &v, &vl, &code) == 0) {
                        if ((hl = broker_reply_ok(head, sizeof head, vl)) <= 0) {
                                bconn_close(cp);
                                return;
                        }
                        struct iovec iov[2] = {{head, (size_t)(hl > 0 ? hl : 0)}, {(void *)v, vl}};
                        want = (ssize_t)(iov[0].iov_len + vl);
                        w = writev(c->fd, iov, 2);
                } else {
                        hl = broker_reply_err(head, sizeof head, code);
                        want = hl;
                        w = hl > 0 ? write(c->fd, head, (size_t)hl) : -1;
                }
                if (w != want) {
                        bconn_close(cp);
                        return;
                }
        }
}

/* Kill the whole run: its cgroups first (nothing escapes by forking), then
 * init, whose exit takes the pid namespace with it, and the egress process,
 * whose exit then overlaps the namespace's (sup_egress_stop reaps it and
 * still records what it sent). */
static void sup_kill(struct sup *s)
{
        if (s->cg && cgroup_get_mode(s->cg) != CGROUP_NONE)
                (void)cgroup_kill(s->cg);
        if (!s->init_gone && s->child.pidfd >= 0)
                (void)syscall(SYS_pidfd_send_signal, s->child.pidfd, SIGKILL, NULL, 0);
        if (s->egress_pid > 0)
                (void)syscall(SYS_pidfd_send_signal, s->egress_pidfd, SIGKILL, NULL, 0);
}

static void sup_event(struct sup *s, enum run_event ev)
{
        enum run_state next = transitions[s->state][ev];
        if (next == RS_BROKEN || next == RS_LIMIT || next == RS_KILLED ||
            (next == RS_TIMED_OUT && s->state == RS_SETUP))
                sup_kill(s);
        s->state = next;
}

/* Deadline: like timeout(1), TERM first (to the command's process group),
 * then, TIMEOUT_GRACE_MS later, SIGKILL for the whole run. */
#define TIMEOUT_GRACE_MS 2000
static void sup_on_timer(struct sup *s, int tfd)
{
        uint64_t ticks;

        (void)!read(tfd, &ticks, sizeof ticks);
        if (s->state == RS_TIMED_OUT) {
                sup_kill(s);
                return;
        }
        bool running = s->state == RS_RUNNING;
        sup_event(s, EV_TIMEOUT);
        if (running && s->child.chan >= 0) {
                struct rf_msg m = {.type = MSG_SIGNAL, .value = SIGTERM};
                struct itimerspec its = {
                        .it_value = {.tv_sec = TIMEOUT_GRACE_MS / 1000,
                                     .tv_nsec = (TIMEOUT_GRACE_MS % 1000) * 1000000L}};
                if (rf_msg_send(s->child.chan, &m, -1) == 0 &&
                    timerfd_settime(tfd, 0, &its, NULL) == 0)
                        return;
        }
        sup_kill(s);
}

static void sup_handle(struct sup *s, const struct rf_msg *m, int fd);

/*
 * A network namespace the supervisor set up itself (sandbox_spawn: a root
 * run's own, or an engine's it adopts): what it made is taken exactly as
 * init's messages would be, in init's order, with the same checks. None
 * (a rootless run's, set up by init): nothing to take.
 */
static void sup_take_net(struct sup *s)
{
        struct capture_fds *f = &s->child.net;
        const struct {
                uint32_t type;
                int32_t value;
                int *fd;
        } msgs[] = {
                {MSG_DNS, 0, &f->dns},
                {MSG_LISTEN, RF_EGRESS_HTTP_PORT, &f->http},
                {MSG_LISTEN, RF_EGRESS_SOCKS_PORT, &f->socks},
                {MSG_LISTEN, RF_EGRESS_CAPTURE_PORT, &f->cap4},
                {MSG_LISTEN, RF_EGRESS_CAPTURE_PORT | CAPTURE_LISTEN_V6, &f->cap6},
                {MSG_NFLOG, 0, &f->nflog},
        };
        for (size_t i = 0; i < ARRAY_SIZE(msgs); i++) {
                if (*msgs[i].fd < 0)
                        continue;
                struct rf_msg m = {.type = msgs[i].type, .value = msgs[i].value};
                int fd = *msgs[i].fd;
                *msgs[i].fd = -1;
                sup_handle(s, &m, fd);
                if (s->state == RS_BROKEN)
                        break;
        }
        if (s->state != RS_BROKEN && f->capture) {
                struct rf_msg c = {.type = MSG_CAPTURE, .value = (int32_t)f->capture};
                sup_handle(s, &c, -1);
        }
        capture_fds_close(f);
}

static void sup_on_msg(struct sup *s)
{
        struct rf_msg m;
        int fd = -1;
        int r = rf_msg_recv(s->child.chan, &m, &fd);

        /* init exiting with a message of ours unread (say START, when a
         * setup step failed first) makes the kernel report ECONNRESET once,
         * ahead of what init sent before it went: read again. */
        if (r == -ECONNRESET)
                r = rf_msg_recv(s->child.chan, &m, &fd);
        if (r == 0 || r == -ECONNRESET) {
                s->child.chan = safe_close(s->child.chan);
                return;
        }
        if (r < 0) {
                sup_event(s, EV_FAIL); /* malformed: treat as a failure */
                s->state = RS_BROKEN;
                sup_kill(s);
                return;
        }
        sup_handle(s, &m, fd);
}

/* One message of init's (or of the capture of an engine's namespace,
 * sup_take_net), with the fd it carried (owned, or -1). */
static void sup_handle(struct sup *s, const struct rf_msg *mp, int fd)
{
        const struct rf_msg m = *mp;
        switch (m.type) {
        case MSG_PTY:
                if (s->console && !s->console_given && fd >= 0) {
                        /* handed on, never relayed: the engine has the terminal */
                        s->console_given = true;
                        s->console(s->held_ctx, fd);
                        safe_close(fd);
                        sup_event(s, EV_PTY);
                        break;
                }
                if (s->master >= 0 || s->console_given || fd < 0) {
                        safe_close(fd);
                        s->state = RS_BROKEN;
                        sup_kill(s);
                        return;
                }
                s->master = fd;
                (void)fcntl(fd, F_SETFL, O_NONBLOCK);
                sup_event(s, EV_PTY);
                break;
        case MSG_FAIL:
                s->fail = m;
                sup_event(s, EV_FAIL);
                break;
        case MSG_DNS:
                /* once, during setup, with a socket */
                if (s->dns >= 0 || fd < 0 || s->state != RS_SETUP) {
                        safe_close(fd);
                        s->state = RS_BROKEN;
                        sup_kill(s);
                        return;
                }
                s->dns = fd;
                break;
        case MSG_LISTEN: {
                /* each listener once, during setup; the egress process is
                 * started when the first connection arrives (sup_egress_start):
                 * a run that never uses the network never pays for it */
                int *slot = m.value == RF_EGRESS_HTTP_PORT      ? &s->listen_http
                            : m.value == RF_EGRESS_SOCKS_PORT   ? &s->listen_socks
                            : m.value == RF_EGRESS_CAPTURE_PORT ? &s->listen_cap4
                            : m.value == (RF_EGRESS_CAPTURE_PORT | CAPTURE_LISTEN_V6)
                                    ? &s->listen_cap6
                                    : NULL;
                if (!slot || *slot >= 0 || fd < 0 || s->state != RS_SETUP || s->egress_pid > 0) {
                        safe_close(fd);
                        s->state = RS_BROKEN;
                        sup_kill(s);
                        return;
                }
                *slot = fd;
                if (!s->egress && s->listen_http >= 0 && s->listen_socks >= 0) {
                        /* no egress process at all: connections are refused */
                        s->listen_http = safe_close(s->listen_http);
                        s->listen_socks = safe_close(s->listen_socks);
                }
                break;
        }
        case MSG_CAPTURE:
                /* once, during setup, without a socket, for a run with egress */
                if (fd >= 0 || s->capture || !s->egress || s->state != RS_SETUP ||
                    !(m.value & (CAPTURE_V4 | CAPTURE_V6)) ||
                    (m.value & ~(CAPTURE_V4 | CAPTURE_V6))) {
                        safe_close(fd);
                        s->state = RS_BROKEN;
                        sup_kill(s);
                        return;
                }
                s->capture = (unsigned)m.value;
                /* the map channel, before the run can ask a name (synth.h) */
                if (synth_channel(&s->synth_tx, &s->synth_rx) < 0) {
                        s->state = RS_BROKEN;
                        sup_kill(s);
                        return;
                }
                break;
        case MSG_NFLOG:
                if (fd < 0 || s->nflog >= 0 || !s->egress || s->state != RS_SETUP) {
                        safe_close(fd);
                        s->state = RS_BROKEN;
                        sup_kill(s);
                        return;
                }
                s->nflog = fd;
                (void)fcntl(fd, F_SETFL, O_NONBLOCK);
                break;
        case MSG_SECRETS_DIR:
        case MSG_BROKER:
                /* once each, during setup, when the run has such grants */
                if (fd < 0 || s->state != RS_SETUP || !s->grants ||
                    (m.type == MSG_SECRETS_DIR ? !s->grants->any_file || s->grants->dirfd >= 0
                                               : !s->grants->any_broker || s->broker >= 0)) {
                        safe_close(fd);
                        s->state = RS_BROKEN;
                        sup_kill(s);
                        return;
                }
                if (m.type == MSG_SECRETS_DIR)
                        grants_set_dir(s->grants, fd);
                else {
                        s->broker = fd;
                        (void)fcntl(fd, F_SETFL, O_NONBLOCK);
                }
                break;
        case MSG_EXEC_OK:
                sup_event(s, EV_EXEC_OK);
                break;
        case MSG_BUILT: /* OCI create: once, from an init held for `start` */
                if (fd >= 0 || s->gate_state != GATE_BUILDING || s->state != RS_SETUP) {
                        safe_close(fd);
                        s->state = RS_BROKEN;
                        sup_kill(s);
                        return;
                }
                s->gate_state = GATE_HELD;
                s->held(s->held_ctx, s->child.pid);
                break;
        case MSG_EXIT: {
                /* a fork the pids limit refused ends the run as a limit,
                 * whether the supervisor saw it before the command's end
                 * (a tick, an event) or only now: never a matter of timing */
                struct rf_cgroup_stats st;
                s->wait_status = m.value;
                if (s->state == RS_RUNNING && cgroup_enforced(s->cg) & CGROUP_REQ_PIDS &&
                    cgroup_stats(s->cg, &st) == 0 && st.pids_max_hits > 0) {
                        s->pids_hit = true;
                        sup_event(s, EV_LIMIT);
                }
                sup_event(s, EV_EXIT);
                s->init_alone = m.step == EXIT_ALONE && !s->child.adopted && s->state != RS_BROKEN;
                break;
        }
        case MSG_CONNECTED: /* a published port's way in (publish.h) */
                publish_connected(s->publish, &m, fd);
                break;
        default:
                s->state = RS_BROKEN;
                sup_kill(s);
        }
}

/* ---- the control channel (control.h) ------------------------------------------ */

static void sup_egress_stop(struct sup *s);

static bool inject_live(const void *grants, const char *name)
{
        return grants_inject_live(grants, name);
}

/* A revoked or expired injection leaves the egress configuration, and the
 * egress process holding its value goes (the next connection starts one
 * without it). */
static void sup_inject_sync(struct sup *s)
{
        if (!s->paused && s->egress && s->egress->n_inject &&
            egress_config_inject_drop(s->egress, inject_live, s->grants) > 0)
                sup_egress_stop(s);
}

static const char *state_name(const struct sup *s)
{
        if (s->paused)
                return "paused";
        switch (s->state) {
        case RS_SETUP:
                return s->gate_state == GATE_HELD ? "created" : "starting";
        case RS_RUNNING:
                return "running";
        case RS_EXITED:
                return "exited";
        case RS_TIMED_OUT:
                return "timed-out";
        case RS_KILLED:
                return "killed";
        case RS_FAILED:
        case RS_LIMIT:
        case RS_BROKEN:
        case _RS_MAX:
        default:
                return "ending";
        }
}

static void ctl_reply(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ctl_reply(int fd, const char *fmt, ...)
{
        char buf[CONTROL_MSG_MAX];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        if (n > 0)
                (void)send(fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1,
                           MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* run.kill, run.pause, run.resume: who (SO_PEERCRED), why, in which state. */
static void ctl_record(struct sup *s, const char *event, const struct ucred *who,
                       const char *reason)
{
        char user[64] = "?", buf[1024];
        struct passwd pw, *pp = NULL;
        if (getpwuid_r(who->uid, &pw, buf, sizeof buf, &pp) == 0 && pp)
                snprintf(user, sizeof user, "%s", pp->pw_name);
        struct audit_field f[] = {
                {.key = "actor_uid", .type = AUDIT_UINT, .u = who->uid},
                {.key = "actor_user", .type = AUDIT_STR, .s = user},
                {.key = "actor_pid", .type = AUDIT_UINT, .u = (uint64_t)who->pid},
                {.key = "reason", .type = AUDIT_STR, .s = reason},
                {.key = "state", .type = AUDIT_STR, .s = state_name(s)},
        };
        struct rf_error e = {0};
        if (s->ev)
                (void)audit_emit(s->ev, event, NULL, NULL, f, ARRAY_SIZE(f), AUDIT_EMIT_DURABLE,
                                 &e);
        if (!strcmp(event, "run.kill"))
                snprintf(s->killed_by, sizeof s->killed_by, "uid %u (%s)%s%.100s",
                         (unsigned)who->uid, user, reason[0] ? ": " : "", reason);
}

/*
 * A refusal storm (egress.h: one refusal repeated EGRESS_STORM_COUNT times
 * within EGRESS_STORM_WINDOW_MS — a client retrying what will never be
 * allowed): network.on_refusal_storm "kill" ends the run, recorded;
 * "notice" tells the caller once per refusal, on stderr — at once, or at
 * the run's end when the run has a terminal (a full-screen program owns
 * it: a line in the middle would corrupt its screen).
 */
static void sup_storm(struct sup *s, const struct run_services *rs, bool pty)
{
        const struct egress_refusal *r;
        if (!egress_refusals_storm(&r))
                return;
        char what[EGRESS_DEST_MAX + EGRESS_REASON_MAX + 96];
        snprintf(what, sizeof what, "%s refused %d times within %d s (%s)", r->dest,
                 EGRESS_STORM_COUNT, EGRESS_STORM_WINDOW_MS / 1000, r->reason);
        if (rs->storm_kill && s->state == RS_RUNNING) {
                char reason[sizeof what + 64];
                snprintf(reason, sizeof reason,
                         "refusal storm: %s; network.on_refusal_storm is kill", what);
                struct ucred self = {.pid = getpid(), .uid = getuid()};
                ctl_record(s, "run.kill", &self, reason);
                sup_event(s, EV_KILL);
                return;
        }
        char line[sizeof s->storm_note];
        (void)!snprintf(line, sizeof line,
                        "ringfence: the run keeps trying %s%s%s: it will not be allowed (network."
                        "on_refusal_storm \"kill\" ends such runs)\n",
                        what, r->fix[0] ? "; " : "", r->fix);
        if (pty) {
                if (!s->storm_note[0])
                        snprintf(s->storm_note, sizeof s->storm_note, "%s", line);
        } else
                (void)!write(STDERR_FILENO, line, strlen(line));
}

/* One request: authorised by SO_PEERCRED (root or our own uid), then done. */
static void ctl_serve(struct sup *s, struct ctl_conn *c)
{
        char buf[CONTROL_MSG_MAX + 1];
        struct control_req req;
        struct ucred who;
        socklen_t wl = sizeof who;
        const char *why = "";
        int fd = c->fd;

        c->fd = -1;
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n <= 0) {
                close(fd);
                return;
        }
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &who, &wl) < 0 ||
            (who.uid != 0 && who.uid != geteuid())) {
                ctl_reply(fd, "err permission denied: run %s belongs to uid %u",
                          s->child.pid > 0 ? "this" : "?", (unsigned)geteuid());
                close(fd);
                return;
        }
        if (control_req_parse(buf, (size_t)n, &req, &why) < 0) {
                ctl_reply(fd, "err %s", why);
                close(fd);
                return;
        }
        if (req.actor >= 0 && who.uid != 0) {
                ctl_reply(fd, "err permission denied: acting for another uid is for root peers");
                close(fd);
                return;
        }
        /* who the records name: the peer, or whom a root peer acts for */
        struct ucred actor = who;
        if (req.actor >= 0)
                actor = (struct ucred){.pid = 0, .uid = (uid_t)req.actor, .gid = 0};
        switch (req.op) {
        case CTL_STATUS: {
                struct rf_cgroup_stats cs = {0};
                (void)cgroup_stats(s->cg, &cs);
                ctl_reply(fd,
                          "ok %s {\"state\":\"%s\",\"init_pid\":%d,\"egress_pid\":%d,"
                          "\"paused\":%s,\"grants\":%zu,\"stats\":{\"cpu_usec\":%llu,"
                          "\"memory_current\":%llu,\"memory_peak\":%llu,\"oom_kills\":%llu,"
                          "\"pids_current\":%llu,\"pids_max_hits\":%llu}}",
                          state_name(s), state_name(s), (int)s->child.pid, (int)s->egress_pid,
                          s->paused ? "true" : "false", s->grants ? s->grants->n : 0,
                          (unsigned long long)cs.cpu_usec, (unsigned long long)cs.memory_current,
                          (unsigned long long)cs.memory_peak, (unsigned long long)cs.oom_kills,
                          (unsigned long long)cs.pids_current,
                          (unsigned long long)cs.pids_max_hits);
                break;
        }
        case CTL_KILL_AS: /* the daemon, acting for its caller (checked above) */
        case CTL_KILL: {
                ctl_record(s, "run.kill", &actor, req.arg);
                s->paused = false;
                sup_event(s, EV_KILL);
                /* answered once everything of the run is gone */
                for (size_t i = 0; i < CTL_CONNS_MAX; i++)
                        if (s->kill_waiters[i] < 0) {
                                s->kill_waiters[i] = fd;
                                return;
                        }
                ctl_reply(fd, "ok killing");
                break;
        }
        case CTL_ATTACH: {
                /* a process joining the run (ringfence-oci exec): the
                 * peer's own child, moved into the run's cgroups before it
                 * enters the run's namespaces; recorded as run.exec */
                pid_t pid = (pid_t)atoi(req.arg);
                char reason[64];
                struct procstat ps;
                if (procstat_read(pid, &ps) < 0 || ps.ppid != who.pid) {
                        ctl_reply(fd, "err attach: not a child of the caller");
                        break;
                }
                /* a created container's too: its createContainer and
                 * startContainer hooks join it (ringfence-oci) */
                bool held = s->state == RS_SETUP && s->gate_state == GATE_HELD;
                if ((s->state != RS_RUNNING && !held) || s->paused) {
                        ctl_reply(fd, "err attach: the run is not running");
                        break;
                }
                int r = cgroup_attach(s->cg, pid, false);
                if (r < 0) {
                        ctl_reply(fd, "err attach: %s", strerror(-r));
                        break;
                }
                snprintf(reason, sizeof reason, "pid %d joins the run", (int)pid);
                ctl_record(s, "run.exec", &actor, reason);
                ctl_reply(fd, "ok attached");
                break;
        }
        case CTL_LIMITS: {
                /* new cgroup limits (ringfence-oci update): never above
                 * the run's own, recorded as run.limits */
                struct rf_limits lim = {.memory = req.limits[0],
                                        .pids = req.limits[1],
                                        .cpus_milli = req.limits[2]};
                if (s->state != RS_RUNNING && s->state != RS_SETUP) {
                        ctl_reply(fd, "err limits: the run is not running");
                        break;
                }
                int r = cgroup_update(s->cg, &lim);
                if (r < 0) {
                        ctl_reply(fd, "err limits: %s",
                                  r == -EPERM        ? "above the run's own limit (its ceiling)"
                                  : r == -EOPNOTSUPP ? "a limit this run does not enforce"
                                                     : strerror(-r));
                        break;
                }
                ctl_record(s, "run.limits", &actor, req.arg);
                ctl_reply(fd, "ok limits");
                break;
        }
        case CTL_SIGNAL: {
                /* a signal for the command's process group, or with "all"
                 * for every process of the run's pid namespace (its init
                 * sends it: ringfence-oci kill [--all] SIGNAL) */
                if (s->state != RS_RUNNING || s->child.chan < 0 || s->gate_state == GATE_BUILDING ||
                    s->gate_state == GATE_HELD) {
                        ctl_reply(fd, "err signal: the run's command is not running");
                        break;
                }
                struct rf_msg m = {.type = MSG_SIGNAL,
                                   .value = req.signal_all ? -req.signal : req.signal};
                int r = rf_msg_send(s->child.chan, &m, -1);
                if (r < 0) {
                        ctl_reply(fd, "err signal: %s", strerror(-r));
                        break;
                }
                ctl_reply(fd, "ok signalled");
                break;
        }
        case CTL_PAUSE:
        case CTL_RESUME: {
                bool pause = req.op == CTL_PAUSE;
                int r = s->state != RS_RUNNING ? -ESRCH : cgroup_freeze(s->cg, pause);
                if (r < 0) {
                        ctl_reply(fd, "err cannot %s the run: %s", control_op_name(req.op),
                                  r == -ESRCH ? "it is not running"
                                  : r == -EOPNOTSUPP
                                          ? "no cgroup freezer for it (rootless without a "
                                            "delegated cgroup)"
                                          : strerror(-r));
                        break;
                }
                s->paused = pause;
                ctl_record(s, pause ? "run.pause" : "run.resume", &actor, "");
                ctl_reply(fd, "ok %s", state_name(s));
                break;
        }
        case CTL_ALLOW_HOST:
        case CTL_REVOKE_HOST: {
                struct rf_error e = {0};
                bool add = req.op == CTL_ALLOW_HOST;
                /* a frozen egress process would not die (v1 freezer): resume first */
                int r = s->paused   ? rf_error_set(&e, -EBUSY, "the run is paused: resume it first")
                        : s->egress ? egress_config_allow(s->egress, req.arg, add, &e)
                                    : rf_error_set(&e, -ENOTSUP, "this run has no egress");
                if (r < 0) {
                        ctl_reply(fd, "err %s", e.msg);
                        break;
                }
                struct audit_field f[] = {
                        {.key = "actor_uid", .type = AUDIT_UINT, .u = actor.uid},
                        {.key = "change", .type = AUDIT_STR, .s = add ? "allow" : "revoke"},
                        {.key = "rule", .type = AUDIT_STR, .s = req.arg},
                };
                if (s->ev)
                        (void)audit_emit(s->ev, "egress.grant", NULL, NULL, f, ARRAY_SIZE(f),
                                         AUDIT_EMIT_DURABLE, &e);
                sup_egress_stop(s);
                ctl_reply(fd, "ok %s %s", add ? "allowed" : "revoked", req.arg);
                break;
        }
        case CTL_REVOKE_SECRET: {
                char reason[64];
                snprintf(reason, sizeof reason, "revoked by uid %u", (unsigned)actor.uid);
                int revoked = grants_revoke(s->grants, req.arg, reason);
                /* the egress process holding the value is replaced before
                 * the answer: a request sent once `grant` returns never
                 * gets it */
                sup_inject_sync(s);
                ctl_reply(fd, "ok revoked %d", revoked);
                break;
        }
        case _CTL_MAX:
        case _CTL_INVALID:
        default:
                ctl_reply(fd, "err unknown request");
        }
        close(fd);
}

static void ctl_accept(struct sup *s)
{
        for (int k = 0; k < 16; k++) {
                int fd = accept4(s->ctl, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0)
                        return;
                size_t i = 0;
                while (i < CTL_CONNS_MAX && s->ctls[i].fd >= 0)
                        i++;
                if (i == CTL_CONNS_MAX) {
                        ctl_reply(fd, "err busy");
                        close(fd);
                        continue;
                }
                s->ctls[i] = (struct ctl_conn){fd, sup_now_ms() + CTL_IDLE_MS};
        }
}

static void sup_egress_lost(struct sup *s, int start_err);

/*
 * The first connection to either listener starts the run's egress process,
 * which takes both (and accepts what is already queued). A process that
 * cannot be started counts as one lost (sup_egress_lost): the connection
 * still queued starts the next try, and past SUP_EGRESS_LOST_MAX the
 * listeners are closed, so connections are refused (ECONNREFUSED), never
 * served unchecked — and never retried in a loop (a failure that stays,
 * such as a TLS module that cannot be loaded, spawned one after another
 * while a connection waited).
 */
static void sup_egress_start(struct sup *s)
{
        /* the run's name map as it is now, inherited by the egress process */
        const struct synth_map *map = &s->synth;
        /* what waits in the map channel is already in that map (a
         * restarted egress process would read it twice): dropped */
        uint8_t stale[512];
        while (map && s->synth_rx >= 0 && recv(s->synth_rx, stale, sizeof stale, MSG_DONTWAIT) > 0)
                ;
        struct egress_fds fds = {
                .http = s->listen_http,
                .socks = s->listen_socks,
                .cap4 = s->listen_cap4,
                .cap6 = s->listen_cap6,
                .synth_rx = s->synth_rx,
                .synth = map,
        };
        pid_t pid = egress_spawn(s->egress, &fds, &s->egress_events, &s->egress_pidfd);
        if (pid < 0) {
                sup_egress_lost(s, pid);
                return;
        }
        s->egress_pid = pid;
        /* its memory, pids and CPU count as the run's: it works for the
         * run alone, and the run's limits bound what it can make it
         * spend. Not in the run's cgroups: no egress at all. */
        int r;
        if (s->cg && cgroup_get_mode(s->cg) != CGROUP_NONE &&
            (r = cgroup_attach(s->cg, pid, false)) < 0)
                sup_egress_lost(s, r); /* killed and reaped there */
        /* the listeners stay open here too (not polled while an egress process
         * serves them): `grant` restarts egress with another policy */
}

/* What the egress process has sent and the loop has not read yet, recorded
 * without waiting for more (at most 4096 datagrams). */
static void sup_egress_drain(struct sup *s)
{
        for (int k = 0; k < 4096 && s->ev && s->egress_events >= 0; k++) {
                struct pollfd e = {.fd = s->egress_events, .events = POLLIN};
                if (poll(&e, 1, 0) <= 0 || !(e.revents & POLLIN) ||
                    egress_event_serve(s->egress_events, s->ev, &s->egress_async_fail) <= 0)
                        break;
        }
}

/* The egress process in service, if any, goes (its connections close);
 * what it sent before it went — a last response, a close — is still
 * recorded. At the run's end, and for `grant`: the next connection then
 * starts one with the changed policy. */
static void sup_egress_stop(struct sup *s)
{
        if (s->egress_pid > 0) {
                (void)syscall(SYS_pidfd_send_signal, s->egress_pidfd, SIGKILL, NULL, 0);
                (void)waitpid(s->egress_pid, NULL, 0);
                s->egress_pid = 0;
                sup_egress_drain(s);
        }
        s->egress_pidfd = safe_close(s->egress_pidfd);
        s->egress_events = safe_close(s->egress_events);
}

/*
 * The egress process went on its own: its event channel closed (it died —
 * the run's memory limit, a crash — or broke the protocol), or it could not
 * be started (start_err < 0: -errno, recorded as `error`). It is reaped,
 * recorded (`egress.lost`), and the next connection starts another, at most
 * SUP_EGRESS_LOST_MAX times; after that every listener is closed, so
 * connections are refused (ECONNREFUSED), never left waiting in a backlog
 * nobody accepts from.
 */
#define SUP_EGRESS_LOST_MAX 3
#define SUP_PIDS_TICK_MS                                                                           \
        500 /* how often a v1 pids limit's refusals are read (kernfs never notifies them; a fork   \
               the limit refused already failed, this only ends the run) */
static void sup_egress_lost(struct sup *s, int start_err)
{
        sup_egress_stop(s);
        s->egress_lost++;
        bool closed = s->egress_lost > SUP_EGRESS_LOST_MAX;
        if (closed) {
                s->listen_http = safe_close(s->listen_http);
                s->listen_socks = safe_close(s->listen_socks);
                s->listen_cap4 = safe_close(s->listen_cap4);
                s->listen_cap6 = safe_close(s->listen_cap6);
        }
        struct audit_field f[] = {
                {.key = "times", .type = AUDIT_UINT, .u = s->egress_lost},
                {.key = "then",
                 .type = AUDIT_STR,
                 .s = closed ? "egress closed: connections are refused"
                             : "the next connection starts another"},
                {.key = "error",
                 .type = AUDIT_STR,
                 .s = start_err < 0 ? strerror(-start_err) : "it went on its own"},
        };
        struct rf_error e = {0};
        if (s->ev)
                (void)audit_emit(s->ev, "egress.lost", NULL, NULL, f, ARRAY_SIZE(f), 0, &e);
}

/*
 * A command the run could not find, looked up on the host as the caller
 * would (this process's PATH, or the path itself): when the host has it,
 * a hint naming it and the tree to mount (shared/hostcmd.h: an npm
 * prefix, not just its bin/). Empty when the host has no such command.
 */
static void notfound_hint(const char *cmd, char *out, size_t size)
{
        char found[PATH_MAX], root[PATH_MAX], extra[PATH_MAX];
        out[0] = '\0';
        if (host_command(cmd, getenv("PATH"), found, root, extra) < 0)
                return;
        (void)!snprintf(
                out, size,
                " in the run; the host has it at %s, which the run does not see: add --ro %s%s%s "
                "and call it by that path",
                found, root, extra[0] ? " --ro " : "", extra);
}

static int sup_exit_status(const struct sup *s, const char *cmd, uint64_t timeout_ms,
                           struct rf_error *err)
{
        switch (s->state) {
        case RS_EXITED:
                if (WIFEXITED(s->wait_status))
                        return WEXITSTATUS(s->wait_status);
                if (WIFSIGNALED(s->wait_status))
                        return 128 + WTERMSIG(s->wait_status);
                return RF_EXIT_REFUSED;
        case RS_FAILED:
                if (s->fail.step == STEP_EXEC && s->fail.err == ECANCELED) {
                        /* the command child ended before it executed */
                        rf_error_set(err, -ECANCELED,
                                     "%s: not started: the run's command process ended before "
                                     "it could execute it",
                                     cmd);
                        return RF_EXIT_REFUSED;
                }
                if (s->fail.step == STEP_EXEC) {
                        int e = s->fail.err;
                        char hint[3 * PATH_MAX + 160] = "";
                        if (e == ENOENT)
                                notfound_hint(cmd, hint, sizeof hint);
                        rf_error_set(err, -e, "%s: %s%s", cmd,
                                     e == ENOENT ? "command not found" : strerror(e), hint);
                        return e == ENOENT ? RF_EXIT_NOTFOUND : RF_EXIT_NOEXEC;
                }
                rf_error_set(err, -s->fail.err, "cannot set up %s (%s): %s",
                             rf_step_what(s->fail.step), rf_step_name(s->fail.step),
                             strerror(s->fail.err));
                return RF_EXIT_REFUSED;
        case RS_LIMIT:
                if (s->pids_hit)
                        rf_error_set(err, 0,
                                     "the run reached its pids limit (%llu processes) and was "
                                     "killed",
                                     (unsigned long long)s->pids_limit);
                else if (s->memory_limit)
                        rf_error_set(err, 0,
                                     "the run exceeded its memory limit (%llu bytes) and was "
                                     "killed",
                                     (unsigned long long)s->memory_limit);
                else
                        rf_error_set(err, 0, "the run ran out of memory and was killed");
                return 128 + SIGKILL;
        case RS_KILLED:
                rf_error_set(err, 0, "the run was killed by %s", s->killed_by);
                return 128 + SIGKILL;
        case RS_TIMED_OUT:
                rf_error_set(err, 0, "timeout: the run exceeded %llu ms and was stopped",
                             (unsigned long long)timeout_ms);
                return RF_EXIT_TIMEOUT;
        case RS_SETUP:
                if (WIFSIGNALED(s->init_status))
                        rf_error_set(err, -EINTR,
                                     "the run's init was killed by signal %d "
                                     "during setup",
                                     WTERMSIG(s->init_status));
                else
                        rf_error_set(err, -EIO, "the run's init exited during setup");
                return RF_EXIT_REFUSED;
        case RS_RUNNING:
                /* init itself died (killed from outside): so did the run */
                if (WIFSIGNALED(s->init_status)) {
                        rf_error_set(err, 0, "the run was killed by signal %d",
                                     WTERMSIG(s->init_status));
                        return 128 + WTERMSIG(s->init_status);
                }
                rf_error_set(err, -EIO, "the run's init ended unexpectedly");
                return RF_EXIT_REFUSED;
        case RS_BROKEN:
        case _RS_MAX:
        default:
                rf_error_set(err, -EPROTO, "protocol violation on the run channel; run killed");
                return RF_EXIT_REFUSED;
        }
}

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

static void sup_on_signal(struct sup *s, int sfd)
{
        struct signalfd_siginfo si;

        while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
                int sig = (int)si.ssi_signo;
                if (sig == SIGWINCH) {
                        copy_winsize(s->master);
                        continue;
                }
                if (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
                        /* Stop ourselves with the terminal restored; on
                         * SIGCONT take it back and resend the size. */
                        term_restore(&s->term);
                        (void)kill(getpid(), SIGSTOP);
                        continue;
                }
                if (sig == SIGCONT) {
                        if (s->master >= 0) {
                                term_raw(&s->term);
                                copy_winsize(s->master);
                        }
                        continue;
                }
                if (sig == SIGCHLD)
                        continue;
                if (s->gate_state == GATE_BUILDING || s->gate_state == GATE_HELD) {
                        /* a created container's command never ran: a
                         * terminating signal ends it, as it would a
                         * runtime's waiting init */
                        snprintf(s->killed_by, sizeof s->killed_by, "signal %d before start", sig);
                        sup_event(s, EV_KILL);
                        continue;
                }
                for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
                        if (forwarded[i] == sig && s->child.chan >= 0) {
                                struct rf_msg m = {.type = MSG_SIGNAL, .value = sig};
                                (void)rf_msg_send(s->child.chan, &m, -1);
                        }
        }
}

static int sup_setup_stdio(struct sup *s, int stdio[3])
{
        for (int i = 0; i < 3; i++) {
                s->pipes[i][0] = s->pipes[i][1] = -1;
                stdio[i] = -1;
        }
        if (s->master == -2) /* pty mode: no pipes */
                return 0;
        if (s->direct_stdio) { /* the command gets ours themselves (copies) */
                for (int i = 0; i < 3; i++) {
                        int *run_end = i == 0 ? &s->pipes[i][0] : &s->pipes[i][1];
                        if ((*run_end = fcntl(i, F_DUPFD_CLOEXEC, 3)) < 0)
                                return negative_errno();
                        stdio[i] = *run_end;
                }
                return 0;
        }
        for (int i = 0; i < 3; i++) {
                if (pipe2(s->pipes[i], O_CLOEXEC) < 0)
                        return negative_errno();
                /* pipes[i][0] is the read end. stdin: run reads [0], we write [1]. */
                int ours = i == 0 ? s->pipes[i][1] : s->pipes[i][0];
                (void)fcntl(ours, F_SETFL, O_NONBLOCK);
                (void)fcntl(ours, F_SETPIPE_SZ, 1 << 20);
                stdio[i] = i == 0 ? s->pipes[i][0] : s->pipes[i][1];
        }
        return 0;
}

static void sup_close_run_ends(struct sup *s)
{
        for (int i = 0; i < 3; i++) {
                int *run_end = i == 0 ? &s->pipes[i][0] : &s->pipes[i][1];
                *run_end = safe_close(*run_end);
        }
}

static struct pump *pump_new(int in, int out, bool is_output, bool close_out)
{
        /* the buffer is written before it is read (off, len): only the
         * fields before it are zeroed, so a start does not fault in 16
         * pages per pump that an idle stream never uses */
        struct pump *p = malloc(sizeof *p);
        if (!p)
                return NULL;
        memset(p, 0, offsetof(struct pump, buf));
        p->in = in;
        p->out = out;
        p->is_output = is_output;
        p->close_out = close_out;
        /* A host fd that is closed or unusable reads as EOF / writes nowhere. */
        if (in < 0 || fcntl(in, F_GETFL) < 0)
                p->in_eof = true;
        if (out < 0 || fcntl(out, F_GETFL) < 0)
                p->out_dead = true;
        return p;
}

static int sup_add_pump(struct sup *s, int in, int out, bool is_output, bool close_out)
{
        struct pump *p = pump_new(in, out, is_output, close_out);
        if (!p)
                return -ENOMEM;
        p->wipe = is_output && s->grants;
        struct stat st;
        if (is_output && s->log_max && out >= 0 && fstat(out, &st) == 0 && S_ISREG(st.st_mode)) {
                p->file_written = &s->file_written;
                p->file_max = s->log_max;
        }
        s->pumps[s->n_pumps++] = p;
        return 0;
}

static void sup_free(struct sup *s)
{
        if (s->ev)
                audit_emitter_set_ticked(s->ev, false); /* no loop ticks it now */
        term_restore(&s->term);
        for (int i = 0; i < 3; i++)
                s->host_out[i] = safe_close(s->host_out[i]);
        for (size_t i = 0; i < s->n_pumps; i++) {
                if (s->pumps[i]->close_out) /* owned (pump_settle may have closed it) */
                        s->pumps[i]->out = safe_close(s->pumps[i]->out);
                if (s->pumps[i]->wipe) /* the pages it never touched stay untouched */
                        explicit_bzero(s->pumps[i]->buf, s->pumps[i]->touched);
                if (s->pumps[i]->mask) {
                        masker_wipe(s->pumps[i]->mask);
                        s->pumps[i]->mask = secmem_free(s->pumps[i]->mask);
                }
                if (s->pumps[i]->tf && s->pumps[i]->is_output) {
                        explicit_bzero(s->pumps[i]->tf, sizeof *s->pumps[i]->tf);
                        free(s->pumps[i]->tf);
                }
                free(s->pumps[i]);
        }
        for (int i = 0; i < 3; i++)
                close_pair(s->pipes[i]);
        if (s->master >= 0)
                safe_close(s->master);
        s->dns = safe_close(s->dns);
        s->broker = safe_close(s->broker);
        for (size_t i = 0; i < BROKER_CONNS_MAX; i++)
                bconn_close(&s->bconns[i]);
        for (size_t i = 0; i < CTL_CONNS_MAX; i++)
                s->ctls[i].fd = safe_close(s->ctls[i].fd);
        s->listen_http = safe_close(s->listen_http);
        s->listen_socks = safe_close(s->listen_socks);
        s->listen_cap4 = safe_close(s->listen_cap4);
        s->listen_cap6 = safe_close(s->listen_cap6);
        s->nflog = safe_close(s->nflog);
        free(s->nflog_seen);
        s->nflog_seen = NULL;
        sup_egress_stop(s); /* the run is over: so is its way out */
        s->synth_tx = safe_close(s->synth_tx);
        s->synth_rx = safe_close(s->synth_rx);
        synth_map_free(&s->synth);
        safe_close(s->child.chan);
        safe_close(s->child.pidfd);
}

/*
 * The terminal filter (termfilter.h; not under --raw-terminal): on the
 * pty's output, and on any output that is a terminal (a run without a pty
 * whose stdout or stderr is one). Queries pass and are tracked only where
 * the replies come back through us: the pty's output to a terminal, whose
 * input pump (our stdin, a terminal in pty mode) then shares the filter.
 * Elsewhere queries are dropped, as their replies would go to whoever reads
 * that terminal next.
 */
static int sup_add_termfilters(struct sup *s, bool pty)
{
        struct pump *in = NULL;

        for (size_t i = 0; i < s->n_pumps; i++) {
                struct pump *p = s->pumps[i];
                if (!p->is_output) {
                        in = p;
                        continue;
                }
                bool tty = p->out >= 0 && isatty(p->out);
                if (!pty && !tty)
                        continue;
                p->tf = malloc(sizeof *p->tf);
                if (!p->tf)
                        return -ENOMEM;
                termfilter_init(p->tf, pty && tty && in);
                if (pty && tty && in)
                        in->tf = p->tf;
        }
        return 0;
}

/*
 * The run has ended. Replies its terminal still owes to queries the run
 * printed would be read by the next program on that terminal (the
 * operator's shell): read and drop our stdin until each has come, or
 * TERMFILTER_REPLY_WAIT_MS have passed (a terminal that does not answer
 * some query costs that once), or a terminating signal comes. Keys typed
 * in that window are dropped with them.
 */
static void sup_drain_replies(struct sup *s, int sfd)
{
        struct termfilter *tf = NULL;

        for (size_t i = 0; i < s->n_pumps; i++)
                if (!s->pumps[i]->is_output && s->pumps[i]->tf)
                        tf = s->pumps[i]->tf;
        if (!tf || !s->term.raw)
                return;
        int64_t deadline = sup_now_ms() + TERMFILTER_REPLY_WAIT_MS;
        while (termfilter_pending(tf) > 0) {
                int64_t left = deadline - sup_now_ms();
                if (left <= 0)
                        return;
                struct pollfd w[2] = {{.fd = STDIN_FILENO, .events = POLLIN},
                                      {.fd = sfd, .events = POLLIN}};
                if (poll(w, 2, (int)left) < 0) {
                        if (errno == EINTR)
                                continue;
                        return;
                }
                if (w[1].revents && signalfd_says_stop(sfd))
                        return;
                if (w[0].revents & POLLIN) {
                        char buf[1024];
                        ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
                        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                                return;
                        if (n > 0)
                                termfilter_input(tf, buf, (size_t)n);
                } else if (w[0].revents)
                        return; /* the terminal hung up */
        }
}

/* --mask-output: a masker per output stream, in secret memory */
static int sup_add_maskers(struct sup *s)
{
        for (size_t i = 0; i < s->n_pumps; i++) {
                struct pump *p = s->pumps[i];
                if (!p->is_output)
                        continue;
                p->mask = secmem_alloc(sizeof *p->mask);
                if (!p->mask)
                        return negative_errno();
                masker_init(p->mask, s->grants->mv, s->grants->n_mv);
        }
        return 0;
}

/* Let the command start (START to init) and the timeout count. START
 * cannot reach an init that already failed a setup step and went: the loop
 * reads why from the channel and reports it. 0, or -errno (the timer). */
static int sup_go(struct sup *s, int tfd, uint64_t timeout_ms)
{
        struct rf_error ignored = {0};
        if (sandbox_start(&s->child, &ignored) < 0)
                sup_kill(s);
        if (s->gate_state != GATE_NONE)
                s->gate_state = GATE_OPEN;
        if (!timeout_ms)
                return 0;
        struct itimerspec its = {.it_value = {.tv_sec = (time_t)(timeout_ms / 1000),
                                              .tv_nsec = (long)(timeout_ms % 1000) * 1000000L}};
        return timerfd_settime(tfd, 0, &its, NULL) < 0 ? negative_errno() : 0;
}

/*
 * init after an EXIT_ALONE: nothing of the run is left but init, which is
 * exiting; its teardown (namespaces, address space) has overlapped the end
 * of the loop. Handed to the caller (rs->init_left), which reaps it after
 * run.exit and before the run's cgroup goes, unless someone waits on a
 * kill: `ringfence kill` returns once nothing of the run exists, init
 * included, so it is reaped here first.
 */
static void sup_init_last(struct rf_child *last, const struct sup *s, const struct run_services *rs)
{
        bool waiter = false;
        if (last->pid <= 0)
                return;
        for (size_t i = 0; i < CTL_CONNS_MAX; i++)
                waiter |= s->kill_waiters[i] >= 0;
        if (!waiter && rs->init_left) {
                *rs->init_left = *last;
                return;
        }
        sandbox_reap(last, NULL);
        safe_close(last->pidfd);
}

int supervisor_run(struct rf_plan *plan, struct rf_cgroup *cg, const struct run_services *rs,
                   struct rf_error *err)
{
        uint64_t timeout_ms = rs->timeout_ms;
        struct audit_emitter *ev = rs->ev;
        bool dns_exfil_kill = false; /* set by the DNS stub (issue 15) */
        if (ev)
                audit_emitter_set_ticked(ev, true); /* the loop below commits (sup_free: no more) */
        struct sup s = {.state = RS_SETUP,
                        .dns = -1,
                        .broker = -1,
                        .grants = rs->grants,
                        .ctl = -1,
                        .log_max = rs->log_max,
                        .publish = rs->publish,
                        .egress = rs->egress,
                        .listen_http = -1,
                        .listen_socks = -1,
                        .listen_cap4 = -1,
                        .listen_cap6 = -1,
                        .nflog = -1,
                        .synth_tx = -1,
                        .synth_rx = -1,
                        .egress_pidfd = -1,
                        .egress_events = -1,
                        .ev = ev,
                        .master = plan->use_pty ? -2 : -1,
                        .cg = cg,
                        .memory_limit = plan->limits.memory,
                        .pids_limit = plan->limits.pids,
                        .host_out = {-1, -1, -1}};
        sigset_t mask;
        int stdio[3], r;
        int sfd = -1, tfd = -1;

        for (size_t i = 0; i < CTL_CONNS_MAX; i++) {
                s.ctls[i].fd = -1;
                s.kill_waiters[i] = -1;
        }

        (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        signal(SIGPIPE, SIG_IGN);
        sigemptyset(&mask);
        for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
                sigaddset(&mask, forwarded[i]);
        sigaddset(&mask, SIGCHLD);
        sigaddset(&mask, SIGWINCH);
        sigaddset(&mask, SIGTSTP);
        sigaddset(&mask, SIGTTIN);
        sigaddset(&mask, SIGTTOU);
        sigaddset(&mask, SIGCONT);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0) {
                r = rf_error_set(err, negative_errno(), "cannot create signalfd: %m");
                goto refuse;
        }
        if (plan->use_pty) {
                struct winsize ws;
                if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0) {
                        plan->ws_rows = ws.ws_row;
                        plan->ws_cols = ws.ws_col;
                }
        }
        s.direct_stdio = rs->held && !plan->use_pty;
        if ((r = sup_setup_stdio(&s, stdio)) < 0) {
                rf_error_set(err, r, "cannot create the run's stdio pipes: %s", strerror(-r));
                goto refuse;
        }
        if (s.master == -2)
                s.master = -1;

        if (rs->planned && (r = rs->planned(rs->held_ctx, plan, err)) < 0)
                goto refuse;
        r = sandbox_spawn(plan, stdio, cg, &s.child, err);
        /* init has the secret deliveries now (or never will): not kept here */
        plan->secrets_fd = safe_close(plan->secrets_fd);
        if (r < 0)
                goto refuse;
        /* init exists (cloned from a single-threaded process, before any
         * key of the run CA existed): the run's trust is made from now on,
         * beside the vetting and registration below */
        if (plan->trust_late && rs->trust_begin)
                rs->trust_begin(rs->trust_ctx, s.child.chan);
        sup_take_net(&s); /* a root run's or an engine's namespace, set up by sandbox_spawn */
        if (s.direct_stdio) {
                /* the engine's pipes are the command's alone: they end with
                 * it, never held open by the supervisor */
                sup_close_run_ends(&s);
                int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
                for (int i = 0; nul >= 0 && i < 3; i++)
                        (void)dup3(nul, i, 0);
                if (nul > 2)
                        close(nul);
        }
        /* while init builds the run's root (on the other CPU): the run's host
         * uid is vetted (an NSS lookup that misses loads modules: ~0.5 ms)
         * — before registration, whose callback lets a --detach caller go */
        if (plan->map_as_root && (r = hostuid_vet(plan->host_uid, plan->host_gid, err)) < 0) {
                sup_kill(&s);
                sandbox_reap(&s.child, NULL);
                s.init_gone = true;
                goto refuse;
        }
        /* then registered; a refusal here (say, the agent was blocked
         * meanwhile) kills the run before its command starts */
        if (rs->registered) {
                if ((r = rs->registered(rs->registered_ctx, err)) < 0) {
                        sup_kill(&s);
                        sandbox_reap(&s.child, NULL);
                        s.init_gone = true;
                        goto refuse;
                }
                s.ctl = registry_listen_fd(*rs->reg);
        }
        /* the run's TLS trust files, made (and most often sent) by trust_begin
         * above (supervisor/run_tls.c):
         * init waits for them at its first OPF_LATE op */
        if (plan->trust_late) {
                r = rs->trust && rs->trust_begin
                            ? rs->trust(rs->trust_ctx, err)
                            : rf_error_set(err, -EINVAL, "no TLS trust files (internal error)");
                if (r < 0) {
                        sup_kill(&s);
                        sandbox_reap(&s.child, NULL);
                        s.init_gone = true;
                        goto refuse;
                }
                /* like START below: an init that failed a step and went
                 * could not take them; the loop reads why from the channel */
                if (r > 0)
                        sup_kill(&s);
        }
        /* START cannot reach an init that already failed a setup step and
         * went: the loop below reads why from the channel and reports it */
        if (timeout_ms) {
                tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
                if (tfd < 0) {
                        r = rf_error_set(err, negative_errno(), "cannot arm the timeout: %m");
                        sup_kill(&s);
                        sandbox_reap(&s.child, NULL);
                        s.init_gone = true;
                        goto refuse;
                }
        }
        if (rs->held) { /* OCI create: started when the gate opens (sup_go) */
                s.gate_state = GATE_BUILDING;
                s.gate = rs->start_gate;
                s.held = rs->held;
                s.held_ctx = rs->held_ctx;
                s.console = rs->console;
        } else if (sup_go(&s, tfd, timeout_ms) < 0) {
                r = rf_error_set(err, negative_errno(), "cannot arm the timeout: %m");
                sup_kill(&s);
                sandbox_reap(&s.child, NULL);
                s.init_gone = true;
                goto refuse;
        }
        sup_close_run_ends(&s);

        s.host_out[1] = host_out_fd(STDOUT_FILENO);
        s.host_out[2] = host_out_fd(STDERR_FILENO);
        int out1 = s.host_out[1] >= 0 ? s.host_out[1] : STDOUT_FILENO;
        int out2 = s.host_out[2] >= 0 ? s.host_out[2] : STDERR_FILENO;
        if (!plan->use_pty && !s.direct_stdio) {
                /* the stdin pipe's end is the pump's from here (closed at
                 * EOF, or in sup_free): a second close of its number would
                 * close whatever took it since, say a control connection */
                if ((r = sup_add_pump(&s, STDIN_FILENO, s.pipes[0][1], false, true)) == 0)
                        s.pipes[0][1] = -1;
                if (r < 0 || (r = sup_add_pump(&s, s.pipes[1][0], out1, true, false)) < 0 ||
                    (r = sup_add_pump(&s, s.pipes[2][0], out2, true, false)) < 0) {
                        rf_error_set(err, r, "out of memory");
                        sup_kill(&s);
                }
                if (!rs->raw_terminal && (r = sup_add_termfilters(&s, false)) < 0) {
                        rf_error_set(err, r, "out of memory");
                        sup_kill(&s);
                }
                if (rs->mask_output && s.grants && (r = sup_add_maskers(&s)) < 0) {
                        rf_error_set(err, r, "cannot lock memory for --mask-output: %s",
                                     strerror(-r));
                        sup_kill(&s);
                }
        }

        int64_t pids_next = 0; /* the next read of a v1 pids.events */
        for (;;) {
                /* Pty pumps start once the master has arrived. */
                if (plan->use_pty && s.master >= 0 && s.n_pumps == 0) {
                        term_raw(&s.term);
                        copy_winsize(s.master);
                        if (sup_add_pump(&s, STDIN_FILENO, s.master, false, false) < 0 ||
                            sup_add_pump(&s, s.master, out1, true, false) < 0) {
                                rf_error_set(err, -ENOMEM, "out of memory");
                                sup_kill(&s);
                        }
                        if (!rs->raw_terminal && sup_add_termfilters(&s, true) < 0) {
                                rf_error_set(err, -ENOMEM, "out of memory");
                                sup_kill(&s);
                        }
                        if (rs->mask_output && s.grants && (r = sup_add_maskers(&s)) < 0) {
                                rf_error_set(err, r, "cannot lock memory for --mask-output: %s",
                                             strerror(-r));
                                sup_kill(&s);
                        }
                }
                if (s.init_gone || s.init_alone) {
                        for (size_t i = 0; i < s.n_pumps; i++)
                                pump_final_drain(s.pumps[i], sfd);
                        break;
                }

                struct pollfd pfd[10 + 2 * 3 + 1 + BROKER_CONNS_MAX + 1 + CTL_CONNS_MAX + 3 +
                                  PUBLISH_POLLFDS + 1];
                size_t n = 0;
                pfd[n++] = (struct pollfd){.fd = sfd, .events = POLLIN};
                pfd[n++] =
                        (struct pollfd){.fd = s.init_gone ? -1 : s.child.pidfd, .events = POLLIN};
                pfd[n++] = (struct pollfd){.fd = s.child.chan, .events = POLLIN};
                pfd[n++] = (struct pollfd){.fd = tfd, .events = POLLIN};
                pfd[n++] =
                        (struct pollfd){.fd = cgroup_oom_fd(cg), .events = cgroup_oom_events(cg)};
                pfd[n++] = (struct pollfd){.fd = cgroup_pids_fd(cg), .events = POLLPRI};
                pfd[n++] = (struct pollfd){.fd = s.dns, .events = POLLIN};
                pfd[n++] = (struct pollfd){.fd = s.egress_events, .events = POLLIN};
                bool listening =
                        s.egress && s.listen_http >= 0 && s.listen_socks >= 0 && s.egress_pid == 0;
                pfd[n++] = (struct pollfd){.fd = listening ? s.listen_http : -1, .events = POLLIN};
                pfd[n++] = (struct pollfd){.fd = listening ? s.listen_socks : -1, .events = POLLIN};
                for (size_t i = 0; i < s.n_pumps; i++) {
                        struct pump *p = s.pumps[i];
                        pfd[n++] = (struct pollfd){.fd = pump_wants_read(p) ? p->in : -1,
                                                   .events = POLLIN};
                        pfd[n++] = (struct pollfd){.fd = pump_wants_write(p) ? p->out : -1,
                                                   .events = POLLOUT};
                }
                /* the broker: its socket and connections, after the pumps */
                size_t nb = n;
                pfd[n++] = (struct pollfd){.fd = s.broker, .events = POLLIN};
                for (size_t i = 0; i < BROKER_CONNS_MAX; i++)
                        pfd[n++] = (struct pollfd){.fd = s.bconns[i] ? s.bconns[i]->fd : -1,
                                                   .events = POLLIN};
                /* the control socket and its clients */
                size_t nc = n;
                pfd[n++] = (struct pollfd){.fd = s.ctl, .events = POLLIN};
                for (size_t i = 0; i < CTL_CONNS_MAX; i++)
                        pfd[n++] = (struct pollfd){.fd = s.ctls[i].fd, .events = POLLIN};
                /* the capture listeners also start the egress process */
                size_t ncap = n;
                bool cap_listening = s.egress && s.egress_pid == 0;
                pfd[n++] =
                        (struct pollfd){.fd = cap_listening ? s.listen_cap4 : -1, .events = POLLIN};
                pfd[n++] =
                        (struct pollfd){.fd = cap_listening ? s.listen_cap6 : -1, .events = POLLIN};
                /* the run's ruleset refusals (transparent capture) */
                size_t nl = n;
                pfd[n++] = (struct pollfd){.fd = s.nflog, .events = POLLIN};
                /* published ports: their listeners and connections */
                size_t npub = n;
                n += publish_pollfds(s.publish, pfd + n);
                size_t ngate = n;
                pfd[n++] = (struct pollfd){.fd = s.gate_state == GATE_HELD ? s.gate : -1,
                                           .events = POLLIN};
                int64_t wake = ev ? audit_emitter_next_ms(ev) : -1;
                int64_t gw = grants_next_ms(s.grants);
                if (gw >= 0 && (wake < 0 || gw < wake))
                        wake = gw;
                int64_t now = sup_now_ms();
                for (size_t i = 0; i < CTL_CONNS_MAX; i++)
                        if (s.ctls[i].fd >= 0) {
                                int64_t d = s.ctls[i].deadline > now ? s.ctls[i].deadline - now : 0;
                                if (wake < 0 || d < wake)
                                        wake = d;
                        }
                for (size_t i = 0; i < BROKER_CONNS_MAX; i++)
                        if (s.bconns[i]) {
                                int64_t d = s.bconns[i]->deadline > now
                                                    ? s.bconns[i]->deadline - now
                                                    : 0;
                                if (wake < 0 || d < wake)
                                        wake = d;
                        }
                /* a v1 pids limit says nothing when it refuses a fork: its
                 * events are read on a tick instead */
                bool pids_tick = cgroup_pids_fd(cg) >= 0 && !cgroup_pids_notifies(cg);
                if (pids_tick) {
                        int64_t d = pids_next > now ? pids_next - now : 0;
                        if (wake < 0 || d < wake)
                                wake = d;
                }
                if (poll(pfd, n, wake > INT32_MAX ? INT32_MAX : (int)wake) < 0) {
                        if (errno == EINTR)
                                continue;
                        rf_error_set(err, negative_errno(), "poll: %m");
                        sup_kill(&s);
                        break;
                }
                if (pfd[0].revents)
                        sup_on_signal(&s, sfd);
                /* control requests first: a kill must not wait behind the run's traffic */
                for (size_t i = 0; i < CTL_CONNS_MAX; i++) {
                        if (s.ctls[i].fd < 0)
                                continue;
                        if (pfd[nc + 1 + i].revents)
                                ctl_serve(&s, &s.ctls[i]);
                        else if (sup_now_ms() >= s.ctls[i].deadline)
                                s.ctls[i].fd = safe_close(s.ctls[i].fd);
                }
                if (pfd[nc].revents && s.ctl >= 0)
                        ctl_accept(&s);
                /* Read messages before noticing init's exit, so EXIT is seen. */
                if (pfd[2].revents && s.child.chan >= 0)
                        sup_on_msg(&s);
                if (pfd[3].revents)
                        sup_on_timer(&s, tfd);
                if (pfd[ngate].revents && s.gate_state == GATE_HELD) {
                        char b;
                        if (read(s.gate, &b, 1) == 1 && s.state == RS_SETUP &&
                            sup_go(&s, tfd, timeout_ms) < 0) {
                                rf_error_set(err, negative_errno(), "cannot arm the timeout: %m");
                                sup_kill(&s);
                        }
                }
                if (pfd[4].revents) {
                        /* The kernel OOM-killed inside the run: any OOM kill
                         * ends the whole run (v1 has no oom.group). */
                        struct rf_cgroup_stats st;
                        cgroup_oom_ack(cg);
                        if (cgroup_stats(cg, &st) == 0 && st.oom_kills > 0)
                                sup_event(&s, EV_LIMIT);
                }
                bool pids_due = pids_tick && sup_now_ms() >= pids_next;
                if (pids_due)
                        pids_next = sup_now_ms() + SUP_PIDS_TICK_MS;
                if (pfd[5].revents || pids_due) {
                        /* A fork refused by the pids limit: a fork bomb is
                         * contained, and the run that did it is ended. */
                        /* the events file's count first: the whole
                         * statistics (six files) only once it says a fork
                         * was refused — a v1 tick of an idle run reads one */
                        struct rf_cgroup_stats st;
                        uint64_t refused = cgroup_pids_ack(cg);
                        if ((refused > 0 || cgroup_pids_fd(cg) < 0) && cgroup_stats(cg, &st) == 0 &&
                            st.pids_max_hits > 0 && s.state != RS_LIMIT) {
                                s.pids_hit = true;
                                sup_event(&s, EV_LIMIT);
                        }
                }
                for (size_t i = 0; i < s.n_pumps; i++) {
                        struct pump *p = s.pumps[i];
                        short rin = pfd[10 + 2 * i].revents, rout = pfd[11 + 2 * i].revents;
                        if (rin)
                                pump_read(p);
                        if (rout & (POLLERR | POLLHUP))
                                p->out_dead = true, p->len = 0;
                        else if (rout)
                                pump_write(p);
                        pump_settle(p);
                }
                if (pfd[6].revents && s.dns >= 0) {
                        /* what init said before the run could ask a name
                         * first: MSG_CAPTURE is queued ahead of any query
                         * (sent before the exec), but may not be read yet —
                         * answered without it, a query at the run's first
                         * instant was refused as if nothing were captured */
                        for (int k = 0; k < 64 && s.child.chan >= 0; k++) {
                                struct pollfd c = {.fd = s.child.chan, .events = POLLIN};
                                if (poll(&c, 1, 0) <= 0)
                                        break;
                                sup_on_msg(&s);
                        }
                }
                if (pfd[6].revents && s.dns >= 0 &&
                    dnsstub_serve(s.dns,
                                  &(struct dnsstub_ctx){
                                          .ev = ev,
                                          .capture = s.capture,
                                          .cfg = s.egress,
                                          .map = &s.synth,
                                          .synth_tx = s.synth_tx,
                                          .synth_rx_idle = s.egress_pid > 0 ? -1 : s.synth_rx,
                                          .exfil_kill = &dns_exfil_kill,
                                  }) < 0)
                        s.dns = safe_close(s.dns);
                if (dns_exfil_kill && s.state == RS_RUNNING) {
                        /* secret.exfil in a DNS name under on_exfil "kill" (issue 15) */
                        struct ucred self = {.pid = getpid(), .uid = getuid()};
                        dns_exfil_kill = false;
                        ctl_record(&s, "run.kill", &self, "secret.exfil: on_exfil is kill");
                        sup_event(&s, EV_KILL);
                }
                publish_serve(s.publish, pfd + npub, s.child.chan, ev);
                if (pfd[nl].revents && s.nflog >= 0) {
                        if (!s.nflog_seen)
                                s.nflog_seen = calloc(1, sizeof *s.nflog_seen);
                        if (!s.nflog_seen || nflog_serve(s.nflog, s.nflog_seen, ev) < 0)
                                s.nflog = safe_close(s.nflog);
                }
                if (s.grants) {
                        grants_tick(s.grants); /* ttl */
                        sup_inject_sync(&s);
                        now = sup_now_ms();
                        for (size_t i = 0; i < BROKER_CONNS_MAX; i++) {
                                if (!s.bconns[i])
                                        continue;
                                if (pfd[nb + 1 + i].revents)
                                        broker_serve(s.grants, &s.bconns[i]);
                                else if (now >= s.bconns[i]->deadline)
                                        bconn_close(&s.bconns[i]);
                        }
                        if (pfd[nb].revents && s.broker >= 0)
                                broker_accept(s.grants, s.broker, s.bconns);
                }
                if (((pfd[8].revents || pfd[9].revents) && s.listen_http >= 0) ||
                    ((pfd[ncap].revents || pfd[ncap + 1].revents) && s.egress_pid == 0))
                        sup_egress_start(&s);
                /* the egress process's records: each answered before it acts
                 * (a non-blocking read says when none is left: no poll each);
                 * the audit log's lock taken once for the batch */
                struct rf_error he = {0};
                bool held = ev && (pfd[7].revents & POLLIN) && s.egress_events >= 0 &&
                            audit_emitter_hold(ev, &he) == 0;
                /* at most 16 datagrams of EGRESS_EVENT_RECORDS_MAX under
                 * one hold: other writers of the log wait meanwhile */
                for (int k = 0; k < 16 && (pfd[7].revents & (POLLIN | POLLHUP | POLLERR)) &&
                                s.egress_events >= 0;
                     k++) {
                        int k2 = egress_event_serve(s.egress_events, ev, &s.egress_async_fail);
                        if (held && (k2 == 2 || k2 < 0)) {
                                /* what follows may wait (a kill, the
                                 * egress process reaped): not under the
                                 * log's lock */
                                audit_emitter_release(ev);
                                held = false;
                        }
                        if (k2 == 2 && s.state == RS_RUNNING) {
                                /* secret.exfil under on_exfil "kill" (issue 15) */
                                struct ucred self = {.pid = getpid(), .uid = getuid()};
                                ctl_record(&s, "run.kill", &self, "secret.exfil: on_exfil is kill");
                                sup_event(&s, EV_KILL);
                        }
                        if (k2 < 0) {
                                s.egress_events = safe_close(s.egress_events);
                                if (s.egress_pid > 0 && s.state == RS_RUNNING)
                                        sup_egress_lost(&s, 0); /* not a kill of the run */
                        }
                        if (k2 <= 0)
                                break;
                }
                if (held)
                        audit_emitter_release(ev);
                sup_storm(&s, rs, plan->use_pty);
                if (ev) {
                        /* coalesced summaries and the group-commit bound;
                         * a log that fails now refuses the run's later actions */
                        struct rf_error e2 = {0};
                        (void)audit_emitter_tick(ev, &e2);
                }
                if (pfd[1].revents && !s.init_gone) {
                        while (s.child.chan >= 0) {
                                /* drain what init said before it went */
                                struct pollfd c = {.fd = s.child.chan, .events = POLLIN};
                                if (poll(&c, 1, 0) <= 0)
                                        break;
                                sup_on_msg(&s);
                        }
                        sandbox_reap(&s.child, &s.init_status);
                        s.init_gone = true;
                }
        }
        if (!s.init_gone && !s.init_alone) {
                sup_kill(&s);
                sandbox_reap(&s.child, &s.init_status);
                s.init_gone = true;
        }
        /* refusals logged just before the command ended are recorded too */
        if (s.nflog >= 0 && (s.nflog_seen || (s.nflog_seen = calloc(1, sizeof *s.nflog_seen))))
                (void)nflog_serve(s.nflog, s.nflog_seen, ev);
        /* ... and so is what the egress process sent meanwhile: it sends a
         * refusal before its 403 leaves, so every refusal the command saw
         * is queued here now, even when the command made them all and
         * ended before this loop read any (a fast host: seen); a storm
         * among them is told like one seen during the run */
        sup_egress_drain(&s);
        sup_storm(&s, rs, plan->use_pty);
        sup_drain_replies(&s, sfd);
        term_restore(&s.term);
        if (s.storm_note[0]) /* held back while the run had the terminal */
                (void)!write(STDERR_FILENO, s.storm_note, strlen(s.storm_note));
        /* An OOM kill the notification did not deliver still decides. */
        struct rf_cgroup_stats st;
        if (s.state == RS_EXITED && cg && cgroup_stats(cg, &st) == 0 && st.oom_kills > 0)
                s.state = RS_LIMIT;
        int status = sup_exit_status(&s, plan->argv[0], timeout_ms, err);
        struct rf_child last = {.pid = -1, .pidfd = -1, .chan = -1};
        if (!s.init_gone) { /* init_alone: init's own end overlaps ours */
                last = (struct rf_child){.pid = s.child.pid, .pidfd = s.child.pidfd, .chan = -1};
                capture_fds_init(&last.net);
                s.child.pidfd = -1;
        }
        sup_free(&s);
        grants_end(s.grants); /* every grant dies with the run */
        sup_init_last(&last, &s, rs);
        /* everything of the run is gone (init, its pid namespace, the egress
         * process reaped): now the kill is done */
        for (size_t i = 0; i < CTL_CONNS_MAX; i++)
                if (s.kill_waiters[i] >= 0) {
                        ctl_reply(s.kill_waiters[i], "ok killed");
                        s.kill_waiters[i] = safe_close(s.kill_waiters[i]);
                }
        safe_close(sfd);
        safe_close(tfd);
        return status;
refuse:
        sup_free(&s);
        grants_end(s.grants);
        for (size_t i = 0; i < CTL_CONNS_MAX; i++)
                if (s.kill_waiters[i] >= 0) {
                        ctl_reply(s.kill_waiters[i], "ok killed");
                        s.kill_waiters[i] = safe_close(s.kill_waiters[i]);
                }
        safe_close(sfd);
        safe_close(tfd);
        return RF_EXIT_REFUSED;
}
