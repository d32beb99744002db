/*
 * start.c — run_start: one run from its request to its exit status.
 *
 * Everything a start makes lives in one struct start; start_done (its
 * cleanup attribute) undoes what exists, in the reverse order of making:
 * published ports, the egress configuration, the run's event emitter, the
 * registration, the audit log, the cgroups, the plan's placeholders, the
 * TLS trust, the secrets. What is recorded for a refusal depends only on
 * how far the start got (start.phase): nothing before the log is open,
 * run.refused before run.start, run.exit after it; refuse() is the one
 * place that decides.
 *
 * The order of the steps is the security argument (docs/ARCHITECTURE.md):
 * the log first, the secrets resolved outside anything of the run, the
 * agent's block looked at before anything of the run exists and again once
 * it is registered, run.start durable before the command may start.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/emit.h"
#include "audit/token.h"
#include "policy/addr.h"
#include "egress/dnsstub.h"
#include "egress/egress.h"
#include "policy/httprule.h"
#include "egress/inject.h"
#include "policy/rules.h"
#include "policy/policy.h"
#include "sandbox/cgroup.h"
#include "sandbox/launch.h"
#include "sandbox/plan.h"
#include "sandbox/steps.h"
#include "policy/binding.h"
#include "secrets/grant.h"
#include "secrets/secmem.h"
#include "secrets/store.h"
#include "shared/macro.h"
#include "supervisor/publish.h"
#include "supervisor/registry.h"
#include "supervisor/run.h"
#include "supervisor/start-internal.h"
#include "supervisor/start.h"

enum start_phase {
        PHASE_NONE,    /* no log yet: nothing can be recorded */
        PHASE_LOGGED,  /* the log is open: a refusal is run.refused */
        PHASE_STARTED, /* run.start is written: the end is run.exit */
        PHASE_EXITED,  /* run.exit is written */
};

struct start {
        const struct run_request *req;
        enum start_phase phase;
        char run_id[RF_RUN_ID_LEN + 1];
        struct audit_log *alog;
        struct rf_policy *pol;
        struct rf_grants *grants;
        struct run_tls tls;
        /* PLAN_HOME_FILES_MAX of them (32 KiB: allocated only for a hook
         * that fills them, not zeroed on every start's stack) */
        struct plan_home_file *home_files;
        size_t n_home_files;
        struct rf_plan *plan;
        struct rf_cgroup *cg;
        struct audit_emitter *ev;
        struct egress_config egress;
        struct publish *publish;
        struct registry *reg;
        struct rf_child init_left; /* run_services.init_left: reaped before the cgroup goes */
        char token[TOKEN_MAX + 1]; /* the run's identity token, wiped at the end */
};

static void note(const struct start *s, const char *fmt, ...) _printf_(2, 3);
static void note(const struct start *s, const char *fmt, ...)
{
        char line[1024];
        va_list ap;

        if (!s->req->note)
                return;
        va_start(ap, fmt);
        vsnprintf(line, sizeof line, fmt, ap);
        va_end(ap);
        s->req->note(s->req->ctx, line);
}

static void start_done(struct start *s)
{
        /* the run CA's keeper told to go first: its wipe and exit run beside
         * the rest (run_tls_free reaps it below) */
        run_tls_quit(&s->tls);
        explicit_bzero(s->token, sizeof s->token);
        s->publish = publish_free(s->publish);
        egress_config_free(&s->egress);
        s->ev = audit_emitter_free(s->ev);
        /* the registry entry goes after run.exit: `ringfence wait` takes
         * "not live" to mean "run.exit is in the log" */
        s->reg = registry_remove(s->reg);
        grants_freep(&s->grants);
        policy_free(s->pol);
        s->pol = NULL;
        /* run.exit's writeback went on meanwhile: durable now */
        if (s->alog && audit_flush(s->alog) < 0 && s->phase == PHASE_EXITED)
                note(s, "cannot record the end of run %s: the audit log could not be synced",
                     s->run_id);
        s->alog = audit_close(s->alog);
        /* init ended alone (EXIT_ALONE): its teardown (namespaces, address
         * space) ran beside all of the above. What its mounts used, its
         * host uid and kept-state locks (the plan's) and its cgroup go
         * once it is reaped. */
        sandbox_reap(&s->init_left, NULL);
        s->init_left.pidfd = safe_close(s->init_left.pidfd);
        run_tls_free(&s->tls);
        if (s->plan)
                plan_cleanup(s->plan); /* protected-path placeholders this run created */
        s->plan = plan_free(s->plan);
        for (size_t i = 0; i < s->n_home_files; i++)
                free(s->home_files[i].data);
        s->n_home_files = 0;
        free(s->home_files);
        s->home_files = NULL;
        s->cg = cgroup_destroy(s->cg);
}

/*
 * A refusal: recorded as far as the start got (reason: run.refused's
 * {policy|trigger|identity|setup|limits|loop|secret|blocked}), with err's
 * line (set from `r` when empty). Returns 125; start_done undoes the rest.
 */
static int refuse(struct start *s, const char *reason, int r, struct rf_error *err)
{
        if (!err->msg[0])
                rf_error_set(err, r, "%s", strerror(r < 0 ? -r : EINVAL));
        if (s->phase == PHASE_LOGGED)
                run_audit_refused(s->alog, s->run_id, reason, err->msg);
        if (s->phase == PHASE_STARTED) {
                struct rf_error aerr = {0};
                if (run_audit_exit(s->alog, s->plan, RF_EXIT_REFUSED, err->msg, s->cg, 0, &aerr) <
                    0)
                        note(s, "cannot record the end of run %s: %s", s->run_id, aerr.msg);
                s->phase = PHASE_EXITED;
        }
        return RF_EXIT_REFUSED;
}

/* err's message prefixed with `what` ("what: msg"), code `r`. */
static int rewrap(struct rf_error *err, int r, const char *what)
{
        char why[RF_ERROR_MSG_MAX];
        snprintf(why, sizeof why, "%s", err->msg[0] ? err->msg : strerror(-r));
        return rf_error_set(err, r, "%s: %.400s", what, why);
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
 * Called by the supervisor once init is spawned and building the run's
 * root, before the command may start: commit run.start (its fdatasync
 * overlaps init's setup), then register the run and look at the agent's
 * block again — a `kill --agent A --block` between the first look and the
 * registration would otherwise miss this run. Any refusal here kills the
 * run before its command starts.
 */
struct reg_ctx {
        struct start *s;
        const struct run_info *info;
        bool defer_ready; /* the front end is let go by run_trust instead */
};

static int register_run(void *ctx, struct rf_error *err)
{
        struct reg_ctx *rc = ctx;
        struct start *s = rc->s;
        char why[RF_ERROR_MSG_MAX];
        int r = audit_flush(s->alog);
        if (r < 0)
                return rf_error_set(err, r, "cannot write the audit log: sync run.start: %s",
                                    strerror(-r));
        r = registry_add(s->req->state_dir, rc->info, &s->reg, err);
        if (r < 0)
                return r;
        if ((r = registry_blocked(s->req->state_dir, rc->info->agent, why, sizeof why)) != 0)
                return rf_error_set(err, r < 0 ? r : -EPERM, "refused: %s",
                                    r < 0 ? "cannot read the agent blocks" : why);
        if (!rc->defer_ready && s->req->ready)
                s->req->ready(s->req->ctx);
        return 0;
}

/* supervisor_run's trust_begin callback, once init exists: the run CA and
 * trust files made and sent to init (run_tls_start). */
static void run_trust_begin(void *ctx, int chan)
{
        struct start *s = ctx;
        run_tls_start(&s->tls, chan);
}

/* supervisor_run's trust callback, once the run is registered: the run CA
 * and trust files made (run_tls_finish; the files are init's), the CA for
 * the egress processes. */
static int run_trust(void *ctx, struct rf_error *err)
{
        struct start *s = ctx;
        int r = run_tls_finish(&s->tls, err);
        if (r < 0)
                return r;
        s->egress.tls_keeper_fd = s->tls.keeper;
        s->egress.tls_module_fd = s->tls.module;
        s->egress.tls_bundle_fd = s->tls.bundle;
        s->egress.tls_upstream_fd = s->tls.upstream;
        if (r > 0)
                return r; /* init could not take them: it failed a step and went */
        if (s->req->ready)
                s->req->ready(s->req->ctx); /* only now: a TLS failure refused the run before */
        return 0;
}

/* Is `path` (canonical) at or beneath `dir`? */
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
 * The run's HTTP rules (policy/httprule.h), refused (-EINVAL with err)
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

/* The policy: the file, the request's settings on top, defaults, trigger. */
static int start_policy(struct start *s, struct rf_error *err)
{
        const struct run_request *q = s->req;
        int r;

        if (q->policy_file)
                r = policy_load_file(q->policy_file, &s->pol, err);
        else
                r = (s->pol = policy_new()) ? 0 : -ENOMEM;
        if (r >= 0 && q->overlay)
                r = policy_merge(s->pol, q->overlay, err);
        if (r >= 0 && q->keep_secrets)
                r = policy_keep_secrets(s->pol, q->keep_secrets, err);
        if (r >= 0)
                r = policy_apply_defaults(s->pol);
        if (r >= 0)
                r = run_trigger_token(q->state_dir, q->trigger_token, s->pol, err);
        if (r < 0) {
                if (!err->msg[0])
                        rf_error_set(err, r, "policy: %s", strerror(-r));
                return refuse(s,
                              q->trigger_token && strstr(err->msg, "--triggered-by") ? "trigger"
                                                                                     : "policy",
                              r, err);
        }
        return 0;
}

/* The run's injections as the egress side takes them (grants_inject), in
 * an array just as long as the run's bindings: *cap of room, *n filled.
 * NULL on ENOMEM. Free with inject_list_free, which wipes it (it points at
 * the values and holds the placeholders). */
static struct inject_secret *inject_list(const struct rf_grants *g, size_t *cap, size_t *n)
{
        *cap = g->n ? g->n : 1;
        struct inject_secret *inj = calloc(*cap, sizeof *inj);
        *n = inj ? grants_inject(g, inj, *cap) : 0;
        return inj;
}

static void inject_list_free(struct inject_secret *inj, size_t cap)
{
        if (!inj)
                return;
        explicit_bzero(inj, cap * sizeof *inj);
        free(inj);
}

/* The run's secrets, resolved now, outside anything of the run: a
 * provider that fails refuses the run before it exists. Then the TLS
 * helper for injections and HTTP rules (run_tls.c): the run CA and trust
 * files go into its root through init; this process never maps OpenSSL. */
static int start_secrets(struct start *s, struct rf_error *err)
{
        const struct run_request *q = s->req;
        int r;

        if (s->pol->n_secrets) {
                size_t failed;
                char why[256];
                if ((r = secmem_harden_process()) < 0) {
                        rf_error_set(err, r, "cannot make ringfence non-dumpable: %s",
                                     strerror(-r));
                        return refuse(s, "secret", r, err);
                }
                r = grants_resolve(s->pol, q->state_dir, q->key_file, &s->grants, &failed, why,
                                   sizeof why, err);
                if (q->resolved)
                        q->resolved(q->ctx); /* the grants hold the values now */
                if (r < 0) {
                        if (failed < s->pol->n_secrets) {
                                run_audit_provider_error(s->alog, s->run_id, s->pol, failed, why);
                                s->phase = PHASE_NONE; /* recorded: run.refused included */
                        }
                        return refuse(s, "secret", r, err);
                }
        }
        bool inject = s->grants && s->grants->any_inject;
        if (inject || s->pol->n_net_http) {
                /* the hosts of HTTP rules are terminated too, injection or not */
                size_t cap = 0, ni = 0;
                struct inject_secret *inj = inject ? inject_list(s->grants, &cap, &ni) : NULL;
                r = inject && !inj ? rf_error_set(err, -ENOMEM, "out of memory")
                                   : run_tls_begin(s->pol, inj, ni, q->state_dir, &s->tls, err);
                inject_list_free(inj, cap);
                if (r == 0 && s->pol->n_net_http && !s->tls.on)
                        r = rf_error_set(err, -EINVAL,
                                         "HTTP rules need TLS termination, "
                                         "which this run could not set up");
                if (r < 0)
                        return refuse(s, ni ? "secret" : "setup", r, err);
        }
        return 0;
}

/* The plan: the caller's paths pinned, the profiles' home files, the key
 * file kept out of the run. */
static int start_plan(struct start *s, const char *token, struct rf_error *err)
{
        const struct run_request *q = s->req;
        const struct rf_policy *pol = s->pol;
        char cwd[PATH_MAX];
        struct plan_pin pins[2 * POLICY_PATHS_MAX];
        size_t n_pins = 0;
        int r = 0;

        if (q->cwd)
                snprintf(cwd, sizeof cwd, "%s", q->cwd);
        else if (!getcwd(cwd, sizeof cwd)) {
                r = -errno;
                rf_error_set(err, r, "cannot determine the current directory: %s", strerror(-r));
                return refuse(s, "setup", r, err);
        }
        /* the daemon's caller: every path it gave, or its profiles found,
         * opened as it and pinned to that inode */
        for (size_t i = 0; q->pinned && i < pol->n_read_only + pol->n_read_write; i++) {
                bool rw = i >= pol->n_read_only;
                const char *path = rw ? pol->read_write[i - pol->n_read_only] : pol->read_only[i];
                if (n_pins == ARRAY_SIZE(pins))
                        r = rf_error_set(err, -E2BIG, "too many paths");
                else if (!q->pin)
                        r = rf_error_set(err, -EPERM, "%s: cannot be checked as the caller", path);
                else
                        r = q->pin(q->ctx, path, rw, &pins[n_pins++], err);
                if (r < 0)
                        return refuse(s, "setup", r, err);
        }
        if (q->home_files && !s->home_files &&
            !(s->home_files = calloc(PLAN_HOME_FILES_MAX, sizeof *s->home_files)))
                return refuse(s, "setup", rf_error_set(err, -ENOMEM, "out of memory"), err);
        if (q->home_files &&
            (r = q->home_files(q->ctx, pol->workspace ? pol->workspace : cwd, pol, s->grants,
                               s->home_files, &s->n_home_files, err)) < 0)
                return refuse(s, "setup", r, err);
        struct plan_input in = {
                .policy = pol,
                .argv = q->argv,
                .cwd = cwd,
                .cwd_inside = q->cwd_inside,
                .hostname = q->hostname,
                .masked = q->masked,
                .n_masked = q->n_masked,
                .readonly = q->readonly,
                .n_readonly = q->n_readonly,
                .mounts = q->mounts,
                .devices = q->devices,
                .host_ids = q->host_ids,
                .host_uid = q->host_uid,
                .host_gid = q->host_gid,
                .n_devices = q->n_devices,
                .n_mounts = q->n_mounts,
                .sysctl = q->sysctl,
                .n_sysctl = q->n_sysctl,
                .seccomp_extra = q->seccomp_extra,
                .state_dir = q->state_dir,
                .host_home = q->host_home,
                .term = q->term,
                .lang = q->lang,
                .use_pty = q->use_pty,
                .run_id = s->run_id,
                .identity_token = token,
                .secrets_files = s->grants && s->grants->any_file,
                .secrets_broker = s->grants && s->grants->any_broker,
                .tls_trust = s->tls.on,
                .tls_java = s->tls.java,
                .tls_bound = s->tls.bound,
                .expect_ws = q->expect_ws,
                .expect_ws_dev = q->expect_ws_dev,
                .expect_ws_ino = q->expect_ws_ino,
                .kept = q->kept,
                .n_kept = q->n_kept,
                .home_rels = q->home_rels,
                .n_home_rels = q->n_home_rels,
                .pinned = q->pinned,
                .pin_uid = q->pin_uid,
                .pins = pins,
                .n_pins = n_pins,
                .home_files = s->home_files,
                .n_home_files = s->n_home_files,
        };
        r = plan_build(&in, &s->plan, err);
        if (r == 0) {
                s->plan->clone_parent = q->held != NULL;
                s->plan->preserve_fds = q->preserve_fds;
                s->plan->has_oom_score_adj = q->has_oom_score_adj;
                s->plan->oom_score_adj = q->oom_score_adj;
                if (q->cpu_shares) {
                        s->plan->limits.cpu_shares = q->cpu_shares;
                        s->plan->limits.required |= CGROUP_REQ_CPU_SHARES;
                }
        }
        for (int i = 0; r == 0 && q->join_ns && i < PLAN_JOIN_NS; i++) {
                if (q->join_ns[i] < 0)
                        continue;
                if ((s->plan->join_ns[i] = fcntl(q->join_ns[i], F_DUPFD_CLOEXEC, 3)) < 0)
                        r = rf_error_set(err, negative_errno(), "the pod's namespaces: %m");
                if (i == PLAN_JOIN_NET && q->adopt_net)
                        s->plan->adopt_net = true; /* this run captures (an engine's) */
                else if (i == PLAN_JOIN_NET)
                        s->plan->capture = false; /* the pod's run captures */
        }
        for (size_t i = 0; i < s->n_home_files; i++) /* the plan has its copies */
                free(s->home_files[i].data);
        s->n_home_files = 0;
        if (r == 0 && s->grants)
                r = key_file_exposed(s->plan, q->state_dir, q->key_file, err);
        return r < 0 ? refuse(s, "setup", r, err) : 0;
}

/* The run's cgroups: a limit asked for that cannot be enforced refuses the
 * run; default limits fall back to rlimits, said once. */
static int start_cgroup(struct start *s, struct rf_error *err)
{
        struct rf_plan *plan = s->plan;
        bool want_cgroup = true;
        int r;

#ifdef RF_TEST_BUILD
        want_cgroup = !(plan->test_skip & (1ULL << STEP_CGROUP)); /* layer switch */
#endif
        if (want_cgroup &&
            (r = cgroup_create_at(plan->run_id, s->req->cgroup, &plan->limits, &s->cg, err)) < 0)
                return refuse(s, "limits", r, err);
        /* Default pids limit not in a cgroup: RLIMIT_NPROC, which for a
         * root-started run counts exactly its own uid's processes. */
        if (!(cgroup_enforced(s->cg) & CGROUP_REQ_PIDS))
                plan->nproc_fallback = plan->limits.pids;
        unsigned missing = ~cgroup_enforced(s->cg) & (CGROUP_REQ_MEMORY | CGROUP_REQ_PIDS);
        enum cgroup_mode mode = cgroup_get_mode(s->cg);
        if (missing && note_once(s->req->state_dir, mode == CGROUP_NONE ? "cgroup-none"
                                                    : mode == CGROUP_V2 ? "cgroup-v2-undelegated"
                                                                        : "cgroup-v1-asked"))
                note(s, "note: %s: %s%s%s (said once per state dir)",
                     mode == CGROUP_NONE ? "no writable cgroup"
                     : mode == CGROUP_V2 ? "the parent cgroup does not delegate the memory and "
                                           "pids controllers"
                                         : "cgroup v1 controllers serve only limits asked for",
                     (missing & CGROUP_REQ_PIDS)
                             ? "the default pids limit falls back to RLIMIT_NPROC"
                             : "",
                     missing == (CGROUP_REQ_MEMORY | CGROUP_REQ_PIDS) ? "; " : "",
                     (missing & CGROUP_REQ_MEMORY) ? "no default memory limit" : "");
        return 0;
}

/* The run's egress process's configuration (this run's policy only, built
 * now: the egress process itself cannot read a file), its HTTP rules and
 * injections checked; then the grants recorded and their values for init. */
static int start_egress(struct start *s, struct rf_error *err)
{
        const struct rf_policy *pol = s->pol;
        const char *resolv = NULL;
        int r;

#ifdef RF_TEST_BUILD
        resolv = getenv("RINGFENCE_TEST_RESOLV_CONF"); /* tests' own nameserver */
#endif
        if ((r = egress_config_build(pol, s->run_id, resolv, &s->egress, err)) < 0)
                return refuse(s, "setup", r, err);
        /* HTTP rules: the egress process terminates their hosts (the run CA
         * names them); a rule whose host no allow rule reaches: refused */
        if (s->egress.n_http) {
                s->egress.tls_on = s->tls.on;
                if ((r = http_rules_check(&s->egress, err)) < 0)
                        return refuse(s, "setup", r, err);
        }
        /* credential injection: the egress process gets the placeholders,
         * hosts and values; an injection in a run without any allow rule
         * could never be used: refused */
        if (s->grants && s->grants->any_inject) {
                size_t cap = 0, ni = 0;
                struct inject_secret *inj = inject_list(s->grants, &cap, &ni);
                r = inj ? inject_check(inj, ni, pol, &s->egress, err)
                        : rf_error_set(err, -ENOMEM, "out of memory");
                s->egress.tls_on = s->tls.on; /* false: plaintext injection only */
                if (r == 0 && (r = egress_config_inject(&s->egress, inj, ni)) < 0)
                        rf_error_set(err, r, "out of memory");
                inject_list_free(inj, cap);
                if (r < 0)
                        return refuse(s, "secret", r, err);
        }
        /* secret.grant for each binding (durable with run.start, before the
         * command may start: register_run); then the values for init, and
         * redaction of what the run makes us record */
        if (s->grants) {
                if ((r = grants_record(s->grants, s->ev, err)) >= 0)
                        r = grants_blob(s->grants, err); /* -1: nothing for init */
                if (r < -1)
                        return refuse(s, "secret", rewrap(err, r, "cannot grant the run's secrets"),
                                      err);
                s->plan->secrets_fd = r; /* the supervisor closes it once init has it */
                audit_emitter_set_redact(s->ev, grants_redact, s->grants);
        }
        return 0;
}

int run_start(const struct run_request *q, struct rf_error *err)
{
        _cleanup_(start_done) struct start s = {.req = q, .init_left = {.pid = -1, .pidfd = -1}};
        char *token = s.token;
        char why[RF_ERROR_MSG_MAX];
        int r;

        /* From here terminating signals wait for the supervisor's signalfd
         * (which forwards them to the run) instead of killing us halfway: a
         * supervisor gone mid-setup would leave init unreaped. */
        sigset_t term;
        sigemptyset(&term);
        sigaddset(&term, SIGINT);
        sigaddset(&term, SIGTERM);
        sigaddset(&term, SIGHUP);
        sigaddset(&term, SIGQUIT);
        sigprocmask(SIG_BLOCK, &term, NULL);

        /* The audit log (and with it the instance's signing key) first: no
         * record, no run. */
        if ((r = audit_open(q->state_dir, &s.alog, err)) < 0)
                return refuse(&s, "setup", rewrap(err, r, "cannot write the audit log"), err);
        if (q->run_id) {
                /* chosen by the front end: a UUID in lower-case hex, or the
                 * log, the registry and the plan would not agree */
                bool good = strlen(q->run_id) == RF_RUN_ID_LEN;
                for (size_t i = 0; good && i < RF_RUN_ID_LEN; i++)
                        good = (i == 8 || i == 13 || i == 18 || i == 23)
                                       ? q->run_id[i] == '-'
                                       : strchr("0123456789abcdef", q->run_id[i]) != NULL;
                if (!good)
                        return refuse(&s, "setup",
                                      rf_error_set(err, -EINVAL,
                                                   "run id %.40s: a UUID in lower-case hex",
                                                   q->run_id),
                                      err);
                memcpy(s.run_id, q->run_id, sizeof s.run_id);
        } else if ((r = rf_run_id_new(s.run_id)) < 0) {
                rf_error_set(err, r, "cannot make a run id: %s", strerror(-r));
                return refuse(&s, "setup", r, err);
        }
        s.phase = PHASE_LOGGED; /* from here every refusal is recorded */
        if ((r = start_policy(&s, err)) != 0)
                return r;
        if ((r = run_identity_token(q->state_dir, s.run_id, s.pol, token, sizeof s.token, err)) <
            0) {
                if (!err->msg[0])
                        rf_error_set(err, r, "cannot issue the run's identity token: %s",
                                     strerror(-r));
                return refuse(&s, "identity", r, err);
        }
        /* An agent blocked by `ringfence kill --agent A --block` (or `block`)
         * starts nothing until unblocked; an unreadable block refuses too. */
        if ((r = registry_blocked(q->state_dir, s.pol->agent, why, sizeof why)) != 0) {
                if (r < 0)
                        snprintf(why, sizeof why, "cannot read the agent blocks: %s", strerror(-r));
                run_audit_refused(s.alog, s.run_id, "blocked", why);
                s.phase = PHASE_NONE;
                return refuse(&s, "blocked", rf_error_set(err, -EPERM, "refused: %s", why), err);
        }
        if ((r = start_secrets(&s, err)) == 0)
                r = start_plan(&s, token, err);
        explicit_bzero(s.token, sizeof s.token);
        if (r != 0 || (r = start_cgroup(&s, err)) != 0)
                return r;
        /* The wake-loop breaker decides before anything of the run exists
         * beyond its plan; a refusal is itself recorded. */
        if (run_loop_check(q->state_dir, s.pol, why, sizeof why) < 0) {
                run_audit_refused(s.alog, s.run_id, "loop", why);
                s.phase = PHASE_NONE;
                return refuse(&s, "loop", rf_error_set(err, -ELOOP, "refused: %s", why), err);
        }
        if ((r = run_audit_start(s.alog, s.plan, s.pol, s.cg, q->container, err)) < 0) {
                s.phase = PHASE_NONE; /* the log cannot take it: nothing more to write */
                return refuse(&s, "setup", rewrap(err, r, "cannot write the audit log"), err);
        }
        s.phase = PHASE_STARTED;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        /* The run's own events (DNS refusals, egress, secrets) go through
         * its budget: a flooding run is throttled alone. */
        struct audit_budget_cfg budget = {.rate = (uint32_t)s.pol->event_rate,
                                          .burst = (uint32_t)s.pol->event_burst,
                                          .bytes = s.pol->event_bytes};
        if ((r = audit_emitter_new(s.alog, s.run_id, &budget, &s.ev)) < 0)
                return refuse(&s, "setup", rf_error_set(err, r, "out of memory"), err);
        if ((r = start_egress(&s, err)) != 0)
                return r;
        /* published ports: the host's listeners, open before anything of
         * the run starts, so a port in use refuses the run */
        if ((r = publish_open(s.pol->net_publish, s.pol->n_net_publish, q->uid, &s.publish, err)) <
            0)
                return refuse(&s, "setup", r, err);

        /* Reachable from now on: `ringfence ps`, `kill`, `pause`, ... */
        struct run_info info = {.uid = q->uid, .pid = (uint64_t)getpid()};
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        info.started_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
        snprintf(info.run, sizeof info.run, "%s", s.run_id);
        snprintf(info.agent, sizeof info.agent, "%s", s.pol->agent);
        snprintf(info.on_behalf_of, sizeof info.on_behalf_of, "%s",
                 s.pol->on_behalf_of ? s.pol->on_behalf_of : "");
        snprintf(info.task, sizeof info.task, "%s", s.pol->task ? s.pol->task : "");
        snprintf(info.command, sizeof info.command, "%s", s.plan->argv[0]);
        snprintf(info.cgroup, sizeof info.cgroup, "%s", cgroup_mode_name(cgroup_get_mode(s.cg)));
        struct reg_ctx rc = {.s = &s, .info = &info, .defer_ready = s.tls.on};
        struct run_services services = {.timeout_ms = s.pol->timeout_ms,
                                        .registered = register_run,
                                        .registered_ctx = &rc,
                                        .reg = &s.reg,
                                        .trust = s.tls.on ? run_trust : NULL,
                                        .trust_begin = s.tls.on ? run_trust_begin : NULL,
                                        .trust_ctx = &s,
                                        .ev = s.ev,
                                        .egress = &s.egress,
                                        .grants = s.grants,
                                        .mask_output = q->mask_output,
                                        .storm_kill = s.pol->net_on_storm == POLICY_STORM_KILL,
                                        .raw_terminal = q->raw_terminal,
                                        .publish = s.publish,
                                        .log_max = q->log_max,
                                        .held = q->held,
                                        .held_ctx = q->ctx,
                                        .start_gate = q->start_gate,
                                        .console = q->held ? q->console : NULL,
                                        .planned = q->held ? q->planned : NULL,
                                        .init_left = &s.init_left};
        /* what the egress process refused, for one summary at the end */
        struct egress_refusals refusals = {0};
        egress_refusals_track(&refusals, s.grants ? grants_redact : NULL, s.grants);
        int status = supervisor_run(s.plan, s.cg, &services, err);
        s.publish = publish_free(s.publish);
        egress_refusals_track(NULL, NULL, NULL);
        if (q->refusals_to)
                egress_refusals_print(&refusals, q->refusals_to);
        egress_refusals_free(&refusals);
        egress_config_free(&s.egress);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        /* the summaries and the grants' revoke records (supervisor_run's
         * end) share run.exit's commit: start_done's audit_flush */
        struct rf_error eerr = {0};
        if (audit_emitter_finish(s.ev, &eerr) < 0)
                note(&s, "cannot record the run's events: %s", eerr.msg);
        s.ev = audit_emitter_free(s.ev);
        struct rf_error aerr = {0};
        if (run_audit_exit(s.alog, s.plan, status, err->msg, s.cg,
                           (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000 +
                                      (t1.tv_nsec - t0.tv_nsec) / 1000000),
                           &aerr) < 0)
                note(&s, "cannot record the end of run %s: %s", s.run_id, aerr.msg);
        s.phase = PHASE_EXITED;
        /* start_done: only now does the run leave the registry (its lock
         * released), after run.exit and the grants' revoke records */
        return status;
}
