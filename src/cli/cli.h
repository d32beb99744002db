/*
 * cli.h — shared pieces of the command-line front end.
 *
 * The CLI is thin: it parses arguments, gathers caller facts, calls the
 * library, and is the only place (with main) that prints errors — one line,
 * "ringfence: ...".
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "shared/error.h"

#define CLI_EXIT_USAGE 2

/* Print "ringfence: <fmt>" and a newline to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print an rf_error as one line ("ringfence: file:line:col: keypath: msg"). */
void cli_print_error(const struct rf_error *err);

/*
 * cli_state_dir — resolve the state dir: `flag` (--state-dir), else
 * $RINGFENCE_STATE_DIR, else /var/lib/ringfence as root, else
 * $XDG_STATE_HOME/ringfence or $HOME/.local/state/ringfence. Creates it
 * (0700) when `create`. Returns a canonical malloc'd path in *ret, or
 * -errno with err set.
 */
int cli_state_dir(const char *flag, int create, char **ret, struct rf_error *err);

/* Subcommands: argc/argv start at the subcommand name. Return the exit status. */
int cmd_run(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_audit(int argc, char **argv);
struct audit_log;
struct rf_plan;
struct rf_policy;
struct rf_cgroup;

/* run_audit.c: run.start (durable before the command can start; 0 or
 * -errno: then the run is refused), run.exit, run.refused. */
int run_audit_start(struct audit_log *log, const struct rf_plan *plan, const struct rf_policy *pol,
                    struct rf_cgroup *cg, struct rf_error *err);
void run_audit_exit(struct audit_log *log, const struct rf_plan *plan, int status, const char *why,
                    struct rf_cgroup *cg, uint64_t duration_ms);
void run_audit_refused(struct audit_log *log, const char *run_id, const char *why);
/* The run's identity token (PASETO v4.public; exp ≤ min(timeout, 1 h));
 * also writes STATE_DIR/audit/jwks.json once. Length or -errno. */
int run_identity_token(const char *state_dir, const char *run_id, const struct rf_policy *pol,
                       char *out, size_t len, struct rf_error *err);
int cmd_identity(int argc, char **argv);

/*
 * run_loop.c: the wake-loop breaker. 0 if a run of (agent, task) caused by
 * `trigger` (NULL or "" for none) may start; else -ENOENT (unknown trigger)
 * or -ELOOP (chain too deep, burst too large) with `why` set, or -errno.
 */
int run_loop_check(const char *state_dir, const char *agent, const char *task, const char *trigger,
                   char *why, size_t why_len);

/* `ringfence version --layers`: the isolation layers this host offers. */
int cmd_layers(void);
