/*
 * trustfiles.h — the run's TLS trust files in one sealed memfd (issue 15).
 *
 * A run with TLS termination gets three files in /run/ringfence (the host's
 * roots + the run CA, the run CA alone, and the Java store). They are made
 * by the supervisor while init builds the run's root (tls/trustmake.h), so
 * they cannot be in the plan: they reach init as one memfd (MSG_TRUST),
 * written by the supervisor and sealed against writes, growth and
 * shrinking.
 * Its layout:
 *
 *      "RFTRUST1" | u64 len[TRUST_FILES] (little-endian) | file 0 | file 1 | file 2
 *
 * with nothing after the last file. A file of length 0 is absent (only the
 * Java store may be). trustfiles_parse() is pure (no allocation, no
 * syscall) and fuzzed by tests/fuzz/fuzz_trustfiles.c.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

enum {
        TRUST_BUNDLE = 0, /* PEM: the host's roots + the run CA */
        TRUST_CA,         /* PEM: the run CA alone */
        TRUST_JAVA,       /* PKCS#12: the host's roots + the run CA; may be absent */
        TRUST_FILES,
};

#define TRUSTFILES_MAGIC "RFTRUST1"
#define TRUSTFILES_HDR   (8 + 8 * TRUST_FILES)
/* A file's hard bound, whatever the caller's: the plan's (PLAN_TLS_FILE_MAX). */
#define TRUSTFILES_FILE_MAX ((size_t)16 << 20)

struct trustfiles {
        const unsigned char *data[TRUST_FILES]; /* borrowed from the input; NULL if absent */
        size_t len[TRUST_FILES];
};

/*
 * trustfiles_header — write the header for files of len[] bytes into
 * out[TRUSTFILES_HDR]. Pure.
 */
void trustfiles_header(const size_t len[TRUST_FILES], unsigned char out[TRUSTFILES_HDR]);

/*
 * trustfiles_parse — split buf[0..n) into its files, each at most `bound`
 * bytes (and TRUSTFILES_FILE_MAX). 0 with *out filled (borrowing buf);
 * -EBADMSG for a bad magic, a short buffer, bytes left over or a missing
 * bundle or CA; -EFBIG for a file over the bound. Pure.
 */
int trustfiles_parse(const void *buf, size_t n, size_t bound, struct trustfiles *out);
