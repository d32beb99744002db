/*
 * start-internal.h — the parts of a run's start that start.c puts together:
 * its audit records (run_audit.c), the wake-loop breaker and trigger
 * tokens (run_loop.c) and the TLS side of injection and HTTP rules
 * (run_tls.c). Used by start.c only.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/error.h"

struct audit_log;
struct rf_plan;
struct rf_policy;
struct rf_cgroup;

/* run_audit.c: run.start (written, not yet durable: the caller commits it
 * with audit_flush before the command can start; 0 or -errno: then the run
 * is refused), run.exit, run.refused. */
int run_audit_start(struct audit_log *log, const struct rf_plan *plan, const struct rf_policy *pol,
                    struct rf_cgroup *cg, const char *container, struct rf_error *err);
/* run.exit and the run-end checkpoint, written and on their way to the
 * disk (audit_writeback): the caller makes them durable (audit_flush)
 * once the rest of the run is undone. 0, or -errno with err set (the
 * caller says so: the run is over either way). */
int run_audit_exit(struct audit_log *log, const struct rf_plan *plan, int status, const char *why,
                   struct rf_cgroup *cg, uint64_t duration_ms, struct rf_error *err);
/* secret.provider_error {name, source, delivery, error} for the binding
 * pol->secrets[failed] (grants_resolve's `why`: never provider output),
 * then run.refused {reason: secret}; writes nothing for another failure. */
void run_audit_provider_error(struct audit_log *log, const char *run_id,
                              const struct rf_policy *pol, size_t failed, const char *why);
/* run.refused {reason: policy|trigger|identity|setup|limits|loop|secret, detail}. */
void run_audit_refused(struct audit_log *log, const char *run_id, const char *reason,
                       const char *why);
/* The run's identity token (PASETO v4.public; exp ≤ min(timeout, 1 h));
 * also writes STATE_DIR/audit/jwks.json once. Length or -errno. */
int run_identity_token(const char *state_dir, const char *run_id, const struct rf_policy *pol,
                       char *out, size_t len, struct rf_error *err);

/*
 * run_loop.c: the wake-loop breaker. 0 if a run of pol's (agent, task)
 * caused by pol->triggered_by (NULL or "" for none) may start under pol's
 * audit.max_chain_depth / max_runs_per_window / loop_window (defaults
 * LOOP_MAX_DEPTH, LOOP_MAX_RUNS, LOOP_WINDOW_S); else -ENOENT (unknown
 * trigger) or -ELOOP (chain too deep, burst too large) with `why` set
 * (the chain included), or -errno.
 */
#define LOOP_MAX_DEPTH 8  /* runs in one causal chain, this one included */
#define LOOP_MAX_RUNS  30 /* runs per (agent, task) per window */
#define LOOP_WINDOW_S  600
struct rf_policy;
int run_loop_check(const char *state_dir, const struct rf_policy *pol, char *why, size_t why_len);

/*
 * run_trigger_token — `--triggered-by TOKEN`: verify the run identity
 * token against this instance's key (signature and expiry; a token of
 * another instance or a forged one is refused) and make its run id the
 * policy's triggered_by. `token` NULL: nothing to do. 0 or -errno with err.
 */
int run_trigger_token(const char *state_dir, const char *token, struct rf_policy *pol,
                      struct rf_error *err);

/*
 * run_tls.c: the TLS side of a run with credential injection or HTTP rules.
 * `on` is false when the run needs none (no injection names a host:
 * addresses are plaintext only). The CA and the trust files are made by the
 * run CA's keeper (tls/trustmake.h: nettle, no OpenSSL), a child of the
 * supervisor forked right after init is cloned, which alone (with the
 * egress processes it hands a copy to) ever holds the CA's keys; the
 * supervisor never holds them and never maps OpenSSL.
 */
struct run_tls {
        bool on;      /* the run terminates TLS for some host */
        bool java;    /* the host has a JVM store: the run gets one too */
        size_t bound; /* each trust file's size bound (plan_input.tls_bound) */
        /* what run_tls_finish makes the trust from (run_tls_begin) */
        char **hosts; /* owned: the names to terminate TLS for */
        size_t n_hosts, name_bytes;
        uint64_t lifetime_s;
        int bundle_src, upstream_src; /* the files, open since the checks (-1: none) */
        const char *upstream_path;    /* borrowed from the policy */
        const char *state_dir;        /* borrowed: the trust cache's home, or NULL */
        /* the run CA's keeper (run_tls_begin forks it): the process that
         * makes the CA and holds its keys, its socket's other end (given
         * to each egress process, never read here) and a pidfd; -1 when
         * none */
        int keeper, keeper_pidfd;
        int keeper_report; /* its lockdown report, until run_tls_start reads it */
        pid_t keeper_pid;
        bool started;   /* run_tls_start ran (chan set) */
        bool collected; /* the keeper's result taken, the files sent to init */
        int chan;       /* init's channel (borrowed), from run_tls_start */
        bool made;      /* run_tls_finish reported it */
        bool send_lost; /* init could not take the trust files */
        int result;     /* the keeper's result: 0 or -errno, with why */
        char why[RF_ERROR_MSG_MAX];
        /* sealed snapshots made before the run's command existed, for the
         * egress processes: the TLS module, the host's roots and
         * network.upstream_ca as they were then (-1: none) */
        int module, bundle, upstream;
        const char *what; /* what needs TLS, for messages */
};

/*
 * run_tls_begin — for the injections inj[n] and the HTTP rules of a run
 * with policy pol: the host names to terminate; when there are any, check
 * the TLS module and open the trust files it will read (missing or unsafe
 * ones refuse the run now), and fork the run CA's keeper (run_tls.c),
 * which makes the run CA and the trust files (tls/trustmake.h) beside the
 * plan and init's clone, with the CA's keys in its own secret memory: the
 * supervisor never holds them (nor init, cloned from the supervisor). Then
 * it serves copies of the CA's export to egress processes, under a
 * seccomp filter of strict mode's set and without any capability. state_dir (may be NULL) holds
 * the trust cache. 0 (t->on false when nothing needs TLS), or -errno with
 * err saying why (the run is refused: fail closed). Release with
 * run_tls_free.
 */
struct inject_secret;
int run_tls_begin(const struct rf_policy *pol, const struct inject_secret *inj, size_t n,
                  const char *state_dir, struct run_tls *t, struct rf_error *err);

/*
 * run_tls_start — right after init is cloned: the keeper's result taken
 * if it is there (most often) and its trust files sent to init on `chan`
 * (MSG_TRUST, sandbox/trustfiles.h) at once, so that init finishes the
 * root while the run is vetted and registered; the snapshots for the
 * egress processes kept (t->module, t->bundle, t->upstream). If it is not
 * there yet, run_tls_finish waits for it. A failure is kept for
 * run_tls_finish to report.
 */
void run_tls_start(struct run_tls *t, int chan);

/*
 * run_tls_finish — what run_tls_start found (or, if the keeper was not
 * through then, its result waited for and the files sent now): 0 (the trust files are in
 * init's hands, within t->bound, a JVM store exactly when t->java; the
 * egress processes take the CA from t->keeper), or -errno with err saying
 * why (the run is refused); 1 when init could not take the files (it
 * failed a step and went). Called once, after run_tls_start, before init
 * may start the command.
 */
int run_tls_finish(struct run_tls *t, struct rf_error *err);

/* run_tls_quit — the keeper's socket closed: it wipes the CA's export and
 * exits on its own meanwhile (run_tls_free reaps it). Idempotent. */
void run_tls_quit(struct run_tls *t);

/* run_tls_free — everything released; the keeper told to go (its socket
 * closed: it wipes the CA's keys and exits), killed if it has not within a
 * second, and reaped. */
void run_tls_free(struct run_tls *t);
static inline void run_tls_freep(struct run_tls *t)
{
        run_tls_free(t);
}
