/*
 * fuzz_cgroup.c — libFuzzer target for the cgroup line parsers
 * (src/sandbox/cgroup-parse.c): cgroup_parse_proc_line,
 * cgroup_parse_mountinfo_line and cgroup_list_has.
 *
 * The input is fed whole (so overlong inputs reach the -E2BIG path) and
 * then line by line, the way cgroup.c's discovery reads /proc/self/cgroup
 * and /proc/self/mountinfo. Each line is copied into a heap buffer of
 * exactly its length, without a NUL, so a read past `len` is an ASan
 * report rather than a silent read of the next line.
 *
 * Beyond "no crash, no out-of-bounds read, no UB", every result is
 * compared with a small reference model written here independently:
 *   - proc lines: accepted iff "DIGITS:ANYTHING:/PATH-WITHOUT-NUL" (ids up
 *     to 100000 must be accepted; an accepted id is the digits' value,
 *     never a wrapped one); the borrowed fields are exactly the model's;
 *   - mountinfo lines: fields 4 and 5, and the first and third field after
 *     the first lone "-" from field 6 on, are exactly the model's; the
 *     mount point starts with '/', and so does the root of a cgroup or
 *     cgroup2 mount;
 *   - path_check accepts exactly what a split-on-'/' model accepts (and an
 *     accepted path never holds a "." or ".." component or a control byte);
 *   - list_has agrees with a plain split-on-comma model for controller
 *     names, and finds every non-empty element of a list (that has no
 *     NUL) in that list.
 * A disagreement aborts, which libFuzzer reports as a crash.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/cgroup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                   \
        do {                                                                                       \
                if (!(x))                                                                          \
                        abort();                                                                   \
        } while (0)

/* A borrowed field lies inside [buf, buf+len). */
static bool inside(const char *buf, size_t len, const char *f, size_t flen)
{
        return f >= buf && flen <= len && (size_t)(f - buf) <= len - flen;
}

/* ---- reference models --------------------------------------------------------- */

static bool model_list_has(const char *list, size_t len, const char *name)
{
        size_t nl = strlen(name), start = 0;

        for (size_t i = 0; i <= len; i++) {
                if (i == len || list[i] == ',') {
                        if (i - start == nl && memcmp(list + start, name, nl) == 0)
                                return true;
                        start = i + 1;
                }
        }
        return false;
}

struct span {
        const char *p;
        size_t len;
};

/* Space-separated fields of [s, s+len); at most max; returns the count. */
static size_t model_fields(const char *s, size_t len, struct span *f, size_t max)
{
        size_t n = 0, i = 0;

        while (i < len && n < max) {
                while (i < len && s[i] == ' ')
                        i++;
                if (i == len)
                        break;
                size_t start = i;
                while (i < len && s[i] != ' ')
                        i++;
                f[n++] = (struct span){s + start, i - start};
        }
        return n;
}

/* ---- checks -------------------------------------------------------------------------- */

/* Names are never empty (cgroup.c asks only for controller names); what an
 * empty name matches is left unspecified. */
static void check_list(const char *list, size_t len)
{
        static const char *const names[] = {"cpu",     "cpuacct",      "memory", "pids",
                                            "freezer", "name=systemd", "rw",     "nsdelegate"};

        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
                CHECK(cgroup_list_has(list, len, names[i]) == model_list_has(list, len, names[i]));
        /* every element (short, without NUL) is found in its own list */
        size_t start = 0;
        for (size_t i = 0; i <= len; i++) {
                if (i < len && list[i] != ',')
                        continue;
                size_t el = i - start;
                if (el > 0 && el < 64 && !memchr(list + start, '\0', el)) {
                        char name[64];
                        memcpy(name, list + start, el);
                        name[el] = '\0';
                        CHECK(cgroup_list_has(list, len, name));
                }
                start = i + 1;
        }
}

static void check_proc(const char *line, size_t len)
{
        struct cgroup_proc_line c;
        int r = cgroup_parse_proc_line(line, len, &c);

        if (len > CGROUP_LINE_MAX) {
                CHECK(r == -E2BIG);
                return;
        }
        CHECK(r == 0 || r == -EINVAL);

        /* the model */
        const char *c1 = memchr(line, ':', len);
        const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
        bool digits = c1 && c1 > line;
        uint64_t id = 0;
        for (const char *d = line; digits && d < c1; d++) {
                if (*d < '0' || *d > '9')
                        digits = false;
                else if (id <= UINT32_MAX)
                        id = id * 10 + (uint64_t)(*d - '0');
        }
        const char *path = c2 ? c2 + 1 : NULL;
        size_t plen = path ? len - (size_t)(path - line) : 0;
        bool well_formed = digits && c2 && plen > 0 && path[0] == '/' && !memchr(path, '\0', plen);

        if (r < 0) {
                /* a well-formed line with a small id must be accepted */
                CHECK(!(well_formed && id <= 100000));
                return;
        }
        CHECK(well_formed);
        CHECK(c.id == id); /* never a wrapped value */
        CHECK(c.controllers == c1 + 1 && c.controllers_len == (size_t)(c2 - c1 - 1));
        CHECK(c.path == path && c.path_len == plen);
        CHECK(inside(line, len, c.controllers, c.controllers_len));
        CHECK(inside(line, len, c.path, c.path_len));
        check_list(c.controllers, c.controllers_len);
}

static void check_mountinfo(const char *line, size_t len)
{
        struct cgroup_mount_line m;
        int r = cgroup_parse_mountinfo_line(line, len, &m);

        if (len > CGROUP_LINE_MAX) {
                CHECK(r == -E2BIG);
                return;
        }
        CHECK(r == 0 || r == -EINVAL);

        /* the model: at most CGROUP_LINE_MAX / 2 + 1 fields fit in a line */
        static struct span f[CGROUP_LINE_MAX / 2 + 2];
        size_t n = model_fields(line, len, f, sizeof f / sizeof f[0]);
        size_t sep = 0;
        for (size_t i = 5; i < n && !sep; i++)
                if (f[i].len == 1 && f[i].p[0] == '-')
                        sep = i;
        /* fs type, source and super options follow the separator; the root
         * is a path for cgroup mounts (nsfs shows "net:[...]" there) */
        bool cg = sep && sep + 1 < n &&
                  ((f[sep + 1].len == 6 && memcmp(f[sep + 1].p, "cgroup", 6) == 0) ||
                   (f[sep + 1].len == 7 && memcmp(f[sep + 1].p, "cgroup2", 7) == 0));
        bool well_formed =
                n >= 5 && sep && sep + 3 < n && (!cg || f[3].p[0] == '/') && f[4].p[0] == '/';

        if (r < 0) {
                CHECK(!well_formed);
                return;
        }
        CHECK(well_formed);
        CHECK(m.root == f[3].p && m.root_len == f[3].len);
        CHECK(m.mountpoint == f[4].p && m.mountpoint_len == f[4].len);
        CHECK(m.fstype == f[sep + 1].p && m.fstype_len == f[sep + 1].len);
        CHECK(m.super == f[sep + 3].p && m.super_len == f[sep + 3].len);
        CHECK(inside(line, len, m.root, m.root_len) && m.root_len > 0);
        CHECK(inside(line, len, m.mountpoint, m.mountpoint_len) && m.mountpoint_len > 0);
        CHECK(inside(line, len, m.fstype, m.fstype_len) && m.fstype_len > 0);
        CHECK(inside(line, len, m.super, m.super_len) && m.super_len > 0);
        CHECK(!memchr(m.fstype, ' ', m.fstype_len) && !memchr(m.super, ' ', m.super_len));
        check_list(m.super, m.super_len);
}

/* Both parsers on an exact-size, unterminated copy of [p, p+len). */
static void check_both(const uint8_t *p, size_t len)
{
        char *b = malloc(len ? len : 1);
        if (!b)
                return;
        memcpy(b, p, len);
        check_proc(b, len);
        check_mountinfo(b, len);
        check_list(b, len);
        free(b);
}

/* The model: optional leading '/', then components of 1-255 bytes split on
 * '/', none "." or "..", no byte < 0x20 or 0x7f, no ':', at most 1024. */
static int model_path_check(const char *p, size_t len)
{
        if (len == 0)
                return -EINVAL;
        if (len > CGROUP_PATH_MAX)
                return -E2BIG;
        if (memchr(p, ':', len))
                return -EOPNOTSUPP;
        size_t i = p[0] == '/';
        if (i == len)
                return -EINVAL;
        size_t start = i;
        for (; i <= len; i++) {
                if (i < len && p[i] != '/') {
                        if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
                                return -EINVAL;
                        continue;
                }
                size_t n = i - start;
                if (n == 0 || n > 255 || (n == 1 && p[start] == '.') ||
                    (n == 2 && p[start] == '.' && p[start + 1] == '.'))
                        return -EINVAL;
                start = i + 1;
        }
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *copy = malloc(size ? size : 1);
        CHECK(copy);
        memcpy(copy, data, size);
        CHECK(cgroup_path_check(copy, size) == model_path_check(copy, size));
        free(copy);
        check_both(data, size);
        for (size_t start = 0; start < size;) {
                const uint8_t *nl = memchr(data + start, '\n', size - start);
                size_t end = nl ? (size_t)(nl - data) : size;
                if (nl || start > 0) /* a single line was done above */
                        check_both(data + start, end - start);
                start = end + 1;
        }
        return 0;
}
