/*
 * audit-record.c — the pure half of the audit log: reading one record line
 * and computing its hash. No I/O; fuzzed by tests/fuzz/fuzz_audit.c.
 *
 * A record line is a canonical JSON object: compact, keys sorted by byte
 * value, except `hash`, which is always the last member and is written
 * exactly as `,"hash":"<64 lower-case hex>"}`. The hash of a record is
 * SHA-256 over the line's bytes with that suffix replaced by `}` — the
 * exact bytes on disk, never a re-serialisation, so a reader cannot be
 * fooled by two encodings of one value.
 *
 * Threat notes: the line comes from a file an attacker may have edited.
 * The parser is strict (shared/json.c: no duplicate keys, valid UTF-8, no
 * trailing bytes) and bounded (AUDIT_RECORD_MAX before anything is parsed).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "audit/audit-internal.h"

const char audit_genesis_hash[65] =
        "0000000000000000000000000000000000000000000000000000000000000000";

bool audit_is_hex(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return s[n] == '\0';
}

int audit_sig_message(uint64_t seq, const char *hash_hex, char *buf, size_t len)
{
        int n = snprintf(buf, len, AUDIT_SIG_DOMAIN "\n%" PRIu64 "\n%s", seq, hash_hex);
        if (n < 0 || (size_t)n >= len)
                return -ENOBUFS;
        return n;
}

/* Where the `,"hash":"` suffix starts, or -EINVAL if the line lacks it. */
static int hash_suffix_start(const char *line, size_t len, size_t *start)
{
        static const char pre[] = ",\"hash\":\"";
        if (len < AUDIT_HASH_SUFFIX + 1)
                return -EINVAL;
        size_t s = len - AUDIT_HASH_SUFFIX;
        if (memcmp(line + s, pre, sizeof pre - 1) != 0 || line[len - 2] != '"' ||
            line[len - 1] != '}')
                return -EINVAL;
        for (size_t i = s + sizeof pre - 1; i < len - 2; i++)
                if (!((line[i] >= '0' && line[i] <= '9') || (line[i] >= 'a' && line[i] <= 'f')))
                        return -EINVAL;
        *start = s;
        return 0;
}

int audit_record_hash(const char *line, size_t len, char hex[65])
{
        size_t s;
        int r = hash_suffix_start(line, len, &s);
        if (r < 0)
                return r;
        unsigned char h[crypto_hash_sha256_BYTES];
        crypto_hash_sha256_state st;
        crypto_hash_sha256_init(&st);
        crypto_hash_sha256_update(&st, (const unsigned char *)line, s);
        crypto_hash_sha256_update(&st, (const unsigned char *)"}", 1);
        crypto_hash_sha256_final(&st, h);
        sodium_bin2hex(hex, 65, h, sizeof h);
        return 0;
}

/* Copy a string member into out->store; returns the copy or NULL if it does not fit. */
static const char *store_str(struct audit_record *out, size_t *used, const struct json_node *n)
{
        if (n->len + 1 > sizeof out->store - *used)
                return NULL;
        char *p = out->store + *used;
        memcpy(p, n->str, n->len + 1);
        *used += n->len + 1;
        return p;
}

static int get_member(const struct json_node *obj, const char *key, enum json_type t,
                      const struct json_node **ret, struct rf_error *err)
{
        const struct json_node *n = json_object_get(obj, key);
        if (!n)
                return rf_error_set(err, -EINVAL, "missing member `%s`", key);
        if (n->type != t)
                return rf_error_set(err, -EINVAL, "`%s` must be a %s", key, json_type_name(t));
        *ret = n;
        return 0;
}

int audit_record_parse_tree(const char *line, size_t len, struct audit_record *out,
                            struct json_node **tree, struct rf_error *err)
{
        _cleanup_json_ struct json_node *root = NULL;
        const struct json_node *n;
        size_t used = 0, s;
        uint64_t u;
        int r;

        if (len > AUDIT_RECORD_MAX)
                return rf_error_set(err, -E2BIG, "record longer than %d bytes", AUDIT_RECORD_MAX);
        memset(out, 0, sizeof *out);
        r = json_parse(line, len, &root, err);
        if (r < 0)
                return r == -ENOMEM ? r : -EINVAL;
        if (root->type != JSON_OBJECT)
                return rf_error_set(err, -EINVAL, "record is not an object");
        if (root->n_items > AUDIT_FIELDS_MAX + 8)
                return rf_error_set(err, -E2BIG, "too many members");

        /* Canonical order: sorted keys, `hash` last and only there, written exactly. */
        if (hash_suffix_start(line, len, &s) < 0 || root->n_items < 2 ||
            strcmp(root->items[root->n_items - 1]->key, "hash") != 0)
                return rf_error_set(err, -EINVAL, "record does not end with its `hash` member");
        for (size_t i = 1; i + 1 < root->n_items; i++)
                if (strcmp(root->items[i - 1]->key, root->items[i]->key) >= 0)
                        return rf_error_set(err, -EINVAL, "members not in canonical order at `%s`",
                                            root->items[i]->key);

        r = get_member(root, "version", JSON_NUMBER, &n, err);
        if (r < 0)
                return r;
        if (json_number_uint64(n, &u) < 0 || u != AUDIT_FORMAT_VERSION)
                return rf_error_set(err, -EINVAL, "unsupported version");

        r = get_member(root, "seq", JSON_NUMBER, &n, err);
        if (r < 0)
                return r;
        if (json_number_uint64(n, &out->seq) < 0 || out->seq == 0 || out->seq > INT64_MAX)
                return rf_error_set(err, -EINVAL, "`seq` must be an integer >= 1");

        r = get_member(root, "ts", JSON_NUMBER, &n, err);
        if (r < 0)
                return r;
        if (json_number_int64(n, &out->ts_ms) < 0)
                return rf_error_set(err, -EINVAL, "`ts` must be an integer");

        r = get_member(root, "run", JSON_STRING, &n, err);
        if (r < 0)
                return r;
        if (n->len > AUDIT_RUN_MAX || !(out->run = store_str(out, &used, n)))
                return rf_error_set(err, -EINVAL, "`run` too long");

        r = get_member(root, "event", JSON_STRING, &n, err);
        if (r < 0)
                return r;
        if (n->len == 0 || n->len > AUDIT_EVENT_MAX || !(out->event = store_str(out, &used, n)))
                return rf_error_set(err, -EINVAL, "`event` empty or too long");

        r = get_member(root, "prev", JSON_STRING, &n, err);
        if (r < 0)
                return r;
        if (!audit_is_hex(n->str, 64) || !(out->prev = store_str(out, &used, n)))
                return rf_error_set(err, -EINVAL, "`prev` is not a SHA-256 hex digest");

        n = root->items[root->n_items - 1];
        if (n->type != JSON_STRING || !audit_is_hex(n->str, 64) ||
            memcmp(n->str, line + len - 66, 64) != 0 || !(out->hash = store_str(out, &used, n)))
                return rf_error_set(err, -EINVAL, "`hash` is not a SHA-256 hex digest");

        if (tree)
                *tree = TAKE_PTR(root);
        return 0;
}

int audit_record_parse(const char *line, size_t len, struct audit_record *out, struct rf_error *err)
{
        return audit_record_parse_tree(line, len, out, NULL, err);
}
