/*
 * fuzz_pipconf.c — libFuzzer target for the pip.conf credential reader
 * (src/shared/pipconf.c), which reads a caller's file for `--profile pip`.
 *
 * The input is read in a heap buffer of exactly its length. Beyond "no
 * crash, no out-of-bounds read, no UB": every credential found lies within
 * its line, which lies within the input; it is not empty, ends at an '@'
 * (or a ':' before one: a token as the user);
 * its host is "" or host characters (an optional :port); at most
 * PIPCONF_CREDS_MAX are found, in order; decoding one never writes past
 * its length.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/pipconf.h"

int LLVMFuzzerTestOneInput(const char *data, size_t size);

int LLVMFuzzerTestOneInput(const char *data, size_t size)
{
        char *copy = malloc(size ? size : 1);
        struct pipconf_cred c[PIPCONF_CREDS_MAX];
        size_t n = 99;

        if (!copy)
                return 0;
        memcpy(copy, data, size);
        int r = pipconf_scan(copy, size, c, &n);
        if (r == 0 || r == -E2BIG) {
                if (n > PIPCONF_CREDS_MAX)
                        abort();
                for (size_t i = 0; i < n; i++) {
                        size_t hl = strnlen(c[i].host, sizeof c[i].host);
                        if (hl == sizeof c[i].host ||
                            strspn(c[i].host, "abcdefghijklmnopqrstuvwxyz0123456789.-:") != hl)
                                abort();
                        if (c[i].len == 0 || c[i].len > PIPCONF_VALUE_MAX ||
                            c[i].off < c[i].line_off ||
                            c[i].off + c[i].len >= c[i].line_off + c[i].line_len ||
                            c[i].line_off + c[i].line_len > size ||
                            (copy[c[i].off + c[i].len] != '@' && copy[c[i].off + c[i].len] != ':'))
                                abort();
                        if (i && (c[i].line_off < c[i - 1].line_off || c[i].off <= c[i - 1].off))
                                abort();
                        char *d = malloc(c[i].len + 1);
                        size_t dl = 0;
                        if (d && pipconf_decode(copy + c[i].off, c[i].len, d, &dl) == 0 &&
                            (dl > c[i].len || d[dl] != '\0'))
                                abort();
                        free(d);
                }
        }
        free(copy);
        return 0;
}
