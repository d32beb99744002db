/*
 * registry.h — every run reachable: registrations under the state dir.
 *
 *   STATE_DIR/runs/RUN/info.json      who, what, since when; the supervisor
 *                                     holds an exclusive flock on it for
 *                                     as long as it lives
 *   STATE_DIR/runs/RUN/control.sock   the run's control channel (control.h)
 *   STATE_DIR/blocks/HASH.json        an agent whose new runs are refused
 *
 * Both directories are 0700 and the state dir is never visible inside a
 * run, so no run can reach another's (or its own) control socket. A
 * registration whose lock is free belongs to a supervisor that died
 * without removing it: `ps` shows it as lost.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/error.h"

#define REGISTRY_FIELD_MAX 256

struct run_info {
        char run[40];
        char agent[REGISTRY_FIELD_MAX + 1];
        char on_behalf_of[REGISTRY_FIELD_MAX + 1];
        char task[REGISTRY_FIELD_MAX + 1];
        char command[REGISTRY_FIELD_MAX + 1];
        char cgroup[16]; /* the run's cgroup mode */
        uint64_t uid;    /* who started it */
        uint64_t pid;    /* its supervisor */
        int64_t started_ms;
};

struct registry; /* one run's registration (opaque) */

/*
 * registry_add — register the run `info->run`: its directory, info.json
 * (locked) and a listening, non-blocking control socket. 0 or -errno.
 */
int registry_add(const char *state_dir, const struct run_info *info, struct registry **ret,
                 struct rf_error *err);

/* The control socket (listening, SOCK_SEQPACKET, non-blocking). */
int registry_listen_fd(const struct registry *r);

/* Remove the registration (socket, info, directory). Accepts NULL; returns NULL. */
struct registry *registry_remove(struct registry *r);

/*
 * registry_foreach — call `cb` for every registration, oldest first, with
 * `live` false for one whose supervisor is gone. Stops when cb returns
 * non-zero. 0 or -errno.
 */
typedef int (*registry_cb)(const struct run_info *info, bool live, void *ctx);
int registry_foreach(const char *state_dir, registry_cb cb, void *ctx);

/* registry_connect — a non-blocking socket connected to run `run`'s
 * control channel (poll it for the answer), or -ENOENT / -ECONNREFUSED /
 * -EAGAIN (the supervisor's queue is full: it is not accepting) / -errno.
 * Never waits. */
int registry_connect(const char *state_dir, const char *run);

/*
 * registry_request — send one control request to run `run` and wait up to
 * `timeout_ms` (-1: forever) for the reply (NUL-terminated in `reply`).
 * -ENOENT: no such run; -ECONNREFUSED: its supervisor is gone. 0 or -errno.
 */
int registry_request(const char *state_dir, const char *run, const char *req, char *reply,
                     size_t size, int timeout_ms);

/*
 * registry_state — what run `run`'s supervisor says of it: its state
 * ("starting", "running", "paused", ...) in `out`, and the JSON of its
 * status reply in `status` (may be NULL). A run whose supervisor is gone
 * (`live` false) or does not answer within 1 s: "lost" / "?".
 */
void registry_state(const char *state_dir, const char *run, bool live, char *out, size_t len,
                    char *status, size_t status_len);

/*
 * registry_state_batch — registry_state for n runs, up to
 * REGISTRY_BATCH_MAX requests in flight at once: each supervisor answers
 * in its own time, so a listing of 1,000 runs waits for the slowest few
 * of each batch, not for the sum of all (asked one after another they
 * took ~1 s here). q[i].run and q[i].live are read; q[i].st and
 * q[i].status (may be NULL) are written as registry_state writes them,
 * each request given the same 1 s. Never fails: a run not answered is "?".
 */
#define REGISTRY_BATCH_MAX 64
struct registry_query {
        const char *run;
        bool live;
        char *st;
        size_t st_len;
        char *status;
        size_t status_len;
};
void registry_state_batch(const char *state_dir, struct registry_query *q, size_t n);

/* registry_prune — remove the registration of a run whose supervisor is gone. 0 or -errno. */
int registry_prune(const char *state_dir, const char *run);

/* Blocks: new runs of `agent` refused until unblocked. 0 or -errno. */
int registry_block(const char *state_dir, const char *agent, const char *reason, uid_t uid,
                   struct rf_error *err);
int registry_unblock(const char *state_dir, const char *agent, struct rf_error *err);
/* 1 if `agent` is blocked (reason in `why`), 0 if not, -errno (treated as blocked: fail closed). */
int registry_blocked(const char *state_dir, const char *agent, char *why, size_t why_len);
