/*
 * cmd_run.c — `ringfence run [OPTIONS] -- COMMAND [ARG...]`, and
 * `ringfence run --request-fd FD`, the daemon's typed start.
 *
 * The CLI's front end of a run: from the flags (or the daemon's request,
 * supervisor/runwire.h) and the profiles it builds the request's overlay
 * and gathers the caller's facts, then hands the start to run_start
 * (supervisor/start.h). Any refusal before the command runs exits 125
 * with one line.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "caller.h"
#include "profile.h"
#include "profile_home.h"
#include "audit/token.h"
#include "policy/policy.h"
#include "sandbox/plan.h"
#include "secrets/grant.h"
#include "shared/json.h"
#include "shared/macro.h"
#include "shared/memfd.h"
#include "supervisor/run.h"
#include "supervisor/runwire.h"
#include "supervisor/start.h"

enum {
        OPT_AGENT = 0x100,
        OPT_ON_BEHALF_OF,
        OPT_TASK,
        OPT_PROJECT,
        OPT_TRIGGERED_BY,
        OPT_AUDIENCE,
        OPT_ALLOW_HOST,
        OPT_ALLOW_HTTP,
        OPT_ADD_HOST,
        OPT_CAPTURE,
        OPT_UPSTREAM_CA,
        OPT_TIMEOUT,
        OPT_STATE_DIR,
        OPT_MEMORY,
        OPT_PIDS,
        OPT_CPUS,
        OPT_RO,
        OPT_RW,
        OPT_PROTECT,
        OPT_SECRET,
        OPT_SECRET_FILE,
        OPT_SECRET_BROKER,
        OPT_INJECT,
        OPT_MASK_OUTPUT,
        OPT_RAW_TERMINAL,
        OPT_KEY_FILE,
        OPT_RUN_ID,
        OPT_DETACH,
        OPT_LOG_MAX,
        OPT_EXPECT_WORKSPACE,
        OPT_CALLER_UID,
        OPT_QUIET,
        OPT_PROFILE,
        OPT_KEEP_STATE,
        OPT_PUBLISH,
        OPT_ROOTFS,
};

static const struct option run_options[] = {
        {"policy", required_argument, NULL, 'p'},
        {"profile", required_argument, NULL, OPT_PROFILE},
        {"workspace", required_argument, NULL, 'w'},
        {"env", required_argument, NULL, 'e'},
        {"agent", required_argument, NULL, OPT_AGENT},
        {"on-behalf-of", required_argument, NULL, OPT_ON_BEHALF_OF},
        {"task", required_argument, NULL, OPT_TASK},
        {"project", required_argument, NULL, OPT_PROJECT},
        {"triggered-by", required_argument, NULL, OPT_TRIGGERED_BY},
        {"audience", required_argument, NULL, OPT_AUDIENCE},
        {"allow-host", required_argument, NULL, OPT_ALLOW_HOST},
        {"allow-http", required_argument, NULL, OPT_ALLOW_HTTP},
        {"add-host", required_argument, NULL, OPT_ADD_HOST},
        {"publish", required_argument, NULL, OPT_PUBLISH},
        {"capture", required_argument, NULL, OPT_CAPTURE},
        {"upstream-ca", required_argument, NULL, OPT_UPSTREAM_CA},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"state-dir", required_argument, NULL, OPT_STATE_DIR},
        {"memory", required_argument, NULL, OPT_MEMORY},
        {"pids", required_argument, NULL, OPT_PIDS},
        {"cpus", required_argument, NULL, OPT_CPUS},
        {"ro", required_argument, NULL, OPT_RO},
        {"rootfs", required_argument, NULL, OPT_ROOTFS},
        {"rw", required_argument, NULL, OPT_RW},
        {"protect", required_argument, NULL, OPT_PROTECT},
        {"secret", required_argument, NULL, OPT_SECRET},
        {"secret-file", required_argument, NULL, OPT_SECRET_FILE},
        {"secret-broker", required_argument, NULL, OPT_SECRET_BROKER},
        {"inject", required_argument, NULL, OPT_INJECT},
        {"mask-output", no_argument, NULL, OPT_MASK_OUTPUT},
        {"raw-terminal", no_argument, NULL, OPT_RAW_TERMINAL},
        {"key-file", required_argument, NULL, OPT_KEY_FILE},
        {"run-id", required_argument, NULL, OPT_RUN_ID},
        {"detach", no_argument, NULL, OPT_DETACH},
        {"log-max", required_argument, NULL, OPT_LOG_MAX},
        {"expect-workspace", required_argument, NULL, OPT_EXPECT_WORKSPACE},
        {"caller-uid", required_argument, NULL, OPT_CALLER_UID},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"keep-state", no_argument, NULL, OPT_KEEP_STATE},
        {"help", no_argument, NULL, 'h'},
        {},
};

static void run_usage(FILE *f)
{
        fputs("Usage: ringfence run [OPTIONS] -- COMMAND [ARG...]\n"
              "\n"
              "Run COMMAND isolated: its own user, mount, pid, network (loopback only),\n"
              "ipc, uts and cgroup namespaces; a fresh root with read-only system\n"
              "directories; the workspace read-write; no capabilities.\n"
              "\n"
              "  -p, --policy FILE         policy file (JSON; format in docs/POLICY.md)\n"
              "      --profile NAME        what an agent or tool needs, as flags: claude-code,\n"
              "                            codex, gemini-cli, node, python, git, npm, pip, or\n"
              "                            a policy file of yours (ringfence profile list)\n"
              "      --keep-state          keep the agent profiles' state (~/.claude, ~/.codex,\n"
              "                            ~/.gemini: logins, history) across runs, in the\n"
              "                            state dir (ringfence profile forget NAME clears it)\n"
              "  -w, --workspace DIR       mounted read-write at the same path (default: cwd)\n"
              "  -e, --env NAME=VALUE      add an environment variable\n"
              "      --ro PATH             also bind PATH read-only\n"
              "      --rw PATH             also bind PATH read-write (under sudo, both\n"
              "                            opened with the rights of the user who ran sudo)\n"
              "      --rootfs DIR          the run's root is DIR (an image's root filesystem),\n"
              "                            read-only under a layer of the run's own\n"
              "      --protect PATH        keep PATH (relative to the workspace) read-only;\n"
              "                            a trailing / makes a missing one a directory\n"
              "      --agent NAME          who acts (default \"agent\")\n"
              "      --on-behalf-of WHO    the principal the agent acts for\n"
              "      --task ID  --project NAME   what the run is for\n"
              "      --triggered-by RUN|TOKEN  the run (id, or its identity token) that caused\n"
              "                            this one; must be known to this instance\n"
              "      --audience AUD        `aud` of the run's identity token (default ringfence)\n"
              "      --allow-host H[:PORTS] let the run reach H (name, *.suffix, IP, CIDR)\n"
              "                            through its egress proxy (default: nothing)\n"
              "      --allow-http 'HOST[:PORT] METHOD[,METHOD] PATH-GLOB'\n"
              "                            what the run may do on HOST (a bare HOST: 443):\n"
              "                            every HTTP request to it must match one of its\n"
              "                            rules (METHOD: GET HEAD POST PUT PATCH DELETE\n"
              "                            OPTIONS or *; * within a segment, ** whole\n"
              "                            segments), else 403; TLS to it is terminated\n"
              "                            with the run CA; an allow rule must still reach\n"
              "                            it (network.http, docs/EGRESS.md)\n"
              "      --add-host NAME:IP    a static name for the egress proxy (before DNS)\n"
              "      --publish [127.0.0.1:|[::1]:]HOST_PORT:RUN_PORT\n"
              "                            the host's loopback HOST_PORT reaches the run's\n"
              "                            RUN_PORT (OAuth callbacks, dev servers); only\n"
              "                            your uid (and root) may connect; recorded\n"
              "      --capture MODE        transparent (default): TCP to allowed names and\n"
              "                            addresses is captured without proxy settings,\n"
              "                            anything else refused at once; proxy-only: only\n"
              "                            the proxies (network.capture in the policy)\n"
              "      --secret ENV=SOURCE   bind a secret as environment variable ENV\n"
              "      --secret-file NAME=SOURCE  ... as /run/secrets/NAME (0400, private tmpfs;\n"
              "                                 with --rootfs /run/ringfence/secrets/NAME)\n"
              "      --secret-broker NAME=SOURCE  ... on demand: ringfence-secret NAME\n"
              "                            SOURCE: store:NAME[@VERSION] | exec:CMD ARG... |\n"
              "                            env:VAR (development only); see docs/SECRETS.md\n"
              "      --inject ENV=SOURCE@HOST[:PORT][,HOST[:PORT]...]\n"
              "                            ENV holds a random placeholder; the egress process\n"
              "                            puts the value in request headers to these hosts\n"
              "                            only (HOST: HTTPS on 443, terminated with a run CA\n"
              "                            the run trusts; HOST:PORT: TLS on that port;\n"
              "                            http://HOST:PORT: plaintext HTTP, explicitly) and\n"
              "                            refuses the placeholder anywhere else\n"
              "                            (docs/SECRETS.md, docs/TLS.md)\n"
              "      --upstream-ca FILE    also trust this PEM CA for injection hosts' own\n"
              "                            certificates (private APIs; network.upstream_ca)\n"
              "      --mask-output         bound values in the run's output become *** (also\n"
              "                            re-cased, hex, URL- or base64-encoded)\n"
              "      --raw-terminal        pass the run's output to the terminal unfiltered:\n"
              "                            it may then set the clipboard (OSC 52) and title,\n"
              "                            and make the terminal answer queries (default:\n"
              "                            those sequences are dropped; see ringfence(1))\n"
              "      --detach              run in the background; print the run id (output:\n"
              "                            STATE_DIR/logs/RUN.log, secrets masked, 64M at most;\n"
              "                            see ringfence wait, logs)\n"
              "      --log-max SIZE        stop writing output to a file (a log) past SIZE\n"
              "      --key-file FILE       the store's master key (default STATE_DIR/secrets.key)\n"
              "      --timeout DURATION    kill the run after N(ms|s|m|h); exit 124\n"
              "      --memory SIZE --pids N --cpus X   resource limits\n"
              "      --state-dir DIR       ringfence instance (also RINGFENCE_STATE_DIR)\n"
              "      --expect-workspace DEV:INO  refuse unless the workspace is this inode\n"
              "                            (the daemon passes the one it checked)\n"
              "      --caller-uid UID      root only: whom the run is started for (ps shows it)\n"
              "      --quiet               no end-of-run summary of refused egress on stderr\n"
              "  -h, --help                this help\n"
              "\n"
              "Exit status: the command's; 128+N if it died of signal N; 124 on timeout;\n"
              "125 if ringfence refused or failed (the command did not run); 126/127 if\n"
              "the command is not executable / not found.\n",
              f);
}

static int apply_flag(struct rf_policy *o, int c, const char *arg, char **policy_file,
                      char **state_dir, char **trigger_token, struct rf_error *err);

/* whom the run is for (caller.h): this process, or the daemon's caller */
static struct rf_caller who;

/* the profiles' state directories kept with --keep-state (plan.h) */
static struct plan_kept kept[PLAN_KEPT_MAX];
static char kept_names[PLAN_KEPT_MAX][2][PROFILE_NAME_MAX + 1];
static size_t n_kept;

/* the profiles' files for the run's $HOME (profile_home.h), by generator */
static char home_gens[PROFILE_HOME_MAX][PROFILE_ARG_MAX];
static size_t n_home_gens;

static const char *policy_env(void *ctx, const char *name)
{
        const struct rf_policy *pol = ctx;
        const char *v = NULL;
        for (size_t i = 0; i < pol->n_env; i++)
                if (!strcmp(pol->env_names[i], name))
                        v = pol->env_values[i];
        return v;
}

static const char *grant_placeholder(void *ctx, const char *name)
{
        const struct rf_grants *g = ctx;
        for (size_t i = 0; g && i < g->n; i++)
                if (g->g[i].b.delivery == SECRET_INJECT && !strcmp(g->g[i].b.env, name))
                        return g->g[i].placeholder;
        return NULL;
}

/*
 * The profiles' home files rendered for this run into files[] (data owned
 * by the caller: free each), for a workspace `ws` (as given or the current
 * directory) and the run's placeholders. 0 or -errno with err set.
 */
static int home_files_render(const char *ws, const struct rf_policy *pol,
                             const struct rf_grants *grants, struct plan_home_file *files,
                             size_t *n, struct rf_error *err)
{
        char canon[PATH_MAX];
        struct profile_home_ctx ctx = {.workspace = realpath(ws, canon) ? canon : ws,
                                       .who = &who,
                                       .env = policy_env,
                                       .env_ctx = (void *)pol,
                                       .placeholder = grant_placeholder,
                                       .placeholder_ctx = (void *)grants};
        *n = 0;
        for (size_t i = 0; i < n_home_gens; i++) {
                struct plan_home_file *f = &files[*n];
                int r = profile_home_render(home_gens[i], &ctx, f, err);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                (*n)++;
        }
        return 0;
}

/*
 * --profile NAME: its flags (profile.h), applied here as if typed, in
 * order; "path" puts a directory first on the run's PATH, "policy" merges
 * a user profile's policy file. Returns 0 or -errno with err set.
 */
static int apply_profile(struct rf_policy *o, const char *name, char **policy_file,
                         char **state_dir, char **trigger_token, struct rf_error *err)
{
        static struct profile_ops ops;
        int r;

        ops.n = 0;
        /* root for itself reads the profiles' files beneath $HOME as root:
         * a $HOME of another user's (sudo -E, doas keepenv, without
         * SUDO_UID) could lead it through a link there to root's own
         * files, which would then be the run's */
        struct stat hs;
        if (!who.other && geteuid() == 0 && who.home[0] && stat(who.home, &hs) == 0 &&
            hs.st_uid != 0)
                return rf_error_set(err, -EPERM,
                                    "--profile %s: $HOME (%s) is uid %u's, not root's: root "
                                    "reads no other user's files for a profile; run it through "
                                    "sudo, which names the user (its files are then read as "
                                    "it), or with root's own HOME",
                                    name, who.home, (unsigned)hs.st_uid);
        /* the daemon's caller's commands: on the PATH it asked for (-e PATH
         * before --profile), else the default one — never the daemon's;
         * sudo's caller's: on the PATH sudo left (its secure_path as a
         * rule), or the one asked for; either looked up as the caller */
        struct profile_for f = {.who = &who, .path = getenv("PATH")};
        if (who.other) {
                if (!who.sudo)
                        f.path = RF_DEFAULT_PATH;
                for (size_t k = 0; k < o->n_env; k++)
                        if (!strcmp(o->env_names[k], "PATH"))
                                f.path = o->env_values[k];
        }
        if ((r = profile_expand(name, &f, &ops, err)) < 0)
                return r;
        for (size_t i = 0; i < ops.n; i++) {
                const struct profile_op *op = &ops.op[i];
                if (!strcmp(op->flag, "policy")) {
                        _cleanup_policy_ struct rf_policy *fp = NULL;
                        if ((r = policy_load_file(op->arg, &fp, err)) < 0 ||
                            (r = policy_merge(o, fp, err)) < 0)
                                return r;
                        continue;
                }
                if (!strcmp(op->flag, "keep")) {
                        bool dup = false;
                        for (size_t k = 0; k < n_kept; k++)
                                dup |= !strcmp(kept[k].rel, op->arg);
                        if (dup)
                                continue;
                        if (n_kept == PLAN_KEPT_MAX || strlen(op->arg) > PROFILE_NAME_MAX)
                                return rf_error_set(err, -E2BIG, "--profile %s: too much state",
                                                    name);
                        snprintf(kept_names[n_kept][0], sizeof kept_names[0][0], "%s", name);
                        snprintf(kept_names[n_kept][1], sizeof kept_names[0][1], "%s", op->arg);
                        kept[n_kept] = (struct plan_kept){.profile = kept_names[n_kept][0],
                                                          .rel = kept_names[n_kept][1]};
                        n_kept++;
                        continue;
                }
                if (!strcmp(op->flag, "home")) {
                        /* rendered once the run's workspace and placeholders
                         * are known (home_files_render) */
                        bool dup = false;
                        for (size_t k = 0; k < n_home_gens; k++)
                                dup |= !strcmp(home_gens[k], op->arg);
                        if (dup)
                                continue;
                        if (n_home_gens == PROFILE_HOME_MAX)
                                return rf_error_set(err, -E2BIG,
                                                    "--profile %s: more than %d files for the "
                                                    "run's $HOME",
                                                    name, PROFILE_HOME_MAX);
                        snprintf(home_gens[n_home_gens++], sizeof home_gens[0], "%s", op->arg);
                        continue;
                }
                if (!strcmp(op->flag, "path")) {
                        const char *cur = RF_DEFAULT_PATH;
                        for (size_t k = 0; k < o->n_env; k++)
                                if (!strcmp(o->env_names[k], "PATH"))
                                        cur = o->env_values[k];
                        char path[POLICY_STRING_MAX];
                        if ((size_t)snprintf(path, sizeof path, "%s:%s", op->arg, cur) >=
                            sizeof path)
                                return rf_error_set(err, -E2BIG, "--profile %s: PATH too long",
                                                    name);
                        if ((r = policy_add_env(o, "PATH", path, err)) < 0)
                                return r;
                        continue;
                }
                int c = 0;
                for (const struct option *ro = run_options; ro->name && !c; ro++)
                        if (!strcmp(ro->name, op->flag))
                                c = ro->val;
                if (!c)
                        return rf_error_set(err, -EINVAL,
                                            "--profile %s: flag --%s (internal error)", name,
                                            op->flag);
                if ((r = apply_flag(o, c, op->arg, policy_file, state_dir, trigger_token, err)) <
                    0) {
                        char why[RF_ERROR_MSG_MAX];
                        snprintf(why, sizeof why, "%s", err->msg[0] ? err->msg : strerror(-r));
                        return rf_error_set(err, r, "--profile %s: %s", name, why);
                }
        }
        return 0;
}

/* Apply one option to the CLI overlay. Returns 0 or -errno with err set. */
static int apply_flag(struct rf_policy *o, int c, const char *arg, char **policy_file,
                      char **state_dir, char **trigger_token, struct rf_error *err)
{
        int r;

        switch (c) {
        case OPT_KEY_FILE:
        case OPT_MASK_OUTPUT:
        case OPT_RAW_TERMINAL:
        case OPT_RUN_ID:
        case OPT_DETACH:
        case OPT_LOG_MAX:
        case OPT_EXPECT_WORKSPACE:
        case OPT_CALLER_UID:
        case OPT_QUIET:
        case OPT_KEEP_STATE:
                return 0; /* cmd_run's own */
        case OPT_PROFILE:
                return apply_profile(o, arg, policy_file, state_dir, trigger_token, err);
        case 'p':
                free(*policy_file);
                *policy_file = strdup(arg);
                return *policy_file ? 0 : -ENOMEM;
        case OPT_STATE_DIR:
                free(*state_dir);
                *state_dir = strdup(arg);
                return *state_dir ? 0 : -ENOMEM;
        case 'w':
        case OPT_ROOTFS:
        case OPT_RO:
        case OPT_RW: {
                const char *flag = c == 'w'          ? "--workspace"
                                   : c == OPT_ROOTFS ? "--rootfs"
                                   : c == OPT_RO     ? "--ro"
                                                     : "--rw";
                char cwd[PATH_MAX], abs[PATH_MAX];
                if (!getcwd(cwd, sizeof cwd) || (r = path_absolute(cwd, arg, abs, sizeof abs)) < 0)
                        return rf_error_set(err, -EINVAL, "%s %s: not a usable path", flag, arg);
                if (c == OPT_ROOTFS && !strcmp(abs, "/"))
                        return rf_error_set(err, -EINVAL,
                                            "--rootfs /: the host's own root is the default");
                r = c == 'w'          ? policy_set_string(&o->workspace, abs, PATH_MAX, err)
                    : c == OPT_ROOTFS ? policy_set_string(&o->rootfs, abs, PATH_MAX, err)
                    : c == OPT_RO     ? policy_add_path(&o->read_only, &o->n_read_only, abs, err)
                                      : policy_add_path(&o->read_write, &o->n_read_write, abs, err);
                if (r < 0 && err->msg[0]) {
                        char msg[RF_ERROR_MSG_MAX];
                        snprintf(msg, sizeof msg, "%s", err->msg);
                        rf_error_set(err, r, "%s %s: %s", flag, arg, msg);
                }
                return r;
        }
        case 'e':
                return policy_add_env_text(o, "--env", arg, err);
        case OPT_PROTECT:
                return policy_add_protected(o, arg, err);
        case OPT_AGENT:
                return policy_set_string(&o->agent, arg, POLICY_IDENT_MAX, err);
        case OPT_ON_BEHALF_OF:
                return policy_set_string(&o->on_behalf_of, arg, POLICY_IDENT_MAX, err);
        case OPT_TASK:
                return policy_set_string(&o->task, arg, POLICY_IDENT_MAX, err);
        case OPT_PROJECT:
                return policy_set_string(&o->project, arg, POLICY_IDENT_MAX, err);
        case OPT_ALLOW_HOST:
                r = policy_add_net_rule(o, arg, err);
                if (r < 0 && err)
                        snprintf(err->keypath, sizeof err->keypath, "--allow-host");
                return r;
        case OPT_ALLOW_HTTP:
                r = policy_add_http_rule(o, arg, err);
                if (r < 0 && err) {
                        char msg[RF_ERROR_MSG_MAX];
                        snprintf(msg, sizeof msg, "%s", err->msg);
                        rf_error_set(err, r, "--allow-http %s", msg);
                }
                return r;
        case OPT_ADD_HOST:
                r = policy_add_net_host(o, arg, err);
                if (r < 0 && err)
                        snprintf(err->keypath, sizeof err->keypath, "--add-host");
                return r;
        case OPT_PUBLISH:
                return policy_add_publish_text(o, "--publish", arg, err);
        case OPT_CAPTURE:
                o->net_capture = policy_capture_from_name(arg);
                if (o->net_capture < 0) {
                        o->net_capture = POLICY_CAPTURE_UNSET;
                        return rf_error_set(err, -EINVAL,
                                            "--capture %s: must be transparent or proxy-only", arg);
                }
                return 0;
        case OPT_AUDIENCE:
                return policy_set_string(&o->audience, arg, POLICY_IDENT_MAX, err);
        case OPT_UPSTREAM_CA: {
                /* a relative path is the caller's: made absolute now */
                const char *why = "invalid";
                _cleanup_free_ char *abs = arg[0] == '/' ? NULL : realpath(arg, NULL);
                if (arg[0] != '/' && !abs)
                        return rf_error_set(err, -errno, "--upstream-ca %s: %m", arg);
                if ((r = policy_set_upstream_ca(o, abs ? abs : arg, &why)) < 0)
                        return rf_error_set(err, r, "--upstream-ca %s: %s", arg,
                                            r == -ENOMEM ? "out of memory" : why);
                return 0;
        }
        case OPT_SECRET:
        case OPT_SECRET_FILE:
        case OPT_SECRET_BROKER: {
                enum secret_delivery d = c == OPT_SECRET        ? SECRET_ENV
                                         : c == OPT_SECRET_FILE ? SECRET_FILE
                                                                : SECRET_BROKER;
                const char *flag = c == OPT_SECRET        ? "--secret"
                                   : c == OPT_SECRET_FILE ? "--secret-file"
                                                          : "--secret-broker";
                char why[256], *canon = NULL;
                if ((r = secret_binding_cli(d, arg, &canon, why, sizeof why)) < 0)
                        return rf_error_set(err, r, "%s: %s", flag, why);
                if ((r = policy_add_secret(o, canon, err)) < 0)
                        free(canon);
                return r;
        }
        case OPT_INJECT: {
                char why[256], *canon = NULL;
                if ((r = secret_inject_cli(arg, &canon, why, sizeof why)) < 0)
                        return rf_error_set(err, r, "--inject: %s", why);
                if ((r = policy_add_secret(o, canon, err)) < 0)
                        free(canon);
                return r;
        }
        case OPT_TRIGGERED_BY:
                /* a run identity token is verified once the state dir
                 * (and its key) is known: run_trigger_token() */
                free(*trigger_token);
                *trigger_token = NULL;
                if (!strncmp(arg, TOKEN_HEADER, strlen(TOKEN_HEADER))) {
                        if (strlen(arg) > TOKEN_MAX)
                                return rf_error_set(err, -EINVAL,
                                                    "--triggered-by: token longer than %d bytes",
                                                    TOKEN_MAX);
                        *trigger_token = strdup(arg);
                        return *trigger_token ? 0 : -ENOMEM;
                }
                return policy_set_string(&o->triggered_by, arg, POLICY_IDENT_MAX, err);
        case OPT_TIMEOUT:
        case OPT_MEMORY:
        case OPT_PIDS:
        case OPT_CPUS: {
                /* the same ranges as a policy file */
                const char *key = c == OPT_TIMEOUT  ? "limits.timeout"
                                  : c == OPT_MEMORY ? "limits.memory"
                                  : c == OPT_PIDS   ? "limits.pids"
                                                    : "limits.cpus";
                const char *flag = c == OPT_TIMEOUT  ? "--timeout"
                                   : c == OPT_MEMORY ? "--memory"
                                   : c == OPT_PIDS   ? "--pids"
                                                     : "--cpus";
                if ((r = policy_set_limit(o, key, arg, err)) < 0) {
                        char msg[RF_ERROR_MSG_MAX];
                        snprintf(msg, sizeof msg, "%s", err->msg);
                        rf_error_set(err, r, "%s %s: %s", flag, arg, msg);
                }
                return r;
        }
        default:
                return rf_error_set(err, -EINVAL, "unknown option");
        }
}

/*
 * --detach: the run goes on in a child of its own session, its output in
 * STATE_DIR/logs/RUN.log; the caller returns once the run is registered
 * (printing its id, exit 0) or refused (the log's last line, exit 125).
 * Returns 0 in the child (carry on), the caller's exit status in the parent.
 */
#define DETACHED_OK 256 /* the parent's "exit 0" (0 means: the child, carry on) */
static int detach_ready_fd = -1;

static void detach_ready(void)
{
        if (detach_ready_fd >= 0) {
                (void)!write(detach_ready_fd, "ok", 2);
                detach_ready_fd = safe_close(detach_ready_fd);
        }
}

static int detach_run(const char *state_dir, const char *run_id)
{
        char logs[PATH_MAX], logp[PATH_MAX + 64];
        int ready[2];

        snprintf(logs, sizeof logs, "%s/logs", state_dir);
        (void)mkdir(logs, 0700);
        snprintf(logp, sizeof logp, "%s/%s.log", logs, run_id);
        int lf = open(logp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (lf < 0 || pipe2(ready, O_CLOEXEC) < 0) {
                cli_error("--detach: cannot create %s: %m", logp);
                return RF_EXIT_REFUSED;
        }
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        if (pid < 0) {
                cli_error("--detach: fork: %m");
                return RF_EXIT_REFUSED;
        }
        if (pid == 0) {
                close(ready[0]);
                detach_ready_fd = ready[1];
                (void)setsid();
                int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (nul < 0 || dup2(nul, 0) < 0 || dup2(lf, 1) < 0 || dup2(lf, 2) < 0)
                        _exit(RF_EXIT_REFUSED);
                close(nul);
                close(lf);
                return 0;
        }
        close(lf);
        close(ready[1]);
        char buf[8];
        ssize_t n = read(ready[0], buf, sizeof buf);
        close(ready[0]);
        if (n == 2) {
                printf("%s\n", run_id);
                return DETACHED_OK;
        }
        /* refused before it registered: say what the log says */
        char line[1024] = "";
        FILE *f = fopen(logp, "re");
        while (f && fgets(line, sizeof line, f))
                ;
        if (f)
                fclose(f);
        line[strcspn(line, "\n")] = '\0';
        /* the log's last line is ours as a rule, but anything that wrote
         * last (a provider's stderr) may hold terminal controls */
        if (line[0])
                (void)json_escape_fwrite(stderr, line, strlen(line), true);
        else
                fputs("ringfence: the detached run did not start", stderr);
        fputc('\n', stderr);
        return RF_EXIT_REFUSED;
}

/* run_request's hooks (supervisor/start.h): this front end's part of a start */
static int hook_pin(void *ctx, const char *path, bool rw, struct plan_pin *pin,
                    struct rf_error *err)
{
        return caller_pin(&who, path, rw, pin, err);
}

static void hook_resolved(void *ctx)
{
        profile_scrub(); /* the grants hold the values now */
}

static int hook_home_files(void *ctx, const char *workspace, const struct rf_policy *pol,
                           const struct rf_grants *grants, struct plan_home_file *files, size_t *n,
                           struct rf_error *err)
{
        return home_files_render(workspace, pol, grants, files, n, err);
}

static void hook_ready(void *ctx)
{
        detach_ready();
}

static void hook_note(void *ctx, const char *line)
{
        cli_error("%s", line);
}

/* What a start is, however it was asked for: `run`'s flags (cmd_run), or
 * the daemon's typed request (cmd_run_request). */
struct run_front {
        struct rf_policy *overlay;
        char *policy_file, *state_dir_flag, *trigger_token, *key_file;
        bool mask_output, detach, expect_ws, quiet, raw_terminal, keep_state;
        unsigned long long expect_dev, expect_ino;
        long long caller_uid; /* -1: none named */
        uint64_t log_max;
        char given_id[RF_RUN_ID_LEN + 1];
        char **argv; /* the command, NULL-terminated */
};

static void run_front_done(struct run_front *f)
{
        policy_free(f->overlay);
        free(f->policy_file);
        free(f->state_dir_flag);
        free(f->trigger_token);
        free(f->key_file);
}

/* From here terminating signals wait for the supervisor's signalfd (which
 * forwards them to the run) instead of killing us halfway: a supervisor
 * gone mid-setup would leave init unreaped. */
static void block_terminating(void)
{
        sigset_t term;
        sigemptyset(&term);
        sigaddset(&term, SIGINT);
        sigaddset(&term, SIGTERM);
        sigaddset(&term, SIGHUP);
        sigaddset(&term, SIGQUIT);
        sigprocmask(SIG_BLOCK, &term, NULL);
}

/* The start, from its front (the caller, `who`, known): the run's exit
 * status (125 refused). */
static int run_go(struct run_front *f)
{
        _cleanup_free_ char *state_dir = NULL;
        struct rf_error err = {0};
        char home[PATH_MAX];
        int r;

        if (who.sudo && f->overlay->rootfs) {
                /* an image's root is opened by root alone (the plan pins no
                 * rootfs for a caller): never on sudo's caller's behalf */
                cli_error("run: --rootfs under sudo: the image's root would be opened as root, "
                          "not as uid %u; start it as root itself (sudo env -u SUDO_UID "
                          "ringfence run ...)",
                          (unsigned)who.uid);
                return RF_EXIT_REFUSED;
        }
        if (f->keep_state && n_kept == 0) {
                cli_error("run: --keep-state keeps an agent profile's state (claude-code, codex, "
                          "gemini-cli); no --profile given has any");
                return RF_EXIT_REFUSED;
        }

        if ((r = cli_state_dir(f->state_dir_flag, 1, &state_dir, &err)) < 0) {
                cli_print_error(&err);
                return RF_EXIT_REFUSED;
        }
        if (f->detach) {
                if (!f->given_id[0] && (r = rf_run_id_new(f->given_id)) < 0) {
                        cli_error("cannot make a run id: %s", strerror(-r));
                        return RF_EXIT_REFUSED;
                }
                /* its log: capped, and its bound secrets masked */
                if (!f->log_max)
                        f->log_max = RUN_LOG_DEFAULT;
                f->mask_output = true;
                if ((r = detach_run(state_dir, f->given_id)) != 0)
                        return r == DETACHED_OK ? 0 : r; /* the parent: id printed, or refused */
        }
        /* every file the profiles make beneath $HOME, rendered or not */
        const char *home_rels[PROFILE_HOME_MAX];
        size_t n_home_rels = 0;
        for (size_t i = 0; i < n_home_gens; i++) {
                const char *rel = NULL;
                if (!strncmp(home_gens[i], "copy:", 5))
                        rel = home_gens[i] + 5;
                else if (!profile_home_is_tree(home_gens[i])) /* a tmpfs of its own */
                        (void)profile_home_describe(home_gens[i], &rel);
                if (rel)
                        home_rels[n_home_rels++] = rel;
        }
        bool have_home = who.home[0] && realpath(who.home, home);
        struct run_request req = {
                .policy_file = f->policy_file,
                .overlay = f->overlay,
                .trigger_token = f->trigger_token,
                .argv = f->argv,
                .state_dir = state_dir,
                .key_file = f->key_file,
                .run_id = f->given_id[0] ? f->given_id : NULL,
                .host_home = have_home ? home : NULL,
                .term = getenv("TERM"),
                .lang = getenv("LANG"),
                .use_pty = isatty(STDIN_FILENO),
                .uid = f->caller_uid >= 0 ? (uid_t)f->caller_uid
                       : who.sudo         ? who.uid
                                          : getuid(),
                .expect_ws = f->expect_ws,
                .expect_ws_dev = (dev_t)f->expect_dev,
                .expect_ws_ino = (ino_t)f->expect_ino,
                .pinned = who.other,
                .pin_uid = who.uid,
                .kept = f->keep_state ? kept : NULL,
                .n_kept = f->keep_state ? n_kept : 0,
                .home_rels = home_rels,
                .n_home_rels = n_home_rels,
                .mask_output = f->mask_output,
                .raw_terminal = f->raw_terminal,
                .log_max = f->log_max,
                .refusals_to = f->quiet ? NULL : stderr,
                .pin = hook_pin,
                .resolved = hook_resolved,
                .home_files = hook_home_files,
                .ready = hook_ready,
                .note = hook_note,
        };
        int status = run_start(&req, &err);
        if (err.msg[0])
                cli_print_error(&err);
        return status;
}

int cmd_run(int argc, char **argv)
{
        struct run_front f = {.overlay = policy_new(), .caller_uid = -1};
        struct rf_error err = {0};
        int c, r;

        if (!f.overlay) {
                cli_error("out of memory");
                return RF_EXIT_REFUSED;
        }
        block_terminating();
        /* whom the run is for, before any profile reads the host for it */
        caller_self(&who);
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+p:w:e:h", run_options, NULL)) != -1) {
                if (c != OPT_CALLER_UID)
                        continue;
                /* root starts runs for others: ps and the API show the
                 * caller, not root; its paths are read as it */
                char *end = NULL;
                errno = 0;
                unsigned long v = strtoul(optarg, &end, 10);
                if (getuid() != 0) {
                        cli_error("run: --caller-uid: only root may name another caller");
                        r = RF_EXIT_REFUSED;
                        goto out;
                }
                if (errno || !end || *end || end == optarg || v >= 0xffffffffUL) {
                        cli_error("run: --caller-uid: a uid");
                        r = RF_EXIT_REFUSED;
                        goto out;
                }
                f.caller_uid = (long long)v;
                if ((r = caller_other(&who, (uid_t)v, &err)) < 0) {
                        cli_print_error(&err);
                        r = RF_EXIT_REFUSED;
                        goto out;
                }
        }
        /* `sudo ringfence run`: the user who ran sudo is the caller, as the
         * daemon's is (caller_sudo: SUDO_UID only ever narrows what root
         * opens for it); --caller-uid wins. What stays root's: the state
         * dir, the run's own host uid and cgroups, the audit log's
         * started_by, the secret store, the policy file and the workspace
         * (the run acts as its owner). */
        if (f.caller_uid < 0 && (r = caller_sudo(&who, &err)) < 0) {
                cli_print_error(&err);
                r = RF_EXIT_REFUSED;
                goto out;
        }
        optind = 1;
        while ((c = getopt_long(argc, argv, "+p:w:e:h", run_options, NULL)) != -1) {
                if (c == 'h') {
                        run_usage(stdout);
                        r = 0;
                        goto out;
                }
                if (c == '?' || c == ':') {
                        if (optopt)
                                cli_error("run: option -%c: %s", optopt,
                                          c == ':' ? "needs an argument" : "unknown");
                        else
                                cli_error("run: unknown option %s (see ringfence run --help)",
                                          argv[optind - 1]);
                        r = RF_EXIT_REFUSED;
                        goto out;
                }
                if (c == OPT_MASK_OUTPUT)
                        f.mask_output = true;
                if (c == OPT_RAW_TERMINAL)
                        f.raw_terminal = true;
                if (c == OPT_DETACH)
                        f.detach = true;
                if (c == OPT_QUIET)
                        f.quiet = true;
                if (c == OPT_KEEP_STATE)
                        f.keep_state = true;
                if (c == OPT_LOG_MAX && (parse_size(optarg, &f.log_max) < 0 || !f.log_max)) {
                        cli_error("run: --log-max %s: a size such as 64M", optarg);
                        r = RF_EXIT_REFUSED;
                        goto out;
                }
                if (c == OPT_RUN_ID) {
                        /* a run id of the caller's choosing (a UUID, lower-case hex) */
                        bool good = strlen(optarg) == RF_RUN_ID_LEN;
                        for (size_t i = 0; good && i < RF_RUN_ID_LEN; i++)
                                good = (i == 8 || i == 13 || i == 18 || i == 23)
                                               ? optarg[i] == '-'
                                               : (optarg[i] >= '0' && optarg[i] <= '9') ||
                                                         (optarg[i] >= 'a' && optarg[i] <= 'f');
                        if (!good) {
                                cli_error("run: --run-id: a UUID in lower-case hex");
                                r = RF_EXIT_REFUSED;
                                goto out;
                        }
                        snprintf(f.given_id, sizeof f.given_id, "%s", optarg);
                }
                if (c == OPT_EXPECT_WORKSPACE) {
                        /* an inode checked before as the caller's own: the
                         * run must get that very directory */
                        char *end = NULL;
                        errno = 0;
                        f.expect_dev = strtoull(optarg, &end, 10);
                        if (end && *end == ':')
                                f.expect_ino = strtoull(end + 1, &end, 10);
                        if (errno || !end || *end || end == optarg) {
                                cli_error("run: --expect-workspace: DEV:INO, two numbers");
                                r = RF_EXIT_REFUSED;
                                goto out;
                        }
                        f.expect_ws = true;
                }
                if (c == OPT_KEY_FILE) {
                        free(f.key_file);
                        if (!(f.key_file = strdup(optarg))) {
                                cli_error("out of memory");
                                r = RF_EXIT_REFUSED;
                                goto out;
                        }
                }
                if ((r = apply_flag(f.overlay, c, optarg, &f.policy_file, &f.state_dir_flag,
                                    &f.trigger_token, &err)) < 0) {
                        if (!err.msg[0])
                                rf_error_set(&err, r, "%s", strerror(-r));
                        cli_print_error(&err);
                        r = RF_EXIT_REFUSED;
                        goto out;
                }
        }
        if (optind >= argc) {
                cli_error("run: no command given (usage: ringfence run [OPTIONS] -- COMMAND)");
                r = RF_EXIT_REFUSED;
                goto out;
        }
        f.argv = argv + optind;
        r = run_go(&f);
out:
        run_front_done(&f);
        return r;
}

/*
 * `ringfence run --request-fd FD`: the daemon's start (supervisor/runwire.h)
 * from FD, a sealed memfd, closed once read. Root only: the request names
 * whom the run is for. The profiles it names are applied to its overlay
 * here, as the caller, after the rest of it (as `run`'s flags would be).
 */
int cmd_run_request(const char *fdarg)
{
        struct run_front f = {.caller_uid = -1};
        struct run_wire w;
        struct rf_error err = {0};
        char *end = NULL;
        size_t len = 0;
        int r;

        errno = 0;
        long fd = strtol(fdarg, &end, 10);
        if (errno || end == fdarg || *end || fd < 3 || fd > 1023 ||
            memfd_sealed_size((int)fd, JSON_INPUT_MAX, &len) < 0 || len == 0) {
                cli_error("run --request-fd %s: not a sealed memfd of at most %d bytes", fdarg,
                          JSON_INPUT_MAX);
                return RF_EXIT_REFUSED;
        }
        if (getuid() != 0) {
                cli_error("run --request-fd: only root (the daemon) starts runs for a caller");
                return RF_EXIT_REFUSED;
        }
        block_terminating();
        _cleanup_free_ char *buf = malloc(len);
        if (!buf || pread((int)fd, buf, len, 0) != (ssize_t)len) {
                cli_error("run --request-fd %s: cannot read it: %s", fdarg,
                          buf ? strerror(errno) : "out of memory");
                return RF_EXIT_REFUSED;
        }
        close((int)fd);
        r = run_wire_parse(buf, len, &w, &err);
        explicit_bzero(buf, len); /* the caller's environment values */
        if (r < 0) {
                cli_print_error(&err);
                run_wire_clear(&w);
                return RF_EXIT_REFUSED;
        }
        caller_self(&who);
        if ((r = caller_other(&who, (uid_t)w.caller_uid, &err)) < 0) {
                cli_print_error(&err);
                run_wire_clear(&w);
                return RF_EXIT_REFUSED;
        }
        f.overlay = TAKE_PTR(w.overlay);
        f.caller_uid = w.caller_uid;
        f.expect_ws = w.expect_ws;
        f.expect_dev = w.ws_dev;
        f.expect_ino = w.ws_ino;
        f.log_max = w.log_max;
        f.mask_output = w.mask_output;
        f.keep_state = w.keep_state;
        f.state_dir_flag = strdup(w.state_dir);
        f.argv = w.argv;
        memcpy(f.given_id, w.run_id, sizeof f.given_id);
        r = f.state_dir_flag ? 0 : -ENOMEM;
        for (size_t i = 0; r >= 0 && i < w.n_profiles; i++)
                r = apply_profile(f.overlay, w.profiles[i], &f.policy_file, &f.state_dir_flag,
                                  &f.trigger_token, &err);
        if (r < 0) {
                if (!err.msg[0])
                        rf_error_set(&err, r, "%s", strerror(-r));
                cli_print_error(&err);
                r = RF_EXIT_REFUSED;
        } else {
                r = run_go(&f);
        }
        run_front_done(&f);
        run_wire_clear(&w);
        return r;
}
