/*
 * memfd.h — sealed memory files: made, written, sealed, and checked by
 * whoever receives one (the run's TLS trust files, the snapshots the egress
 * processes load: cli/run_tls.c, tls/tls-load.c, sandbox/launch.c).
 */
#pragma once

#include <stddef.h>

/* memfd_new — a new memfd named `name`, O_CLOEXEC, sealable. An fd or -errno. */
int memfd_new(const char *name);

/* fd_write_all — all of buf[0..len) to fd (EINTR retried). 0 or -errno. */
int fd_write_all(int fd, const void *buf, size_t len);

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
