/*
 * memfd.c — sealed memory files (memfd.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/macro.h"
#include "shared/memfd.h"

int memfd_new(const char *name)
{
        int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
        return fd < 0 ? negative_errno() : fd;
}

int fd_write_all(int fd, const void *buf, size_t len)
{
        const unsigned char *p = buf;
        while (len) {
                ssize_t n = write(fd, p, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? negative_errno() : -EIO;
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

/* How fd_copy_all copies, best first; it moves on when the kernel says a
 * way does not apply to these two files (nothing was copied then). */
enum copy_way { COPY_RANGE, COPY_SENDFILE, COPY_BUFFER };

static bool copy_way_unfit(int e)
{
        return e == EXDEV || e == EINVAL || e == ENOSYS || e == EOPNOTSUPP;
}

int fd_copy_all(int in, long long off, int out, size_t len)
{
        loff_t at = off;
        enum copy_way way = COPY_RANGE;
        while (len) {
                ssize_t n;
                if (way == COPY_RANGE) {
                        /* same filesystem type (a file system's own copy) */
                        n = copy_file_range(in, &at, out, NULL, len, 0);
                        if (n < 0 && copy_way_unfit(errno)) {
                                way = COPY_SENDFILE;
                                continue;
                        }
                } else if (way == COPY_SENDFILE) {
                        /* across filesystems (a file into a memfd, a memfd
                         * into the run's tmpfs): still the kernel's copy */
                        off_t o = (off_t)at;
                        n = sendfile(out, in, &o, len);
                        if (n < 0 && copy_way_unfit(errno)) {
                                way = COPY_BUFFER;
                                continue;
                        }
                        if (n > 0)
                                at = (loff_t)o;
                } else {
                        unsigned char buf[16384];
                        n = pread(in, buf, len < sizeof buf ? len : sizeof buf, at);
                        if (n > 0) {
                                int r = fd_write_all(out, buf, (size_t)n);
                                if (r < 0)
                                        return r;
                                at += n;
                        }
                }
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? negative_errno() : -EIO;
                len -= (size_t)n;
        }
        return 0;
}

int memfd_seal(int fd)
{
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
                return negative_errno();
        return 0;
}

int memfd_sealed_size(int fd, size_t max, size_t *size)
{
        const int seals = F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK;
        struct stat st;
        int have = fcntl(fd, F_GET_SEALS);
        if (have < 0 || (have & seals) != seals || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return -EBADF;
        if ((uint64_t)st.st_size > max)
                return -EFBIG;
        if (size)
                *size = (size_t)st.st_size;
        return 0;
}
