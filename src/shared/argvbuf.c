/*
 * argvbuf.c — a command line as NUL-separated bytes (argvbuf.h).
 */
#include <errno.h>
#include <string.h>
#include <stdlib.h>

#include "shared/argvbuf.h"

int argvbuf_split(const char *buf, size_t len, const char **out, size_t max)
{
        size_t n = 0;

        if (len == 0 || buf[len - 1] != '\0')
                return -EINVAL;
        if (len > ARGVBUF_MAX_BYTES)
                return -E2BIG;
        for (size_t i = 0; i < len;) {
                const char *end = memchr(buf + i, '\0', len - i); /* found: buf ends with one */
                if (n == max)
                        return -E2BIG;
                out[n++] = buf + i;
                i = (size_t)(end - buf) + 1;
        }
        return (int)n;
}

int argvbuf_join(const char *const *argv, size_t n, char **buf, size_t *len)
{
        size_t total = 0;

        *buf = NULL;
        *len = 0;
        if (n > ARGVBUF_MAX_ARGS)
                return -E2BIG;
        for (size_t i = 0; i < n; i++) {
                total += strlen(argv[i]) + 1;
                if (total > ARGVBUF_MAX_BYTES)
                        return -E2BIG;
        }
        char *b = malloc(total ? total : 1);
        if (!b)
                return -ENOMEM;
        size_t off = 0;
        for (size_t i = 0; i < n; i++) {
                size_t l = strlen(argv[i]) + 1;
                memcpy(b + off, argv[i], l);
                off += l;
        }
        *buf = b;
        *len = total;
        return 0;
}
