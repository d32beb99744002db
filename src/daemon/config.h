/*
 * config.h — the daemon's operator configuration (pure parse; fuzzed).
 *
 *   {"version": 1,
 *    "socket": "/run/ringfence/control.sock",      (default STATE_DIR/control.sock)
 *    "socket_mode": "0666",                        (default 0600; SO_PEERCRED decides)
 *    "grants": [{"uid": 1000, "agents": ["claude"], "actions": ["start-run", "kill", ...]},
 *               {"gid": 100, "agents": ["*"], "actions": ["list-runs", "audit"]}],
 *    "ceiling": {"allow_hosts": ["api.github.com:443"], "max_timeout": "1h"},
 *    "secrets": {"github": {"name": "GITHUB_TOKEN", "deliver": "env",
 *                           "from": "store:github",          (or "exec": [argv], "pass_env")
 *                           "agents": ["claude"], "uids": [1000]}}}
 *
 * Actions: list-runs, get-run, start-run, kill, pause, resume, revoke,
 * block, audit (api_op_name). uid 0 may do everything. A request can only
 * narrow the ceiling: it may ask for some of its allow_hosts and a timeout
 * up to max_timeout; secrets come only from here (a request names them),
 * each with an ACL of agents and uids.
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

struct dconf_grant {
        bool is_gid;
        uint32_t id;
        char **agents; /* "*" = any */
        size_t n_agents;
        unsigned actions; /* 1 << enum api_op */
};

struct dconf_secret {
        char *key;     /* the name requests use */
        char *binding; /* canonical binding JSON (secrets/binding.h) */
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
        uint64_t max_timeout_ms; /* 0: none */
        unsigned runs_per_uid;   /* live runs a uid other than root may have started */
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

/* dconf_secret_for — the secret `key` if agent and uid are on its ACL, else NULL. */
const struct dconf_secret *dconf_secret_for(const struct dconf *c, const char *key,
                                            const char *agent, uid_t uid);
