/*
 * hooks.h — a container's hooks that run in the runtime's namespaces
 * (runtime-spec config.md, "POSIX-platform Hooks"): prestart and
 * createRuntime during `create`, poststart during `start`, poststop during
 * `delete`. createContainer and startContainer run inside the container's
 * namespaces and are refused (request.c): a ringfence container's
 * namespaces are its init's alone until the command starts.
 *
 * A hook is the engine's host binary, run as ringfence-oci runs (root for
 * an engine): its args and env are the config's only, its stdin the
 * container's state (JSON, as `state` prints it), its stdout and stderr
 * ringfence-oci's stderr (the engine's log); a timeout kills it.
 */
#pragma once

#include <stddef.h>

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

/*
 * oci_hooks_json — spec `s`'s hooks of the later stages (poststart,
 * poststop) as the config's "hooks" object, appended to `b`: what
 * state.json keeps for `start` and `delete`, parsed back with
 * oci_spec_parse.
 */
void oci_hooks_json(const struct oci_spec *s, struct json_buf *b);
