/*
 * cmd_run.c — `ringfence run [OPTIONS] -- COMMAND [ARG...]`.
 *
 * Builds the effective policy (file, then flags on top), gathers the
 * caller's facts, plans the run and hands it to the supervisor. Any
 * refusal before the command runs exits 125 with one line.
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
#include "audit/audit.h"
#include "audit/emit.h"
#include "egress/dnsstub.h"
#include "egress/egress.h"
#include "egress/httprule.h"
#include "audit/token.h"
#include "policy/policy.h"
#include "sandbox/cgroup.h"
#include "sandbox/plan.h"
#include "sandbox/steps.h"
#include "egress/inject.h"
#include "secrets/binding.h"
#include "secrets/grant.h"
#include "secrets/secmem.h"
#include "secrets/store.h"
#include "shared/json.h"
#include "shared/macro.h"
#include "supervisor/registry.h"
#include "supervisor/publish.h"
#include "supervisor/run.h"

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
              "      --rw PATH             also bind PATH read-write\n"
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
              "      --secret-file NAME=SOURCE  ... as /run/secrets/NAME (0400, private tmpfs)\n"
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

static int parse_env_flag(struct rf_policy *o, const char *arg, struct rf_error *err)
{
        const char *eq = strchr(arg, '=');
        if (!eq || eq == arg)
                return rf_error_set(err, -EINVAL, "--env %s: expected NAME=VALUE", arg);
        _cleanup_free_ char *name = strndup(arg, (size_t)(eq - arg));
        if (!name)
                return -ENOMEM;
        return policy_add_env(o, name, eq + 1, err);
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
                char *data = NULL;
                size_t len = 0;
                int r = profile_home_render(home_gens[i], &ctx, f->rel, &data, &len, err);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                f->data = data;
                f->len = len;
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
        /* the daemon's caller's commands: on the PATH it asked for (-e PATH
         * before --profile), else the default one — never the daemon's */
        struct profile_for f = {.who = &who, .path = getenv("PATH")};
        if (who.other) {
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
        case OPT_RO:
        case OPT_RW: {
                const char *flag = c == 'w' ? "--workspace" : c == OPT_RO ? "--ro" : "--rw";
                char cwd[PATH_MAX], abs[PATH_MAX];
                if (!getcwd(cwd, sizeof cwd) || (r = path_absolute(cwd, arg, abs, sizeof abs)) < 0)
                        return rf_error_set(err, -EINVAL, "%s %s: not a usable path", flag, arg);
                r = c == 'w'      ? policy_set_string(&o->workspace, abs, PATH_MAX, err)
                    : c == OPT_RO ? policy_add_path(&o->read_only, &o->n_read_only, abs, err)
                                  : policy_add_path(&o->read_write, &o->n_read_write, abs, err);
                if (r < 0 && err->msg[0]) {
                        char msg[RF_ERROR_MSG_MAX];
                        snprintf(msg, sizeof msg, "%s", err->msg);
                        rf_error_set(err, r, "%s %s: %s", flag, arg, msg);
                }
                return r;
        }
        case 'e':
                return parse_env_flag(o, arg, err);
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
        case OPT_PUBLISH: {
                struct policy_publish pp;
                const char *why = "invalid";
                if (policy_publish_parse(arg, strlen(arg), &pp, &why) < 0)
                        return rf_error_set(err, -EINVAL, "--publish %.80s: %s", arg, why);
                return policy_add_publish(o, &pp, err);
        }
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
 * True the first time `what` is noted in this state dir: notes that would
 * repeat on every run are said once per instance (the audit record of each
 * run carries them every time).
 */
static bool note_once(const char *state_dir, const char *what)
{
        char path[PATH_MAX];

        if (snprintf(path, sizeof path, "%s/note-%s", state_dir, what) >= (int)sizeof path)
                return true;
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return errno != EEXIST;
        close(fd);
        return true;
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

/*
 * Called by the supervisor once the run's init exists (its setup then runs
 * on the other CPU meanwhile): register the run, then look at the agent's
 * block again — a `kill --agent A --block` between our first look and the
 * registration would otherwise miss this run. Then a --detach caller may go.
 */
struct reg_ctx {
        const char *state_dir;
        const struct run_info *info;
        struct registry *reg;
        struct audit_log *alog; /* borrowed: run.start waits here for its commit */
        bool defer_ready;       /* a --detach caller is let go by run_trust instead */
};

/*
 * Called by the supervisor once init is spawned and building the run's
 * root, before the command may start: commit run.start (its fdatasync
 * overlaps init's setup), then register the run. Any refusal here kills the
 * run before its command starts.
 */
static int register_run(void *ctx, struct rf_error *err)
{
        struct reg_ctx *rc = ctx;
        char why[RF_ERROR_MSG_MAX];
        int r = audit_flush(rc->alog);
        if (r < 0)
                return rf_error_set(err, r, "cannot write the audit log: sync run.start: %s",
                                    strerror(-r));
        r = registry_add(rc->state_dir, rc->info, &rc->reg, err);
        if (r < 0)
                return r;
        if ((r = registry_blocked(rc->state_dir, rc->info->agent, why, sizeof why)) != 0)
                return rf_error_set(err, r < 0 ? r : -EPERM, "refused: %s",
                                    r < 0 ? "cannot read the agent blocks" : why);
        if (!rc->defer_ready)
                detach_ready();
        return 0;
}

/* Is `path` (canonical) at or beneath `dir`? */
/* supervisor_run's trust callback: the helper's result (run_tls_finish),
 * its CA for the egress processes and its trust files for init. */
struct trust_ctx {
        struct run_tls *tls;
        struct egress_config *egress;
        bool ready; /* let a --detach caller go once the trust is there */
};

static int run_trust(void *ctx, int *fd, struct rf_error *err)
{
        struct trust_ctx *tc = ctx;
        int r = run_tls_finish(tc->tls, err);
        if (r < 0)
                return r;
        tc->egress->tls_ca = tc->tls->ca;
        tc->egress->tls_module_fd = tc->tls->module;
        tc->egress->tls_bundle_fd = tc->tls->bundle;
        tc->egress->tls_upstream_fd = tc->tls->upstream;
        *fd = tc->tls->files; /* the supervisor's now: closed once sent */
        tc->tls->files = -1;
        if (tc->ready)
                detach_ready(); /* only now: a TLS failure refused the run before */
        return 0;
}

static bool beneath(const char *path, const char *dir)
{
        size_t n = strlen(dir);
        if (n == 1 && dir[0] == '/')
                return true;
        return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/*
 * The store's master key must not be visible inside the run: refused when
 * it lies in the workspace or beneath any path the plan binds into the run
 * (the state dir itself is already kept out).
 */
static int key_file_exposed(const struct rf_plan *plan, const char *state_dir, const char *key_file,
                            struct rf_error *err)
{
        char kp[PATH_MAX], canon[PATH_MAX];
        if (!key_file) {
                snprintf(kp, sizeof kp, "%s/%s", state_dir, STORE_KEY_FILE);
                key_file = kp;
        }
        if (!realpath(key_file, canon))
                return 0; /* not there: grants_resolve created it in the state dir */
        if (plan->workspace && beneath(canon, plan->workspace))
                return rf_error_set(err, -EPERM,
                                    "--key-file %s: inside the workspace, where the run could "
                                    "read it",
                                    key_file);
        for (size_t i = 0; i < plan->n_ops; i++)
                if (plan->ops[i].kind == OP_BIND && !(plan->ops[i].flags & OPF_IN_ROOT) &&
                    plan->ops[i].src && beneath(canon, plan->ops[i].src))
                        return rf_error_set(err, -EPERM,
                                            "--key-file %s: beneath %s, which the run sees",
                                            key_file, plan->ops[i].src);
        return 0;
}

/* A refusal after the run's egress and events were set up (its injections
 * or grants): recorded, everything undone, one line; 125. */
static int refuse_late(struct audit_log *alog, struct rf_plan *plan, struct rf_cgroup *cg,
                       struct audit_emitter *ev, struct egress_config *egress,
                       const struct rf_error *err)
{
        run_audit_exit(alog, plan, RF_EXIT_REFUSED, err->msg, cg, 0);
        egress_config_free(egress);
        audit_emitter_free(ev);
        audit_close(alog);
        cgroup_destroy(cg);
        plan_cleanup(plan);
        cli_print_error(err);
        return RF_EXIT_REFUSED;
}

/*
 * The run's injections, refused (-errno with err) where one could not be
 * kept: a value the response scrubber cannot see (too short, or a hex
 * string that could be HTTP framing) could come back from its own host;
 * HTTPS to an IP literal cannot be terminated (a leaf names a host); one
 * whose host no allow rule reaches could never be used. 0 when all can be
 * kept.
 */
static int inject_check(const struct inject_secret *inj, size_t ni, const struct rf_policy *pol,
                        const struct egress_config *egress, struct rf_error *err)
{
        for (size_t i = 0; i < ni; i++) {
                if (!inject_scrubbable(&inj[i]))
                        return rf_error_set(
                                err, -EINVAL,
                                "injection %s: its value (%zu bytes) is too short or a hex string "
                                "too short to be told from HTTP framing (under %d, or %d hex "
                                "digits), so it could not be kept out of the run's responses",
                                inj[i].name, inj[i].len, INJECT_SCRUB_MIN, INJECT_SCRUB_HEX_MIN);
                if (inj[i].body && inj[i].ph_len != inj[i].len)
                        return rf_error_set(err, -EINVAL,
                                            "injection %s: \"body\" replaces the placeholder in "
                                            "place, so it must be as long as the value (%zu "
                                            "bytes): drop placeholder.length/prefix",
                                            inj[i].name, inj[i].len);
                for (size_t k = 0; k < inj[i].n_hosts; k++) {
                        char ih[SECRET_INJECT_ENTRY_MAX + 1];
                        bool plain = !strncmp(inj[i].hosts[k], "http://", 7);
                        snprintf(ih, sizeof ih, "%s", inj[i].hosts[k] + (plain ? 7 : 0));
                        char *colon = strchr(ih, ':');
                        if (colon)
                                *colon = '\0';
                        uint8_t a[16];
                        int fam;
                        bool literal = net_ip_parse(ih, strlen(ih), false, a, &fam) == 0;
                        if (literal && !plain)
                                return rf_error_set(err, -EINVAL,
                                                    "injection %s: TLS to the address %s cannot "
                                                    "be terminated (leaf certificates name hosts); "
                                                    "name the host (--add-host NAME:%s), or write "
                                                    "http://%s:PORT for plaintext HTTP",
                                                    inj[i].name, ih, ih, ih);
                        if (pol->n_net_allow == 0 ||
                            (!literal && !dnsstub_name_allowed(egress, ih)))
                                return rf_error_set(err, -EINVAL,
                                                    "injection %s: no allow rule lets the run "
                                                    "reach %s, so the injection could never be "
                                                    "used (add --allow-host %s)",
                                                    inj[i].name, ih, ih);
                }
        }
        return 0;
}

/*
 * The run's HTTP rules (egress/httprule.h), refused (-EINVAL with err)
 * where one could never be used: no allow rule lets the run reach its
 * host and port, or a deny rule refuses them (an HTTP rule limits what
 * may be done on a host; it never allows one). 0 when all can be.
 */
static int http_rules_check(const struct egress_config *egress, struct rf_error *err)
{
        for (size_t i = 0; i < egress->n_http; i++) {
                const struct http_rule *h = &egress->http[i];
                bool reached = false, denied = false;
                for (size_t k = 0; k < egress->n_allow && !reached; k++)
                        reached = (egress->allow[k].kind == RULE_HOST ||
                                   egress->allow[k].kind == RULE_SUFFIX) &&
                                  net_rule_match_host(&egress->allow[k], h->host, h->port);
                for (size_t k = 0; k < egress->n_deny && !denied; k++)
                        denied = (egress->deny[k].kind == RULE_HOST ||
                                  egress->deny[k].kind == RULE_SUFFIX) &&
                                 net_rule_match_host(&egress->deny[k], h->host, h->port);
                if (denied)
                        return rf_error_set(err, -EINVAL,
                                            "HTTP rule \"%.300s\": a deny rule refuses %s:%u, so "
                                            "the rule could never be used",
                                            h->text, h->host, h->port);
                if (!reached)
                        return rf_error_set(err, -EINVAL,
                                            "HTTP rule \"%.300s\": no allow rule lets the run "
                                            "reach %s:%u, so the rule could never be used (add "
                                            "--allow-host %s:%u)",
                                            h->text, h->host, h->port, h->host, h->port);
        }
        return 0;
}

int cmd_run(int argc, char **argv)
{
        _cleanup_policy_ struct rf_policy *overlay = policy_new(), *pol = NULL;
        _cleanup_free_ char *policy_file = NULL, *state_dir_flag = NULL, *state_dir = NULL,
                            *trigger_token = NULL, *key_file = NULL;
        bool mask_output = false, detach = false, expect_ws = false, quiet = false,
             raw_terminal = false, keep_state = false;
        unsigned long long expect_dev = 0, expect_ino = 0;
        long long caller_uid = -1;
        uint64_t log_max = 0;
        char given_id[RF_RUN_ID_LEN + 1] = "";
        _cleanup_(plan_freep) struct rf_plan *plan = NULL;
        struct rf_error err = {0};
        char cwd[PATH_MAX], home[PATH_MAX];
        int c, r;

        if (!overlay) {
                cli_error("out of memory");
                return RF_EXIT_REFUSED;
        }
        /* From here on terminating signals wait for the supervisor's
         * signalfd (which forwards them to the run) instead of killing us
         * halfway: a supervisor gone mid-setup would leave init unreaped. */
        sigset_t term;
        sigemptyset(&term);
        sigaddset(&term, SIGINT);
        sigaddset(&term, SIGTERM);
        sigaddset(&term, SIGHUP);
        sigaddset(&term, SIGQUIT);
        sigprocmask(SIG_BLOCK, &term, NULL);
        /* whom the run is for, before any profile reads the host for it */
        caller_self(&who);
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+p:w:e:h", run_options, NULL)) != -1) {
                if (c != OPT_CALLER_UID)
                        continue;
                /* the daemon starts runs for its callers: ps and the API
                 * show the caller, not root; its paths are read as it */
                char *end = NULL;
                errno = 0;
                unsigned long v = strtoul(optarg, &end, 10);
                if (getuid() != 0) {
                        cli_error("run: --caller-uid: only root may name another caller");
                        return RF_EXIT_REFUSED;
                }
                if (errno || !end || *end || end == optarg || v >= 0xffffffffUL) {
                        cli_error("run: --caller-uid: a uid");
                        return RF_EXIT_REFUSED;
                }
                caller_uid = (long long)v;
                if ((r = caller_other(&who, (uid_t)v, &err)) < 0) {
                        cli_print_error(&err);
                        return RF_EXIT_REFUSED;
                }
        }
        optind = 1;
        while ((c = getopt_long(argc, argv, "+p:w:e:h", run_options, NULL)) != -1) {
                if (c == 'h') {
                        run_usage(stdout);
                        return 0;
                }
                if (c == '?' || c == ':') {
                        if (optopt)
                                cli_error("run: option -%c: %s", optopt,
                                          c == ':' ? "needs an argument" : "unknown");
                        else
                                cli_error("run: unknown option %s (see ringfence run --help)",
                                          argv[optind - 1]);
                        return RF_EXIT_REFUSED;
                }
                if (c == OPT_MASK_OUTPUT)
                        mask_output = true;
                if (c == OPT_RAW_TERMINAL)
                        raw_terminal = true;
                if (c == OPT_DETACH)
                        detach = true;
                if (c == OPT_QUIET)
                        quiet = true;
                if (c == OPT_KEEP_STATE)
                        keep_state = true;
                if (c == OPT_LOG_MAX && (parse_size(optarg, &log_max) < 0 || !log_max)) {
                        cli_error("run: --log-max %s: a size such as 64M", optarg);
                        return RF_EXIT_REFUSED;
                }
                if (c == OPT_RUN_ID) {
                        /* the daemon names the run it starts (a UUID, lower-case hex) */
                        bool good = strlen(optarg) == RF_RUN_ID_LEN;
                        for (size_t i = 0; good && i < RF_RUN_ID_LEN; i++)
                                good = (i == 8 || i == 13 || i == 18 || i == 23)
                                               ? optarg[i] == '-'
                                               : (optarg[i] >= '0' && optarg[i] <= '9') ||
                                                         (optarg[i] >= 'a' && optarg[i] <= 'f');
                        if (!good) {
                                cli_error("run: --run-id: a UUID in lower-case hex");
                                return RF_EXIT_REFUSED;
                        }
                        snprintf(given_id, sizeof given_id, "%s", optarg);
                }
                if (c == OPT_EXPECT_WORKSPACE) {
                        /* the daemon checked this inode as the caller's own:
                         * the run must get that very directory */
                        char *end = NULL;
                        errno = 0;
                        expect_dev = strtoull(optarg, &end, 10);
                        if (end && *end == ':')
                                expect_ino = strtoull(end + 1, &end, 10);
                        if (errno || !end || *end || end == optarg) {
                                cli_error("run: --expect-workspace: DEV:INO, two numbers");
                                return RF_EXIT_REFUSED;
                        }
                        expect_ws = true;
                }
                if (c == OPT_KEY_FILE) {
                        free(key_file);
                        if (!(key_file = strdup(optarg))) {
                                cli_error("out of memory");
                                return RF_EXIT_REFUSED;
                        }
                }
                if ((r = apply_flag(overlay, c, optarg, &policy_file, &state_dir_flag,
                                    &trigger_token, &err)) < 0) {
                        if (!err.msg[0])
                                rf_error_set(&err, r, "%s", strerror(-r));
                        cli_print_error(&err);
                        return RF_EXIT_REFUSED;
                }
        }
        if (optind >= argc) {
                cli_error("run: no command given (usage: ringfence run [OPTIONS] -- COMMAND)");
                return RF_EXIT_REFUSED;
        }
        if (keep_state && n_kept == 0) {
                cli_error("run: --keep-state keeps an agent profile's state (claude-code, codex, "
                          "gemini-cli); no --profile given has any");
                return RF_EXIT_REFUSED;
        }

        if ((r = cli_state_dir(state_dir_flag, 1, &state_dir, &err)) < 0) {
                cli_print_error(&err);
                return RF_EXIT_REFUSED;
        }
        if (detach) {
                if (!given_id[0] && (r = rf_run_id_new(given_id)) < 0) {
                        cli_error("cannot make a run id: %s", strerror(-r));
                        return RF_EXIT_REFUSED;
                }
                /* its log: capped, and its bound secrets masked */
                if (!log_max)
                        log_max = RUN_LOG_DEFAULT;
                mask_output = true;
                if ((r = detach_run(state_dir, given_id)) != 0)
                        return r == DETACHED_OK ? 0 : r; /* the parent: id printed, or refused */
        }
        /* The audit log (and with it the instance's signing key) first: no
         * record, no run. */
        struct audit_log *alog = NULL;
        if ((r = audit_open(state_dir, &alog, &err)) < 0) {
                char why[RF_ERROR_MSG_MAX];
                snprintf(why, sizeof why, "%s", err.msg);
                rf_error_set(&err, r, "cannot write the audit log: %s", why);
                cli_print_error(&err);
                return RF_EXIT_REFUSED;
        }
        char run_id[RF_RUN_ID_LEN + 1], token[TOKEN_MAX + 1];
        if (given_id[0])
                memcpy(run_id, given_id, sizeof run_id);
        else if ((r = rf_run_id_new(run_id)) < 0) {
                audit_close(alog);
                cli_error("cannot make a run id: %s", strerror(-r));
                return RF_EXIT_REFUSED;
        }
        /* From here every refusal is recorded: a bad policy or trigger too. */
        if (policy_file)
                r = policy_load_file(policy_file, &pol, &err);
        else
                r = (pol = policy_new()) ? 0 : -ENOMEM;
        if (r < 0 || (r = policy_merge(pol, overlay, &err)) < 0 ||
            (r = policy_apply_defaults(pol)) < 0 ||
            (r = run_trigger_token(state_dir, trigger_token, pol, &err)) < 0) {
                if (!err.msg[0])
                        rf_error_set(&err, r, "policy: %s", strerror(-r));
                run_audit_refused(alog, run_id,
                                  trigger_token && strstr(err.msg, "--triggered-by") ? "trigger"
                                                                                     : "policy",
                                  err.msg);
                audit_close(alog);
                cli_print_error(&err);
                return RF_EXIT_REFUSED;
        }
        if ((r = run_identity_token(state_dir, run_id, pol, token, sizeof token, &err)) < 0) {
                run_audit_refused(alog, run_id, "identity", err.msg);
                audit_close(alog);
                if (!err.msg[0])
                        rf_error_set(&err, r, "cannot issue the run's identity token: %s",
                                     strerror(-r));
                cli_print_error(&err);
                return RF_EXIT_REFUSED;
        }

        /* An agent blocked by `ringfence kill --agent A --block` (or `block`)
         * starts nothing until unblocked; an unreadable block refuses too. */
        char block_why[RF_ERROR_MSG_MAX];
        if ((r = registry_blocked(state_dir, pol->agent, block_why, sizeof block_why)) != 0) {
                if (r < 0)
                        snprintf(block_why, sizeof block_why, "cannot read the agent blocks: %s",
                                 strerror(-r));
                run_audit_refused(alog, run_id, "blocked", block_why);
                audit_close(alog);
                cli_error("refused: %s", block_why);
                return RF_EXIT_REFUSED;
        }

        /* The run's secrets, resolved now, outside anything of the run: a
         * provider that fails refuses the run before it exists. */
        _cleanup_(grants_freep) struct rf_grants *grants = NULL;
        if (pol->n_secrets) {
                size_t failed;
                char why[256];
                if ((r = secmem_harden_process()) < 0) {
                        rf_error_set(&err, r, "cannot make ringfence non-dumpable: %s",
                                     strerror(-r));
                        run_audit_refused(alog, run_id, "secret", err.msg);
                        audit_close(alog);
                        cli_print_error(&err);
                        return RF_EXIT_REFUSED;
                }
                r = grants_resolve(pol, state_dir, key_file, &grants, &failed, why, sizeof why,
                                   &err);
                profile_scrub(); /* the grants hold the values now */
                if (r < 0) {
                        if (failed < pol->n_secrets)
                                run_audit_provider_error(alog, run_id, pol, failed, why);
                        else
                                run_audit_refused(alog, run_id, "secret", err.msg);
                        audit_close(alog);
                        cli_print_error(&err);
                        return RF_EXIT_REFUSED;
                }
        }

        /* credential injection over TLS: the run CA and the run's trust
         * files, made by a helper while the run starts (run_tls.c); they go
         * into its root through init. This process never maps OpenSSL. */
        _cleanup_(run_tls_freep) struct run_tls tls = {0};
        if ((grants && grants->any_inject) || pol->n_net_http) {
                /* the hosts of HTTP rules are terminated too, injection or not */
                struct inject_secret inj[INJECT_MAX];
                size_t ni =
                        grants && grants->any_inject ? grants_inject(grants, inj, INJECT_MAX) : 0;
                r = run_tls_begin(pol, inj, ni, &tls, &err);
                explicit_bzero(inj, sizeof inj);
                if (r == 0 && pol->n_net_http && !tls.on)
                        r = rf_error_set(&err, -EINVAL,
                                         "HTTP rules need TLS termination, "
                                         "which this run could not set up");
                if (r < 0) {
                        run_audit_refused(alog, run_id, ni ? "secret" : "setup", err.msg);
                        audit_close(alog);
                        cli_print_error(&err);
                        return RF_EXIT_REFUSED;
                }
        }

        if (!getcwd(cwd, sizeof cwd)) {
                cli_error("cannot determine the current directory: %m");
                run_audit_refused(alog, run_id, "setup", "cannot determine the current directory");
                audit_close(alog);
                return RF_EXIT_REFUSED;
        }
        bool have_home = who.home[0] && realpath(who.home, home);
        bool tty = isatty(STDIN_FILENO);
        /* the profiles' configuration files for the run's $HOME */
        struct plan_home_file home_files[PROFILE_HOME_MAX] = {0};
        size_t n_home_files = 0;
        /* the daemon's caller: every path it gave, or its profiles found,
         * opened as it and pinned to that inode */
        struct plan_pin pins[2 * POLICY_PATHS_MAX];
        size_t n_pins = 0;
        r = 0;
        for (size_t i = 0; who.other && r >= 0 && i < pol->n_read_only + pol->n_read_write; i++) {
                bool rw = i >= pol->n_read_only;
                const char *path = rw ? pol->read_write[i - pol->n_read_only] : pol->read_only[i];
                if (n_pins == ARRAY_SIZE(pins))
                        r = rf_error_set(&err, -E2BIG, "too many paths");
                else
                        r = caller_pin(&who, path, rw, &pins[n_pins++], &err);
        }
        if (r < 0 || (r = home_files_render(pol->workspace ? pol->workspace : cwd, pol, grants,
                                            home_files, &n_home_files, &err)) < 0) {
                for (size_t i = 0; i < n_home_files; i++)
                        free(home_files[i].data);
                run_audit_refused(alog, run_id, "setup", err.msg);
                audit_close(alog);
                cli_print_error(&err);
                return RF_EXIT_REFUSED;
        }
        /* every file the profiles make beneath $HOME, rendered or not */
        const char *home_rels[PROFILE_HOME_MAX];
        size_t n_home_rels = 0;
        for (size_t i = 0; i < n_home_gens; i++) {
                const char *rel = NULL;
                if (!strncmp(home_gens[i], "copy:", 5))
                        rel = home_gens[i] + 5;
                else
                        (void)profile_home_describe(home_gens[i], &rel);
                if (rel)
                        home_rels[n_home_rels++] = rel;
        }
        struct plan_input in = {
                .policy = pol,
                .argv = argv + optind,
                .cwd = cwd,
                .state_dir = state_dir,
                .host_home = have_home ? home : NULL,
                .term = getenv("TERM"),
                .lang = getenv("LANG"),
                .use_pty = tty,
                .run_id = run_id,
                .identity_token = token,
                .secrets_files = grants && grants->any_file,
                .secrets_broker = grants && grants->any_broker,
                .tls_trust = tls.on,
                .tls_java = tls.java,
                .tls_bound = tls.bound,
                .expect_ws = expect_ws,
                .expect_ws_dev = (dev_t)expect_dev,
                .expect_ws_ino = (ino_t)expect_ino,
                .kept = keep_state ? kept : NULL,
                .n_kept = keep_state ? n_kept : 0,
                .home_rels = home_rels,
                .n_home_rels = n_home_rels,
                .pinned = who.other,
                .pin_uid = who.uid,
                .pins = pins,
                .n_pins = n_pins,
                .home_files = home_files,
                .n_home_files = n_home_files,
        };
        r = plan_build(&in, &plan, &err);
        for (size_t i = 0; i < n_home_files; i++) /* the plan has its copies */
                free(home_files[i].data);
        explicit_bzero(token, sizeof token);
        if (r == 0 && grants)
                r = key_file_exposed(plan, state_dir, key_file, &err);
        if (r < 0) {
                run_audit_refused(alog, run_id, "setup", err.msg);
                audit_close(alog);
                if (plan)
                        plan_cleanup(plan); /* placeholders plan_build made */
                cli_print_error(&err);
                return RF_EXIT_REFUSED;
        }

        /* The run's cgroups: a limit asked for that cannot be enforced
         * refuses the run; default limits fall back to rlimits, said once. */
        struct rf_cgroup *cg = NULL;
        bool want_cgroup = true;
#ifdef RF_TEST_BUILD
        want_cgroup = !(plan->test_skip & (1ULL << STEP_CGROUP)); /* layer switch */
#endif
        if (want_cgroup && (r = cgroup_create(plan->run_id, &plan->limits, &cg, &err)) < 0) {
                run_audit_refused(alog, plan->run_id, "limits", err.msg);
                audit_close(alog);
                plan_cleanup(plan);
                cli_print_error(&err);
                return RF_EXIT_REFUSED;
        }
        /* Default pids limit not in a cgroup: RLIMIT_NPROC, which for a
         * root-started run counts exactly its own uid's processes. */
        if (!(cgroup_enforced(cg) & CGROUP_REQ_PIDS))
                plan->nproc_fallback = plan->limits.pids;
        unsigned missing = ~cgroup_enforced(cg) & (CGROUP_REQ_MEMORY | CGROUP_REQ_PIDS);
        enum cgroup_mode mode = cgroup_get_mode(cg);
        if (missing && note_once(state_dir, mode == CGROUP_NONE ? "cgroup-none"
                                            : mode == CGROUP_V2 ? "cgroup-v2-undelegated"
                                                                : "cgroup-v1-asked"))
                cli_error("note: %s: %s%s%s (said once per state dir)",
                          mode == CGROUP_NONE ? "no writable cgroup"
                          : mode == CGROUP_V2
                                  ? "the parent cgroup does not delegate the memory and "
                                    "pids controllers"
                                  : "cgroup v1 controllers serve only limits asked for",
                          (missing & CGROUP_REQ_PIDS)
                                  ? "the default pids limit falls back to RLIMIT_NPROC"
                                  : "",
                          missing == (CGROUP_REQ_MEMORY | CGROUP_REQ_PIDS) ? "; " : "",
                          (missing & CGROUP_REQ_MEMORY) ? "no default memory limit" : "");
        /* The wake-loop breaker decides before anything of the run exists
         * beyond its plan; a refusal is itself recorded. */
        char loop_why[RF_ERROR_MSG_MAX];
        if (run_loop_check(state_dir, pol, loop_why, sizeof loop_why) < 0) {
                run_audit_refused(alog, plan->run_id, "loop", loop_why);
                audit_close(alog);
                cgroup_destroy(cg);
                plan_cleanup(plan);
                cli_error("refused: %s", loop_why);
                return RF_EXIT_REFUSED;
        }
        if ((r = run_audit_start(alog, plan, pol, cg, &err)) < 0) {
                char why[RF_ERROR_MSG_MAX];
                snprintf(why, sizeof why, "%s", err.msg);
                rf_error_set(&err, r, "cannot write the audit log: %s", why);
                audit_close(alog);
                cgroup_destroy(cg);
                plan_cleanup(plan);
                cli_print_error(&err);
                return RF_EXIT_REFUSED;
        }
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        /* The run's own events (DNS refusals now; egress, secrets later)
         * go through its budget: a flooding run is throttled alone. */
        struct audit_budget_cfg budget = {.rate = (uint32_t)pol->event_rate,
                                          .burst = (uint32_t)pol->event_burst,
                                          .bytes = pol->event_bytes};
        struct audit_emitter *ev = NULL;
        if ((r = audit_emitter_new(alog, plan->run_id, &budget, &ev)) < 0) {
                run_audit_exit(alog, plan, RF_EXIT_REFUSED, "out of memory", cg, 0);
                audit_close(alog);
                cgroup_destroy(cg);
                plan_cleanup(plan);
                cli_error("out of memory");
                return RF_EXIT_REFUSED;
        }
        /* the run's egress process: this run's policy only, built now (the
         * egress process itself cannot read a file) */
        struct egress_config egress;
        const char *resolv = NULL;
#ifdef RF_TEST_BUILD
        resolv = getenv("RINGFENCE_TEST_RESOLV_CONF"); /* tests' own nameserver */
#endif
        if ((r = egress_config_build(pol, plan->run_id, resolv, &egress, &err)) < 0) {
                run_audit_exit(alog, plan, RF_EXIT_REFUSED, err.msg, cg, 0);
                audit_emitter_free(ev);
                audit_close(alog);
                cgroup_destroy(cg);
                plan_cleanup(plan);
                cli_print_error(&err);
                return RF_EXIT_REFUSED;
        }
        /* HTTP rules: the egress process terminates their hosts (the run CA
         * names them); a rule whose host no allow rule reaches: refused */
        if (egress.n_http) {
                egress.tls_on = tls.on;
                if ((r = http_rules_check(&egress, &err)) < 0)
                        return refuse_late(alog, plan, cg, ev, &egress, &err);
        }
        /* credential injection (issue 15): the egress process gets the
         * placeholders, hosts and values; an injection in a run without any
         * allow rule could never be used: refused */
        if (grants && grants->any_inject) {
                struct inject_secret inj[INJECT_MAX];
                size_t ni = grants_inject(grants, inj, INJECT_MAX);
                r = inject_check(inj, ni, pol, &egress, &err);
                egress.tls_on = tls.on; /* false: plaintext injection only */
                if (r == 0)
                        r = egress_config_inject(&egress, inj, ni);
                explicit_bzero(inj, sizeof inj);
                if (r < 0) {
                        if (!err.msg[0])
                                rf_error_set(&err, r, "out of memory");
                        return refuse_late(alog, plan, cg, ev, &egress, &err);
                }
        }
        /* secret.grant for each binding (durable with run.start, before the
         * command may start: register_run); then the values for init, and
         * redaction of what the run makes us record */
        _cleanup_close_ int blob = -1;
        if (grants) {
                if ((r = grants_record(grants, ev, &err)) >= 0)
                        r = blob = grants_blob(grants, &err);
                if (r < -1) {
                        char why[RF_ERROR_MSG_MAX];
                        snprintf(why, sizeof why, "%s", err.msg);
                        rf_error_set(&err, r, "cannot grant the run's secrets: %.400s", why);
                        return refuse_late(alog, plan, cg, ev, &egress, &err);
                }
                plan->secrets_fd = blob; /* the supervisor closes it once init has it */
                blob = -1;
                audit_emitter_set_redact(ev, grants_redact, grants);
        }
        /* published ports (--publish): the host's listeners, open before
         * anything of the run starts, so a port in use refuses the run */
        struct publish *publish = NULL;
        if ((r = publish_open(pol->net_publish, pol->n_net_publish,
                              caller_uid >= 0 ? (uid_t)caller_uid : getuid(), &publish, &err)) < 0)
                return refuse_late(alog, plan, cg, ev, &egress, &err);
        /* Reachable from now on: `ringfence ps`, `kill`, `pause`, ... */
        struct run_info info = {.uid = caller_uid >= 0 ? (uint64_t)caller_uid : getuid(),
                                .pid = (uint64_t)getpid()};
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        info.started_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
        snprintf(info.run, sizeof info.run, "%s", plan->run_id);
        snprintf(info.agent, sizeof info.agent, "%s", pol->agent);
        snprintf(info.on_behalf_of, sizeof info.on_behalf_of, "%s",
                 pol->on_behalf_of ? pol->on_behalf_of : "");
        snprintf(info.task, sizeof info.task, "%s", pol->task ? pol->task : "");
        snprintf(info.command, sizeof info.command, "%s", plan->argv[0]);
        snprintf(info.cgroup, sizeof info.cgroup, "%s", cgroup_mode_name(cgroup_get_mode(cg)));
        struct reg_ctx rc = {
                .state_dir = state_dir, .info = &info, .alog = alog, .defer_ready = tls.on};
        struct trust_ctx tc = {.tls = &tls, .egress = &egress, .ready = tls.on};
        struct run_services services = {.timeout_ms = pol->timeout_ms,
                                        .registered = register_run,
                                        .registered_ctx = &rc,
                                        .reg = &rc.reg,
                                        .trust = tls.on ? run_trust : NULL,
                                        .trust_ctx = &tc,
                                        .ev = ev,
                                        .egress = &egress,
                                        .grants = grants,
                                        .mask_output = mask_output,
                                        .storm_kill = pol->net_on_storm == POLICY_STORM_KILL,
                                        .raw_terminal = raw_terminal,
                                        .publish = publish,
                                        .log_max = log_max};
        /* what the egress process refused, for one summary at the end */
        struct egress_refusals refusals = {0};
        egress_refusals_track(&refusals, grants ? grants_redact : NULL, grants);
        int status = supervisor_run(plan, cg, &services, &err);
        publish = publish_free(publish);
        egress_refusals_track(NULL, NULL, NULL);
        if (!quiet)
                egress_refusals_print(&refusals, stderr);
        egress_refusals_free(&refusals);
        egress_config_free(&egress);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        struct rf_error eerr = {0};
        if (audit_emitter_finish(ev, &eerr) < 0)
                cli_error("cannot record the run's events: %s", eerr.msg);
        ev = audit_emitter_free(ev);
        run_audit_exit(
                alog, plan, status, err.msg, cg,
                (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
        /* Only now does the run leave the registry (its lock released):
         * `ringfence wait` takes "not live" to mean "run.exit is in the
         * log", and the grants' revoke records and run.exit come above. */
        rc.reg = registry_remove(rc.reg);
        audit_close(alog);
        cgroup_destroy(cg);
        plan_cleanup(plan); /* protected-path placeholders this run created */
        if (err.msg[0])
                cli_print_error(&err);
        return status;
}
