/*
 * test_cgroup.c — unit tests for the pure parsers of src/sandbox/cgroup-parse.c:
 * /proc/self/cgroup lines (cgroup_parse_proc_line), /proc/self/mountinfo
 * lines (cgroup_parse_mountinfo_line) and comma-separated controller lists
 * (cgroup_list_has). It links only librf_core: no cgroup is touched.
 *
 * Every input is handed to the parser in a heap buffer of exactly its
 * length, with no terminating NUL, so that a parser reading past `len`
 * trips ASan in the sanitizer build instead of silently reading a NUL.
 * The good lines are real ones (from a hybrid host's /proc/self/mountinfo
 * and /proc/self/cgroup, and from a systemd host with "shared:N" optional
 * fields); at the end this machine's own files are parsed line by line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/cgroup.h"
#include "tap.h"

/* An exact-size copy of [s, s+len), not NUL-terminated; the caller frees it. */
static char *exact(const char *s, size_t len)
{
        char *b = malloc(len ? len : 1);
        if (!b) {
                fputs("out of memory\n", stderr);
                exit(2);
        }
        memcpy(b, s, len);
        return b;
}

/* Does the borrowed field [p, p+plen) lie inside [buf, buf+len) and equal want? */
static bool field_is(const char *buf, size_t len, const char *p, size_t plen, const char *want)
{
        return p >= buf && p + plen <= buf + len && plen == strlen(want) &&
               memcmp(p, want, plen) == 0;
}

/* ---- /proc/self/cgroup ------------------------------------------------------ */

static void proc_ok(const char *line, unsigned id, const char *ctrls, const char *path)
{
        size_t len = strlen(line);
        char *b = exact(line, len);
        struct cgroup_proc_line c;

        memset(&c, 0xa5, sizeof c);
        int r = cgroup_parse_proc_line(b, len, &c);
        if (is_int(r, 0, "proc line \"%s\" parses", line)) {
                is_int(c.id, id, "... id %u", id);
                ok(field_is(b, len, c.controllers, c.controllers_len, ctrls),
                   "... controllers \"%s\"", ctrls);
                ok(field_is(b, len, c.path, c.path_len, path), "... path \"%s\"", path);
        }
        free(b);
}

/* len is explicit: some lines carry a NUL. */
static void proc_bad(const char *line, size_t len, int code, const char *why)
{
        char *b = exact(line, len);
        struct cgroup_proc_line c;

        is_int(cgroup_parse_proc_line(b, len, &c), code, "proc line rejected: %s", why);
        free(b);
}
#define PROC_BAD(lit, code, why) proc_bad((lit), sizeof(lit) - 1, (code), (why))

static void test_proc_line(void)
{
        /* as printed on this hybrid host and others */
        proc_ok("4:memory:/runner/3c8513a1e03febe82a13c912287ebcc0", 4, "memory",
                "/runner/3c8513a1e03febe82a13c912287ebcc0");
        proc_ok("4:memory:/a/b", 4, "memory", "/a/b");
        proc_ok("0::/x", 0, "", "/x");
        proc_ok("0::/", 0, "", "/");
        proc_ok("1:name=systemd:/", 1, "name=systemd", "/");
        proc_ok("2:cpu,cpuacct:/user.slice", 2, "cpu,cpuacct", "/user.slice");
        proc_ok("12:net_cls,net_prio:/", 12, "net_cls,net_prio", "/");
        /* only the first two colons separate: a path may contain more */
        proc_ok("3:memory:/a:b/c:", 3, "memory", "/a:b/c:");
        proc_ok("0::/ringfence-01a22bf6-20c9-7b2b-a936-79c837e1469f", 0, "",
                "/ringfence-01a22bf6-20c9-7b2b-a936-79c837e1469f");
        proc_ok("7:pids:/a b", 7, "pids", "/a b");

        PROC_BAD("", -EINVAL, "empty");
        PROC_BAD("nocolons", -EINVAL, "no colon");
        PROC_BAD("4:memory", -EINVAL, "one colon only");
        PROC_BAD("4:memory/a", -EINVAL, "one colon, path glued on");
        PROC_BAD(":memory:/a", -EINVAL, "empty id");
        PROC_BAD("x:memory:/a", -EINVAL, "non-digit id");
        PROC_BAD("4a:memory:/a", -EINVAL, "id with a trailing letter");
        PROC_BAD("-4:memory:/a", -EINVAL, "negative id");
        PROC_BAD("+4:memory:/a", -EINVAL, "id with a sign");
        PROC_BAD(" 4:memory:/a", -EINVAL, "id with a leading space");
        PROC_BAD("4\0:memory:/a", -EINVAL, "NUL inside the id");
        PROC_BAD("99999999999999999999:memory:/a", -EINVAL, "id too large (no wrap-around)");
        PROC_BAD("4294967300:memory:/a", -EINVAL, "id that would wrap to 4 in 32 bits");
        PROC_BAD("4:memory:", -EINVAL, "empty path");
        PROC_BAD("0::", -EINVAL, "empty path (v2)");
        PROC_BAD("4:memory:a/b", -EINVAL, "relative path");
        PROC_BAD("4:memory: /a", -EINVAL, "path starting with a space");
        PROC_BAD("4:memory:/a\0b", -EINVAL, "NUL inside the path");
        PROC_BAD("4:memory:/ab\0", -EINVAL, "NUL at the end of the path");
        PROC_BAD("4:memory:\0/a", -EINVAL, "NUL before the path");

        /* len is the whole truth: bytes beyond it are not looked at */
        {
                static const char s[] = "0::/x/more";
                char *b = exact(s, 5);
                struct cgroup_proc_line c;
                if (is_int(cgroup_parse_proc_line(b, 5, &c), 0, "parses only the first len bytes"))
                        ok(field_is(b, 5, c.path, c.path_len, "/x"), "... path stops at len");
                free(b);
                b = exact(s, 3);
                is_int(cgroup_parse_proc_line(b, 3, &c), -EINVAL,
                       "\"0::\" cut at len: empty path rejected");
                free(b);
        }

        /* CGROUP_LINE_MAX: exactly at the limit parses, one more byte is -E2BIG */
        {
                char *b = malloc(CGROUP_LINE_MAX + 1);
                struct cgroup_proc_line c;
                if (!b)
                        exit(2);
                memcpy(b, "4:memory:/", 10);
                memset(b + 10, 'a', CGROUP_LINE_MAX + 1 - 10);
                is_int(cgroup_parse_proc_line(b, CGROUP_LINE_MAX, &c), 0,
                       "a line of exactly CGROUP_LINE_MAX bytes parses");
                is_int(c.path_len, CGROUP_LINE_MAX - 9, "... with the whole path");
                is_int(cgroup_parse_proc_line(b, CGROUP_LINE_MAX + 1, &c), -E2BIG,
                       "a line of CGROUP_LINE_MAX + 1 bytes -> -E2BIG");
                /* too long wins over malformed */
                memset(b, 'x', CGROUP_LINE_MAX + 1);
                is_int(cgroup_parse_proc_line(b, CGROUP_LINE_MAX + 1, &c), -E2BIG,
                       "an overlong malformed line -> -E2BIG");
                free(b);
        }
}

/* ---- /proc/self/mountinfo ---------------------------------------------------- */

static void mi_ok(const char *line, const char *root, const char *mnt, const char *fstype,
                  const char *super)
{
        size_t len = strlen(line);
        char *b = exact(line, len);
        struct cgroup_mount_line m;

        memset(&m, 0xa5, sizeof m);
        int r = cgroup_parse_mountinfo_line(b, len, &m);
        if (is_int(r, 0, "mountinfo \"%s\" parses", line)) {
                ok(field_is(b, len, m.root, m.root_len, root), "... root \"%s\"", root);
                ok(field_is(b, len, m.mountpoint, m.mountpoint_len, mnt), "... mount point \"%s\"",
                   mnt);
                ok(field_is(b, len, m.fstype, m.fstype_len, fstype), "... fs type \"%s\"", fstype);
                ok(field_is(b, len, m.super, m.super_len, super), "... super options \"%s\"",
                   super);
        }
        free(b);
}

static void mi_bad(const char *line, size_t len, int code, const char *why)
{
        char *b = exact(line, len);
        struct cgroup_mount_line m;

        is_int(cgroup_parse_mountinfo_line(b, len, &m), code, "mountinfo rejected: %s", why);
        free(b);
}
#define MI_BAD(lit, code, why) mi_bad((lit), sizeof(lit) - 1, (code), (why))

static void test_mountinfo_line(void)
{
        /* this hybrid host, verbatim */
        mi_ok("35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory", "/",
              "/sys/fs/cgroup/memory", "cgroup", "rw,memory");
        mi_ok("32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu", "/",
              "/sys/fs/cgroup/cpu", "cgroup", "rw,cpu");
        mi_ok("40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd",
              "/", "/sys/fs/cgroup/systemd", "cgroup", "rw,name=systemd");
        mi_ok("41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw", "/",
              "/sys/fs/cgroup/unified", "cgroup2", "rw");
        mi_ok("31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755", "/",
              "/sys/fs/cgroup", "tmpfs", "rw,mode=755");
        /* a systemd host: optional fields between the options and " - " */
        mi_ok("28 24 0:26 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:5 - "
              "cgroup2 cgroup2 rw,nsdelegate",
              "/", "/sys/fs/cgroup/unified", "cgroup2", "rw,nsdelegate");
        mi_ok("35 25 0:31 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:15 "
              "- cgroup cgroup rw,cpu,cpuacct",
              "/", "/sys/fs/cgroup/cpu,cpuacct", "cgroup", "rw,cpu,cpuacct");
        mi_ok("30 24 0:27 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 master:1 "
              "propagate_from:2 unbindable - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot",
              "/", "/sys/fs/cgroup", "cgroup2", "rw,nsdelegate,memory_recursiveprot");
        /* a container: the hierarchy is seen from a non-root cgroup */
        mi_ok("1200 1100 0:30 /docker/0123abcd /sys/fs/cgroup/memory ro,nosuid,nodev,noexec,"
              "relatime master:20 - cgroup cgroup rw,memory",
              "/docker/0123abcd", "/sys/fs/cgroup/memory", "cgroup", "rw,memory");
        /* the kernel escapes spaces as \040; the parser hands them back as is */
        mi_ok("50 31 0:40 / /mnt/my\\040cg rw - cgroup2 none rw", "/", "/mnt/my\\040cg", "cgroup2",
              "rw");
        /* an `ip netns` mount: nsfs shows the namespace where the root is */
        mi_ok("612 26 0:4 net:[4026532400] /run/netns/rfb1c rw - nsfs nsfs rw", "net:[4026532400]",
              "/run/netns/rfb1c", "nsfs", "rw");
        /* runs of spaces between fields are tolerated */
        mi_ok("41  31 0:38 /  /sys/fs/cgroup/unified rw  -  cgroup2 cgroup2  rw", "/",
              "/sys/fs/cgroup/unified", "cgroup2", "rw");

        MI_BAD("", -EINVAL, "empty");
        MI_BAD("   ", -EINVAL, "only spaces");
        MI_BAD("41", -EINVAL, "one field");
        MI_BAD("41 31 0:38 /", -EINVAL, "four fields");
        MI_BAD("41 31 0:38 / /sys/fs/cgroup/unified", -EINVAL, "five fields, no options");
        MI_BAD("41 31 0:38 / /sys/fs/cgroup/unified rw,relatime cgroup2 cgroup2 rw", -EINVAL,
               "no \" - \" separator");
        MI_BAD("41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:5 cgroup2 cgroup2 rw",
               -EINVAL, "optional field but no separator");
        MI_BAD("41 31 0:38 / /sys/fs/cgroup/unified rw,relatime -- cgroup2 cgroup2 rw", -EINVAL,
               "\"--\" is not the separator");
        MI_BAD("41 31 0:38 / /sys/fs/cgroup/unified rw,relatime -cgroup2 cgroup2 rw", -EINVAL,
               "\"-\" glued to the fs type is not the separator");
        MI_BAD("41 31 0:38 / /sys/fs/cgroup/unified rw,relatime -", -EINVAL,
               "nothing after the separator");
        MI_BAD("41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2", -EINVAL,
               "fs type only after the separator");
        MI_BAD("41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2", -EINVAL,
               "no super options");
        MI_BAD("41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 ", -EINVAL,
               "no super options, trailing space");
        MI_BAD("41 31 0:38 a /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw", -EINVAL,
               "relative root (cgroup2)");
        MI_BAD("41 31 0:38 net:[1] /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory", -EINVAL,
               "an object as the root of a cgroup mount");
        MI_BAD("41 31 0:38 / sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw", -EINVAL,
               "relative mount point");
        MI_BAD("41 31 0:38 / - rw - cgroup2 cgroup2 rw", -EINVAL, "mount point \"-\"");

        /* len is the whole truth: the super options end at len */
        {
                static const char s[] = "41 31 0:38 / /u rw - cgroup2 cgroup2 rw,nsdelegate";
                size_t cut = sizeof s - 1 - strlen(",nsdelegate");
                char *b = exact(s, cut);
                struct cgroup_mount_line m;
                if (is_int(cgroup_parse_mountinfo_line(b, cut, &m), 0,
                           "mountinfo parses only the first len bytes"))
                        ok(field_is(b, cut, m.super, m.super_len, "rw"),
                           "... super options stop at len");
                free(b);
                cut = sizeof s - 1 - strlen(" rw,nsdelegate");
                b = exact(s, cut);
                is_int(cgroup_parse_mountinfo_line(b, cut, &m), -EINVAL,
                       "mountinfo cut before the super options is rejected");
                free(b);
        }

        /* CGROUP_LINE_MAX */
        {
                static const char head[] = "41 31 0:38 / /", tail[] = " rw - cgroup2 cgroup2 rw";
                size_t hl = sizeof head - 1, tl = sizeof tail - 1;
                char *b = malloc(CGROUP_LINE_MAX + 1);
                struct cgroup_mount_line m;
                if (!b)
                        exit(2);
                for (size_t total = CGROUP_LINE_MAX; total <= CGROUP_LINE_MAX + 1; total++) {
                        memcpy(b, head, hl);
                        memset(b + hl, 'm', total - hl - tl);
                        memcpy(b + total - tl, tail, tl);
                        is_int(cgroup_parse_mountinfo_line(b, total, &m),
                               total > CGROUP_LINE_MAX ? -E2BIG : 0,
                               "a mountinfo line of %zu bytes -> %s", total,
                               total > CGROUP_LINE_MAX ? "-E2BIG" : "parses");
                }
                free(b);
        }
}

/* ---- controller lists ----------------------------------------------------------- */

static void list_is(const char *list, size_t len, const char *name, bool want)
{
        char *b = exact(list, len);

        ok(cgroup_list_has(b, len, name) == want, "\"%s\" %s in \"%.*s\"", name,
           want ? "is" : "is not", (int)len, list);
        free(b);
}
#define LIST(lit, name, want) list_is((lit), strlen(lit), (name), (want))

static void test_list_has(void)
{
        LIST("cpu,cpuacct", "cpu", true);
        LIST("cpu,cpuacct", "cpuacct", true);
        LIST("cpuacct", "cpu", false);
        LIST("cpuacct,cpu", "cpu", true);
        LIST("cpuacct", "cpuacct,", false);
        LIST("cpu", "cpuacct", false);
        LIST("rw,cpu,cpuacct", "cpu", true);
        LIST("rw,memory", "memory", true);
        LIST("rw,memory", "mem", false);
        LIST("rw,memory", "emory", false);
        LIST("rw,nomemory", "memory", false);
        LIST("rw,memory_recursiveprot", "memory", false);
        LIST("net_cls,net_prio", "net_prio", true);
        LIST("net_cls,net_prio", "net", false);
        LIST("rw,name=systemd", "name=systemd", true);
        LIST("rw,name=systemd", "systemd", false);
        LIST("memory", "memory", true);
        LIST("memory,", "memory", true);
        LIST(",memory", "memory", true);
        LIST("", "memory", false);
        LIST("rw,MEMORY", "memory", false);
        /* the list ends at len */
        list_is("cpu,memory", 3, "memory", false);
        list_is("cpu,memory", 3, "cpu", true);
        list_is("memoryX", 6, "memory", true);
        list_is("rw,mem", 6, "memory", false);
}

/* ---- this machine's own files ------------------------------------------------------ */

/* Read a whole /proc file; returns its length or -1. */
static long slurp(const char *path, char *buf, size_t size)
{
        FILE *f = fopen(path, "re");
        if (!f)
                return -1;
        size_t n = fread(buf, 1, size - 1, f);
        fclose(f);
        buf[n] = '\0';
        return (long)n;
}

static void test_this_machine(void)
{
        static char buf[1 << 20];
        unsigned lines, parsed, cgroup_mounts;
        long n;

        if ((n = slurp("/proc/self/mountinfo", buf, sizeof buf)) < 0) {
                diag("no /proc/self/mountinfo: this machine's lines not checked");
                return;
        }
        lines = parsed = cgroup_mounts = 0;
        for (char *l = buf, *nl; l < buf + n; l = nl + 1) {
                nl = memchr(l, '\n', (size_t)(buf + n - l));
                if (!nl)
                        nl = buf + n;
                size_t len = (size_t)(nl - l);
                char *b = exact(l, len);
                struct cgroup_mount_line m;
                int r = cgroup_parse_mountinfo_line(b, len, &m);
                lines++;
                if (r == 0 || (r == -E2BIG && len > CGROUP_LINE_MAX))
                        parsed++;
                else
                        diag("unparsed: %.*s", (int)len, l);
                if (r == 0 && ((m.fstype_len == 6 && memcmp(m.fstype, "cgroup", 6) == 0) ||
                               (m.fstype_len == 7 && memcmp(m.fstype, "cgroup2", 7) == 0)))
                        cgroup_mounts++;
                free(b);
        }
        is_int(parsed, lines, "every line of this machine's mountinfo parses (%u)", lines);
        ok(cgroup_mounts > 0, "... and %u of them are cgroup mounts", cgroup_mounts);

        if ((n = slurp("/proc/self/cgroup", buf, sizeof buf)) < 0) {
                diag("no /proc/self/cgroup: this machine's lines not checked");
                return;
        }
        lines = parsed = 0;
        for (char *l = buf, *nl; l < buf + n; l = nl + 1) {
                nl = memchr(l, '\n', (size_t)(buf + n - l));
                if (!nl)
                        nl = buf + n;
                size_t len = (size_t)(nl - l);
                char *b = exact(l, len);
                struct cgroup_proc_line c;
                lines++;
                if (cgroup_parse_proc_line(b, len, &c) == 0)
                        parsed++;
                else
                        diag("unparsed: %.*s", (int)len, l);
                free(b);
        }
        ok(lines > 0 && parsed == lines,
           "every line of this machine's /proc/self/cgroup parses (%u)", lines);
}

/* cgroup_path_check: where an OCI cgroupsPath may place a run */
static void test_path_check(void)
{
        static const struct {
                const char *path;
                int want;
        } cases[] = {
                {"/default/ctr1", 0},
                {"/kubepods/burstable/pod1234/abcd", 0},
                {"rel/leaf", 0},
                {"leaf", 0},
                {"/", -EINVAL},
                {"", -EINVAL},
                {"/a/../b", -EINVAL},
                {"../b", -EINVAL},
                {"/a/./b", -EINVAL},
                {"/a//b", -EINVAL},
                {"/a/b/", -EINVAL},
                {"/a/\nb", -EINVAL},
                {"system.slice:libpod:abc", -EOPNOTSUPP},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
                is_int(cgroup_path_check(cases[i].path, strlen(cases[i].path)), cases[i].want,
                       "cgroup path \"%s\"", cases[i].path);
        char big[CGROUP_PATH_MAX + 2];
        memset(big, 'a', sizeof big);
        for (size_t i = 0; i < sizeof big; i += 200)
                big[i] = '/';
        is_int(cgroup_path_check(big, CGROUP_PATH_MAX + 1), -E2BIG,
               "a path past its bound: refused");
        char comp[300] = "/";
        memset(comp + 1, 'c', 256);
        comp[257] = '\0';
        is_int(cgroup_path_check(comp, strlen(comp)), -EINVAL, "a component of 256 bytes: refused");
}

int main(void)
{
        test_proc_line();
        test_mountinfo_line();
        test_list_has();
        test_path_check();
        test_this_machine();
        return done();
}
