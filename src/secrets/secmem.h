/*
 * secmem.h — memory for secret values.
 *
 * Every secret value ringfence holds lives in memory from here: its own
 * mapping, locked (never swapped), excluded from core dumps
 * (MADV_DONTDUMP) and wiped in any fork (MADV_WIPEONFORK: the run's
 * egress process, a provider command and the run's init are forks of the
 * supervisor and must not inherit values), zeroed before it is unmapped.
 * A value is delivered to a run over an fd (grant.c), never by fork.
 */
#pragma once

#include <stddef.h>

/*
 * secmem_alloc — `len` (> 0) zeroed bytes of secret memory. Returns NULL
 * with errno set (ENOMEM, or EPERM/EAGAIN when the memory cannot be
 * locked: RLIMIT_MEMLOCK) — callers refuse rather than hold a value in
 * ordinary memory.
 */
void *secmem_alloc(size_t len);

/* secmem_free — wipe and unmap what secmem_alloc returned. Accepts NULL; returns NULL. */
void *secmem_free(void *p);

/* secmem_size — the usable size of an allocation (≥ the len asked for). */
size_t secmem_size(const void *p);

/* secmem_harden_process — no core dumps and no ptrace/proc access by the
 * same uid for this process (PR_SET_DUMPABLE 0, RLIMIT_CORE 0). 0 or -errno. */
int secmem_harden_process(void);
