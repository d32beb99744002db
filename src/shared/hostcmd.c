/*
 * hostcmd.c — host_tree, host_command_for, host_command, host_path_visible
 * (hostcmd.h).
 *
 * Design: two halves. host_command_for reads the file system as the
 * calling process (faccessat(2) with AT_EACCESS: its file-system identity,
 * which a caller's fsuid sets; realpath(3)): it only ever names what the
 * caller could run itself. host_tree is pure: from the executable's path
 * and where its links lead it decides what to mount, so the unit test
 * (tests/unit/test_hostcmd.c) and the fuzz target feed it paths.
 *
 * Threat notes: a mount the profile adds is readable by the agent for the
 * whole run, so the tree is the install's and nothing around it. The old
 * rule, "the common root of the link and its target", mounted ~/.local for
 * ~/.local/bin/claude -> ~/.local/share/claude/versions/X (the keyrings in
 * ~/.local/share with it), $HOME for ~/bin/x -> ~/proj/x (which also broke
 * the run's private home: 125) and /x for /x/a/bin/x -> /x/b/x. Now a
 * common parent is mounted only where it is a known install layout (a
 * prefix whose bin/ links into its lib/, a node_modules with its .bin),
 * and a home, its ancestors and its dot directories never are, whatever
 * the layout says.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/hostcmd.h"
#include "shared/macro.h"

/* p absolute and normal: no empty, "." or ".." component, no trailing '/'
 * (but "/"), shorter than PATH_MAX */
static bool path_normal(const char *p)
{
        if (!p || p[0] != '/' || strnlen(p, PATH_MAX) >= PATH_MAX)
                return false;
        if (!p[1])
                return true;
        for (const char *c = p; *c;) {
                c++; /* past the '/' */
                size_t n = strcspn(c, "/");
                if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                c += n;
        }
        return true;
}

/* p is dir or lies beneath it (both normal) */
static bool path_within(const char *p, const char *dir)
{
        size_t n = strlen(dir);
        if (n == 1)
                return true; /* "/" */
        return !strncmp(p, dir, n) && (p[n] == '\0' || p[n] == '/');
}

/* the directory of p (normal, not "/") */
static void path_dir(char out[PATH_MAX], const char *p)
{
        const char *s = strrchr(p, '/');
        size_t n = s == p ? 1 : (size_t)(s - p);
        memcpy(out, p, n);
        out[n] = '\0';
}

static const char *path_base(const char *p)
{
        return strrchr(p, '/') + 1;
}

static size_t path_depth(const char *p)
{
        size_t d = 0;
        for (const char *c = p; *c; c++)
                d += *c == '/' && c[1];
        return d;
}

/* component i (0: the first) of p: its offset, length in *len; -1 none */
static ptrdiff_t path_comp(const char *p, size_t i, size_t *len)
{
        const char *c = p;
        for (size_t k = 0;; k++) {
                if (*c != '/' || !c[1])
                        return -1;
                c++;
                size_t n = strcspn(c, "/");
                if (k == i) {
                        *len = n;
                        return c - p;
                }
                c += n;
        }
}

static bool comp_is(const char *p, size_t i, const char *name)
{
        size_t n;
        ptrdiff_t o = path_comp(p, i, &n);
        return o >= 0 && n == strlen(name) && !strncmp(p + o, name, n);
}

static bool ends_with(const char *p, const char *tail)
{
        size_t n = strlen(p), t = strlen(tail);
        return n >= t && !strcmp(p + n - t, tail);
}

/* a home as given, cleaned: '/' runs as one, no trailing '/'; "" when it
 * is not absolute or too long (".." stays: the caller also passes where
 * it resolves to) */
static void home_clean(char out[PATH_MAX], const char *h)
{
        size_t n = 0;
        out[0] = '\0';
        if (!h || h[0] != '/' || strnlen(h, PATH_MAX) >= PATH_MAX)
                return;
        for (const char *c = h; *c; c++)
                if (*c != '/' || n == 0 || out[n - 1] != '/')
                        out[n++] = *c;
        while (n > 1 && out[n - 1] == '/')
                n--;
        out[n] = '\0';
}

struct homes {
        char h[HOST_TREE_HOMES_MAX][PATH_MAX];
        size_t n;
};

/*
 * p (normal) may be mounted: not a directory that holds what is not the
 * install's (hostcmd.h, host_tree: the list)
 */
static bool tree_allowed(const char *p, const struct homes *hs)
{
        static const char *const shared[] = {"/var/tmp", "/dev/shm", "/run/user"};
        static const char *const dot[] = {".local", ".config", ".cache"};
        size_t d = path_depth(p);

        if (d < 2)
                return false;
        for (size_t i = 0; i < hs->n; i++) {
                if (!hs->h[i][0])
                        continue;
                if (path_within(hs->h[i], p))
                        return false; /* a home or above it */
                if (path_within(p, hs->h[i]) && d == path_depth(hs->h[i]) + 1 &&
                    path_base(p)[0] == '.')
                        return false; /* a home's dot directory */
        }
        /* every user's home, as the usual places name them, and its dot
         * directories (/root itself is one component deep) */
        if (comp_is(p, 0, "root") && d == 2 && path_base(p)[0] == '.')
                return false;
        if (comp_is(p, 0, "home") && (d == 2 || (d == 3 && path_base(p)[0] == '.')))
                return false;
        if (comp_is(p, 0, "run") && comp_is(p, 1, "user") && d <= 3)
                return false;
        for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++)
                if (!strcmp(p, shared[i]))
                        return false;
        for (size_t i = 0; i < sizeof dot / sizeof dot[0]; i++)
                if (!strcmp(path_base(p), dot[i]))
                        return false;
        return !ends_with(p, "/.local/share") && !ends_with(p, "/.local/state");
}

/* real lies in PREFIX/lib, lib64 or libexec */
static bool in_prefix_lib(const char *real, const char *prefix)
{
        static const char *const lib[] = {"lib", "lib64", "libexec"};
        size_t n = strlen(prefix);
        if (!path_within(real, prefix) || real[n] != '/')
                return false;
        for (size_t i = 0; i < sizeof lib / sizeof lib[0]; i++) {
                size_t l = strlen(lib[i]);
                if (!strncmp(real + n + 1, lib[i], l) && real[n + 1 + l] == '/')
                        return true;
        }
        return false;
}

/* out = p's first `k` components; false when p has fewer */
static bool path_head(char out[PATH_MAX], const char *p, size_t k)
{
        size_t n;
        ptrdiff_t o = k ? path_comp(p, k - 1, &n) : 0;
        if (o < 0)
                return false;
        size_t end = k ? (size_t)o + n : 1;
        memcpy(out, p, end);
        out[end] = '\0';
        return true;
}

/* the first component of p named `name` with at least `after` more */
static ptrdiff_t comp_find(const char *p, const char *name, size_t after)
{
        size_t d = path_depth(p);
        for (size_t i = 0; i + after < d; i++)
                if (comp_is(p, i, name))
                        return (ptrdiff_t)i;
        return -1;
}

/*
 * The target's own tree (rule 4 of host_tree), allowed by tree_allowed;
 * the target file itself when none is. link_dir: found's directory (a
 * bin/'s tree that holds it too is their common parent: not taken).
 */
static void target_tree(char out[PATH_MAX], const char *real, const char *link_dir,
                        const struct homes *hs)
{
        size_t d = path_depth(real);
        ptrdiff_t i;

        /* a package in a node_modules: the outermost one's */
        if ((i = comp_find(real, "node_modules", 2)) >= 0) {
                size_t k = (size_t)i + 2, n;
                ptrdiff_t o = path_comp(real, (size_t)i + 1, &n);
                if (real[o] == '@')
                        k++; /* @scope/name */
                if (k < d && path_head(out, real, k) && tree_allowed(out, hs))
                        return;
        }
        /* a versions layout: versions/X/..., or versions/X the executable */
        if ((i = comp_find(real, "versions", 1)) >= 0) {
                size_t k = (size_t)i + 2 < d ? (size_t)i + 2 : (size_t)i + 1;
                if (path_head(out, real, k) && tree_allowed(out, hs))
                        return;
        }
        char dir[PATH_MAX];
        path_dir(dir, real);
        /* a tree whose bin/ holds it (a venv, /opt/NAME/bin) */
        if (!strcmp(path_base(dir), "bin") && path_depth(dir) >= 2) {
                path_dir(out, dir);
                if (tree_allowed(out, hs) && !path_within(link_dir, out))
                        return;
        }
        if (tree_allowed(dir, hs)) {
                memcpy(out, dir, strlen(dir) + 1);
                return;
        }
        memcpy(out, real, strlen(real) + 1);
}

int host_tree(const char *found, const char *real, const char *const *homes, size_t n_homes,
              char root[PATH_MAX], char extra[PATH_MAX])
{
        struct homes hs = {.n = 0};
        char dir[PATH_MAX], tree[PATH_MAX];

        root[0] = extra[0] = '\0';
        if (!path_normal(found) || !found[1] || (real && (!path_normal(real) || !real[1])) ||
            n_homes > HOST_TREE_HOMES_MAX || (n_homes && !homes))
                return -EINVAL;
        for (size_t i = 0; i < n_homes; i++) {
                home_clean(hs.h[hs.n++], homes[i]);
                /* an executable is a file: not a home, nor above one */
                if (hs.h[i][0] &&
                    (path_within(hs.h[i], found) || (real && path_within(hs.h[i], real))))
                        return -EINVAL;
        }
        bool link = real && strcmp(real, found) != 0;
        path_dir(dir, found);

        /* 1. a prefix whose bin/ links into its lib/ */
        if (link && !strcmp(path_base(dir), "bin") && path_depth(dir) >= 2) {
                path_dir(tree, dir);
                if (in_prefix_lib(real, tree) && tree_allowed(tree, &hs)) {
                        memcpy(root, tree, strlen(tree) + 1);
                        return 0;
                }
        }
        /* 2. node_modules/.bin: the node_modules it belongs to */
        if (ends_with(dir, "/node_modules/.bin")) {
                path_dir(tree, dir);
                if ((!link || path_within(real, tree)) && tree_allowed(tree, &hs)) {
                        memcpy(root, tree, strlen(tree) + 1);
                        return 0;
                }
        }
        bool dir_ok = tree_allowed(dir, &hs);
        /* 3. not a link: its directory, or the file */
        if (!link) {
                memcpy(root, dir_ok ? dir : found, strlen(dir_ok ? dir : found) + 1);
                return 0;
        }
        /* 4. the link's directory and the target's own tree */
        target_tree(tree, real, dir, &hs);
        if (path_within(dir, tree) || !dir_ok) {
                memcpy(root, tree, strlen(tree) + 1);
                return 0;
        }
        memcpy(root, dir, strlen(dir) + 1);
        if (!path_within(tree, dir))
                memcpy(extra, tree, strlen(tree) + 1);
        return 0;
}

/*
 * found = p with its directory resolved (realpath(3)) and its last
 * component as it is; p names an executable (checked by the caller)
 */
static int link_path(const char *p, char found[PATH_MAX])
{
        char dir[PATH_MAX], rdir[PATH_MAX];
        const char *slash = strrchr(p, '/');
        const char *base = slash ? slash + 1 : p;
        size_t n = slash ? (size_t)(slash - p) : 0;

        found[0] = '\0';
        if (!base[0] || !strcmp(base, ".") || !strcmp(base, ".."))
                return -ENOENT;
        if (n >= sizeof dir)
                return -ENAMETOOLONG;
        if (!slash)
                memcpy(dir, ".", 2);
        else if (n == 0)
                memcpy(dir, "/", 2);
        else {
                memcpy(dir, p, n);
                dir[n] = '\0';
        }
        if (!realpath(dir, rdir))
                return -errno;
        if ((size_t)snprintf(found, PATH_MAX, "%s/%s", rdir[1] ? rdir : "", base) >= PATH_MAX) {
                found[0] = '\0';
                return -ENAMETOOLONG;
        }
        return 0;
}

/* p is a regular file the calling process may execute */
static bool executable(const char *p)
{
        struct stat st;
        return faccessat(AT_FDCWD, p, X_OK, AT_EACCESS) == 0 && stat(p, &st) == 0 &&
               S_ISREG(st.st_mode);
}

int host_shim_version(const char *dir, size_t dir_len, const char *cmd, const char *version,
                      char out[PATH_MAX])
{
        out[0] = '\0';
        if (dir_len < 7 || memcmp(dir + dir_len - 6, "/shims", 6) || !version || !cmd[0] ||
            strchr(cmd, '/'))
                return -ENOENT;
        size_t vl = strcspn(version, " \t\r\n");
        /* one version name: no path, not "system" (the next PATH entry's) */
        if (vl == 0 || vl > 128 || memchr(version, '/', vl) ||
            (vl == 6 && !memcmp(version, "system", 6)) || (version[0] == '.'))
                return -ENOENT;
        if ((size_t)snprintf(out, PATH_MAX, "%.*s/versions/%.*s/bin/%s", (int)(dir_len - 6), dir,
                             (int)vl, version, cmd) >= PATH_MAX) {
                out[0] = '\0';
                return -ENAMETOOLONG;
        }
        return 0;
}

/* A version manager's shim directory on PATH (pyenv's, rbenv's: ROOT/shims):
 * the executable its global version names (ROOT/version), in cand[]; 0, or
 * -ENOENT (not a shim directory, no global version, "system": the next PATH
 * entry answers). A shim itself cannot run in a run (it execs the manager,
 * which reads the caller's files), so it is never what is found. */
static int shim_resolve(const char *dir, size_t n, const char *cmd, char cand[PATH_MAX])
{
        char vfile[PATH_MAX], version[160] = "";
        if (n < 7 || memcmp(dir + n - 6, "/shims", 6) ||
            (size_t)snprintf(vfile, sizeof vfile, "%.*s/version", (int)(n - 6), dir) >=
                    sizeof vfile)
                return -ENOENT;
        /* a regular file only: a FIFO (or a device) there would hold the
         * start in open or read, its terminating signals blocked */
        struct stat st;
        _cleanup_close_ int fd = open(vfile, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        ssize_t got = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
                              ? read(fd, version, sizeof version - 1)
                              : -1;
        if (got <= 0)
                return -ENOENT;
        version[got] = '\0';
        return host_shim_version(dir, n, cmd, version, cand);
}

int host_command_for(const char *cmd, const char *path, const char *home, char found[PATH_MAX],
                     char root[PATH_MAX], char extra[PATH_MAX])
{
        char real[PATH_MAX], rhome[PATH_MAX];

        found[0] = root[0] = extra[0] = '\0';
        if (!cmd || !cmd[0])
                return -ENOENT;
        if (strchr(cmd, '/')) {
                if (!executable(cmd) || link_path(cmd, found) < 0)
                        return -ENOENT;
        } else {
                for (const char *p = path; p && *p && !found[0];) {
                        size_t n = strcspn(p, ":");
                        char cand[PATH_MAX];
                        /* an absolute entry only: "" and "." are the
                         * current directory, which the run's is not */
                        bool shims = n > 6 && !memcmp(p + n - 6, "/shims", 6);
                        if (shims && shim_resolve(p, n, cmd, cand) == 0 && executable(cand) &&
                            link_path(cand, found) < 0)
                                found[0] = '\0';
                        else if (!shims && n > 0 && p[0] == '/' &&
                                 (size_t)snprintf(cand, sizeof cand, "%.*s/%s", (int)n, p, cmd) <
                                         sizeof cand &&
                                 executable(cand) && link_path(cand, found) < 0)
                                found[0] = '\0'; /* unresolvable: the next entry */
                        p += n + (p[n] == ':');
                }
                if (!found[0])
                        return -ENOENT;
        }
        const char *homes[2] = {home, NULL};
        if (home && home[0] == '/' && realpath(home, rhome))
                homes[1] = rhome;
        int r = host_tree(found, realpath(found, real) ? real : NULL, homes, 2, root, extra);
        if (r < 0) {
                found[0] = '\0';
                return -ENOENT;
        }
        return 0;
}

int host_command(const char *cmd, const char *path, char found[PATH_MAX], char root[PATH_MAX],
                 char extra[PATH_MAX])
{
        return host_command_for(cmd, path, getenv("HOME"), found, root, extra);
}

bool host_path_visible(const char *path)
{
        static const char *const sys[] = {"/usr", "/bin", "/sbin", "/lib", "/lib64"};
        for (size_t i = 0; i < sizeof sys / sizeof sys[0]; i++) {
                size_t n = strlen(sys[i]);
                if (!strncmp(path, sys[i], n) && (path[n] == '\0' || path[n] == '/'))
                        return true;
        }
        return false;
}
