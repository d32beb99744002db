/*
 * hostuid.h — a per-run unprivileged host uid for runs started by root.
 *
 * As root, a run never runs as host uid 0: its user namespace maps the
 * workspace owner's uid (as seen inside) to a host uid allocated for this
 * run alone from [RF_RUN_UID_BASE, RF_RUN_UID_BASE + RF_RUN_UID_COUNT).
 * The allocation is host-wide — every ringfence instance, whatever its
 * state dir, takes the same lock files under RF_RUN_UID_LOCK_DIR — and
 * lasts as long as the lock fd is held (the supervisor holds it until the
 * run is gone; a crash releases it with the process).
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "shared/error.h"

#define RF_RUN_UID_LOCK_DIR "/run/ringfence/uids"

/*
 * hostuid_root — whether this process is root of the host: uid 0 in the
 * initial user namespace. Root of a user namespace an engine made (rootless
 * Podman's) owns no host uid beyond its own: a run there maps its user to
 * that uid, as an unprivileged caller's does, and allocates none.
 */
bool hostuid_root(void);

/*
 * hostuid_allocate — pick a free uid in the configured range, lock it, and
 * return it in *uid with the lock fd in *lock_fd (caller closes it when the
 * run is over). Root only. Returns 0, or -errno with `err` set (-EBUSY: the
 * range is exhausted). The uid is not yet vetted: see hostuid_vet.
 */
int hostuid_allocate(uid_t *uid, int *lock_fd, struct rf_error *err);

/*
 * hostuid_vet — refuse a run uid that an account, or a run gid (the same
 * number) that a group, uses after all (any NSS source: the range is the
 * operator's to keep free), and refuse when a source fails to answer. A
 * lookup that misses costs ~0.5 ms here (NSS loads its modules), so the
 * supervisor calls this while init builds the root, before it lets the
 * command start. Returns 0, -EEXIST with `err` naming the account or
 * group, or the lookup's -errno.
 */
int hostuid_vet(uid_t uid, gid_t gid, struct rf_error *err);
