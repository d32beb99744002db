/*
 * dnsstub.h — the run's stub resolver, served by its supervisor.
 *
 * The socket is bound to 127.0.0.1:53 inside the run's network namespace
 * by the run's init and handed out (MSG_DNS); the supervisor reads it.
 * Every query is answered REFUSED at once (no waiting for a timeout) and
 * recorded as `dns.refused` {name, qtype}, coalesced per name through the
 * run's audit budget. A malformed message gets FORMERR when its header is
 * readable (else nothing) and is recorded as `dns.malformed`, coalesced.
 */
#pragma once

#include "audit/emit.h"

#define DNSSTUB_BATCH 64 /* datagrams served per call, so a flood cannot starve the loop */

/*
 * dnsstub_serve — serve what is waiting on `fd` (non-blocking UDP), at most
 * DNSSTUB_BATCH datagrams; events go to `e` (NULL: not recorded — tests).
 * Returns the number of datagrams read (0: none waiting) or -errno. A
 * query whose refusal cannot be recorded is still refused.
 */
int dnsstub_serve(int fd, struct audit_emitter *e);
