/*
 * audit-internal.h — what audit.c, audit-verify.c and audit-record.c share
 * and nothing else may use: the signed message, key loading, segment names,
 * and the record parser that also hands back its JSON tree.
 */
#pragma once

#include <sodium.h>

#include "audit/audit.h"
#include "shared/json.h"

#define AUDIT_SIG_DOMAIN   "ringfence-audit-v1"
#define AUDIT_SEGMENT_NAME "audit-%06u.jsonl"
#define AUDIT_SEGMENT_NMAX 999999u
#define AUDIT_HASH_SUFFIX  (sizeof(",\"hash\":\"") - 1 + 64 + 2) /* `,"hash":"<64>"}` */

/* The hash of the record before seq 1. */
extern const char audit_genesis_hash[65];

/*
 * audit_record_parse_tree — audit_record_parse() that also returns the
 * parsed JSON object in *tree (caller frees with json_node_free) when
 * `tree` is non-NULL, so verify can read a checkpoint's fields.
 */
int audit_record_parse_tree(const char *line, size_t len, struct audit_record *out,
                            struct json_node **tree, struct rf_error *err);

/* The message an Ed25519 checkpoint / head signature covers, into buf. */
int audit_sig_message(uint64_t seq, const char *hash_hex, char *buf, size_t len);

/* True if `s` is exactly `n` lower-case hex digits followed by NUL. */
bool audit_is_hex(const char *s, size_t n);

/*
 * audit_list_segments — the segment numbers present in directory fd `dirfd`,
 * sorted ascending, in a malloc'd array (*ret, *n). 0 or -errno.
 */
int audit_list_segments(int dirfd, unsigned **ret, size_t *n);

/*
 * audit_key_read — the instance's Ed25519 secret key from `audit_dirfd`
 * (STATE_DIR/audit, an open directory) into sk: "key", a regular file of
 * exactly crypto_sign_SECRETKEYBYTES bytes, mode 0600 or stricter, not a
 * symlink. 0, or -ENOENT (none yet; err untouched: the caller creates one
 * or says so), -EBADMSG (malformed), -EPERM (others may read it), -EIO
 * (short read) or -errno with err set; sk holds nothing of the key after a
 * failure. The only reader (audit.c, token.c).
 */
int audit_key_read(int audit_dirfd, unsigned char sk[crypto_sign_SECRETKEYBYTES],
                   struct rf_error *err);
