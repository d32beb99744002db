/*
 * runwire.c — the daemon's run request to the supervisor it starts:
 * encoder and strict, bounded decoder (runwire.h has the format).
 *
 * Pure: bytes in, struct out; no I/O, no globals. The decoder takes the
 * document as untrusted even though only root's daemon writes it (the
 * memfd is the one way in; the fuzz target holds it to that): every key is
 * known, every type checked, every count bounded before it is used.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "shared/json.h"
#include "shared/macro.h"
#include "supervisor/runwire.h"

static bool uuid_ok(const char *s, size_t len)
{
        if (len != RF_RUN_ID_LEN)
                return false;
        for (size_t i = 0; i < len; i++) {
                bool dash = i == 8 || i == 13 || i == 18 || i == 23;
                char c = s[i];
                if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
                        return false;
        }
        return true;
}

static void put_key(struct json_buf *b, const char *key)
{
        json_buf_append(b, ",", 1);
        json_buf_append_string(b, key, strlen(key));
        json_buf_append(b, ":", 1);
}

static void put_uint(struct json_buf *b, const char *key, uint64_t v)
{
        put_key(b, key);
        json_buf_append_uint(b, v);
}

static void put_bool(struct json_buf *b, const char *key, bool v)
{
        put_key(b, key);
        json_buf_append(b, v ? "true" : "false", v ? 4 : 5);
}

static void put_strings(struct json_buf *b, const char *key, char *const *s, size_t n)
{
        put_key(b, key);
        json_buf_append_string_array(b, s, n);
}

int run_wire_to_json(const struct run_wire *w, char **ret)
{
        if (!uuid_ok(w->run_id, strnlen(w->run_id, sizeof w->run_id)) || !w->state_dir ||
            w->state_dir[0] != '/' || w->caller_uid == UINT32_MAX || !w->log_max || !w->overlay ||
            !w->argc || !w->argv)
                return -EINVAL;
        if (w->argc > RUN_WIRE_ARGV_MAX || w->n_profiles > RUN_WIRE_PROFILES_MAX)
                return -E2BIG;
        for (size_t i = 0; i < w->n_profiles; i++)
                if (!policy_profile_name_valid(w->profiles[i]))
                        return -EINVAL;
        _cleanup_free_ char *pol = NULL;
        int r = policy_to_json(w->overlay, &pol);
        if (r < 0)
                return r;
        struct json_buf b = {0};
        json_buf_append(&b, "{\"version\":", 11);
        json_buf_append_uint(&b, RUN_WIRE_VERSION);
        put_key(&b, "run");
        json_buf_append_string(&b, w->run_id, strlen(w->run_id));
        put_key(&b, "state_dir");
        json_buf_append_string(&b, w->state_dir, strlen(w->state_dir));
        put_uint(&b, "caller_uid", w->caller_uid);
        if (w->expect_ws) {
                put_key(&b, "workspace_inode");
                json_buf_append(&b, "{\"dev\":", 7);
                json_buf_append_uint(&b, w->ws_dev);
                json_buf_append(&b, ",\"ino\":", 7);
                json_buf_append_uint(&b, w->ws_ino);
                json_buf_append(&b, "}", 1);
        }
        put_uint(&b, "log_max", w->log_max);
        put_bool(&b, "mask_output", w->mask_output);
        put_bool(&b, "keep_state", w->keep_state);
        put_key(&b, "policy");
        json_buf_append(&b, pol, strlen(pol));
        put_strings(&b, "profiles", w->profiles, w->n_profiles);
        put_strings(&b, "argv", w->argv, w->argc);
        json_buf_append(&b, "}", 1);
        if (!b.error && b.len > JSON_INPUT_MAX)
                b.error = -E2BIG;
        if (b.error) {
                r = b.error;
                json_buf_done(&b);
                return r;
        }
        *ret = b.data;
        return 0;
}

/* ---- decoding ------------------------------------------------------------ */

static int fail(struct rf_error *err, const struct json_node *v, const char *key, int code,
                const char *msg)
{
        rf_error_set(err, code, "run request: %s", msg);
        if (err) {
                err->line = v ? v->line : 0;
                err->col = v ? v->col : 0;
                snprintf(err->keypath, sizeof err->keypath, "%s", key);
        }
        return code;
}

static int get_uint(const struct json_node *v, const char *key, uint64_t max, uint64_t *out,
                    struct rf_error *err)
{
        if (v->type != JSON_NUMBER || json_number_uint64(v, out) < 0 || *out > max)
                return fail(err, v, key, -EINVAL, "not an unsigned integer in range");
        return 0;
}

static int get_bool(const struct json_node *v, const char *key, bool *out, struct rf_error *err)
{
        if (!json_is_bool(v))
                return fail(err, v, key, -EINVAL, "not a boolean");
        *out = v->type == JSON_TRUE;
        return 0;
}

/* An array of strings into a malloc'd NULL-terminated copy. */
static int get_strings(const struct json_node *v, const char *key, size_t max, char ***out,
                       size_t *n, struct rf_error *err)
{
        if (v->type != JSON_ARRAY)
                return fail(err, v, key, -EINVAL, "not an array");
        if (v->n_items > max)
                return fail(err, v, key, -E2BIG, "too many elements");
        char **s = calloc(v->n_items + 1, sizeof *s);
        if (!s)
                return -ENOMEM;
        *out = s; /* run_wire_clear frees what was copied */
        for (size_t i = 0; i < v->n_items; i++) {
                const struct json_node *e = v->items[i];
                if (e->type != JSON_STRING)
                        return fail(err, e, key, -EINVAL, "an element is not a string");
                if (!(s[i] = strdup(e->str)))
                        return -ENOMEM;
                (*n)++;
        }
        return 0;
}

enum wire_key {
        K_VERSION,
        K_RUN,
        K_STATE_DIR,
        K_CALLER_UID,
        K_WORKSPACE_INODE,
        K_LOG_MAX,
        K_MASK_OUTPUT,
        K_KEEP_STATE,
        K_POLICY,
        K_PROFILES,
        K_ARGV,
        _K_MAX,
};

static const struct {
        const char *name;
        bool required;
} wire_keys[_K_MAX] = {
        [K_VERSION] = {"version", true},
        [K_RUN] = {"run", true},
        [K_STATE_DIR] = {"state_dir", true},
        [K_CALLER_UID] = {"caller_uid", true},
        [K_WORKSPACE_INODE] = {"workspace_inode", false},
        [K_LOG_MAX] = {"log_max", true},
        [K_MASK_OUTPUT] = {"mask_output", true},
        [K_KEEP_STATE] = {"keep_state", true},
        [K_POLICY] = {"policy", true},
        [K_PROFILES] = {"profiles", true},
        [K_ARGV] = {"argv", true},
};

static int decode(const struct json_node *k[_K_MAX], struct run_wire *w, struct rf_error *err)
{
        uint64_t u;
        int r;

        if ((r = get_uint(k[K_VERSION], "version", UINT32_MAX, &u, err)) < 0)
                return r;
        if (u != RUN_WIRE_VERSION)
                return fail(err, k[K_VERSION], "version", -EINVAL, "not this build's version");
        const struct json_node *v = k[K_RUN];
        if (v->type != JSON_STRING || !uuid_ok(v->str, v->len))
                return fail(err, v, "run", -EINVAL, "not a lower-case UUID");
        memcpy(w->run_id, v->str, RF_RUN_ID_LEN + 1);
        v = k[K_STATE_DIR];
        if (v->type != JSON_STRING || v->str[0] != '/')
                return fail(err, v, "state_dir", -EINVAL, "not an absolute path");
        if (!(w->state_dir = strdup(v->str)))
                return -ENOMEM;
        if ((r = get_uint(k[K_CALLER_UID], "caller_uid", UINT32_MAX - 1, &u, err)) < 0)
                return r;
        w->caller_uid = (uint32_t)u;
        if ((v = k[K_WORKSPACE_INODE])) {
                const struct json_node *dev = json_object_get(v, "dev");
                const struct json_node *ino = json_object_get(v, "ino");
                if (v->type != JSON_OBJECT || v->n_items != 2 || !dev || !ino)
                        return fail(err, v, "workspace_inode", -EINVAL,
                                    "not an object of dev and ino");
                if ((r = get_uint(dev, "workspace_inode.dev", UINT64_MAX, &w->ws_dev, err)) < 0 ||
                    (r = get_uint(ino, "workspace_inode.ino", UINT64_MAX, &w->ws_ino, err)) < 0)
                        return r;
                w->expect_ws = true;
        }
        if ((r = get_uint(k[K_LOG_MAX], "log_max", UINT64_MAX, &w->log_max, err)) < 0)
                return r;
        if (!w->log_max)
                return fail(err, k[K_LOG_MAX], "log_max", -EINVAL, "zero");
        if ((r = get_bool(k[K_MASK_OUTPUT], "mask_output", &w->mask_output, err)) < 0 ||
            (r = get_bool(k[K_KEEP_STATE], "keep_state", &w->keep_state, err)) < 0)
                return r;
        if (k[K_POLICY]->type != JSON_OBJECT)
                return fail(err, k[K_POLICY], "policy", -EINVAL, "not an object");
        if ((r = policy_from_json(k[K_POLICY], "run request", &w->overlay, err)) < 0)
                return r;
        if ((r = get_strings(k[K_PROFILES], "profiles", RUN_WIRE_PROFILES_MAX, &w->profiles,
                             &w->n_profiles, err)) < 0)
                return r;
        for (size_t i = 0; i < w->n_profiles; i++)
                if (!policy_profile_name_valid(w->profiles[i]))
                        return fail(err, k[K_PROFILES], "profiles", -EINVAL, "not a profile name");
        if ((r = get_strings(k[K_ARGV], "argv", RUN_WIRE_ARGV_MAX, &w->argv, &w->argc, err)) < 0)
                return r;
        if (!w->argc)
                return fail(err, k[K_ARGV], "argv", -EINVAL, "empty");
        return 0;
}

int run_wire_parse(const char *buf, size_t len, struct run_wire *w, struct rf_error *err)
{
        _cleanup_json_ struct json_node *root = NULL;
        const struct json_node *k[_K_MAX] = {0};
        const struct json_node *m;
        int r;

        memset(w, 0, sizeof *w);
        if ((r = json_parse(buf, len, &root, err)) < 0)
                return r;
        if (root->type != JSON_OBJECT)
                return fail(err, root, "", -EINVAL, "not a JSON object");
        JSON_FOREACH(m, root)
        {
                size_t i = 0;
                while (i < _K_MAX && strcmp(wire_keys[i].name, m->key))
                        i++;
                if (i == _K_MAX)
                        return fail(err, m, m->key, -EINVAL, "unknown key");
                k[i] = m;
        }
        for (size_t i = 0; i < _K_MAX; i++)
                if (wire_keys[i].required && !k[i])
                        return fail(err, root, wire_keys[i].name, -EINVAL, "missing key");
        return decode(k, w, err);
}

void run_wire_clear(struct run_wire *w)
{
        free(w->state_dir);
        policy_free(w->overlay);
        for (size_t i = 0; w->profiles && w->profiles[i]; i++)
                free(w->profiles[i]);
        free(w->profiles);
        for (size_t i = 0; w->argv && w->argv[i]; i++)
                free(w->argv[i]);
        free(w->argv);
        memset(w, 0, sizeof *w);
}
