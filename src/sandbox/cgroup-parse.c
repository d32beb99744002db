/*
 * cgroup-parse.c — pure parsers for /proc/self/cgroup and mountinfo lines.
 *
 * No allocation, no syscalls: the results borrow the input. Everything the
 * kernel could print oddly (missing fields, no separator, overlong lines)
 * is rejected rather than guessed at. Fuzzed by tests/fuzz/fuzz_cgroup.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "cgroup.h"

int cgroup_parse_proc_line(const char *line, size_t len, struct cgroup_proc_line *out)
{
        if (len > CGROUP_LINE_MAX)
                return -E2BIG;
        const char *c1 = memchr(line, ':', len);
        if (!c1 || c1 == line)
                return -EINVAL;
        const char *rest = c1 + 1;
        size_t rlen = len - (size_t)(rest - line);
        const char *c2 = memchr(rest, ':', rlen);
        if (!c2)
                return -EINVAL;
        unsigned id = 0;
        for (const char *d = line; d < c1; d++) {
                if (*d < '0' || *d > '9' || id > 100000)
                        return -EINVAL;
                id = id * 10 + (unsigned)(*d - '0');
        }
        const char *path = c2 + 1;
        size_t plen = len - (size_t)(path - line);
        if (plen == 0 || path[0] != '/' || memchr(path, '\0', plen))
                return -EINVAL;
        out->id = id;
        out->controllers = rest;
        out->controllers_len = (size_t)(c2 - rest);
        out->path = path;
        out->path_len = plen;
        return 0;
}

/* Next space-separated field of [*s, end); advances *s. */
static bool next_field(const char **s, const char *end, const char **f, size_t *flen)
{
        while (*s < end && **s == ' ')
                (*s)++;
        if (*s >= end)
                return false;
        *f = *s;
        while (*s < end && **s != ' ')
                (*s)++;
        *flen = (size_t)(*s - *f);
        return true;
}

int cgroup_parse_mountinfo_line(const char *line, size_t len, struct cgroup_mount_line *out)
{
        return len > CGROUP_LINE_MAX ? -E2BIG : mountinfo_parse_line(line, len, out);
}

int mountinfo_parse_line(const char *line, size_t len, struct cgroup_mount_line *out)
{
        const char *s = line, *end = line + len, *f;
        size_t flen;

        /* 1 id, 2 parent, 3 major:minor, 4 root, 5 mount point */
        for (int i = 1; i <= 5; i++) {
                if (!next_field(&s, end, &f, &flen))
                        return -EINVAL;
                if (i == 4)
                        out->root = f, out->root_len = flen;
                if (i == 5)
                        out->mountpoint = f, out->mountpoint_len = flen;
        }
        /* optional fields until the lone "-" */
        for (;;) {
                if (!next_field(&s, end, &f, &flen))
                        return -EINVAL;
                if (flen == 1 && f[0] == '-')
                        break;
        }
        if (!next_field(&s, end, &f, &flen)) /* fs type */
                return -EINVAL;
        out->fstype = f, out->fstype_len = flen;
        if (!next_field(&s, end, &f, &flen)) /* source */
                return -EINVAL;
        if (!next_field(&s, end, &f, &flen)) /* super options */
                return -EINVAL;
        out->super = f, out->super_len = flen;
        /* A root is a path — except where the fs shows an object, as nsfs
         * does for `ip netns` mounts ("net:[4026532311]"): those lines are
         * read, and only a cgroup mount must have a path there. */
        bool cg = (out->fstype_len == 6 && memcmp(out->fstype, "cgroup", 6) == 0) ||
                  (out->fstype_len == 7 && memcmp(out->fstype, "cgroup2", 7) == 0);
        if (out->root_len == 0 || (cg && out->root[0] != '/') || out->mountpoint_len == 0 ||
            out->mountpoint[0] != '/')
                return -EINVAL;
        return 0;
}

bool cgroup_list_has(const char *list, size_t len, const char *name)
{
        size_t nl = strlen(name);
        const char *s = list, *end = list + len;

        while (s < end) {
                const char *c = memchr(s, ',', (size_t)(end - s));
                size_t l = c ? (size_t)(c - s) : (size_t)(end - s);
                if (l == nl && memcmp(s, name, nl) == 0)
                        return true;
                if (!c)
                        break;
                s = c + 1;
        }
        return false;
}

int cgroup_path_check(const char *path, size_t len)
{
        if (len == 0 || len > CGROUP_PATH_MAX)
                return len ? -E2BIG : -EINVAL;
        if (memchr(path, ':', len))
                return -EOPNOTSUPP; /* systemd's "slice:prefix:name" */
        size_t i = path[0] == '/' ? 1 : 0;
        if (i == len)
                return -EINVAL; /* "/": the hierarchy's root itself */
        while (i < len) {
                size_t start = i;
                while (i < len && path[i] != '/') {
                        unsigned char c = (unsigned char)path[i];
                        if (c < 0x20 || c == 0x7f)
                                return -EINVAL;
                        i++;
                }
                size_t n = i - start;
                if (n == 0 || n > 255 || (n == 1 && path[start] == '.') ||
                    (n == 2 && path[start] == '.' && path[start + 1] == '.'))
                        return -EINVAL;
                if (i < len && ++i == len)
                        return -EINVAL; /* a trailing '/' */
        }
        return 0;
}
