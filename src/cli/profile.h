/*
 * profile.h — `--profile NAME`: what an agent or a tool needs, as run
 * flags (issue 16).
 *
 * A profile expands, on this host and for this caller, into the flags a
 * user would otherwise type: the install tree of each command it names
 * (found on the caller's PATH: shared/hostcmd.h) read-only and its
 * directory first on the run's PATH, the hosts it must reach, its
 * environment (telemetry and auto-update off), its API key as an injected
 * secret when the caller has one in the environment (the run holds a
 * placeholder), and the caller's git identity. Built-in profiles are the
 * table in profile.c; a user profile is a policy file
 * (~/.config/ringfence/profiles/NAME.json, then
 * /etc/ringfence/profiles/NAME.json), which wins over a built-in of the
 * same name. Nothing of the caller's own agent configuration (~/.claude,
 * ~/.codex: hooks and MCP commands that run on the host) is mounted: a
 * profile's "home" ops (profile_home.h) put per-run copies in the run's
 * $HOME, which end with the run — its settings and MCP servers without
 * credentials or hooks, its commands, skills and extensions read-only —
 * and nothing the run does reaches the caller's own files.
 */
#pragma once

#include <limits.h>
#include <stddef.h>

#include "cli/caller.h"
#include "policy/policy.h"
#include "shared/error.h"

#define PROFILE_NAME_MAX POLICY_PROFILE_NAME_MAX
#define PROFILE_OPS_MAX  64
#define PROFILE_ARG_MAX  (PATH_MAX + 256)

/* One flag of `ringfence run`, by its long name ("ro", "env", "allow-host",
 * "inject"), or "path" (a directory to put first on the run's PATH),
 * "policy" (a user profile: a policy file merged at this point), "home"
 * (a file for the run's $HOME: a generator of profile_home.h) or "keep"
 * (the agent's state directory beneath $HOME, kept with --keep-state). */
struct profile_op {
        const char *flag;
        char arg[PROFILE_ARG_MAX];
};

struct profile_ops {
        struct profile_op op[PROFILE_OPS_MAX];
        size_t n;
};

/* Whom a profile is expanded for (caller.h) and the PATH its commands are
 * found on. For the daemon's caller (who->other) its files are read as it,
 * its user profiles are not read (a policy file would reach past the
 * operator's ceiling: /etc/ringfence/profiles only), its git identity is
 * asked of git run as it, and no API key comes from this process's
 * environment (the daemon's is not the caller's). */
struct profile_for {
        const struct rf_caller *who;
        const char *path;
};

/*
 * profile_expand — append NAME's flags to *ops (building blocks first),
 * for `f`. 0, or -errno with err saying why: -ENOENT an unknown profile or
 * a command it needs that the host lacks (named, with what to do), -EINVAL
 * a bad name, -E2BIG too many flags.
 */
int profile_expand(const char *name, const struct profile_for *f, struct profile_ops *ops,
                   struct rf_error *err);

/*
 * profile_scrub — wipe the values `--profile npm` and `--profile pip` put
 * in ringfence's own environment (the env: sources of their injections)
 * and remove them; called once the run's grants have read them. No-op
 * without them.
 */
void profile_scrub(void);

/* `ringfence profile list` / `ringfence profile show NAME`. */
int cmd_profile(int argc, char **argv);
