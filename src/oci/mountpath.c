/*
 * mountpath.c — a mount's destination resolved inside a container's root
 * (mountpath.h).
 *
 * Design: the resolver keeps two strings, what is resolved so far (`done`,
 * free of symlinks) and what is left to walk (`rest`). Each component of
 * `rest` is appended to `done` and asked about (one readlink); a symlink's
 * target replaces that component and is spliced in front of what is left,
 * an absolute target emptying `done` first — so a link is always read
 * relative to the container's root, never the host's, and ".." pops a
 * component of `done` and stops at its root. The host side never follows
 * a link itself: each prefix it opens is `done`, symlink-free by
 * construction, opened with RESOLVE_NO_SYMLINKS beneath the root's fd.
 *
 * Threat notes: the image is the engine's, maybe an attacker's; its links
 * may point anywhere ("/../../etc", "../../../../root"). Every such path
 * ends inside the root here. What is resolved is a string for the plan:
 * init re-opens it with no symlink allowed, so a link made between this
 * and the mount (a volume shared with a running container, the runc
 * CVE-2021-30465 race) fails the container with ELOOP instead of moving
 * the mount.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "oci/mountpath.h"
#include "shared/macro.h"

int oci_path_resolve(const char *path, oci_readlink_fn rl, void *ctx, char *out, size_t len)
{
        char rest[PATH_MAX], done[PATH_MAX], link[PATH_MAX];
        size_t dl = 0;
        unsigned links = 0;

        if (!path || path[0] != '/')
                return -EINVAL;
        if (strlen(path) >= sizeof rest)
                return -ENAMETOOLONG;
        strcpy(rest, path);
        done[0] = '\0';
        char *p = rest;
        for (;;) {
                while (*p == '/')
                        p++;
                if (!*p)
                        break;
                char *e = strchrnul(p, '/');
                size_t cl = (size_t)(e - p);
                if (cl == 1 && p[0] == '.') {
                        p = e;
                        continue;
                }
                if (cl == 2 && p[0] == '.' && p[1] == '.') {
                        /* never above the root: "" stays "" */
                        char *s = strrchr(done, '/');
                        if (s) {
                                *s = '\0';
                                dl = (size_t)(s - done);
                        }
                        p = e;
                        continue;
                }
                if (dl + 1 + cl >= sizeof done)
                        return -ENAMETOOLONG;
                done[dl] = '/';
                memcpy(done + dl + 1, p, cl);
                done[dl + 1 + cl] = '\0';
                p = e;
                int r = rl(ctx, done, link, sizeof link);
                if (r == -EINVAL || r == -ENOENT) {
                        /* a directory, a file, or missing (init makes it) */
                        dl += 1 + cl;
                        continue;
                }
                if (r < 0)
                        return r;
                if (++links > OCI_LINKS_MAX)
                        return -ELOOP;
                /* the link's name goes; its target is walked in its place,
                 * from the root when absolute */
                done[dl] = '\0';
                if (link[0] == '/')
                        dl = 0, done[0] = '\0';
                size_t ll = strnlen(link, sizeof link), pl = strlen(p);
                if (ll + 1 + pl >= sizeof rest)
                        return -ENAMETOOLONG;
                memmove(rest + ll + 1, p, pl + 1);
                memcpy(rest, link, ll);
                rest[ll] = '/';
                p = rest;
        }
        if (dl == 0)
                done[0] = '/', done[1] = '\0', dl = 1;
        if (dl >= len)
                return -ENAMETOOLONG;
        memcpy(out, done, dl + 1);
        return 0;
}

struct rootfs_view {
        int rootfd;
        const char *const *owned;
};

/* Is `a` the path `b` or beneath it (component-wise)? */
static bool at_or_beneath(const char *a, const char *b)
{
        size_t lb = strlen(b);
        return strncmp(a, b, lb) == 0 && (a[lb] == '\0' || a[lb] == '/');
}

static int rootfs_readlink(void *ctx, const char *path, char *buf, size_t len)
{
        const struct rootfs_view *v = ctx;
        char parent[PATH_MAX];

        for (size_t i = 0; v->owned && v->owned[i]; i++)
                if (at_or_beneath(path, v->owned[i]))
                        return -EINVAL; /* ringfence's own: not the image's */
        const char *slash = strrchr(path, '/');
        size_t plen = (size_t)(slash - path);
        if (!slash || plen >= sizeof parent || len < 2)
                return -EINVAL;
        if (plen == 0)
                strcpy(parent, ".");
        else {
                memcpy(parent, path + 1, plen - 1);
                parent[plen - 1] = '\0';
        }
        struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                          RESOLVE_NO_MAGICLINKS};
        _cleanup_close_ int dfd = (int)syscall(SYS_openat2, v->rootfd, parent, &how, sizeof how);
        if (dfd < 0)
                return negative_errno();
        ssize_t n = readlinkat(dfd, slash + 1, buf, len - 1);
        if (n < 0)
                return negative_errno();
        if ((size_t)n >= len - 1)
                return -ENAMETOOLONG;
        if (n == 0)
                return -ENOENT; /* an empty link resolves to nothing */
        buf[n] = '\0';
        return (int)n;
}

int oci_path_in_rootfs(int rootfd, const char *path, const char *const *owned, char *out,
                       size_t len)
{
        struct rootfs_view v = {.rootfd = rootfd, .owned = owned};
        return oci_path_resolve(path, rootfs_readlink, &v, out, len);
}
