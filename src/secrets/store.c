/*
 * store.c — the local encrypted store: key file, sealing, versions.
 *
 * Every path below the state dir is opened with *at() from a directory fd
 * and O_NOFOLLOW: a symlink planted in the store is refused, not followed.
 * Plaintext exists only in secret memory (secmem.h); files hold sealed
 * records only.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "secrets/broker.h"
#include "secrets/secmem.h"
#include "secrets/store.h"
#include "shared/macro.h"

#define AD_PREFIX "ringfence-secret-v1"

static void put32(unsigned char *p, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
        put32(p, (uint32_t)v);
        put32(p + 4, (uint32_t)(v >> 32));
}

/* associated data: prefix, name, version, creation time */
static size_t make_ad(unsigned char *ad, const char *name, uint32_t version, uint64_t created)
{
        size_t n = 0, nl = strlen(name);
        memcpy(ad, AD_PREFIX, sizeof AD_PREFIX); /* with its NUL */
        n += sizeof AD_PREFIX;
        memcpy(ad + n, name, nl + 1);
        n += nl + 1;
        put32(ad + n, version);
        put64(ad + n + 4, created);
        return n + 12;
}

int store_key_load(const char *path, bool create, unsigned char *key, struct rf_error *err)
{
        if (sodium_init() < 0)
                return rf_error_set(err, -EIO, "cannot initialise libsodium");
        for (int attempt = 0; attempt < 2; attempt++) {
                _cleanup_close_ int fd =
                        open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
                if (fd < 0 && errno == ENOENT && create) {
                        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                        if (fd < 0 && errno == EEXIST)
                                continue; /* another ringfence made it first */
                        if (fd < 0)
                                return rf_error_set(err, negative_errno(),
                                                    "cannot create the key file %s: %m", path);
                        randombytes_buf(key, STORE_KEY_LEN);
                        if (write(fd, key, STORE_KEY_LEN) != STORE_KEY_LEN || fsync(fd) < 0) {
                                int r = negative_errno();
                                (void)unlink(path);
                                return rf_error_set(err, r ? r : -EIO,
                                                    "cannot write the key file %s", path);
                        }
                        return 0;
                }
                if (fd < 0)
                        return rf_error_set(err, negative_errno(),
                                            errno == ENOENT ? "no key file %s (set a secret first)"
                                                            : "cannot open the key file %s: %m",
                                            path);
                struct stat st;
                if (fstat(fd, &st) < 0)
                        return rf_error_set(err, negative_errno(), "%s: %m", path);
                if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
                        return rf_error_set(err, -EPERM,
                                            "key file %s: must be a regular file of this user, "
                                            "mode 0600 (it is %04o, uid %u)",
                                            path, (unsigned)(st.st_mode & 07777),
                                            (unsigned)st.st_uid);
                if (st.st_size != STORE_KEY_LEN)
                        return rf_error_set(err, -EBADMSG, "key file %s: not %d bytes", path,
                                            STORE_KEY_LEN);
                ssize_t n = read(fd, key, STORE_KEY_LEN);
                if (n != STORE_KEY_LEN)
                        return rf_error_set(err, n < 0 ? negative_errno() : -EIO,
                                            "cannot read the key file %s", path);
                return 0;
        }
        return rf_error_set(err, -EAGAIN, "key file %s: created and removed meanwhile", path);
}

void store_fingerprint(const unsigned char *key, const void *value, size_t len,
                       char out[STORE_FP_HEX + 1])
{
        unsigned char sub[32], fp[16];
        crypto_kdf_derive_from_key(sub, sizeof sub, 1, "rf-fprnt", key);
        crypto_generichash(fp, sizeof fp, value, len, sub, sizeof sub);
        sodium_bin2hex(out, STORE_FP_HEX + 1, fp, sizeof fp);
        sodium_memzero(sub, sizeof sub);
}

/* STATE_DIR/secrets, created (0700) with `create`. */
static int open_root(const char *state_dir, bool create, struct rf_error *err)
{
        _cleanup_close_ int sd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (sd < 0)
                return rf_error_set(err, negative_errno(), "%s: %m", state_dir);
        if (create && mkdirat(sd, "secrets", 0700) < 0 && errno != EEXIST)
                return rf_error_set(err, negative_errno(), "cannot create %s/secrets: %m",
                                    state_dir);
        int fd = openat(sd, "secrets", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return rf_error_set(err, negative_errno(),
                                    errno == ENOENT ? "the store is empty" : "%s/secrets: %m",
                                    state_dir);
        return fd;
}

static int open_name(int root, const char *name, bool create, struct rf_error *err)
{
        if (!secret_name_valid(name, strlen(name)))
                return rf_error_set(err, -EINVAL,
                                    "secret name \"%.64s\": must be 1-64 of A-Z a-z 0-9 _ . - "
                                    "(not starting with . or -)",
                                    name);
        if (create && mkdirat(root, name, 0700) < 0 && errno != EEXIST)
                return rf_error_set(err, negative_errno(), "cannot create the secret %s: %m", name);
        int fd = openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return rf_error_set(err, negative_errno(),
                                    errno == ENOENT ? "no secret named %s" : "secret %s: %m", name);
        return fd;
}

/* "v000042" → 42; 0 for anything else */
static uint32_t version_of(const char *f)
{
        if (f[0] != 'v' || strlen(f) != 7)
                return 0;
        uint32_t v = 0;
        for (int i = 1; i < 7; i++) {
                if (f[i] < '0' || f[i] > '9')
                        return 0;
                v = v * 10 + (uint32_t)(f[i] - '0');
        }
        return v;
}

/* The versions present: max and count. */
static int scan_versions(int dirfd, uint32_t *max, uint32_t *count)
{
        int fd = dup(dirfd);
        if (fd < 0)
                return negative_errno();
        DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return negative_errno();
        }
        rewinddir(d);
        *max = *count = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
                uint32_t v = version_of(e->d_name);
                if (v) {
                        (*count)++;
                        if (v > *max)
                                *max = v;
                }
        }
        closedir(d);
        return 0;
}

int store_set(const char *state_dir, const unsigned char *key, const char *name, const void *value,
              size_t len, uint32_t *version, struct rf_error *err)
{
        if (len > SECRET_VALUE_MAX)
                return rf_error_set(err, -E2BIG, "the value is larger than %d bytes",
                                    SECRET_VALUE_MAX);
        _cleanup_close_ int root = open_root(state_dir, true, err);
        if (root < 0)
                return root;
        _cleanup_close_ int dir = open_name(root, name, true, err);
        if (dir < 0)
                return dir;
        if (flock(dir, LOCK_EX) < 0)
                return rf_error_set(err, negative_errno(), "cannot lock the secret %s: %m", name);
        uint32_t max, count;
        int r = scan_versions(dir, &max, &count);
        if (r < 0)
                return rf_error_set(err, r, "cannot read the secret %s: %s", name, strerror(-r));
        if (max >= SECRET_VERSION_MAX)
                return rf_error_set(err, -E2BIG, "secret %s has %d versions", name,
                                    SECRET_VERSION_MAX);
        uint32_t v = max + 1;
        uint64_t created = (uint64_t)time(NULL);
        size_t total = STORE_HEADER_LEN + len + STORE_MAC_LEN;
        _cleanup_free_ unsigned char *rec = malloc(total);
        unsigned char ad[sizeof AD_PREFIX + SECRET_NAME_MAX + 16];
        if (!rec)
                return rf_error_set(err, -ENOMEM, "out of memory");
        memcpy(rec, STORE_MAGIC, 8);
        put32(rec + 8, v);
        put64(rec + 12, created);
        put32(rec + 20, (uint32_t)(len + STORE_MAC_LEN));
        randombytes_buf(rec + 24, 24);
        size_t adl = make_ad(ad, name, v, created);
        unsigned long long ctl;
        crypto_aead_xchacha20poly1305_ietf_encrypt(rec + STORE_HEADER_LEN, &ctl, value, len, ad,
                                                   adl, NULL, rec + 24, key);
        char fname[16], tmp[24];
        snprintf(fname, sizeof fname, "v%06u", v);
        snprintf(tmp, sizeof tmp, ".tmp-%s", fname);
        (void)unlinkat(dir, tmp, 0); /* a crashed set's leftover (we hold the lock) */
        _cleanup_close_ int fd =
                openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return rf_error_set(err, negative_errno(), "cannot write the secret %s: %m", name);
        if (write(fd, rec, total) != (ssize_t)total || fsync(fd) < 0 ||
            renameat2(dir, tmp, dir, fname, RENAME_NOREPLACE) < 0 || fsync(dir) < 0 ||
            fsync(root) < 0) {
                r = negative_errno();
                (void)unlinkat(dir, tmp, 0);
                return rf_error_set(err, r ? r : -EIO, "cannot write the secret %s: %s", name,
                                    strerror(r ? -r : EIO));
        }
        *version = v;
        return 0;
}

int store_get(const char *state_dir, const unsigned char *key, const char *name, uint32_t version,
              unsigned char **value, size_t *len, uint32_t *got, struct rf_error *err)
{
        _cleanup_close_ int root = open_root(state_dir, false, err);
        if (root < 0)
                return root == -ENOENT ? rf_error_set(err, -ENOENT, "no secret named %s", name)
                                       : root;
        _cleanup_close_ int dir = open_name(root, name, false, err);
        if (dir < 0)
                return dir;
        if (version == 0) {
                uint32_t count;
                int r = scan_versions(dir, &version, &count);
                if (r < 0 || version == 0)
                        return rf_error_set(err, r < 0 ? r : -ENOENT, "secret %s has no versions",
                                            name);
        }
        char fname[16];
        snprintf(fname, sizeof fname, "v%06u", version);
        /* O_NONBLOCK: a FIFO planted in the store does not hang us (fstat refuses it) */
        _cleanup_close_ int fd = openat(dir, fname, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return rf_error_set(err, negative_errno(),
                                    errno == ENOENT ? "secret %s has no version %u"
                                                    : "secret %s version %u: %m",
                                    name, version);
        struct stat st;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > STORE_RECORD_MAX)
                return rf_error_set(err, -EBADMSG, "secret %s version %u: not a record", name,
                                    version);
        _cleanup_free_ unsigned char *buf = malloc((size_t)st.st_size + 1);
        if (!buf)
                return rf_error_set(err, -ENOMEM, "out of memory");
        ssize_t n = read(fd, buf, (size_t)st.st_size + 1);
        struct store_record rec;
        if (n != st.st_size || store_record_parse(buf, (size_t)n, &rec) < 0 ||
            rec.version != version)
                return rf_error_set(err, -EBADMSG, "secret %s version %u: damaged record", name,
                                    version);
        size_t vlen = rec.ct_len - STORE_MAC_LEN;
        unsigned char *out = secmem_alloc(vlen ? vlen : 1);
        if (!out)
                return rf_error_set(err, negative_errno(), "cannot lock memory for secret %s: %m",
                                    name);
        unsigned char ad[sizeof AD_PREFIX + SECRET_NAME_MAX + 16];
        size_t adl = make_ad(ad, name, rec.version, rec.created);
        unsigned long long outl;
        if (crypto_aead_xchacha20poly1305_ietf_decrypt(out, &outl, NULL, rec.ct, rec.ct_len, ad,
                                                       adl, rec.nonce, key) < 0) {
                secmem_free(out);
                return rf_error_set(err, -EBADMSG,
                                    "secret %s version %u does not open (moved, altered or "
                                    "sealed under another key)",
                                    name, version);
        }
        *value = out;
        *len = (size_t)outl;
        *got = version;
        return 0;
}

static int entry_cmp(const void *a, const void *b)
{
        return strcmp(((const struct store_entry *)a)->name, ((const struct store_entry *)b)->name);
}

int store_list(const char *state_dir, struct store_entry **ret, size_t *n, struct rf_error *err)
{
        *ret = NULL;
        *n = 0;
        int root = open_root(state_dir, false, err);
        if (root == -ENOENT)
                return 0;
        if (root < 0)
                return root;
        DIR *d = fdopendir(root);
        if (!d) {
                close(root);
                return rf_error_set(err, negative_errno(), "%s/secrets: %m", state_dir);
        }
        struct store_entry *v = NULL;
        size_t cnt = 0;
        struct dirent *e;
        int r = 0;
        while ((e = readdir(d))) {
                if (!secret_name_valid(e->d_name, strlen(e->d_name)))
                        continue;
                _cleanup_close_ int dir = openat(dirfd(d), e->d_name,
                                                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                struct store_entry x = {0};
                if (dir < 0 || scan_versions(dir, &x.latest, &x.n_versions) < 0 || !x.latest)
                        continue;
                snprintf(x.name, sizeof x.name, "%s", e->d_name);
                char fname[16];
                unsigned char hdr[STORE_HEADER_LEN];
                snprintf(fname, sizeof fname, "v%06u", x.latest);
                _cleanup_close_ int fd =
                        openat(dir, fname, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
                struct stat fst;
                if (fd >= 0 && fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode) &&
                    read(fd, hdr, sizeof hdr) == (ssize_t)sizeof hdr)
                        for (int i = 7; i >= 0; i--)
                                x.created = x.created << 8 | hdr[12 + i];
                struct store_entry *nv = realloc(v, (cnt + 1) * sizeof *nv);
                if (!nv) {
                        r = rf_error_set(err, -ENOMEM, "out of memory");
                        break;
                }
                v = nv;
                v[cnt++] = x;
        }
        closedir(d);
        if (r < 0) {
                free(v);
                return r;
        }
        if (cnt)
                qsort(v, cnt, sizeof *v, entry_cmp);
        *ret = v;
        *n = cnt;
        return 0;
}

int store_rm(const char *state_dir, const char *name, uint32_t *versions, struct rf_error *err)
{
        _cleanup_close_ int root = open_root(state_dir, false, err);
        if (root < 0)
                return root == -ENOENT ? rf_error_set(err, -ENOENT, "no secret named %s", name)
                                       : root;
        _cleanup_close_ int dir = open_name(root, name, false, err);
        if (dir < 0)
                return dir;
        if (flock(dir, LOCK_EX) < 0)
                return rf_error_set(err, negative_errno(), "cannot lock the secret %s: %m", name);
        int fd = dup(dir);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return rf_error_set(err, -ENOMEM, "out of memory");
        }
        uint32_t n = 0;
        struct dirent *e;
        int r = 0;
        while ((e = readdir(d))) {
                if (!version_of(e->d_name) && strncmp(e->d_name, ".tmp-", 5))
                        continue;
                if (unlinkat(dir, e->d_name, 0) < 0) {
                        r = rf_error_set(err, negative_errno(), "cannot remove %s/%s: %m", name,
                                         e->d_name);
                        break;
                }
                n += version_of(e->d_name) != 0;
        }
        closedir(d);
        if (r < 0)
                return r;
        if (unlinkat(root, name, AT_REMOVEDIR) < 0 || fsync(root) < 0)
                return rf_error_set(err, negative_errno(), "cannot remove the secret %s: %m", name);
        *versions = n;
        return 0;
}
