/*
 * audit.h — the tamper-evident audit log of a ringfence instance.
 *
 * STATE_DIR/audit/ holds JSON-lines segments (audit-000001.jsonl, ...), one
 * record per line, each record carrying `version`, `seq`, `ts`, `run`,
 * `event`, its fields, `prev` (hash of the previous record) and `hash`
 * (hash of this line's exact bytes without the `hash` member, see
 * audit_record_hash). Several writers (ringfence run processes, the daemon)
 * append to one chain under an exclusive flock; every record is durable
 * (fdatasync, group commit within AUDIT_COMMIT_WINDOW_MS) before the action
 * it records proceeds, and `run.start` is durable before exec.
 * Checkpoints: every AUDIT_CHECKPOINT_EVERY records, every
 * AUDIT_CHECKPOINT_SECONDS, and at run end a `log.checkpoint` record signs
 * (Ed25519) the head {seq, hash}. The key (STATE_DIR/audit/key, 0600) is
 * created on first use; STATE_DIR/audit/key.pub is the public key.
 *
 * Verification never re-serialises: it hashes the exact bytes of each line.
 *
 * Events and fields are built with struct audit_field arrays; a field
 * flagged AUDIT_F_SECRET is refused (-EPERM): secret values never reach
 * the log. Run-controlled strings are escaped and length-limited.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/error.h"

#define AUDIT_FORMAT_VERSION     1
#define AUDIT_RECORD_MAX         (64 * 1024) /* bytes in one line */
#define AUDIT_FIELDS_MAX         64
#define AUDIT_SEGMENT_MAX        (64ULL << 20) /* bytes before a new segment */
#define AUDIT_CHECKPOINT_EVERY   1024
#define AUDIT_CHECKPOINT_SECONDS 60
#define AUDIT_COMMIT_WINDOW_MS   10
#define AUDIT_STRING_MAX         4096 /* bytes of one string field value (before escaping) */
#define AUDIT_KEY_MAX            64   /* bytes of a field key */
#define AUDIT_RUN_MAX            128  /* bytes of the `run` member */
#define AUDIT_EVENT_MAX          128  /* bytes of the `event` member */
#define AUDIT_HEAD_MAX           512  /* bytes audit_head() writes, NUL included */

enum audit_type {
        AUDIT_STR,
        AUDIT_INT,  /* int64 */
        AUDIT_UINT, /* uint64 */
        AUDIT_BOOL,
        AUDIT_RAW, /* already-serialised JSON value (object/array), trusted callers only */
        _AUDIT_TYPE_MAX,
        _AUDIT_TYPE_INVALID = -22,
};

enum {
        AUDIT_F_SECRET = 1 << 0, /* refuse: a secret value must never be logged */
};

struct audit_field {
        const char *key; /* [a-z0-9_.]{1,64} */
        enum audit_type type;
        unsigned flags;
        const char *s; /* AUDIT_STR / AUDIT_RAW */
        int64_t i;
        uint64_t u;
        bool b;
};

struct audit_log; /* opaque: the open log of one state dir */

/*
 * audit_open — open (creating on first use: dir 0700, key 0600, key.pub)
 * the audit log under `state_dir`. Returns 0 with *ret, or -errno with err
 * (then the run must be refused: 125).
 */
int audit_open(const char *state_dir, struct audit_log **ret, struct rf_error *err);

/*
 * audit_append — append one record {version, seq, ts, run, event, fields...,
 * prev, hash} and make it durable (fdatasync) before returning when
 * `durable`, else within AUDIT_COMMIT_WINDOW_MS (audit_flush forces it).
 * Keys are emitted sorted. Returns the record's seq (>= 1), or -errno:
 * -EPERM for a field flagged secret, -E2BIG beyond AUDIT_RECORD_MAX, -ENOSPC
 * / -EIO when the disk refuses (the caller refuses the action).
 */
int64_t audit_append(struct audit_log *log, const char *run, const char *event,
                     const struct audit_field *fields, size_t n_fields, bool durable,
                     struct rf_error *err);

/*
 * audit_hold — take the log's lock for the appends that follow, up to the
 * matching audit_release: a batch of records the caller makes at once (a
 * supervisor draining its egress process's records) takes the lock once,
 * not once each. Holds nest. Other writers wait meanwhile: hold only
 * around work that does not block. 0 or -errno (err set).
 */
int audit_hold(struct audit_log *log, struct rf_error *err);
void audit_release(struct audit_log *log);

/* audit_flush — make every appended record durable. 0 or -errno. */
int audit_flush(struct audit_log *log);

/*
 * audit_writeback — start writing the records not yet synced to disk and
 * return without waiting (sync_file_range, SYNC_FILE_RANGE_WRITE), so that
 * the audit_flush that follows other work waits for less. Makes nothing
 * durable and poisons nothing: audit_flush alone decides. 0 or -errno.
 */
int audit_writeback(struct audit_log *log);

/*
 * audit_dirty_ms — CLOCK_MONOTONIC ms of the oldest appended record not yet
 * durable, or 0 if every record is. An event loop flushes once it is
 * AUDIT_COMMIT_WINDOW_MS old (the group-commit bound when it goes idle).
 */
int64_t audit_dirty_ms(const struct audit_log *log);

/*
 * audit_set_ticked — `ticked`: the caller's event loop makes the records
 * durable itself once audit_dirty_ms is AUDIT_COMMIT_WINDOW_MS old
 * (audit_emitter_tick does), so a non-durable append never waits for that
 * commit: it comes after the answer the append was for, not before. A
 * durable append still syncs before it returns.
 */
void audit_set_ticked(struct audit_log *log, bool ticked);

/* audit_checkpoint — append a signed log.checkpoint of the current head,
 * like a non-durable record: durable by the group commit or audit_flush
 * (the periodic checkpoints audit_append adds are durable at once). */
int audit_checkpoint(struct audit_log *log, struct rf_error *err);

/* Close (flushing). Accepts NULL; returns NULL. */
struct audit_log *audit_close(struct audit_log *log);

/*
 * audit_set_segment_max — start a new segment once the current one would
 * grow past `bytes` (default AUDIT_SEGMENT_MAX; minimum 1: every record
 * then gets its own segment). For tests and the benchmark; per handle.
 */
void audit_set_segment_max(struct audit_log *log, uint64_t bytes);

/*
 * audit_log_fingerprint — a fingerprint of STATE_DIR/audit as it is now:
 * every file (segments, keys, checkpoints) by name, inode, device, size,
 * mtime and ctime (FNV-1a). Appending, rotating, rewriting or replacing any
 * changes it; a verification cached under it is stale once it differs.
 * 1 when there is no log (yet) or it cannot be read; never 0.
 */
uint64_t audit_log_fingerprint(const char *state_dir);

/*
 * audit_verify — walk every segment of `state_dir`'s log: parse each line
 * (audit_record_parse), check seq continuity, prev == previous hash,
 * hash == hash of the line's bytes, every checkpoint's signature. With
 * `head_file` (a saved `audit head` output) the log must reach that head
 * with the same hash (catches truncation); with `pubkey_file` the
 * checkpoints must be signed by that key (catches a replaced key).
 * Returns 0 if intact, filling *ret (may be NULL) with how far it got,
 * else -EBADMSG with err->msg naming the first bad seq and why ("seq 42:
 * hash mismatch"); -errno on I/O errors.
 *
 * What it cannot see without `head_file`: records cut from the end. The
 * chain of what is left is whole, and its last checkpoint still verifies,
 * so only a head saved elsewhere before the cut tells (see AUDIT.md).
 */
struct audit_verified {
        uint64_t records;        /* records 1..records verified (the last seq; 0: empty log) */
        char hash[65];           /* the hash of record `records` (the genesis hash if empty) */
        uint64_t checkpoints;    /* signed checkpoints verified */
        uint64_t checkpoint_seq; /* seq of the last signed checkpoint, 0 if none */
        uint64_t head_seq;       /* the saved head's seq that was reached, 0 without one */
};
int audit_verify(const char *state_dir, const char *head_file, const char *pubkey_file,
                 struct audit_verified *ret, struct rf_error *err);

/*
 * audit_head — write the signed head of the log (seq, hash, ts, key
 * fingerprint, signature) as one JSON line into buf. 0 or -errno.
 */
int audit_head(const char *state_dir, char *buf, size_t len, struct rf_error *err);

/*
 * audit_foreach_line — call fn(line, len, ctx) for every line of every
 * segment of `state_dir`'s log, oldest first (line without its newline,
 * NUL-terminated, at most AUDIT_RECORD_MAX bytes; longer lines are cut and
 * left to `verify` to judge). fn returns 0 to go on, > 0 to stop (returned),
 * < 0 to stop with that error. No log yet: 0. Otherwise 0 or -errno.
 */
typedef int (*audit_line_fn)(const char *line, size_t len, void *ctx);
int audit_foreach_line(const char *state_dir, audit_line_fn fn, void *ctx);

/*
 * audit_foreach_line_reverse — the same, newest line first, reading each
 * segment backwards in chunks: a caller that needs only the recent past
 * (the wake-loop breaker's window, a run's own records) stops early and
 * never reads the whole log. Lines longer than AUDIT_RECORD_MAX are
 * skipped. Same returns.
 */
int audit_foreach_line_reverse(const char *state_dir, audit_line_fn fn, void *ctx);

/* Parsed view of one record line (pure; borrowed pointers into the line). */
struct audit_record {
        uint64_t seq;
        int64_t ts_ms;
        const char *run, *event, *prev, *hash; /* NUL-terminated copies in `store` */
        char store[512];
};

/*
 * audit_record_parse — parse one line (without the newline) strictly:
 * a JSON object with the required members, `version` == 1, hex hashes of
 * the right length; at most AUDIT_RECORD_MAX bytes. Pure; fuzzed.
 * Returns 0 or -EINVAL/-E2BIG with err->msg.
 */
int audit_record_parse(const char *line, size_t len, struct audit_record *out,
                       struct rf_error *err);

/*
 * audit_record_hash — the hash of a record line: SHA-256 (hex) over the
 * line's bytes with the trailing `,"hash":"…"}` replaced by `}`. Pure.
 * Returns 0 or -EINVAL if the line does not end with a hash member.
 */
int audit_record_hash(const char *line, size_t len, char hex[65]);
