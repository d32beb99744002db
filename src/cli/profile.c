/*
 * profile.c — built-in profiles and their expansion into run flags
 * (profile.h), and `ringfence profile list|show`.
 *
 * Design: a profile is data (the table below) plus a small expansion that
 * reads the host as the caller: commands through the caller's PATH
 * (host_command), credentials through the caller's environment, the git
 * identity through the caller's `git config`. The result is a list of
 * ordinary run flags, applied by cmd_run exactly as if typed (so every
 * check a flag gets, a profile's flag gets), and shown by `profile show`.
 * Telemetry, error reporting, auto-update and the other calls an agent
 * makes beyond its API (a model list's refresh, a plugin sync) are
 * switched off by the agents' own variables and settings (profile_home.c
 * for the settings); their hosts are not allowed, so left on they would
 * only be refused, again and again (a refusal storm).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/profile.h"
#include "cli/profile_home.h"
#include "policy/policy.h"
#include "shared/hostcmd.h"
#include "shared/macro.h"
#include "shared/npmrc.h"
#include "shared/ownwrite.h"
#include "shared/pipconf.h"
#include "supervisor/run.h"

extern char **environ;

struct builtin {
        const char *name, *summary;
        const char *uses[3];     /* building blocks, expanded first */
        const char *commands[3]; /* found on the caller's PATH: tree read-only, dir on PATH */
        const char *allow[3];    /* hosts the run may reach */
        const char *env[8];      /* NAME=VALUE */
        const char *key_env[2];  /* API key variables: injected when the caller has one */
        const char *home[4];     /* files put in the run's $HOME (profile_home.h) */
        bool git_identity;       /* the caller's user.name and user.email */
        bool npm_tokens;         /* the caller's ~/.npmrc tokens injected */
        bool pip_creds;          /* the caller's pip.conf index credentials injected */
        const char *keep;        /* its state directory beneath $HOME, kept with --keep-state */
};

static const struct builtin builtins[] = {
        {.name = "node", .summary = "Node.js (node on your PATH)", .commands = {"node"}},
        {.name = "python", .summary = "Python 3 (python3 on your PATH)", .commands = {"python3"}},
        {.name = "git",
         .summary = "git with your user.name and user.email (never credential helpers)",
         .commands = {"git"},
         .git_identity = true},
        {.name = "npm",
         .summary = "npm: your ~/.npmrc, its registry tokens injected (their registries "
                    "allowed); no other registry",
         .uses = {"node"},
         .commands = {"npm"},
         .env = {"npm_config_update_notifier=false", "npm_config_fund=false"},
         .home = {"npmrc"},
         .npm_tokens = true},
        {.name = "pip",
         .summary = "pip (no index is reached unless you allow its host)",
         .uses = {"python"},
         .commands = {"pip3"},
         .env = {"PIP_DISABLE_PIP_VERSION_CHECK=1"},
         .home = {"pipconf"},
         .pip_creds = true},
        {.name = "claude-code",
         .summary = "Claude Code: claude, api.anthropic.com, platform.claude.com, "
                    "ANTHROPIC_API_KEY injected",
         .uses = {"node", "git"},
         .commands = {"claude"},
         /* the API, and the login host its TUI checks at start */
         .allow = {"api.anthropic.com", "platform.claude.com"},
         /* off: auto-update, telemetry, error reporting, other
          * nonessential calls; and what these leave on, each a host the
          * run may not reach (Claude Code 2.1's own variables): the model
          * catalog (downloads.claude.ai) and the official plugin
          * marketplace's install (downloads.claude.ai, then github.com) */
         .env = {"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
                 "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_MODEL_CATALOG=off",
                 "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1"},
         .key_env = {"ANTHROPIC_API_KEY"},
         .home = {"claude-state", "claude-settings", "copy:.claude/CLAUDE.md", "claude-dirs"},
         .keep = ".claude"},
        {.name = "codex",
         .summary =
                 "Codex CLI: codex, api.openai.com, auth.openai.com, CODEX_API_KEY/OPENAI_API_KEY "
                 "injected",
         .uses = {"node", "git"},
         .commands = {"codex"},
         /* the API, and the login host its token refresh (and `codex
          * login`'s exchange) talks to */
         .allow = {"api.openai.com", "auth.openai.com"},
         /* its update check, analytics, plugin sync and model list
          * refresh are off in the run's config.toml (profile_home.c):
          * Codex has no variables for them */
         .key_env = {"CODEX_API_KEY", "OPENAI_API_KEY"},
         .home = {"codex-config", "copy:.codex/AGENTS.md", "codex-dirs"},
         .keep = ".codex"},
        {.name = "gemini-cli",
         .summary = "Gemini CLI: gemini (node), generativelanguage.googleapis.com, "
                    "GEMINI_API_KEY injected",
         .uses = {"node", "git"},
         .commands = {"gemini"},
         /* the API, and where a Google login's tokens are refreshed */
         .allow = {"generativelanguage.googleapis.com", "oauth2.googleapis.com"},
         /* headless runs need the workspace trusted (its .gemini settings
          * act inside the run only); Gemini's own sandbox (docker, podman)
          * cannot start inside a run. Its update check and usage
          * statistics are off in the run's settings.json (profile_home.c):
          * Gemini CLI 0.61 has no variables for them */
         .env = {"GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_SANDBOX=false"},
         .key_env = {"GEMINI_API_KEY"},
         .home = {"gemini-settings", "copy:.gemini/GEMINI.md", "gemini-dirs"},
         .keep = ".gemini"},
};

static const struct builtin *builtin_find(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(builtins); i++)
                if (!strcmp(builtins[i].name, name))
                        return &builtins[i];
        return NULL;
}

/* The user profile file for name, if there is one: 0 with path[], -ENOENT
 * when there is none, -EPERM (err set) for one this caller must not trust:
 * not a regular file of its own or root's, or writable by others (its
 * owner's private group aside: shared/ownwrite.h; a policy is power over
 * the run: root must not take one from another user's $XDG_CONFIG_HOME). */
static int user_file(const char *name, const struct profile_for *f, char path[PATH_MAX],
                     struct rf_error *err)
{
        const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
        char dirs[2][PATH_MAX];
        size_t nd = 0;
        if (f->who->other)
                return -ENOENT; /* the daemon's caller: built-in profiles only */
        if (xdg && xdg[0] == '/')
                snprintf(dirs[nd++], PATH_MAX, "%s/ringfence/profiles", xdg);
        else if (home && home[0] == '/')
                snprintf(dirs[nd++], PATH_MAX, "%s/.config/ringfence/profiles", home);
        snprintf(dirs[nd++], PATH_MAX, "/etc/ringfence/profiles");
        for (size_t i = 0; i < nd; i++) {
                struct stat st;
                if ((size_t)snprintf(path, PATH_MAX, "%s/%s.json", dirs[i], name) >= PATH_MAX)
                        continue;
                /* opened, not only looked at: its ACL is read through the fd */
                _cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
                if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
                        continue;
                if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
                    (st.st_uid != geteuid() && st.st_uid != 0))
                        return rf_error_set(err, -EPERM,
                                            "--profile %s: %s is not a regular file of yours or "
                                            "root's that only its owner may write; refusing it",
                                            name, path);
                enum ownwrite ow = ownwrite_check(fd, &st, NULL);
                if (ow != OWNWRITE_OWNER) {
                        char why[256];
                        return rf_error_set(
                                err, -EPERM, "--profile %s: %s is %s; refusing it", name, path,
                                ownwrite_why(ow, &st, st.st_uid == 0 ? "root's" : "your", why,
                                             sizeof why));
                }
                return 0;
        }
        return -ENOENT;
}

static int add(struct profile_ops *ops, const char *flag, const char *arg, struct rf_error *err)
{
        if (ops->n == PROFILE_OPS_MAX)
                return rf_error_set(err, -E2BIG, "profiles: more than %d flags", PROFILE_OPS_MAX);
        struct profile_op *o = &ops->op[ops->n];
        if ((size_t)snprintf(o->arg, sizeof o->arg, "%s", arg) >= sizeof o->arg)
                return rf_error_set(err, -E2BIG, "profiles: --%s %.100s...: too long", flag, arg);
        o->flag = flag;
        ops->n++;
        return 0;
}

/* The daemon's caller's identity for git_config's child (it may trace or
 * signal that child: what it can change is only its own run's git
 * identity); 0 or -1. */
static int become(const struct rf_caller *who)
{
        if (setgroups((size_t)who->n_groups, who->groups) < 0 ||
            setresgid(who->gid, who->gid, who->gid) < 0 ||
            setresuid(who->uid, who->uid, who->uid) < 0)
                return -1;
        return 0;
}

#define GIT_CONFIG_MS 3000 /* how long `git config --get` may take */

/* `git config --get KEY` as the caller, into out (trailing newline cut);
 * "" when git has none, fails or takes longer than GIT_CONFIG_MS. */
static void git_config(const char *key, const struct rf_caller *who, char *out, size_t size)
{
        int p[2];
        out[0] = '\0';
        if (pipe2(p, O_CLOEXEC) < 0)
                return;
        posix_spawn_file_actions_t fa;
        pid_t pid = -1;
        if (who->other) {
                /* run as the caller, with its home and nothing of ours */
                char home[PATH_MAX + 8];
                snprintf(home, sizeof home, "HOME=%s", who->home[0] ? who->home : "/nonexistent");
                char *argv[] = {"git", "config", "--get", (char *)key, NULL};
                char *envp[] = {home, "PATH=" RF_DEFAULT_PATH, "GIT_CONFIG_NOSYSTEM=1", NULL};
                pid = fork();
                if (pid == 0) {
                        int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
                        if (become(who) < 0 || dup2(p[1], STDOUT_FILENO) < 0 || nul < 0 ||
                            dup2(nul, STDERR_FILENO) < 0)
                                _exit(127);
                        execve("/usr/bin/git", argv, envp);
                        _exit(127);
                }
        } else if (posix_spawn_file_actions_init(&fa) == 0) {
                char *argv[] = {"git", "config", "--get", (char *)key, NULL};
                if (posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO) == 0 &&
                    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY,
                                                     0) == 0 &&
                    posix_spawnp(&pid, "git", &fa, NULL, argv, environ) != 0)
                        pid = -1;
                posix_spawn_file_actions_destroy(&fa);
        }
        close(p[1]);
        /* at most GIT_CONFIG_MS: a config that includes a FIFO (or a slow
         * file system) must not hold the run's start for ever */
        struct timespec t0, now;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        size_t n = 0;
        bool late = false;
        while (pid > 0 && n + 1 < size) {
                clock_gettime(CLOCK_MONOTONIC, &now);
                long ms = GIT_CONFIG_MS -
                          ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
                struct pollfd pf = {.fd = p[0], .events = POLLIN};
                int pr = ms > 0 ? poll(&pf, 1, (int)ms) : 0;
                if (pr < 0 && errno == EINTR)
                        continue;
                if (pr <= 0) {
                        late = pr == 0;
                        break;
                }
                ssize_t k = read(p[0], out + n, size - 1 - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                n += (size_t)k;
        }
        if (late) {
                (void)kill(pid, SIGKILL);
                n = 0;
        }
        out[n] = '\0';
        out[strcspn(out, "\r\n")] = '\0';
        close(p[0]);
        int status = 0;
        if (pid > 0 && (RETRY_EINTR(waitpid(pid, &status, 0)) != pid || !WIFEXITED(status) ||
                        WEXITSTATUS(status) != 0))
                out[0] = '\0';
}

/* Token k (1-based) of a configuration file injected: its value into
 * ringfence's own environment as SRC<k>, the run's variable VAR<k> holds a
 * placeholder, injected toward host only, which is allowed. */
static int inject_token(const char *name, const struct profile_for *f, struct profile_ops *ops,
                        const char *var, const char *src_prefix, size_t k, const char *value,
                        const char *host, struct rf_error *err)
{
        char src[64], arg[PROFILE_ARG_MAX];
        snprintf(src, sizeof src, "%s%zu", src_prefix, k);
        if (setenv(src, value, 1) < 0)
                return rf_error_set(err, -ENOMEM, "out of memory");
        if ((size_t)snprintf(arg, sizeof arg, "%s%zu=env:%s@%s", var, k, src, host) >= sizeof arg)
                return rf_error_set(err, -E2BIG, "--profile %s: a host too long", name);
        /* the daemon's caller: a host named in its own file is not allowed
         * by it (that would reach past the operator's ceiling); the
         * request's allow_hosts may, within it */
        int r = f->who->other ? 0 : add(ops, "allow-host", host, err);
        return r < 0 ? r : add(ops, "inject", arg, err);
}

/*
 * The registry tokens of the caller's ~/.npmrc (shared/npmrc.h): each one's
 * registry allowed and the token injected toward it — the run's copy of the
 * file (profile_home.c, "npmrc") reads RF_NPM_TOKEN_<k>, a placeholder; the
 * value goes into ringfence's own environment only (RINGFENCE_NPM_TOKEN_<k>,
 * an env: source), never into the run's.
 */
static int npm_tokens(const char *name, const struct profile_for *f, struct profile_ops *ops,
                      struct rf_error *err)
{
        char *buf = NULL;
        size_t len = 0, n = 0;
        struct npmrc_token t[NPMRC_TOKENS_MAX];
        int r = profile_home_read(f->who, ".npmrc", &buf, &len, err);
        if (r != 0)
                return r > 0 ? 0 : r;
        r = npmrc_scan(buf, len, t, &n);
        for (size_t k = 0; r == 0 && k < n; k++) {
                buf[t[k].value_off + t[k].value_len] = '\0';
                r = inject_token(name, f, ops, PROFILE_NPM_TOKEN_VAR, PROFILE_NPM_TOKEN_SRC, k + 1,
                                 buf + t[k].value_off, t[k].host, err);
        }
        explicit_bzero(buf, len);
        free(buf);
        if (r == -E2BIG || r == -EINVAL)
                return rf_error_set(err, r,
                                    "--profile %s: ~/.npmrc: more than %d registry tokens, or one "
                                    "too long",
                                    name, NPMRC_TOKENS_MAX);
        return r;
}

/*
 * The index credentials of the caller's pip.conf (shared/pipconf.h): each
 * index's host allowed and its password (or token) injected toward it —
 * the run's copy of the file (profile_home.c, "pipconf") holds the
 * placeholder of RF_PIP_TOKEN_<k> where the credential was.
 */
static int pip_creds(const char *name, const struct profile_for *f, struct profile_ops *ops,
                     struct rf_error *err)
{
        char *buf = NULL;
        const char *rel = NULL;
        size_t len = 0, n = 0, k = 0;
        struct pipconf_cred c[PIPCONF_CREDS_MAX];
        int r = profile_pipconf_read(f->who, &buf, &len, &rel, err);
        if (r != 0)
                return r > 0 ? 0 : r;
        r = pipconf_scan(buf, len, c, &n);
        for (size_t i = 0; r == 0 && i < n; i++) {
                char value[PIPCONF_VALUE_MAX + 1];
                size_t vl = 0;
                if (!c[i].host[0])
                        continue; /* its line stays out of the run's copy */
                if (pipconf_decode(buf + c[i].off, c[i].len, value, &vl) < 0 ||
                    strlen(value) != vl) {
                        r = rf_error_set(err, -EINVAL,
                                         "--profile %s: ~/%s: a credential's %%-escape is not "
                                         "one",
                                         name, rel);
                        break;
                }
                r = inject_token(name, f, ops, PROFILE_PIP_TOKEN_VAR, PROFILE_PIP_TOKEN_SRC, ++k,
                                 value, c[i].host, err);
                explicit_bzero(value, sizeof value);
        }
        explicit_bzero(buf, len);
        free(buf);
        if (r == -E2BIG)
                return rf_error_set(err, r,
                                    "--profile %s: ~/%s: more than %d index credentials, or one "
                                    "too long",
                                    name, rel, PIPCONF_CREDS_MAX);
        if (r == -EINVAL && !err->msg[0])
                return rf_error_set(err, r, "--profile %s: ~/%s: a NUL byte", name, rel);
        return r;
}

void profile_scrub(void)
{
        static const char *const srcs[] = {PROFILE_NPM_TOKEN_SRC, PROFILE_PIP_TOKEN_SRC};
        for (size_t i = 0; i < ARRAY_SIZE(srcs); i++)
                for (size_t k = 1; k <= (NPMRC_TOKENS_MAX > PIPCONF_CREDS_MAX ? NPMRC_TOKENS_MAX
                                                                              : PIPCONF_CREDS_MAX);
                     k++) {
                        char src[64];
                        snprintf(src, sizeof src, "%s%zu", srcs[i], k);
                        char *v = getenv(src);
                        if (!v)
                                continue;
                        explicit_bzero(v, strlen(v));
                        unsetenv(src);
                }
}

static int expand(const char *name, const struct profile_for *f, struct profile_ops *ops, int depth,
                  struct rf_error *err)
{
        char file[PATH_MAX], buf[PROFILE_ARG_MAX];
        int r;

        if (!policy_profile_name_valid(name))
                return rf_error_set(err, -EINVAL,
                                    "--profile %.80s: a name of a-z, 0-9, - and _ (see ringfence "
                                    "profile list)",
                                    name);
        if (depth > 4)
                return rf_error_set(err, -ELOOP, "--profile %s: building blocks nest too deep",
                                    name);
        if ((r = user_file(name, f, file, err)) == 0)
                return add(ops, "policy", file, err);
        if (r != -ENOENT)
                return r;
        const struct builtin *b = builtin_find(name);
        if (!b)
                return rf_error_set(err, -ENOENT,
                                    "--profile %s: no such profile (built in: node, python, git, "
                                    "npm, pip, claude-code, codex, gemini-cli; or a policy file "
                                    "~/.config/ringfence/profiles/%s.json)",
                                    name, name);
        for (size_t i = 0; i < ARRAY_SIZE(b->uses) && b->uses[i]; i++)
                if ((r = expand(b->uses[i], f, ops, depth + 1, err)) < 0)
                        return r;
        for (size_t i = 0; i < ARRAY_SIZE(b->commands) && b->commands[i]; i++) {
                char found[PATH_MAX], root[PATH_MAX], extra[PATH_MAX];
                /* as the caller: it must be able to reach what it runs */
                if ((r = caller_enter(f->who)) < 0)
                        return rf_error_set(err, r, "--profile %s: cannot take uid %u's identity",
                                            name, (unsigned)f->who->uid);
                r = host_command_for(b->commands[i], f->path, f->who->home, found, root, extra);
                caller_leave(f->who);
                if (r < 0)
                        return rf_error_set(err, -ENOENT,
                                            "--profile %s: %s is not on your PATH; install it, "
                                            "or put its directory on PATH",
                                            name, b->commands[i]);
                /* the tree (not under /usr: every run sees that) read-only,
                 * and the command's own directory first on the run's PATH */
                if (!host_path_visible(root) && (r = add(ops, "ro", root, err)) < 0)
                        return r;
                if (extra[0] && !host_path_visible(extra) && (r = add(ops, "ro", extra, err)) < 0)
                        return r;
                char *slash = strrchr(found, '/');
                if (slash && slash != found)
                        *slash = '\0';
                if (!host_path_visible(found) && (r = add(ops, "path", found, err)) < 0)
                        return r;
        }
        for (size_t i = 0; i < ARRAY_SIZE(b->allow) && b->allow[i]; i++)
                if ((r = add(ops, "allow-host", b->allow[i], err)) < 0)
                        return r;
        for (size_t i = 0; i < ARRAY_SIZE(b->env) && b->env[i]; i++)
                if ((r = add(ops, "env", b->env[i], err)) < 0)
                        return r;
        /* the API key: the run holds a placeholder, the egress process
         * puts the caller's value on the wire toward the API host only */
        for (size_t i = 0; i < ARRAY_SIZE(b->key_env) && b->key_env[i]; i++) {
                const char *v = f->who->other ? NULL : getenv(b->key_env[i]);
                if (!v || !v[0] || !b->allow[0])
                        continue;
                snprintf(buf, sizeof buf, "%s=env:%s@%s", b->key_env[i], b->key_env[i],
                         b->allow[0]);
                if ((r = add(ops, "inject", buf, err)) < 0)
                        return r;
        }
        if (b->npm_tokens && (r = npm_tokens(name, f, ops, err)) < 0)
                return r;
        if (b->pip_creds && (r = pip_creds(name, f, ops, err)) < 0)
                return r;
        for (size_t i = 0; i < ARRAY_SIZE(b->home) && b->home[i]; i++)
                if ((r = add(ops, "home", b->home[i], err)) < 0)
                        return r;
        if (b->keep && (r = add(ops, "keep", b->keep, err)) < 0)
                return r;
        if (b->git_identity) {
                static const char *const keys[][3] = {
                        {"user.name", "GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"},
                        {"user.email", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"}};
                bool any = false;
                for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
                        char v[256];
                        git_config(keys[k][0], f->who, v, sizeof v);
                        if (!v[0])
                                continue;
                        any = true;
                        for (size_t j = 1; j < 3; j++) {
                                snprintf(buf, sizeof buf, "%s=%s", keys[k][j], v);
                                if ((r = add(ops, "env", buf, err)) < 0)
                                        return r;
                        }
                }
                /* and as the run's ~/.gitconfig, for `git config user.name` */
                if (any && (r = add(ops, "home", "gitconfig", err)) < 0)
                        return r;
        }
        return 0;
}

int profile_expand(const char *name, const struct profile_for *f, struct profile_ops *ops,
                   struct rf_error *err)
{
        return expand(name, f, ops, 0, err);
}

/* ---- ringfence profile list|show ------------------------------------------------------ */

static void profile_usage(FILE *f)
{
        fputs("Usage: ringfence profile list\n"
              "       ringfence profile show NAME\n"
              "       ringfence profile forget NAME [--uid UID] [--state-dir DIR]\n"
              "\n"
              "Profiles for `ringfence run --profile NAME` (repeatable): what an agent or a\n"
              "tool needs, as the run flags it stands for on this host. A policy file\n"
              "~/.config/ringfence/profiles/NAME.json or /etc/ringfence/profiles/NAME.json\n"
              "is a profile too, and wins over a built-in of the same name.\n"
              "`forget` removes what `run --keep-state` kept of NAME's agent state (logins,\n"
              "history) for UID (default: yours; root: another uid's).\n",
              f);
}

static void list_dir(const char *dir)
{
        DIR *d = opendir(dir);
        if (!d)
                return;
        for (struct dirent *e; (e = readdir(d));) {
                size_t n = strlen(e->d_name);
                if (n > 5 && !strcmp(e->d_name + n - 5, ".json"))
                        printf("%-14.*s policy file %s/%s\n", (int)(n - 5), e->d_name, dir,
                               e->d_name);
        }
        closedir(d);
}

#define FORGET_DEPTH 32 /* directories deeper are moved up and removed on a later pass */

/*
 * Empty the directory dfd, through no symbolic link (one is removed, never
 * followed) and on device dev only (a mount point refuses: -EXDEV). A run
 * wrote this tree: a directory deeper than FORGET_DEPTH is moved up into
 * top (renamed, same filesystem) and *again set, so that no depth it made
 * can exhaust fds or stop the removal. 0 or -errno.
 */
static int empty_dir(int top, int dfd, dev_t dev, int depth, unsigned *seq, bool *again)
{
        /* its own open file (a dup would share the offset of dfd's, left
         * at the end by an earlier pass) */
        int dup_fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = dup_fd < 0 ? NULL : fdopendir(dup_fd);
        int r = 0;
        if (!d) {
                r = -errno;
                if (dup_fd >= 0)
                        close(dup_fd);
                return r;
        }
        for (struct dirent *e; r == 0 && (e = readdir(d));) {
                struct stat st;
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                        continue;
                if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        r = errno == ENOENT ? 0 : -errno;
                        continue;
                }
                if (!S_ISDIR(st.st_mode)) {
                        if (unlinkat(dfd, e->d_name, 0) < 0 && errno != ENOENT)
                                r = -errno;
                        continue;
                }
                if (st.st_dev != dev) {
                        r = -EXDEV;
                        continue;
                }
                if (depth >= FORGET_DEPTH) {
                        char moved[64];
                        snprintf(moved, sizeof moved, ".forget-%d-%u", (int)getpid(), (*seq)++);
                        if (renameat(dfd, e->d_name, top, moved) < 0)
                                r = -errno;
                        *again = true;
                        continue;
                }
                int sub = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub < 0) {
                        r = -errno;
                        continue;
                }
                r = empty_dir(top, sub, dev, depth + 1, seq, again);
                close(sub);
                if (r == 0 && unlinkat(dfd, e->d_name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                        r = -errno;
        }
        closedir(d);
        return r;
}

/* Remove name beneath dfd and everything in it (empty_dir). 0 or -errno. */
static int remove_tree(int dfd, const char *name)
{
        struct stat st;
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISDIR(st.st_mode))
                return unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
        _cleanup_close_ int top =
                openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (top < 0)
                return -errno;
        unsigned seq = 0;
        int r = 0;
        for (bool again = true; r == 0 && again;) {
                again = false;
                r = empty_dir(top, top, st.st_dev, 0, &seq, &again);
        }
        if (r == 0 && unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                r = -errno;
        return r;
}

/* `ringfence profile forget NAME [--uid UID] [--state-dir DIR]` */
static int profile_forget(int argc, char **argv)
{
        const char *name = argv[2], *sd_flag = NULL;
        unsigned long uid = getuid();
        for (int i = 3; i < argc; i++) {
                char *end = NULL;
                if (!strcmp(argv[i], "--uid") && i + 1 < argc) {
                        errno = 0;
                        uid = strtoul(argv[++i], &end, 10);
                        if (errno || !end || *end || uid >= 0xffffffffUL) {
                                cli_error("profile forget: --uid: a uid");
                                return CLI_EXIT_USAGE;
                        }
                        if (uid != getuid() && getuid() != 0) {
                                cli_error("profile forget: --uid: only root may name another uid");
                                return RF_EXIT_REFUSED;
                        }
                } else if (!strcmp(argv[i], "--state-dir") && i + 1 < argc)
                        sd_flag = argv[++i];
                else {
                        cli_error("profile forget: unknown argument %s", argv[i]);
                        return CLI_EXIT_USAGE;
                }
        }
        if (!policy_profile_name_valid(name)) {
                cli_error("profile forget: %.80s: a profile name (a-z, 0-9, - and _)", name);
                return CLI_EXIT_USAGE;
        }
        _cleanup_free_ char *sd = NULL;
        struct rf_error err = {0};
        if (cli_state_dir(sd_flag, 0, &sd, &err) < 0) {
                cli_print_error(&err);
                return RF_EXIT_REFUSED;
        }
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/kept/%lu", sd, uid);
        _cleanup_close_ int ud = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if ((ud < 0 && errno == ENOENT) ||
            (ud >= 0 && fstatat(ud, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)) {
                printf("nothing kept of %s for uid %lu\n", name, uid);
                return 0;
        }
        int r = ud < 0 ? -errno : remove_tree(ud, name);
        if (r < 0) {
                cli_error("profile forget: %s/%s: %s", path, name, strerror(-r));
                return RF_EXIT_REFUSED;
        }
        printf("forgot what was kept of %s for uid %lu\n", name, uid);
        return 0;
}

int cmd_profile(int argc, char **argv)
{
        if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
                profile_usage(argc < 2 ? stderr : stdout);
                return argc < 2 ? CLI_EXIT_USAGE : 0;
        }
        if (!strcmp(argv[1], "list") && argc == 2) {
                for (size_t i = 0; i < ARRAY_SIZE(builtins); i++)
                        printf("%-14s %s\n", builtins[i].name, builtins[i].summary);
                const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
                char dir[PATH_MAX];
                if (xdg && xdg[0] == '/') {
                        snprintf(dir, sizeof dir, "%s/ringfence/profiles", xdg);
                        list_dir(dir);
                } else if (home && home[0] == '/') {
                        snprintf(dir, sizeof dir, "%s/.config/ringfence/profiles", home);
                        list_dir(dir);
                }
                list_dir("/etc/ringfence/profiles");
                return 0;
        }
        if (!strcmp(argv[1], "show") && argc == 3) {
                static struct profile_ops ops;
                struct rf_error err = {0};
                struct rf_caller self;
                caller_self(&self);
                struct profile_for f = {.who = &self, .path = getenv("PATH")};
                if (profile_expand(argv[2], &f, &ops, &err) < 0) {
                        cli_print_error(&err);
                        return RF_EXIT_REFUSED;
                }
                printf("ringfence run --profile %s stands for, on this host:\n", argv[2]);
                for (size_t i = 0; i < ops.n; i++) {
                        const struct profile_op *o = &ops.op[i];
                        if (!strcmp(o->flag, "inject")) {
                                /* the value is never shown: only where it comes from */
                                printf("  --inject %s\n", o->arg);
                        } else if (!strcmp(o->flag, "path"))
                                printf("  -e PATH=%s:... (first on the run's PATH)\n", o->arg);
                        else if (!strcmp(o->flag, "policy"))
                                printf("  -p %s (merged at this point)\n", o->arg);
                        else if (!strncmp(o->arg, "copy:", 5) && !strcmp(o->flag, "home"))
                                printf("  ~/%s copied into the run's $HOME when you have it\n",
                                       o->arg + 5);
                        else if (!strcmp(o->flag, "keep"))
                                printf("  ~/%s kept across runs with --keep-state (ringfence's "
                                       "state dir, not yours)\n",
                                       o->arg);
                        else if (!strcmp(o->flag, "home")) {
                                const char *rel = "", *what = profile_home_describe(o->arg, &rel);
                                if (what)
                                        printf("  ~/%s in the run's $HOME (%s)\n", rel, what);
                        } else
                                printf("  --%s %s\n", o->flag, o->arg);
                }
                return 0;
        }
        if (!strcmp(argv[1], "forget") && argc >= 3)
                return profile_forget(argc, argv);
        cli_error("profile: expected `list`, `show NAME` or `forget NAME` (see ringfence profile "
                  "--help)");
        return CLI_EXIT_USAGE;
}
