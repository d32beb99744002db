/*
 * helper.h — the TLS helper's contract with the run that spawns it.
 *
 * ringfence-tls-helper (helper.c) makes a run's CA and trust files while the
 * run starts: spawned by run_tls_begin (supervisor/run_tls.c) through the
 * checked fd of its file (tls-load.h, rf_tls_helper_open), with an empty
 * environment, its job in argv and a SOCK_SEQPACKET socket at HELPER_FD; it
 * answers with one message on that socket and exits. A binary of its own,
 * so the ringfence binary carries no crypto it does not use and links
 * nettle (its only library besides libc) nowhere else.
 *
 * argv: ringfence-tls-helper RUN_TLS_HELPER_ARG PPID LIFETIME_S JAVA BOUND
 * UPSTREAM HOST... (UPSTREAM "-": none; at most RF_TLS_MAX_HOSTS hosts).
 * The answer: struct tls_result, then the CA's export (ca_len bytes, the
 * layout of tlsterm.h's ca_export) when err is 0, with HELPER_FDS fds
 * attached in the order of HF_*.
 */
#pragma once

#include <stdint.h>

#include "shared/error.h"

/* argv[1]: anything else (a person typing the helper's name) exits 125 */
#define RUN_TLS_HELPER_ARG "--internal-tls-helper"
/* The helper's fd for its result (run_tls_begin puts its socket there). */
#define HELPER_FD 3

/* The helper's answer: err 0 and the CA's export (ca_len bytes) after it,
 * HELPER_FDS fds attached (HF_*); or err < 0 and why. */
struct tls_result {
        int32_t err;
        uint32_t ca_len;
        uint32_t upstream; /* HF_UPSTREAM is a snapshot (else a copy of HF_FILES) */
        char why[RF_ERROR_MSG_MAX];
};

/* The fds the helper sends, in this order. */
enum {
        HF_FILES,    /* the run's trust files (sandbox/trustfiles.h), for init */
        HF_MODULE,   /* the TLS module, for the egress processes */
        HF_BUNDLE,   /* the host's roots as read, for the egress processes */
        HF_UPSTREAM, /* network.upstream_ca as read, for them too */
        HELPER_FDS,
};
