/*
 * egress-internal.h — what egress.c (setup, lockdown) and proxy.c (the
 * loop) share and nothing else may use.
 */
#pragma once

#include "egress/egress.h"

/*
 * egress_loop — serve the run's listeners until the supervisor goes away
 * (its event channel hangs up), then _exit. Runs in the locked-down
 * egress process only.
 */
_Noreturn void egress_loop(const struct egress_config *cfg, int http_fd, int socks_fd,
                           int events_fd);
