/*
 * fuzz_hostcmd.c — libFuzzer target for host_tree (src/shared/hostcmd.c),
 * which decides what of the host a profile or a not-found hint mounts for
 * an agent's command: the executable as PATH names it and where its links
 * lead.
 *
 * The input is up to four NUL-separated strings: found, real ("" for
 * NULL), then homes. Beyond "no crash, no UB", an accepted pair gives:
 * a root, normal and absolute; an extra that is "" or normal, absolute
 * and neither holding nor held by root; never "/", a home or a directory
 * above one; and each mount one of found's directory, found, real, or a
 * directory above real (the tree it is in), never something beside them.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/hostcmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* p is dir or beneath it */
static int within(const char *p, const char *dir)
{
        size_t n = strlen(dir);
        if (n == 1 && dir[0] == '/')
                return 1;
        return !strncmp(p, dir, n) && (p[n] == '\0' || p[n] == '/');
}

static int normal(const char *p)
{
        size_t n = strlen(p);
        if (p[0] != '/')
                return 0;
        if (n == 1)
                return 1;
        return !strstr(p, "//") && !strstr(p, "/./") && !strstr(p, "/../") && p[n - 1] != '/' &&
               strcmp(p + n - 2, "/.") && (n < 3 || strcmp(p + n - 3, "/.."));
}

static void check(const char *m, const char *found, const char *real, const char *const *homes,
                  size_t n_homes)
{
        if (!normal(m) || !strcmp(m, "/"))
                abort();
        for (size_t i = 0; i < n_homes; i++) {
                /* homes as given here are plain (the target passes only
                 * normal ones' checks): a mount is never one or above one */
                if (homes[i] && normal(homes[i]) && within(homes[i], m))
                        abort();
        }
        /* the link's side: found, or a directory holding it; the target's:
         * real, or a directory holding it */
        if (!within(found, m) && !(real && within(real, m)))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *buf = malloc(size + 1);
        if (!buf)
                abort();
        memcpy(buf, data, size);
        buf[size] = '\0';
        const char *part[4] = {"", "", NULL, NULL};
        size_t n = 0;
        for (char *p = buf; n < 4 && p <= buf + size; p += strlen(p) + 1)
                part[n++] = p;
        const char *found = part[0], *real = part[1][0] ? part[1] : NULL;
        const char *homes[2] = {part[2], part[3]};
        size_t n_homes = n > 2 ? n - 2 : 0;
        char root[PATH_MAX], extra[PATH_MAX];
        if (host_tree(found, real, homes, n_homes, root, extra) == 0) {
                check(root, found, real, homes, n_homes);
                if (extra[0]) {
                        check(extra, found, real, homes, n_homes);
                        if (within(root, extra) || within(extra, root))
                                abort();
                }
        } else if (root[0] || extra[0]) {
                abort();
        }
        /* a shim's target: the first part as the PATH entry, the second as
         * the command, the third as ROOT/version's text: what comes out is
         * the entry's ROOT/versions/V/bin/CMD, V with no '/' and no leading
         * dot */
        char out[PATH_MAX];
        const char *ver = part[2] ? part[2] : "";
        if (host_shim_version(found, strlen(found), part[1], ver, out) == 0) {
                size_t dl = strlen(found) - 6;
                if (strncmp(out, found, dl) || strncmp(out + dl, "/versions/", 10) ||
                    out[dl + 10] == '.' || strchr(part[1], '/'))
                        abort();
                const char *v = out + dl + 10, *slash = strchr(v, '/');
                if (!slash || strncmp(slash, "/bin/", 5) || strcmp(slash + 5, part[1]))
                        abort();
        } else if (out[0]) {
                abort();
        }
        free(buf);
        return 0;
}
