/*
 * cmd_ctl.c — the per-run kill switch and friends, over each run's control
 * socket (supervisor/control.h, supervisor/registry.h):
 *
 *   ringfence ps [--json]                      the runs of this instance
 *   ringfence inspect RUN                      one run, as JSON
 *   ringfence kill RUN | --agent A | --all [--reason TEXT] [--block]
 *   ringfence pause RUN / resume RUN           freeze / thaw, keeping memory
 *   ringfence revoke RUN --secret NAME         end one grant of a live run
 *   ringfence block --agent A [--reason TEXT] / unblock --agent A
 *
 * RUN is a run id or a unique prefix of one (at least 8 characters). A
 * kill returns once every process of the run is gone (its pid namespace
 * and cgroup empty, its egress process reaped) and its grants revoked.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "cli.h"
#include "shared/json.h"
#include "shared/macro.h"
#include "supervisor/control.h"
#include "supervisor/registry.h"
#include "supervisor/termfilter.h"

#define KILL_WAIT_MS 30000 /* a run whose supervisor does not confirm by then is reported */

static void ctl_usage(FILE *f)
{
        fputs("Usage: ringfence ps [--json]\n"
              "       ringfence inspect RUN\n"
              "       ringfence kill RUN | --agent A | --all [--reason TEXT] [--block]\n"
              "       ringfence pause RUN | resume RUN\n"
              "       ringfence grant RUN --allow-host H | --revoke-host H | --revoke-secret NAME\n"
              "                            (egress changes take effect on the next connection;\n"
              "                             the run's open egress connections are closed)\n"
              "       ringfence block --agent A [--reason TEXT] | unblock --agent A\n"
              "       ringfence wait RUN          (exit with the run's status)\n"
              "       ringfence logs RUN [--follow] [--raw-terminal]\n"
              "                            (to a terminal, the output is filtered as a live\n"
              "                             run's is; --raw-terminal: as it was written)\n"
              "\n"
              "RUN: a run id or a unique prefix of one (8 characters or more).\n"
              "kill stops the run's whole process tree at once (cgroup.kill, or the\n"
              "pid-namespace init), revokes its grants, closes its egress, records who\n"
              "did it (run.kill), and returns when nothing of the run is left.\n"
              "--block also refuses new runs of that agent (125) until unblock.\n"
              "Every command accepts --state-dir DIR.\n",
              f);
}

struct collect {
        struct run_info *v;
        bool *live;
        size_t n;
};

static int collect_cb(const struct run_info *info, bool live, void *ctx)
{
        struct collect *c = ctx;
        struct run_info *nv = realloc(c->v, (c->n + 1) * sizeof *nv);
        bool *nl = realloc(c->live, (c->n + 1) * sizeof *nl);
        if (nv)
                c->v = nv;
        if (nl)
                c->live = nl;
        if (!nv || !nl)
                return 1;
        c->v[c->n] = *info;
        c->live[c->n++] = live;
        return 0;
}

static void collect_free(struct collect *c)
{
        free(c->v);
        free(c->live);
}

/* The one live run whose id starts with `id` (at least 8 chars, or whole). */
static int find_run(const struct collect *c, const char *id, size_t *ret)
{
        size_t len = strlen(id), hits = 0;
        if (len < 8) {
                cli_error("run id '%s': give at least 8 characters", id);
                return -EINVAL;
        }
        for (size_t i = 0; i < c->n; i++)
                if (!strncmp(c->v[i].run, id, len)) {
                        *ret = i;
                        hits++;
                }
        if (hits == 1)
                return 0;
        cli_error(hits ? "run id '%s' is ambiguous" : "no run %s in this state dir", id);
        return hits ? -EINVAL : -ENOENT;
}

static void age(int64_t started_ms, char *buf, size_t len)
{
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        int64_t s = ((int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 - started_ms) / 1000;
        if (s < 0)
                s = 0;
        if (s < 120)
                snprintf(buf, len, "%llds", (long long)s);
        else if (s < 7200)
                snprintf(buf, len, "%lldm", (long long)s / 60);
        else
                snprintf(buf, len, "%lldh", (long long)s / 3600);
}

static void json_str(const char *k, const char *v, bool last)
{
        char esc[4 * REGISTRY_FIELD_MAX + 8];
        struct json_buf j = {0};
        json_buf_append_string(&j, v, strlen(v));
        snprintf(esc, sizeof esc, "%s", j.data ? j.data : "\"\"");
        json_buf_done(&j);
        printf("\"%s\":%s%s", k, esc, last ? "" : ",");
}

static int do_ps(const char *state_dir, bool json)
{
        struct collect c = {0};
        registry_foreach(state_dir, collect_cb, &c);
        if (!json)
                printf("%-36s  %-16s %-9s %6s %8s %5s  %s\n", "RUN", "AGENT", "STATE", "UID", "PID",
                       "AGE", "COMMAND");
        /* REGISTRY_BATCH_MAX supervisors asked at once, not one after another */
        char sts[REGISTRY_BATCH_MAX][32];
        for (size_t i = 0; i < c.n; i++) {
                const struct run_info *r = &c.v[i];
                const char *st = sts[i % REGISTRY_BATCH_MAX];
                char a[16];
                if (i % REGISTRY_BATCH_MAX == 0) {
                        struct registry_query q[REGISTRY_BATCH_MAX];
                        size_t n = c.n - i < REGISTRY_BATCH_MAX ? c.n - i : REGISTRY_BATCH_MAX;
                        for (size_t k = 0; k < n; k++)
                                q[k] = (struct registry_query){.run = c.v[i + k].run,
                                                               .live = c.live[i + k],
                                                               .st = sts[k],
                                                               .st_len = sizeof sts[k]};
                        registry_state_batch(state_dir, q, n);
                }
                age(r->started_ms, a, sizeof a);
                if (json) {
                        printf("{");
                        json_str("agent", r->agent, false);
                        json_str("command", r->command, false);
                        json_str("on_behalf_of", r->on_behalf_of, false);
                        printf("\"pid\":%llu,", (unsigned long long)r->pid);
                        json_str("run", r->run, false);
                        printf("\"started_ms\":%lld,", (long long)r->started_ms);
                        json_str("state", st, false);
                        json_str("task", r->task, false);
                        printf("\"uid\":%llu}\n", (unsigned long long)r->uid);
                } else {
                        /* the command is the caller's argv[0] (a daemon caller's
                         * too): shown escaped, cut only between whole escapes */
                        char run[64] = "", agent[17] = "", state[32] = "", cmd[61] = "";
                        json_escape_for_message(run, sizeof run, r->run, strlen(r->run));
                        json_escape_for_message(agent, sizeof agent, r->agent, strlen(r->agent));
                        json_escape_for_message(state, sizeof state, st, strlen(st));
                        json_escape_for_message(cmd, sizeof cmd, r->command, strlen(r->command));
                        printf("%-36s  %-16s %-9s %6llu %8llu %5s  %s\n", run, agent, state,
                               (unsigned long long)r->uid, (unsigned long long)r->pid, a, cmd);
                }
        }
        collect_free(&c);
        return 0;
}

enum reg_state { REG_ABSENT, REG_LIVE, REG_LOST };

/* Is `run` registered, and is its supervisor alive (holding its lock)? */
static enum reg_state run_reg_state(const char *state_dir, const char *run)
{
        struct collect c = {0};
        enum reg_state st = REG_ABSENT;
        registry_foreach(state_dir, collect_cb, &c);
        for (size_t i = 0; i < c.n; i++)
                if (!strcmp(c.v[i].run, run))
                        st = c.live[i] ? REG_LIVE : REG_LOST;
        collect_free(&c);
        return st;
}

static bool run_is_live(const char *state_dir, const char *run)
{
        return run_reg_state(state_dir, run) == REG_LIVE;
}

/* control.block / control.unblock: who, which agent, why. */
static void record_block(const char *state_dir, const char *event, const char *agent,
                         const char *reason)
{
        struct audit_log *log = NULL;
        struct rf_error err = {0};
        if (audit_open(state_dir, &log, &err) < 0)
                return;
        struct audit_field f[] = {
                {.key = "agent", .type = AUDIT_STR, .s = agent},
                {.key = "reason", .type = AUDIT_STR, .s = reason ? reason : ""},
                {.key = "actor_uid", .type = AUDIT_UINT, .u = getuid()},
        };
        (void)audit_append(log, NULL, event, f, ARRAY_SIZE(f), true, &err);
        audit_close(log);
}

/*
 * The run's pid-namespace init as a pidfd (O_CLOEXEC), taken from its
 * status before the kill is asked for; -1 if the status does not name it.
 * While the supervisor lives, init is its unreaped child, so the pid
 * names that process. The kernel lets a pid namespace's init exit only
 * after every other process of the namespace is gone, so the pidfd turning
 * readable means nothing of the run's namespace is left.
 */
static int init_pidfd(const char *state_dir, const char *run)
{
        char reply[CONTROL_MSG_MAX];
        if (registry_request(state_dir, run, "status", reply, sizeof reply, 1000) < 0 ||
            strncmp(reply, "ok ", 3) != 0)
                return -1;
        const char *p = strstr(reply, "\"init_pid\":");
        long pid = p ? strtol(p + sizeof "\"init_pid\":" - 1, NULL, 10) : 0;
        if (pid <= 0 || pid > INT32_MAX)
                return -1;
        return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
}

/* ms left of KILL_WAIT_MS since t0 */
static int kill_ms_left(const struct timespec *t0)
{
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        int left = KILL_WAIT_MS -
                   (int)((t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000);
        return left > 0 ? left : 0;
}

/*
 * Kill the runs picked by `pick` (true for each index to kill): every
 * request is sent first, then the confirmations are awaited together, so
 * many runs die at once rather than one after another.
 *
 * A kill returns once nothing of the run is left. The supervisor confirms
 * with "ok killed" after reaping init (and the egress process). When it
 * cannot confirm — it went away (crashed, SIGKILLed) without answering, or
 * answered "ok killing" (no room to hold the request) — the run still dies
 * (PDEATHSIG, cgroup.kill), but asynchronously: then the kill waits for
 * the run's init to exit (its pidfd, taken before asking), bounded by
 * KILL_WAIT_MS, rather than trusting that it is already gone.
 */
static int kill_runs(const char *state_dir, const struct collect *c, const bool *pick,
                     const char *reason)
{
        char req[CONTROL_MSG_MAX];
        int *fds = calloc(c->n ? c->n : 1, sizeof *fds), failed = 0, n = 0;
        int *inits = calloc(c->n ? c->n : 1, sizeof *inits);
        if (!fds || !inits) {
                free(fds);
                free(inits);
                return 1;
        }
        snprintf(req, sizeof req, reason && *reason ? "kill %s" : "kill", reason);
        for (size_t i = 0; i < c->n; i++) {
                fds[i] = inits[i] = -1;
                if (!pick[i])
                        continue;
                n++;
                inits[i] = init_pidfd(state_dir, c->v[i].run);
                /* connect and send now; read the answer below */
                int s = registry_connect(state_dir, c->v[i].run);
                if (s < 0 || send(s, req, strlen(req), MSG_NOSIGNAL) < 0) {
                        cli_error("cannot reach run %s: %s", c->v[i].run,
                                  strerror(s < 0 ? -s : errno));
                        failed++;
                        if (s >= 0)
                                close(s);
                        continue;
                }
                fds[i] = s;
        }
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (size_t i = 0; i < c->n; i++) {
                if (fds[i] < 0) {
                        inits[i] = safe_close(inits[i]);
                        continue;
                }
                struct pollfd p = {.fd = fds[i], .events = POLLIN};
                char reply[CONTROL_MSG_MAX];
                ssize_t k = -1;
                errno = 0;
                if (poll(&p, 1, kill_ms_left(&t0)) == 1)
                        k = recv(fds[i], reply, sizeof reply - 1, 0);
                /* a run that ended on its own as the kill arrived: its
                 * supervisor no longer accepts, and resets the connection
                 * when it leaves the registry (after its run.exit) */
                if (k < 0 && errno == ECONNRESET && !run_is_live(state_dir, c->v[i].run))
                        k = 0;
                close(fds[i]);
                if (k > 0)
                        reply[k] = '\0';
                bool confirmed = k > 0 && !strcmp(reply, "ok killed");
                bool accepted = k == 0 || (k > 0 && !strncmp(reply, "ok", 2));
                if (accepted && !confirmed && inits[i] >= 0) {
                        /* not confirmed: wait for init itself (see above) */
                        struct pollfd q = {.fd = inits[i], .events = POLLIN};
                        if (poll(&q, 1, kill_ms_left(&t0)) != 1) {
                                cli_error("run %s: its supervisor %s, and the run is not gone "
                                          "within %d s",
                                          c->v[i].run, k == 0 ? "went away" : "did not confirm",
                                          KILL_WAIT_MS / 1000);
                                inits[i] = safe_close(inits[i]);
                                failed++;
                                continue;
                        }
                }
                inits[i] = safe_close(inits[i]);
                if (accepted) {
                        printf("killed %s\n", c->v[i].run);
                        continue;
                }
                if (k > 0)
                        cli_error("run %s: %s", c->v[i].run, reply);
                else
                        cli_error("run %s: no confirmation within %d s", c->v[i].run,
                                  KILL_WAIT_MS / 1000);
                failed++;
        }
        free(fds);
        free(inits);
        if (n == 0)
                fprintf(stderr, "ringfence: no running runs matched\n");
        return failed ? 1 : 0;
}

struct exit_scan {
        char needle[64];
        int status;   /* -1: not found yet */
        bool started; /* its run.start or control.start is the newest record */
};

/* Newest first: how the run ended, or that it started and has not ended. */
static int exit_line(const char *line, size_t len, void *ctx)
{
        struct exit_scan *e = ctx;
        if (!memmem(line, len, e->needle, strlen(e->needle)))
                return 0;
        const char *st = memmem(line, len, "\"status\":", 9);
        if (memmem(line, len, "\"event\":\"run.exit\"", 18) && st) {
                e->status = atoi(st + 9);
                return 1;
        }
        if (memmem(line, len, "\"event\":\"run.refused\"", 21)) {
                e->status = 125;
                return 1;
        }
        if (memmem(line, len, "\"event\":\"run.start\"", 19) ||
            memmem(line, len, "\"event\":\"control.start\"", 23)) {
                e->started = true;
                return 1;
        }
        return 0;
}

#define WAIT_START_MS 30000 /* a started run not registered yet: how long to wait for it */

static int64_t mono_ms(void)
{
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/*
 * `wait RUN`: until the run is gone, then its exit status from the audit
 * log. The supervisor leaves the registry only once run.exit is in the log
 * (cmd_run.c), so a run no longer registered has its record. A run that
 * has started but is not registered yet (the daemon answers a start before
 * its run registers; a `run --run-id` in the background) is waited for, up
 * to WAIT_START_MS; a registered run whose supervisor died is "lost".
 */
static int do_wait(const char *state_dir, const char *run)
{
        int64_t t0 = mono_ms();
        for (;;) {
                enum reg_state st;
                while ((st = run_reg_state(state_dir, run)) == REG_LIVE)
                        nanosleep(&(struct timespec){0, 50000000}, NULL);
                struct exit_scan e = {.status = -1};
                snprintf(e.needle, sizeof e.needle, "\"run\":\"%s\"", run);
                (void)audit_foreach_line_reverse(state_dir, exit_line, &e);
                if (e.status >= 0)
                        return e.status;
                if (st == REG_LOST) {
                        cli_error("wait: run %s was lost: its supervisor ended without "
                                  "recording how the run ended",
                                  run);
                        return 1;
                }
                if (!e.started || mono_ms() - t0 > WAIT_START_MS) {
                        cli_error("wait: no record of how run %s ended", run);
                        return 1;
                }
                nanosleep(&(struct timespec){0, 50000000}, NULL);
        }
}

/* Write a run's logged output; to a terminal through `tf` (or NULL: as is). */
static bool logs_write(struct termfilter *tf, const char *b, size_t n)
{
        static char shown[65536 + TERMFILTER_SEQ_MAX];
        if (tf) {
                n = termfilter_output(tf, b, n, shown);
                b = shown;
        }
        return fwrite(b, 1, n, stdout) == n;
}

/* `logs RUN [--follow] [--raw-terminal]`: a detached or daemon run's output.
 * To a terminal it passes the filter a live run's terminal output passes
 * (supervisor/termfilter.h), queries included: nobody reads the replies. */
static int do_logs(const char *state_dir, const char *run, bool follow, bool raw)
{
        char p[4200], buf[65536];
        struct termfilter filter, *tf = NULL;
        if (!raw && isatty(STDOUT_FILENO)) {
                termfilter_init(&filter, false);
                tf = &filter;
        }
        snprintf(p, sizeof p, "%s/logs/%s.log", state_dir, run);
        _cleanup_close_ int fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                cli_error("logs: no log for run %s (only --detach and daemon runs keep one)", run);
                return 1;
        }
        for (;;) {
                ssize_t n;
                while ((n = read(fd, buf, sizeof buf)) > 0)
                        if (!logs_write(tf, buf, (size_t)n))
                                return 1;
                fflush(stdout);
                if (!follow)
                        return 0;
                char reply[CONTROL_MSG_MAX];
                if (registry_request(state_dir, run, "status", reply, sizeof reply, 1000) < 0) {
                        while ((n = read(fd, buf, sizeof buf)) > 0)
                                (void)!logs_write(tf, buf, (size_t)n);
                        return 0; /* the run is over */
                }
                nanosleep(&(struct timespec){0, 100000000}, NULL);
        }
}

int cmd_ctl(int argc, char **argv)
{
        static const struct option opts[] = {
                {"state-dir", required_argument, NULL, 'S'},
                {"agent", required_argument, NULL, 'a'},
                {"all", no_argument, NULL, 'A'},
                {"reason", required_argument, NULL, 'r'},
                {"block", no_argument, NULL, 'b'},
                {"secret", required_argument, NULL, 's'},
                {"json", no_argument, NULL, 'j'},
                {"follow", no_argument, NULL, 'f'},
                {"raw-terminal", no_argument, NULL, 'T'},
                {"allow-host", required_argument, NULL, 'H'},
                {"revoke-host", required_argument, NULL, 'R'},
                {"revoke-secret", required_argument, NULL, 's'},
                {"help", no_argument, NULL, 'h'},
                {},
        };
        const char *verb = argv[0], *sd = NULL, *agent = NULL, *reason = NULL, *secret = NULL,
                   *allow_host = NULL, *revoke_host = NULL;
        bool all = false, block = false, json = false, follow = false, raw_terminal = false;
        _cleanup_free_ char *state_dir = NULL;
        struct rf_error err = {0};
        int c, r;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'S':
                        sd = optarg;
                        break;
                case 'a':
                        agent = optarg;
                        break;
                case 'A':
                        all = true;
                        break;
                case 'r':
                        reason = optarg;
                        break;
                case 'b':
                        block = true;
                        break;
                case 's':
                        secret = optarg;
                        break;
                case 'j':
                        json = true;
                        break;
                case 'f':
                        follow = true;
                        break;
                case 'T':
                        raw_terminal = true;
                        break;
                case 'H':
                        allow_host = optarg;
                        break;
                case 'R':
                        revoke_host = optarg;
                        break;
                case 'h':
                        ctl_usage(stdout);
                        return 0;
                default:
                        cli_error("%s: unknown option %s (see ringfence %s --help)", verb,
                                  argv[optind - 1], verb);
                        return CLI_EXIT_USAGE;
                }
        }
        const char *id = optind < argc ? argv[optind++] : NULL;
        if (optind < argc) {
                cli_error("%s: unexpected argument '%s'", verb, argv[optind]);
                return CLI_EXIT_USAGE;
        }
        if (reason &&
            (strlen(reason) > CONTROL_REASON_MAX || !json_text_is_safe(reason, strlen(reason)))) {
                cli_error("%s: --reason: 1-%d bytes of printable text", verb, CONTROL_REASON_MAX);
                return CLI_EXIT_USAGE;
        }
        if ((r = cli_state_dir(sd, 0, &state_dir, &err)) < 0) {
                cli_print_error(&err);
                return 1;
        }
        if (!strcmp(verb, "ps"))
                return do_ps(state_dir, json);
        if (!strcmp(verb, "block") || !strcmp(verb, "unblock")) {
                if (!agent || id) {
                        cli_error("%s: --agent A", verb);
                        return CLI_EXIT_USAGE;
                }
                r = verb[0] == 'b' ? registry_block(state_dir, agent, reason, getuid(), &err)
                                   : registry_unblock(state_dir, agent, &err);
                if (r < 0) {
                        cli_print_error(&err);
                        return 1;
                }
                record_block(state_dir, verb[0] == 'b' ? "control.block" : "control.unblock", agent,
                             reason);
                fputs("agent ", stderr);
                (void)json_escape_fwrite(stderr, agent, strlen(agent), false);
                fprintf(stderr, " %s\n", verb[0] == 'b' ? "blocked" : "unblocked");
                return 0;
        }

        if (!strcmp(verb, "wait") || !strcmp(verb, "logs")) {
                if (!id) {
                        cli_error("%s: RUN missing", verb);
                        return CLI_EXIT_USAGE;
                }
                /* a unique prefix of a registered run, or a whole id (ended runs too) */
                char whole[40];
                snprintf(whole, sizeof whole, "%s", id);
                if (strlen(id) != 36) {
                        struct collect cc = {0};
                        size_t at;
                        registry_foreach(state_dir, collect_cb, &cc);
                        r = find_run(&cc, id, &at);
                        if (r == 0)
                                snprintf(whole, sizeof whole, "%s", cc.v[at].run);
                        collect_free(&cc);
                        if (r < 0)
                                return 1;
                }
                return verb[0] == 'w' ? do_wait(state_dir, whole)
                                      : do_logs(state_dir, whole, follow, raw_terminal);
        }
        struct collect col = {0};
        registry_foreach(state_dir, collect_cb, &col);
        size_t k = 0;
        if (!strcmp(verb, "kill")) {
                if (!!id + !!agent + all != 1) {
                        cli_error("kill: give exactly one of RUN, --agent A, --all");
                        collect_free(&col);
                        return CLI_EXIT_USAGE;
                }
                if (block && !agent) {
                        cli_error("kill: --block goes with --agent A");
                        collect_free(&col);
                        return CLI_EXIT_USAGE;
                }
                bool *pick = calloc(col.n ? col.n : 1, sizeof *pick);
                if (!pick) {
                        collect_free(&col);
                        return 1;
                }
                if (id && (r = find_run(&col, id, &k)) < 0) {
                        free(pick);
                        collect_free(&col);
                        return 1;
                }
                for (size_t i = 0; i < col.n; i++)
                        pick[i] =
                                col.live[i] && (all || (agent && !strcmp(col.v[i].agent, agent)) ||
                                                (id && i == k));
                if (block) {
                        /* first: no new run of the agent slips in while we kill */
                        if (registry_block(state_dir, agent, reason, getuid(), &err) < 0) {
                                cli_print_error(&err);
                                free(pick);
                                collect_free(&col);
                                return 1;
                        }
                        record_block(state_dir, "control.block", agent, reason);
                }
                r = kill_runs(state_dir, &col, pick, reason);
                free(pick);
                collect_free(&col);
                return r;
        }
        if (!id) {
                cli_error("%s: RUN missing", verb);
                collect_free(&col);
                return CLI_EXIT_USAGE;
        }
        if ((r = find_run(&col, id, &k)) < 0) {
                collect_free(&col);
                return 1;
        }
        struct run_info info = col.v[k];
        bool live = col.live[k];
        collect_free(&col);
        char req[CONTROL_MSG_MAX], reply[CONTROL_MSG_MAX];
        if (!strcmp(verb, "inspect")) {
                char st[32];
                registry_state(state_dir, info.run, live, st, sizeof st, NULL, 0);
                printf("{");
                json_str("agent", info.agent, false);
                json_str("cgroup", info.cgroup, false);
                json_str("command", info.command, false);
                json_str("on_behalf_of", info.on_behalf_of, false);
                printf("\"pid\":%llu,", (unsigned long long)info.pid);
                json_str("run", info.run, false);
                printf("\"started_ms\":%lld,", (long long)info.started_ms);
                json_str("state", st, false);
                if (live &&
                    registry_request(state_dir, info.run, "status", reply, sizeof reply, 1000) ==
                            0 &&
                    strchr(reply, '{'))
                        printf("\"supervisor\":%s,", strchr(reply, '{'));
                json_str("task", info.task, false);
                printf("\"uid\":%llu}\n", (unsigned long long)info.uid);
                return 0;
        }
        if (!strcmp(verb, "revoke") || !strcmp(verb, "grant")) {
                if (!!secret + !!allow_host + !!revoke_host != 1) {
                        cli_error(
                                "%s: one of --allow-host H, --revoke-host H, --revoke-secret NAME",
                                verb);
                        return CLI_EXIT_USAGE;
                }
                if (secret)
                        snprintf(req, sizeof req, "revoke-secret %s", secret);
                else
                        snprintf(req, sizeof req, "%s %s",
                                 allow_host ? "allow-host" : "revoke-host",
                                 allow_host ? allow_host : revoke_host);
        } else
                snprintf(req, sizeof req, "%s", verb); /* pause, resume */
        if (!live) {
                cli_error("run %s is lost (its supervisor is gone)", info.run);
                return 1;
        }
        if ((r = registry_request(state_dir, info.run, req, reply, sizeof reply, 10000)) < 0) {
                cli_error("run %s: %s", info.run, strerror(-r));
                return 1;
        }
        if (strncmp(reply, "ok", 2)) {
                cli_error("run %s: %s", info.run, reply);
                return 1;
        }
        const char *said = reply[2] ? reply + 3 : "";
        printf("%s ", info.run);
        (void)json_escape_fwrite(stdout, said, strlen(said), false);
        putchar('\n');
        return 0;
}
