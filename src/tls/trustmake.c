/*
 * trustmake.c — a run's CA and TLS trust files (trustmake.h; docs/TLS.md,
 * "Made off the start path").
 *
 * Design: what depends only on files of the host is made once and kept in
 * the state dir's TRUST_CACHE_DIR, each entry named by its source's
 * identity (device, inode, size, mtime and ctime to the nanosecond: any
 * change of the file makes a new name): the TLS module as checked (its
 * version, the ABI of this binary in the name), the host's bundle as read,
 * and the JVM store's host part (the bundle's ~145 certificates as PKCS#12
 * bags, with the store MAC's salt and key) — whose making is also the
 * bundle's check as the egress process's trust_load will read it. A run
 * then pays, in its CA's keeper, for its CA (nettle's: runca.c), one HMAC
 * over the store (read where it lies: the cache file's bags are never
 * copied into memory) and one small sealed memfd of the run's own bytes;
 * init copies the rest from the cache's files (sandbox/trustfiles.h).
 * The module and the bundle go to the egress processes as the cache's
 * files; each one snapshots them before it reads them (egress.c). Without
 * a cache (no state dir) everything is made per run, into sealed memfds.
 *
 * Threats: the inputs are the host's bundle (root's), the upstream CA file
 * (the caller's: bounded, checked by the fuzzed trust_certs_load) and the
 * cache. The cache lives in the state dir, which no run can reach (a --rw
 * that would expose it is refused: plan.c); an entry is used only when it
 * is a regular file of this uid that nobody else may write, in a directory
 * of the same kind, and is only ever written whole (O_TMPFILE, then linked
 * under its name). The CA's keys exist in nettle's key objects (wiped,
 * runca.c) and in the caller's export buffer only.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/trustfiles.h"
#include "shared/error.h"
#include "shared/hmac.h"
#include "shared/macro.h"
#include "shared/memfd.h"
#include "tls/runca.h"
#include "tls/tls-load.h"
#include "tls/trustfmt.h"
#include "tls/tlsterm.h"
#include "tls/trustmake.h"

/* The JVM store's password: public (JAVA_TOOL_OPTIONS names it, docs/TLS.md);
 * its MAC guards against damage, not against anyone. */
#define JVM_STORE_PASSWORD "changeit"

/* Entries kept per kind (the newest), and how many cache_trim looks at. */
#define TRUST_CACHE_KEEP 4
#define TRUST_CACHE_SCAN 16
/* How long ago a source must have changed to be cached (settled). */
#define TRUST_CACHE_SETTLE_S 2

static bool same_file(const struct stat *a, const struct stat *b)
{
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
               a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
               a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* Ours alone: owned by this euid, neither group- nor world-writable. */
static bool ours(const struct stat *st)
{
        return st->st_uid == geteuid() && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* The cache entry's name for the source file whose identity is st. */
static void cache_name(const char *prefix, const struct stat *st, char *name, size_t size)
{
        snprintf(name, size,
                 "%s%" PRIx64 "-%" PRIx64 "-%" PRIx64 "-%" PRId64 ".%09ld-%" PRId64 ".%09ld",
                 prefix, (uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
                 (int64_t)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec,
                 (int64_t)st->st_ctim.tv_sec, (long)st->st_ctim.tv_nsec);
}

int trust_cache_open(const char *state_dir)
{
        if (!state_dir)
                return -1;
        _cleanup_close_ int sd = open(state_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (sd < 0)
                return -1;
        (void)mkdirat(sd, TRUST_CACHE_DIR, 0700);
        int fd = openat(sd, TRUST_CACHE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && (fstat(fd, &st) < 0 || !ours(&st))) {
                close(fd);
                return -1;
        }
        return fd;
}

/* The entry `name` when the cache has a usable one: an fd and its size
 * (at least min, at most max bytes), or -1. */
static int cache_get(int dir, const char *name, size_t min, size_t max, size_t *len)
{
        struct stat st;
        if (dir < 0)
                return -1;
        int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return -1;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !ours(&st) || st.st_nlink != 1 ||
            (uint64_t)st.st_size < min || (uint64_t)st.st_size > max) {
                close(fd);
                return -1;
        }
        *len = (size_t)st.st_size;
        return fd;
}

/* The kind's entries beyond the TRUST_CACHE_KEEP newest (by ctime: when
 * they were linked) removed, `name` (the newest) kept; the kind is the
 * prefix up to its first '-', so that the entries of an earlier layout go
 * too. Several entries of a kind serve hosts where two builds share a
 * state dir (an installed ringfence and a build tree's), each with a
 * module of its own; the bound keeps a host whose bundle is replaced now
 * and then from collecting them. Best effort. */
static void cache_trim(int dir, const char *prefix, const char *name)
{
        struct old {
                char name[256];
                struct timespec t;
        } e[TRUST_CACHE_SCAN];
        size_t n = 0, kind = strcspn(prefix, "-") + 1;
        int dd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = dd >= 0 ? fdopendir(dd) : NULL;
        if (!d) {
                if (dd >= 0)
                        close(dd);
                return;
        }
        for (struct dirent *de; (de = readdir(d));) {
                struct stat st;
                if (strncmp(de->d_name, prefix, kind) != 0 || !strcmp(de->d_name, name) ||
                    strlen(de->d_name) >= sizeof e[0].name ||
                    fstatat(dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (n == TRUST_CACHE_SCAN) {
                        (void)unlinkat(dir, de->d_name, 0); /* more than ever kept */
                        continue;
                }
                snprintf(e[n].name, sizeof e[n].name, "%s", de->d_name);
                e[n++].t = st.st_ctim;
        }
        closedir(d);
        /* the newest first; all but TRUST_CACHE_KEEP - 1 of them go */
        for (size_t i = 1; i < n; i++)
                for (size_t k = i; k > 0 && (e[k].t.tv_sec > e[k - 1].t.tv_sec ||
                                             (e[k].t.tv_sec == e[k - 1].t.tv_sec &&
                                              e[k].t.tv_nsec > e[k - 1].t.tv_nsec));
                     k--) {
                        struct old x = e[k];
                        e[k] = e[k - 1];
                        e[k - 1] = x;
                }
        for (size_t i = TRUST_CACHE_KEEP - 1; i < n; i++)
                (void)unlinkat(dir, e[i].name, 0);
}

/* A new entry: tmp (an O_TMPFILE of the cache, written whole) linked as
 * `name` — a name taken by an entry cache_get would not use is replaced
 * (another run's, made meanwhile, is as good as this one) — and the
 * kind's older entries trimmed (cache_trim).
 * 0 or -errno (tmp is then still a good file, only not in the cache). */
static int cache_link(int dir, int tmp, const char *prefix, const char *name)
{
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", tmp);
        int r = 0;
        if (linkat(AT_FDCWD, proc, dir, name, AT_SYMLINK_FOLLOW) < 0) {
                r = negative_errno();
                if (r == -EEXIST && unlinkat(dir, name, 0) == 0)
                        r = linkat(AT_FDCWD, proc, dir, name, AT_SYMLINK_FOLLOW) < 0
                                    ? negative_errno()
                                    : 0;
        }
        if (r < 0)
                return r;
        cache_trim(dir, prefix, name);
        return 0;
}

/* A file to write an entry into: an O_TMPFILE of the cache, else (no
 * cache) a memfd. An fd or -errno; *cached whether it is the former. */
static int entry_new(int dir, bool *cached)
{
        int fd = dir >= 0 ? openat(dir, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600) : -1;
        *cached = fd >= 0;
        return fd >= 0 ? fd : memfd_new("ringfence-trust-part");
}

/* Was the source file last changed long enough ago to be cached? Its
 * identity names the entry, and a file rewritten within one tick of the
 * filesystem's clock (same size) keeps its identity: an entry is made
 * only of a file whose ctime lies TRUST_CACHE_SETTLE_S in the past, so a
 * later rewrite cannot carry the same name (git's "racily clean"). */
static bool settled(const struct stat *st)
{
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        return st->st_ctim.tv_sec + TRUST_CACHE_SETTLE_S < now.tv_sec;
}

/* A written entry fd (entry_new's) finished: linked into the cache as
 * `name` when it is the cache's and `keep` says so, else left this run's
 * alone (an unlinked file, or a memfd, sealed); either way handed back
 * read-only, so that no process it reaches can write what later runs
 * trust. An fd (fd itself is consumed) or -errno. */
static int entry_finish(int dir, int fd, bool in_cache, bool keep, const char *prefix,
                        const char *name)
{
        if (!in_cache) {
                int r = memfd_seal(fd);
                if (r < 0) {
                        close(fd);
                        return r;
                }
                return fd;
        }
        if (keep)
                (void)cache_link(dir, fd, prefix, name); /* else unlinked: this run's alone */
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        int ro = open(proc, O_RDONLY | O_CLOEXEC);
        int r = ro < 0 ? negative_errno() : ro;
        close(fd);
        return r;
}

/* The entry written (head[0, head_len), then len bytes of src from offset
 * 0 when src >= 0, else data[0, len)), then put in the cache as `name`
 * when it can be and `keep` says so (entry_finish). An fd to read it from,
 * or -errno. */
static int entry_put(int dir, bool keep, const char *prefix, const char *name, const void *head,
                     size_t head_len, int src, const void *data, size_t len)
{
        bool in_cache = false;
        int fd = entry_new(dir, &in_cache);
        if (fd < 0)
                return fd;
        int r = fd_write_all(fd, head, head_len);
        if (r >= 0)
                r = src >= 0 ? fd_copy_all(src, 0, fd, len) : fd_write_all(fd, data, len);
        if (r < 0) {
                close(fd);
                return r;
        }
        return entry_finish(dir, fd, in_cache, keep, prefix, name);
}

/* fd's bytes (a regular file or a memfd of at most max bytes), read
 * into *p (malloc'ed, NUL-terminated: the caller frees it) — read, not
 * mapped, so that a file cut short meanwhile is a short read, not a
 * SIGBUS. 0 or -errno (-EFBIG over max, -EIO if it ends early). */
static int file_read(int fd, size_t max, char **p, size_t *n)
{
        struct stat st;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if ((uint64_t)st.st_size > max)
                return -EFBIG;
        *n = (size_t)st.st_size;
        if (!(*p = malloc(*n + 1)))
                return -ENOMEM;
        for (size_t got = 0; got < *n;) {
                ssize_t k = pread(fd, *p + got, *n - got, (off_t)got);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        int r = k < 0 ? negative_errno() : -EIO;
                        free(*p);
                        *p = NULL;
                        return r;
                }
                got += (size_t)k;
        }
        (*p)[*n] = '\0';
        return 0;
}

/* A PEM file's certificate blocks checked as trust_load will read them;
 * with bags (not NULL), the bundle's host bags made from them too. */
static int check_certs(int fd, unsigned char **bags, size_t *bags_len)
{
        _cleanup_free_ char *text = NULL;
        size_t n = 0;
        struct trust_certs c = {0};
        int r = file_read(fd, RF_TLS_BUNDLE_MAX, &text, &n);
        if (r < 0)
                return r;
        r = trust_certs_load(text, n, &c);
        if (r >= 0 && bags)
                r = trust_p12_bags(&c, bags, bags_len);
        trust_certs_free(&c);
        return r < 0 ? r : 0;
}

/* The TLS module as checked, for the egress processes: the cache's entry
 * for the module file as it is (its identity and this binary's ABI in the
 * name), else the file snapshotted and its version checked. An fd or
 * -errno. */
static int module_get(int dir, bool *cached)
{
        char path[256] = "ringfence-tls.so", name[256];
        struct stat st;
        size_t len = 0;
        _cleanup_close_ int src = rf_tls_module_open(path, sizeof path);
        if (src < 0)
                return src;
        if (fstat(src, &st) < 0)
                return negative_errno();
        if ((uint64_t)st.st_size > RF_TLS_MODULE_MAX)
                return -EFBIG;
        cache_name(TRUST_CACHE_MODULE RF_TLS_VTABLE_SYMBOL "-", &st, name, sizeof name);
        int fd = cache_get(dir, name, (size_t)st.st_size, (size_t)st.st_size, &len);
        if (fd >= 0)
                return fd;
        *cached = false;
        _cleanup_close_ int snap = rf_tls_snapshot(src, RF_TLS_MODULE_MAX, "ringfence-tls.so");
        if (snap < 0)
                return snap;
        int r = rf_tls_module_version(snap);
        if (r < 0)
                return r;
        /* this run loads its sealed snapshot; the cache gets a copy for
         * the next runs, if the file stood still while it was read */
        struct stat after;
        size_t size = 0;
        if (dir >= 0 && memfd_sealed_size(snap, RF_TLS_MODULE_MAX, &size) == 0 &&
            fstat(src, &after) == 0 && same_file(&st, &after) && size == (size_t)st.st_size &&
            settled(&st) &&
            (fd = entry_put(dir, true, TRUST_CACHE_MODULE, name, NULL, 0, snap, NULL, size)) >= 0)
                close(fd);
        return TAKE_FD(snap);
}

/* The host's bundle as read, for the egress processes and the run's own
 * bundle: the cache's entry for the file as it is, else a copy, made with
 * the file's identity the same before and after (a bundle that changes
 * meanwhile, an update of the host's certificates, is read again, at most
 * three times). An fd, its identity in *st, or -errno. */
static int bundle_get(int dir, int src, struct stat *st, bool *cached)
{
        char name[256];
        size_t len = 0;
        for (int tries = 0; tries < 3; tries++) {
                struct stat after;
                if (fstat(src, st) < 0)
                        return negative_errno();
                if ((uint64_t)st->st_size > RF_TLS_BUNDLE_MAX)
                        return -EFBIG;
                cache_name(TRUST_CACHE_BUNDLE, st, name, sizeof name);
                int fd = cache_get(dir, name, (size_t)st->st_size, (size_t)st->st_size, &len);
                if (fd >= 0)
                        return fd;
                *cached = false;
                bool in_cache = false;
                if ((fd = entry_new(dir, &in_cache)) < 0)
                        return fd;
                int r = fd_copy_all(src, 0, fd, (size_t)st->st_size);
                /* the same file before and after, or read again (a copy
                 * that failed because the file shrank meanwhile too) */
                if (fstat(src, &after) < 0) {
                        r = negative_errno();
                        close(fd);
                        return r;
                }
                if (same_file(st, &after)) {
                        if (r < 0) {
                                close(fd);
                                return r;
                        }
                        return entry_finish(dir, fd, in_cache, settled(st), TRUST_CACHE_BUNDLE,
                                            name);
                }
                close(fd);
        }
        return -EAGAIN;
}

/* The JVM store's host part for the bundle (identity st, bytes at bundle):
 * the cache's entry, else the bundle checked as trust_load will read it
 * and its bags made, with a new salt and its MAC key. An fd whose bags
 * start at TRUST_CACHE_JVM_HDR (their size in *bags_len), the salt and key
 * in salt[] and key[], or -errno (-EBADMSG: the bundle holds no
 * certificate, or a malformed one). This entry is also what says the
 * bundle was checked. */
static int jvm_get(int dir, int bundle, const struct stat *st, size_t *bags_len,
                   unsigned char salt[TRUST_P12_SALT_LEN], unsigned char key[TRUST_P12_MAC_LEN],
                   bool *cached)
{
        char name[256];
        unsigned char hdr[TRUST_CACHE_JVM_HDR];
        size_t len = 0;
        cache_name(TRUST_CACHE_JVM, st, name, sizeof name);
        int fd = cache_get(dir, name, TRUST_CACHE_JVM_HDR + 1,
                           TRUST_CACHE_JVM_HDR + TRUST_P12_DER_MAX, &len);
        if (fd >= 0) {
                if (pread(fd, hdr, sizeof hdr, 0) == (ssize_t)sizeof hdr &&
                    !memcmp(hdr, TRUST_CACHE_JVM_MAGIC, 8)) {
                        memcpy(salt, hdr + 8, TRUST_P12_SALT_LEN);
                        memcpy(key, hdr + 16, TRUST_P12_MAC_LEN);
                        *bags_len = len - TRUST_CACHE_JVM_HDR;
                        return fd;
                }
                close(fd); /* not an entry of this layout: made anew */
        }
        *cached = false;
        _cleanup_free_ unsigned char *bags = NULL;
        int r = check_certs(bundle, &bags, bags_len);
        if (r < 0)
                return r;
        if (getrandom(salt, TRUST_P12_SALT_LEN, 0) != TRUST_P12_SALT_LEN)
                return -EIO;
        if ((r = runca_p12_key(JVM_STORE_PASSWORD, salt, TRUST_P12_SALT_LEN, TRUST_P12_ITER, key)) <
            0)
                return r;
        memcpy(hdr, TRUST_CACHE_JVM_MAGIC, 8);
        memcpy(hdr + 8, salt, TRUST_P12_SALT_LEN);
        memcpy(hdr + 16, key, TRUST_P12_MAC_LEN);
        return entry_put(dir, settled(st), TRUST_CACHE_JVM, name, hdr, sizeof hdr, -1, bags,
                         *bags_len);
}

/* The run's own part of its trust files and their layout into one new
 * memfd, sealed (trustfiles.h): the bundle is the host's text (source
 * TRUST_SRC_BUNDLE) + btail (which ends in the CA's PEM), the CA file the
 * PEM, the JVM
 * store (when head is not NULL) head + the host bags (source TRUST_SRC_JVM
 * at bags_off) + tail (its MacData, the MAC in it). Init copies the host's
 * parts from their sources: they are never copied here. */
_Static_assert(TRUST_P12_MAC_LEN == HMAC_SHA256_LEN, "the store's MAC is an HMAC-SHA256");
struct files_in {
        size_t bundle_len;
        const char *btail, *pem;
        size_t btail_len, pem_len;
        const unsigned char *head, *tail;
        size_t head_len, tail_len;
        size_t bags_off, bags_len;
};

static int files_memfd(const struct files_in *in)
{
        unsigned char hdr[TRUSTFILES_HDR];
        struct trustfiles t = {.f = {
                                       [TRUST_BUNDLE] = {.src = TRUST_SRC_BUNDLE,
                                                         .src_len = in->bundle_len,
                                                         .post = in->btail_len},
                                       [TRUST_CA] = {.pre = in->pem_len},
                               }};
        if (in->head) {
                t.f[TRUST_JAVA] = (struct trustfile){.pre = in->head_len,
                                                     .src = TRUST_SRC_JVM,
                                                     .src_off = in->bags_off,
                                                     .src_len = in->bags_len,
                                                     .post = in->tail_len};
        }
        int fd = memfd_new("ringfence-trust");
        if (fd < 0)
                return fd;
        trustfiles_header(&t, hdr);
        int r = fd_write_all(fd, hdr, sizeof hdr);
        if (r >= 0)
                r = fd_write_all(fd, in->btail, in->btail_len);
        if (r >= 0)
                r = fd_write_all(fd, in->pem, in->pem_len);
        if (r >= 0 && in->head) {
                r = fd_write_all(fd, in->head, in->head_len);
                if (r >= 0)
                        r = fd_write_all(fd, in->tail, in->tail_len);
        }
        if (r >= 0)
                r = memfd_seal(fd);
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

/* What the run's trust needs besides the host's parts: the CA (export),
 * the files' memfd (*files). */
struct host_parts {
        int bundle;
        size_t blen;
        int jvm;
        size_t bags_len;
        unsigned char salt[TRUST_P12_SALT_LEN], key[TRUST_P12_MAC_LEN];
};

static int make_files(const struct trust_job *j, const struct host_parts *h, unsigned char *export,
                      size_t export_max, size_t *ca_len, int *files, char *why, size_t why_len)
{
        _cleanup_free_ unsigned char *der = NULL, *head = NULL;
        _cleanup_free_ char *pem = NULL, *btail = NULL;
        unsigned char mac[TRUST_P12_MAC_LEN] = {0}, tail[TRUST_P12_TAIL_MAX];
        size_t der_len = 0, pem_len = 0, btail_len = 0, head_len = 0, auth_at = 0, tail_len = 0;
        char last = '\n';
        int r;

        if (h->blen > 0 && pread(h->bundle, &last, 1, (off_t)h->blen - 1) != 1)
                return rf_why(why, why_len, -EIO, "cannot read the host's CA bundle");
        if ((r = runca_new(j->hosts, j->n_hosts, j->lifetime_s, time(NULL), &der, &der_len, export,
                           export_max, ca_len)) < 0 ||
            (r = trust_pem_cert(der, der_len, &pem, &pem_len)) < 0 ||
            (r = trust_bundle_tail(last != '\n', pem, pem_len, &btail, &btail_len)) < 0)
                return rf_why(why, why_len, r < 0 ? r : -EIO,
                              "cannot make the run's TLS authority: %s", strerror(-r));
        /* the store: its head (the run CA's bag last), the host's bags from
         * the cache, and the MacData, whose MAC is over both (head from
         * auth_at on, the bags where they lie), with the cached key: made
         * here, in the keeper, beside the supervisor's and init's work */
        if (j->java &&
            ((r = trust_p12_head(der, der_len, h->bags_len, &head, &head_len, &auth_at)) < 0 ||
             (r = hmac_sha256_ranges(h->key, sizeof h->key,
                                     (const struct fd_range[]){
                                             {.mem = head + auth_at, .len = head_len - auth_at},
                                             {h->jvm, TRUST_CACHE_JVM_HDR, h->bags_len, NULL},
                                     },
                                     2, mac)) < 0 ||
             (r = trust_p12_tail(h->salt, mac, tail, &tail_len)) < 0))
                return rf_why(why, why_len, r < 0 ? r : -EIO,
                              "cannot make the run's TLS authority: %s", strerror(-r));
        size_t java_len = j->java ? head_len + h->bags_len + tail_len : 0;
        if (h->blen + btail_len > j->bound || pem_len > j->bound || java_len > j->bound)
                return rf_why(why, why_len, -EFBIG, "the run's TLS trust files exceed %zu bytes",
                              j->bound);
        struct files_in in = {
                .bundle_len = h->blen,
                .btail = btail,
                .btail_len = btail_len,
                .pem = pem,
                .pem_len = pem_len,
                .head = j->java ? head : NULL,
                .head_len = head_len,
                .tail = tail,
                .tail_len = tail_len,
                .bags_off = TRUST_CACHE_JVM_HDR,
                .bags_len = h->bags_len,
        };
        if ((*files = files_memfd(&in)) < 0)
                return rf_why(why, why_len, *files < 0 ? *files : -EIO,
                              "cannot pass the run's TLS trust files: %s", strerror(-*files));
        return 0;
}

int trust_make(const struct trust_job *j, unsigned char *export, size_t export_max,
               struct trust_made *out, char *why, size_t why_len)
{
        _cleanup_close_ int module = -1, upstream = -1;
        int dir = j->cache;
        struct host_parts h = {.bundle = -1, .jvm = -1};
        struct stat st;
        bool cached = true;
        int r;

        *out = (struct trust_made){
                .files = -1, .module = -1, .bundle = -1, .jvm = -1, .upstream = -1};
        /* the module and the trust files as they are now (the run's command
         * does not exist yet): the egress processes load these, never the
         * paths again */
        if ((module = module_get(dir, &cached)) < 0) {
                char path[256] = "ringfence-tls.so";
                (void)rf_tls_module_path(path, sizeof path);
                r = module;
                return rf_why(why, why_len, r < 0 ? r : -EIO,
                              "the TLS module %s could not be loaded: %s", path,
                              r == -EPROTO ? "it is of another version" : strerror(-r));
        }
        r = h.bundle = bundle_get(dir, j->bundle, &st, &cached);
        if (r >= 0) {
                h.blen = (size_t)st.st_size;
                r = h.jvm = jvm_get(dir, h.bundle, &st, &h.bags_len, h.salt, h.key, &cached);
        }
        if (r >= 0 && j->cache_done && (r = j->cache_done(j->ctx)) < 0) {
                safe_close(h.bundle);
                safe_close(h.jvm);
                return rf_why(why, why_len, r, "cannot confine the run CA's keeper: %s",
                              strerror(-r));
        }
        if (r >= 0 && j->upstream >= 0 &&
            (r = upstream = rf_tls_snapshot(j->upstream, RF_TLS_BUNDLE_MAX, "upstream-ca")) >= 0)
                r = check_certs(upstream, NULL, NULL);
        if (r < 0) {
                safe_close(h.bundle);
                safe_close(h.jvm);
                return rf_why(why, why_len, r < 0 ? r : -EIO,
                              "cannot read the host's CA bundle " RF_TLS_HOST_BUNDLE "%s%s: %s",
                              j->upstream_path ? " or the upstream CA file " : "",
                              j->upstream_path ? j->upstream_path : "",
                              r == -EBADMSG  ? "no certificate in it"
                              : r == -EFBIG  ? "too large"
                              : r == -EINVAL ? "not a regular file"
                              : r == -EAGAIN ? "it kept changing while it was read"
                                             : strerror(-r));
        }
        r = make_files(j, &h, export, export_max, &out->ca_len, &out->files, why, why_len);
        if (r < 0) {
                safe_close(h.jvm);
                safe_close(h.bundle);
                return r;
        }
        out->module = TAKE_FD(module);
        out->bundle = h.bundle;
        if (j->java)
                out->jvm = h.jvm;
        else
                safe_close(h.jvm);
        out->upstream = TAKE_FD(upstream);
        out->cached = cached;
        return 0;
}
