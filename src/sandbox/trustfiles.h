/*
 * trustfiles.h — how the run's TLS trust files reach init (issue 15).
 *
 * A run with TLS termination gets three files in its root (the host's
 * roots + the run CA, the run CA alone, and the Java store). They are made
 * by the supervisor while init builds the run's root (tls/trustmake.h), so
 * they cannot be in the plan. Most of their bytes are the host's and stand
 * in read-only files already (the trust cache's entries: the host's bundle
 * as read, the JVM store's host bags), so init copies those straight from
 * them: it gets up to two such sources (MSG_TRUST with value = the source's
 * number) and then one memfd, written by the
 * supervisor and sealed against writes, growth and shrinking, that holds
 * what is the run's own and says how each file is put together
 * (MSG_TRUST, value 0). Its layout:
 *
 *      "RFTRUST3" | per file: u64 pre, src, src_off, src_len, post
 *                 | file 0's pre bytes | file 0's post bytes | file 1's ... | file 2's post
 *
 * (integers little-endian): each file is its `pre` bytes from the memfd,
 * then src_len bytes of source `src` from src_off (src 0: none), then its
 * `post` bytes; nothing after file 2's post bytes. A file of length 0 is
 * absent (only the Java store may be). The Java store's MAC is in its post
 * bytes already: the run CA's keeper made it (tls/trustmake.c), beside the
 * supervisor's and init's work, so init only copies (before: init hashed
 * the ~170 KB store on the run's start path). trustfiles_parse() is pure
 * (no allocation, no syscall) and fuzzed by tests/fuzz/fuzz_trustfiles.c.
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

/* The read-only files a trust file may take bytes from (0: none). */
enum {
        TRUST_SRC_NONE = 0,
        TRUST_SRC_BUNDLE, /* the host's bundle as read */
        TRUST_SRC_JVM,    /* the JVM store's host part (its bags at some offset) */
        TRUST_SOURCES,
};

#define TRUSTFILES_MAGIC "RFTRUST3"
#define TRUSTFILES_HDR   (8 + 5 * 8 * TRUST_FILES)
/* A file's hard bound, whatever the caller's: the plan's (PLAN_TLS_FILE_MAX). */
#define TRUSTFILES_FILE_MAX ((size_t)16 << 20)
/* A source offset's bound (a cache entry's header is a few dozen bytes). */
#define TRUSTFILES_SRC_OFF_MAX ((uint64_t)1 << 20)

/* How one file is put together. */
struct trustfile {
        size_t len;            /* pre + src_len + post; 0: absent */
        uint64_t pre_off, pre; /* its first bytes: the memfd's [pre_off, +pre) */
        unsigned src;          /* then TRUST_SRC_*'s [src_off, +src_len) */
        uint64_t src_off, src_len;
        uint64_t post_off, post; /* then the memfd's [post_off, +post) */
};

struct trustfiles {
        struct trustfile f[TRUST_FILES];
};

/*
 * trustfiles_header — write the header for the files t->f[] (their pre,
 * src, src_off, src_len and post; the offsets and len are not read) into
 * out[TRUSTFILES_HDR]. The memfd's body is then each
 * file's pre bytes and post bytes, file by file. Pure.
 */
void trustfiles_header(const struct trustfiles *t, unsigned char out[TRUSTFILES_HDR]);

/*
 * trustfiles_parse — the header hdr[0, TRUSTFILES_HDR) of a memfd of n
 * bytes: how each file is put together, each at most `bound` bytes (and
 * TRUSTFILES_FILE_MAX). 0 with *out filled (the memfd offsets in it lie
 * within n); -EBADMSG for a bad magic, n shorter than the header or not
 * exactly the header and the inline bytes, a source number out of range,
 * a source range on a file without a source, a source offset over
 * TRUSTFILES_SRC_OFF_MAX, or a missing bundle or CA; -EFBIG for a file over the bound. Whether a
 * source holds its range is the caller's to check (init: its copy ends early). Pure.
 */
int trustfiles_parse(const unsigned char hdr[TRUSTFILES_HDR], uint64_t n, size_t bound,
                     struct trustfiles *out);
