/*
 * binding.c — secret bindings: parse (policy JSON, CLI), validate,
 * canonicalise. Pure: no syscalls; fuzzed through fuzz_policy (a policy's
 * `secrets`) and tests/unit/test_secrets.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "secrets/binding.h"
#include "secrets/broker.h"
#include "shared/json.h"
#include "shared/macro.h"

static const char *const delivery_names[_SECRET_DELIVERY_MAX] = {
        [SECRET_ENV] = "env", [SECRET_FILE] = "file", [SECRET_BROKER] = "broker"};
static const char *const source_names[_SOURCE_MAX] = {
        [SOURCE_STORE] = "store", [SOURCE_EXEC] = "exec", [SOURCE_ENV] = "env"};

const char *secret_delivery_name(enum secret_delivery d)
{
        return (unsigned)d < _SECRET_DELIVERY_MAX ? delivery_names[d] : "?";
}

const char *secret_source_name(enum secret_source s)
{
        return (unsigned)s < _SOURCE_MAX ? source_names[s] : "?";
}

void secret_binding_clear(struct secret_binding *b)
{
        for (size_t i = 0; b->argv && i < b->argc; i++)
                free(b->argv[i]);
        free(b->argv);
        for (size_t i = 0; i < b->n_pass_env; i++)
                free(b->pass_env[i]);
        free(b->pass_env);
        memset(b, 0, sizeof *b);
}

/* A name valid for its delivery: an environment variable (not one of
 * ringfence's own), or a file/broker name. */
static bool target_valid(enum secret_delivery d, const char *s, const char **why)
{
        if (d == SECRET_ENV) {
                if (!env_name_valid(s)) {
                        *why = "not a valid environment variable name";
                        return false;
                }
                if (env_name_reserved(s)) {
                        *why = "RINGFENCE_* variables are ringfence's own";
                        return false;
                }
                return true;
        }
        if (!secret_name_valid(s, strlen(s))) {
                *why = "must be 1-64 of A-Z a-z 0-9 _ . - (not starting with . or -)";
                return false;
        }
        return true;
}

static int add_arg(char ***v, size_t *n, size_t max, const char *s, size_t len)
{
        if (*n >= max)
                return -E2BIG;
        char **nv = realloc(*v, (*n + 2) * sizeof *nv);
        if (!nv)
                return -ENOMEM;
        *v = nv;
        if (!(nv[*n] = strndup(s, len)))
                return -ENOMEM;
        nv[++*n] = NULL;
        return 0;
}

static bool arg_ok(const char *s, size_t len)
{
        if (len == 0 || len > SECRET_EXEC_ARG_MAX || memchr(s, '\0', len))
                return false;
        return json_utf8_valid(s, len, NULL);
}

int secret_source_parse(const char *s, struct secret_binding *b, const char **why)
{
        *why = "expected store:NAME[@VERSION], exec:CMD ARG... or env:VAR";
        if (!strncmp(s, "store:", 6)) {
                const char *n = s + 6, *at = strchr(n, '@');
                size_t len = at ? (size_t)(at - n) : strlen(n);
                if (!secret_name_valid(n, len)) {
                        *why = "store:NAME: NAME must be 1-64 of A-Z a-z 0-9 _ . -";
                        return -EINVAL;
                }
                memcpy(b->key, n, len);
                b->key[len] = '\0';
                b->version = 0;
                if (at) {
                        uint64_t v = 0;
                        const char *d = at + 1;
                        if (!*d || *d == '0' || strlen(d) > 6) {
                                *why = "store:NAME@VERSION: VERSION must be 1-999999";
                                return -EINVAL;
                        }
                        for (; *d; d++) {
                                if (*d < '0' || *d > '9') {
                                        *why = "store:NAME@VERSION: VERSION must be 1-999999";
                                        return -EINVAL;
                                }
                                v = v * 10 + (uint64_t)(*d - '0');
                        }
                        b->version = (uint32_t)v;
                }
                b->source = SOURCE_STORE;
                return 0;
        }
        if (!strncmp(s, "env:", 4)) {
                if (!env_name_valid(s + 4)) {
                        *why = "env:VAR: not a valid environment variable name";
                        return -EINVAL;
                }
                snprintf(b->key, sizeof b->key, "%s", s + 4);
                b->source = SOURCE_ENV;
                return 0;
        }
        if (!strncmp(s, "exec:", 5)) {
                const char *p = s + 5;
                if (!*p) {
                        *why = "exec: no command";
                        return -EINVAL;
                }
                b->source = SOURCE_EXEC;
                for (;;) {
                        const char *sp = strchr(p, ' ');
                        size_t len = sp ? (size_t)(sp - p) : strlen(p);
                        if (!arg_ok(p, len)) {
                                *why = "exec: empty or invalid argument (split on single "
                                       "spaces, no quoting)";
                                return -EINVAL;
                        }
                        int r = add_arg(&b->argv, &b->argc, SECRET_EXEC_ARGS_MAX, p, len);
                        if (r < 0) {
                                *why = r == -E2BIG ? "exec: more than 32 arguments"
                                                   : "out of memory";
                                return r;
                        }
                        if (!sp)
                                break;
                        p = sp + 1;
                }
                return 0;
        }
        return -EINVAL;
}

static int duration_member(const struct json_node *m, uint64_t max, uint64_t *ret, char *why,
                           size_t why_len)
{
        if (m->type != JSON_STRING || parse_duration(m->str, ret) < 0)
                return rf_why(why, why_len, -EINVAL, "%s: expected a duration such as \"10s\"",
                              m->key);
        if (*ret == 0 || *ret > max)
                return rf_why(why, why_len, -ERANGE, "%s: out of range", m->key);
        return 0;
}

static int strings_member(const struct json_node *m, size_t max, bool env_names, char ***v,
                          size_t *n, char *why, size_t why_len)
{
        if (m->type != JSON_ARRAY || m->n_items == 0)
                return rf_why(why, why_len, -EINVAL, "%s: expected a non-empty array of strings",
                              m->key);
        if (m->n_items > max)
                return rf_why(why, why_len, -E2BIG, "%s: more than %zu entries", m->key, max);
        for (size_t i = 0; i < m->n_items; i++) {
                const struct json_node *e = m->items[i];
                if (e->type != JSON_STRING || !arg_ok(e->str, e->len) ||
                    (env_names && !env_name_valid(e->str)))
                        return rf_why(why, why_len, -EINVAL, "%s[%zu]: %s", m->key, i,
                                      env_names ? "not a valid environment variable name"
                                                : "expected a non-empty string");
                int r = add_arg(v, n, max, e->str, e->len);
                if (r < 0)
                        return rf_why(why, why_len, r, "out of memory");
        }
        return 0;
}

static int from_json(const struct json_node *obj, struct secret_binding *b, char *why,
                     size_t why_len)
{
        const struct json_node *name = NULL, *deliver = NULL, *from = NULL, *exec = NULL;
        int r;

        if (!obj || obj->type != JSON_OBJECT)
                return rf_why(why, why_len, -EINVAL,
                              "expected an object {\"name\", \"deliver\", \"from\" or \"exec\"}");
        for (size_t i = 0; i < obj->n_items; i++) {
                const struct json_node *m = obj->items[i];
                if (!strcmp(m->key, "name"))
                        name = m;
                else if (!strcmp(m->key, "deliver"))
                        deliver = m;
                else if (!strcmp(m->key, "from"))
                        from = m;
                else if (!strcmp(m->key, "exec")) {
                        exec = m;
                        if ((r = strings_member(m, SECRET_EXEC_ARGS_MAX, false, &b->argv, &b->argc,
                                                why, why_len)) < 0)
                                return r;
                } else if (!strcmp(m->key, "pass_env")) {
                        if ((r = strings_member(m, SECRET_PASS_ENV_MAX, true, &b->pass_env,
                                                &b->n_pass_env, why, why_len)) < 0)
                                return r;
                } else if (!strcmp(m->key, "timeout")) {
                        if ((r = duration_member(m, SECRET_EXEC_TIMEOUT_MAX_MS, &b->timeout_ms, why,
                                                 why_len)) < 0)
                                return r;
                } else if (!strcmp(m->key, "ttl")) {
                        if ((r = duration_member(m, SECRET_TTL_MAX_MS, &b->ttl_ms, why, why_len)) <
                            0)
                                return r;
                } else
                        return rf_why(why, why_len, -EINVAL,
                                      "unknown key \"%.64s\" (name, deliver, from, exec, "
                                      "pass_env, timeout, ttl)",
                                      m->key);
        }
        if (!name || name->type != JSON_STRING)
                return rf_why(why, why_len, -EINVAL, "name: required, a string");
        if (!deliver || deliver->type != JSON_STRING)
                return rf_why(why, why_len, -EINVAL,
                              "deliver: required: \"env\", \"file\" or "
                              "\"broker\"");
        b->delivery = _SECRET_DELIVERY_MAX;
        for (int d = 0; d < _SECRET_DELIVERY_MAX; d++)
                if (!strcmp(deliver->str, delivery_names[d]))
                        b->delivery = (enum secret_delivery)d;
        if (b->delivery == _SECRET_DELIVERY_MAX)
                return rf_why(why, why_len, -EINVAL, "deliver: \"env\", \"file\" or \"broker\"");
        const char *w;
        if (name->len > SECRET_TARGET_MAX || !target_valid(b->delivery, name->str, &w))
                return rf_why(why, why_len, -EINVAL, "name \"%.64s\": %s", name->str,
                              name->len > SECRET_TARGET_MAX ? "too long" : w);
        memcpy(b->name, name->str, name->len + 1);
        if (!!from == !!exec)
                return rf_why(why, why_len, -EINVAL, "exactly one of \"from\" and \"exec\"");
        if (from) {
                if (from->type != JSON_STRING)
                        return rf_why(why, why_len, -EINVAL, "from: expected a string");
                if (!strncmp(from->str, "exec:", 5))
                        return rf_why(why, why_len, -EINVAL,
                                      "from: in a policy, write a command as \"exec\": [argv]");
                if ((r = secret_source_parse(from->str, b, &w)) < 0)
                        return rf_why(why, why_len, r, "from: %s", w);
        } else
                b->source = SOURCE_EXEC;
        if (b->source != SOURCE_EXEC && (b->n_pass_env || b->timeout_ms))
                return rf_why(why, why_len, -EINVAL, "pass_env and timeout apply to \"exec\" only");
        return 0;
}

int secret_binding_from_json(const struct json_node *obj, struct secret_binding *b, char *why,
                             size_t why_len)
{
        memset(b, 0, sizeof *b);
        int r = from_json(obj, b, why, why_len);
        if (r < 0)
                secret_binding_clear(b);
        return r;
}

int secret_binding_parse(const char *text, size_t len, struct secret_binding *b, char *why,
                         size_t why_len)
{
        struct json_node *n = NULL;
        struct rf_error err = {0};
        memset(b, 0, sizeof *b);
        int r = json_parse(text, len, &n, &err);
        if (r < 0)
                return rf_why(why, why_len, r, "%s", err.msg);
        r = secret_binding_from_json(n, b, why, why_len);
        json_node_free(n);
        return r;
}

static void put_key(struct json_buf *j, bool *first, const char *k)
{
        json_buf_append(j, *first ? "{" : ",", 1);
        *first = false;
        json_buf_append_string(j, k, strlen(k));
        json_buf_append(j, ":", 1);
}

static void put_strv(struct json_buf *j, char *const *v, size_t n)
{
        json_buf_append(j, "[", 1);
        for (size_t i = 0; i < n; i++) {
                if (i)
                        json_buf_append(j, ",", 1);
                json_buf_append_string(j, v[i], strlen(v[i]));
        }
        json_buf_append(j, "]", 1);
}

static void put_ms(struct json_buf *j, uint64_t ms)
{
        char s[32];
        snprintf(s, sizeof s, "%llums", (unsigned long long)ms);
        json_buf_append_string(j, s, strlen(s));
}

int secret_binding_to_json(const struct secret_binding *b, char **ret)
{
        struct json_buf j = {0};
        bool first = true;
        char from[SECRET_TARGET_MAX + 32];

        /* keys in byte order */
        put_key(&j, &first, "deliver");
        json_buf_append_string(&j, secret_delivery_name(b->delivery),
                               strlen(secret_delivery_name(b->delivery)));
        if (b->source == SOURCE_EXEC) {
                put_key(&j, &first, "exec");
                put_strv(&j, b->argv, b->argc);
        } else {
                if (b->source == SOURCE_STORE && b->version)
                        snprintf(from, sizeof from, "store:%s@%u", b->key, b->version);
                else
                        snprintf(from, sizeof from, "%s:%s", secret_source_name(b->source), b->key);
                put_key(&j, &first, "from");
                json_buf_append_string(&j, from, strlen(from));
        }
        put_key(&j, &first, "name");
        json_buf_append_string(&j, b->name, strlen(b->name));
        if (b->n_pass_env) {
                put_key(&j, &first, "pass_env");
                put_strv(&j, b->pass_env, b->n_pass_env);
        }
        if (b->timeout_ms) {
                put_key(&j, &first, "timeout");
                put_ms(&j, b->timeout_ms);
        }
        if (b->ttl_ms) {
                put_key(&j, &first, "ttl");
                put_ms(&j, b->ttl_ms);
        }
        json_buf_append(&j, "}", 1); /* json_buf keeps data NUL-terminated */
        if (j.error) {
                int r = j.error;
                json_buf_done(&j);
                return r;
        }
        *ret = j.data;
        return 0;
}

int secret_binding_cli(enum secret_delivery d, const char *arg, char **ret, char *why,
                       size_t why_len)
{
        struct secret_binding b = {.delivery = d};
        const char *eq = strchr(arg, '='), *w;
        int r;

        if (!eq || eq == arg || (size_t)(eq - arg) > SECRET_TARGET_MAX)
                return rf_why(why, why_len, -EINVAL, "expected NAME=SOURCE");
        memcpy(b.name, arg, (size_t)(eq - arg));
        b.name[eq - arg] = '\0';
        if (!target_valid(d, b.name, &w))
                return rf_why(why, why_len, -EINVAL, "%s: %s", b.name, w);
        if ((r = secret_source_parse(eq + 1, &b, &w)) < 0) {
                secret_binding_clear(&b);
                return rf_why(why, why_len, r, "%s", w);
        }
        r = secret_binding_to_json(&b, ret);
        secret_binding_clear(&b);
        return r < 0 ? rf_why(why, why_len, r, "out of memory") : 0;
}
