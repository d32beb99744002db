/*
 * config.c — the daemon's configuration: parse, authorise. Pure.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/config.h"
#include "policy/policy.h"
#include "policy/binding.h"
#include "shared/json.h"

static void strv_free(char **v, size_t n)
{
        for (size_t i = 0; v && i < n; i++)
                free(v[i]);
        free(v);
}

void dconf_clear(struct dconf *c)
{
        free(c->socket);
        for (size_t i = 0; i < c->n_grants; i++)
                strv_free(c->grants[i].agents, c->grants[i].n_agents);
        strv_free(c->allow_hosts, c->n_allow_hosts);
        strv_free(c->profiles, c->n_profiles);
        strv_free(c->add_hosts, c->n_add_hosts);
        for (size_t i = 0; i < c->n_secrets; i++) {
                free(c->secrets[i].key);
                free(c->secrets[i].binding);
                strv_free(c->secrets[i].agents, c->secrets[i].n_agents);
        }
        memset(c, 0, sizeof *c);
}

static int strv(const struct json_node *m, char ***out, size_t *n, char *why, size_t wl)
{
        if (m->type != JSON_ARRAY || m->n_items > DCONF_LIST_MAX)
                return rf_why(why, wl, -EINVAL, "%s: an array of at most %d strings", m->key,
                              DCONF_LIST_MAX);
        if (!(*out = calloc(m->n_items + 1, sizeof **out)))
                return -ENOMEM;
        for (size_t i = 0; i < m->n_items; i++) {
                if (m->items[i]->type != JSON_STRING || m->items[i]->len == 0 ||
                    m->items[i]->len > 256)
                        return rf_why(why, wl, -EINVAL, "%s[%zu]: a string of 1-256 bytes", m->key,
                                      i);
                if (!((*out)[i] = strdup(m->items[i]->str)))
                        return -ENOMEM;
                (*n)++;
        }
        return 0;
}

static int id_of(const struct json_node *m, uint32_t *id, char *why, size_t wl)
{
        uint64_t v;
        if (m->type != JSON_NUMBER || json_number_uint64(m, &v) < 0 || v > 0xfffffffeULL)
                return rf_why(why, wl, -EINVAL, "%s: a number", m->key);
        *id = (uint32_t)v;
        return 0;
}

/* "memory", "pids", "cpus", "timeout", "log_bytes", "state_bytes" of a
 * grant's "limits" or of the ceiling; `timeout` false for the ceiling (its
 * key is max_timeout). 1 if `m` was one of them, 0 if not, or -EINVAL. */
static int limit_key(const struct json_node *m, struct dconf_limits *l, bool timeout, char *why,
                     size_t wl)
{
        const char *v = m->type == JSON_STRING || m->type == JSON_NUMBER ? m->str : NULL;
        uint64_t x = 0;
        if (!strcmp(m->key, "memory") || !strcmp(m->key, "log_bytes") ||
            !strcmp(m->key, "state_bytes")) {
                if (!v || parse_size(v, &x) < 0 || x < 4096)
                        return rf_why(why, wl, -EINVAL, "%s: a size of at least 4K, e.g. \"2G\"",
                                      m->key);
                *(m->key[0] == 'm'   ? &l->memory
                  : m->key[0] == 'l' ? &l->log_bytes
                                     : &l->state_bytes) = x;
        } else if (!strcmp(m->key, "pids")) {
                if (!v || json_number_uint64(m, &x) < 0 || x == 0 || x > POLICY_PIDS_MAX)
                        return rf_why(why, wl, -EINVAL, "pids: a number of processes");
                l->pids = x;
        } else if (!strcmp(m->key, "cpus")) {
                if (!v || parse_cpus(v, &x) < 0 || x == 0 || x > POLICY_CPUS_MILLI_MAX)
                        return rf_why(why, wl, -EINVAL, "cpus: a number of CPUs such as \"1.5\"");
                l->cpus_milli = x;
        } else if (timeout && !strcmp(m->key, "timeout")) {
                if (m->type != JSON_STRING || parse_duration(m->str, &x) < 0 || !x)
                        return rf_why(why, wl, -EINVAL, "timeout: a duration such as \"1h\"");
                l->timeout_ms = x;
        } else
                return 0;
        return 1;
}

/* ceiling.state_reserve: a size ("64M"; "0": none) or a share of the file
 * system ("5%", 1 to DCONF_RESERVE_PCT_MAX). */
static int parse_reserve(const struct json_node *m, struct dconf *c, char *why, size_t wl)
{
        uint64_t x = 0;
        if (m->type == JSON_STRING && m->len >= 2 && m->len <= 3 && m->str[m->len - 1] == '%') {
                unsigned pct = 0;
                bool digits = true;
                for (size_t i = 0; i + 1 < m->len; i++) {
                        if (m->str[i] >= '0' && m->str[i] <= '9')
                                pct = pct * 10 + (unsigned)(m->str[i] - '0'); /* 2 digits */
                        else
                                digits = false;
                }
                if (digits && pct >= 1 && pct <= DCONF_RESERVE_PCT_MAX) {
                        c->reserve_pct = pct;
                        c->state_reserve = 0;
                        return 0;
                }
        } else if ((m->type == JSON_STRING || m->type == JSON_NUMBER) &&
                   parse_size(m->str, &x) == 0) {
                c->state_reserve = x;
                c->reserve_pct = 0;
                return 0;
        }
        return rf_why(why, wl, -EINVAL,
                      "ceiling.state_reserve: a size such as \"64M\" (\"0\": none) or a "
                      "share of the file system such as \"5%%\" (1-%d%%)",
                      DCONF_RESERVE_PCT_MAX);
}

static int parse_grant(const struct json_node *o, struct dconf_grant *g, char *why, size_t wl)
{
        bool have_id = false;
        if (o->type != JSON_OBJECT)
                return rf_why(why, wl, -EINVAL, "grants[]: an object");
        for (size_t i = 0; i < o->n_items; i++) {
                const struct json_node *m = o->items[i];
                int r;
                if (!strcmp(m->key, "uid") || !strcmp(m->key, "gid")) {
                        if (have_id)
                                return rf_why(why, wl, -EINVAL, "grants[]: one of uid and gid");
                        have_id = true;
                        g->is_gid = m->key[0] == 'g';
                        if ((r = id_of(m, &g->id, why, wl)) < 0)
                                return r;
                } else if (!strcmp(m->key, "agents")) {
                        if ((r = strv(m, &g->agents, &g->n_agents, why, wl)) < 0)
                                return r;
                } else if (!strcmp(m->key, "all_uids")) {
                        if (m->type != JSON_TRUE && m->type != JSON_FALSE)
                                return rf_why(why, wl, -EINVAL, "all_uids: true or false");
                        g->all_uids = m->type == JSON_TRUE;
                } else if (!strcmp(m->key, "limits")) {
                        if (m->type != JSON_OBJECT)
                                return rf_why(why, wl, -EINVAL, "limits: an object");
                        for (size_t k = 0; k < m->n_items; k++) {
                                if ((r = limit_key(m->items[k], &g->limits, true, why, wl)) < 0)
                                        return r;
                                if (r == 0)
                                        return rf_why(
                                                why, wl, -EINVAL,
                                                "limits: unknown key \"%.64s\" (memory, pids, "
                                                "cpus, timeout, log_bytes, state_bytes)",
                                                m->items[k]->key);
                        }
                } else if (!strcmp(m->key, "actions")) {
                        if (m->type != JSON_ARRAY)
                                return rf_why(why, wl, -EINVAL, "actions: an array");
                        for (size_t k = 0; k < m->n_items; k++) {
                                const struct json_node *a = m->items[k];
                                bool known = false;
                                for (int op = 0; a->type == JSON_STRING && op < _API_OP_MAX; op++)
                                        if (!strcmp(a->str, api_op_name((enum api_op)op))) {
                                                g->actions |= 1u << op;
                                                known = true;
                                        }
                                if (!known)
                                        return rf_why(why, wl, -EINVAL,
                                                      "actions[%zu]: one of list-runs, get-run, "
                                                      "start-run, kill, pause, resume, revoke, "
                                                      "grant, block, audit, status",
                                                      k);
                        }
                } else
                        return rf_why(why, wl, -EINVAL, "grants[]: unknown key \"%.64s\"", m->key);
        }
        if (!have_id || !g->n_agents || !g->actions)
                return rf_why(why, wl, -EINVAL,
                              "grants[]: uid or gid, agents and actions are required");
        return 0;
}

static int parse_secret(const struct json_node *o, struct dconf_secret *s, char *why, size_t wl)
{
        struct json_buf j = {0};
        bool first = true;
        int r = 0;

        if (o->type != JSON_OBJECT)
                return rf_why(why, wl, -EINVAL, "secrets.%s: an object", o->key);
        if (!(s->key = strdup(o->key)))
                return -ENOMEM;
        /* the binding's own keys go to the binding parser; the ACL stays here */
        json_buf_append(&j, "{", 1);
        for (size_t i = 0; i < o->n_items && r == 0; i++) {
                const struct json_node *m = o->items[i];
                if (!strcmp(m->key, "agents"))
                        r = strv(m, &s->agents, &s->n_agents, why, wl);
                else if (!strcmp(m->key, "uids")) {
                        if (m->type != JSON_ARRAY || m->n_items > DCONF_LIST_MAX)
                                r = rf_why(why, wl, -EINVAL, "uids: an array of numbers");
                        for (size_t k = 0; r == 0 && k < m->n_items; k++)
                                r = id_of(m->items[k], &s->uids[s->n_uids++], why, wl);
                } else {
                        /* re-serialise: only strings and arrays of strings are valid here */
                        if (!first)
                                json_buf_append(&j, ",", 1);
                        first = false;
                        json_buf_append_string(&j, m->key, strlen(m->key));
                        json_buf_append(&j, ":", 1);
                        if (m->type == JSON_STRING)
                                json_buf_append_string(&j, m->str, m->len);
                        else if (m->type == JSON_ARRAY) {
                                json_buf_append(&j, "[", 1);
                                for (size_t k = 0; k < m->n_items; k++) {
                                        if (m->items[k]->type != JSON_STRING) {
                                                r = rf_why(why, wl, -EINVAL,
                                                           "secrets.%s.%s: strings", o->key,
                                                           m->key);
                                                break;
                                        }
                                        if (k)
                                                json_buf_append(&j, ",", 1);
                                        json_buf_append_string(&j, m->items[k]->str,
                                                               m->items[k]->len);
                                }
                                json_buf_append(&j, "]", 1);
                        } else
                                r = rf_why(why, wl, -EINVAL, "secrets.%s.%s: a string or an array",
                                           o->key, m->key);
                }
        }
        json_buf_append(&j, "}", 1);
        struct secret_binding b;
        char bwhy[256];
        if (r == 0 && (j.error || secret_binding_parse(j.data, j.len, &b, bwhy, sizeof bwhy) < 0))
                r = rf_why(why, wl, -EINVAL, "secrets.%s: %s", o->key,
                           j.error ? "too large" : bwhy);
        if (r == 0) {
                r = secret_binding_to_json(&b, &s->binding);
                secret_binding_clear(&b);
        }
        if (r == 0 && !s->n_agents && !s->n_uids)
                r = rf_why(why, wl, -EINVAL, "secrets.%s: an ACL (agents and/or uids) is required",
                           o->key);
        json_buf_done(&j);
        return r;
}

int dconf_parse(const char *buf, size_t len, struct dconf *c, char *why, size_t wl)
{
        struct json_node *doc = NULL;
        struct rf_error err = {0};
        int r = 0;

        memset(c, 0, sizeof *c);
        c->socket_mode = 0600;
        c->runs_per_uid = DCONF_RUNS_PER_UID;
        c->limits = (struct dconf_limits){.memory = DCONF_DEFAULT_MEMORY,
                                          .pids = DCONF_DEFAULT_PIDS,
                                          .log_bytes = DCONF_DEFAULT_LOG_BYTES,
                                          .state_bytes = DCONF_DEFAULT_STATE_BYTES};
        c->state_reserve = DCONF_DEFAULT_RESERVE;
        if (json_parse(buf, len, &doc, &err) < 0)
                return rf_why(why, wl, -EINVAL, "%s", err.msg);
        if (doc->type != JSON_OBJECT)
                r = rf_why(why, wl, -EINVAL, "the configuration is a JSON object");
        const struct json_node *v = json_object_get(doc, "version");
        uint64_t ver = 0;
        if (r == 0 && (!v || json_number_uint64(v, &ver) < 0 || ver != 1))
                r = rf_why(why, wl, -EINVAL, "version: 1 is required");
        for (size_t i = 0; r == 0 && i < doc->n_items; i++) {
                const struct json_node *m = doc->items[i];
                if (!strcmp(m->key, "version"))
                        continue;
                if (!strcmp(m->key, "socket")) {
                        if (m->type != JSON_STRING || m->str[0] != '/' || m->len > 100)
                                r = rf_why(why, wl, -EINVAL,
                                           "socket: an absolute path under 100 bytes");
                        else if (!(c->socket = strdup(m->str)))
                                r = -ENOMEM;
                } else if (!strcmp(m->key, "socket_mode")) {
                        char *end = NULL;
                        unsigned long mode = m->type == JSON_STRING ? strtoul(m->str, &end, 8) : 0;
                        if (!end || *end || m->len != 4 || mode > 0777)
                                r = rf_why(why, wl, -EINVAL,
                                           "socket_mode: four octal digits, e.g. \"0660\"");
                        c->socket_mode = (unsigned)mode;
                } else if (!strcmp(m->key, "grants")) {
                        if (m->type != JSON_ARRAY || m->n_items > DCONF_GRANTS_MAX)
                                r = rf_why(why, wl, -EINVAL, "grants: an array of at most %d",
                                           DCONF_GRANTS_MAX);
                        for (size_t k = 0; r == 0 && k < m->n_items; k++)
                                r = parse_grant(m->items[k], &c->grants[c->n_grants++], why, wl);
                } else if (!strcmp(m->key, "ceiling")) {
                        if (m->type != JSON_OBJECT)
                                r = rf_why(why, wl, -EINVAL, "ceiling: an object");
                        for (size_t k = 0; r == 0 && k < m->n_items; k++) {
                                const struct json_node *e = m->items[k];
                                if (!strcmp(e->key, "allow_hosts"))
                                        r = strv(e, &c->allow_hosts, &c->n_allow_hosts, why, wl);
                                else if (!strcmp(e->key, "profiles"))
                                        r = strv(e, &c->profiles, &c->n_profiles, why, wl);
                                else if (!strcmp(e->key, "add_hosts"))
                                        r = strv(e, &c->add_hosts, &c->n_add_hosts, why, wl);
                                else if (!strcmp(e->key, "max_timeout")) {
                                        if (e->type != JSON_STRING ||
                                            parse_duration(e->str, &c->max_timeout_ms) < 0)
                                                r = rf_why(why, wl, -EINVAL,
                                                           "ceiling.max_timeout: a duration");
                                } else if (!strcmp(e->key, "runs_per_uid")) {
                                        uint64_t runs = 0;
                                        if (json_number_uint64(e, &runs) < 0 || runs == 0 ||
                                            runs > 4096)
                                                r = rf_why(why, wl, -EINVAL,
                                                           "ceiling.runs_per_uid: 1 to 4096 runs");
                                        c->runs_per_uid = (unsigned)runs;
                                } else if (!strcmp(e->key, "state_reserve")) {
                                        r = parse_reserve(e, c, why, wl);
                                } else if ((r = limit_key(e, &c->limits, false, why, wl)) == 0)
                                        r = rf_why(why, wl, -EINVAL,
                                                   "ceiling: unknown key \"%.64s\"", e->key);
                                else if (r == 1)
                                        r = 0;
                        }
                } else if (!strcmp(m->key, "secrets")) {
                        if (m->type != JSON_OBJECT || m->n_items > DCONF_SECRETS_MAX)
                                r = rf_why(why, wl, -EINVAL, "secrets: an object of at most %d",
                                           DCONF_SECRETS_MAX);
                        for (size_t k = 0; r == 0 && k < m->n_items; k++)
                                r = parse_secret(m->items[k], &c->secrets[c->n_secrets++], why, wl);
                } else
                        r = rf_why(why, wl, -EINVAL,
                                   "unknown key \"%.64s\" (version, socket, socket_mode, grants, "
                                   "ceiling, secrets)",
                                   m->key);
        }
        json_node_free(doc);
        if (r < 0)
                dconf_clear(c);
        return r;
}

static bool agent_listed(char *const *v, size_t n, const char *agent)
{
        for (size_t i = 0; i < n; i++)
                if (!strcmp(v[i], "*") || !strcmp(v[i], agent))
                        return true;
        return false;
}

/* Is the grant for this uid (or one of its groups)? */
static bool grant_covers(const struct dconf_grant *g, uid_t uid, const gid_t *gids, size_t n_gids)
{
        bool who = !g->is_gid && g->id == uid;
        for (size_t k = 0; g->is_gid && k < n_gids; k++)
                who |= gids[k] == g->id;
        return who;
}

bool dconf_allowed(const struct dconf *c, uid_t uid, const gid_t *gids, size_t n_gids,
                   enum api_op op, const char *agent)
{
        return uid == 0 || dconf_grant_for(c, uid, gids, n_gids, op, agent);
}

struct dconf_limits dconf_limits_for(const struct dconf *c, uid_t uid, const gid_t *gids,
                                     size_t n_gids, const char *agent)
{
        struct dconf_limits l = c->limits;
        l.timeout_ms = c->max_timeout_ms;
        const struct dconf_grant *g =
                uid == 0 ? NULL : dconf_grant_for(c, uid, gids, n_gids, API_START_RUN, agent);
        if (g) {
                const struct dconf_limits *o = &g->limits;
                l.memory = o->memory ? o->memory : l.memory;
                l.pids = o->pids ? o->pids : l.pids;
                l.cpus_milli = o->cpus_milli ? o->cpus_milli : l.cpus_milli;
                l.timeout_ms = o->timeout_ms ? o->timeout_ms : l.timeout_ms;
                l.log_bytes = o->log_bytes ? o->log_bytes : l.log_bytes;
                l.state_bytes = o->state_bytes ? o->state_bytes : l.state_bytes;
        }
        return l;
}

uint64_t dconf_reserve_bytes(const struct dconf *c, uint64_t fs_bytes)
{
        /* fs_bytes / 100 * pct cannot overflow (pct <= 50); the remainder's
         * share is added so a small file system's share is not rounded away */
        if (c->reserve_pct)
                return fs_bytes / 100 * c->reserve_pct + fs_bytes % 100 * c->reserve_pct / 100;
        return c->state_reserve;
}

const struct dconf_grant *dconf_grant_for(const struct dconf *c, uid_t uid, const gid_t *gids,
                                          size_t n_gids, enum api_op op, const char *agent)
{
        if (uid == 0 || (unsigned)op >= _API_OP_MAX)
                return NULL;
        for (size_t i = 0; i < c->n_grants; i++) {
                const struct dconf_grant *g = &c->grants[i];
                bool who = grant_covers(g, uid, gids, n_gids);
                /* kill runs and kill an agent's runs are the same action */
                unsigned want = 1u << op;
                if (op == API_KILL_AGENT)
                        want |= 1u << API_KILL_RUN;
                if (op == API_UNBLOCK_AGENT)
                        want |= 1u << API_BLOCK_AGENT;
                if (who && (g->actions & want) &&
                    (!agent || agent_listed(g->agents, g->n_agents, agent)))
                        return g;
        }
        return NULL;
}

const struct dconf_secret *dconf_secret_for(const struct dconf *c, const char *key,
                                            const char *agent, uid_t uid)
{
        for (size_t i = 0; i < c->n_secrets; i++) {
                const struct dconf_secret *s = &c->secrets[i];
                if (strcmp(s->key, key))
                        continue;
                bool ok_agent = !s->n_agents || agent_listed(s->agents, s->n_agents, agent);
                bool ok_uid = !s->n_uids || uid == 0;
                for (size_t k = 0; k < s->n_uids; k++)
                        ok_uid |= s->uids[k] == uid;
                return ok_agent && ok_uid ? s : NULL;
        }
        return NULL;
}

bool dconf_audit_scope(const struct dconf *c, uid_t uid, const gid_t *gids, size_t n_gids,
                       struct json_buf *j)
{
        char num[32];
        if (uid == 0)
                return false;
        snprintf(num, sizeof num, "{\"uid\":%u", (unsigned)uid);
        json_buf_append(j, num, strlen(num));
        for (int all = 0; all < 2; all++) {
                bool first = true;
                json_buf_append(j, all ? ",\"all\":[" : ",\"own\":[", 8);
                for (size_t i = 0; i < c->n_grants; i++) {
                        const struct dconf_grant *g = &c->grants[i];
                        if (!grant_covers(g, uid, gids, n_gids) ||
                            !(g->actions & (1u << API_AUDIT)) || g->all_uids != (all == 1))
                                continue;
                        for (size_t k = 0; k < g->n_agents; k++) {
                                if (!first)
                                        json_buf_append(j, ",", 1);
                                first = false;
                                json_buf_append_string(j, g->agents[k], strlen(g->agents[k]));
                        }
                }
                json_buf_append(j, "]", 1);
        }
        json_buf_append(j, "}", 1);
        return true;
}
