/*
 * hostcmd.h — find a command as the caller would on the host, and the tree
 * it lives in (for hints about what a run does not see, and for profiles
 * that mount an agent's install tree).
 */
#pragma once

#include <limits.h>
#include <stdbool.h>

/*
 * host_command — `cmd` looked up as the caller would: a name through the
 * PATH given (the caller's; NULL: none), a path as it is. On success 0,
 * found[] the executable's path (its directory is what PATH names), root[]
 * the tree to mount for it — the common root of found's directory and of
 * where its symlinks lead (an npm prefix for PREFIX/bin/claude ->
 * ../lib/node_modules/.../cli.js, not just bin/) — and extra[] the
 * directory the symlinks lead to when it shares no more than "/" with
 * found's (~/.local/bin/x -> /opt/x/bin/x: root is ~/.local/bin, extra
 * /opt/x/bin), else "". -ENOENT when the host has no such executable.
 */
int host_command(const char *cmd, const char *path, char found[PATH_MAX], char root[PATH_MAX],
                 char extra[PATH_MAX]);

/* host_path_visible — path lies in what every run sees of the host (/usr
 * and the merged-/usr links): no mount needed. Pure. */
bool host_path_visible(const char *path);
