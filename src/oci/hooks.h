/*
 * hooks.h — a container's hooks (runtime-spec config.md, "POSIX-platform
 * Hooks"): prestart, createRuntime and createContainer during `create`,
 * startContainer and poststart during `start`, poststop during `delete`.
 *
 * A hook of the runtime's namespaces is the engine's host binary, run as
 * ringfence-oci runs (root for an engine): its args and env are the
 * config's only, its stdin the container's state (JSON, as `state` prints
 * it), its stdout and stderr ringfence-oci's stderr (the engine's log); a
 * timeout kills it. The two stages of the container's namespaces
 * (createContainer, startContainer) are started by a spawner of the
 * caller's (oci_hooks_run_as: main.c joins the container), and are
 * otherwise run and judged alike.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "oci/spec.h"
#include "shared/error.h"
#include "shared/json.h"

/*
 * oci_hooks_run — run spec `s`'s hooks of stage `st` in order, each with
 * `state` (len bytes) on its stdin; stop at the first that fails. 0, or
 * -errno with err naming the hook (hooks.STAGE[i]) and how it failed: its
 * exit status, a signal, its timeout (then it was killed), or why it could
 * not run.
 */
int oci_hooks_run(const struct oci_spec *s, enum oci_hook_stage st, const char *state, size_t len,
                  struct rf_error *err);

/* How a hook's process is started (oci_hooks_run_as): `spawn` starts
 * hook `h` with the state readable at fd `in` (offset 0) as its stdin and
 * returns its pid — the caller's child, or a descendant reparented to it
 * (a child subreaper) — or -errno with err set (why it could not run). */
struct oci_hook_spawner {
        pid_t (*spawn)(void *ctx, const struct oci_hook *h, int in, struct rf_error *err);
        void *ctx;
};

/*
 * oci_hooks_run_as — oci_hooks_run with each hook's process started by
 * `how` (NULL: a child of the caller's, in its namespaces).
 */
int oci_hooks_run_as(const struct oci_spec *s, enum oci_hook_stage st, const char *state,
                     size_t len, const struct oci_hook_spawner *how, struct rf_error *err);

/*
 * oci_hooks_json — spec `s`'s hooks of the later stages (startContainer,
 * poststart, poststop) as the config's "hooks" object, appended to `b`: what
 * state.json keeps for `start` and `delete`, parsed back with
 * oci_spec_parse.
 */
void oci_hooks_json(const struct oci_spec *s, struct json_buf *b);
