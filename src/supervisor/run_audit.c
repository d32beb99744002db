/*
 * run_audit.c — what `ringfence run` records in the audit log.
 *
 * run.start is written before the run is spawned and made durable before
 * the command can start (the run is refused with 125 if it cannot be): its
 * fdatasync runs while the run's init builds the root (start.c's
 * registration callback commits it), so the disk flush, the largest single
 * cost of a start, overlaps the sandbox's setup instead of preceding it.
 * run.exit after the run is gone;
 * run.refused for a refusal once the log is open. Fields are ringfence's own
 * facts; of the command line only argv[0] is recorded (arguments may carry
 * values that must not reach disk).
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/token.h"
#include "supervisor/start-internal.h"
#include "policy/policy.h"
#include "sandbox/cgroup.h"
#include "sandbox/plan.h"
#include "policy/binding.h"
#include "shared/macro.h"

#define STR(k, v)                                                                                  \
        {                                                                                          \
                .key = (k), .type = AUDIT_STR, .s = or_empty(v)                                    \
        }
#define UINT(k, v)                                                                                 \
        {                                                                                          \
                .key = (k), .type = AUDIT_UINT, .u = (v)                                           \
        }
#define INT(k, v)                                                                                  \
        {                                                                                          \
                .key = (k), .type = AUDIT_INT, .i = (v)                                            \
        }

static const char *or_empty(const char *s)
{
        return s ? s : "";
}

/* hex SHA-256 of the canonical JSON of the effective policy */
static void policy_digest(const struct rf_policy *pol, char hex[65])
{
        _cleanup_free_ char *json = NULL;
        unsigned char h[crypto_hash_sha256_BYTES];

        strcpy(hex, "unknown");
        if (policy_to_json(pol, &json) < 0 || !json)
                return;
        crypto_hash_sha256(h, (const unsigned char *)json, strlen(json));
        sodium_bin2hex(hex, 65, h, sizeof h);
}

int run_audit_start(struct audit_log *log, const struct rf_plan *plan, const struct rf_policy *pol,
                    struct rf_cgroup *cg, const char *container, struct rf_error *err)
{
        char digest[65], host[256] = "", started_by[320], layers[160];
        char publish[POLICY_PUBLISH_MAX * (POLICY_PUBLISH_TEXT_MAX + 1)] = "";
        /* root is "root" whatever the host calls uid 0: no NSS lookup */
        struct passwd *pw = getuid() == 0 ? NULL : getpwuid(getuid());

        policy_digest(pol, digest);
        for (size_t i = 0; i < pol->n_net_publish; i++) {
                char t[POLICY_PUBLISH_TEXT_MAX];
                policy_publish_text(&pol->net_publish[i], t);
                size_t l = strlen(publish);
                snprintf(publish + l, sizeof publish - l, "%s%s", l ? "," : "", t);
        }
        if (gethostname(host, sizeof host - 1) < 0)
                strcpy(host, "unknown");
        snprintf(started_by, sizeof started_by, "uid:%u(%s)", (unsigned)getuid(),
                 getuid() == 0       ? "root"
                 : pw && pw->pw_name ? pw->pw_name
                                     : "?");
        snprintf(layers, sizeof layers, "landlock_abi=%d cgroup=%s seccomp_insns=%u run_uid=%u",
                 plan->landlock.abi, cgroup_mode_name(cgroup_get_mode(cg)), plan->seccomp.len,
                 (unsigned)plan->host_uid);
        struct audit_field f[] = {
                STR("agent", pol->agent),
                STR("on_behalf_of", pol->on_behalf_of),
                STR("task", pol->task),
                STR("project", pol->project),
                STR("triggered_by", pol->triggered_by),
                STR("started_by", started_by),
                STR("host", host),
                STR("policy_digest", digest),
                STR("workspace", plan->workspace),
                STR("command", plan->argv[0]),
                STR("layers", layers),
                UINT("limit_memory",
                     cgroup_enforced(cg) & CGROUP_REQ_MEMORY ? plan->limits.memory : 0),
                UINT("limit_pids", plan->limits.pids),
                UINT("limit_cpus_milli", plan->limits.cpus_milli),
                UINT("timeout_ms", pol->timeout_ms),
                STR("publish", publish[0] ? publish : NULL),
                STR("container", container),
        };
        /* not durable yet: the caller commits it (audit_flush) before the
         * command can start, a failed commit refusing the run; its
         * writeback starts now, so that commit (after clone3) waits less */
        int64_t r = audit_append(log, plan->run_id, "run.start", f, ARRAY_SIZE(f), false, err);
        if (r >= 0)
                (void)audit_writeback(log);
        return r < 0 ? (int)r : 0;
}

int run_audit_exit(struct audit_log *log, const struct rf_plan *plan, int status, const char *why,
                   struct rf_cgroup *cg, uint64_t duration_ms, struct rf_error *err)
{
        struct rf_cgroup_stats st = {0};

        (void)cgroup_stats(cg, &st);
        struct audit_field f[] = {
                INT("status", status),
                UINT("signal", status > 128 && status < 128 + 65 ? (uint64_t)(status - 128) : 0),
                STR("note", why),
                UINT("duration_ms", duration_ms),
                UINT("memory_peak", st.memory_peak),
                UINT("cpu_usec", st.cpu_usec),
                UINT("oom_kills", st.oom_kills),
                UINT("pids_max_hits", st.pids_max_hits),
        };
        /* run.exit and the run-end checkpoint share one fdatasync (group
         * commit), the caller's: their writeback starts now */
        int64_t r = audit_append(log, plan->run_id, "run.exit", f, ARRAY_SIZE(f), false, err);
        if (r >= 0)
                r = audit_checkpoint(log, err);
        if (r >= 0)
                (void)audit_writeback(log);
        return r < 0 ? (int)r : 0;
}

void run_audit_refused(struct audit_log *log, const char *run_id, const char *reason,
                       const char *why)
{
        struct rf_error err = {0};
        struct audit_field f[] = {STR("reason", reason), STR("detail", why)};

        if (log)
                (void)audit_append(log, run_id, "run.refused", f, ARRAY_SIZE(f), true, &err);
}

int run_identity_token(const char *state_dir, const char *run_id, const struct rf_policy *pol,
                       char *out, size_t len, struct rf_error *err)
{
        struct token_claims c = {0};
        int64_t now = (int64_t)time(NULL);
        uint64_t life = pol->timeout_ms ? (pol->timeout_ms + 999) / 1000 : 3600;

        if (life > 3600)
                life = 3600; /* at most an hour; never beyond the run's timeout */
        const char *names[] = {pol->agent, pol->on_behalf_of, pol->task, pol->project,
                               pol->audience};
        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                if (names[i] && strlen(names[i]) >= TOKEN_NAME_MAX)
                        return rf_error_set(err, -EINVAL,
                                            "identity value of %zu bytes: a run identity token "
                                            "carries at most %d",
                                            strlen(names[i]), TOKEN_NAME_MAX - 1);
        snprintf(c.run, sizeof c.run, "%s", run_id);
        snprintf(c.sub, sizeof c.sub, "%s", pol->agent ? pol->agent : "agent");
        snprintf(c.on_behalf_of, sizeof c.on_behalf_of, "%s", or_empty(pol->on_behalf_of));
        snprintf(c.task, sizeof c.task, "%s", or_empty(pol->task));
        snprintf(c.project, sizeof c.project, "%s", or_empty(pol->project));
        snprintf(c.aud, sizeof c.aud, "%s", pol->audience ? pol->audience : "ringfence");
        c.iat = now;
        c.exp = now + (int64_t)life;
        int r = token_issue(state_dir, &c, out, len, err);
        if (r < 0)
                return r;
        /* the public key as JWKS, for platforms that verify run tokens */
        char jwks[TOKEN_JWKS_MAX], path[4200];
        snprintf(path, sizeof path, "%s/audit/jwks.json", state_dir);
        if (faccessat(AT_FDCWD, path, F_OK, AT_EACCESS) < 0 &&
            token_jwks(state_dir, jwks, sizeof jwks, err) > 0) {
                int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (fd >= 0) {
                        (void)!write(fd, jwks, strlen(jwks));
                        (void)!write(fd, "\n", 1);
                        close(fd);
                }
        }
        return 0;
}

void run_audit_provider_error(struct audit_log *log, const char *run_id,
                              const struct rf_policy *pol, size_t failed, const char *why)
{
        struct rf_error err = {0};

        if (!log || failed >= pol->n_secrets)
                return;
        const struct secret_binding *b = &pol->bindings[failed];
        /* the provider's error, never its output */
        struct audit_field f[] = {
                STR("name", b->name), STR("source", secret_source_name(b->source)),
                STR("delivery", secret_delivery_name(b->delivery)), STR("error", why)};
        (void)audit_append(log, run_id, "secret.provider_error", f, ARRAY_SIZE(f), false, &err);
        /* the refusal's detail: the short reason only (a provider's stderr
         * line is shown to the caller, not recorded) */
        char detail[512];
        snprintf(detail, sizeof detail, "secret %s (%s): %s", b->name,
                 secret_source_name(b->source), why);
        run_audit_refused(log, run_id, "secret", detail);
}
