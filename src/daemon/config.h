/*
 * config.h — the daemon's operator configuration (pure parse; fuzzed).
 *
 *   {"version": 1,
 *    "socket": "/run/ringfence/control.sock",      (default STATE_DIR/control.sock)
 *    "socket_mode": "0666",                        (default 0600; SO_PEERCRED decides)
 *    "grants": [{"uid": 1000, "agents": ["claude"], "actions": ["start-run", "kill", ...],
 *                "limits": {"memory": "4G", "log_bytes": "16M"}},
 *               {"gid": 100, "agents": ["*"], "actions": ["list-runs", "audit"],
 *                "all_uids": true}],
 *    "ceiling": {"allow_hosts": ["api.github.com:443"], "max_timeout": "1h",
 *                "profiles": ["claude-code"], "add_hosts": ["git.internal:10.0.0.7"],
 *                "memory": "2G", "pids": 1024, "cpus": "2", "log_bytes": "4M",
 *                "state_bytes": "1G", "state_reserve": "64M"},
 *    "secrets": {"github": {"name": "GITHUB_TOKEN", "deliver": "env",
 *                           "from": "store:github",          (or "exec": [argv], "pass_env")
 *                           "agents": ["claude"], "uids": [1000]}}}
 *
 * Actions: list-runs, get-run, start-run, kill, pause, resume, revoke,
 * block, audit, status (api_op_name). uid 0 may do everything. A request can
 * only narrow the ceiling: it may ask for some of its allow_hosts, profiles
 * (whose hosts, named by the operator here, are then granted with them) and
 * add_hosts (a static NAME:IP would reach any address under an allowed
 * name, so only the operator's), a timeout
 * up to max_timeout, memory, pids and cpus up to the limits; secrets come
 * only from here (a request names them), each with an ACL of agents and uids.
 *
 * Resource limits (struct dconf_limits): the ceiling's apply to every API
 * run, root's included, unless a request asks for less; a grant's
 * "limits" replace them, key by key, for the runs it lets a caller start.
 * Defaults (DCONF_DEFAULT_*) hold on cgroup v1 and v2 hosts alike: the
 * daemon always passes --memory, so every API run has a memory limit.
 * state_bytes is what one uid other than root may hold in STATE_DIR/logs.
 * cpus and timeout have no default: unset, a run gets no CPU limit and no
 * timeout unless its request asks for one.
 *
 * The reserve (ceiling.state_reserve, not a grant's: it is one for the
 * file system): free space on the state dir's file system that only root's
 * runs may use, so that uids other than root together (their logs, which
 * state_bytes bounds only per uid) cannot fill the disk the audit log lives
 * on and get root's runs refused. A size ("64M", the default; "0" turns it
 * off) or a share of the file system ("5%", 1-50).
 *
 * Audit reads: a grant with "audit" shows the records of its agents' runs
 * started by (or for) the caller's own uid; "all_uids": true widens that to
 * every uid's runs of its agents and to the records tied to no run.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/api.h"

#define DCONF_GRANTS_MAX  256
#define DCONF_SECRETS_MAX 256
#define DCONF_LIST_MAX    64 /* agents, actions, uids, allow_hosts per entry */

/* Resource limits; 0: not set here (the next level's value applies). */
struct dconf_limits {
        uint64_t memory; /* bytes */
        uint64_t pids;
        uint64_t cpus_milli;  /* 1.5 CPUs = 1500 */
        uint64_t timeout_ms;  /* a grant's; the ceiling's is max_timeout_ms */
        uint64_t log_bytes;   /* one run's log (--log-max) */
        uint64_t state_bytes; /* all of one uid's logs in STATE_DIR/logs */
};

#define DCONF_DEFAULT_MEMORY      (2ULL << 30) /* 2 GiB */
#define DCONF_DEFAULT_PIDS        1024
#define DCONF_DEFAULT_LOG_BYTES   (4ULL << 20)  /* 4 MiB */
#define DCONF_DEFAULT_STATE_BYTES (1ULL << 30)  /* 1 GiB per uid */
#define DCONF_DEFAULT_RESERVE     (64ULL << 20) /* ceiling.state_reserve: 64 MiB */
#define DCONF_RESERVE_PCT_MAX     50

struct dconf_grant {
        bool is_gid;
        uint32_t id;
        char **agents; /* "*" = any */
        size_t n_agents;
        unsigned actions; /* 1 << enum api_op */
        bool all_uids;    /* audit: every uid's runs, and records of no run */
        struct dconf_limits limits;
};

struct dconf_secret {
        char *key;     /* the name requests use */
        char *binding; /* canonical binding JSON (policy/binding.h) */
        char **agents;
        size_t n_agents;
        uint32_t uids[DCONF_LIST_MAX];
        size_t n_uids;
};

#define DCONF_RUNS_PER_UID 1024 /* ceiling.runs_per_uid by default */

struct dconf {
        char *socket; /* NULL: STATE_DIR/control.sock */
        unsigned socket_mode;
        struct dconf_grant grants[DCONF_GRANTS_MAX];
        size_t n_grants;
        char **allow_hosts; /* the ceiling */
        size_t n_allow_hosts;
        char **profiles; /* profiles a caller other than root may ask for */
        size_t n_profiles;
        char **add_hosts; /* NAME:IP a caller other than root may ask for */
        size_t n_add_hosts;
        uint64_t max_timeout_ms;    /* 0: none */
        unsigned runs_per_uid;      /* live runs a uid other than root may have started */
        struct dconf_limits limits; /* the ceiling's (defaults filled in by dconf_parse) */
        uint64_t state_reserve;     /* bytes kept for root; 0 with reserve_pct 0: none */
        unsigned reserve_pct;       /* instead, a share of the file system (1-50) */
        struct dconf_secret secrets[DCONF_SECRETS_MAX];
        size_t n_secrets;
};

/* dconf_parse — the configuration text. 0, or -EINVAL with `why`. Pure. */
int dconf_parse(const char *buf, size_t len, struct dconf *c, char *why, size_t why_len);
void dconf_clear(struct dconf *c);

/*
 * dconf_allowed — may the caller (uid, and its groups gids[0..n)) do `op`
 * for runs of `agent`? uid 0 always may. Pure.
 */
bool dconf_allowed(const struct dconf *c, uid_t uid, const gid_t *gids, size_t n_gids,
                   enum api_op op, const char *agent);

/*
 * dconf_grant_for — the first grant that lets (uid, gids) do `op` for
 * `agent`, or NULL (none; or uid 0, which needs none). Pure.
 */
const struct dconf_grant *dconf_grant_for(const struct dconf *c, uid_t uid, const gid_t *gids,
                                          size_t n_gids, enum api_op op, const char *agent);

/*
 * dconf_limits_for — the limits of a start by (uid, gids) for `agent`:
 * the ceiling's, replaced key by key by those of the grant that allows the
 * start (uid 0: the ceiling's). Pure.
 */
struct dconf_limits dconf_limits_for(const struct dconf *c, uid_t uid, const gid_t *gids,
                                     size_t n_gids, const char *agent);

/*
 * dconf_audit_scope — the audit read scope (daemon/scope.h) of (uid, gids)'s
 * `audit` grants, as its JSON text appended to `j`. uid 0 has none: false,
 * nothing appended. Pure.
 */
struct json_buf;
bool dconf_audit_scope(const struct dconf *c, uid_t uid, const gid_t *gids, size_t n_gids,
                       struct json_buf *j);

/*
 * dconf_reserve_bytes — the reserve (ceiling.state_reserve) on a file system
 * of `fs_bytes` bytes: the size configured, or its share of fs_bytes. Pure.
 */
uint64_t dconf_reserve_bytes(const struct dconf *c, uint64_t fs_bytes);

/* dconf_secret_for — the secret `key` if agent and uid are on its ACL, else NULL. */
const struct dconf_secret *dconf_secret_for(const struct dconf *c, const char *key,
                                            const char *agent, uid_t uid);
