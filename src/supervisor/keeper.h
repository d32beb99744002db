/*
 * keeper.h — the run CA's keeper, the supervisor's child that makes a
 * run's CA and trust files and keeps the CA's keys (keeper.c; the
 * supervisor's side is run_tls.c; docs/TLS.md, "Where the key lives").
 * Internal to the supervisor: what the two sides of the keeper's socket
 * agree on.
 */
#pragma once

#include <stdint.h>

#include "shared/error.h"
#include "supervisor/start-internal.h"

/* The keeper's fds (rf_fork_tied arranges them; every other fd is closed) */
#define KEEPER_FD_SOCK     3 /* its end of the socket to the supervisor and egress processes */
#define KEEPER_FD_BUNDLE   4 /* the host's CA bundle, open since run_tls_begin */
#define KEEPER_FD_UPSTREAM 5 /* network.upstream_ca, or closed */

/* The fds of a keeper's result, in this order (KR_JVM and KR_UPSTREAM only
 * when its flag says so) */
enum { KR_FILES, KR_JVM, KR_MODULE, KR_BUNDLE, KR_UPSTREAM, _KR_MAX };

/* What the keeper sends the supervisor once the trust is made: this, with
 * SCM_RIGHTS the fds above when r is 0 (in that order, the absent ones
 * left out); no fd otherwise. */
struct keeper_result {
        int32_t r; /* 0 or -errno */
        uint8_t has_jvm, has_upstream;
        char why[RF_ERROR_MSG_MAX];
};

/*
 * keeper_main — the keeper, in the child rf_fork_tied returned 0 in (fds
 * as KEEPER_FD_* say, no capability, no_new_privs, nothing of the
 * supervisor's secret memory): confines itself, makes the run's CA and
 * trust files for t, sends the supervisor one struct keeper_result on
 * KEEPER_FD_SOCK, then serves one copy of the CA's export per request on
 * that socket until its other end is gone. Never returns.
 */
_noreturn_ void keeper_main(const struct run_tls *t);
