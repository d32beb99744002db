/*
 * ovl-parse.c — the layers of an overlay mount from its super options as
 * /proc/self/mountinfo shows them (ovl.h). Pure: no allocation, no
 * syscalls; fuzzed by tests/fuzz/fuzz_ovl.c.
 *
 * What the kernel prints: "rw,lowerdir=/a:/b,upperdir=/u,workdir=/w,..."
 * with ',', '=', ' ', '\t', '\n' and '\\' inside a value as octal escapes
 * (\054 ...), and ':' inside a lower layer's path as "\:" (newer kernels
 * also print one "lowerdir+=" per layer). Anything this cannot take as
 * plain layers — data-only layers, metacopy, a relative path, a path with
 * "." or ".." components — is refused, never guessed at.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "ovl.h"

/* Decode one escaped value (len bytes) into out (NUL-terminated); ':' ends
 * it unless escaped when `colon` (a lowerdir list). Returns the bytes of
 * the input consumed, or -errno. */
static long take_path(const char *in, size_t len, bool colon, char *out, size_t outlen)
{
        size_t i = 0, o = 0;
        while (i < len) {
                char c = in[i];
                if (colon && c == ':')
                        break;
                if (c == '\\') {
                        if (i + 1 < len && in[i + 1] == ':') {
                                c = ':';
                                i += 2;
                        } else if (i + 3 < len && in[i + 1] >= '0' && in[i + 1] <= '3' &&
                                   in[i + 2] >= '0' && in[i + 2] <= '7' && in[i + 3] >= '0' &&
                                   in[i + 3] <= '7') {
                                c = (char)(((in[i + 1] - '0') << 6) | ((in[i + 2] - '0') << 3) |
                                           (in[i + 3] - '0'));
                                i += 4;
                        } else
                                return -EINVAL;
                } else
                        i++;
                if (c == '\0')
                        return -EINVAL;
                if (o + 1 >= outlen)
                        return -E2BIG;
                out[o++] = c;
        }
        out[o] = '\0';
        return (long)i;
}

/* An absolute path without empty, "." or ".." components (a trailing '/'
 * aside). */
static bool path_clean(const char *p)
{
        if (p[0] != '/')
                return false;
        for (const char *s = p; *s;) {
                while (*s == '/')
                        s++;
                size_t n = strcspn(s, "/");
                if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
                        return false;
                s += n;
        }
        return true;
}

static int add_layer(struct ovl_layers *l, const char *in, size_t len, bool colon, long *used)
{
        if (l->n >= OVL_LAYERS_MAX)
                return -E2BIG;
        long r = take_path(in, len, colon, l->path[l->n], sizeof l->path[l->n]);
        if (r < 0)
                return (int)r;
        if (!l->path[l->n][0])
                return -EOPNOTSUPP; /* "::": the data-only layers that follow */
        if (!path_clean(l->path[l->n]))
                return -EINVAL;
        l->n++;
        *used = r;
        return 0;
}

int ovl_parse_super(const char *opts, size_t len, struct ovl_layers *out)
{
        char upper[OVL_PATH_MAX] = "";
        bool lower_seen = false;

        out->n = 0;
        out->has_upper = false;
        if (len > OVL_SUPER_MAX)
                return -E2BIG;
        for (size_t i = 0; i < len;) {
                size_t n = 0;
                while (i + n < len && opts[i + n] != ',')
                        n++;
                const char *o = opts + i;
                long used;
                int r;
                if (n > 9 && !memcmp(o, "lowerdir=", 9)) {
                        if (lower_seen)
                                return -EINVAL;
                        lower_seen = true;
                        for (size_t k = 9; k < n;) {
                                if ((r = add_layer(out, o + k, n - k, true, &used)) < 0)
                                        return r;
                                k += (size_t)used;
                                if (k < n && ++k == n) /* the ':' between two; none at the end */
                                        return -EINVAL;
                        }
                } else if (n > 10 && !memcmp(o, "lowerdir+=", 10)) {
                        if ((r = add_layer(out, o + 10, n - 10, false, &used)) < 0)
                                return r;
                        lower_seen = true;
                } else if (n > 9 && !memcmp(o, "upperdir=", 9)) {
                        if (upper[0])
                                return -EINVAL;
                        long k = take_path(o + 9, n - 9, false, upper, sizeof upper);
                        if (k < 0)
                                return (int)k;
                        if (!path_clean(upper))
                                return -EINVAL;
                } else if ((n >= 9 && !memcmp(o, "datadir+=", 9)) ||
                           (n == 11 && !memcmp(o, "metacopy=on", 11)) ||
                           (n >= 7 && !memcmp(o, "verity=", 7) &&
                            !(n == 10 && !memcmp(o, "verity=off", 10))))
                        return -EOPNOTSUPP;
                i += n + (i + n < len);
        }
        if (!lower_seen)
                return -EINVAL;
        if (upper[0]) { /* the upper layer is the topmost of them all */
                if (out->n >= OVL_LAYERS_MAX)
                        return -E2BIG;
                memmove(out->path[1], out->path[0], out->n * sizeof out->path[0]);
                memcpy(out->path[0], upper, sizeof upper);
                out->n++;
                out->has_upper = true;
        }
        return 0;
}
