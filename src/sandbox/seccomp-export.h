/*
 * seccomp-export.h — a libseccomp filter as a plan's BPF program. Only for
 * code that links libseccomp (seccomp-gen, ringfence-oci); the ringfence
 * binary copies a program generated at build time instead.
 */
#pragma once

#include <seccomp.h>

#include "sandbox/plan.h"
#include "shared/error.h"

/*
 * seccomp_export — export `ctx` as BPF into out->filter (malloc'd, the
 * caller's; a previous one is freed) and out->len. 0, or -errno with err
 * set (a program empty or longer than BPF_MAXINSNS included).
 */
int seccomp_export(scmp_filter_ctx ctx, struct rf_seccomp_plan *out, struct rf_error *err);
