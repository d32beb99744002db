/*
 * daemon.h — `ringfence daemon`: a long-running supervisor of many runs
 * with a control API (api.h) on a Unix socket (docs/API.md).
 *
 * Processes:
 *
 *   ringfence daemon (privileged: the state dir, the audit log, starting runs)
 *     ├── request parser (nobody, no capabilities, seccomp: parser.c)
 *     └── one `ringfence run` supervisor per run (its registration, control
 *         socket, egress process and grants, exactly as a standalone run),
 *         started with PDEATHSIG: when the daemon dies, so do they and
 *         their runs; the next daemon cleans what they left (run.lost)
 *
 * Every client is identified by SO_PEERCRED and authorised against the
 * operator's configuration (config.h) before anything is done for it.
 */
#pragma once

#include <sys/types.h>

#define DAEMON_REQ_MAX         (16 * 1024 + 64 * 1024) /* a request head and body */
#define DAEMON_CLIENTS_MAX     128
#define DAEMON_PER_UID_MAX     16    /* connections at once per uid (root: no limit) */
#define DAEMON_ROOT_SLOTS      16    /* the last free slots are kept for root */
#define DAEMON_CLIENT_MS       10000 /* a client has this long to send its request */
#define DAEMON_KILL_MS         30000 /* a kill not confirmed by then is reported */
#define DAEMON_LINGER_MS       2000  /* an answer given before the whole request was read: */
#define DAEMON_LINGER_MAX      (1024 * 1024) /* ... what is read and dropped until close */
#define DAEMON_CTL_MS          5000 /* a pause, resume, grant or revoke unanswered by then: 500 */
#define DAEMON_LOGS_MAX        1000 /* run logs kept in STATE_DIR/logs (checked every */
#define DAEMON_PRUNE_EVERY     32   /* ... this many starts) */
#define DAEMON_STREAMS_MAX     64   /* audit streams at once (the last 4 are root's) */
#define DAEMON_STREAMS_PER_UID 4

struct dconf;

/*
 * daemon_main — serve until SIGTERM/SIGINT. `state_dir` canonical;
 * `conf` the parsed configuration (may be empty: root only). Returns an
 * exit status; prints one line on a startup failure.
 */
int daemon_main(const char *state_dir, const struct dconf *conf);

/* parser.c: fork the request parser running as `uid` (when root); *sock is
 * the daemon's end. Its pid, or -errno. */
pid_t parser_spawn(int *sock, uid_t uid);
