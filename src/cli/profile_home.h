/*
 * profile_home.h — the files a profile puts in the run's $HOME (issue 16):
 * an agent's configuration, so that it starts where a user would expect,
 * never in its onboarding, its folder-trust question or its API key
 * question, and with its telemetry off.
 *
 * A profile names them by generator ("home" ops of profile.h):
 *   claude-state      ~/.claude.json: onboarding done, the workspace trusted,
 *                     the injected key's placeholder approved, the caller's
 *                     MCP servers (its ~/.claude.json's mcpServers, and the
 *                     workspace project's) without their credentials
 *                     (profile_claude_state)
 *   claude-settings   ~/.claude/settings.json: the caller's if there is one,
 *                     without its hooks and credential helpers, with Claude
 *                     Code's own sandbox off (it cannot start in a run: no
 *                     user namespace there)
 *   claude-dirs       ~/.claude/commands, agents, skills: the caller's,
 *   codex-dirs        ~/.codex/prompts, skills             read-only (a tree
 *   gemini-dirs       ~/.gemini/commands, extensions,      list: see below)
 *                     skills
 *   codex-config      ~/.codex/config.toml: the caller's own if there is
 *                     one, else one with the workspace trusted; either way
 *                     Codex's own sandbox off (sandbox_mode =
 *                     "danger-full-access": it cannot start in a run) and
 *                     what only reaches hosts a run does not allow off (the
 *                     update check, analytics, the plugin sync, the model
 *                     list's refresh: profile_codex_config)
 *   gemini-settings   ~/.gemini/settings.json: the caller's own if there is
 *                     one (JSON with comments, as Gemini CLI reads it), else
 *                     API-key auth; either way the update check and usage
 *                     statistics off (profile_gemini_settings)
 *   npmrc             ~/.npmrc: the caller's, each registry token replaced by
 *                     ${RF_NPM_TOKEN_<k>} (a placeholder; the token is
 *                     injected toward its registry), _auth and _password
 *                     lines left out
 *   pipconf           ~/.config/pip/pip.conf: the caller's (or its ~/.pip/pip.conf),
 *                     each index credential replaced by the placeholder of
 *                     RF_PIP_TOKEN_<k> (injected toward its index), lines
 *                     with a credential bound to no host left out
 *   gitconfig         ~/.gitconfig: [user] name and email, as the git profile
 *                     set GIT_AUTHOR_NAME/EMAIL (so `git config user.name`
 *                     answers in the run too); nothing else of the caller's
 *   copy:REL          the caller's $HOME/REL, if it is a regular file
 * The run gets a copy, its own to change, which ends with the run: nothing
 * is ever written back to the caller's configuration (agent settings carry
 * hooks and MCP commands that run wherever the agent runs). The agents'
 * credential files (auth.json, .credentials.json, oauth_creds.json) are
 * never among them: the key is injected. Hooks (Claude Code's and Gemini
 * CLI's "hooks", Codex's notify and [hooks]) are left out of the copies:
 * they are the caller's automation around the agent on the host.
 *
 * The agent directories are read as the caller, whole, each file into a
 * tree list (sandbox/plan.h, plan_home_file.tree) that the run gets
 * read-only in a tmpfs of its own: at most PROFILE_TREE_ENTRIES_MAX files
 * and directories and PROFILE_TREE_BYTES_MAX bytes per generator, each
 * file at most PROFILE_TREE_FILE_MAX, PROFILE_TREE_DEPTH_MAX levels deep;
 * each file and directory the caller's (or root's, for this process's own
 * run) that no one else may write; a symbolic link followed only to a
 * place inside the caller's home (refused otherwise); sockets, FIFOs,
 * dangling links and credential files (auth.json, .credentials.json,
 * oauth_creds.json, .netrc, ... and what lies in ~/.ssh, ~/.gnupg, ~/.aws,
 * ...) left out.
 */
#pragma once

#include <limits.h>
#include <stddef.h>

#include "cli/caller.h"
#include "shared/error.h"

#define PROFILE_HOME_FILE_MAX    (256 * 1024)        /* bytes of one file */
#define PROFILE_HOME_MAX         PLAN_HOME_FILES_MAX /* files (and tree lists) per run */
#define PROFILE_CLAUDE_JSON_MAX  (32 * 1024 * 1024)  /* bytes of ~/.claude.json read */
#define PROFILE_TREE_ENTRIES_MAX 512                 /* files and directories, per tree list */
#define PROFILE_TREE_BYTES_MAX   (8 * 1024 * 1024)   /* bytes of files, per tree list */
#define PROFILE_TREE_FILE_MAX    (1024 * 1024)       /* bytes of one carried file */
#define PROFILE_TREE_DEPTH_MAX   8                   /* directory levels beneath the root */
#define PROFILE_NPM_TOKEN_VAR    "RF_NPM_TOKEN_"     /* + k: the run's variable of .npmrc token k */
#define PROFILE_NPM_TOKEN_SRC    "RINGFENCE_NPM_TOKEN_" /* + k: ringfence's own, its value */
#define PROFILE_PIP_TOKEN_VAR    "RF_PIP_TOKEN_" /* + k: pip.conf credential k's placeholder */
#define PROFILE_PIP_TOKEN_SRC    "RINGFENCE_PIP_TOKEN_" /* + k: ringfence's own, its value */

struct profile_home_ctx {
        const char *workspace;       /* canonical: the run's workspace */
        const struct rf_caller *who; /* whose $HOME files are copied, read as it */
        /* the run's environment variable `name` as its policy sets it, or NULL */
        const char *(*env)(void *ctx, const char *name);
        void *env_ctx;
        /* the placeholder the run holds for env var `name`, or NULL */
        const char *(*placeholder)(void *ctx, const char *name);
        void *placeholder_ctx;
};

/*
 * profile_home_render — the file generator `gen` stands for, into *f: 0
 * with f->rel (relative to $HOME), f->data, f->len (malloc'd: the caller
 * frees it) and f->tree (a tree list of the caller's agent directories,
 * sandbox/plan.h: f->rel is then only a description), 1 when there is
 * nothing to put (a copy whose source is absent, none of the directories),
 * -errno with err set (an unknown generator, a source that is not a
 * regular file of at most PROFILE_HOME_FILE_MAX bytes, a directory beyond
 * the PROFILE_TREE_* bounds or holding what may not be carried, a
 * workspace that cannot be written into the file's format). Called by the
 * CLI (cmd_run) with this process's identity; reads as ctx->who.
 */
int profile_home_render(const char *gen, const struct profile_home_ctx *ctx,
                        struct plan_home_file *f, struct rf_error *err);

/*
 * profile_home_describe — what generator `gen` puts in the run's $HOME:
 * its file (*rel, beneath $HOME; for a tree list, its directories as
 * text) and a line saying what it holds; NULL for a copy:REL or an
 * unknown generator. Pure.
 */
const char *profile_home_describe(const char *gen, const char **rel);

/* profile_home_is_tree — does generator `gen` make a tree list (the
 * caller's agent directories, read-only in the run)? Pure. */
bool profile_home_is_tree(const char *gen);

/*
 * profile_claude_state — the run's ~/.claude.json from the caller's (in, n
 * bytes; NULL: none): onboarding done, `workspace` trusted, key_tail (the
 * last 20 characters of the injected key's placeholder, or NULL) approved,
 * and the caller's MCP servers without their credentials (members at any
 * depth whose name looks like one, with a scalar value: an env
 * GITHUB_TOKEN, a header Authorization, a headersHelper): its top-level
 * mcpServers (Claude Code's user scope) as the run's, and those of its
 * projects[workspace] (local scope) in the run's project entry. Nothing
 * else of the caller's is read: only those members' spans are found and
 * parsed (the rest of the document, however large, is skipped over), so
 * their values must be JSON objects json_parse takes. 0 with *out
 * (malloc'd) and *outlen; -EINVAL with err set (what is not a JSON object,
 * a workspace JSON cannot hold), -E2BIG, -ENOMEM. Pure.
 */
int profile_claude_state(const char *in, size_t n, const char *workspace, const char *key_tail,
                         char **out, size_t *outlen, struct rf_error *err);

/*
 * profile_home_read — who's $HOME/rel as a profile copies it, opened as who
 * (caller.h): 0 with *data (malloc'd, NUL-terminated) and *len, 1 when
 * there is none (or who has no home), -errno with err set for a file that
 * is not a regular file (a symbolic link included) of who's that no one
 * else may write (or root's, for a caller that is this process), or larger
 * than PROFILE_HOME_FILE_MAX. For the daemon's caller no component of the
 * path beneath its home may be a symbolic link.
 */
int profile_home_read(const struct rf_caller *who, const char *rel, char **data, size_t *len,
                      struct rf_error *err);

/*
 * profile_pipconf_read — who's pip configuration, as profile_home_read
 * reads it: ~/.config/pip/pip.conf, else ~/.pip/pip.conf; *rel says which.
 */
int profile_pipconf_read(const struct rf_caller *who, char **data, size_t *len, const char **rel,
                         struct rf_error *err);

/*
 * profile_toml_string — `s` as a TOML basic string ("...", with \" \\
 * and \uXXXX for control characters) into out; -E2BIG when it does not
 * fit, -EINVAL for a NUL-free string that is not UTF-8. Pure.
 */
int profile_toml_string(const char *s, char *out, size_t size);

/*
 * profile_codex_config — the run's ~/.codex/config.toml from the caller's
 * (in, n bytes; NULL: none, then one trusting `workspace`): every line of
 * it but a credential's (a comment in its place) and the values ringfence
 * sets, which come first in their tables (their tables added where the
 * caller has none), and Codex's hooks (a top-level notify, the [hooks]
 * tables and hooks.* keys: each left out with its whole value, a
 * multi-line array included, a comment in its place):
 * sandbox_mode = "danger-full-access",
 * check_for_update_on_startup = false, [analytics] enabled = false,
 * [features] plugins = false and api_key_model_discovery = false. An
 * inline `features = {...}` (or `analytics`) of the caller's is left as it
 * is, without them (TOML allows no second definition). 0 with *out
 * (malloc'd) and *outlen; -EINVAL for a workspace TOML cannot hold,
 * -ENOMEM, -E2BIG. Pure.
 */
int profile_codex_config(const char *in, size_t n, const char *workspace, char **out,
                         size_t *outlen);

/*
 * profile_gemini_settings — the run's ~/.gemini/settings.json from the
 * caller's (in, n bytes of JSON with comments; NULL: none, then one with
 * API-key authentication): every member of it but its hooks ("hooks",
 * "hooksConfig") and those whose name looks like a credential's with a
 * scalar value (at any depth), and with
 * general.enableAutoUpdate, general.enableAutoUpdateNotification and
 * privacy.usageStatisticsEnabled false. 0 with *out (malloc'd) and
 * *outlen; -EINVAL with err set for what is not a JSON object, -E2BIG,
 * -ENOMEM. Pure.
 */
int profile_gemini_settings(const char *in, size_t n, char **out, size_t *outlen,
                            struct rf_error *err);

/*
 * profile_json_uncomment — JSON with comments made JSON, in place: each
 * `//` comment (to its line's end) and each block comment outside a
 * string becomes spaces, its newlines kept (so positions stay the same);
 * an unterminated block comment runs to the end. Nothing else changes.
 * Pure.
 */
void profile_json_uncomment(char *buf, size_t len);
