/*
 * fuzz_argvbuf.c — libFuzzer target for the command line the daemon passes
 * a run's supervisor in a memfd (src/shared/argvbuf.c: `ringfence run
 * --args-fd`).
 *
 * The input is read in a heap buffer of exactly its length. Beyond "no
 * crash, no out-of-bounds read, no UB": a split succeeds exactly when the
 * input is non-empty and ends with a NUL (and is within the bounds), every
 * string lies within the input, and joining what was split gives the input
 * back byte for byte.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/argvbuf.h"

int LLVMFuzzerTestOneInput(const char *data, size_t size);

int LLVMFuzzerTestOneInput(const char *data, size_t size)
{
        static const char *av[64];
        char *copy = malloc(size ? size : 1);
        if (!copy)
                return 0;
        memcpy(copy, data, size);
        int n = argvbuf_split(copy, size, av, 64);
        if ((n >= 0) != (size > 0 && copy[size - 1] == '\0' && n != -E2BIG))
                abort();
        if (n >= 0) {
                char *buf = NULL;
                size_t len = 0;
                for (int i = 0; i < n; i++)
                        if (av[i] < copy || av[i] >= copy + size)
                                abort();
                if (argvbuf_join(av, (size_t)n, &buf, &len) == 0 &&
                    (len != size || memcmp(buf, copy, size) != 0))
                        abort();
                free(buf);
        } else if (n != -EINVAL && n != -E2BIG) {
                abort();
        }
        free(copy);
        return 0;
}
