/*
 * fuzz_oci_mountpath.c — libFuzzer target for oci_path_resolve
 * (src/oci/mountpath.c), which resolves a mount's destination inside a
 * container's root, following the image's symlinks there.
 *
 * The input is the root and the path: its first line is the destination,
 * each further line "LINK\tTARGET" a symlink of the root (at most 64);
 * every other path is a directory, and a path whose last component is
 * "missing" does not exist. Beyond "no crash, no UB": a resolved path is
 * absolute and clean (no "." or ".." component, no "//", no trailing
 * slash but for "/" itself), whatever the links say.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/mountpath.h"

#define LINKS_MAX 64

struct fake_root {
        char *link[LINKS_MAX], *target[LINKS_MAX];
        size_t n;
};

static int fake_readlink(void *ctx, const char *path, char *buf, size_t len)
{
        const struct fake_root *f = ctx;
        const char *base = strrchr(path, '/');
        if (base && !strcmp(base + 1, "missing"))
                return -ENOENT;
        for (size_t i = 0; i < f->n; i++)
                if (!strcmp(path, f->link[i])) {
                        size_t n = strlen(f->target[i]);
                        if (!n)
                                return -ENOENT;
                        if (n >= len)
                                return -ENAMETOOLONG;
                        memcpy(buf, f->target[i], n + 1);
                        return (int)n;
                }
        return -EINVAL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *buf = malloc(size + 1), out[4096];
        struct fake_root f = {0};
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';
        char *save = NULL, *path = strtok_r(buf, "\n", &save);
        for (char *l; path && f.n < LINKS_MAX && (l = strtok_r(NULL, "\n", &save));) {
                char *tab = strchr(l, '\t');
                if (!tab)
                        continue;
                *tab = '\0';
                f.link[f.n] = l;
                f.target[f.n++] = tab + 1;
        }
        if (path && oci_path_resolve(path, fake_readlink, &f, out, sizeof out) == 0) {
                size_t n = strlen(out);
                if (out[0] != '/' || strstr(out, "//") || strstr(out, "/./") ||
                    strstr(out, "/../") || (n > 1 && out[n - 1] == '/') ||
                    (n >= 2 && !strcmp(out + n - 2, "/.")) ||
                    (n >= 3 && !strcmp(out + n - 3, "/..")))
                        abort();
        }
        free(buf);
        return 0;
}
