/*
 * trustmake.h — a run's CA and TLS trust files, made by the supervisor while
 * init builds the run's root (docs/TLS.md, "Made off the start path").
 *
 * A run with TLS termination needs, before its command starts: the run CA
 * (its certificate in the run's trust files, its keys for the egress
 * processes) and, for the egress processes that start later, snapshots of
 * what they will load and read (the TLS module, the host's roots, the
 * upstream CA file) as they were before the run's command existed.
 * trust_make does it all without OpenSSL (the CA is nettle's: runca.h; the
 * files are trustfmt's) and keeps what depends only on the host's CA bundle
 * — the module as checked, the bundle as read, the bundle's check and the
 * JVM store's host part — in a cache in the state dir, named by the source
 * file's identity, so that a run pays for its own CA and the copies the
 * kernel makes, not for the host's 140-odd roots.
 *
 * Called by run_tls_start (or run_tls_finish: supervisor/run_tls.c), in the
 * supervisor, right after the run's init is cloned.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The cache's directory in the state dir, and its entries' name prefixes
 * (each format's version in it: a new layout never reads an old entry);
 * the rest of a name is the source file's identity. */
#define TRUST_CACHE_DIR    "tls-cache"
#define TRUST_CACHE_MODULE "module-v1-" /* the TLS module as checked (its ABI in the name) */
#define TRUST_CACHE_BUNDLE "bundle-v1-" /* the host's bundle, byte for byte */
#define TRUST_CACHE_JVM    "jvm-v2-"    /* TRUST_CACHE_JVM_HDR, then the bundle's PKCS#12 bags */
/* A JVM entry's header: the magic, the store MAC's salt and its key (the
 * KDF of the public password "changeit" and that salt: no secret). */
#define TRUST_CACHE_JVM_MAGIC "RFJVM2\0\0"
#define TRUST_CACHE_JVM_HDR   (8 + 8 + 32)

/* What a run's trust is made from. */
struct trust_job {
        const char *const *hosts;  /* the names the run CA may sign for */
        size_t n_hosts;            /* 1..RF_TLS_MAX_HOSTS */
        int bundle;                /* the host's CA bundle, open (regular, bounded) */
        int upstream;              /* network.upstream_ca, open, or -1 */
        const char *upstream_path; /* its path, for messages (NULL with no file) */
        uint64_t lifetime_s;       /* the CA's validity */
        bool java;                 /* make the JVM store too */
        size_t bound;              /* each trust file's size bound */
        int cache;                 /* the cache directory (trust_cache_open; borrowed),
                                    * or -1: none */
        /* called once the cache's entries are read or written, before the
         * upstream CA file (the caller's) is: < 0 fails the job (the
         * keeper gives up the cache here), or NULL */
        int (*cache_done)(void *ctx);
        void *ctx;
};

/*
 * trust_cache_open — the state dir's trust cache (TRUST_CACHE_DIR, made if
 * missing): an fd of the directory, or -1 where there is none to use (no
 * state dir, not a directory of this uid that only it may write). The
 * keeper opens it before it confines itself to it.
 */
int trust_cache_open(const char *state_dir);

/* What was made (-1 where none), all read-only: the trust files and the
 * upstream CA file's snapshot are sealed memfds; the module and the bundle
 * are the cache's entries (files nothing writes once they are linked: an
 * egress process snapshots them before it reads them) or sealed memfds. */
struct trust_made {
        int files;     /* the run's own part of its trust files and their layout
                        * (sandbox/trustfiles.h: the memfd), for init */
        int jvm;       /* the JVM store's host part (source TRUST_SRC_JVM), for init;
                        * -1 without a store; `bundle` is source TRUST_SRC_BUNDLE */
        int module;    /* the TLS module as checked, for the egress processes */
        int bundle;    /* the host's roots as read, for them */
        int upstream;  /* network.upstream_ca as read, or -1 */
        size_t ca_len; /* the CA's export, in export[0, ca_len) */
        bool cached;   /* every part that can be cached came from the cache */
};

/*
 * trust_make — the job's snapshots, the run CA and its trust files. The
 * CA's export (tlsterm.h's layout: both private keys) goes into
 * export[0, export_max) — secret memory, the caller's to wipe;
 * TRUST_EXPORT_BOUND(hosts) always suffices. 0 with *out filled (the
 * caller closes its fds), or -errno with why[why_len] saying what failed
 * ("cannot read the host's CA bundle …: no certificate in it"), nothing
 * left open. A cache that cannot be read or written costs time, never the
 * run: the host's part is then made anew.
 */
int trust_make(const struct trust_job *j, unsigned char *export, size_t export_max,
               struct trust_made *out, char *why, size_t why_len);

/* The export's size bound for hosts of these total bytes (names only):
 * the keys, the certificate with one constraint per name, the names. */
#define TRUST_EXPORT_BOUND(n_hosts, name_bytes) ((size_t)2048 + 2 * (name_bytes) + 16 * (n_hosts))
