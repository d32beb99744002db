/*
 * secmem.c — locked, undumpable, wipe-on-fork memory for secret values.
 *
 * Each allocation is its own mapping: one header page-fraction holding the
 * mapping size, then the caller's bytes. Allocations are few (one per
 * bound value and a few buffers) so a mapping each is cheap and keeps
 * every value's pages apart from the heap.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "secrets/secmem.h"

#define HDR 64 /* keeps the caller's bytes 64-byte aligned */

void *secmem_alloc(size_t len)
{
        long pg = sysconf(_SC_PAGESIZE);
        if (len == 0 || len > (1UL << 30) || pg <= 0) {
                errno = EINVAL;
                return NULL;
        }
        size_t size = (len + HDR + (size_t)pg - 1) & ~((size_t)pg - 1);
        unsigned char *m =
                mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
                return NULL;
        if (madvise(m, size, MADV_DONTDUMP) < 0 || madvise(m, size, MADV_WIPEONFORK) < 0 ||
            mlock(m, size) < 0) {
                int e = errno;
                munmap(m, size);
                errno = e;
                return NULL;
        }
        memcpy(m, &size, sizeof size);
        return m + HDR;
}

size_t secmem_size(const void *p)
{
        size_t size;
        memcpy(&size, (const unsigned char *)p - HDR, sizeof size);
        return size - HDR;
}

void *secmem_free(void *p)
{
        if (!p)
                return NULL;
        unsigned char *m = (unsigned char *)p - HDR;
        size_t size;
        memcpy(&size, m, sizeof size);
        explicit_bzero(m, size);
        munlock(m, size);
        munmap(m, size);
        return NULL;
}

int secmem_harden_process(void)
{
        struct rlimit core = {0, 0};
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || setrlimit(RLIMIT_CORE, &core) < 0)
                return -errno;
        return 0;
}
