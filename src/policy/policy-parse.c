/*
 * policy-parse.c — policy_parse(): JSON bytes to struct rf_policy.
 *
 * Two layers: shared/json.c turns bytes into a position-annotated tree and
 * rejects anything that is not strict JSON; this file walks the tree with one
 * table of known keys per object (state as data, not as a chain of ifs) and
 * checks every value's type, range and form.
 *
 * Error reporting: each object's table lists its keys, so an unknown key is
 * reported at the key with the full list of what was expected; a wrong value
 * is reported at the value. Both carry the key path ("limits.pids"). Every
 * piece of input echoed into a message goes through json_escape_for_message(),
 * so a hostile policy cannot put escape sequences on the user's terminal.
 *
 * Keys of sections that later versions add ("network", "secrets") are in the
 * table as reserved: a policy that uses them is refused with a message that
 * says so, rather than run with less confinement than it asks for.
 *
 * Pure: no syscalls, no globals. Fuzzed by tests/fuzz/fuzz_policy.c.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policy/binding.h"
#include "policy/httprule.h"
#include "policy/rules.h"
#include "policy/policy-internal.h"
#include "policy/policy.h"
#include "shared/json.h"

struct ctx {
        const char *filename; /* borrowed, may be NULL */
        struct rf_error *err; /* may be NULL */
        struct rf_policy *p;  /* being filled */
        char path[RF_ERROR_PATH_MAX];
};

struct field;
typedef int (*field_parse_fn)(struct ctx *c, const struct json_node *v, const struct field *f);

struct field {
        const char *key;
        field_parse_fn parse;    /* NULL for reserved keys */
        size_t offset;           /* into struct rf_policy, for the generic handlers */
        uint64_t max;            /* upper bound for counts */
        const struct field *sub; /* for sections: the section's keys */
        size_t n_sub;
};

static int ctx_fail(struct ctx *c, unsigned line, unsigned col, int code, const char *fmt, ...)
        _printf_(5, 6);
static int ctx_fail(struct ctx *c, unsigned line, unsigned col, int code, const char *fmt, ...)
{
        struct rf_error *err = c->err;

        if (!err)
                return code;
        va_list ap;
        va_start(ap, fmt);
        rf_error_vset(err, code, fmt, ap);
        va_end(ap);
        err->line = line;
        err->col = col;
        snprintf(err->file, sizeof err->file, "%s", c->filename ? c->filename : "");
        snprintf(err->keypath, sizeof err->keypath, "%s", c->path);
        return code;
}

/* Error at a value. */
#define fail_value(c, v, code, ...) ctx_fail((c), (v)->line, (v)->col, (code), __VA_ARGS__)
/* Error at an object member's key. */
#define fail_key(c, v, code, ...) ctx_fail((c), (v)->key_line, (v)->key_col, (code), __VA_ARGS__)

static const char *type_with_article(const struct json_node *v)
{
        switch (v->type) {
        case JSON_NULL:
                return "null";
        case JSON_FALSE:
        case JSON_TRUE:
                return "a boolean";
        case JSON_NUMBER:
                return "a number";
        case JSON_STRING:
                return "a string";
        case JSON_ARRAY:
                return "an array";
        case JSON_OBJECT:
                return "an object";
        case _JSON_TYPE_MAX:
        case _JSON_TYPE_INVALID:
        default:
                return "an invalid value";
        }
}

static int expect_type(struct ctx *c, const struct json_node *v, enum json_type t,
                       const char *expected)
{
        if (v->type == t)
                return 0;
        return fail_value(c, v, -EINVAL, "expected %s, got %s", expected, type_with_article(v));
}

/* The value of a string node, escaped, and shortened with "..." if it does not fit `size`. */
static const char *shown(const struct json_node *v, char *buf, size_t size)
{
        char tmp[256] = ""; /* callers pass size <= 128; the slack tells "fits" from "cut" */
        size_t n;

        if (size > sizeof tmp - 8)
                size = sizeof tmp - 8;
        /* If the rendering is shorter than `size`, at least 8 bytes of tmp were left and
         * no escape is longer than 6, so nothing was dropped. */
        json_escape_for_message(tmp, size + 8, v->str, v->len);
        n = strlen(tmp);
        if (n >= size) {
                n = size - 4; /* room for "..." and the NUL */
                while (n > 0 && ((unsigned char)tmp[n] & 0xC0) == 0x80)
                        n--; /* do not split a UTF-8 character */
                memcpy(tmp + n, "...", 4);
        }
        memcpy(buf, tmp, strlen(tmp) + 1);
        return buf;
}

static void path_push_key(struct ctx *c, const struct json_node *member, size_t *mark)
{
        *mark = strlen(c->path);
        json_keypath_append_key(c->path, sizeof c->path, member->key, member->key_len);
}

static void path_push_index(struct ctx *c, size_t index, size_t *mark)
{
        *mark = strlen(c->path);
        json_keypath_append_index(c->path, sizeof c->path, index);
}

static void path_pop(struct ctx *c, size_t mark)
{
        c->path[mark] = '\0';
}

static void *target(const struct ctx *c, const struct field *f)
{
        return (char *)c->p + f->offset;
}

/* ------------------------------------------------------------------------ */
/* Objects driven by a key table                                             */

static int unknown_key(struct ctx *c, const struct json_node *m, const struct field *fields,
                       size_t n_fields)
{
        char expected[RF_ERROR_MSG_MAX] = "";
        size_t used = 0;

        for (size_t i = 0; i < n_fields; i++) {
                if (!fields[i].parse)
                        continue; /* reserved keys are not "expected" */
                int n = snprintf(expected + used, sizeof expected - used, "%s%s", used ? ", " : "",
                                 fields[i].key);
                if (n < 0 || (size_t)n >= sizeof expected - used)
                        break;
                used += (size_t)n;
        }
        return fail_key(c, m, -EINVAL, "unknown key (expected one of: %s)", expected);
}

static int parse_fields(struct ctx *c, const struct json_node *obj, const struct field *fields,
                        size_t n_fields)
{
        for (size_t k = 0; k < obj->n_items; k++) {
                const struct json_node *m = obj->items[k];
                const struct field *f = NULL;
                size_t mark;
                int r;

                for (size_t i = 0; i < n_fields && !f; i++)
                        if (strlen(fields[i].key) == m->key_len &&
                            memcmp(fields[i].key, m->key, m->key_len) == 0)
                                f = &fields[i];

                path_push_key(c, m, &mark);
                if (!f)
                        return unknown_key(c, m, fields, n_fields);
                if (!f->parse)
                        return fail_key(c, m, -EINVAL,
                                        "not supported by this version of ringfence");
                r = f->parse(c, m, f);
                if (r < 0)
                        return r;
                path_pop(c, mark);
        }
        return 0;
}

static int parse_section(struct ctx *c, const struct json_node *v, const struct field *f)
{
        int r = expect_type(c, v, JSON_OBJECT, "an object");
        if (r < 0)
                return r;
        return parse_fields(c, v, f->sub, f->n_sub);
}

/* ------------------------------------------------------------------------ */
/* Value handlers                                                            */

static int parse_version(struct ctx *c, const struct json_node *v, const struct field *f)
{
        int64_t version;
        int r;

        r = expect_type(c, v, JSON_NUMBER, "an integer");
        if (r < 0)
                return r;
        r = json_number_int64(v, &version);
        if (r == -EINVAL)
                return fail_value(c, v, r, "expected an integer, got %s", v->str);
        if (r < 0 || version != POLICY_VERSION)
                return fail_value(c, v, -EINVAL,
                                  "unsupported policy version %s (this ringfence reads version "
                                  "%d)",
                                  v->str, POLICY_VERSION);
        return 0;
}

/* "version" is checked before everything else (policy_parse); nothing to do in the walk. */
static int parse_version_again(struct ctx *c, const struct json_node *v, const struct field *f)
{
        return 0;
}

static int parse_ident(struct ctx *c, const struct json_node *v, const struct field *f)
{
        char **field = target(c, f);
        const char *why;
        int r;

        r = expect_type(c, v, JSON_STRING, "a string");
        if (r < 0)
                return r;
        if (v->len > POLICY_IDENT_MAX)
                return fail_value(c, v, -EINVAL, "longer than %d bytes", POLICY_IDENT_MAX);
        why = policy_ident_problem(v->str, v->len, POLICY_IDENT_MAX);
        if (why)
                return fail_value(c, v, -EINVAL, "%s", why);
        char *s = strdup(v->str);
        if (!s)
                return fail_value(c, v, -ENOMEM, "out of memory");
        free(*field);
        *field = s;
        return 0;
}

static int normalize_node(struct ctx *c, const struct json_node *v, char **ret)
{
        char buf[128];
        const char *why;
        int r;

        r = expect_type(c, v, JSON_STRING, "a string (an absolute path)");
        if (r < 0)
                return r;
        r = policy_path_normalize(v->str, v->len, ret, &why);
        if (r == -ENOMEM)
                return fail_value(c, v, r, "out of memory");
        if (r < 0)
                return fail_value(c, v, r, "\"%s\" %s", shown(v, buf, sizeof buf), why);
        return 0;
}

static int parse_workspace(struct ctx *c, const struct json_node *v, const struct field *f)
{
        char *path;
        int r = normalize_node(c, v, &path);

        if (r < 0)
                return r;
        free(c->p->workspace);
        c->p->workspace = path;
        return 0;
}

static int parse_rootfs(struct ctx *c, const struct json_node *v, const struct field *f)
{
        char *path;
        int r = normalize_node(c, v, &path);

        if (r < 0)
                return r;
        if (!strcmp(path, "/")) {
                free(path);
                return fail_value(c, v, -EINVAL,
                                  "\"/\" is the host's own root: leave rootfs out for that");
        }
        free(c->p->rootfs);
        c->p->rootfs = path;
        return 0;
}

static int parse_paths(struct ctx *c, const struct json_node *v, char ***list, size_t *n,
                       char *const *other, size_t n_other, const char *other_name)
{
        int r;

        r = expect_type(c, v, JSON_ARRAY, "an array of absolute paths");
        if (r < 0)
                return r;
        if (v->n_items > POLICY_PATHS_MAX) {
                size_t mark;
                path_push_index(c, POLICY_PATHS_MAX, &mark);
                return fail_value(c, v->items[POLICY_PATHS_MAX], -E2BIG, "more than %d paths",
                                  POLICY_PATHS_MAX);
        }
        for (size_t i = 0; i < v->n_items; i++) {
                const struct json_node *e = v->items[i];
                char buf[128];
                size_t mark;
                char *path;

                path_push_index(c, i, &mark);
                r = normalize_node(c, e, &path);
                if (r < 0)
                        return r;
                if (policy_strv_contains(other, n_other, path)) {
                        free(path);
                        return fail_value(c, e, -EINVAL, "\"%s\" is also in filesystem.%s",
                                          shown(e, buf, sizeof buf), other_name);
                }
                r = policy_list_take(list, n, path);
                if (r < 0) {
                        free(path);
                        /* -E2BIG cannot happen: n_items was checked above */
                        return fail_value(c, e, r,
                                          r == -ENOMEM ? "out of memory" : "too many paths");
                }
                path_pop(c, mark);
        }
        return 0;
}

static int parse_read_only(struct ctx *c, const struct json_node *v, const struct field *f)
{
        struct rf_policy *p = c->p;
        return parse_paths(c, v, &p->read_only, &p->n_read_only, p->read_write, p->n_read_write,
                           "read_write");
}

static int parse_read_write(struct ctx *c, const struct json_node *v, const struct field *f)
{
        struct rf_policy *p = c->p;
        return parse_paths(c, v, &p->read_write, &p->n_read_write, p->read_only, p->n_read_only,
                           "read_only");
}

/*
 * filesystem.protected: paths relative to the workspace. Even an empty array
 * is recorded (protected_set): it turns the sandbox's default protection off,
 * which an absent key does not.
 */
static int parse_protected(struct ctx *c, const struct json_node *v, const struct field *f)
{
        int r;

        r = expect_type(c, v, JSON_ARRAY, "an array of paths relative to the workspace");
        if (r < 0)
                return r;
        if (v->n_items > POLICY_PATHS_MAX) {
                size_t mark;
                path_push_index(c, POLICY_PATHS_MAX, &mark);
                return fail_value(c, v->items[POLICY_PATHS_MAX], -E2BIG, "more than %d paths",
                                  POLICY_PATHS_MAX);
        }
        for (size_t i = 0; i < v->n_items; i++) {
                const struct json_node *e = v->items[i];
                char buf[128];
                const char *why;
                size_t mark;
                char *path;
                bool dir;

                path_push_index(c, i, &mark);
                r = expect_type(c, e, JSON_STRING, "a string (a path relative to the workspace)");
                if (r < 0)
                        return r;
                r = policy_protected_normalize(e->str, e->len, &path, &dir, &why);
                if (r == -ENOMEM)
                        return fail_value(c, e, r, "out of memory");
                if (r < 0)
                        return fail_value(c, e, r, "\"%s\" %s", shown(e, buf, sizeof buf), why);
                r = policy_protected_take(c->p, path, dir);
                if (r < 0) {
                        free(path);
                        /* -E2BIG cannot happen: n_items was checked above */
                        return fail_value(c, e, r,
                                          r == -ENOMEM ? "out of memory" : "too many paths");
                }
                path_pop(c, mark);
        }
        c->p->protected_set = true;
        return 0;
}

static int parse_size_field(struct ctx *c, const struct json_node *v, const struct field *f)
{
        uint64_t *field = target(c, f), bytes;
        char buf[128];
        int r;

        if (v->type == JSON_NUMBER) {
                r = json_number_uint64(v, &bytes);
                if (r == -EINVAL)
                        return fail_value(c, v, r,
                                          "expected an integer number of bytes or a string like "
                                          "\"512M\", got %s",
                                          v->str);
                if (r < 0)
                        return fail_value(c, v, -EINVAL, "%s is out of range", v->str);
        } else if (v->type == JSON_STRING) {
                r = parse_size(v->str, &bytes);
                if (r == -ERANGE)
                        return fail_value(c, v, -EINVAL, "size \"%s\" is too large",
                                          shown(v, buf, sizeof buf));
                if (r < 0)
                        return fail_value(c, v, -EINVAL,
                                          "invalid size \"%s\" (expected N, NK, NM or NG, e.g. "
                                          "\"512M\")",
                                          shown(v, buf, sizeof buf));
        } else {
                return fail_value(c, v, -EINVAL,
                                  "expected a size (a string like \"512M\" or an integer number "
                                  "of bytes), got %s",
                                  type_with_article(v));
        }
        if (bytes == 0)
                return fail_value(c, v, -EINVAL, "must be greater than zero");
        *field = bytes;
        return 0;
}

static int parse_duration_field(struct ctx *c, const struct json_node *v, const struct field *f)
{
        uint64_t *field = target(c, f), ms;
        char buf[128];
        int r;

        if (v->type != JSON_STRING)
                return fail_value(c, v, -EINVAL,
                                  "expected a duration string like \"30m\" (units ms, s, m, h), "
                                  "got %s",
                                  type_with_article(v));
        r = parse_duration(v->str, &ms);
        if (r == -ERANGE)
                return fail_value(c, v, -EINVAL, "duration \"%s\" is too large",
                                  shown(v, buf, sizeof buf));
        if (r < 0)
                return fail_value(c, v, -EINVAL,
                                  "invalid duration \"%s\" (expected N followed by ms, s, m or h, "
                                  "e.g. \"30m\")",
                                  shown(v, buf, sizeof buf));
        if (ms == 0)
                return fail_value(c, v, -EINVAL, "must be greater than zero");
        *field = ms;
        return 0;
}

static int parse_count(struct ctx *c, const struct json_node *v, const struct field *f)
{
        uint64_t *field = target(c, f), n;
        int r;

        r = expect_type(c, v, JSON_NUMBER, "an integer");
        if (r < 0)
                return r;
        r = json_number_uint64(v, &n);
        if (r == -EINVAL)
                return fail_value(c, v, r, "expected an integer, got %s", v->str);
        if (r < 0 || n == 0 || n > f->max)
                return fail_value(c, v, -EINVAL, "must be between 1 and %" PRIu64, f->max);
        *field = n;
        return 0;
}

static int parse_cpus_field(struct ctx *c, const struct json_node *v, const struct field *f)
{
        uint64_t milli;
        int r;

        r = expect_type(c, v, JSON_NUMBER, "a number");
        if (r < 0)
                return r;
        r = json_number_decimal(v, 3, &milli);
        if (r == -EINVAL)
                return fail_value(c, v, r, "at most 3 decimal places are allowed, got %s", v->str);
        if (r < 0 || milli == 0 || milli > POLICY_CPUS_MILLI_MAX)
                return fail_value(c, v, -EINVAL, "must be greater than 0 and at most %d",
                                  POLICY_CPUS_MILLI_MAX / 1000);
        c->p->cpus_milli = milli;
        return 0;
}

static int parse_env(struct ctx *c, const struct json_node *v, const struct field *f)
{
        int r;

        r = expect_type(c, v, JSON_OBJECT, "an object of NAME: \"value\"");
        if (r < 0)
                return r;
        if (v->n_items > POLICY_ENV_MAX) {
                size_t mark;
                path_push_key(c, v->items[POLICY_ENV_MAX], &mark);
                return fail_key(c, v->items[POLICY_ENV_MAX], -E2BIG,
                                "more than %d environment variables", POLICY_ENV_MAX);
        }
        for (size_t k = 0; k < v->n_items; k++) {
                const struct json_node *m = v->items[k];
                const char *why;
                size_t mark;

                path_push_key(c, m, &mark);
                /* a key with an embedded NUL cannot reach here: json.c rejects it */
                why = policy_env_name_problem(m->key);
                if (why)
                        return fail_key(c, m, -EINVAL, "%s", why);
                r = expect_type(c, m, JSON_STRING, "a string");
                if (r < 0)
                        return r;
                why = policy_env_value_problem(m->str, m->len);
                if (why)
                        return fail_value(c, m, -EINVAL, "%s", why);
                r = policy_env_put(c->p, m->key, m->str);
                if (r < 0)
                        return fail_value(c, m, r,
                                          r == -ENOMEM ? "out of memory" : "too many variables");
                path_pop(c, mark);
        }
        return 0;
}

/* ------------------------------------------------------------------------ */
/* network                                                                   */

/* A network rule's canonical text (net_rule_parse), malloc'ed; 0, -EINVAL
 * with *why, -ENOMEM. */
static int net_rule_canon(const char *s, size_t len, char **ret, const char **why)
{
        struct net_rule rule;
        if (net_rule_parse(s, len, &rule, why) < 0)
                return -EINVAL;
        return (*ret = strdup(rule.text)) ? 0 : -ENOMEM;
}

/* An HTTP rule's canonical text (httprule_parse), the same way. */
static int http_rule_canon(const char *s, size_t len, char **ret, const char **why)
{
        struct http_rule rule;
        if (httprule_parse(s, len, &rule, why) < 0)
                return -EINVAL;
        return (*ret = strdup(rule.text)) ? 0 : -ENOMEM;
}

/* An array of at most `max` rule strings, each kept as canon() makes it. */
static int parse_rule_list(struct ctx *c, const struct json_node *v, char ***list, size_t *n,
                           size_t max, const char *expected,
                           int (*canon)(const char *, size_t, char **, const char **))
{
        int r = expect_type(c, v, JSON_ARRAY, expected);
        if (r < 0)
                return r;
        if (v->n_items > max) {
                size_t mark;
                path_push_index(c, max, &mark);
                return fail_value(c, v->items[max], -E2BIG, "more than %zu rules", max);
        }
        for (size_t i = 0; i < v->n_items; i++) {
                const struct json_node *e = v->items[i];
                const char *why = "invalid";
                char buf[128], *t = NULL;
                size_t mark;

                path_push_index(c, i, &mark);
                r = expect_type(c, e, JSON_STRING, "a string");
                if (r < 0)
                        return r;
                r = canon(e->str, e->len, &t, &why);
                if (r == -EINVAL)
                        return fail_value(c, e, -EINVAL, "\"%s\": %s", shown(e, buf, sizeof buf),
                                          why);
                if (r < 0 || (r = policy_list_take(list, n, t)) < 0) {
                        free(t);
                        return fail_value(c, e, -ENOMEM, "out of memory");
                }
                path_pop(c, mark);
        }
        return 0;
}

#define NET_RULES_EXPECTED "an array of rules (\"host[:ports]\", \"*.suffix\", \"IP\", \"CIDR\")"

static int parse_net_allow(struct ctx *c, const struct json_node *v, const struct field *f)
{
        return parse_rule_list(c, v, &c->p->net_allow, &c->p->n_net_allow, POLICY_NET_RULES_MAX,
                               NET_RULES_EXPECTED, net_rule_canon);
}

static int parse_net_deny(struct ctx *c, const struct json_node *v, const struct field *f)
{
        return parse_rule_list(c, v, &c->p->net_deny, &c->p->n_net_deny, POLICY_NET_RULES_MAX,
                               NET_RULES_EXPECTED, net_rule_canon);
}

/* network.http: HTTP rules, "HOST[:PORT] METHOD[,METHOD...] PATH-GLOB"
 * (httprule.h), kept as their canonical text. */
static int parse_net_http(struct ctx *c, const struct json_node *v, const struct field *f)
{
        return parse_rule_list(c, v, &c->p->net_http, &c->p->n_net_http, POLICY_NET_HTTP_MAX,
                               "an array of HTTP rules (\"HOST[:PORT] METHOD[,METHOD] PATH-GLOB\")",
                               http_rule_canon);
}

/* network.hosts: {"name": "IP"} — operator-declared static names. */
static int parse_net_hosts(struct ctx *c, const struct json_node *v, const struct field *f)
{
        int r = expect_type(c, v, JSON_OBJECT, "an object of \"name\": \"IP\"");
        if (r < 0)
                return r;
        if (v->n_items > POLICY_NET_RULES_MAX)
                return fail_value(c, v, -E2BIG, "more than %d hosts", POLICY_NET_RULES_MAX);
        for (size_t i = 0; i < v->n_items; i++) {
                const struct json_node *m = v->items[i];
                char entry[NET_HOST_MAX + 80];
                const char *why = "invalid";
                size_t mark;

                path_push_key(c, m, &mark);
                if (net_host_canonical(m->key, strlen(m->key), entry, &why) < 0)
                        return fail_key(c, m, -EINVAL, "host name %s", why);
                r = expect_type(c, m, JSON_STRING, "a string (an IP address)");
                if (r < 0)
                        return r;
                if (policy_net_host_entry(m->key, strlen(m->key), m->str, m->len, entry,
                                          sizeof entry, &why) < 0)
                        return fail_value(c, m, -EINVAL, "%s", why);
                if ((r = policy_net_host_put(c->p, entry)) < 0)
                        return fail_value(c, m, r, "out of memory");
                path_pop(c, mark);
        }
        return 0;
}

static int parse_plain_ports(struct ctx *c, const struct json_node *v, const struct field *f)
{
        int r = expect_type(c, v, JSON_ARRAY, "an array of port numbers");
        if (r < 0)
                return r;
        if (v->n_items > POLICY_NET_PLAIN_PORTS_MAX)
                return fail_value(c, v, -E2BIG, "more than %d ports", POLICY_NET_PLAIN_PORTS_MAX);
        for (size_t i = 0; i < v->n_items; i++) {
                const struct json_node *e = v->items[i];
                uint64_t port;
                size_t mark;

                path_push_index(c, i, &mark);
                r = expect_type(c, e, JSON_NUMBER, "a port number");
                if (r < 0)
                        return r;
                if (json_number_uint64(e, &port) < 0 || port == 0 || port > 65535)
                        return fail_value(c, e, -EINVAL, "must be a port between 1 and 65535");
                if (!policy_net_port_listed(c->p, (uint16_t)port))
                        c->p->net_plain_ports[c->p->n_net_plain_ports++] = (uint16_t)port;
                path_pop(c, mark);
        }
        return 0;
}

static int parse_publish(struct ctx *c, const struct json_node *v, const struct field *f)
{
        int r = expect_type(c, v, JSON_ARRAY, "an array of \"HOST_PORT:RUN_PORT\" strings");
        if (r < 0)
                return r;
        if (v->n_items > POLICY_PUBLISH_MAX)
                return fail_value(c, v, -E2BIG, "more than %d entries", POLICY_PUBLISH_MAX);
        for (size_t i = 0; i < v->n_items; i++) {
                const struct json_node *e = v->items[i];
                struct policy_publish pp;
                const char *why = "invalid";
                struct rf_error e2 = {0};
                size_t mark;

                path_push_index(c, i, &mark);
                r = expect_type(c, e, JSON_STRING,
                                "a \"[127.0.0.1:|[::1]:]HOST_PORT:RUN_PORT\" string");
                if (r < 0)
                        return r;
                if (policy_publish_parse(e->str, e->len, &pp, &why) < 0)
                        return fail_value(c, e, -EINVAL, "%s", why);
                if ((r = policy_add_publish(c->p, &pp, &e2)) < 0)
                        return fail_value(c, e, r, "%s", e2.msg);
                path_pop(c, mark);
        }
        return 0;
}

static int parse_capture(struct ctx *c, const struct json_node *v, const struct field *f)
{
        int r = expect_type(c, v, JSON_STRING, "a string (\"transparent\" or \"proxy-only\")");
        if (r < 0)
                return r;
        enum policy_capture m = policy_capture_from_name(v->str);
        if (m < 0)
                return fail_value(c, v, -EINVAL, "must be \"transparent\" or \"proxy-only\"");
        c->p->net_capture = m;
        return 0;
}

/* network.on_refusal_storm: "notice" or "kill". */
static int parse_on_storm(struct ctx *c, const struct json_node *v, const struct field *f)
{
        int r = expect_type(c, v, JSON_STRING, "a string (\"notice\" or \"kill\")");
        if (r < 0)
                return r;
        enum policy_storm m = policy_storm_from_name(v->str);
        if (m < 0)
                return fail_value(c, v, -EINVAL, "must be \"notice\" or \"kill\"");
        c->p->net_on_storm = m;
        return 0;
}

/* network.upstream_ca: an absolute path (read when a run with an HTTPS
 * injection starts; its contents are checked then). */
static int parse_upstream_ca(struct ctx *c, const struct json_node *v, const struct field *f)
{
        int r = expect_type(c, v, JSON_STRING, "a string (an absolute path to a PEM file)");
        if (r < 0)
                return r;
        const char *e = NULL;
        if ((r = policy_set_upstream_ca(c->p, v->str, &e)) < 0)
                return fail_value(c, v, r, "%s", e ? e : "invalid path");
        return 0;
}

/* ------------------------------------------------------------------------ */
/* secrets                                                                   */

static int parse_secrets(struct ctx *c, const struct json_node *v, const struct field *f)
{
        int r = expect_type(c, v, JSON_ARRAY, "an array of bindings");
        if (r < 0)
                return r;
        if (v->n_items > SECRET_BINDINGS_MAX)
                return fail_value(c, v, -E2BIG, "more than %d bindings", SECRET_BINDINGS_MAX);
        for (size_t i = 0; i < v->n_items; i++) {
                const struct json_node *e = v->items[i];
                struct secret_binding b;
                char why[256], *canon = NULL;
                size_t mark;

                path_push_index(c, i, &mark);
                r = expect_type(c, e, JSON_OBJECT, "a binding object");
                if (r < 0)
                        return r;
                if ((r = secret_binding_from_json(e, &b, why, sizeof why)) < 0)
                        return fail_value(c, e, r, "%s", why);
                r = secret_binding_to_json(&b, &canon);
                for (size_t k = 0; r == 0 && k < c->p->n_secrets; k++) {
                        const struct secret_binding *o = &c->p->bindings[k];
                        if (o->delivery == b.delivery && !strcmp(o->name, b.name))
                                r = -EEXIST;
                }
                if (r == -EEXIST) {
                        r = fail_value(c, e, -EINVAL, "\"%s\" is bound twice", b.name);
                        secret_binding_clear(&b);
                        free(canon);
                        return r;
                }
                if (r < 0 || (r = policy_secret_put(c->p, canon, &b, NULL)) < 0) {
                        secret_binding_clear(&b);
                        free(canon);
                        return fail_value(c, e, r, "out of memory");
                }
                path_pop(c, mark);
        }
        return 0;
}

/* ------------------------------------------------------------------------ */
/* The format, version 1                                                     */

#define FIELD(k, fn, member)                                                                       \
        {                                                                                          \
                .key = (k), .parse = (fn), .offset = offsetof(struct rf_policy, member)            \
        }
#define SECTION(k, table)                                                                          \
        {                                                                                          \
                .key = (k), .parse = parse_section, .sub = (table), .n_sub = ARRAY_SIZE(table)     \
        }
#define RESERVED(k)                                                                                \
        {                                                                                          \
                .key = (k), .parse = NULL                                                          \
        }

static const struct field identity_fields[] = {
        FIELD("agent", parse_ident, agent),
        FIELD("on_behalf_of", parse_ident, on_behalf_of),
        FIELD("task", parse_ident, task),
        FIELD("project", parse_ident, project),
        FIELD("triggered_by", parse_ident, triggered_by),
        FIELD("audience", parse_ident, audience),
};

static const struct field filesystem_fields[] = {
        {.key = "read_only", .parse = parse_read_only},
        {.key = "read_write", .parse = parse_read_write},
        {.key = "protected", .parse = parse_protected},
        {.key = "rootfs", .parse = parse_rootfs},
        FIELD("tmp_size", parse_size_field, tmp_size),
        FIELD("home_size", parse_size_field, home_size),
        FIELD("shm_size", parse_size_field, shm_size),
};

static const struct field limits_fields[] = {
        FIELD("timeout", parse_duration_field, timeout_ms),
        FIELD("memory", parse_size_field, memory),
        {.key = "pids",
         .parse = parse_count,
         .offset = offsetof(struct rf_policy, pids),
         .max = POLICY_PIDS_MAX},
        {.key = "cpus", .parse = parse_cpus_field},
        {.key = "nofile",
         .parse = parse_count,
         .offset = offsetof(struct rf_policy, nofile),
         .max = POLICY_NOFILE_MAX},
        FIELD("egress_bytes", parse_size_field, egress_bytes),
        {.key = "egress_connections",
         .parse = parse_count,
         .offset = offsetof(struct rf_policy, egress_connections),
         .max = POLICY_EGRESS_CONNS_MAX},
};

static const struct field network_fields[] = {
        {.key = "allow", .parse = parse_net_allow},
        {.key = "capture", .parse = parse_capture},
        {.key = "deny", .parse = parse_net_deny},
        {.key = "hosts", .parse = parse_net_hosts},
        {.key = "http", .parse = parse_net_http},
        {.key = "on_refusal_storm", .parse = parse_on_storm},
        {.key = "plain_ports", .parse = parse_plain_ports},
        {.key = "publish", .parse = parse_publish},
        {.key = "upstream_ca", .parse = parse_upstream_ca},
};

static const struct field audit_fields[] = {
        {.key = "max_chain_depth",
         .parse = parse_count,
         .offset = offsetof(struct rf_policy, max_chain_depth),
         .max = POLICY_CHAIN_DEPTH_MAX},
        {.key = "max_runs_per_window",
         .parse = parse_count,
         .offset = offsetof(struct rf_policy, max_runs_per_window),
         .max = POLICY_RUNS_WINDOW_MAX},
        FIELD("loop_window", parse_duration_field, loop_window_ms),
        {.key = "event_rate",
         .parse = parse_count,
         .offset = offsetof(struct rf_policy, event_rate),
         .max = POLICY_EVENT_RATE_MAX},
        {.key = "event_burst",
         .parse = parse_count,
         .offset = offsetof(struct rf_policy, event_burst),
         .max = POLICY_EVENT_RATE_MAX},
        FIELD("event_bytes", parse_size_field, event_bytes),
};

static const struct field top_fields[] = {
        {.key = "version", .parse = parse_version_again},
        SECTION("identity", identity_fields),
        {.key = "workspace", .parse = parse_workspace},
        SECTION("filesystem", filesystem_fields),
        {.key = "env", .parse = parse_env},
        SECTION("limits", limits_fields),
        SECTION("audit", audit_fields),
        SECTION("network", network_fields),
        {.key = "secrets", .parse = parse_secrets},
};

int policy_parse(const char *buf, size_t len, const char *filename, struct rf_policy **ret,
                 struct rf_error *err)
{
        _cleanup_json_ struct json_node *root = NULL;
        struct ctx c = {.filename = filename, .err = err};
        int r;

        if (len > POLICY_FILE_MAX)
                return ctx_fail(&c, 0, 0, -E2BIG, "policy file larger than %d bytes",
                                POLICY_FILE_MAX);

        r = json_parse(buf, len, &root, err);
        if (r < 0) {
                if (err)
                        snprintf(err->file, sizeof err->file, "%s", filename ? filename : "");
                return r;
        }
        return policy_from_json(root, filename, ret, err);
}

int policy_from_json(const struct json_node *root, const char *filename, struct rf_policy **ret,
                     struct rf_error *err)
{
        _cleanup_policy_ struct rf_policy *p = NULL;
        struct ctx c = {.filename = filename, .err = err};
        const struct json_node *version;
        int r;

        if (root->type != JSON_OBJECT)
                return fail_value(&c, root, -EINVAL,
                                  "expected a JSON object at the top level, got %s",
                                  type_with_article(root));

        /* version first: a policy from a newer ringfence should fail on that, not on its keys */
        version = json_object_get(root, "version");
        if (!version) {
                snprintf(c.path, sizeof c.path, "version");
                return fail_value(&c, root, -EINVAL,
                                  "missing required key (this ringfence reads version %d)",
                                  POLICY_VERSION);
        }
        snprintf(c.path, sizeof c.path, "version");
        r = parse_version(&c, version, NULL);
        if (r < 0)
                return r;
        c.path[0] = '\0';

        p = policy_new();
        if (!p)
                return ctx_fail(&c, 0, 0, -ENOMEM, "out of memory");
        c.p = p;
        r = parse_fields(&c, root, top_fields, ARRAY_SIZE(top_fields));
        if (r < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}
