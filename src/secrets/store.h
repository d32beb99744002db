/*
 * store.h — the local encrypted secret store (the embedded provider).
 *
 * Layout, under the state dir:
 *
 *   secrets/NAME/v000001   one file per version (0600), in a directory per
 *   secrets/NAME/v000002   name (0700); setting a name again adds a version
 *
 * Each file is a fixed binary record (store_record_parse): magic, version,
 * creation time, nonce, and the value sealed with XChaCha20-Poly1305 under
 * the master key. The associated data binds the ciphertext to its name,
 * version and creation time, so a file copied to another name or version
 * does not open. The master key is 32 random bytes in a key file (0600,
 * owned by the user; default STATE_DIR/secrets.key, created on first use),
 * read into secret memory only.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/binding.h"
#include "shared/error.h"

#define STORE_KEY_LEN    32
#define STORE_MAGIC      "RFSECRT1"
#define STORE_HEADER_LEN 48 /* magic 8, version 4, created 8, ct_len 4, nonce 24 */
#define STORE_MAC_LEN    16
#define STORE_RECORD_MAX (STORE_HEADER_LEN + SECRET_VALUE_MAX + STORE_MAC_LEN)
#define STORE_FP_HEX     32 /* a keyed fingerprint: 16 bytes in hex */
#define STORE_KEY_FILE   "secrets.key"

/* One parsed record; pointers into the buffer given to store_record_parse. */
struct store_record {
        uint32_t version;
        uint64_t created;           /* seconds since the epoch */
        const unsigned char *nonce; /* 24 bytes */
        const unsigned char *ct;    /* ciphertext with its tag */
        size_t ct_len;
};

/*
 * store_record_parse — read one record file's bytes. Returns 0 or
 * -EBADMSG (wrong magic, lengths that do not add up, a version outside
 * 1..SECRET_VERSION_MAX, a value larger than SECRET_VALUE_MAX). Pure;
 * fuzzed (fuzz_store).
 */
int store_record_parse(const void *buf, size_t len, struct store_record *rec);

/*
 * store_key_load — the master key from `path` into `key` (STORE_KEY_LEN
 * bytes of secret memory). Refused unless it is a regular file of exactly
 * STORE_KEY_LEN bytes owned by this user with no group/other access. With
 * `create`, a missing file is created (0600, random). 0 or -errno with err.
 */
int store_key_load(const char *path, bool create, unsigned char *key, struct rf_error *err);

/*
 * store_set — seal `value` as the next version of `name`. Concurrent sets
 * of one name are serialised (flock); the file appears whole (written,
 * synced, renamed). *version receives the version written. 0 or -errno.
 */
int store_set(const char *state_dir, const unsigned char *key, const char *name, const void *value,
              size_t len, uint32_t *version, struct rf_error *err);

/*
 * store_get — open version `version` of `name` (0: the latest). *value is
 * secret memory (secmem_free it), *len its length, *got its version.
 * -ENOENT for an unknown name or version, -EBADMSG for a record that does
 * not open (tampered, moved, another key). 0 or -errno with err.
 */
int store_get(const char *state_dir, const unsigned char *key, const char *name, uint32_t version,
              unsigned char **value, size_t *len, uint32_t *got, struct rf_error *err);

struct store_entry {
        char name[SECRET_NAME_MAX + 1];
        uint32_t latest, n_versions;
        uint64_t created; /* of the latest version */
};

/* store_list — every name, sorted; *ret malloc'd (may be NULL with *n 0). 0 or -errno. */
int store_list(const char *state_dir, struct store_entry **ret, size_t *n, struct rf_error *err);

/* store_rm — remove every version of `name`; *versions receives how many. 0 or -errno. */
int store_rm(const char *state_dir, const char *name, uint32_t *versions, struct rf_error *err);

/*
 * store_fingerprint — a keyed fingerprint of a value (BLAKE2b-128 under a
 * key derived from the master key): equal values give equal fingerprints
 * on one instance, and without the key a fingerprint says nothing about
 * the value. `out` receives STORE_FP_HEX hex digits and a NUL.
 */
void store_fingerprint(const unsigned char *key, const void *value, size_t len,
                       char out[STORE_FP_HEX + 1]);
