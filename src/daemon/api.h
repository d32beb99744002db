/*
 * api.h — the daemon's control API: routes and request bodies (pure; fuzzed).
 *
 * HTTP/1.1 + JSON on a Unix socket (docs/API.md):
 *
 *   GET    /v1/runs                      the runs (as `ringfence ps --json`)
 *   POST   /v1/runs                      start a run: {"argv": [...], "agent": ...}
 *   GET    /v1/runs/RUN                  one run
 *   POST   /v1/runs/RUN/kill             {"reason": "..."} (optional body)
 *   POST   /v1/runs/RUN/pause | resume
 *   POST   /v1/runs/RUN/revoke           {"secret": "NAME"}
 *   POST   /v1/runs/RUN/grant            {"allow_host": "RULE"} or {"revoke_host": "RULE"}
 *   POST   /v1/runs/RUN/proposal         {"rule": "HOST:PORT"}: recorded as console.proposal
 *   GET    /v1/runs/RUN/output[?tail=N]  the end of the run's log (text/plain)
 *   POST   /v1/agents/AGENT/kill         {"reason": "...", "block": true}
 *   PUT    /v1/agents/AGENT/block        {"reason": "..."}
 *   DELETE /v1/agents/AGENT/block
 *   GET    /v1/audit[?run=RUN][&follow=1] audit records as JSON lines (all the
 *                                        caller may read, or those of one run)
 *   GET    /v1/audit/verify              the daemon's verification of its log (cached)
 *   GET    /v1/daemon                    the daemon's own state: children, clients,
 *                                        work in progress, open fds ("quiescent")
 *
 * api_route() turns (method, target, body) into a struct api_req or an
 * HTTP status with a precise message. It runs in the daemon's unprivileged
 * parser process: it holds no secret and no privilege, and what it returns
 * is checked again by the privileged side (authorisation, run ids).
 */
#pragma once

#define API_ENV_MAX 64 /* variables a start may set */

#include <stdbool.h>
#include <stddef.h>

#define API_BODY_MAX      (64 * 1024) /* bytes of a request body */
#define API_ARGV_MAX      256         /* arguments of a started run's command */
#define API_ARG_MAX       4096        /* bytes of one argument */
#define API_NAME_MAX      256         /* agent, task, on_behalf_of */
#define API_SECRETS_MAX   64          /* operator-configured secrets a start may bind */
#define API_PATHS_MAX     32          /* ro and rw paths of a start, each */
#define API_PROFILES_MAX  8           /* profiles of a start */
#define API_ADD_HOSTS_MAX 16          /* add_hosts of a start */
#define API_TAIL_DEFAULT  4096        /* bytes of a run's output GET .../output answers */
#define API_TAIL_MAX      65536       /* ... at most (?tail=N) */

enum api_op {
        API_LIST_RUNS,
        API_START_RUN,
        API_GET_RUN,
        API_KILL_RUN,
        API_PAUSE_RUN,
        API_RESUME_RUN,
        API_REVOKE_SECRET,
        API_KILL_AGENT,
        API_BLOCK_AGENT,
        API_UNBLOCK_AGENT,
        API_AUDIT,
        API_GRANT_RUN,
        API_DAEMON_STATUS,
        API_PROPOSE_RUN,  /* needs get-run: whoever may read a run may propose a rule for it */
        API_RUN_OUTPUT,   /* needs get-run */
        API_AUDIT_VERIFY, /* needs audit */
        _API_OP_MAX,
        _API_OP_INVALID = -22,
};

struct api_req {
        enum api_op op;
        char run[40];                 /* a run id (format checked, not existence); API_AUDIT: the
                                       * run whose records alone are read, or "" */
        char agent[API_NAME_MAX + 1]; /* the agent of the URL, or of a start */
        char reason[257];
        char secret[65];
        char rule[321]; /* grant: the network rule; proposal: HOST:PORT (canonical) */
        bool allow;     /* grant: allow (true) or revoke the rule */
        unsigned tail;  /* output: bytes of the log's end, 1..API_TAIL_MAX */
        bool block, follow;
        bool keep_state; /* start: `--keep-state` (the profiles' agent state kept) */
        /* API_START_RUN */
        char **argv; /* owned, NULL-terminated */
        size_t argc;
        char workspace[4096];
        char task[API_NAME_MAX + 1], on_behalf_of[API_NAME_MAX + 1];
        char timeout[32]; /* a duration as given ("10m"), or "" */
        char memory[32];  /* limits asked for, as given ("512M", "1.5", "256"), or "": */
        char cpus[32];    /* the daemon parses them and holds them to the grant's */
        char pids[32];    /* ceiling (a request can only narrow it) */
        char **secrets;   /* names of operator-configured secrets; owned */
        size_t n_secrets;
        char **allow_hosts; /* network rules asked for (narrowed by the ceiling) */
        size_t n_allow_hosts;
        char **env; /* "NAME=VALUE" for the run's environment (`-e`); owned */
        size_t n_env;
        char **publish; /* `--publish` specs, canonical (policy_publish_text); owned */
        size_t n_publish;
        char **ro, **rw; /* absolute paths, opened by the run as the caller (cli/caller.h) */
        size_t n_ro, n_rw;
        char **profiles; /* profile names (`--profile`) */
        size_t n_profiles;
        char **add_hosts; /* NAME:IP (`--add-host`) */
        size_t n_add_hosts;
};

/*
 * api_route — route one request. `target` is the origin-form target,
 * `body` the request body (may be empty). Returns 0 with *req filled
 * (release with api_req_clear), or an HTTP status (400, 404, 405, 413)
 * with `why` saying precisely what is wrong.
 */
int api_route(const char *method, size_t mlen, const char *target, size_t tlen, const char *body,
              size_t blen, struct api_req *req, char *why, size_t why_len);

/* api_op_name — "list-runs", ... (the action names of the daemon's config). */
const char *api_op_name(enum api_op op);

/* Release what a request owns; leaves it zeroed. */
void api_req_clear(struct api_req *req);
