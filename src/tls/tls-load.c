/*
 * tls-load.c — find, check and dlopen ringfence-tls.so (see tls-load.h).
 *
 * Design: the path is never taken from the environment or the policy. It is
 * the installed RF_TLS_MODULE_PATH, or — only when the running binary itself
 * lives inside the build tree — RF_BUILD_ROOT/ringfence-tls.so, both fixed by
 * meson at build time. The file is opened once (O_NOFOLLOW), checked by fd
 * (regular, owned by root or the caller, not group/world-writable, and its
 * directory likewise) and mapped through /proc/self/fd/N, so what was checked
 * is what is loaded. glibc >= 2.34 has dlopen in libc itself: the binary
 * gains no library (see docs/TLS.md for the measured cost).
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/macro.h"
#include "shared/memfd.h"
#include "tls/tls-load.h"

static int owner_ok(const struct stat *st)
{
        if (st->st_uid != 0 && st->st_uid != geteuid())
                return -EPERM;
        if (st->st_mode & (S_IWGRP | S_IWOTH))
                return -EPERM;
        return 0;
}

/* `name` in the build root when this binary runs from the build tree, else
 * `installed`: both fixed at build time. */
static int built_or_installed(const char *name, const char *installed, char *buf, size_t size)
{
        char exe[PATH_MAX];
        static const char root[] = RF_BUILD_ROOT "/";
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        const char *p = installed;
        char built[PATH_MAX];

        if (n > 0) {
                exe[n] = '\0';
                if (strncmp(exe, root, sizeof root - 1) == 0) {
                        if ((size_t)snprintf(built, sizeof built, "%s%s", root, name) >=
                            sizeof built)
                                return -ENAMETOOLONG;
                        p = built;
                }
        }
        if (strlen(p) >= size)
                return -ENAMETOOLONG;
        strcpy(buf, p);
        return 0;
}

int rf_tls_module_path(char *buf, size_t size)
{
        return built_or_installed("ringfence-tls.so", RF_TLS_MODULE_PATH, buf, size);
}

/* The module file at `path`, opened and checked (see rf_tls_load_path):
 * an O_RDONLY fd, or -errno. */
static int module_open(const char *path)
{
        _cleanup_close_ int fd = -1, dfd = -1;
        struct stat st, dst;
        char dir[PATH_MAX];
        int r;

        if (!path || path[0] != '/' || strlen(path) >= sizeof((struct rf_tls_module *)0)->path)
                return -EINVAL;
        strcpy(dir, path);
        *strrchr(dir, '/') = '\0';
        dfd = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();
        if (fstat(dfd, &dst) < 0)
                return negative_errno();
        /* a directory others may write to lets them swap the file: refused,
         * unless root-owned and sticky (/tmp-like, renames by owner only) */
        if (dst.st_uid != 0 && dst.st_uid != geteuid())
                return -EPERM;
        if ((dst.st_mode & (S_IWGRP | S_IWOTH)) && !(dst.st_uid == 0 && (dst.st_mode & S_ISVTX)))
                return -EPERM;
        fd = openat(dfd, strrchr(path, '/') + 1, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EPERM;
        if ((r = owner_ok(&st)) < 0)
                return r;
        r = fd;
        fd = -1;
        return r;
}

const char *rf_tls_file_why(int err)
{
        return err == -ENOENT  ? "not installed"
               : err == -EPERM ? "writable by others than root"
                               : strerror(-err);
}

int rf_tls_module_open(char *path, size_t size)
{
        int r = rf_tls_module_path(path, size);
        return r < 0 ? r : module_open(path);
}

int rf_tls_module_check(char *path, size_t size)
{
        int r = rf_tls_module_open(path, size);
        if (r >= 0)
                close(r);
        return r < 0 ? r : 0;
}

/* dlopen the module open at fd (checked by the caller), its vtable checked,
 * init() called. */
static int load_open(int fd, const char *name, struct rf_tls_module *m)
{
        char proc[64];
        int r;

        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        m->handle = dlopen(proc, RTLD_NOW | RTLD_LOCAL);
        if (!m->handle)
                return -ELIBBAD;
        m->vt = dlsym(m->handle, RF_TLS_VTABLE_SYMBOL);
        if (!m->vt || m->vt->abi_version != RF_TLS_ABI_VERSION ||
            m->vt->size != sizeof(struct rf_tls_vtable)) {
                r = -EPROTO;
                goto fail;
        }
        r = m->vt->init();
        if (r < 0)
                goto fail;
        snprintf(m->path, sizeof m->path, "%s", name);
        return 0;
fail:
        rf_tls_unload(m);
        return r;
}

int rf_tls_load_path(const char *path, struct rf_tls_module *m)
{
        _cleanup_close_ int fd = -1;

        memset(m, 0, sizeof *m);
        if ((fd = module_open(path)) < 0)
                return fd;
        return load_open(fd, path, m);
}

int rf_tls_snapshot(int src, size_t max, const char *name)
{
        struct stat st;
        if (fstat(src, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        if ((uint64_t)st.st_size > max)
                return -EFBIG;
        int fd = memfd_new(name);
        if (fd < 0)
                return fd;
        /* by the kernel, from offset 0 (src's file offset is neither used
         * nor moved); the size as fstat saw it: a file that shrinks meanwhile
         * is -EIO, one that grows is cut at that size */
        int r = fd_copy_all(src, 0, fd, (size_t)st.st_size);
        if (r == 0)
                r = memfd_seal(fd);
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

int rf_tls_module_version(int fd)
{
        size_t size = 0;
        int r = memfd_sealed_size(fd, RF_TLS_MODULE_MAX, &size);
        if (r < 0)
                return r;
        if (size == 0)
                return -EPROTO;
        /* populated in one call: memmem reads every page */
        void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (p == MAP_FAILED)
                return negative_errno();
        bool found = memmem(p, size, RF_TLS_VTABLE_SYMBOL, sizeof RF_TLS_VTABLE_SYMBOL) != NULL;
        munmap(p, size);
        return found ? 0 : -EPROTO;
}

int rf_tls_load_fd(int fd, struct rf_tls_module *m)
{
        memset(m, 0, sizeof *m);
        int r = memfd_sealed_size(fd, RF_TLS_MODULE_MAX, NULL);
        return r < 0 ? r : load_open(fd, "ringfence-tls.so (snapshot)", m);
}

int rf_tls_load(struct rf_tls_module *m)
{
        char path[PATH_MAX];
        int r = rf_tls_module_path(path, sizeof path);
        return r < 0 ? r : rf_tls_load_path(path, m);
}

void rf_tls_unload(struct rf_tls_module *m)
{
        if (m->handle)
                dlclose(m->handle);
        m->handle = NULL;
        m->vt = NULL;
}
