/*
 * hmac.h — HMAC-SHA256 over ranges of files, read by pread (nettle's
 * SHA-256: the CPU's SHA extensions where it has them).
 *
 * For the JVM trust store's MAC (tls/trustmake.c, in the run CA's keeper):
 * its input is the run's own head in memory and the host's bags in a trust
 * cache file, so it is hashed where it lies instead of being gathered into
 * memory first.
 */
#pragma once

#include <stddef.h>

#define HMAC_SHA256_LEN 32

/* One range: len bytes of fd from offset off (fd's file offset is neither
 * used nor moved), or, when mem is not NULL, mem[0, len) (fd and off
 * unused). */
struct fd_range {
        int fd;
        long long off;
        size_t len;
        const void *mem;
};

/*
 * hmac_sha256_ranges — HMAC-SHA256 with key[0, key_len) over r[0], ...,
 * r[n - 1], one after the other, into mac. Streams through one buffer on
 * the stack (no allocation). 0, or -errno (-EIO when a file ends before
 * its range does). Its state is wiped before it returns.
 */
int hmac_sha256_ranges(const unsigned char *key, size_t key_len, const struct fd_range *r, size_t n,
                       unsigned char mac[HMAC_SHA256_LEN]);
