/*
 * api.c — the daemon's routes and request bodies. Pure; fuzzed (fuzz_api).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "console/parse.h"
#include "daemon/api.h"
#include "policy/policy-internal.h"
#include "policy/policy.h"
#include "secrets/broker.h"
#include "shared/json.h"

static const char *const op_names[_API_OP_MAX] = {
        [API_LIST_RUNS] = "list-runs",  [API_START_RUN] = "start-run", [API_GET_RUN] = "get-run",
        [API_KILL_RUN] = "kill",        [API_PAUSE_RUN] = "pause",     [API_RESUME_RUN] = "resume",
        [API_REVOKE_SECRET] = "revoke", [API_KILL_AGENT] = "kill",     [API_BLOCK_AGENT] = "block",
        [API_UNBLOCK_AGENT] = "block",  [API_AUDIT] = "audit",         [API_GRANT_RUN] = "grant",
        [API_DAEMON_STATUS] = "status", [API_PROPOSE_RUN] = "get-run", [API_RUN_OUTPUT] = "get-run",
        [API_AUDIT_VERIFY] = "audit",
};

const char *api_op_name(enum api_op op)
{
        return (unsigned)op < _API_OP_MAX && op_names[op] ? op_names[op] : "?";
}

static void strv_free(char **v, size_t n)
{
        for (size_t i = 0; v && i < n; i++)
                free(v[i]);
        free(v);
}

void api_req_clear(struct api_req *req)
{
        strv_free(req->argv, req->argc);
        strv_free(req->secrets, req->n_secrets);
        strv_free(req->allow_hosts, req->n_allow_hosts);
        strv_free(req->env, req->n_env);
        strv_free(req->publish, req->n_publish);
        strv_free(req->ro, req->n_ro);
        strv_free(req->rw, req->n_rw);
        strv_free(req->profiles, req->n_profiles);
        strv_free(req->add_hosts, req->n_add_hosts);
        memset(req, 0, sizeof *req);
}

static bool run_id_ok(const char *s, size_t n)
{
        if (n != 36)
                return false;
        for (size_t i = 0; i < n; i++) {
                bool dash = i == 8 || i == 13 || i == 18 || i == 23;
                if (dash ? s[i] != '-'
                         : !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        }
        return true;
}

/* Agents in URLs: [A-Za-z0-9._-]{1,256} (no percent-decoding anywhere). */
static bool agent_ok(const char *s, size_t n)
{
        if (n == 0 || n > API_NAME_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
                      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' || s[i] == '-'))
                        return false;
        return true;
}

static bool text_ok(const struct json_node *v, size_t max)
{
        return v->type == JSON_STRING && v->len <= max && json_text_is_safe(v->str, v->len);
}

static int strv_from(const struct json_node *m, size_t max_n, size_t max_len, char ***out,
                     size_t *n, char *why, size_t wl)
{
        if (m->type != JSON_ARRAY || m->n_items > max_n)
                return rf_why(why, wl, 400, "%s: an array of at most %zu strings", m->key, max_n);
        *out = calloc(m->n_items + 1, sizeof **out);
        if (!*out)
                return rf_why(why, wl, 500, "out of memory");
        for (size_t i = 0; i < m->n_items; i++) {
                const struct json_node *e = m->items[i];
                if (e->type != JSON_STRING || e->len > max_len)
                        return rf_why(why, wl, 400, "%s[%zu]: a string of at most %zu bytes",
                                      m->key, i, max_len);
                if (!((*out)[i] = strdup(e->str)))
                        return rf_why(why, wl, 500, "out of memory");
                (*n)++;
        }
        return 0;
}

/* "env": {"NAME": "VALUE", ...} — as `run -e` takes them (a valid name, not
 * RINGFENCE_*, a value of at most POLICY_STRING_MAX bytes), at most
 * API_ENV_MAX, kept as "NAME=VALUE". */
static int env_from(const struct json_node *m, struct api_req *r, char *why, size_t wl)
{
        if (m->type != JSON_OBJECT || m->n_items > API_ENV_MAX)
                return rf_why(why, wl, 400, "env: an object of at most %d variables", API_ENV_MAX);
        r->env = calloc(m->n_items + 1, sizeof *r->env);
        if (!r->env)
                return rf_why(why, wl, 500, "out of memory");
        for (size_t i = 0; i < m->n_items; i++) {
                const struct json_node *e = m->items[i];
                const char *p = policy_env_name_problem(e->key);
                if (!p && e->type != JSON_STRING)
                        p = "the value must be a string";
                if (!p)
                        p = policy_env_value_problem(e->str, e->len);
                if (p)
                        return rf_why(why, wl, 400, "env.%.64s: %s", e->key, p);
                if (asprintf(&r->env[i], "%s=%s", e->key, e->str) < 0) {
                        r->env[i] = NULL;
                        return rf_why(why, wl, 500, "out of memory");
                }
                r->n_env++;
        }
        return 0;
}

/* {"reason": "...", "block": bool, "secret": "..."} — each key where allowed. */
static int small_body(const struct json_node *o, struct api_req *r, bool want_block,
                      bool want_secret, char *why, size_t wl)
{
        for (size_t i = 0; o && i < o->n_items; i++) {
                const struct json_node *m = o->items[i];
                if (!strcmp(m->key, "reason")) {
                        if (!text_ok(m, 256))
                                return rf_why(why, wl, 400,
                                              "reason: printable text, at most 256 bytes");
                        memcpy(r->reason, m->str, m->len + 1);
                } else if (want_block && !strcmp(m->key, "block")) {
                        if (m->type != JSON_TRUE && m->type != JSON_FALSE)
                                return rf_why(why, wl, 400, "block: true or false");
                        r->block = m->type == JSON_TRUE;
                } else if (want_secret && !strcmp(m->key, "secret")) {
                        if (m->type != JSON_STRING || !secret_name_valid(m->str, m->len))
                                return rf_why(why, wl, 400, "secret: a secret name");
                        memcpy(r->secret, m->str, m->len + 1);
                } else
                        return rf_why(why, wl, 400, "unknown key \"%.64s\"", m->key);
        }
        if (want_secret && !r->secret[0])
                return rf_why(why, wl, 400, "secret: required");
        return 0;
}

/* {"allow_host": RULE} or {"revoke_host": RULE} */
static int grant_body(const struct json_node *o, struct api_req *r, char *why, size_t wl)
{
        if (!o || o->n_items != 1 || o->items[0]->type != JSON_STRING ||
            o->items[0]->len >= sizeof r->rule ||
            (strcmp(o->items[0]->key, "allow_host") && strcmp(o->items[0]->key, "revoke_host")))
                return rf_why(why, wl, 400,
                              "a body of one key: allow_host or revoke_host (a rule)");
        r->allow = !strcmp(o->items[0]->key, "allow_host");
        memcpy(r->rule, o->items[0]->str, o->items[0]->len + 1);
        return 0;
}

/* {"rule": "HOST:PORT"}: a rule exactly as the console proposes one
 * (console_proposal_rule), nothing else */
static int proposal_body(const struct json_node *o, struct api_req *r, char *why, size_t wl)
{
        if (!o || o->n_items != 1 || strcmp(o->items[0]->key, "rule") ||
            o->items[0]->type != JSON_STRING ||
            !console_proposal_rule(o->items[0]->str, o->items[0]->len, r->rule, sizeof r->rule))
                return rf_why(why, wl, 400,
                              "a body of one key: rule (HOST:PORT or [V6]:PORT, host of "
                              "a-z 0-9 . : _ -)");
        return 0;
}

static int start_body(const struct json_node *o, struct api_req *r, char *why, size_t wl)
{
        int s;
        if (!o)
                return rf_why(why, wl, 400, "a JSON object body is required");
        for (size_t i = 0; i < o->n_items; i++) {
                const struct json_node *m = o->items[i];
                if (!strcmp(m->key, "argv")) {
                        if ((s = strv_from(m, API_ARGV_MAX, API_ARG_MAX, &r->argv, &r->argc, why,
                                           wl)))
                                return s;
                } else if (!strcmp(m->key, "agent") || !strcmp(m->key, "task") ||
                           !strcmp(m->key, "on_behalf_of")) {
                        if (!text_ok(m, API_NAME_MAX) || m->len == 0)
                                return rf_why(why, wl, 400, "%s: printable text, 1-256 bytes",
                                              m->key);
                        /* an agent is named in URLs too (kill, block by agent):
                         * a run whose agent no URL can name would be out of reach */
                        if (m->key[0] == 'a' && !agent_ok(m->str, m->len))
                                return rf_why(why, wl, 400, "agent: 1-256 of A-Z a-z 0-9 . _ -");
                        char *dst = m->key[0] == 'a'   ? r->agent
                                    : m->key[0] == 't' ? r->task
                                                       : r->on_behalf_of;
                        memcpy(dst, m->str, m->len + 1);
                } else if (!strcmp(m->key, "workspace")) {
                        if (m->type != JSON_STRING || m->len >= sizeof r->workspace ||
                            m->str[0] != '/')
                                return rf_why(why, wl, 400, "workspace: an absolute path");
                        memcpy(r->workspace, m->str, m->len + 1);
                } else if (!strcmp(m->key, "timeout")) {
                        if (m->type != JSON_STRING || m->len == 0 || m->len >= sizeof r->timeout)
                                return rf_why(why, wl, 400, "timeout: a duration such as \"10m\"");
                        memcpy(r->timeout, m->str, m->len + 1);
                } else if (!strcmp(m->key, "memory") || !strcmp(m->key, "cpus") ||
                           !strcmp(m->key, "pids")) {
                        /* a string or a number, kept as text: the daemon parses it */
                        char *dst = m->key[0] == 'm'   ? r->memory
                                    : m->key[0] == 'c' ? r->cpus
                                                       : r->pids;
                        if ((m->type != JSON_STRING && m->type != JSON_NUMBER) || m->len == 0 ||
                            m->len >= sizeof r->memory || !json_text_is_safe(m->str, m->len))
                                return rf_why(why, wl, 400,
                                              "%s: a size, a count or a number of CPUs", m->key);
                        memcpy(dst, m->str, m->len + 1);
                } else if (!strcmp(m->key, "secrets")) {
                        if ((s = strv_from(m, API_SECRETS_MAX, 64, &r->secrets, &r->n_secrets, why,
                                           wl)))
                                return s;
                        for (size_t k = 0; k < r->n_secrets; k++)
                                if (!secret_name_valid(r->secrets[k], strlen(r->secrets[k])))
                                        return rf_why(why, wl, 400, "secrets[%zu]: a secret name",
                                                      k);
                } else if (!strcmp(m->key, "allow_hosts")) {
                        if ((s = strv_from(m, 256, 300, &r->allow_hosts, &r->n_allow_hosts, why,
                                           wl)))
                                return s;
                } else if (!strcmp(m->key, "env")) {
                        if ((s = env_from(m, r, why, wl)))
                                return s;
                } else if (!strcmp(m->key, "publish")) {
                        /* host loopback ports for the caller (publish.h):
                         * checked and kept canonical here */
                        if ((s = strv_from(m, POLICY_PUBLISH_MAX, POLICY_PUBLISH_TEXT_MAX,
                                           &r->publish, &r->n_publish, why, wl)))
                                return s;
                        for (size_t k = 0; k < r->n_publish; k++) {
                                struct policy_publish pp;
                                const char *bad = "invalid";
                                if (policy_publish_parse(r->publish[k], strlen(r->publish[k]), &pp,
                                                         &bad) < 0)
                                        return rf_why(why, wl, 400, "publish[%zu]: %s", k, bad);
                                char t[POLICY_PUBLISH_TEXT_MAX], *c;
                                policy_publish_text(&pp, t);
                                if (!(c = strdup(t)))
                                        return rf_why(why, wl, 500, "out of memory");
                                free(r->publish[k]);
                                r->publish[k] = c;
                        }
                } else if (!strcmp(m->key, "ro") || !strcmp(m->key, "rw")) {
                        bool ro = m->key[1] == 'o';
                        char ***v = ro ? &r->ro : &r->rw;
                        size_t *nv = ro ? &r->n_ro : &r->n_rw;
                        if ((s = strv_from(m, API_PATHS_MAX, API_ARG_MAX, v, nv, why, wl)))
                                return s;
                        for (size_t k = 0; k < *nv; k++)
                                if ((*v)[k][0] != '/' ||
                                    !json_text_is_safe((*v)[k], strlen((*v)[k])))
                                        return rf_why(why, wl, 400, "%s[%zu]: an absolute path",
                                                      m->key, k);
                } else if (!strcmp(m->key, "profiles")) {
                        if ((s = strv_from(m, API_PROFILES_MAX, 64, &r->profiles, &r->n_profiles,
                                           why, wl)))
                                return s;
                        for (size_t k = 0; k < r->n_profiles; k++)
                                if (!policy_profile_name_valid(r->profiles[k]))
                                        return rf_why(why, wl, 400,
                                                      "profiles[%zu]: a profile name (a-z 0-9 - _)",
                                                      k);
                } else if (!strcmp(m->key, "keep_state")) {
                        if (m->type != JSON_TRUE && m->type != JSON_FALSE)
                                return rf_why(why, wl, 400, "keep_state: true or false");
                        r->keep_state = m->type == JSON_TRUE;
                } else if (!strcmp(m->key, "add_hosts")) {
                        if ((s = strv_from(m, API_ADD_HOSTS_MAX, 300, &r->add_hosts,
                                           &r->n_add_hosts, why, wl)))
                                return s;
                        for (size_t k = 0; k < r->n_add_hosts; k++)
                                if (!strchr(r->add_hosts[k], ':') ||
                                    !json_text_is_safe(r->add_hosts[k], strlen(r->add_hosts[k])))
                                        return rf_why(why, wl, 400, "add_hosts[%zu]: NAME:IP", k);
                } else
                        return rf_why(why, wl, 400,
                                      "unknown key \"%.64s\" (argv, agent, task, on_behalf_of, "
                                      "workspace, timeout, memory, pids, cpus, secrets, "
                                      "allow_hosts, env, publish, ro, rw, profiles, add_hosts, "
                                      "keep_state; "
                                      "exec providers and policies come from the daemon's "
                                      "configuration)",
                                      m->key);
        }
        if (r->argc == 0)
                return rf_why(why, wl, 400, "argv: required, at least the command");
        if (!r->agent[0])
                return rf_why(why, wl, 400, "agent: required");
        if (!r->workspace[0])
                return rf_why(why, wl, 400, "workspace: required");
        return 0;
}

/* GET /v1/audit's query: "follow=1" and "run=RUN" (a run id), each at most
 * once, joined by '&', in any order; nothing else (no percent-decoding) */
static int audit_query(const char *q, size_t ql, struct api_req *r, char *why, size_t wl)
{
        for (size_t i = 0; i <= ql;) {
                const char *p = q + i, *amp = memchr(p, '&', ql - i);
                size_t n = amp ? (size_t)(amp - p) : ql - i;
                if (n == 8 && !memcmp(p, "follow=1", 8) && !r->follow)
                        r->follow = true;
                else if (n > 4 && !memcmp(p, "run=", 4) && !r->run[0]) {
                        if (!run_id_ok(p + 4, n - 4))
                                return rf_why(why, wl, 400, "run=: a run id (36 characters)");
                        memcpy(r->run, p + 4, 36);
                } else
                        return rf_why(why, wl, 400,
                                      "the query is follow=1 and run=RUN, each at most once");
                i += n + 1;
        }
        return 0;
}

/* GET /v1/runs/RUN/output's query: tail=N (1..API_TAIL_MAX, digits only), once */
static int output_query(const char *q, size_t ql, struct api_req *r, char *why, size_t wl)
{
        unsigned long v = 0;
        bool ok = ql > 5 && ql <= 5 + 6 && !memcmp(q, "tail=", 5) && q[5] != '0';
        for (size_t i = 5; ok && i < ql; i++) {
                ok = q[i] >= '0' && q[i] <= '9';
                v = v * 10 + (unsigned long)(q[i] - '0');
        }
        if (!ok || v > API_TAIL_MAX)
                return rf_why(why, wl, 400, "the query is tail=N, N bytes from 1 to %d",
                              API_TAIL_MAX);
        r->tail = (unsigned)v;
        return 0;
}

static bool method_is(const char *m, size_t ml, const char *want)
{
        return ml == strlen(want) && !memcmp(m, want, ml);
}

static int route(const char *method, size_t ml, const char *t, size_t tl, const char *body,
                 size_t bl, struct api_req *r, char *why, size_t wl)
{
        struct json_node *doc = NULL;
        struct rf_error err = {0};
        const char *q = memchr(t, '?', tl);
        size_t pl = q ? (size_t)(q - t) : tl;
        int s;

        if (bl > API_BODY_MAX)
                return rf_why(why, wl, 413, "the body is larger than %d bytes", API_BODY_MAX);
        if (bl) {
                if (json_parse(body, bl, &doc, &err) < 0)
                        return rf_why(why, wl, 400, "body: %s", err.msg);
                if (doc->type != JSON_OBJECT) {
                        json_node_free(doc);
                        return rf_why(why, wl, 400, "body: a JSON object");
                }
        }
        /* split the path: /v1/<a>/<b>/<c> */
        const char *seg[5];
        size_t sl[5], ns = 0;
        for (size_t i = 0; i < pl && ns < 5;) {
                if (t[i] != '/') {
                        s = rf_why(why, wl, 404, "no such resource");
                        goto out;
                }
                size_t j = i + 1;
                while (j < pl && t[j] != '/')
                        j++;
                seg[ns] = t + i + 1;
                sl[ns++] = j - i - 1;
                i = j;
        }
        s = rf_why(why, wl, 404, "no such resource (see docs/API.md)");
        if (ns < 2 || sl[0] != 2 || memcmp(seg[0], "v1", 2))
                goto out;
        bool get = method_is(method, ml, "GET"), post = method_is(method, ml, "POST"),
             put = method_is(method, ml, "PUT"), del = method_is(method, ml, "DELETE");
#define SEG(i, lit) (sl[i] == strlen(lit) && !memcmp(seg[i], lit, sl[i]))
        if (SEG(1, "runs")) {
                if (ns == 2) {
                        r->op = get ? API_LIST_RUNS : API_START_RUN;
                        if (!get && !post) {
                                s = rf_why(why, wl, 405, "GET or POST /v1/runs");
                                goto out;
                        }
                        s = post ? start_body(doc, r, why, wl) : 0;
                        goto out;
                }
                if (!run_id_ok(seg[2], sl[2])) {
                        s = rf_why(why, wl, 404, "no run %.*s (a run id has 36 characters)",
                                   (int)(sl[2] > 40 ? 40 : sl[2]), seg[2]);
                        goto out;
                }
                memcpy(r->run, seg[2], 36);
                if (ns == 3) {
                        r->op = API_GET_RUN;
                        s = get ? 0 : rf_why(why, wl, 405, "GET /v1/runs/RUN");
                        goto out;
                }
                if (ns == 4 && SEG(3, "output")) {
                        r->op = API_RUN_OUTPUT;
                        r->tail = API_TAIL_DEFAULT;
                        s = q ? output_query(q + 1, tl - pl - 1, r, why, wl) : 0;
                        if (!s && !get)
                                s = rf_why(why, wl, 405, "GET /v1/runs/RUN/output");
                        goto out;
                }
                if (ns != 4)
                        goto out;
                r->op = SEG(3, "kill")       ? API_KILL_RUN
                        : SEG(3, "pause")    ? API_PAUSE_RUN
                        : SEG(3, "resume")   ? API_RESUME_RUN
                        : SEG(3, "revoke")   ? API_REVOKE_SECRET
                        : SEG(3, "grant")    ? API_GRANT_RUN
                        : SEG(3, "proposal") ? API_PROPOSE_RUN
                                             : _API_OP_INVALID;
                if (r->op == _API_OP_INVALID)
                        goto out;
                if (!post) {
                        s = rf_why(why, wl, 405, "POST /v1/runs/RUN/%.*s", (int)sl[3], seg[3]);
                        goto out;
                }
                s = r->op == API_GRANT_RUN ? grant_body(doc, r, why, wl)
                    : r->op == API_PROPOSE_RUN
                            ? proposal_body(doc, r, why, wl)
                            : small_body(doc, r, false, r->op == API_REVOKE_SECRET, why, wl);
                goto out;
        }
        if (SEG(1, "agents") && ns == 4) {
                if (!agent_ok(seg[2], sl[2])) {
                        s = rf_why(why, wl, 400, "an agent in a URL is 1-256 of A-Z a-z 0-9 . _ -");
                        goto out;
                }
                memcpy(r->agent, seg[2], sl[2]);
                if (SEG(3, "kill")) {
                        r->op = API_KILL_AGENT;
                        s = post ? small_body(doc, r, true, false, why, wl)
                                 : rf_why(why, wl, 405, "POST /v1/agents/AGENT/kill");
                } else if (SEG(3, "block")) {
                        r->op = del ? API_UNBLOCK_AGENT : API_BLOCK_AGENT;
                        s = put || del
                                    ? small_body(doc, r, false, false, why, wl)
                                    : rf_why(why, wl, 405, "PUT or DELETE /v1/agents/AGENT/block");
                }
                goto out;
        }
        if (SEG(1, "daemon") && ns == 2 && !q) {
                r->op = API_DAEMON_STATUS;
                s = get ? 0 : rf_why(why, wl, 405, "GET /v1/daemon");
                goto out;
        }
        if (SEG(1, "audit") && ns == 3 && SEG(2, "verify") && !q) {
                r->op = API_AUDIT_VERIFY;
                s = get ? 0 : rf_why(why, wl, 405, "GET /v1/audit/verify");
                goto out;
        }
        if (SEG(1, "audit") && ns == 2) {
                r->op = API_AUDIT;
                s = q ? audit_query(q + 1, tl - pl - 1, r, why, wl) : 0;
                if (!s)
                        s = get ? 0 : rf_why(why, wl, 405, "GET /v1/audit");
        }
#undef SEG
out:
        json_node_free(doc);
        return s;
}

int api_route(const char *method, size_t mlen, const char *target, size_t tlen, const char *body,
              size_t blen, struct api_req *req, char *why, size_t why_len)
{
        memset(req, 0, sizeof *req);
        req->op = _API_OP_INVALID;
        int s = route(method, mlen, target, tlen, body, blen, req, why, why_len);
        if (s)
                api_req_clear(req);
        return s;
}
