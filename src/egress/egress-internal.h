/*
 * egress-internal.h — what egress.c (setup, lockdown) and proxy.c (the
 * loop) share and nothing else may use.
 */
#pragma once

#include "egress/egress.h"

#include "egress/synth.h"

/*
 * egress_loop — serve the run's listeners until the supervisor goes away
 * (its event channel hangs up), then _exit. Runs in the locked-down
 * egress process only. fds holds the child's own fd numbers (-1: none);
 * map is the process's copy of the synthetic-address map (owned: grown
 * from fds->synth_rx).
 */
_Noreturn void egress_loop(const struct egress_config *cfg, const struct egress_fds *fds,
                           int events_fd, struct synth_map *map);
