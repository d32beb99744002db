/*
 * joinplan.h — what a process joining a running run needs of its plan
 * (OCI exec, docs/OCI.md): the run's user, its limits, its environment and
 * working directory, its Landlock rules and its seccomp programs — every
 * layer init gave the run's command, nothing else (no host path, no
 * secret: the plan's environment holds placeholders only).
 *
 * The supervisor writes it once the run is planned (joinplan_format, into
 * a file of ringfence-oci's own state); `ringfence-oci exec` reads it back
 * (joinplan_parse, pure and fuzzed) into a plan for sandbox_join.
 *
 * The format is text, one item per line, bounded everywhere:
 *   rfjoin 1
 *   ids UID GID MAP_AS_ROOT
 *   limits NOFILE FSIZE NPROC
 *   cwd PATH | path PATHENV | env NAME=VALUE (each at most once per name)
 *   landlock ABI HANDLED SCOPED
 *   rule ACCESS OPTIONAL PATH
 *   bpf HEX | bpfx HEX          (ringfence's program; the container's)
 *   end
 * Paths and values: control bytes and '%' written as %XX (so a value
 * holding a newline stays one line and can never add an item; %00 is
 * refused); numbers decimal except HANDLED, SCOPED and ACCESS (hex).
 */
#pragma once

#include <stddef.h>

#include "plan.h"
#include "shared/error.h"

#define JOINPLAN_MAX       (4 << 20) /* bytes of one join plan */
#define JOINPLAN_ENV_MAX   PLAN_ENV_MAX
#define JOINPLAN_RULES_MAX (PLAN_OPS_MAX + 1)
#define JOINPLAN_VALUE_MAX 8192 /* one env value, one path */

/*
 * joinplan_format — the join plan of `p` (built: landlock_plan and
 * seccomp_plan done) into *out (malloc'd, NUL-terminated; *len without
 * it). 0, -ENOMEM, -E2BIG past JOINPLAN_MAX.
 */
int joinplan_format(const struct rf_plan *p, char **out, size_t *len);

/*
 * joinplan_parse — buf (len bytes, need not be NUL-terminated) into `p`,
 * a zeroed plan: uid, gid, map_as_root, nofile, fsize, nproc_fallback,
 * cwd, path_env, envp, landlock, seccomp, seccomp_extra. Strings and the
 * programs are allocated (plan_free frees them: p->keep). Pure. 0, or
 * -EBADMSG with err naming the line, -E2BIG past a bound, -ENOMEM.
 */
int joinplan_parse(const char *buf, size_t len, struct rf_plan *p, struct rf_error *err);
