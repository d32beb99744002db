/*
 * parse.h — what the console reads that it did not write, as pure
 * functions (fuzzed by fuzz_console_parse, unit-tested in test_console):
 * the --listen address, a request's path under /run/ and /api/run/, the
 * audit record lines of the daemon's /v1/audit answer or of the state
 * dir's log (scanned, not parsed: only flat string members and "ts"), and
 * an egress refusal turned into the rule that would allow it.
 *
 * Every input is a (pointer, length) pair or a NUL-terminated string the
 * console bounded before (the path: at most HTTP_ORIGIN_TARGET_MAX); no
 * function reads past its length, allocates beyond a named maximum, or
 * keeps a pointer into its input.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/json.h"

/*
 * console_listen_parse — `listen` as a loopback address and port: 0, or
 * -EINVAL (not ADDR:PORT: no colon, no or a non-decimal port, a port over
 * 65535), -EPERM (a well-formed address that is not 127.0.0.1, [::1] or
 * localhost, spelled exactly so: refused). *v6 for ::1. Pure.
 */
int console_listen_parse(const char *listen, bool *v6, uint16_t *port);

/* console_listen_why — the one line a refusal of console_listen_parse's
 * result r says (r < 0) */
const char *console_listen_why(int r);

#define CONSOLE_RUN_ID_MAX 39 /* a run id's bytes: hex digits and '-' */
#define CONSOLE_ACTION_MAX 31 /* an action's name in /run/ID/ACTION */

/* console_run_id_ok — s is a run id: 1..CONSOLE_RUN_ID_MAX of [0-9a-f-] */
bool console_run_id_ok(const char *s);

/* where a request's path leads among a run's pages */
struct console_run_path {
        bool api;        /* /api/run/ID rather than /run/ID */
        bool has_action; /* a '/' after the id: action holds what follows */
        char run[CONSOLE_RUN_ID_MAX + 1];
        char action[CONSOLE_ACTION_MAX + 1];
};

/*
 * console_run_path — split `path` (NUL-terminated, the query cut off): 0
 * not under /run/ or /api/run/; 1 a run's path, *rp filled; -ENOENT under
 * them but no valid run id or an action too long (the console's 404). Pure.
 */
int console_run_path(const char *path, struct console_run_path *rp);

/*
 * console_line_str — the value of member "key" (at most 24 bytes) of the
 * audit record line[0..len) when it is a string with no escape in it
 * (event names, run ids, reasons are such): a pointer into line, its
 * length in *vl; NULL otherwise. The first "key":" found is taken. Pure.
 */
const char *console_line_str(const char *line, size_t len, const char *key, size_t *vl);

/*
 * console_line_ts — the record's "ts" (ms since the epoch), a decimal of
 * at most 18 digits right after "ts":, or 0 (none, negative, malformed)
 */
int64_t console_line_ts(const char *line, size_t len);

enum {
        CONSOLE_EGRESS_NONE,
        CONSOLE_EGRESS_ALLOW, /* an egress.allow record */
        CONSOLE_EGRESS_DENY,  /* an egress.deny record */
};

/*
 * console_egress_line — whether line[0..len) is an egress decision, and of
 * which run (*run into line, *rl; NULL when the record names none). Pure.
 */
int console_egress_line(const char *line, size_t len, const char **run, size_t *rl);

#define CONSOLE_HEALTH_BUCKETS   48 /* the chart's span: 48 half hours */
#define CONSOLE_HEALTH_BUCKET_MS (30 * 60 * 1000LL)
#define CONSOLE_HEALTH_LOOPS_MAX 20 /* wake-loop refusals kept, newest */

enum {
        CONSOLE_SERIES_START,
        CONSOLE_SERIES_REFUSED,
        CONSOLE_SERIES_KILL,
        CONSOLE_SERIES_DENY,
        CONSOLE_SERIES_N
};
extern const char *const console_series_event[CONSOLE_SERIES_N];

/* the counts of the log's records; the chart's buckets are kept by their
 * absolute half hour (a slot holds the newest half hour that fell in it),
 * so counts read on from where the log was stay right as time goes on.
 * loops[] is owned (strndup'ed lines; console_health_clear frees them). */
struct console_health {
        uint64_t n[CONSOLE_SERIES_N][CONSOLE_HEALTH_BUCKETS];
        int64_t bucket[CONSOLE_HEALTH_BUCKETS]; /* the half hour (ts / BUCKET_MS) + 1 slot i
                                                 * counts; 0: none */
        uint64_t total[CONSOLE_SERIES_N];
        char *loops[CONSOLE_HEALTH_LOOPS_MAX]; /* run.refused records of the breaker, a ring */
        size_t n_loops, records;
};

/* console_health_line — count the record line[0..len) into h; 0, or
 * -ENOMEM (a breaker's refusal could not be kept; counted all the same) */
int console_health_line(struct console_health *h, const char *line, size_t len);

/* console_health_at — what series k counted in the half hour from from_ms */
uint64_t console_health_at(const struct console_health *h, int k, int64_t from_ms);

/* console_health_clear — free what h holds and zero it */
void console_health_clear(struct console_health *h);

/*
 * console_deny_rule — an egress.deny record's destination (its "host" and
 * "port" members) as HOST:PORT ([V6]:PORT) into out, the rule the policy
 * and allow-host take; false when there is no host and port of a sane
 * form (host: 1..253 of [a-z0-9.:_-], port 1..65535) or it does not fit
 * (out should hold 300). Pure.
 */
bool console_deny_rule(const struct json_node *doc, char *out, size_t size);

/*
 * console_proposal_rule — a proposed rule as a browser or an API caller
 * sends it (s[0..n), not NUL-terminated): true, with the rule in out,
 * only when it is exactly what console_deny_rule makes of some refusal
 * (HOST:PORT, [V6]:PORT; host 1..253 of [a-z0-9.:_-], port 1..65535
 * without a leading zero); out should hold 300. Pure; the console's
 * proposal and the daemon's POST /v1/runs/RUN/proposal both check with it.
 */
bool console_proposal_rule(const char *s, size_t n, char *out, size_t size);
