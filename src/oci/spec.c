/*
 * spec.c — config.json (OCI runtime-spec 1.x) into struct oci_spec.
 *
 * One reader per object of the spec, each a table of the keys it knows:
 * a key is read (type and shape checked, limits before allocation), or
 * refused as not supported (present and not empty: the container would
 * otherwise run with less than it asked for). Keys in no table are
 * ignored, as the spec requires of properties it does not define. Every
 * error names the key path ("linux.namespaces[2].type") and the position.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "oci/spec.h"
#include "shared/json.h"
#include "shared/macro.h"

typedef const struct json_node node_t;

/* ---- errors and key paths ---------------------------------------------------- */

static int fail(struct rf_error *err, node_t *n, const char *kp, int code, const char *fmt, ...)
        _printf_(5, 6);
static int fail(struct rf_error *err, node_t *n, const char *kp, int code, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        rf_error_vset(err, code, fmt, ap);
        va_end(ap);
        if (err) {
                snprintf(err->keypath, sizeof err->keypath, "%s", kp);
                if (n) {
                        err->line = n->line;
                        err->col = n->col;
                }
        }
        return code;
}

/* kp + "." + key into buf (kp may be buf itself) */
static const char *kp_key(char *buf, size_t size, const char *kp, const char *key)
{
        if (buf != kp)
                snprintf(buf, size, "%s", kp);
        json_keypath_append_key(buf, size, key, strlen(key));
        return buf;
}

static const char *kp_index(char *buf, size_t size, const char *kp, size_t i)
{
        if (buf != kp)
                snprintf(buf, size, "%s", kp);
        json_keypath_append_index(buf, size, i);
        return buf;
}

/* ---- typed getters: absent (NULL node) leaves the output alone ----------------- */

static int want_type(node_t *n, enum json_type t, const char *kp, struct rf_error *err)
{
        bool good = t == JSON_TRUE ? json_is_bool(n) : n->type == t;
        if (!good)
                return fail(err, n, kp, -EINVAL, "expected %s, got %s",
                            t == JSON_TRUE ? "a boolean" : json_type_name(t),
                            json_type_name(n->type));
        return 0;
}

static int get_str(node_t *obj, const char *key, const char *kp, const char **out,
                   struct rf_error *err)
{
        char p[RF_ERROR_PATH_MAX];
        node_t *n = json_object_get(obj, key);
        if (!n)
                return 0;
        int r = want_type(n, JSON_STRING, kp_key(p, sizeof p, kp, key), err);
        if (r == 0)
                *out = n->str;
        return r;
}

static int get_bool(node_t *obj, const char *key, const char *kp, bool *out, struct rf_error *err)
{
        char p[RF_ERROR_PATH_MAX];
        node_t *n = json_object_get(obj, key);
        if (!n)
                return 0;
        int r = want_type(n, JSON_TRUE, kp_key(p, sizeof p, kp, key), err);
        if (r == 0)
                *out = n->type == JSON_TRUE;
        return r;
}

static int get_u64(node_t *obj, const char *key, const char *kp, uint64_t max, uint64_t *out,
                   bool *has, struct rf_error *err)
{
        char p[RF_ERROR_PATH_MAX];
        node_t *n = json_object_get(obj, key);
        if (!n)
                return 0;
        uint64_t v;
        if (json_number_uint64(n, &v) < 0 || v > max)
                return fail(err, n, kp_key(p, sizeof p, kp, key), -EINVAL,
                            "expected an integer from 0 to %llu", (unsigned long long)max);
        *out = v;
        if (has)
                *has = true;
        return 0;
}

static int get_u32(node_t *obj, const char *key, const char *kp, uint32_t *out, bool *has,
                   struct rf_error *err)
{
        uint64_t v = 0;
        bool got = false;
        int r = get_u64(obj, key, kp, UINT32_MAX, &v, &got, err);
        if (r == 0 && got) {
                *out = (uint32_t)v;
                if (has)
                        *has = true;
        }
        return r;
}

/* A limit in the spec's int64 where -1 (or any negative) means none: 0. */
static int get_limit(node_t *obj, const char *key, const char *kp, uint64_t *out,
                     struct rf_error *err)
{
        char p[RF_ERROR_PATH_MAX];
        node_t *n = json_object_get(obj, key);
        if (!n)
                return 0;
        int64_t v;
        if (json_number_int64(n, &v) < 0)
                return fail(err, n, kp_key(p, sizeof p, kp, key), -EINVAL, "expected an integer");
        *out = v < 0 ? 0 : (uint64_t)v;
        return 0;
}

/* An array of strings: *out NULL-terminated (allocated), *n entries. */
static int get_strv(node_t *obj, const char *key, const char *kp, size_t max, const char ***out,
                    size_t *n, struct rf_error *err)
{
        char p[RF_ERROR_PATH_MAX], q[RF_ERROR_PATH_MAX];
        node_t *a = json_object_get(obj, key), *e;
        if (!a)
                return 0;
        kp_key(p, sizeof p, kp, key);
        int r = want_type(a, JSON_ARRAY, p, err);
        if (r < 0)
                return r;
        if (a->n_items > max)
                return fail(err, a, p, -E2BIG, "more than %zu entries", max);
        const char **v = calloc(a->n_items + 1, sizeof *v);
        if (!v)
                return fail(err, a, p, -ENOMEM, "out of memory");
        size_t k = 0;
        JSON_FOREACH(e, a)
        {
                if ((r = want_type(e, JSON_STRING, kp_index(q, sizeof q, p, k), err)) < 0) {
                        free(v);
                        return r;
                }
                v[k++] = e->str;
        }
        *out = v;
        *n = k;
        return 0;
}

/* Present and not empty (null, "", [], {} and false count as empty): the
 * field asks for something ringfence-oci does not do. */
static int unsupported(node_t *obj, const char *key, const char *kp, struct rf_error *err)
{
        char p[RF_ERROR_PATH_MAX];
        node_t *n = json_object_get(obj, key);
        if (!n || n->type == JSON_NULL || n->type == JSON_FALSE ||
            (n->type == JSON_STRING && n->len == 0) ||
            ((n->type == JSON_ARRAY || n->type == JSON_OBJECT) && n->n_items == 0))
                return 0;
        return fail(err, n, kp_key(p, sizeof p, kp, key), -EOPNOTSUPP,
                    "not supported by ringfence-oci (see docs/OCI.md)");
}

static int unsupported_list(node_t *obj, const char *const *keys, size_t n, const char *kp,
                            struct rf_error *err)
{
        for (size_t i = 0; i < n; i++) {
                int r = unsupported(obj, keys[i], kp, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int want_object(node_t *obj, const char *key, const char *kp, node_t **out,
                       struct rf_error *err)
{
        char p[RF_ERROR_PATH_MAX];
        *out = json_object_get(obj, key);
        if (!*out || (*out)->type == JSON_NULL) {
                *out = NULL;
                return 0;
        }
        return want_type(*out, JSON_OBJECT, kp_key(p, sizeof p, kp, key), err);
}

/* An absolute path without "." or ".." components (mount destinations,
 * masked and read-only paths are resolved inside the root anyway; one that
 * names a parent is a config error, said as such). */
static bool path_clean_absolute(const char *s)
{
        if (s[0] != '/' || strlen(s) >= 4096)
                return false;
        for (const char *c = s; *c;) {
                while (*c == '/')
                        c++;
                size_t l = strcspn(c, "/");
                if ((l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                c += l;
        }
        return true;
}

static int want_path(node_t *n, const char *s, const char *kp, struct rf_error *err)
{
        if (!path_clean_absolute(s))
                return fail(err, n, kp, -EINVAL,
                            "expected an absolute path without \".\" or \"..\" components");
        return 0;
}

/* ---- process ------------------------------------------------------------------ */

static const struct {
        const char *name;
        int resource;
} rlimit_names[] = {
        {"RLIMIT_AS", RLIMIT_AS},
        {"RLIMIT_CORE", RLIMIT_CORE},
        {"RLIMIT_CPU", RLIMIT_CPU},
        {"RLIMIT_DATA", RLIMIT_DATA},
        {"RLIMIT_FSIZE", RLIMIT_FSIZE},
        {"RLIMIT_LOCKS", RLIMIT_LOCKS},
        {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},
        {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE},
        {"RLIMIT_NICE", RLIMIT_NICE},
        {"RLIMIT_NOFILE", RLIMIT_NOFILE},
        {"RLIMIT_NPROC", RLIMIT_NPROC},
        {"RLIMIT_RSS", RLIMIT_RSS},
        {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},
        {"RLIMIT_RTTIME", RLIMIT_RTTIME},
        {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
        {"RLIMIT_STACK", RLIMIT_STACK},
};

static int read_rlimits(struct oci_spec *s, node_t *proc, struct rf_error *err)
{
        char p[RF_ERROR_PATH_MAX], q[RF_ERROR_PATH_MAX];
        node_t *a = json_object_get(proc, "rlimits"), *e;
        int r;
        if (!a)
                return 0;
        kp_key(p, sizeof p, "process", "rlimits");
        if ((r = want_type(a, JSON_ARRAY, p, err)) < 0)
                return r;
        if (a->n_items > OCI_RLIMITS_MAX)
                return fail(err, a, p, -E2BIG, "more than %d entries", OCI_RLIMITS_MAX);
        JSON_FOREACH(e, a)
        {
                struct oci_rlimit *l = &s->rlimits[s->n_rlimits];
                const char *type = NULL;
                kp_index(q, sizeof q, p, s->n_rlimits);
                if ((r = want_type(e, JSON_OBJECT, q, err)) < 0 ||
                    (r = get_str(e, "type", q, &type, err)) < 0 ||
                    (r = get_u64(e, "hard", q, UINT64_MAX, &l->hard, NULL, err)) < 0 ||
                    (r = get_u64(e, "soft", q, UINT64_MAX, &l->soft, NULL, err)) < 0)
                        return r;
                l->resource = -1;
                for (size_t i = 0; type && i < ARRAY_SIZE(rlimit_names); i++)
                        if (!strcmp(type, rlimit_names[i].name))
                                l->resource = rlimit_names[i].resource;
                if (l->resource < 0)
                        return fail(err, e, q, -EINVAL, "type: an RLIMIT_* name");
                if (l->soft > l->hard)
                        return fail(err, e, q, -EINVAL, "soft above hard");
                for (size_t i = 0; i < s->n_rlimits; i++)
                        if (s->rlimits[i].resource == l->resource)
                                return fail(err, e, q, -EINVAL, "%s given twice", type);
                s->n_rlimits++;
        }
        return 0;
}

static int read_caps(struct oci_spec *s, node_t *proc, struct rf_error *err)
{
        static const char *const sets[_OCI_CAPS_COUNT] = {[OCI_CAPS_BOUNDING] = "bounding",
                                                          [OCI_CAPS_EFFECTIVE] = "effective",
                                                          [OCI_CAPS_INHERITABLE] = "inheritable",
                                                          [OCI_CAPS_PERMITTED] = "permitted",
                                                          [OCI_CAPS_AMBIENT] = "ambient"};
        char p[RF_ERROR_PATH_MAX], q[RF_ERROR_PATH_MAX];
        node_t *c;
        int r;

        kp_key(p, sizeof p, "process", "capabilities");
        if ((r = want_object(proc, "capabilities", "process", &c, err)) < 0 || !c)
                return r;
        s->has_caps = true;
        for (size_t i = 0; i < _OCI_CAPS_COUNT; i++) {
                if ((r = get_strv(c, sets[i], p, OCI_CAPS_MAX, &s->caps[i], &s->n_caps[i], err)) <
                    0)
                        return r;
                for (size_t k = 0; k < s->n_caps[i]; k++)
                        if (strncmp(s->caps[i][k], "CAP_", 4) != 0 || strlen(s->caps[i][k]) > 40)
                                return fail(
                                        err, json_object_get(c, sets[i]),
                                        kp_index(q, sizeof q, kp_key(q, sizeof q, p, sets[i]), k),
                                        -EINVAL, "expected a CAP_* name");
        }
        return 0;
}

static int read_process(struct oci_spec *s, node_t *doc, struct rf_error *err)
{
        static const char *const not_supported[] = {"apparmorProfile", "selinuxLabel", "ioPriority",
                                                    "scheduler", "execCPUAffinity"};
        char p[RF_ERROR_PATH_MAX];
        node_t *proc, *user;
        int r;

        if ((r = want_object(doc, "process", "", &proc, err)) < 0 || !proc)
                return r;
        s->has_process = true;
        if ((r = unsupported_list(proc, not_supported, ARRAY_SIZE(not_supported), "process", err)) <
                    0 ||
            (r = get_bool(proc, "terminal", "process", &s->terminal, err)) < 0 ||
            (r = get_strv(proc, "args", "process", OCI_ARGS_MAX, &s->args, &s->n_args, err)) < 0 ||
            (r = get_strv(proc, "env", "process", OCI_ENV_MAX, &s->env, &s->n_env, err)) < 0 ||
            (r = get_str(proc, "cwd", "process", &s->cwd, err)) < 0 ||
            (r = get_bool(proc, "noNewPrivileges", "process", &s->no_new_privileges, err)) < 0)
                return r;
        node_t *oom = json_object_get(proc, "oomScoreAdj");
        if (oom) {
                if (json_number_int64(oom, &s->oom_score_adj) < 0 || s->oom_score_adj < -1000 ||
                    s->oom_score_adj > 1000)
                        return fail(err, oom, kp_key(p, sizeof p, "process", "oomScoreAdj"),
                                    -EINVAL, "expected an integer from -1000 to 1000");
                s->has_oom_score_adj = true;
        }
        if (!s->cwd)
                return fail(err, proc, "process", -EINVAL, "cwd: required");
        if (s->cwd[0] != '/')
                return fail(err, json_object_get(proc, "cwd"), "process.cwd", -EINVAL,
                            "expected an absolute path");
        for (size_t i = 0; i < s->n_env; i++)
                if (!strchr(s->env[i], '=') || s->env[i][0] == '=')
                        return fail(err, json_object_get(proc, "env"), "process.env", -EINVAL,
                                    "entry %zu: expected NAME=VALUE", i);
        kp_key(p, sizeof p, "process", "user");
        if ((r = want_object(proc, "user", "process", &user, err)) < 0)
                return r;
        if (!user)
                return fail(err, proc, "process", -EINVAL, "user: required");
        bool has_uid = false, has_gid = false;
        if ((r = get_u32(user, "uid", p, &s->uid, &has_uid, err)) < 0 ||
            (r = get_u32(user, "gid", p, &s->gid, &has_gid, err)) < 0 ||
            (r = get_u32(user, "umask", p, &s->umask, &s->has_umask, err)) < 0)
                return r;
        if (!has_uid || !has_gid)
                return fail(err, user, p, -EINVAL, "uid and gid: required");
        if (s->has_umask && s->umask > 0777)
                return fail(err, json_object_get(user, "umask"), "process.user.umask", -EINVAL,
                            "expected a mode from 0 to 0777");
        node_t *g = json_object_get(user, "additionalGids"), *e;
        if (g) {
                char q[RF_ERROR_PATH_MAX];
                kp_key(q, sizeof q, p, "additionalGids");
                if ((r = want_type(g, JSON_ARRAY, q, err)) < 0)
                        return r;
                if (g->n_items > OCI_GIDS_MAX)
                        return fail(err, g, q, -E2BIG, "more than %d entries", OCI_GIDS_MAX);
                JSON_FOREACH(e, g)
                {
                        uint64_t v;
                        if (json_number_uint64(e, &v) < 0 || v > UINT32_MAX)
                                return fail(err, e, q, -EINVAL, "expected gids");
                        s->gids[s->n_gids++] = (uint32_t)v;
                }
        }
        if ((r = read_caps(s, proc, err)) < 0 || (r = read_rlimits(s, proc, err)) < 0)
                return r;
        return 0;
}

/* ---- root, mounts, hooks, annotations --------------------------------------- */

static int read_root(struct oci_spec *s, node_t *doc, struct rf_error *err)
{
        node_t *root;
        int r;

        if ((r = want_object(doc, "root", "", &root, err)) < 0)
                return r;
        if (!root)
                return fail(err, doc, "", -EINVAL, "root: required");
        if ((r = get_str(root, "path", "root", &s->root_path, err)) < 0 ||
            (r = get_bool(root, "readonly", "root", &s->root_readonly, err)) < 0)
                return r;
        if (!s->root_path || !s->root_path[0])
                return fail(err, root, "root", -EINVAL, "path: required");
        return 0;
}

static int read_mounts(struct oci_spec *s, node_t *doc, struct rf_error *err)
{
        char p[RF_ERROR_PATH_MAX], q[RF_ERROR_PATH_MAX];
        node_t *a = json_object_get(doc, "mounts"), *e;
        int r;

        if (!a)
                return 0;
        if ((r = want_type(a, JSON_ARRAY, "mounts", err)) < 0)
                return r;
        if (a->n_items > OCI_MOUNTS_MAX)
                return fail(err, a, "mounts", -E2BIG, "more than %d mounts", OCI_MOUNTS_MAX);
        if (!(s->mounts = calloc(a->n_items ? a->n_items : 1, sizeof *s->mounts)))
                return fail(err, a, "mounts", -ENOMEM, "out of memory");
        JSON_FOREACH(e, a)
        {
                struct oci_mount *m = &s->mounts[s->n_mounts];
                const char **opts = NULL;
                size_t n_opts = 0;
                kp_index(p, sizeof p, "mounts", s->n_mounts);
                if ((r = want_type(e, JSON_OBJECT, p, err)) < 0 ||
                    (r = get_str(e, "destination", p, &m->destination, err)) < 0 ||
                    (r = get_str(e, "type", p, &m->type, err)) < 0 ||
                    (r = get_str(e, "source", p, &m->source, err)) < 0 ||
                    (r = unsupported(e, "uidMappings", p, err)) < 0 ||
                    (r = unsupported(e, "gidMappings", p, err)) < 0 ||
                    (r = get_strv(e, "options", p, OCI_MOUNT_OPTS_MAX, &opts, &n_opts, err)) < 0)
                        return r;
                if (n_opts)
                        memcpy(m->options, opts, n_opts * sizeof *opts);
                m->n_options = n_opts;
                free(opts);
                if (!m->destination)
                        return fail(err, e, p, -EINVAL, "destination: required");
                if ((r = want_path(json_object_get(e, "destination"), m->destination,
                                   kp_key(q, sizeof q, p, "destination"), err)) < 0)
                        return r;
                s->n_mounts++;
        }
        return 0;
}

static const char *const hook_stages[_OCI_HOOK_COUNT] = {
        [OCI_HOOK_PRESTART] = "prestart",
        [OCI_HOOK_CREATE_RUNTIME] = "createRuntime",
        [OCI_HOOK_CREATE_CONTAINER] = "createContainer",
        [OCI_HOOK_START_CONTAINER] = "startContainer",
        [OCI_HOOK_POSTSTART] = "poststart",
        [OCI_HOOK_POSTSTOP] = "poststop",
};

uint64_t oci_page_size_kb(const char *s)
{
        uint64_t n = 0;
        size_t i = 0;
        for (; s[i] >= '0' && s[i] <= '9' && i < 6; i++)
                n = n * 10 + (uint64_t)(s[i] - '0');
        if (i == 0 || n == 0)
                return 0;
        unsigned shift = s[i] == 'K' ? 0 : s[i] == 'M' ? 10 : s[i] == 'G' ? 20 : 99;
        if (shift == 99 || s[i + 1] != 'B' || s[i + 2] != '\0' || n > (16ULL << 20) >> shift)
                return 0;
        return n << shift;
}

const char *oci_hook_stage_name(enum oci_hook_stage st)
{
        return (unsigned)st < _OCI_HOOK_COUNT ? hook_stages[st] : "?";
}

static int read_hooks(struct oci_spec *s, node_t *doc, struct rf_error *err)
{
        char p[RF_ERROR_PATH_MAX], q[RF_ERROR_PATH_MAX];
        node_t *hooks, *e;
        int r;

        if ((r = want_object(doc, "hooks", "", &hooks, err)) < 0 || !hooks)
                return r;
        for (size_t st = 0; st < _OCI_HOOK_COUNT; st++) {
                node_t *a = json_object_get(hooks, hook_stages[st]);
                if (!a)
                        continue;
                kp_key(p, sizeof p, "hooks", hook_stages[st]);
                if ((r = want_type(a, JSON_ARRAY, p, err)) < 0)
                        return r;
                if (a->n_items > OCI_HOOKS_MAX)
                        return fail(err, a, p, -E2BIG, "more than %d hooks", OCI_HOOKS_MAX);
                if (!(s->hooks[st] = calloc(a->n_items ? a->n_items : 1, sizeof *s->hooks[st])))
                        return fail(err, a, p, -ENOMEM, "out of memory");
                JSON_FOREACH(e, a)
                {
                        struct oci_hook *h = &s->hooks[st][s->n_hooks[st]];
                        kp_index(q, sizeof q, p, s->n_hooks[st]);
                        if ((r = want_type(e, JSON_OBJECT, q, err)) < 0 ||
                            (r = get_str(e, "path", q, &h->path, err)) < 0 ||
                            (r = get_strv(e, "args", q, OCI_ARGS_MAX, &h->args, &h->n_args, err)) <
                                    0 ||
                            (r = get_strv(e, "env", q, OCI_ENV_MAX, &h->env, &h->n_env, err)) < 0 ||
                            (r = get_u64(e, "timeout", q, 86400, &h->timeout_s, NULL, err)) < 0) {
                                s->n_hooks[st]++; /* its arrays are freed with the spec */
                                return r;
                        }
                        s->n_hooks[st]++;
                        if (!h->path || h->path[0] != '/')
                                return fail(err, e, q, -EINVAL, "path: an absolute path, required");
                        node_t *t = json_object_get(e, "timeout");
                        if (t && h->timeout_s == 0)
                                return fail(err, t, q, -EINVAL, "timeout: greater than zero");
                }
        }
        return 0;
}

/* An object of string values into *out (n entries). */
static int read_kv(node_t *obj, const char *key, const char *kp, size_t max, struct oci_kv **out,
                   size_t *n, struct rf_error *err)
{
        char p[RF_ERROR_PATH_MAX], q[RF_ERROR_PATH_MAX];
        node_t *o, *e;
        int r;

        if ((r = want_object(obj, key, kp, &o, err)) < 0 || !o)
                return r;
        kp_key(p, sizeof p, kp, key);
        if (o->n_items > max)
                return fail(err, o, p, -E2BIG, "more than %zu entries", max);
        if (!(*out = calloc(o->n_items ? o->n_items : 1, sizeof **out)))
                return fail(err, o, p, -ENOMEM, "out of memory");
        JSON_FOREACH(e, o)
        {
                if ((r = want_type(e, JSON_STRING, kp_key(q, sizeof q, p, e->key), err)) < 0)
                        return r;
                (*out)[*n].key = e->key;
                (*out)[(*n)++].value = e->str;
        }
        return 0;
}

/* ---- linux ------------------------------------------------------------------- */

static const char *const ns_names[_OCI_NS_COUNT] = {
        [OCI_NS_PID] = "pid",       [OCI_NS_NETWORK] = "network", [OCI_NS_MOUNT] = "mount",
        [OCI_NS_IPC] = "ipc",       [OCI_NS_UTS] = "uts",         [OCI_NS_USER] = "user",
        [OCI_NS_CGROUP] = "cgroup", [OCI_NS_TIME] = "time",
};

const char *oci_ns_name(enum oci_ns t)
{
        return t >= 0 && t < _OCI_NS_COUNT ? ns_names[t] : NULL;
}

static int read_namespaces(struct oci_spec *s, node_t *lx, struct rf_error *err)
{
        char p[RF_ERROR_PATH_MAX];
        node_t *a = json_object_get(lx, "namespaces"), *e;
        int r;

        if (!a)
                return 0;
        if ((r = want_type(a, JSON_ARRAY, "linux.namespaces", err)) < 0)
                return r;
        if (a->n_items > OCI_NS_MAX)
                return fail(err, a, "linux.namespaces", -E2BIG, "more than %d namespaces",
                            OCI_NS_MAX);
        JSON_FOREACH(e, a)
        {
                struct oci_namespace *ns = &s->namespaces[s->n_namespaces];
                const char *type = NULL;
                kp_index(p, sizeof p, "linux.namespaces", s->n_namespaces);
                ns->path = NULL;
                if ((r = want_type(e, JSON_OBJECT, p, err)) < 0 ||
                    (r = get_str(e, "type", p, &type, err)) < 0 ||
                    (r = get_str(e, "path", p, &ns->path, err)) < 0)
                        return r;
                ns->type = _OCI_NS_INVALID;
                for (int t = 0; type && t < _OCI_NS_COUNT; t++)
                        if (!strcmp(type, ns_names[t]))
                                ns->type = (enum oci_ns)t;
                if (ns->type == _OCI_NS_INVALID)
                        return fail(err, e, p, -EINVAL,
                                    "type: one of pid, network, mount, ipc, uts, user, cgroup, "
                                    "time");
                if (ns->type == OCI_NS_TIME)
                        return fail(err, e, p, -EOPNOTSUPP,
                                    "a time namespace is not supported by ringfence-oci");
                for (size_t i = 0; i < s->n_namespaces; i++)
                        if (s->namespaces[i].type == ns->type)
                                return fail(err, e, p, -EINVAL, "%s given twice", type);
                if (ns->path && ns->path[0] == '\0')
                        ns->path = NULL;
                if (ns->path && ns->path[0] != '/')
                        return fail(err, e, p, -EINVAL, "path: an absolute path");
                s->n_namespaces++;
        }
        return 0;
}

static int read_idmaps(node_t *lx, const char *key, struct oci_idmap *out, size_t *n,
                       struct rf_error *err)
{
        char p[RF_ERROR_PATH_MAX], q[RF_ERROR_PATH_MAX];
        node_t *a = json_object_get(lx, key), *e;
        int r;

        if (!a)
                return 0;
        kp_key(p, sizeof p, "linux", key);
        if ((r = want_type(a, JSON_ARRAY, p, err)) < 0)
                return r;
        if (a->n_items > OCI_IDMAP_MAX)
                return fail(err, a, p, -E2BIG, "more than %d mappings", OCI_IDMAP_MAX);
        JSON_FOREACH(e, a)
        {
                struct oci_idmap *m = &out[*n];
                kp_index(q, sizeof q, p, *n);
                if ((r = want_type(e, JSON_OBJECT, q, err)) < 0 ||
                    (r = get_u32(e, "containerID", q, &m->container_id, NULL, err)) < 0 ||
                    (r = get_u32(e, "hostID", q, &m->host_id, NULL, err)) < 0 ||
                    (r = get_u32(e, "size", q, &m->size, NULL, err)) < 0)
                        return r;
                if (m->size == 0 || (uint64_t)m->container_id + m->size > (1ULL << 32) ||
                    (uint64_t)m->host_id + m->size > (1ULL << 32))
                        return fail(err, e, q, -EINVAL, "size: from 1, within 32-bit ids");
                (*n)++;
        }
        return 0;
}

static int read_devices(struct oci_spec *s, node_t *lx, struct rf_error *err)
{
        char p[RF_ERROR_PATH_MAX];
        node_t *a = json_object_get(lx, "devices"), *e;
        int r;

        if (!a)
                return 0;
        if ((r = want_type(a, JSON_ARRAY, "linux.devices", err)) < 0)
                return r;
        if (a->n_items > OCI_DEVICES_MAX)
                return fail(err, a, "linux.devices", -E2BIG, "more than %d devices",
                            OCI_DEVICES_MAX);
        if (!(s->devices = calloc(a->n_items ? a->n_items : 1, sizeof *s->devices)))
                return fail(err, a, "linux.devices", -ENOMEM, "out of memory");
        JSON_FOREACH(e, a)
        {
                struct oci_device *d = &s->devices[s->n_devices];
                const char *type = NULL;
                node_t *mj, *mn;
                kp_index(p, sizeof p, "linux.devices", s->n_devices);
                if ((r = want_type(e, JSON_OBJECT, p, err)) < 0 ||
                    (r = get_str(e, "type", p, &type, err)) < 0 ||
                    (r = get_str(e, "path", p, &d->path, err)) < 0 ||
                    (r = get_u32(e, "fileMode", p, &d->file_mode, &d->has_mode, err)) < 0 ||
                    (r = get_u32(e, "uid", p, &d->uid, &d->has_uid, err)) < 0 ||
                    (r = get_u32(e, "gid", p, &d->gid, &d->has_gid, err)) < 0)
                        return r;
                if (!type || strlen(type) != 1 || !strchr("cbup", type[0]))
                        return fail(err, e, p, -EINVAL, "type: one of c, b, u, p");
                d->type = type[0];
                if (!d->path || !path_clean_absolute(d->path) || strncmp(d->path, "/dev/", 5))
                        return fail(err, e, p, -EINVAL, "path: an absolute path beneath /dev");
                mj = json_object_get(e, "major");
                mn = json_object_get(e, "minor");
                if (d->type != 'p' && (!mj || !mn || json_number_int64(mj, &d->major) < 0 ||
                                       json_number_int64(mn, &d->minor) < 0 || d->major < 0 ||
                                       d->minor < 0 || d->major > 0xfff || d->minor > 0xfffff))
                        return fail(err, e, p, -EINVAL, "major, minor: device numbers, required");
                if (d->has_mode && d->file_mode > 07777)
                        return fail(err, e, p, -EINVAL, "fileMode: a mode without a file type");
                s->n_devices++;
        }
        return 0;
}

static int read_resources(struct oci_spec *s, node_t *lx, struct rf_error *err)
{
        static const char *const res_not[] = {"blockIO", "network", "rdma", "unified"};
        static const char *const mem_not[] = {
                "reservation",      "kernel",       "kernelTCP",        "swappiness",
                "disableOOMKiller", "useHierarchy", "checkBeforeUpdate"};
        static const char *const cpu_not[] = {"realtimeRuntime", "realtimePeriod", "idle", "burst"};
        char p[RF_ERROR_PATH_MAX];
        node_t *res, *mem, *pids, *cpu, *dev;
        int r;

        if ((r = want_object(lx, "resources", "linux", &res, err)) < 0 || !res)
                return r;
        const char *kp = "linux.resources";
        if ((r = unsupported_list(res, res_not, ARRAY_SIZE(res_not), kp, err)) < 0)
                return r;
        /* device cgroup rules: ringfence-oci never lets a container make a
         * node (no mknod in its user namespace); the devices it gets are
         * linux.devices, bound from the host. The rules' shape is checked. */
        dev = json_object_get(res, "devices");
        if (dev && (r = want_type(dev, JSON_ARRAY, "linux.resources.devices", err)) < 0)
                return r;
        /* huge page limits: read; ringfence-oci runs them only where the
         * host has no such pages to give (main.c) */
        node_t *hp = json_object_get(res, "hugepageLimits"), *e;
        if (hp) {
                kp_key(p, sizeof p, kp, "hugepageLimits");
                if ((r = want_type(hp, JSON_ARRAY, p, err)) < 0)
                        return r;
                if (hp->n_items > OCI_HUGEPAGES_MAX)
                        return fail(err, hp, p, -E2BIG, "more than %d", OCI_HUGEPAGES_MAX);
                JSON_FOREACH(e, hp)
                {
                        char q[RF_ERROR_PATH_MAX];
                        struct oci_hugepage *h = &s->hugepages[s->n_hugepages];
                        const char *size = NULL;
                        kp_index(q, sizeof q, p, s->n_hugepages);
                        if ((r = want_type(e, JSON_OBJECT, q, err)) < 0 ||
                            (r = get_str(e, "pageSize", q, &size, err)) < 0 ||
                            (r = get_u64(e, "limit", q, UINT64_MAX, &h->limit, NULL, err)) < 0)
                                return r;
                        if (!size || !(h->page_kb = oci_page_size_kb(size)))
                                return fail(err, e, q, -EINVAL,
                                            "pageSize: a size like 2MB or 1GB, required");
                        s->n_hugepages++;
                }
        }
        if ((r = want_object(res, "memory", kp, &mem, err)) < 0)
                return r;
        if (mem) {
                kp_key(p, sizeof p, kp, "memory");
                if ((r = unsupported_list(mem, mem_not, ARRAY_SIZE(mem_not), p, err)) < 0 ||
                    (r = get_limit(mem, "limit", p, &s->memory_limit, err)) < 0 ||
                    (r = get_limit(mem, "swap", p, &s->memory_swap, err)) < 0)
                        return r;
        }
        if ((r = want_object(res, "pids", kp, &pids, err)) < 0)
                return r;
        if (pids && (r = get_limit(pids, "limit", "linux.resources.pids", &s->pids_limit, err)) < 0)
                return r;
        if ((r = want_object(res, "cpu", kp, &cpu, err)) < 0)
                return r;
        if (cpu) {
                kp_key(p, sizeof p, kp, "cpu");
                node_t *quota = json_object_get(cpu, "quota");
                if ((r = unsupported_list(cpu, cpu_not, ARRAY_SIZE(cpu_not), p, err)) < 0 ||
                    (r = get_u64(cpu, "shares", p, 262144, &s->cpu_shares, NULL, err)) < 0 ||
                    (r = get_limit(cpu, "quota", p, &s->cpu_quota, err)) < 0 ||
                    (r = get_u64(cpu, "period", p, 1000000, &s->cpu_period, NULL, err)) < 0 ||
                    (r = get_str(cpu, "cpus", p, &s->cpu_cpus, err)) < 0 ||
                    (r = get_str(cpu, "mems", p, &s->cpu_mems, err)) < 0)
                        return r;
                s->has_cpu_quota = quota && s->cpu_quota > 0;
        }
        return 0;
}

static int read_seccomp(struct oci_spec *s, node_t *lx, struct rf_error *err)
{
        static const char *const sc_not[] = {"listenerPath", "listenerMetadata"};
        char p[RF_ERROR_PATH_MAX], q[RF_ERROR_PATH_MAX];
        node_t *sc, *a, *e;
        struct oci_seccomp *o = &s->seccomp;
        const char *kp = "linux.seccomp";
        int r;

        if ((r = want_object(lx, "seccomp", "linux", &sc, err)) < 0 || !sc)
                return r;
        o->present = true;
        if ((r = unsupported_list(sc, sc_not, ARRAY_SIZE(sc_not), kp, err)) < 0 ||
            (r = get_str(sc, "defaultAction", kp, &o->default_action, err)) < 0 ||
            (r = get_u32(sc, "defaultErrnoRet", kp, &o->default_errno_ret,
                         &o->has_default_errno_ret, err)) < 0 ||
            (r = get_strv(sc, "architectures", kp, 16, &o->architectures, &o->n_architectures,
                          err)) < 0 ||
            (r = get_strv(sc, "flags", kp, 8, &o->flags, &o->n_flags, err)) < 0)
                return r;
        if (!o->default_action || strncmp(o->default_action, "SCMP_ACT_", 9))
                return fail(err, sc, kp, -EINVAL, "defaultAction: an SCMP_ACT_* name, required");
        if (!(a = json_object_get(sc, "syscalls")))
                return 0;
        kp_key(p, sizeof p, kp, "syscalls");
        if ((r = want_type(a, JSON_ARRAY, p, err)) < 0)
                return r;
        if (a->n_items > OCI_SYSCALLS_MAX)
                return fail(err, a, p, -E2BIG, "more than %d entries", OCI_SYSCALLS_MAX);
        if (!(o->syscalls = calloc(a->n_items ? a->n_items : 1, sizeof *o->syscalls)))
                return fail(err, a, p, -ENOMEM, "out of memory");
        JSON_FOREACH(e, a)
        {
                struct oci_syscall *c = &o->syscalls[o->n_syscalls];
                kp_index(q, sizeof q, p, o->n_syscalls);
                if ((r = want_type(e, JSON_OBJECT, q, err)) < 0 ||
                    (r = get_strv(e, "names", q, OCI_SYSCALL_NAMES_MAX, &c->names, &c->n_names,
                                  err)) < 0) {
                        return r;
                }
                o->n_syscalls++; /* names freed with the spec from here */
                if ((r = get_str(e, "action", q, &c->action, err)) < 0 ||
                    (r = get_u32(e, "errnoRet", q, &c->errno_ret, &c->has_errno_ret, err)) < 0)
                        return r;
                if (!c->n_names)
                        return fail(err, e, q, -EINVAL, "names: at least one, required");
                if (!c->action || strncmp(c->action, "SCMP_ACT_", 9))
                        return fail(err, e, q, -EINVAL, "action: an SCMP_ACT_* name, required");
                node_t *args = json_object_get(e, "args"), *g;
                if (!args)
                        continue;
                char w[RF_ERROR_PATH_MAX];
                kp_key(w, sizeof w, q, "args");
                if ((r = want_type(args, JSON_ARRAY, w, err)) < 0)
                        return r;
                if (args->n_items > OCI_SYSCALL_ARGS_MAX)
                        return fail(err, args, w, -E2BIG, "more than %d conditions",
                                    OCI_SYSCALL_ARGS_MAX);
                JSON_FOREACH(g, args)
                {
                        static const char *const ops[] = {
                                NULL,          "SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE",
                                "SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ"};
                        struct oci_syscall_arg *x = &c->args[c->n_args];
                        const char *op = NULL;
                        uint64_t idx = 0;
                        char y[RF_ERROR_PATH_MAX];
                        kp_index(y, sizeof y, w, c->n_args);
                        if ((r = want_type(g, JSON_OBJECT, y, err)) < 0 ||
                            (r = get_u64(g, "index", y, 5, &idx, NULL, err)) < 0 ||
                            (r = get_u64(g, "value", y, UINT64_MAX, &x->value, NULL, err)) < 0 ||
                            (r = get_u64(g, "valueTwo", y, UINT64_MAX, &x->value_two, NULL, err)) <
                                    0 ||
                            (r = get_str(g, "op", y, &op, err)) < 0)
                                return r;
                        x->index = (unsigned)idx;
                        x->op = 0;
                        for (int k = 1; op && k < (int)ARRAY_SIZE(ops); k++)
                                if (!strcmp(op, ops[k]))
                                        x->op = k;
                        if (!x->op)
                                return fail(err, g, y, -EINVAL, "op: an SCMP_CMP_* name");
                        c->n_args++;
                }
        }
        return 0;
}

static int read_paths(node_t *lx, const char *key, const char ***out, size_t *n,
                      struct rf_error *err)
{
        char p[RF_ERROR_PATH_MAX];
        int r = get_strv(lx, key, "linux", OCI_PATHS_MAX, out, n, err);
        for (size_t i = 0; r == 0 && i < *n; i++)
                if (!path_clean_absolute((*out)[i]))
                        r = fail(err, json_object_get(lx, key),
                                 kp_index(p, sizeof p, kp_key(p, sizeof p, "linux", key), i),
                                 -EINVAL,
                                 "expected an absolute path without \".\" or \"..\" components");
        return r;
}

static int read_linux(struct oci_spec *s, node_t *doc, struct rf_error *err)
{
        static const char *const lx_not[] = {"intelRdt",    "personality",  "mountLabel",
                                             "timeOffsets", "memoryPolicy", "netDevices"};
        node_t *lx;
        int r;

        if ((r = want_object(doc, "linux", "", &lx, err)) < 0 || !lx)
                return r;
        if ((r = unsupported_list(lx, lx_not, ARRAY_SIZE(lx_not), "linux", err)) < 0 ||
            (r = read_namespaces(s, lx, err)) < 0 ||
            (r = read_idmaps(lx, "uidMappings", s->uid_mappings, &s->n_uid_mappings, err)) < 0 ||
            (r = read_idmaps(lx, "gidMappings", s->gid_mappings, &s->n_gid_mappings, err)) < 0 ||
            (r = read_devices(s, lx, err)) < 0 ||
            (r = get_str(lx, "cgroupsPath", "linux", &s->cgroups_path, err)) < 0 ||
            (r = read_resources(s, lx, err)) < 0 ||
            (r = read_kv(lx, "sysctl", "linux", OCI_SYSCTL_MAX, &s->sysctl, &s->n_sysctl, err)) <
                    0 ||
            (r = read_seccomp(s, lx, err)) < 0 ||
            (r = read_paths(lx, "maskedPaths", &s->masked_paths, &s->n_masked_paths, err)) < 0 ||
            (r = read_paths(lx, "readonlyPaths", &s->readonly_paths, &s->n_readonly_paths, err)) <
                    0 ||
            (r = get_str(lx, "rootfsPropagation", "linux", &s->rootfs_propagation, err)) < 0)
                return r;
        if (s->rootfs_propagation && s->rootfs_propagation[0] &&
            strcmp(s->rootfs_propagation, "private") && strcmp(s->rootfs_propagation, "rprivate") &&
            strcmp(s->rootfs_propagation, "slave") && strcmp(s->rootfs_propagation, "rslave"))
                return fail(err, json_object_get(lx, "rootfsPropagation"),
                            "linux.rootfsPropagation", -EOPNOTSUPP,
                            "only private and slave propagation are supported by ringfence-oci "
                            "(a container's mounts never reach the host)");
        bool user = false;
        for (size_t i = 0; i < s->n_namespaces; i++)
                user |= s->namespaces[i].type == OCI_NS_USER;
        if ((s->n_uid_mappings || s->n_gid_mappings) && !user)
                return fail(err, lx, "linux", -EINVAL,
                            "uidMappings/gidMappings without a user namespace");
        return 0;
}

/* ---- the document ------------------------------------------------------------ */

int oci_spec_parse(const char *buf, size_t len, struct oci_spec **ret, struct rf_error *err)
{
        static const char *const top_not[] = {"solaris", "windows", "vm", "zos"};
        _cleanup_(oci_spec_freep) struct oci_spec *s = calloc(1, sizeof *s);
        struct json_node *doc = NULL;
        int r;

        if (!s)
                return rf_error_set(err, -ENOMEM, "out of memory");
        if ((r = json_parse(buf, len, &doc, err)) < 0)
                return r;
        s->doc_ = doc;
        if ((r = want_type(doc, JSON_OBJECT, "", err)) < 0 ||
            (r = get_str(doc, "ociVersion", "", &s->oci_version, err)) < 0)
                return r;
        if (!s->oci_version)
                return fail(err, doc, "", -EINVAL, "ociVersion: required");
        if (strncmp(s->oci_version, "1.", 2) != 0)
                return fail(err, json_object_get(doc, "ociVersion"), "ociVersion", -EOPNOTSUPP,
                            "version %.40s: ringfence-oci reads runtime-spec 1.x", s->oci_version);
        if ((r = unsupported_list(doc, top_not, ARRAY_SIZE(top_not), "", err)) < 0 ||
            (r = read_process(s, doc, err)) < 0 || (r = read_root(s, doc, err)) < 0 ||
            (r = get_str(doc, "hostname", "", &s->hostname, err)) < 0 ||
            (r = get_str(doc, "domainname", "", &s->domainname, err)) < 0 ||
            (r = read_mounts(s, doc, err)) < 0 || (r = read_hooks(s, doc, err)) < 0 ||
            (r = read_kv(doc, "annotations", "", OCI_ANNOTATIONS_MAX, &s->annotations,
                         &s->n_annotations, err)) < 0 ||
            (r = read_linux(s, doc, err)) < 0)
                return r;
        if (s->hostname && strlen(s->hostname) > 64)
                return fail(err, json_object_get(doc, "hostname"), "hostname", -EINVAL,
                            "longer than 64 bytes");
        *ret = TAKE_PTR(s);
        return 0;
}

struct oci_spec *oci_spec_free(struct oci_spec *s)
{
        if (!s)
                return NULL;
        free(s->args);
        free(s->env);
        for (size_t i = 0; i < _OCI_CAPS_COUNT; i++)
                free(s->caps[i]);
        free(s->mounts);
        for (size_t st = 0; st < _OCI_HOOK_COUNT; st++) {
                for (size_t i = 0; i < s->n_hooks[st]; i++) {
                        free(s->hooks[st][i].args);
                        free(s->hooks[st][i].env);
                }
                free(s->hooks[st]);
        }
        free(s->annotations);
        free(s->devices);
        free(s->sysctl);
        for (size_t i = 0; i < s->seccomp.n_syscalls; i++)
                free(s->seccomp.syscalls[i].names);
        free(s->seccomp.syscalls);
        free(s->seccomp.architectures);
        free(s->seccomp.flags);
        free(s->masked_paths);
        free(s->readonly_paths);
        json_node_free(s->doc_);
        free(s);
        return NULL;
}

const char *oci_spec_annotation(const struct oci_spec *s, const char *key)
{
        for (size_t i = 0; i < s->n_annotations; i++)
                if (!strcmp(s->annotations[i].key, key))
                        return s->annotations[i].value;
        return NULL;
}
