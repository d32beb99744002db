/*
 * cli.h — shared pieces of the command-line front end.
 *
 * The CLI is thin: it parses arguments, gathers caller facts, calls the
 * library, and is the only place (with main) that prints errors — one line,
 * "ringfence: ...".
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/error.h"
#include "tls/tls-load.h"

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

/* cli_state_dir_path — the same choice of path (absolute, malloc'd in *ret),
 * neither created nor required to exist. 0 or -errno with err set. */
int cli_state_dir_path(const char *flag, char **ret, struct rf_error *err);

/* Subcommands: argc/argv start at the subcommand name. Return the exit status. */
int cmd_run(int argc, char **argv);
/* `ringfence run --request-fd FD`: the daemon's typed start (supervisor/runwire.h). */
int cmd_run_request(const char *fdarg);
int cmd_policy(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_secret(int argc, char **argv);
/* ps, inspect, kill, pause, resume, revoke, block, unblock (argv[0] is the verb). */
int cmd_ctl(int argc, char **argv);
int cmd_daemon(int argc, char **argv);
int cmd_console(int argc, char **argv);
int cmd_identity(int argc, char **argv);

/* `ringfence version --layers`: the isolation layers this host offers. */
int cmd_layers(void);
int cmd_doctor(int argc, char **argv);
