/*
 * runwire.h — a run request as the daemon hands it to the supervisor it
 * starts: typed, in a sealed memfd (`ringfence run --request-fd 3`).
 *
 * The daemon checks a caller's start (its grants, the operator's ceiling,
 * the workspace as the caller) and builds a struct run_wire: the run's id,
 * whom it is for, the inode it checked, and the policy overlay it made
 * with the policy module's own setters (agent, workspace, limits, network
 * rules, environment, paths, secret bindings). The supervisor is then a
 * fresh image of ringfence that reads this and nothing else of the
 * caller's: it holds nothing of the daemon (other callers' requests, its
 * sockets and keys), and no part of a request is in a command line, which
 * every local user may read.
 *
 * The encoding is a JSON document (shared/json.h's strict parser, bounded
 * by JSON_INPUT_MAX), the overlay in it as its canonical policy
 * (policy_to_json, read back by policy_from_json):
 *
 *   {"version":1,"run":"UUID","state_dir":"/ABS","caller_uid":N,
 *    "workspace_inode":{"dev":N,"ino":N},          (optional)
 *    "log_max":N,"mask_output":BOOL,"keep_state":BOOL,
 *    "policy":{...},"profiles":["NAME",...],"argv":["CMD",...]}
 *
 * Every key but workspace_inode is required, unknown keys are refused:
 * both ends are the same build (the daemon execs its own binary).
 * Parsing is pure (tests/fuzz/fuzz_runwire.c, tests/unit/test_runwire.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox/plan.h"
#include "shared/error.h"

#define RUN_WIRE_VERSION      1
#define RUN_WIRE_ARGV_MAX     1024 /* elements of the command (the API's is 256) */
#define RUN_WIRE_PROFILES_MAX 16   /* the API's is 8 */

struct rf_policy;

struct run_wire {
        char run_id[RF_RUN_ID_LEN + 1]; /* lower-case UUID */
        char *state_dir;                /* absolute */
        uint32_t caller_uid;            /* whom the run is for (< 2^32 - 1) */
        bool expect_ws;                 /* the workspace must be this inode */
        uint64_t ws_dev, ws_ino;
        uint64_t log_max; /* the run's output log's cap, > 0 */
        bool mask_output, keep_state;
        struct rf_policy *overlay; /* the request's settings, on top of no file */
        char **profiles;           /* names, applied to the overlay in order */
        size_t n_profiles;
        char **argv; /* NULL-terminated, argc ≥ 1 */
        size_t argc;
};

/*
 * run_wire_to_json — `w` encoded: a malloc'd NUL-terminated document in
 * *ret (the caller frees it). 0, or -ENOMEM, -EINVAL (a string that is not
 * UTF-8, a field out of its range), -E2BIG (past the bounds above or
 * JSON_INPUT_MAX).
 */
int run_wire_to_json(const struct run_wire *w, char **ret);

/*
 * run_wire_parse — decode buf[0, len) into *w (zeroed first; release with
 * run_wire_clear, also after a failure). Pure. 0, or -EINVAL / -E2BIG /
 * -ENOMEM with err saying where and why.
 */
int run_wire_parse(const char *buf, size_t len, struct run_wire *w, struct rf_error *err);

/* run_wire_clear — release what *w owns; leaves it zeroed. */
void run_wire_clear(struct run_wire *w);
