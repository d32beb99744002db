/*
 * fuzz_npmrc.c — libFuzzer target for the .npmrc token reader
 * (src/shared/npmrc.c), which reads a caller's file for `--profile npm`.
 *
 * The input is read in a heap buffer of exactly its length. Beyond "no
 * crash, no out-of-bounds read, no UB": every token found lies within
 * the input, is not empty and not a `${VAR}`, has a host of host
 * characters (an optional :port), and at most NPMRC_TOKENS_MAX are found.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/npmrc.h"

int LLVMFuzzerTestOneInput(const char *data, size_t size);

int LLVMFuzzerTestOneInput(const char *data, size_t size)
{
        char *copy = malloc(size ? size : 1);
        struct npmrc_token t[NPMRC_TOKENS_MAX];
        size_t n = 99;

        if (!copy)
                return 0;
        memcpy(copy, data, size);
        int r = npmrc_scan(copy, size, t, &n);
        if (r == 0 || r == -E2BIG) {
                if (n > NPMRC_TOKENS_MAX)
                        abort();
                for (size_t i = 0; i < n; i++) {
                        size_t hl = strnlen(t[i].host, sizeof t[i].host);
                        if (hl == 0 || hl == sizeof t[i].host ||
                            strspn(t[i].host, "abcdefghijklmnopqrstuvwxyz0123456789.-:") != hl)
                                abort();
                        if (t[i].value_len == 0 || t[i].value_off + t[i].value_len > size ||
                            (t[i].value_len >= 2 && !memcmp(copy + t[i].value_off, "${", 2)))
                                abort();
                }
        }
        free(copy);
        return 0;
}
