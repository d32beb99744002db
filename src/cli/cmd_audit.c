/*
 * cmd_audit.c — `ringfence audit`: read, verify and anchor the audit log.
 *
 *   ringfence audit [--run ID] [--agent A] [--event E] [--since T] [--json]
 *   ringfence audit verify [--head FILE] [--pubkey FILE]
 *   ringfence audit head
 *
 * Reading parses every line (the shared strict JSON parser); a line that
 * does not parse is reported and skipped — `audit verify` is what judges
 * integrity. --since takes unix milliseconds or a duration ago (10m, 2h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "cli.h"
#include "daemon/scope.h"
#include "policy/policy.h"
#include "shared/json.h"
#include "shared/macro.h"

#define AUDIT_AGENT_RUNS_MAX 65536 /* runs of one agent an --agent listing tracks */

struct filter {
        const char *run, *agent, *event, *obo, *chain;
        int64_t since_ms, until_ms;
        bool json, follow;
        /* --scope (the daemon's audit streams): what its caller may read */
        struct audit_scope *scope;
        /* --agent: the runs whose run.start names the agent (first pass) */
        char (*runs)[40];
        size_t n_runs;
        bool collecting;
};

static bool run_of_agent(const struct filter *f, const char *run)
{
        for (size_t i = 0; run && i < f->n_runs; i++)
                if (strcmp(f->runs[i], run) == 0)
                        return true;
        return false;
}

static const char *member_str(const struct json_node *o, const char *key)
{
        const struct json_node *n = json_object_get(o, key);
        return n && n->type == JSON_STRING ? n->str : NULL;
}

/* ---- --chain RUN: the run, its ancestors, its descendants ------------------ */

struct start_pair {
        char run[40], trig[40];
};

struct pairs {
        struct start_pair *v;
        size_t n, cap;
};

static int pair_cb(const char *line, size_t len, void *ctx)
{
        struct pairs *p = ctx;
        _cleanup_json_ struct json_node *o = NULL;
        struct rf_error err = {0};

        if (!memmem(line, len, "\"event\":\"run.start\"", 19) ||
            json_parse(line, len, &o, &err) < 0 || o->type != JSON_OBJECT)
                return 0;
        const char *run = member_str(o, "run"), *trig = member_str(o, "triggered_by");
        if (!run || strlen(run) >= 40 || (trig && strlen(trig) >= 40))
                return 0;
        if (p->n == p->cap) {
                if (p->cap >= AUDIT_AGENT_RUNS_MAX * 16)
                        return -E2BIG;
                size_t cap = p->cap ? p->cap * 2 : 1024;
                struct start_pair *v = realloc(p->v, cap * sizeof *v);
                if (!v)
                        return -ENOMEM;
                p->v = v;
                p->cap = cap;
        }
        snprintf(p->v[p->n].run, 40, "%s", run);
        snprintf(p->v[p->n].trig, 40, "%s", trig ? trig : "");
        p->n++;
        return 0;
}

static void add_run(struct filter *f, const char *run)
{
        if (!run_of_agent(f, run) && f->n_runs < AUDIT_AGENT_RUNS_MAX)
                snprintf(f->runs[f->n_runs++], 40, "%s", run);
}

/*
 * The causal chain of f->chain into f->runs: every run.start in log order
 * (a trigger is always logged before the runs it causes) whose run is the
 * chain's or whose trigger is already taken, then the ancestors by
 * triggered_by (at most AUDIT_CHAIN_UP_MAX of them: a tampered log may loop).
 */
#define AUDIT_CHAIN_UP_MAX 4096
static int collect_chain(const char *state_dir, struct filter *f)
{
        struct pairs p = {0};
        int r = audit_foreach_line(state_dir, pair_cb, &p);

        if (r >= 0) {
                for (size_t i = 0; i < p.n; i++)
                        if (!strcmp(p.v[i].run, f->chain) ||
                            (p.v[i].trig[0] && run_of_agent(f, p.v[i].trig)))
                                add_run(f, p.v[i].run);
                const char *cur = f->chain;
                for (size_t up = 0; up < AUDIT_CHAIN_UP_MAX && cur && *cur; up++) {
                        const char *next = NULL;
                        for (size_t i = p.n; i-- > 0;)
                                if (!strcmp(p.v[i].run, cur)) {
                                        next = p.v[i].trig;
                                        break;
                                }
                        if (next && *next)
                                add_run(f, next);
                        cur = next;
                }
        }
        free(p.v);
        return r < 0 ? r : 0;
}

static void print_line(const struct filter *f, const char *line, size_t len)
{
        _cleanup_json_ struct json_node *o = NULL;
        struct rf_error err = {0};

        if (json_parse(line, len, &o, &err) < 0 || o->type != JSON_OBJECT) {
                cli_error("audit: unreadable record skipped (%s)", err.msg);
                return;
        }
        /* first, on every record in order: the scope learns runs from them */
        if (f->scope && !audit_scope_visible(f->scope, o))
                return;
        const char *run = member_str(o, "run"), *event = member_str(o, "event"),
                   *agent = member_str(o, "agent");
        const struct json_node *seq = json_object_get(o, "seq"), *ts = json_object_get(o, "ts");
        if (f->run && (!run || strcmp(run, f->run)))
                return;
        if (f->event && (!event || strcmp(event, f->event)))
                return;
        if (f->collecting) {
                /* first pass: the runs whose run.start matches --agent /
                 * --on-behalf-of (--chain: collect_chain) */
                struct filter *w = (struct filter *)f;
                const char *obo = member_str(o, "on_behalf_of");
                if (!run || !event || strcmp(event, "run.start") || strlen(run) >= 40 ||
                    w->n_runs >= AUDIT_AGENT_RUNS_MAX)
                        return;
                bool take = (f->agent && agent && !strcmp(agent, f->agent)) ||
                            (f->obo && obo && !strcmp(obo, f->obo));
                if (take && !run_of_agent(f, run))
                        snprintf(w->runs[w->n_runs++], 40, "%s", run);
                return;
        }
        if ((f->agent || f->obo || f->chain) && !run_of_agent(f, run))
                return;
        int64_t t = 0;
        if (ts)
                (void)json_number_int64(ts, &t);
        if (f->since_ms && t < f->since_ms)
                return;
        if (f->until_ms && t > f->until_ms)
                return;
        if (f->json) {
                fwrite(line, 1, len, stdout);
                fputc('\n', stdout);
                return;
        }
        char when[32] = "?";
        time_t secs = (time_t)(t / 1000);
        struct tm tm;
        if (gmtime_r(&secs, &tm))
                strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
        /* every string of the record is shown escaped (json.h): a host name
         * or a command a run or a caller chose must not drive the terminal */
        char shown_seq[32] = "", shown_run[64] = "", shown_event[64] = "";
        json_escape_for_message(shown_seq, sizeof shown_seq, seq && seq->str ? seq->str : "?",
                                seq && seq->str ? strlen(seq->str) : 1);
        json_escape_for_message(shown_run, sizeof shown_run, run && *run ? run : "-",
                                run && *run ? strlen(run) : 1);
        json_escape_for_message(shown_event, sizeof shown_event, event ? event : "?",
                                event ? strlen(event) : 1);
        printf("%-8s %-20s %-36s %-14s", shown_seq, when, shown_run, shown_event);
        const struct json_node *m;
        JSON_FOREACH(m, o)
        {
                static const char *const skip[] = {"version", "seq",  "ts",  "run",
                                                   "event",   "prev", "hash"};
                bool hide = false;
                for (size_t i = 0; i < ARRAY_SIZE(skip); i++)
                        hide |= strcmp(m->key, skip[i]) == 0;
                if (hide || (m->type == JSON_STRING && m->len == 0))
                        continue;
                if (m->type != JSON_STRING && m->type != JSON_NUMBER && m->type != JSON_TRUE &&
                    m->type != JSON_FALSE)
                        continue;
                putchar(' ');
                (void)json_escape_fwrite(stdout, m->key, strlen(m->key), false);
                putchar('=');
                if (m->type == JSON_STRING)
                        (void)json_escape_fwrite(stdout, m->str, m->len, false);
                else if (m->type == JSON_NUMBER)
                        (void)json_escape_fwrite(stdout, m->str, strlen(m->str), false);
                else
                        fputs(m->type == JSON_TRUE ? "true" : "false", stdout);
        }
        putchar('\n');
}

static int list_line(const char *line, size_t len, void *ctx)
{
        print_line(ctx, line, len);
        return 0;
}

static int audit_list(const char *state_dir, const struct filter *f)
{
        if (!f->json && !f->collecting)
                printf("%-8s %-20s %-36s %-14s %s\n", "SEQ", "TIME (UTC)", "RUN", "EVENT",
                       "FIELDS");
        int r = audit_foreach_line(state_dir, list_line, (void *)f);
        if (r < 0) {
                cli_error("audit: cannot read the log of %s: %s", state_dir, strerror(-r));
                return 1;
        }
        return 0;
}

/*
 * --follow: print records appended after the listing, as they land (the
 * newest segment is polled every 200 ms; a new segment is picked up).
 * Ends on a signal (the default actions are left in place here).
 */
/* The newest segment and its size now: where --follow picks up after the
 * listing (records appended while listing may be shown twice, never lost). */
static void follow_mark(const char *state_dir, unsigned *seg, long *off)
{
        char path[4200];
        struct stat st;

        for (*seg = 1;; (*seg)++) {
                snprintf(path, sizeof path, "%s/audit/audit-%06u.jsonl", state_dir, *seg + 1);
                if (access(path, F_OK) < 0)
                        break;
        }
        snprintf(path, sizeof path, "%s/audit/audit-%06u.jsonl", state_dir, *seg);
        *off = stat(path, &st) == 0 ? (long)st.st_size : 0;
}

static int audit_follow(const char *state_dir, struct filter *f, unsigned seg, long off)
{
        static char line[AUDIT_RECORD_MAX + 2];
        char path[4200];
        FILE *fp = NULL;

        snprintf(path, sizeof path, "%s/audit/audit-%06u.jsonl", state_dir, seg);
        fp = fopen(path, "re");
        if (!fp) {
                cli_error("audit: --follow: %s: %m", path);
                return 1;
        }
        fseek(fp, off, SEEK_SET);
        fflush(stdout);
        for (;;) {
                if (fgets(line, sizeof line, fp)) {
                        size_t len = strlen(line);
                        if (len && line[len - 1] == '\n')
                                line[--len] = '\0';
                        print_line(f, line, len);
                        fflush(stdout);
                        continue;
                }
                clearerr(fp);
                char next[4200];
                snprintf(next, sizeof next, "%s/audit/audit-%06u.jsonl", state_dir, seg + 1);
                FILE *nf = fopen(next, "re");
                if (nf) {
                        fclose(fp);
                        fp = nf;
                        seg++;
                        continue;
                }
                /* wait a little for more, and stop when no one reads any more
                 * (a closed pipe or socket: the daemon's audit stream ends
                 * with its client, not at the next record) */
                struct pollfd out = {.fd = STDOUT_FILENO, .events = 0};
                if (poll(&out, 1, 200) > 0 && (out.revents & (POLLHUP | POLLERR)))
                        return 0;
        }
}

static int64_t parse_since(const char *s)
{
        uint64_t ago;
        char *end;
        if (parse_duration(s, &ago) == 0) {
                struct timeval tv;
                gettimeofday(&tv, NULL);
                return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000 - (int64_t)ago;
        }
        errno = 0;
        long long v = strtoll(s, &end, 10);
        return errno || *end || v < 0 ? -1 : v;
}

int cmd_audit(int argc, char **argv)
{
        static const struct option opts[] = {
                {"run", required_argument, NULL, 'r'},
                {"agent", required_argument, NULL, 'a'},
                {"event", required_argument, NULL, 'e'},
                {"since", required_argument, NULL, 's'},
                {"until", required_argument, NULL, 'u'},
                {"on-behalf-of", required_argument, NULL, 'o'},
                {"chain", required_argument, NULL, 'c'},
                {"follow", no_argument, NULL, 'f'},
                {"json", no_argument, NULL, 'j'},
                {"head", required_argument, NULL, 'H'},
                {"pubkey", required_argument, NULL, 'P'},
                {"state-dir", required_argument, NULL, 'S'},
                {"scope", required_argument, NULL, 'X'},
                {"help", no_argument, NULL, 'h'},
                {},
        };
        struct filter f = {0};
        const char *head = NULL, *pubkey = NULL, *sd = NULL, *sub = NULL;
        _cleanup_free_ char *state_dir = NULL;
        struct rf_error err = {0};
        int c;

        if (argc > 1 && argv[1][0] != '-') {
                sub = argv[1];
                argc--, argv++;
        }
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
                switch (c) {
                case 'r':
                        f.run = optarg;
                        break;
                case 'a':
                        f.agent = optarg;
                        break;
                case 'e':
                        f.event = optarg;
                        break;
                case 'j':
                        f.json = true;
                        break;
                case 'H':
                        head = optarg;
                        break;
                case 'P':
                        pubkey = optarg;
                        break;
                case 'S':
                        sd = optarg;
                        break;
                case 's':
                        if ((f.since_ms = parse_since(optarg)) < 0) {
                                cli_error("audit: --since %s: expected unix ms or N(ms|s|m|h)",
                                          optarg);
                                return CLI_EXIT_USAGE;
                        }
                        break;
                case 'u':
                        if ((f.until_ms = parse_since(optarg)) < 0) {
                                cli_error("audit: --until %s: expected unix ms or N(ms|s|m|h)",
                                          optarg);
                                return CLI_EXIT_USAGE;
                        }
                        break;
                case 'o':
                        f.obo = optarg;
                        break;
                case 'c':
                        f.chain = optarg;
                        break;
                case 'f':
                        f.follow = true;
                        break;
                case 'X': /* the daemon's: only the records its caller may read */
                        f.scope = audit_scope_free(f.scope);
                        if (audit_scope_parse(optarg, strlen(optarg), &f.scope) < 0) {
                                cli_error("audit: --scope: not a scope (daemon/scope.h)");
                                return CLI_EXIT_USAGE;
                        }
                        break;
                case 'h':
                        puts("Usage: ringfence audit [--run ID] [--agent A] [--on-behalf-of P] "
                             "[--event E]\n"
                             "                       [--chain RUN] [--since T] [--until T] "
                             "[--json] [--follow]\n"
                             "       ringfence audit verify [--head FILE] [--pubkey FILE]\n"
                             "       ringfence audit head");
                        return 0;
                default:
                        cli_error("audit: unknown option %s", argv[optind - 1]);
                        return CLI_EXIT_USAGE;
                }
        }
        if (cli_state_dir(sd, 0, &state_dir, &err) < 0) {
                cli_print_error(&err);
                return 1;
        }
        if (!sub) {
                if (f.agent || f.obo || f.chain) {
                        f.runs = calloc(AUDIT_AGENT_RUNS_MAX, sizeof *f.runs);
                        if (!f.runs) {
                                cli_error("audit: out of memory");
                                return 1;
                        }
                        if (f.agent || f.obo) {
                                f.collecting = true;
                                (void)audit_list(state_dir, &f);
                                f.collecting = false;
                        }
                        if (f.chain) {
                                /* filters combine: with --agent/--on-behalf-of too, the
                                 * chain's runs that also match them */
                                size_t n_sel = f.n_runs;
                                char(*sel)[40] = n_sel ? malloc(n_sel * sizeof *sel) : NULL;
                                if (n_sel && !sel) {
                                        cli_error("audit: out of memory");
                                        free(f.runs);
                                        return 1;
                                }
                                if (n_sel)
                                        memcpy(sel, f.runs, n_sel * sizeof *sel);
                                f.n_runs = 0;
                                if (collect_chain(state_dir, &f) < 0)
                                        cli_error("audit: the chain of %s is incomplete (log too "
                                                  "large)",
                                                  f.chain);
                                if (f.agent || f.obo) {
                                        size_t w = 0;
                                        for (size_t i = 0; i < f.n_runs; i++)
                                                for (size_t j = 0; j < n_sel; j++)
                                                        if (!strcmp(f.runs[i], sel[j])) {
                                                                memmove(f.runs[w++], f.runs[i], 40);
                                                                break;
                                                        }
                                        f.n_runs = w;
                                }
                                free(sel);
                        }
                }
                unsigned fseg = 1;
                long foff = 0;
                if (f.follow)
                        follow_mark(state_dir, &fseg, &foff);
                int r = audit_list(state_dir, &f);
                if (r == 0 && f.follow)
                        r = audit_follow(state_dir, &f, fseg, foff);
                free(f.runs);
                audit_scope_free(f.scope);
                return r;
        }
        if (!strcmp(sub, "verify")) {
                struct audit_verified v = {0};
                if (audit_verify(state_dir, head, pubkey, &v, &err) < 0) {
                        cli_error("audit verify: %s", err.msg);
                        return 1;
                }
                /* say exactly what was checked: a log whose last records were
                 * cut is a whole, shorter chain, and only a head saved
                 * elsewhere before the cut tells */
                if (v.records)
                        printf("audit log verified: records 1..%" PRIu64 " (last seq %" PRIu64
                               ", hash %.16s...)",
                               v.records, v.records, v.hash);
                else
                        printf("audit log verified: empty (no records)");
                if (v.checkpoints)
                        printf(", %" PRIu64 " signed checkpoints%s, the last at seq %" PRIu64,
                               v.checkpoints, pubkey ? " by the pinned key" : "", v.checkpoint_seq);
                else
                        printf(", no signed checkpoint yet");
                if (head) {
                        printf(", reaches the saved head (seq %" PRIu64 ")\n", v.head_seq);
                        if (v.records > v.head_seq)
                                printf("records after seq %" PRIu64 " are only as good as the "
                                       "log: anchor a newer head to cover them\n",
                                       v.head_seq);
                } else
                        printf("\nnot checked: records cut from the end of the log. Without a "
                               "saved head a log cut short is a shorter chain that still verifies. "
                               "Anchor "
                               "one off this host (ringfence audit head > head.json) and verify "
                               "against it later (ringfence audit verify --head head.json)\n");
                return 0;
        }
        if (!strcmp(sub, "head")) {
                char buf[2048];
                if (audit_head(state_dir, buf, sizeof buf, &err) < 0) {
                        cli_error("audit head: %s", err.msg);
                        return 1;
                }
                puts(buf);
                return 0;
        }
        cli_error("audit: unknown subcommand '%s' (list, verify, head)", sub);
        return CLI_EXIT_USAGE;
}
