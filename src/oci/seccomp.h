/*
 * seccomp.h — a container's own seccomp profile as a BPF program (only in
 * ringfence-oci, which links libseccomp).
 */
#pragma once

#include "oci/spec.h"
#include "sandbox/plan.h"
#include "shared/error.h"

/*
 * oci_seccomp_build — compile profile `sc` (present) into `out` (filter
 * malloc'd, the caller's): its default action and rules for the native
 * ABI, argument comparisons as given (one argument compared twice: a rule
 * per comparison). Refuses (-EOPNOTSUPP, err naming the key) actions a run
 * cannot serve (NOTIFY, TRACE) and flags other than TSYNC, SPEC_ALLOW and
 * LOG; syscall names libseccomp does not know are skipped. 0 or -errno.
 */
int oci_seccomp_build(const struct oci_seccomp *sc, struct rf_seccomp_plan *out,
                      struct rf_error *err);
