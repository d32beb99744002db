/*
 * macro.h — cleanup attributes and small helpers used everywhere.
 *
 * Ownership is expressed with _cleanup_* variables: a value that leaves its
 * scope is released, unless handed off with TAKE_PTR()/TAKE_FD(). Destructors
 * used with _cleanup_ accept NULL / -1 and return NULL / -1.
 */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f)   __attribute__((cleanup(f)))
#define _unused_       __attribute__((unused))
#define _noreturn_     __attribute__((noreturn))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _pure_         __attribute__((pure))
#define _must_check_   __attribute__((warn_unused_result))

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline void freep(void *p)
{
        free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

/* Close an fd preserving errno; returns -1 so `fd = safe_close(fd)` works. */
static inline int safe_close(int fd)
{
        if (fd >= 0) {
                int saved = errno;
                close(fd);
                errno = saved;
        }
        return -1;
}
static inline void closep(int *fd)
{
        *fd = safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline void close_pair(int p[2])
{
        p[0] = safe_close(p[0]);
        p[1] = safe_close(p[1]);
}

#define TAKE_PTR(p)                                                                                \
        ({                                                                                         \
                __typeof__(p) _p_ = (p);                                                           \
                (p) = NULL;                                                                        \
                _p_;                                                                               \
        })
#define TAKE_FD(fd)                                                                                \
        ({                                                                                         \
                int _fd_ = (fd);                                                                   \
                (fd) = -1;                                                                         \
                _fd_;                                                                              \
        })

/* Retry a syscall-style expression on EINTR. */
#define RETRY_EINTR(expr)                                                                          \
        ({                                                                                         \
                long _r_;                                                                          \
                do                                                                                 \
                        _r_ = (long)(expr);                                                        \
                while (_r_ < 0 && errno == EINTR);                                                 \
                _r_;                                                                               \
        })

/* errno as a negative return, never 0 (some libc paths forget to set it). */
/* The value of hex digit c (0-9, a-f, A-F), or -1. */
static inline int hex_digit_value(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

static inline int negative_errno(void)
{
        return errno > 0 ? -errno : -EIO;
}

#define STRV_FOREACH(s, l) for (char **s = (l); s && *s; s++)
