/*
 * policy-json.c — policy_to_json(): the canonical form of a policy.
 *
 * The output is hashed for attribution (the audit record says which exact
 * policy a run had), so it must be a function of the policy's meaning only:
 * keys in bytewise order, no whitespace, one spelling per value, unset fields
 * omitted. It is written by hand with the small writer in shared/json.c
 * rather than jansson, so the pure core links without jansson and the format
 * is spelled out here:
 *
 *   strings   RFC 8785 escapes (\" \\ \b \f \n \r \t, \u00xx for other
 *             controls), everything else raw UTF-8
 *   sizes     "N", "NK", "NM" or "NG" in the largest exact unit
 *   timeout   "Nms", "Ns", "Nm" or "Nh" in the largest exact unit
 *   cpus      a decimal number without trailing zeros: 1.5, 2, 0.25
 *   paths     in list order (order is meaningful to the sandbox)
 *   protected in list order, a directory with its trailing slash ("a/b/");
 *             written whenever the key was set, so an explicit [] (which
 *             turns the sandbox's default protection off) survives
 *   env       sorted by name
 *
 * The output is also a valid version-1 policy, and parsing it yields an
 * equal struct (tests/unit/test_policy.c and the fuzz target check this).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy.h"
#include "shared/json.h"

/* Writes "key": — with a leading comma unless it is the first member of its object. */
static void put_key(struct json_buf *b, bool *first, const char *key)
{
        if (!*first)
                json_buf_append(b, ",", 1);
        *first = false;
        json_buf_append_string(b, key, strlen(key));
        json_buf_append(b, ":", 1);
}

static void put_string_member(struct json_buf *b, bool *first, const char *key, const char *v)
{
        if (!v)
                return;
        put_key(b, first, key);
        json_buf_append_string(b, v, strlen(v));
}

static void put_size_member(struct json_buf *b, bool *first, const char *key, uint64_t v)
{
        static const struct {
                unsigned shift;
                char suffix;
        } units[] = {{30, 'G'}, {20, 'M'}, {10, 'K'}};
        char tmp[32];
        size_t i;

        if (!v)
                return;
        for (i = 0; i < ARRAY_SIZE(units); i++)
                if ((v & ((1ULL << units[i].shift) - 1)) == 0)
                        break;
        if (i < ARRAY_SIZE(units))
                snprintf(tmp, sizeof tmp, "%" PRIu64 "%c", v >> units[i].shift, units[i].suffix);
        else
                snprintf(tmp, sizeof tmp, "%" PRIu64, v);
        put_key(b, first, key);
        json_buf_append_string(b, tmp, strlen(tmp));
}

static void put_duration_member(struct json_buf *b, bool *first, const char *key, uint64_t ms)
{
        static const struct {
                uint64_t ms;
                const char *unit;
        } units[] = {{3600000, "h"}, {60000, "m"}, {1000, "s"}, {1, "ms"}};
        char tmp[32];

        if (!ms)
                return;
        for (size_t i = 0; i < ARRAY_SIZE(units); i++)
                if (ms % units[i].ms == 0) {
                        snprintf(tmp, sizeof tmp, "%" PRIu64 "%s", ms / units[i].ms, units[i].unit);
                        break;
                }
        put_key(b, first, key);
        json_buf_append_string(b, tmp, strlen(tmp));
}

static void put_uint_member(struct json_buf *b, bool *first, const char *key, uint64_t v)
{
        if (!v)
                return;
        put_key(b, first, key);
        json_buf_append_uint(b, v);
}

static void put_cpus_member(struct json_buf *b, bool *first, const char *key, uint64_t milli)
{
        char tmp[40];
        int n;

        if (!milli)
                return;
        n = snprintf(tmp, sizeof tmp, "%" PRIu64, milli / 1000);
        if (milli % 1000) {
                snprintf(tmp + n, sizeof tmp - (size_t)n, ".%03u", (unsigned)(milli % 1000));
                /* trim trailing zeros of the fraction: 1.500 -> 1.5 */
                size_t len = strlen(tmp);
                while (tmp[len - 1] == '0')
                        tmp[--len] = '\0';
        }
        put_key(b, first, key);
        json_buf_append(b, tmp, strlen(tmp));
}

static void put_paths_member(struct json_buf *b, bool *first, const char *key, char *const *l,
                             size_t n)
{
        if (n == 0)
                return;
        put_key(b, first, key);
        json_buf_append_string_array(b, l, n);
}

/* network.hosts: {"name":"address"}, in the order given (one per name). */
static void put_hosts_member(struct json_buf *b, bool *first, const struct rf_policy *p)
{
        if (p->n_net_hosts == 0)
                return;
        put_key(b, first, "hosts");
        json_buf_append(b, "{", 1);
        for (size_t i = 0; i < p->n_net_hosts; i++) {
                const char *e = p->net_hosts[i], *eq = strchr(e, '=');
                if (!eq)
                        continue;
                if (i)
                        json_buf_append(b, ",", 1);
                json_buf_append_string(b, e, (size_t)(eq - e));
                json_buf_append(b, ":", 1);
                json_buf_append_string(b, eq + 1, strlen(eq + 1));
        }
        json_buf_append(b, "}", 1);
}

static void put_ports_member(struct json_buf *b, bool *first, const char *key, const uint16_t *v,
                             size_t n)
{
        if (n == 0)
                return;
        put_key(b, first, key);
        json_buf_append(b, "[", 1);
        for (size_t i = 0; i < n; i++) {
                if (i)
                        json_buf_append(b, ",", 1);
                json_buf_append_uint(b, v[i]);
        }
        json_buf_append(b, "]", 1);
}

static void put_protected_member(struct json_buf *b, bool *first, const struct rf_policy *p)
{
        if (!p->protected_set && p->n_protected == 0)
                return;
        put_key(b, first, "protected");
        json_buf_append(b, "[", 1);
        for (size_t i = 0; i < p->n_protected; i++) {
                const char *s = p->protected[i];
                size_t len = strlen(s);
                /* write "path/" for a directory: the string plus a slash inside the quotes */
                _cleanup_free_ char *tmp = NULL;
                if (p->protected_dir[i]) {
                        tmp = malloc(len + 2);
                        if (!tmp) {
                                if (!b->error)
                                        b->error = -ENOMEM;
                                return;
                        }
                        memcpy(tmp, s, len);
                        tmp[len++] = '/';
                        tmp[len] = '\0';
                        s = tmp;
                }
                if (i)
                        json_buf_append(b, ",", 1);
                json_buf_append_string(b, s, len);
        }
        json_buf_append(b, "]", 1);
}

static int cmp_env(const void *a, const void *b, void *names)
{
        char **n = names;
        return strcmp(n[*(const size_t *)a], n[*(const size_t *)b]);
}

static int put_env_member(struct json_buf *b, bool *first, const struct rf_policy *p)
{
        if (p->n_env == 0)
                return 0;
        _cleanup_free_ size_t *order = calloc(p->n_env, sizeof *order);
        if (!order)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_env; i++)
                order[i] = i;
        qsort_r(order, p->n_env, sizeof *order, cmp_env, p->env_names);

        put_key(b, first, "env");
        json_buf_append(b, "{", 1);
        bool inner = true;
        for (size_t i = 0; i < p->n_env; i++)
                put_string_member(b, &inner, p->env_names[order[i]], p->env_values[order[i]]);
        json_buf_append(b, "}", 1);
        return 0;
}

/*
 * A section is written into its own buffer first so that an empty section
 * can be left out entirely.
 */
static void put_section(struct json_buf *b, bool *first, const char *key, struct json_buf *sec)
{
        if (sec->error) {
                if (!b->error)
                        b->error = sec->error;
        } else if (sec->len > 0) {
                put_key(b, first, key);
                json_buf_append(b, "{", 1);
                json_buf_append(b, sec->data, sec->len);
                json_buf_append(b, "}", 1);
        }
        json_buf_done(sec);
}

int policy_to_json(const struct rf_policy *p, char **ret)
{
        struct json_buf b = {0}, sec = {0};
        bool first = true, f;
        int r;

        json_buf_append(&b, "{", 1);

        /* keys in bytewise order: audit, env, filesystem, identity, limits, network,
         * version, workspace */
        f = true;
        put_size_member(&sec, &f, "event_bytes", p->event_bytes);
        put_uint_member(&sec, &f, "event_burst", p->event_burst);
        put_uint_member(&sec, &f, "event_rate", p->event_rate);
        put_duration_member(&sec, &f, "loop_window", p->loop_window_ms);
        put_uint_member(&sec, &f, "max_chain_depth", p->max_chain_depth);
        put_uint_member(&sec, &f, "max_runs_per_window", p->max_runs_per_window);
        put_section(&b, &first, "audit", &sec);

        r = put_env_member(&b, &first, p);
        if (r < 0) {
                json_buf_done(&b);
                return r;
        }

        f = true;
        put_size_member(&sec, &f, "home_size", p->home_size);
        put_protected_member(&sec, &f, p);
        put_paths_member(&sec, &f, "read_only", p->read_only, p->n_read_only);
        put_paths_member(&sec, &f, "read_write", p->read_write, p->n_read_write);
        put_string_member(&sec, &f, "rootfs", p->rootfs);
        put_size_member(&sec, &f, "shm_size", p->shm_size);
        put_size_member(&sec, &f, "tmp_size", p->tmp_size);
        put_section(&b, &first, "filesystem", &sec);

        f = true;
        put_string_member(&sec, &f, "agent", p->agent);
        put_string_member(&sec, &f, "audience", p->audience);
        put_string_member(&sec, &f, "on_behalf_of", p->on_behalf_of);
        put_string_member(&sec, &f, "project", p->project);
        put_string_member(&sec, &f, "task", p->task);
        put_string_member(&sec, &f, "triggered_by", p->triggered_by);
        put_section(&b, &first, "identity", &sec);

        f = true;
        put_cpus_member(&sec, &f, "cpus", p->cpus_milli);
        put_size_member(&sec, &f, "egress_bytes", p->egress_bytes);
        put_uint_member(&sec, &f, "egress_connections", p->egress_connections);
        put_size_member(&sec, &f, "memory", p->memory);
        put_uint_member(&sec, &f, "nofile", p->nofile);
        put_uint_member(&sec, &f, "pids", p->pids);
        put_duration_member(&sec, &f, "timeout", p->timeout_ms);
        put_section(&b, &first, "limits", &sec);

        f = true;
        put_paths_member(&sec, &f, "allow", p->net_allow, p->n_net_allow);
        if (p->net_capture != POLICY_CAPTURE_UNSET) /* unset: the default, transparent */
                put_string_member(&sec, &f, "capture", policy_capture_name(p->net_capture));
        put_paths_member(&sec, &f, "deny", p->net_deny, p->n_net_deny);
        put_hosts_member(&sec, &f, p);
        put_paths_member(&sec, &f, "http", p->net_http, p->n_net_http);
        if (p->net_on_storm != POLICY_STORM_UNSET) /* unset: the default, notice */
                put_string_member(&sec, &f, "on_refusal_storm", policy_storm_name(p->net_on_storm));
        put_ports_member(&sec, &f, "plain_ports", p->net_plain_ports, p->n_net_plain_ports);
        if (p->n_net_publish) {
                put_key(&sec, &f, "publish");
                json_buf_append(&sec, "[", 1);
                for (size_t i = 0; i < p->n_net_publish; i++) {
                        char t[POLICY_PUBLISH_TEXT_MAX];
                        policy_publish_text(&p->net_publish[i], t);
                        if (i)
                                json_buf_append(&sec, ",", 1);
                        json_buf_append_string(&sec, t, strlen(t));
                }
                json_buf_append(&sec, "]", 1);
        }
        if (p->net_upstream_ca)
                put_string_member(&sec, &f, "upstream_ca", p->net_upstream_ca);
        put_section(&b, &first, "network", &sec);

        if (p->n_secrets) {
                /* each binding is already canonical JSON */
                put_key(&b, &first, "secrets");
                json_buf_append(&b, "[", 1);
                for (size_t i = 0; i < p->n_secrets; i++) {
                        if (i)
                                json_buf_append(&b, ",", 1);
                        json_buf_append(&b, p->secrets[i], strlen(p->secrets[i]));
                }
                json_buf_append(&b, "]", 1);
        }

        put_key(&b, &first, "version");
        json_buf_append_uint(&b, POLICY_VERSION);
        put_string_member(&b, &first, "workspace", p->workspace);
        json_buf_append(&b, "}", 1);

        if (b.error) {
                r = b.error;
                json_buf_done(&b);
                return r;
        }
        *ret = b.data;
        return 0;
}
