/*
 * hostcmd.h — find a command as the caller would on the host, and what of
 * the host a run must see to run it (for hints about what a run does not
 * see, and for profiles that mount an agent's install tree).
 *
 * What is mounted, the run can read: an agent's install tree, never the
 * directories around it. host_tree (pure) decides it from two paths; see
 * its contract for the layouts it knows and what it never mounts.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* the homes host_tree takes: the caller's $HOME, and where it resolves to */
#define HOST_TREE_HOMES_MAX 4

/*
 * host_tree — the directories (at most two) to mount read-only so that a
 * run can execute `found`, the executable as PATH names it, whose symbolic
 * links lead to `real` (its realpath(3); NULL or equal to found: not a
 * link). Both absolute and normal (no empty, "." or ".." component, no
 * trailing '/'), at most PATH_MAX - 1 bytes. Pure: no file system access.
 *
 * root[] gets the first mount, extra[] the second or "" (neither is
 * nested in the other). In order, the first that applies:
 *  1. a prefix: found is PREFIX/bin/NAME, a link into PREFIX/lib, lib64 or
 *     libexec (an npm prefix: bin/claude -> ../lib/node_modules/...):
 *     root PREFIX.
 *  2. a node_modules/.bin entry (a link into its node_modules, or a shim):
 *     root that node_modules (the package and the dependencies npm
 *     hoisted beside it).
 *  3. not a link: root found's directory.
 *  4. otherwise root found's directory (the link's, which PATH names) and
 *     extra the target's own tree: its package directory when it lies in
 *     a node_modules (the one under the outermost node_modules, @scope
 *     included); its version directory in a `versions` layout
 *     (.../versions/X/...; the `versions` directory itself when the
 *     target is .../versions/X, Claude Code's native installer); a tree
 *     whose bin/ holds the target (a venv, /opt/NAME); else the target's
 *     directory. One of them only when it holds the other.
 * A directory that may not be mounted is never given: "/", one component
 * deep (/opt, /tmp), a home or an ancestor of one (each of homes[], /root,
 * /home/NAME), a home's dot directory (~/.local, ~/.config, ~/.ssh: what
 * is there is the user's, not an install's), .local, .config, .cache,
 * .local/share and .local/state anywhere, /var/tmp, /dev/shm, /run/user
 * and /run/user/UID. In its place: for a rule above, the next rule; for
 * found's directory, found itself when it is the executable (else
 * nothing: extra moves to root); for the target's directory, the target
 * file. So a link and its target far apart are mounted each, never their
 * common parent.
 *
 * homes: n_homes (at most HOST_TREE_HOMES_MAX) paths, NULL or relative
 * ones ignored. 0, or -EINVAL for a path that is not absolute and normal,
 * found or real that is "/", a home or above one (not a file), or too many
 * homes.
 */
int host_tree(const char *found, const char *real, const char *const *homes, size_t n_homes,
              char root[PATH_MAX], char extra[PATH_MAX]);

/*
 * host_command_for — `cmd` looked up as the caller would: a name through
 * the PATH given (the caller's; NULL: none), a path as it is; an
 * executable regular file. Reads the file system as the calling process
 * (its fsuid: the caller's, where caller_enter set it). On success 0,
 * found[] the executable's path with its directory resolved (the
 * directory is what the run's PATH names and what is mounted; the last
 * component as named: a link stays a link), root[] and extra[] as
 * host_tree gives them, for `home` (the caller's home, NULL: none) and
 * where it resolves to. -ENOENT when the host has no such executable.
 */
int host_command_for(const char *cmd, const char *path, const char *home, char found[PATH_MAX],
                     char root[PATH_MAX], char extra[PATH_MAX]);

/*
 * host_shim_version — where a version manager's shim would lead: for a
 * PATH entry `dir` (dir_len bytes) ending in "/shims" (pyenv, rbenv: ROOT/
 * shims) and the first word of ROOT/version's text `version`, the file
 * ROOT/versions/VERSION/bin/cmd in out[]. 0; -ENOENT for a directory that
 * is not a shim one, a version that is empty, "system", dotted or holds a
 * '/', a cmd with a '/'; -ENAMETOOLONG. Pure. host_command_for takes it
 * instead of the shim (which cannot run in a run: it execs the manager)
 * and skips a shim directory otherwise.
 */
int host_shim_version(const char *dir, size_t dir_len, const char *cmd, const char *version,
                      char out[PATH_MAX]);

/* host_command — host_command_for with this process's $HOME. */
int host_command(const char *cmd, const char *path, char found[PATH_MAX], char root[PATH_MAX],
                 char extra[PATH_MAX]);

/* host_path_visible — path lies in what every run sees of the host (/usr
 * and the merged-/usr links): no mount needed. Pure. */
bool host_path_visible(const char *path);
