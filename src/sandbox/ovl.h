/*
 * ovl.h — an overlay mount's layers, read from its super options.
 *
 * An engine's container root is often an overlay mount (Podman's overlay
 * driver, containerd's overlayfs snapshotter), which the kernel cannot
 * idmap as a whole. A root run needs the image owned by the run's own user:
 * the supervisor reads the overlay's layers (ovl_parse_super, pure), idmaps
 * each, and stacks them, read-only and topmost first, into an overlay of
 * its own (launch.c, tree_from_host).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define OVL_LAYERS_MAX    128       /* layers of one root (the kernel takes 500) */
#define OVL_PATH_MAX      4096      /* one layer's path, decoded, with its NUL */
#define OVL_SUPER_MAX     65536     /* super options we read at most */
#define OVL_MOUNTINFO_MAX (8 << 20) /* /proc/self/mountinfo read at most */

struct ovl_layers {
        char path[OVL_LAYERS_MAX][OVL_PATH_MAX]; /* topmost first: upper, then lowers */
        size_t n;
        bool has_upper;
};

/*
 * ovl_parse_super — the layers of an overlay from its super options (len
 * bytes, as the fourth-from-last field of a mountinfo line): the upper
 * directory (if any) first, then the lower ones in order, each decoded and
 * absolute. Pure. 0; -EINVAL malformed (no lower layer, a relative or
 * unclean path, a bad escape); -E2BIG past the bounds above; -EOPNOTSUPP
 * for what plain layers cannot carry (data-only layers, metacopy, verity).
 */
int ovl_parse_super(const char *opts, size_t len, struct ovl_layers *out);
