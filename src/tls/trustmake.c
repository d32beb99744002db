/*
 * trustmake.c — a run's CA and TLS trust files (trustmake.h; docs/TLS.md,
 * "Made off the start path").
 *
 * Design: everything the egress processes will read later is snapshotted
 * into sealed memfds by the kernel (sendfile: no page of the supervisor is
 * touched for the bytes); the run CA is nettle's (runca.c); the run's trust
 * files are written into one sealed memfd (sandbox/trustfiles.h) whose big
 * parts — the host's bundle text and the JVM store's host bags — are
 * copied in by the kernel too. What depends only on the host's bundle (its
 * check as the egress process's trust_load will read it, and the bags, with
 * their ~160 KiB of DER) is made once per bundle and kept in the state
 * dir's TRUST_CACHE_DIR, named by the bundle's identity (device, inode,
 * size, mtime and ctime to the nanosecond: any change of the file makes a
 * new name). A run then pays for its CA, one PKCS#12 MAC and the kernel's
 * copies.
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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/trustfiles.h"
#include "shared/macro.h"
#include "shared/memfd.h"
#include "tls/runca.h"
#include "tls/tls-load.h"
#include "tls/trustfmt.h"
#include "tls/trustmake.h"

/* The JVM store's password: public (JAVA_TOOL_OPTIONS names it, docs/TLS.md);
 * its MAC guards against damage, not against anyone. */
#define JVM_STORE_PASSWORD "changeit"

static int fail(char *why, size_t why_len, int r, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static int fail(char *why, size_t why_len, int r, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_len, fmt, ap);
        va_end(ap);
        return r < 0 ? r : -EIO;
}

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

/* The cache entry's name for the bundle whose identity is st. */
static void cache_name(const struct stat *st, char *name, size_t size)
{
        snprintf(name, size,
                 TRUST_CACHE_PREFIX "%" PRIx64 "-%" PRIx64 "-%" PRIx64 "-%" PRId64 ".%09ld-%" PRId64
                                    ".%09ld",
                 (uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
                 (int64_t)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec,
                 (int64_t)st->st_ctim.tv_sec, (long)st->st_ctim.tv_nsec);
}

/* The cache directory (made if missing), or -1 where there is none to use. */
static int cache_dir(const char *state_dir)
{
        if (!state_dir)
                return -1;
        _cleanup_close_ int sd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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

/* The host bags kept for this bundle: an fd and their size, or -1. */
static int cache_get(int dir, const char *name, size_t *len)
{
        struct stat st;
        if (dir < 0)
                return -1;
        int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return -1;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !ours(&st) || st.st_size <= 0 ||
            (uint64_t)st.st_size > TRUST_P12_DER_MAX) {
                close(fd);
                return -1;
        }
        *len = (size_t)st.st_size;
        return fd;
}

/* bags[0, len) into a file: the cache's entry `name` when the cache can
 * take it (written whole, then linked: a reader never sees part of one;
 * the entries of earlier bundles go), else a memfd. An fd to read them
 * back from (offset 0), or -errno. */
static int cache_put(int dir, const char *name, const unsigned char *bags, size_t len)
{
        int fd = dir >= 0 ? openat(dir, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600) : -1;
        if (fd >= 0) {
                char proc[64];
                snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
                int r = fd_write_all(fd, bags, len);
                /* a name taken by an entry cache_get would not use (another
                 * run's, made meanwhile, is as good as this one): replaced */
                if (r >= 0 && linkat(AT_FDCWD, proc, dir, name, AT_SYMLINK_FOLLOW) < 0) {
                        r = negative_errno();
                        if (r == -EEXIST && unlinkat(dir, name, 0) == 0)
                                r = linkat(AT_FDCWD, proc, dir, name, AT_SYMLINK_FOLLOW) < 0
                                            ? negative_errno()
                                            : 0;
                }
                if (r < 0 && r != -EEXIST) {
                        close(fd);
                        fd = -1;
                } else {
                        /* the earlier bundles' entries (best effort) */
                        int dd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        DIR *d = dd >= 0 ? fdopendir(dd) : NULL;
                        if (!d && dd >= 0)
                                close(dd);
                        for (struct dirent *e; d && (e = readdir(d));)
                                if (!strncmp(e->d_name, TRUST_CACHE_PREFIX,
                                             sizeof TRUST_CACHE_PREFIX - 1) &&
                                    strcmp(e->d_name, name) != 0)
                                        (void)unlinkat(dir, e->d_name, 0);
                        if (d)
                                closedir(d);
                        return fd;
                }
        }
        if ((fd = memfd_new("ringfence-jvm-host")) < 0)
                return fd;
        int r = fd_write_all(fd, bags, len);
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

/* A sealed snapshot's bytes, mapped read-only and populated in one call
 * (the reader goes through every page): *p NULL for an empty one. */
static int snapshot_map(int fd, const char **p, size_t *n)
{
        size_t size = 0;
        int r = memfd_sealed_size(fd, RF_TLS_BUNDLE_MAX, &size);
        if (r < 0)
                return r;
        *p = NULL;
        *n = size;
        if (size == 0)
                return 0;
        void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (m == MAP_FAILED)
                return negative_errno();
        *p = m;
        return 0;
}

/* A PEM file's certificate blocks checked as trust_load will read them;
 * with bags (not NULL), the bundle's host bags made from them too. */
static int check_certs(int snap, unsigned char **bags, size_t *bags_len)
{
        const char *text = NULL;
        size_t n = 0;
        struct trust_certs c = {0};
        int r = snapshot_map(snap, &text, &n);
        if (r < 0)
                return r;
        r = trust_certs_load(text, n, &c);
        if (r >= 0 && bags)
                r = trust_p12_bags(&c, bags, bags_len);
        trust_certs_free(&c);
        if (text)
                munmap((void *)text, n);
        return r < 0 ? r : 0;
}

/* The host's bundle, snapshotted (*snap) with the identity it had while it
 * was read (*st): a bundle that changes meanwhile (an update of the host's
 * certificates) is read again, at most three times. */
static int bundle_snapshot(int src, int *snap, struct stat *st)
{
        for (int tries = 0; tries < 3; tries++) {
                struct stat after;
                if (fstat(src, st) < 0)
                        return negative_errno();
                int fd = rf_tls_snapshot(src, RF_TLS_BUNDLE_MAX, "ca-bundle");
                if (fd < 0)
                        return fd;
                if (fstat(src, &after) < 0) {
                        int e = negative_errno();
                        close(fd);
                        return e;
                }
                if (same_file(st, &after)) {
                        *snap = fd;
                        return 0;
                }
                close(fd);
        }
        return -EAGAIN;
}

/* The trust files into one new memfd, sealed (trustfiles.h): the bundle is
 * the host's text (copied by the kernel from its snapshot) + btail, then
 * the CA's PEM, then the JVM store (head + the host bags, copied by the
 * kernel from bags_fd + tail) when head is not NULL. */
struct files_in {
        int bundle;
        size_t bundle_len;
        const char *btail, *pem;
        size_t btail_len, pem_len;
        const unsigned char *head, *tail;
        size_t head_len, tail_len;
        int bags;
        size_t bags_len;
};

static int files_memfd(const struct files_in *in)
{
        unsigned char hdr[TRUSTFILES_HDR];
        size_t lens[TRUST_FILES] = {
                [TRUST_BUNDLE] = in->bundle_len + in->btail_len,
                [TRUST_CA] = in->pem_len,
                [TRUST_JAVA] = in->head ? in->head_len + in->bags_len + in->tail_len : 0,
        };
        int fd = memfd_new("ringfence-trust");
        if (fd < 0)
                return fd;
        trustfiles_header(lens, hdr);
        int r = fd_write_all(fd, hdr, sizeof hdr);
        if (r >= 0)
                r = fd_copy_all(in->bundle, 0, fd, in->bundle_len);
        if (r >= 0)
                r = fd_write_all(fd, in->btail, in->btail_len);
        if (r >= 0)
                r = fd_write_all(fd, in->pem, in->pem_len);
        if (r >= 0 && in->head) {
                r = fd_write_all(fd, in->head, in->head_len);
                if (r >= 0)
                        r = fd_copy_all(in->bags, 0, fd, in->bags_len);
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

/* What the run's trust needs besides the snapshots, made in memory and
 * from the bags' file: the CA (export), the files' memfd (*files). */
static int make_files(const struct trust_job *j, int bundle, size_t blen, int bags, size_t bags_len,
                      unsigned char *export, size_t export_max, size_t *ca_len, int *files,
                      char *why, size_t why_len)
{
        _cleanup_free_ unsigned char *der = NULL, *head = NULL;
        _cleanup_free_ char *pem = NULL, *btail = NULL;
        unsigned char salt[TRUST_P12_SALT_LEN], mac[TRUST_P12_MAC_LEN], tail[TRUST_P12_TAIL_MAX];
        size_t der_len = 0, pem_len = 0, btail_len = 0, head_len = 0, auth_at = 0, tail_len = 0;
        char last = '\n';
        int r;

        if (blen > 0 && pread(bundle, &last, 1, (off_t)blen - 1) != 1)
                return fail(why, why_len, -EIO, "cannot read the host's CA bundle");
        if ((r = runca_new(j->hosts, j->n_hosts, j->lifetime_s, time(NULL), &der, &der_len, export,
                           export_max, ca_len)) < 0 ||
            (r = trust_pem_cert(der, der_len, &pem, &pem_len)) < 0 ||
            (r = trust_bundle_tail(last != '\n', pem, pem_len, &btail, &btail_len)) < 0)
                return fail(why, why_len, r, "cannot make the run's TLS authority: %s",
                            strerror(-r));
        if (j->java &&
            ((r = getrandom(salt, sizeof salt, 0) == (ssize_t)sizeof salt ? 0 : -EIO) < 0 ||
             (r = trust_p12_head(der, der_len, bags_len, &head, &head_len, &auth_at)) < 0 ||
             (r = runca_p12_mac_fd(JVM_STORE_PASSWORD, salt, sizeof salt, TRUST_P12_ITER,
                                   head + auth_at, head_len - auth_at, bags, 0, bags_len, mac)) <
                     0 ||
             (r = trust_p12_tail(salt, mac, tail, &tail_len)) < 0))
                return fail(why, why_len, r, "cannot make the run's TLS authority: %s",
                            strerror(-r));
        size_t java_len = j->java ? head_len + bags_len + tail_len : 0;
        if (blen + btail_len > j->bound || pem_len > j->bound || java_len > j->bound)
                return fail(why, why_len, -EFBIG, "the run's TLS trust files exceed %zu bytes",
                            j->bound);
        struct files_in in = {
                .bundle = bundle,
                .bundle_len = blen,
                .btail = btail,
                .btail_len = btail_len,
                .pem = pem,
                .pem_len = pem_len,
                .head = j->java ? head : NULL,
                .head_len = head_len,
                .tail = tail,
                .tail_len = tail_len,
                .bags = bags,
                .bags_len = bags_len,
        };
        if ((*files = files_memfd(&in)) < 0)
                return fail(why, why_len, *files, "cannot pass the run's TLS trust files: %s",
                            strerror(-*files));
        return 0;
}

int trust_make(const struct trust_job *j, unsigned char *export, size_t export_max,
               struct trust_made *out, char *why, size_t why_len)
{
        _cleanup_close_ int module = -1, bundle = -1, upstream = -1, dir = -1, bags = -1;
        _cleanup_free_ unsigned char *made = NULL;
        struct stat st;
        size_t bags_len = 0, made_len = 0;
        char name[256];
        int r;

        *out = (struct trust_made){.files = -1, .module = -1, .bundle = -1, .upstream = -1};
        /* the module and the trust files as they are now (the run's command
         * does not exist yet): the egress processes load these snapshots,
         * never the paths again */
        if ((r = rf_tls_module_snapshot(&module)) < 0 || (r = rf_tls_module_version(module)) < 0) {
                char path[256] = "ringfence-tls.so";
                (void)rf_tls_module_path(path, sizeof path);
                return fail(why, why_len, r, "the TLS module %s could not be loaded: %s", path,
                            r == -EPROTO ? "it is of another version" : strerror(-r));
        }
        r = bundle_snapshot(j->bundle, &bundle, &st);
        if (r >= 0 && j->upstream >= 0 &&
            (r = upstream = rf_tls_snapshot(j->upstream, RF_TLS_BUNDLE_MAX, "upstream-ca")) >= 0)
                r = check_certs(upstream, NULL, NULL);
        /* the bundle checked and its bags made once per bundle: an entry
         * of the cache says both */
        if (r >= 0) {
                cache_name(&st, name, sizeof name);
                dir = cache_dir(j->state_dir);
                if ((bags = cache_get(dir, name, &bags_len)) >= 0)
                        out->cached = true;
                else if ((r = check_certs(bundle, &made, &made_len)) >= 0 &&
                         (r = bags = cache_put(dir, name, made, made_len)) >= 0)
                        bags_len = made_len;
        }
        if (r < 0)
                return fail(why, why_len, r,
                            "cannot read the host's CA bundle " RF_TLS_HOST_BUNDLE "%s%s: %s",
                            j->upstream_path ? " or the upstream CA file " : "",
                            j->upstream_path ? j->upstream_path : "",
                            r == -EBADMSG  ? "no certificate in it"
                            : r == -EFBIG  ? "too large"
                            : r == -EINVAL ? "not a regular file"
                            : r == -EAGAIN ? "it kept changing while it was read"
                                           : strerror(-r));
        if ((r = make_files(j, bundle, (size_t)st.st_size, bags, bags_len, export, export_max,
                            &out->ca_len, &out->files, why, why_len)) < 0)
                return r;
        out->module = TAKE_FD(module);
        out->bundle = TAKE_FD(bundle);
        out->upstream = TAKE_FD(upstream);
        return 0;
}
