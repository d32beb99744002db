/*
 * memfd.h — sealed memory files: made, written, sealed, and checked by
 * whoever receives one (the run's TLS trust files, the snapshots the egress
 * processes load: tls/trustmake.c, tls/tls-load.c, sandbox/launch.c).
 */
#pragma once

#include <stddef.h>

/* memfd_new — a new memfd named `name`, O_CLOEXEC, sealable. An fd or -errno. */
int memfd_new(const char *name);

/* fd_write_all — all of buf[0..len) to fd (EINTR retried). 0 or -errno. */
int fd_write_all(int fd, const void *buf, size_t len);

/*
 * fd_copy_all — len bytes of `in` from offset off, appended to `out` at its
 * file offset: by the kernel (copy_file_range within a filesystem type,
 * sendfile across them — a file into a memfd, a memfd into a tmpfs — so no
 * page of this process is touched: on a host where a page fault is
 * expensive, the one copy of a trust file costs what the kernel's copy
 * costs), else, where the kernel can do neither, through a buffer on the
 * stack. `in`'s file offset is not used. 0 or -errno; -EIO when `in` ends
 * early.
 */
int fd_copy_all(int in, long long off, int out, size_t len);

/* memfd_seal — seal fd against writes, growth, shrinking and further
 * seals. 0 or -errno. */
int memfd_seal(int fd);

/*
 * memfd_sealed_size — fd is a regular file sealed against writes, growth
 * and shrinking (as memfd_seal leaves it) of at most `max` bytes: 0 with
 * *size its size (size may be NULL); -EBADF when it is not, -EFBIG when it
 * is larger.
 */
int memfd_sealed_size(int fd, size_t max, size_t *size);
