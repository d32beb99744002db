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
#include <strings.h>

#include "policy/policy.h"
#include "policy/binding.h"
#include "secrets/broker.h"
#include "shared/json.h"
#include "shared/macro.h"

static const char *const delivery_names[_SECRET_DELIVERY_MAX] = {[SECRET_ENV] = "env",
                                                                 [SECRET_FILE] = "file",
                                                                 [SECRET_BROKER] = "broker",
                                                                 [SECRET_INJECT] = "inject"};
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
        for (size_t i = 0; i < b->n_hosts; i++)
                free(b->hosts[i]);
        free(b->hosts);
        memset(b, 0, sizeof *b);
}

/* *dst[0, n) as an owned copy of src[0, n) (NULL for none). */
static int strv_copy(char **src, size_t n, char ***dst)
{
        *dst = NULL;
        if (!src)
                return 0;
        char **v = calloc(n + 1, sizeof *v);
        if (!v)
                return -ENOMEM;
        *dst = v;
        for (size_t i = 0; i < n; i++)
                if (!(v[i] = strdup(src[i])))
                        return -ENOMEM;
        return 0;
}

int secret_binding_copy(struct secret_binding *dst, const struct secret_binding *src)
{
        *dst = *src;
        dst->argv = dst->pass_env = dst->hosts = NULL;
        if (strv_copy(src->argv, src->argc, &dst->argv) < 0 ||
            strv_copy(src->pass_env, src->n_pass_env, &dst->pass_env) < 0 ||
            strv_copy(src->hosts, src->n_hosts, &dst->hosts) < 0) {
                secret_binding_clear(dst);
                return -ENOMEM;
        }
        return 0;
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
        /* an injection's name: a secret name, or the variable of `--inject ENV=...` */
        if (d == SECRET_INJECT && env_name_valid(s) && !env_name_reserved(s))
                return true;
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
                return rf_why(why, why_len, -EINVAL, "%s: out of range", m->key);
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

/* ---- injection (issue 15) ------------------------------------------------------- */

int secret_inject_host_parse(const char *s, size_t len, char *out, const char **why)
{
        bool plain = len >= 7 && !strncasecmp(s, "http://", 7);
        if (plain) {
                memcpy(out, "http://", 7);
                s += 7;
                len -= 7;
                out += 7;
        }
        const char *colon = memchr(s, ':', len);
        size_t hl = colon ? (size_t)(colon - s) : len;
        unsigned port = 0;

        *why = "expected HOST or HOST:PORT (a DNS name or an IPv4 address, no wildcards)";
        if (hl && s[hl - 1] == '.')
                hl--; /* a trailing dot names the same host */
        if (hl == 0 || hl > SECRET_INJECT_HOST_MAX)
                return -EINVAL;
        size_t label = 0;
        for (size_t i = 0; i < hl; i++) {
                char ch = s[i];
                if (ch >= 'A' && ch <= 'Z')
                        ch = (char)(ch - 'A' + 'a');
                if (ch == '.') {
                        if (label == 0 || s[i - 1] == '-')
                                return -EINVAL;
                        label = 0;
                } else if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                           (ch == '-' && label > 0)) {
                        if (++label > 63)
                                return -EINVAL;
                } else
                        return -EINVAL;
                out[i] = ch;
        }
        if (s[hl - 1] == '-' || s[hl - 1] == '.')
                return -EINVAL; /* an empty last label, or one ending in '-' */
        out[hl] = '\0';
        if (colon) {
                const char *d = colon + 1, *end = s + len;
                if (d == end || end - d > 5 || *d == '0') {
                        *why = "PORT must be 1-65535";
                        return -EINVAL;
                }
                for (; d < end; d++) {
                        if (*d < '0' || *d > '9') {
                                *why = "PORT must be 1-65535";
                                return -EINVAL;
                        }
                        port = port * 10 + (unsigned)(*d - '0');
                }
                if (port > 65535) {
                        *why = "PORT must be 1-65535";
                        return -EINVAL;
                }
                snprintf(out + hl, 8, ":%u", port);
        }
        if (plain && (port == 0 || port == 443)) {
                *why = "http://HOST:PORT needs a port other than 443 (plaintext is an explicit "
                       "choice of port)";
                return -EINVAL;
        }
        return 0;
}

/* Peer text quoted in a one-line message: control bytes (and DEL) as '?',
 * at most 64 bytes. */
static const char *quoted(const char *k, char out[65])
{
        size_t i = 0;
        for (; k[i] && i < 64; i++)
                out[i] = (unsigned char)k[i] < 0x20 || k[i] == 0x7f ? '?' : k[i];
        out[i] = '\0';
        return out;
}

static bool ph_char(char ch)
{
        return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
               ch == '_' || ch == '-';
}

static bool tchar(char ch)
{
        return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
               (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* "Name: text{}text": a token, then a value of visible ASCII and spaces
 * with exactly one {}; never a header that frames or routes the request. */
static bool header_template_ok(const char *s, size_t len, const char **why)
{
        static const char *const framing[] = {
                "host", "content-length", "transfer-encoding",   "connection", "upgrade",
                "te",   "trailer",        "proxy-authorization", "keep-alive"};
        const char *colon = memchr(s, ':', len);
        *why = "header: expected \"Name: text{}text\" (one {}, visible ASCII)";
        if (!colon || colon == s || len > SECRET_HEADER_MAX)
                return false;
        for (const char *p = s; p < colon; p++)
                if (!tchar(*p))
                        return false;
        for (size_t i = 0; i < ARRAY_SIZE(framing); i++)
                if (strlen(framing[i]) == (size_t)(colon - s) &&
                    !strncasecmp(s, framing[i], (size_t)(colon - s))) {
                        *why = "header: not a header that frames or routes the request";
                        return false;
                }
        size_t holes = 0;
        for (const char *p = colon + 1; p < s + len; p++) {
                if (*p < 0x20 || *p > 0x7e)
                        return false;
                if (p[0] == '{' && p + 1 < s + len && p[1] == '}')
                        holes++;
        }
        return holes == 1;
}

static int inject_members(const struct json_node *m, struct secret_binding *b, char *why,
                          size_t why_len)
{
        const char *w;
        char q[65];
        if (!strcmp(m->key, "env")) {
                if (m->type != JSON_STRING || m->len > SECRET_TARGET_MAX ||
                    !target_valid(SECRET_ENV, m->str, &w))
                        return rf_why(why, why_len, -EINVAL, "env: %s",
                                      m->type != JSON_STRING       ? "expected a string"
                                      : m->len > SECRET_TARGET_MAX ? "too long"
                                                                   : w);
                memcpy(b->env, m->str, m->len + 1);
                return 0;
        }
        if (!strcmp(m->key, "hosts")) {
                if (m->type != JSON_ARRAY || m->n_items == 0)
                        return rf_why(why, why_len, -EINVAL,
                                      "hosts: expected a non-empty array of \"HOST[:PORT]\"");
                if (m->n_items > SECRET_INJECT_HOSTS_MAX)
                        return rf_why(why, why_len, -E2BIG, "hosts: more than %d entries",
                                      SECRET_INJECT_HOSTS_MAX);
                for (size_t i = 0; i < m->n_items; i++) {
                        const struct json_node *e = m->items[i];
                        char h[SECRET_INJECT_ENTRY_MAX + 1];
                        if (e->type != JSON_STRING ||
                            secret_inject_host_parse(e->str, e->len, h, &w) < 0)
                                return rf_why(why, why_len, -EINVAL, "hosts[%zu]: %s", i,
                                              e->type != JSON_STRING ? "expected a string" : w);
                        int r = add_arg(&b->hosts, &b->n_hosts, SECRET_INJECT_HOSTS_MAX, h,
                                        strlen(h));
                        if (r < 0)
                                return rf_why(why, why_len, r, "out of memory");
                }
                return 0;
        }
        if (!strcmp(m->key, "header")) {
                if (m->type != JSON_STRING || !header_template_ok(m->str, m->len, &w))
                        return rf_why(why, why_len, -EINVAL, "%s",
                                      m->type != JSON_STRING ? "header: expected a string" : w);
                memcpy(b->header, m->str, m->len + 1);
                return 0;
        }
        if (!strcmp(m->key, "basic")) {
                /* RFC 7617: a user-id holds no ':'; visible ASCII only, so
                 * nothing in it can end the header or hide in whitespace */
                bool ok = m->type == JSON_STRING && m->len >= 1 &&
                          m->len <= SECRET_BASIC_USER_MAX && strlen(m->str) == m->len;
                for (size_t i = 0; ok && i < m->len; i++)
                        ok = m->str[i] > 0x20 && m->str[i] < 0x7f && m->str[i] != ':';
                if (!ok)
                        return rf_why(why, why_len, -EINVAL,
                                      "basic: a user name of 1-%d visible ASCII characters "
                                      "without ':' (the value is the password)",
                                      SECRET_BASIC_USER_MAX);
                memcpy(b->basic, m->str, m->len + 1);
                return 0;
        }
        if (!strcmp(m->key, "query")) {
                bool ok = m->type == JSON_STRING && m->len >= 1 && m->len <= SECRET_QUERY_MAX;
                for (size_t i = 0; ok && i < m->len; i++) {
                        char ch = m->str[i];
                        ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                             (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.';
                }
                if (!ok)
                        return rf_why(
                                why, why_len, -EINVAL,
                                "query: a parameter name of 1-%d characters A-Z a-z 0-9 _ - .",
                                SECRET_QUERY_MAX);
                memcpy(b->query, m->str, m->len + 1);
                return 0;
        }
        if (!strcmp(m->key, "body")) {
                if (m->type != JSON_TRUE && m->type != JSON_FALSE)
                        return rf_why(why, why_len, -EINVAL, "body: true or false");
                b->body = m->type == JSON_TRUE;
                return 0;
        }
        if (!strcmp(m->key, "on_exfil")) {
                if (m->type != JSON_STRING ||
                    (strcmp(m->str, "kill") != 0 && strcmp(m->str, "refuse") != 0))
                        return rf_why(why, why_len, -EINVAL,
                                      "on_exfil: \"refuse\" (the default) or \"kill\"");
                b->exfil_kill = !strcmp(m->str, "kill");
                return 0;
        }
        /* placeholder */
        if (m->type != JSON_OBJECT)
                return rf_why(why, why_len, -EINVAL,
                              "placeholder: expected {\"prefix\": \"...\", \"length\": N}");
        for (size_t i = 0; i < m->n_items; i++) {
                const struct json_node *e = m->items[i];
                if (!strcmp(e->key, "prefix")) {
                        if (e->type != JSON_STRING || e->len > SECRET_PH_PREFIX_MAX)
                                return rf_why(why, why_len, -EINVAL,
                                              "placeholder.prefix: a string of at most %d "
                                              "characters",
                                              SECRET_PH_PREFIX_MAX);
                        for (size_t k = 0; k < e->len; k++)
                                if (!ph_char(e->str[k]))
                                        return rf_why(why, why_len, -EINVAL,
                                                      "placeholder.prefix: only A-Z a-z 0-9 _ -");
                        memcpy(b->ph_prefix, e->str, e->len + 1);
                } else if (!strcmp(e->key, "length")) {
                        unsigned v = 0;
                        bool okn = e->type == JSON_NUMBER && e->len > 0 && e->len <= 3 &&
                                   e->str[0] != '0';
                        for (size_t k = 0; okn && k < e->len; k++) {
                                okn = e->str[k] >= '0' && e->str[k] <= '9';
                                v = v * 10 + (unsigned)(e->str[k] - '0');
                        }
                        if (!okn || v > SECRET_PH_LEN_MAX)
                                return rf_why(why, why_len, -EINVAL, "placeholder.length: 1-%d",
                                              SECRET_PH_LEN_MAX);
                        b->ph_length = v;
                } else
                        return rf_why(why, why_len, -EINVAL,
                                      "placeholder: unknown key \"%s\" (prefix, length)",
                                      quoted(e->key, q));
        }
        if (b->ph_length && b->ph_length < strlen(b->ph_prefix) + SECRET_PH_RANDOM_MIN)
                return rf_why(why, why_len, -EINVAL,
                              "placeholder.length: at least the prefix plus %d random "
                              "characters (128 bits)",
                              SECRET_PH_RANDOM_MIN);
        return 0;
}

static bool inject_key(const char *k)
{
        return !strcmp(k, "env") || !strcmp(k, "hosts") || !strcmp(k, "header") ||
               !strcmp(k, "placeholder") || !strcmp(k, "on_exfil") || !strcmp(k, "query") ||
               !strcmp(k, "body") || !strcmp(k, "basic");
}

static int from_json(const struct json_node *obj, struct secret_binding *b, char *why,
                     size_t why_len)
{
        const struct json_node *name = NULL, *deliver = NULL, *from = NULL, *exec = NULL;
        int r;
        char q[65];

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
                } else if (inject_key(m->key)) {
                        if ((r = inject_members(m, b, why, why_len)) < 0)
                                return r;
                } else
                        return rf_why(why, why_len, -EINVAL,
                                      "unknown key \"%.64s\" (name, deliver, from, exec, "
                                      "pass_env, timeout, ttl; inject: env, hosts, header, "
                                      "basic, query, body, placeholder, on_exfil)",
                                      quoted(m->key, q));
        }
        if (!name || name->type != JSON_STRING)
                return rf_why(why, why_len, -EINVAL, "name: required, a string");
        if (!deliver || deliver->type != JSON_STRING)
                return rf_why(why, why_len, -EINVAL,
                              "deliver: required: \"env\", \"file\", \"broker\" or "
                              "\"inject\"");
        b->delivery = _SECRET_DELIVERY_MAX;
        for (int d = 0; d < _SECRET_DELIVERY_MAX; d++)
                if (!strcmp(deliver->str, delivery_names[d]))
                        b->delivery = (enum secret_delivery)d;
        if (b->delivery == _SECRET_DELIVERY_MAX)
                return rf_why(why, why_len, -EINVAL,
                              "deliver: \"env\", \"file\", \"broker\" or \"inject\"");
        const char *w;
        if (name->len > SECRET_TARGET_MAX || !target_valid(b->delivery, name->str, &w))
                return rf_why(why, why_len, -EINVAL, "name \"%s\": %s", quoted(name->str, q),
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
        if (b->delivery != SECRET_INJECT) {
                if (b->env[0] || b->n_hosts || b->header[0] || b->basic[0] || b->query[0] ||
                    b->body || b->ph_prefix[0] || b->ph_length || b->exfil_kill)
                        return rf_why(why, why_len, -EINVAL,
                                      "env, hosts, header, basic, query, body, placeholder and "
                                      "on_exfil apply to \"deliver\": \"inject\" only");
                return 0;
        }
        if (!b->n_hosts)
                return rf_why(why, why_len, -EINVAL,
                              "hosts: required for an injection (where the value may go)");
        if (b->header[0] && b->basic[0])
                return rf_why(why, why_len, -EINVAL,
                              "header and basic: one or the other (each sets the one header "
                              "the value goes into)");
        if (!b->env[0]) {
                if (strlen(b->name) > SECRET_TARGET_MAX || !target_valid(SECRET_ENV, b->name, &w))
                        return rf_why(why, why_len, -EINVAL,
                                      "env: required (the name is no variable name)");
                snprintf(b->env, sizeof b->env, "%s", b->name);
        }
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
        if (b->basic[0]) {
                put_key(&j, &first, "basic");
                json_buf_append_string(&j, b->basic, strlen(b->basic));
        }
        put_key(&j, &first, "deliver");
        json_buf_append_string(&j, secret_delivery_name(b->delivery),
                               strlen(secret_delivery_name(b->delivery)));
        if (b->env[0]) {
                put_key(&j, &first, "env");
                json_buf_append_string(&j, b->env, strlen(b->env));
        }
        if (b->source == SOURCE_EXEC) {
                put_key(&j, &first, "exec");
                json_buf_append_string_array(&j, b->argv, b->argc);
        } else {
                if (b->source == SOURCE_STORE && b->version)
                        snprintf(from, sizeof from, "store:%s@%u", b->key, b->version);
                else
                        snprintf(from, sizeof from, "%s:%s", secret_source_name(b->source), b->key);
                put_key(&j, &first, "from");
                json_buf_append_string(&j, from, strlen(from));
        }
        if (b->body) {
                put_key(&j, &first, "body");
                json_buf_append(&j, "true", 4);
        }
        if (b->header[0]) {
                put_key(&j, &first, "header");
                json_buf_append_string(&j, b->header, strlen(b->header));
        }
        if (b->n_hosts) {
                put_key(&j, &first, "hosts");
                json_buf_append_string_array(&j, b->hosts, b->n_hosts);
        }
        put_key(&j, &first, "name");
        json_buf_append_string(&j, b->name, strlen(b->name));
        if (b->exfil_kill) {
                put_key(&j, &first, "on_exfil");
                json_buf_append_string(&j, "kill", 4);
        }
        if (b->n_pass_env) {
                put_key(&j, &first, "pass_env");
                json_buf_append_string_array(&j, b->pass_env, b->n_pass_env);
        }
        if (b->ph_prefix[0] || b->ph_length) {
                bool f2 = true;
                put_key(&j, &first, "placeholder");
                if (b->ph_length) {
                        char n[16];
                        snprintf(n, sizeof n, "%u", b->ph_length);
                        put_key(&j, &f2, "length");
                        json_buf_append(&j, n, strlen(n));
                }
                if (b->ph_prefix[0]) {
                        put_key(&j, &f2, "prefix");
                        json_buf_append_string(&j, b->ph_prefix, strlen(b->ph_prefix));
                }
                json_buf_append(&j, "}", 1);
        }
        if (b->query[0]) {
                put_key(&j, &first, "query");
                json_buf_append_string(&j, b->query, strlen(b->query));
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

int secret_inject_cli(const char *arg, char **ret, char *why, size_t why_len)
{
        struct secret_binding b = {.delivery = SECRET_INJECT};
        const char *eq = strchr(arg, '='), *at = strrchr(arg, '@'), *w;
        char *src = NULL;
        int r;

        *ret = NULL;
        if (!eq || eq == arg || (size_t)(eq - arg) > SECRET_TARGET_MAX || !at || at < eq)
                return rf_why(why, why_len, -EINVAL,
                              "expected ENV=SOURCE@HOST[:PORT][,HOST[:PORT]...]");
        memcpy(b.name, arg, (size_t)(eq - arg));
        b.name[eq - arg] = '\0';
        if (!target_valid(SECRET_ENV, b.name, &w))
                return rf_why(why, why_len, -EINVAL, "%s: %s", b.name, w);
        snprintf(b.env, sizeof b.env, "%s", b.name);
        if (!(src = strndup(eq + 1, (size_t)(at - eq - 1))))
                return rf_why(why, why_len, -ENOMEM, "out of memory");
        r = secret_source_parse(src, &b, &w);
        free(src);
        if (r < 0) {
                secret_binding_clear(&b);
                return rf_why(why, why_len, r, "%s", w);
        }
        for (const char *p = at + 1;;) {
                const char *comma = strchr(p, ',');
                size_t len = comma ? (size_t)(comma - p) : strlen(p);
                char h[SECRET_INJECT_ENTRY_MAX + 1];
                if (secret_inject_host_parse(p, len, h, &w) < 0) {
                        secret_binding_clear(&b);
                        return rf_why(why, why_len, -EINVAL, "host %.*s: %s",
                                      (int)(len > 64 ? 64 : len), p, w);
                }
                if ((r = add_arg(&b.hosts, &b.n_hosts, SECRET_INJECT_HOSTS_MAX, h, strlen(h))) <
                    0) {
                        secret_binding_clear(&b);
                        return rf_why(why, why_len, r,
                                      r == -E2BIG ? "more than 16 hosts" : "out of memory");
                }
                if (!comma)
                        break;
                p = comma + 1;
        }
        r = secret_binding_to_json(&b, ret);
        secret_binding_clear(&b);
        return r < 0 ? rf_why(why, why_len, r, "out of memory") : 0;
}
