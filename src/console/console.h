/*
 * console.h — `ringfence console`: the operator's web view of a state
 * dir's runs, on host loopback only (docs/CONSOLE.md).
 *
 * One process, one thread, a poll loop: at most CONSOLE_CONNS_MAX
 * connections, one request each (Connection: close), a head of at most
 * 16 KiB, a body of at most CONSOLE_BODY_MAX, CONSOLE_CONN_TIMEOUT_MS to
 * send it all and CONSOLE_SEND_TIMEOUT_MS to take the whole answer. It acts with the rights of the
 * uid that started it: listing through the state dir's registry, actions through each run's control
 * socket (whose supervisor checks the peer's uid and records it as the actor), the timeline from
 * the audit log.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "console/parse.h"
#include "shared/error.h"

#define CONSOLE_CONNS_MAX       64
#define CONSOLE_ALLOW_UIDS_MAX  8 /* --allow-uid */
#define CONSOLE_BODY_MAX        8192
#define CONSOLE_CONN_TIMEOUT_MS 10000
#define CONSOLE_SEND_TIMEOUT_MS 10000 /* to write one whole answer, however slow the reader */
#define CONSOLE_RUNS_MAX        10000 /* runs one listing shows */
#define CONSOLE_PORT_DEFAULT    8650

struct console_opts {
        const char *state_dir; /* canonical */
        const char *listen;    /* "127.0.0.1:PORT", "[::1]:PORT", "localhost:PORT"; PORT may be 0 */
        int64_t token_ttl_s;   /* how long the login token logs in */
        /* the daemon's API socket (docs/API.md), or NULL: the state dir
         * itself. With it, the console is a client of the daemon as this
         * uid: it lists, shows and does what the daemon's grants let this
         * uid do, and shows no button for the rest. */
        const char *api_socket;
        /* uids besides the console's own and root whose connections are
         * served (the operator's browser when the console runs as another
         * uid: --allow-uid, sudo's caller); every other local user's are
         * closed unread */
        uint32_t allow_uids[CONSOLE_ALLOW_UIDS_MAX];
        size_t n_allow_uids;
};

/* console_listen_parse: console/parse.h */

/*
 * console_serve — serve until SIGINT or SIGTERM (0); SIGHUP prints a
 * fresh login URL. Prints the first URL on stdout once listening. -errno
 * with err set when it cannot start.
 */
int console_serve(const struct console_opts *o, struct rf_error *err);
