/*
 * policy.c — lifetime, validation helpers, CLI setters, merge and defaults
 * of struct rf_policy (see policy.h). Parsing is in policy-parse.c, the
 * canonical writer in policy-json.c, sizes/durations in units.c.
 *
 * Everything here is pure except policy_load_file(), the one function that
 * touches the file system; it only reads bytes and hands them to the pure
 * parser.
 *
 * Failure atomicity: setters validate fully and allocate before they modify
 * anything; policy_merge() works on a copy and swaps it in only on success.
 * So a failed call never leaves a half-updated policy behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "policy/binding.h"
#include "policy/addr.h"
#include "policy/httprule.h"
#include "policy/rules.h"
#include "policy/policy-internal.h"
#include "policy/policy.h"
#include "shared/json.h"

static void strv_free(char **l, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(l[i]);
        free(l);
}

struct rf_policy *policy_new(void)
{
        struct rf_policy *p = calloc(1, sizeof *p);

        if (p)
                p->version = POLICY_VERSION;
        return p;
}

struct rf_policy *policy_free(struct rf_policy *p)
{
        if (!p)
                return NULL;
        free(p->agent);
        free(p->on_behalf_of);
        free(p->task);
        free(p->project);
        free(p->triggered_by);
        free(p->audience);
        free(p->workspace);
        free(p->rootfs);
        strv_free(p->read_only, p->n_read_only);
        strv_free(p->read_write, p->n_read_write);
        strv_free(p->net_allow, p->n_net_allow);
        strv_free(p->net_deny, p->n_net_deny);
        strv_free(p->net_hosts, p->n_net_hosts);
        strv_free(p->net_http, p->n_net_http);
        strv_free(p->protected, p->n_protected);
        free(p->protected_dir);
        free(p->net_upstream_ca);
        strv_free(p->env_names, p->n_env);
        strv_free(p->env_values, p->n_env);
        for (size_t i = 0; p->bindings && i < p->n_secrets; i++)
                secret_binding_clear(&p->bindings[i]);
        free(p->bindings);
        strv_free(p->secrets, p->n_secrets);
        free(p->allow_rules);
        free(p->deny_rules);
        free(p->http_rules);
        free(p);
        return NULL;
}

/* ------------------------------------------------------------------------ */
/* Validation rules                                                          */

const char *policy_ident_problem(const char *s, size_t len, size_t max)
{
        if (len == 0)
                return "must not be empty";
        if (len > max)
                return "is too long";
        if (!json_utf8_valid(s, len, NULL))
                return "is not valid UTF-8";
        if (!json_text_is_safe(s, len))
                return "contains a control, invisible or bidirectional character";
        return NULL;
}

bool policy_profile_name_valid(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n > POLICY_PROFILE_NAME_MAX || s[0] == '-')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
                      s[i] == '_'))
                        return false;
        return true;
}

const char *policy_env_name_problem(const char *name)
{
        if (!env_name_valid(name))
                return "invalid environment variable name (expected [A-Za-z_][A-Za-z0-9_]*, at "
                       "most 128 bytes)";
        if (env_name_reserved(name))
                return "names starting with " POLICY_ENV_RESERVED_PREFIX
                       " are reserved for ringfence";
        return NULL;
}

const char *policy_env_value_problem(const char *s, size_t len)
{
        if (len > POLICY_STRING_MAX)
                return "value is too long";
        if (!json_utf8_valid(s, len, NULL))
                return "value is not valid UTF-8";
        return NULL;
}

bool policy_strv_contains(char *const *list, size_t n, const char *s)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(list[i], s) == 0)
                        return true;
        return false;
}

const char *policy_find_conflict(const struct rf_policy *p)
{
        for (size_t i = 0; i < p->n_read_write; i++)
                if (policy_strv_contains(p->read_only, p->n_read_only, p->read_write[i]))
                        return p->read_write[i];
        return NULL;
}

/*
 * The one path checker behind policy_path_normalize() (absolute host paths)
 * and policy_protected_normalize() (paths relative to the workspace): the
 * same character, length and component rules for both, so the two kinds
 * cannot drift apart. Only the anchoring differs.
 */
static int path_normalize(const char *path, size_t len, bool relative, char **ret, bool *ret_dir,
                          const char **why)
{
        size_t bad;

        if (len == 0) {
                *why = relative ? "is empty" : "is not an absolute path";
                return -EINVAL;
        }
        if (relative && path[0] == '/') {
                *why = "is an absolute path (protected paths are relative to the workspace)";
                return -EINVAL;
        }
        if (!relative && path[0] != '/') {
                *why = "is not an absolute path";
                return -EINVAL;
        }
        if (len > POLICY_PATH_MAX) {
                *why = "is too long";
                return -EINVAL;
        }
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)path[i];
                if (c < 0x20 || c == 0x7F) {
                        *why = c == 0 ? "contains a NUL byte" : "contains a control character";
                        return -EINVAL;
                }
        }
        if (!json_utf8_valid(path, len, &bad)) {
                *why = "is not valid UTF-8";
                return -EINVAL;
        }

        /* The output is never longer than the input. */
        char *out = malloc(len + 1);
        if (!out)
                return -ENOMEM;
        size_t o = 0, i = 0;
        while (i < len) {
                while (i < len && path[i] == '/')
                        i++;
                size_t start = i;
                while (i < len && path[i] != '/')
                        i++;
                size_t clen = i - start;
                if (clen == 0)
                        break;
                if ((clen == 1 && path[start] == '.') ||
                    (clen == 2 && path[start] == '.' && path[start + 1] == '.')) {
                        free(out);
                        *why = "must not contain \".\" or \"..\" components";
                        return -EINVAL;
                }
                if (!relative || o > 0)
                        out[o++] = '/';
                memcpy(out + o, path + start, clen);
                o += clen;
        }
        /* a relative path starts with a component (checked above), so only "/" gets here */
        if (o == 0)
                out[o++] = '/';
        out[o] = '\0';
        if (ret_dir)
                *ret_dir = path[len - 1] == '/';
        *ret = out;
        return 0;
}

int policy_path_normalize(const char *path, size_t len, char **ret, const char **why)
{
        const char *dummy;

        return path_normalize(path, len, false, ret, NULL, why ? why : &dummy);
}

int policy_protected_normalize(const char *path, size_t len, char **ret, bool *ret_dir,
                               const char **why)
{
        const char *dummy;

        return path_normalize(path, len, true, ret, ret_dir, why ? why : &dummy);
}

/* ------------------------------------------------------------------------ */
/* Lists and env                                                             */

int policy_list_take(char ***list, size_t *n, char *path)
{
        if (policy_strv_contains(*list, *n, path)) {
                free(path);
                return 0;
        }
        if (*n >= POLICY_PATHS_MAX)
                return -E2BIG;
        char **l = realloc(*list, (*n + 1) * sizeof *l);
        if (!l)
                return -ENOMEM;
        l[(*n)++] = path;
        *list = l;
        return 1;
}

int policy_protected_take(struct rf_policy *p, char *path, bool dir)
{
        for (size_t i = 0; i < p->n_protected; i++)
                if (strcmp(p->protected[i], path) == 0) {
                        p->protected_dir[i] |= dir; /* a directory flag wins */
                        free(path);
                        return 0;
                }
        if (p->n_protected >= POLICY_PATHS_MAX)
                return -E2BIG;
        /* grow both arrays before changing n_protected, so a failure leaves p consistent */
        char **l = realloc(p->protected, (p->n_protected + 1) * sizeof *l);
        if (!l)
                return -ENOMEM;
        p->protected = l;
        bool *d = realloc(p->protected_dir, (p->n_protected + 1) * sizeof *d);
        if (!d)
                return -ENOMEM;
        p->protected_dir = d;
        p->protected[p->n_protected] = path;
        p->protected_dir[p->n_protected] = dir;
        p->n_protected++;
        return 1;
}

int policy_env_put(struct rf_policy *p, const char *name, const char *value)
{
        _cleanup_free_ char *v = strdup(value);
        if (!v)
                return -ENOMEM;

        for (size_t i = 0; i < p->n_env; i++)
                if (strcmp(p->env_names[i], name) == 0) {
                        free(p->env_values[i]);
                        p->env_values[i] = TAKE_PTR(v);
                        return 0;
                }
        if (p->n_env >= POLICY_ENV_MAX)
                return -E2BIG;

        _cleanup_free_ char *k = strdup(name);
        if (!k)
                return -ENOMEM;
        /* grow both arrays before changing n_env, so a failure leaves p consistent */
        char **names = realloc(p->env_names, (p->n_env + 1) * sizeof *names);
        if (!names)
                return -ENOMEM;
        p->env_names = names;
        char **values = realloc(p->env_values, (p->n_env + 1) * sizeof *values);
        if (!values)
                return -ENOMEM;
        p->env_values = values;
        p->env_names[p->n_env] = TAKE_PTR(k);
        p->env_values[p->n_env] = TAKE_PTR(v);
        p->n_env++;
        return 0;
}

/* ------------------------------------------------------------------------ */
/* Setters for CLI flags                                                     */

int policy_set_string(char **field, const char *value, size_t max, struct rf_error *err)
{
        if (!value)
                return rf_error_set(err, -EINVAL, "missing value");
        const char *why = policy_ident_problem(value, strlen(value), max);
        if (why)
                return rf_error_set(err, -EINVAL, "%s", why);
        char *v = strdup(value);
        if (!v)
                return rf_error_set(err, -ENOMEM, "out of memory");
        free(*field);
        *field = v;
        return 0;
}

int policy_set_path(char **field, const char *path, struct rf_error *err)
{
        const char *why;
        char *v;
        int r;

        if (!path)
                return rf_error_set(err, -EINVAL, "missing value");
        r = policy_path_normalize(path, strlen(path), &v, &why);
        if (r == -ENOMEM)
                return rf_error_set(err, r, "out of memory");
        if (r < 0)
                return rf_error_set(err, r, "path %s", why);
        free(*field);
        *field = v;
        return 0;
}

int policy_add_path(char ***list, size_t *n, const char *path, struct rf_error *err)
{
        const char *why;
        char *v;
        int r;

        if (!path)
                return rf_error_set(err, -EINVAL, "missing value");
        r = policy_path_normalize(path, strlen(path), &v, &why);
        if (r == -ENOMEM)
                return rf_error_set(err, r, "out of memory");
        if (r < 0)
                return rf_error_set(err, r, "path %s", why);
        r = policy_list_take(list, n, v);
        if (r == -E2BIG) {
                free(v);
                return rf_error_set(err, r, "more than %d paths", POLICY_PATHS_MAX);
        }
        if (r < 0) {
                free(v);
                return rf_error_set(err, r, "out of memory");
        }
        return 0;
}

int policy_add_protected(struct rf_policy *p, const char *path, struct rf_error *err)
{
        const char *why;
        bool dir;
        char *v;
        int r;

        if (!path)
                return rf_error_set(err, -EINVAL, "missing value");
        r = policy_protected_normalize(path, strlen(path), &v, &dir, &why);
        if (r == -ENOMEM)
                return rf_error_set(err, r, "out of memory");
        if (r < 0)
                return rf_error_set(err, r, "path %s", why);
        r = policy_protected_take(p, v, dir);
        if (r == -E2BIG) {
                free(v);
                return rf_error_set(err, r, "more than %d paths", POLICY_PATHS_MAX);
        }
        if (r < 0) {
                free(v);
                return rf_error_set(err, r, "out of memory");
        }
        p->protected_set = true;
        return 0;
}

int policy_add_env(struct rf_policy *p, const char *name, const char *value, struct rf_error *err)
{
        const char *why;
        int r;

        if (!name || !value)
                return rf_error_set(err, -EINVAL, "missing value");
        why = policy_env_name_problem(name);
        if (!why)
                why = policy_env_value_problem(value, strlen(value));
        if (why)
                return rf_error_set(err, -EINVAL, "%s", why);
        r = policy_env_put(p, name, value);
        if (r == -E2BIG)
                return rf_error_set(err, r, "more than %d environment variables", POLICY_ENV_MAX);
        if (r < 0)
                return rf_error_set(err, r, "out of memory");
        return 0;
}

enum limit_kind {
        LIMIT_SIZE,
        LIMIT_DURATION,
        LIMIT_COUNT,
        LIMIT_CPUS,
};

static const struct {
        const char *key;
        enum limit_kind kind;
        size_t offset;
        uint64_t max; /* 0 = only overflow bounds it */
} limit_keys[] = {
        {"limits.timeout", LIMIT_DURATION, offsetof(struct rf_policy, timeout_ms), 0},
        {"limits.memory", LIMIT_SIZE, offsetof(struct rf_policy, memory), 0},
        {"limits.pids", LIMIT_COUNT, offsetof(struct rf_policy, pids), POLICY_PIDS_MAX},
        {"limits.cpus", LIMIT_CPUS, offsetof(struct rf_policy, cpus_milli), POLICY_CPUS_MILLI_MAX},
        {"limits.nofile", LIMIT_COUNT, offsetof(struct rf_policy, nofile), POLICY_NOFILE_MAX},
        {"limits.egress_bytes", LIMIT_SIZE, offsetof(struct rf_policy, egress_bytes), 0},
        {"limits.egress_connections", LIMIT_COUNT, offsetof(struct rf_policy, egress_connections),
         POLICY_EGRESS_CONNS_MAX},
        {"audit.max_chain_depth", LIMIT_COUNT, offsetof(struct rf_policy, max_chain_depth),
         POLICY_CHAIN_DEPTH_MAX},
        {"audit.max_runs_per_window", LIMIT_COUNT, offsetof(struct rf_policy, max_runs_per_window),
         POLICY_RUNS_WINDOW_MAX},
        {"audit.loop_window", LIMIT_DURATION, offsetof(struct rf_policy, loop_window_ms), 0},
        {"audit.event_rate", LIMIT_COUNT, offsetof(struct rf_policy, event_rate),
         POLICY_EVENT_RATE_MAX},
        {"audit.event_burst", LIMIT_COUNT, offsetof(struct rf_policy, event_burst),
         POLICY_EVENT_RATE_MAX},
        {"audit.event_bytes", LIMIT_SIZE, offsetof(struct rf_policy, event_bytes), 0},
        {"filesystem.tmp_size", LIMIT_SIZE, offsetof(struct rf_policy, tmp_size), 0},
        {"filesystem.home_size", LIMIT_SIZE, offsetof(struct rf_policy, home_size), 0},
        {"filesystem.shm_size", LIMIT_SIZE, offsetof(struct rf_policy, shm_size), 0},
};

/* Plain decimal digits, nothing else. */
static int parse_count(const char *s, uint64_t *ret)
{
        uint64_t v = 0;

        if (!*s)
                return -EINVAL;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return -EINVAL;
                if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t)(*s - '0');
        }
        *ret = v;
        return 0;
}

int policy_set_limit(struct rf_policy *p, const char *key, const char *value, struct rf_error *err)
{
        char shown[96] = "";
        uint64_t v;
        int r;

        if (!key || !value)
                return rf_error_set(err, -EINVAL, "missing value");
        json_escape_for_message(shown, sizeof shown, value, strnlen(value, 64));
        for (size_t i = 0; i < ARRAY_SIZE(limit_keys); i++) {
                if (strcmp(limit_keys[i].key, key) != 0)
                        continue;
                switch (limit_keys[i].kind) {
                case LIMIT_SIZE:
                        r = parse_size(value, &v);
                        if (r < 0)
                                return rf_error_set(err, -EINVAL,
                                                    r == -ERANGE
                                                            ? "size \"%s\" is too large"
                                                            : "invalid size \"%s\" (expected "
                                                              "N, NK, NM or NG, e.g. \"512M\")",
                                                    shown);
                        break;
                case LIMIT_DURATION:
                        r = parse_duration(value, &v);
                        if (r < 0)
                                return rf_error_set(
                                        err, -EINVAL,
                                        r == -ERANGE ? "duration \"%s\" is too large"
                                                     : "invalid duration \"%s\" (expected N "
                                                       "followed by ms, s, m or h, e.g. \"30m\")",
                                        shown);
                        break;
                case LIMIT_COUNT:
                        r = parse_count(value, &v);
                        if (r == -EINVAL)
                                return rf_error_set(err, r, "expected an integer, got \"%s\"",
                                                    shown);
                        if (r < 0 || v == 0 || v > limit_keys[i].max)
                                return rf_error_set(err, -EINVAL, "must be between 1 and %" PRIu64,
                                                    limit_keys[i].max);
                        break;
                case LIMIT_CPUS:
                        r = parse_cpus(value, &v);
                        if (r == -EINVAL)
                                return rf_error_set(err, r,
                                                    "invalid CPU count \"%s\" (expected a "
                                                    "number with at most 3 decimals, e.g. 1.5)",
                                                    shown);
                        if (r < 0 || v == 0 || v > limit_keys[i].max)
                                return rf_error_set(err, -EINVAL,
                                                    "must be greater than 0 and at most %d",
                                                    POLICY_CPUS_MILLI_MAX / 1000);
                        break;
                default:
                        return rf_error_set(err, -EINVAL, "internal error");
                }
                if (v == 0)
                        return rf_error_set(err, -EINVAL, "must be greater than zero");
                *(uint64_t *)((char *)p + limit_keys[i].offset) = v;
                return 0;
        }
        return rf_error_set(err, -EINVAL, "unknown setting");
}

/* ------------------------------------------------------------------------ */
/* Copy, merge, defaults                                                     */

static int strdup_opt(const char *s, char **ret)
{
        *ret = NULL;
        if (s && !(*ret = strdup(s)))
                return -ENOMEM;
        return 0;
}

static int strv_dup(char *const *l, size_t n, char ***ret)
{
        *ret = NULL;
        if (n == 0)
                return 0;
        char **c = calloc(n, sizeof *c);
        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (!(c[i] = strdup(l[i]))) {
                        strv_free(c, i);
                        return -ENOMEM;
                }
        *ret = c;
        return 0;
}

int policy_dup(const struct rf_policy *p, struct rf_policy **ret)
{
        _cleanup_policy_ struct rf_policy *c = policy_new();

        if (!c)
                return -ENOMEM;
        /* copy the scalars, then replace every pointer with an owned copy */
        *c = *p;
        c->agent = c->on_behalf_of = c->task = c->project = c->triggered_by = c->audience = NULL;
        c->workspace = c->net_upstream_ca = c->rootfs = NULL;
        c->read_only = c->read_write = c->protected = c->env_names = c->env_values = NULL;
        c->protected_dir = NULL;
        c->n_read_only = c->n_read_write = c->n_protected = c->n_env = 0;
        c->net_allow = c->net_deny = c->net_hosts = c->net_http = NULL;
        c->n_net_allow = c->n_net_deny = c->n_net_hosts = c->n_net_http = 0;
        c->secrets = NULL;
        c->bindings = NULL;
        c->n_secrets = 0;
        c->allow_rules = c->deny_rules = NULL; /* the copy compiles its own */
        c->http_rules = NULL;
        c->compiled = false;

        if (strdup_opt(p->agent, &c->agent) < 0 ||
            strdup_opt(p->on_behalf_of, &c->on_behalf_of) < 0 ||
            strdup_opt(p->task, &c->task) < 0 || strdup_opt(p->project, &c->project) < 0 ||
            strdup_opt(p->triggered_by, &c->triggered_by) < 0 ||
            strdup_opt(p->audience, &c->audience) < 0 ||
            strdup_opt(p->workspace, &c->workspace) < 0 || strdup_opt(p->rootfs, &c->rootfs) < 0 ||
            strdup_opt(p->net_upstream_ca, &c->net_upstream_ca) < 0)
                return -ENOMEM;
        if (strv_dup(p->read_only, p->n_read_only, &c->read_only) < 0)
                return -ENOMEM;
        c->n_read_only = p->n_read_only;
        if (strv_dup(p->read_write, p->n_read_write, &c->read_write) < 0)
                return -ENOMEM;
        c->n_read_write = p->n_read_write;
        if (strv_dup(p->net_allow, p->n_net_allow, &c->net_allow) < 0)
                return -ENOMEM;
        c->n_net_allow = p->n_net_allow;
        if (strv_dup(p->net_deny, p->n_net_deny, &c->net_deny) < 0)
                return -ENOMEM;
        c->n_net_deny = p->n_net_deny;
        if (strv_dup(p->net_hosts, p->n_net_hosts, &c->net_hosts) < 0)
                return -ENOMEM;
        c->n_net_hosts = p->n_net_hosts;
        if (strv_dup(p->net_http, p->n_net_http, &c->net_http) < 0)
                return -ENOMEM;
        c->n_net_http = p->n_net_http;
        if (strv_dup(p->secrets, p->n_secrets, &c->secrets) < 0)
                return -ENOMEM;
        if (p->n_secrets && !(c->bindings = calloc(p->n_secrets, sizeof *c->bindings)))
                return -ENOMEM;
        c->n_secrets = p->n_secrets; /* policy_free clears the zeroed rest */
        for (size_t i = 0; i < p->n_secrets; i++)
                if (secret_binding_copy(&c->bindings[i], &p->bindings[i]) < 0)
                        return -ENOMEM;
        if (p->n_protected > 0) {
                c->protected_dir = malloc(p->n_protected * sizeof *c->protected_dir);
                if (!c->protected_dir)
                        return -ENOMEM;
                memcpy(c->protected_dir, p->protected_dir,
                       p->n_protected * sizeof *c->protected_dir);
                if (strv_dup(p->protected, p->n_protected, &c->protected) < 0)
                        return -ENOMEM;
                c->n_protected = p->n_protected;
        }
        if (strv_dup(p->env_names, p->n_env, &c->env_names) < 0)
                return -ENOMEM;
        /* names and values share n_env: on failure free the names by hand */
        if (strv_dup(p->env_values, p->n_env, &c->env_values) < 0) {
                strv_free(c->env_names, p->n_env);
                c->env_names = NULL;
                return -ENOMEM;
        }
        c->n_env = p->n_env;
        *ret = TAKE_PTR(c);
        return 0;
}

static int merge_string(char **dst, const char *src)
{
        if (!src)
                return 0;
        char *v = strdup(src);
        if (!v)
                return -ENOMEM;
        free(*dst);
        *dst = v;
        return 0;
}

static void merge_u64(uint64_t *dst, uint64_t src)
{
        if (src)
                *dst = src;
}

static int merge_list(char ***dst, size_t *n_dst, char *const *src, size_t n_src,
                      const char *keypath, struct rf_error *err)
{
        for (size_t i = 0; i < n_src; i++) {
                char *v = strdup(src[i]);
                if (!v)
                        return rf_error_set(err, -ENOMEM, "out of memory");
                int r = policy_list_take(dst, n_dst, v);
                if (r < 0) {
                        free(v);
                        if (r == -E2BIG) {
                                if (err)
                                        snprintf(err->keypath, sizeof err->keypath, "%s", keypath);
                                return rf_error_set(err, r, "more than %d paths", POLICY_PATHS_MAX);
                        }
                        return rf_error_set(err, r, "out of memory");
                }
        }
        return 0;
}

static int merge_rules_max(char ***dst, size_t *n_dst, char *const *src, size_t n_src,
                           const char *keypath, size_t max, struct rf_error *err)
{
        for (size_t i = 0; i < n_src; i++) {
                if (policy_strv_contains(*dst, *n_dst, src[i]))
                        continue;
                if (*n_dst >= max) {
                        if (err)
                                snprintf(err->keypath, sizeof err->keypath, "%s", keypath);
                        return rf_error_set(err, -E2BIG, "more than %zu rules", max);
                }
                char *v = strdup(src[i]);
                if (!v || policy_list_take(dst, n_dst, v) < 0) {
                        free(v);
                        return rf_error_set(err, -ENOMEM, "out of memory");
                }
        }
        return 0;
}

static int merge_rules(char ***dst, size_t *n_dst, char *const *src, size_t n_src,
                       const char *keypath, struct rf_error *err)
{
        return merge_rules_max(dst, n_dst, src, n_src, keypath, POLICY_NET_RULES_MAX, err);
}

int policy_merge(struct rf_policy *base, const struct rf_policy *overlay, struct rf_error *err)
{
        _cleanup_policy_ struct rf_policy *m = NULL;
        int r;

        r = policy_dup(base, &m);
        if (r < 0)
                return rf_error_set(err, r, "out of memory");

        if (merge_string(&m->agent, overlay->agent) < 0 ||
            merge_string(&m->on_behalf_of, overlay->on_behalf_of) < 0 ||
            merge_string(&m->task, overlay->task) < 0 ||
            merge_string(&m->project, overlay->project) < 0 ||
            merge_string(&m->triggered_by, overlay->triggered_by) < 0 ||
            merge_string(&m->audience, overlay->audience) < 0 ||
            merge_string(&m->workspace, overlay->workspace) < 0 ||
            merge_string(&m->rootfs, overlay->rootfs) < 0)
                return rf_error_set(err, -ENOMEM, "out of memory");

        merge_u64(&m->tmp_size, overlay->tmp_size);
        merge_u64(&m->home_size, overlay->home_size);
        merge_u64(&m->shm_size, overlay->shm_size);
        merge_u64(&m->timeout_ms, overlay->timeout_ms);
        merge_u64(&m->memory, overlay->memory);
        merge_u64(&m->pids, overlay->pids);
        merge_u64(&m->cpus_milli, overlay->cpus_milli);
        merge_u64(&m->nofile, overlay->nofile);
        merge_u64(&m->max_chain_depth, overlay->max_chain_depth);
        merge_u64(&m->max_runs_per_window, overlay->max_runs_per_window);
        merge_u64(&m->loop_window_ms, overlay->loop_window_ms);
        merge_u64(&m->event_rate, overlay->event_rate);
        merge_u64(&m->event_burst, overlay->event_burst);
        merge_u64(&m->event_bytes, overlay->event_bytes);
        merge_u64(&m->egress_bytes, overlay->egress_bytes);
        merge_u64(&m->egress_connections, overlay->egress_connections);
        if (overlay->net_capture != POLICY_CAPTURE_UNSET)
                m->net_capture = overlay->net_capture;
        if (overlay->net_on_storm != POLICY_STORM_UNSET)
                m->net_on_storm = overlay->net_on_storm;
        if (overlay->net_upstream_ca) {
                const char *why = NULL;
                r = policy_set_upstream_ca(m, overlay->net_upstream_ca, &why);
                if (r < 0)
                        return rf_error_set(err, r, "upstream_ca: %s", why ? why : "invalid");
        }
        for (size_t i = 0; i < overlay->n_net_publish; i++)
                if ((r = policy_add_publish(m, &overlay->net_publish[i], err)) < 0)
                        return r;
        for (size_t i = 0; i < overlay->n_net_plain_ports; i++)
                if (!policy_net_port_listed(m, overlay->net_plain_ports[i])) {
                        if (m->n_net_plain_ports >= POLICY_NET_PLAIN_PORTS_MAX)
                                return rf_error_set(err, -E2BIG, "more than %d plain ports",
                                                    POLICY_NET_PLAIN_PORTS_MAX);
                        m->net_plain_ports[m->n_net_plain_ports++] = overlay->net_plain_ports[i];
                }
        if ((r = merge_rules(&m->net_allow, &m->n_net_allow, overlay->net_allow,
                             overlay->n_net_allow, "network.allow", err)) < 0 ||
            (r = merge_rules(&m->net_deny, &m->n_net_deny, overlay->net_deny, overlay->n_net_deny,
                             "network.deny", err)) < 0 ||
            (r = merge_rules_max(&m->net_http, &m->n_net_http, overlay->net_http,
                                 overlay->n_net_http, "network.http", POLICY_NET_HTTP_MAX, err)) <
                    0)
                return r;
        for (size_t i = 0; i < overlay->n_net_hosts; i++)
                if ((r = policy_net_host_put(m, overlay->net_hosts[i])) < 0)
                        return rf_error_set(err, r,
                                            r == -E2BIG ? "more than 256 entries in network.hosts"
                                                        : "out of memory");

        for (size_t i = 0; i < overlay->n_secrets; i++) {
                struct secret_binding b;
                char *c = strdup(overlay->secrets[i]);
                if (!c || secret_binding_copy(&b, &overlay->bindings[i]) < 0) {
                        free(c);
                        return rf_error_set(err, -ENOMEM, "out of memory");
                }
                if ((r = policy_secret_put(m, c, &b, err)) < 0) {
                        secret_binding_clear(&b);
                        free(c);
                        return r;
                }
        }

        r = merge_list(&m->read_only, &m->n_read_only, overlay->read_only, overlay->n_read_only,
                       "filesystem.read_only", err);
        if (r < 0)
                return r;
        r = merge_list(&m->read_write, &m->n_read_write, overlay->read_write, overlay->n_read_write,
                       "filesystem.read_write", err);
        if (r < 0)
                return r;

        m->protected_set |= overlay->protected_set;
        for (size_t i = 0; i < overlay->n_protected; i++) {
                char *v = strdup(overlay->protected[i]);
                if (!v)
                        return rf_error_set(err, -ENOMEM, "out of memory");
                r = policy_protected_take(m, v, overlay->protected_dir[i]);
                if (r < 0) {
                        free(v);
                        if (r == -E2BIG) {
                                if (err)
                                        snprintf(err->keypath, sizeof err->keypath,
                                                 "filesystem.protected");
                                return rf_error_set(err, r, "more than %d paths", POLICY_PATHS_MAX);
                        }
                        return rf_error_set(err, r, "out of memory");
                }
        }

        for (size_t i = 0; i < overlay->n_env; i++) {
                r = policy_env_put(m, overlay->env_names[i], overlay->env_values[i]);
                if (r == -E2BIG) {
                        if (err)
                                snprintf(err->keypath, sizeof err->keypath, "env");
                        return rf_error_set(err, r, "more than %d environment variables",
                                            POLICY_ENV_MAX);
                }
                if (r < 0)
                        return rf_error_set(err, r, "out of memory");
        }

        const char *conflict = policy_find_conflict(m);
        if (conflict) {
                char shown[128] = "";
                json_escape_for_message(shown, sizeof shown, conflict, strlen(conflict));
                if (err)
                        snprintf(err->keypath, sizeof err->keypath, "filesystem");
                return rf_error_set(err, -EINVAL, "\"%s\" is both read-only and read-write", shown);
        }

        /* success: swap the merged contents into base, free the old ones */
        struct rf_policy tmp = *base;
        *base = *m;
        *m = tmp;
        return 0;
}

int policy_secret_put(struct rf_policy *p, char *canonical, struct secret_binding *b,
                      struct rf_error *err)
{
        for (size_t i = 0; i < p->n_secrets; i++) {
                struct secret_binding *o = &p->bindings[i];
                if (o->delivery == b->delivery && !strcmp(o->name, b->name)) {
                        secret_binding_clear(o);
                        *o = *b;
                        free(p->secrets[i]);
                        p->secrets[i] = canonical;
                        return 0;
                }
        }
        if (p->n_secrets >= SECRET_BINDINGS_MAX) {
                if (err)
                        snprintf(err->keypath, sizeof err->keypath, "secrets");
                return rf_error_set(err, -E2BIG, "more than %d secret bindings",
                                    SECRET_BINDINGS_MAX);
        }
        char **n = realloc(p->secrets, (p->n_secrets + 1) * sizeof *n);
        if (!n)
                return rf_error_set(err, -ENOMEM, "out of memory");
        p->secrets = n;
        struct secret_binding *t = realloc(p->bindings, (p->n_secrets + 1) * sizeof *t);
        if (!t)
                return rf_error_set(err, -ENOMEM, "out of memory");
        p->bindings = t;
        p->secrets[p->n_secrets] = canonical;
        p->bindings[p->n_secrets++] = *b;
        return 0;
}

int policy_add_secret(struct rf_policy *p, char *canonical, struct rf_error *err)
{
        struct secret_binding b;
        char why[256];
        int r;

        if ((r = secret_binding_parse(canonical, strlen(canonical), &b, why, sizeof why)) < 0)
                return rf_error_set(err, r, "secrets: %s", why);
        if ((r = policy_secret_put(p, canonical, &b, err)) < 0)
                secret_binding_clear(&b);
        return r;
}

/* the next name of a comma-separated list at *s (blanks trimmed) into
 * out[SECRET_TARGET_MAX + 1]: 1, 0 at the end, -EINVAL (empty, too long) */
static int next_name(const char **s, char *out)
{
        const char *p = *s;
        if (!*p)
                return 0;
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        *s = e ? e + 1 : p + n;
        while (n && (*p == ' ' || *p == '\t'))
                p++, n--;
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
                n--;
        if (n == 0 || n > SECRET_TARGET_MAX)
                return -EINVAL;
        memcpy(out, p, n);
        out[n] = '\0';
        return 1;
}

int policy_keep_secrets(struct rf_policy *p, const char *names, struct rf_error *err)
{
        char name[SECRET_TARGET_MAX + 1];
        bool keep[SECRET_BINDINGS_MAX] = {false};
        size_t listed = 0;
        int r;

        if (p->n_secrets > SECRET_BINDINGS_MAX)
                return rf_error_set(err, -E2BIG, "more than %d secret bindings",
                                    SECRET_BINDINGS_MAX);
        for (const char *s = names; (r = next_name(&s, name)) != 0;) {
                if (r < 0 || ++listed > SECRET_BINDINGS_MAX)
                        return rf_error_set(err, -EINVAL,
                                            "secrets: names, comma-separated (at most %d, of "
                                            "at most %d bytes)",
                                            SECRET_BINDINGS_MAX, SECRET_TARGET_MAX);
                bool found = false;
                for (size_t i = 0; i < p->n_secrets; i++)
                        if (!strcmp(p->bindings[i].name, name))
                                keep[i] = found = true;
                if (!found)
                        return rf_error_set(err, -ENOENT, "secrets: the policy grants no secret %s",
                                            name);
        }
        if (listed == 0)
                return rf_error_set(err, -EINVAL, "secrets: no name");
        size_t n = 0;
        for (size_t i = 0; i < p->n_secrets; i++) {
                if (keep[i]) {
                        p->bindings[n] = p->bindings[i];
                        p->secrets[n++] = p->secrets[i];
                } else {
                        secret_binding_clear(&p->bindings[i]);
                        free(p->secrets[i]);
                }
        }
        p->n_secrets = n;
        return 0;
}

int policy_set_upstream_ca(struct rf_policy *p, const char *path, const char **why)
{
        size_t n = strlen(path);
        if (path[0] != '/')
                return *why = "must be an absolute path", -EINVAL;
        if (n >= PATH_MAX)
                return *why = "path too long", -EINVAL;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)path[i] < 0x20 || path[i] == 0x7f)
                        return *why = "control characters in the path", -EINVAL;
        char *dup = strdup(path);
        if (!dup)
                return -ENOMEM;
        free(p->net_upstream_ca);
        p->net_upstream_ca = dup;
        return 0;
}

enum policy_capture policy_capture_from_name(const char *s)
{
        if (strcmp(s, "transparent") == 0)
                return POLICY_CAPTURE_TRANSPARENT;
        if (strcmp(s, "proxy-only") == 0)
                return POLICY_CAPTURE_PROXY_ONLY;
        return _POLICY_CAPTURE_INVALID;
}

const char *policy_capture_name(enum policy_capture c)
{
        return c == POLICY_CAPTURE_PROXY_ONLY ? "proxy-only" : "transparent";
}

enum policy_storm policy_storm_from_name(const char *s)
{
        if (strcmp(s, "notice") == 0)
                return POLICY_STORM_NOTICE;
        if (strcmp(s, "kill") == 0)
                return POLICY_STORM_KILL;
        return _POLICY_STORM_INVALID;
}

const char *policy_storm_name(enum policy_storm m)
{
        return m == POLICY_STORM_KILL ? "kill" : "notice";
}

int policy_apply_defaults(struct rf_policy *p)
{
        if (!p->agent && !(p->agent = strdup("agent")))
                return -ENOMEM;
        if (!p->tmp_size)
                p->tmp_size = POLICY_DEFAULT_TMP_SIZE;
        if (!p->home_size)
                p->home_size = POLICY_DEFAULT_HOME_SIZE;
        if (!p->shm_size)
                p->shm_size = POLICY_DEFAULT_SHM_SIZE;
        return policy_compile(p, NULL);
}

/* n rules of text[] into *out (NULL for none), each through `parse`. */
static int compile_list(char *const *text, size_t n, size_t size, void **out,
                        int (*parse)(const char *s, size_t len, void *rule, const char **why),
                        const char *what, struct rf_error *err)
{
        *out = NULL;
        if (n == 0)
                return 0;
        _cleanup_free_ unsigned char *v = calloc(n, size);
        if (!v)
                return rf_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                const char *why = "invalid";
                if (parse(text[i], strlen(text[i]), v + i * size, &why) < 0)
                        return rf_error_set(err, -EINVAL, "%s %.200s: %s", what, text[i], why);
        }
        *out = TAKE_PTR(v);
        return 0;
}

static int parse_net_rule(const char *s, size_t len, void *rule, const char **why)
{
        return net_rule_parse(s, len, rule, why);
}

static int parse_http_rule(const char *s, size_t len, void *rule, const char **why)
{
        return httprule_parse(s, len, rule, why);
}

int policy_compile(struct rf_policy *p, struct rf_error *err)
{
        void *allow = NULL, *deny = NULL, *http = NULL;
        int r;

        if (p->n_net_http > HTTPRULE_MAX)
                return rf_error_set(err, -E2BIG, "more than %d HTTP rules", HTTPRULE_MAX);
        if ((r = compile_list(p->net_allow, p->n_net_allow, sizeof(struct net_rule), &allow,
                              parse_net_rule, "network rule", err)) < 0 ||
            (r = compile_list(p->net_deny, p->n_net_deny, sizeof(struct net_rule), &deny,
                              parse_net_rule, "network rule", err)) < 0 ||
            (r = compile_list(p->net_http, p->n_net_http, sizeof(struct http_rule), &http,
                              parse_http_rule, "HTTP rule", err)) < 0) {
                free(allow);
                free(deny);
                return r;
        }
        free(p->allow_rules);
        free(p->deny_rules);
        free(p->http_rules);
        p->allow_rules = allow;
        p->deny_rules = deny;
        p->http_rules = http;
        p->compiled = true;
        return 0;
}

/* ------------------------------------------------------------------------ */
/* Loading                                                                   */

static void set_file(struct rf_error *err, const char *path)
{
        if (err)
                snprintf(err->file, sizeof err->file, "%s", path);
}

int policy_load_file(const char *path, struct rf_policy **ret, struct rf_error *err)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0;
        struct stat st;

        if (!path)
                return rf_error_set(err, -EINVAL, "no policy file given");
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                int r = negative_errno();
                set_file(err, path);
                return rf_error_set(err, r, "cannot open: %s", strerror(-r));
        }
        if (fstat(fd, &st) < 0) {
                int r = negative_errno();
                set_file(err, path);
                return rf_error_set(err, r, "cannot stat: %s", strerror(-r));
        }
        if (S_ISDIR(st.st_mode)) {
                set_file(err, path);
                return rf_error_set(err, -EISDIR, "is a directory");
        }
        if (S_ISREG(st.st_mode) && st.st_size > POLICY_FILE_MAX) {
                set_file(err, path);
                return rf_error_set(err, -E2BIG, "policy file larger than %d bytes",
                                    POLICY_FILE_MAX);
        }

        /* Read at most POLICY_FILE_MAX + 1 bytes: one more than allowed tells us it is too big.
         * Not trusting st_size keeps pipes and files that grow while we read honest. */
        for (;;) {
                if (len == cap) {
                        if (cap > POLICY_FILE_MAX)
                                break;
                        size_t ncap = cap ? cap * 2 : 16384;
                        if (ncap > (size_t)POLICY_FILE_MAX + 1)
                                ncap = (size_t)POLICY_FILE_MAX + 1;
                        char *nbuf = realloc(buf, ncap);
                        if (!nbuf)
                                return rf_error_set(err, -ENOMEM, "out of memory");
                        buf = nbuf;
                        cap = ncap;
                }
                ssize_t n = RETRY_EINTR(read(fd, buf + len, cap - len));
                if (n < 0) {
                        int r = negative_errno();
                        set_file(err, path);
                        return rf_error_set(err, r, "cannot read: %s", strerror(-r));
                }
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        if (len > POLICY_FILE_MAX) {
                set_file(err, path);
                return rf_error_set(err, -E2BIG, "policy file larger than %d bytes",
                                    POLICY_FILE_MAX);
        }
        return policy_parse(buf ? buf : "", len, path, ret, err);
}

/* ------------------------------------------------------------------------ */
/* network                                                                   */

bool policy_net_port_listed(const struct rf_policy *p, uint16_t port)
{
        for (size_t i = 0; i < p->n_net_plain_ports; i++)
                if (p->net_plain_ports[i] == port)
                        return true;
        return false;
}

int policy_net_host_put(struct rf_policy *p, const char *entry)
{
        const char *eq = strchr(entry, '=');
        size_t nl = eq ? (size_t)(eq - entry) : strlen(entry);
        char *v = strdup(entry);
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_net_hosts; i++)
                if (!strncmp(p->net_hosts[i], entry, nl) && p->net_hosts[i][nl] == '=') {
                        free(p->net_hosts[i]);
                        p->net_hosts[i] = v;
                        return 0;
                }
        if (p->n_net_hosts >= POLICY_NET_RULES_MAX) {
                free(v);
                return -E2BIG;
        }
        int r = policy_list_take(&p->net_hosts, &p->n_net_hosts, v);
        if (r < 0)
                free(v);
        return r < 0 ? r : 0;
}

int policy_net_host_entry(const char *name, size_t name_len, const char *ip, size_t ip_len,
                          char *out, size_t out_len, const char **why)
{
        char host[NET_HOST_MAX + 1], addr_text[64];
        uint8_t addr[16];
        int family;

        if (net_host_canonical(name, name_len, host, why) < 0)
                return -EINVAL;
        if (net_ip_parse(ip, ip_len, true, addr, &family) < 0) {
                *why = "is not an IP address (IPv4 dotted quad or IPv6)";
                return -EINVAL;
        }
        addr_format(addr, family, addr_text, sizeof addr_text);
        if ((size_t)snprintf(out, out_len, "%s=%s", host, addr_text) >= out_len) {
                *why = "is too long";
                return -EINVAL;
        }
        return 0;
}

int policy_add_net_rule(struct rf_policy *p, const char *rule, struct rf_error *err)
{
        struct net_rule r;
        const char *why = "invalid";

        if (net_rule_parse(rule, strlen(rule), &r, &why) < 0)
                return rf_error_set(err, -EINVAL, "\"%.80s\": %s", rule, why);
        char *const one[] = {r.text};
        return merge_rules(&p->net_allow, &p->n_net_allow, one, 1, "network.allow", err);
}

int policy_add_http_rule(struct rf_policy *p, const char *rule, struct rf_error *err)
{
        struct http_rule r;
        const char *why = "invalid";

        if (httprule_parse(rule, strlen(rule), &r, &why) < 0)
                return rf_error_set(err, -EINVAL, "\"%.200s\": %s", rule, why);
        char *const one[] = {r.text};
        return merge_rules_max(&p->net_http, &p->n_net_http, one, 1, "network.http",
                               POLICY_NET_HTTP_MAX, err);
}

int policy_add_net_host(struct rf_policy *p, const char *name_ip, struct rf_error *err)
{
        /* NAME:IP — the name has no ':'; the address is the rest (IPv6 in brackets) */
        const char *colon = strchr(name_ip, ':');
        char entry[NET_HOST_MAX + 80];
        const char *why = "invalid";

        if (!colon)
                return rf_error_set(err, -EINVAL, "\"%.80s\": expected NAME:IP", name_ip);
        if (policy_net_host_entry(name_ip, (size_t)(colon - name_ip), colon + 1, strlen(colon + 1),
                                  entry, sizeof entry, &why) < 0)
                return rf_error_set(err, -EINVAL, "\"%.80s\": %s", name_ip, why);
        int r = policy_net_host_put(p, entry);
        if (r < 0)
                return rf_error_set(err, r, r == -E2BIG ? "too many hosts" : "out of memory");
        return 0;
}

/* A decimal port 1..65535 of exactly len bytes. */
static int publish_port(const char *s, size_t len, uint16_t *out)
{
        unsigned v = 0;

        if (len == 0 || len > 5)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned)(s[i] - '0');
        }
        if (v == 0 || v > 65535 || (len > 1 && s[0] == '0'))
                return -EINVAL;
        *out = (uint16_t)v;
        return 0;
}

int policy_publish_parse(const char *s, size_t len, struct policy_publish *out, const char **why)
{
        struct policy_publish pp = {0};
        static const char v4[] = "127.0.0.1:", v6[] = "[::1]:";

        if (len >= sizeof v4 - 1 && !memcmp(s, v4, sizeof v4 - 1)) {
                s += sizeof v4 - 1;
                len -= sizeof v4 - 1;
        } else if (len >= sizeof v6 - 1 && !memcmp(s, v6, sizeof v6 - 1)) {
                pp.v6 = true;
                s += sizeof v6 - 1;
                len -= sizeof v6 - 1;
        }
        const char *colon = memchr(s, ':', len);
        if (!colon) {
                *why = "expected [127.0.0.1:|[::1]:]HOST_PORT:RUN_PORT";
                return -EINVAL;
        }
        if (memchr(colon + 1, ':', len - (size_t)(colon + 1 - s)) || memchr(s, '[', len)) {
                *why = "only the host's loopback (127.0.0.1 or [::1]) can be published to";
                return -EINVAL;
        }
        if (publish_port(s, (size_t)(colon - s), &pp.host_port) < 0 ||
            publish_port(colon + 1, len - (size_t)(colon + 1 - s), &pp.run_port) < 0) {
                *why = memchr(s, '.', (size_t)(colon - s))
                               ? "only the host's loopback (127.0.0.1 or [::1]) can be "
                                 "published to"
                               : "ports are 1 to 65535";
                return -EINVAL;
        }
        *out = pp;
        return 0;
}

void policy_publish_text(const struct policy_publish *pp, char out[POLICY_PUBLISH_TEXT_MAX])
{
        snprintf(out, POLICY_PUBLISH_TEXT_MAX, "%s:%u:%u", pp->v6 ? "[::1]" : "127.0.0.1",
                 pp->host_port, pp->run_port);
}

int policy_add_env_text(struct rf_policy *p, const char *what, const char *text,
                        struct rf_error *err)
{
        const char *eq = strchr(text, '=');
        if (!eq || eq == text)
                return rf_error_set(err, -EINVAL, "%s %.80s: expected NAME=VALUE", what, text);
        _cleanup_free_ char *name = strndup(text, (size_t)(eq - text));
        if (!name)
                return rf_error_set(err, -ENOMEM, "out of memory");
        return policy_add_env(p, name, eq + 1, err);
}

int policy_add_publish_text(struct rf_policy *p, const char *what, const char *text,
                            struct rf_error *err)
{
        struct policy_publish pp;
        const char *why = "invalid";
        if (policy_publish_parse(text, strlen(text), &pp, &why) < 0)
                return rf_error_set(err, -EINVAL, "%s %.80s: %s", what, text, why);
        return policy_add_publish(p, &pp, err);
}

int policy_add_publish(struct rf_policy *p, const struct policy_publish *pp, struct rf_error *err)
{
        char t[POLICY_PUBLISH_TEXT_MAX];

        policy_publish_text(pp, t);
        if (pp->host_port == 0 || pp->run_port == 0)
                return rf_error_set(err, -EINVAL, "publish \"%s\": ports are 1 to 65535", t);
        for (size_t i = 0; i < p->n_net_publish; i++) {
                const struct policy_publish *o = &p->net_publish[i];
                if (o->v6 != pp->v6 || o->host_port != pp->host_port)
                        continue;
                if (o->run_port == pp->run_port)
                        return 0;
                return rf_error_set(err, -EINVAL,
                                    "publish \"%s\": host port %u is already published to run "
                                    "port %u",
                                    t, pp->host_port, o->run_port);
        }
        if (p->n_net_publish >= POLICY_PUBLISH_MAX)
                return rf_error_set(err, -E2BIG, "more than %d published ports",
                                    POLICY_PUBLISH_MAX);
        p->net_publish[p->n_net_publish++] = *pp;
        return 0;
}
