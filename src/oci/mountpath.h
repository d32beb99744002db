/*
 * mountpath.h — a mount's destination resolved inside a container's root.
 *
 * A config names a destination as the container will see it, and an
 * image's symlinks are part of that view: Kubernetes mounts the service
 * account's token at /var/run/secrets/kubernetes.io/serviceaccount, where
 * an image's /var/run is a symlink to /run (or ../run). runc follows such
 * links inside the root (its securejoin); so does ringfence-oci, before
 * anything is planned, so that every check on a destination (never /proc,
 * never ringfence's /run/ringfence) and the order of mounts (parents
 * first) apply to the path the mount really lands on.
 *
 * Resolution is lexical over the image: each component is looked up under
 * what is resolved so far; a symlink's target is spliced in front of the
 * rest, an absolute one restarting at the container's root, and ".." never
 * climbs above the root (the CVE-2019-19921 / CVE-2021-30465 class: a link
 * pointing at "/../../../etc" stays inside). A missing component ends the
 * lookups (init creates the rest). init then opens the resolved path with
 * no symlink allowed at all (launch.c, RESOLVE_NO_SYMLINKS beneath the new
 * root) and mounts on that fd: a link swapped in after planning fails the
 * mount with ELOOP, it is never followed.
 */
#pragma once

#include <stddef.h>

#define OCI_LINKS_MAX 40 /* symlinks followed for one destination (the kernel's MAXSYMLINKS) */

/*
 * oci_readlink_fn — what the resolver knows of the root: `path` (absolute
 * in the container, no symlink in it but maybe its last component) read as
 * a link into buf (NUL-terminated). Returns the target's length, -EINVAL
 * when it is not a symlink, -ENOENT when it does not exist, or -errno.
 */
typedef int (*oci_readlink_fn)(void *ctx, const char *path, char *buf, size_t len);

/*
 * oci_path_resolve — `path` (absolute) resolved inside a root seen through
 * `rl`, into out (len bytes): absolute, clean ("/a/b", no ".", "..", "//"
 * or trailing slash), never above "/". Returns 0; -ELOOP past
 * OCI_LINKS_MAX links; -ENAMETOOLONG when a result or a spliced path does
 * not fit PATH_MAX or `len`; -EINVAL for a relative or empty path; another
 * -errno from `rl`. Pure but for `rl`; fuzzed (fuzz_oci_mountpath).
 */
int oci_path_resolve(const char *path, oci_readlink_fn rl, void *ctx, char *out, size_t len);

/*
 * oci_path_in_rootfs — oci_path_resolve over the directory `rootfd` (a
 * bundle's root.path, O_PATH): each prefix opened beneath it with no
 * symlink followed (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), its
 * last component read with readlinkat. Components at or beneath one of
 * `owned` (absolute paths, NULL-terminated: where ringfence's own layout
 * hides the image — /dev, /proc, /tmp) are not read from the image: they
 * are taken as they are. Same returns. Called by ringfence-oci before the
 * run is planned.
 */
int oci_path_in_rootfs(int rootfd, const char *path, const char *const *owned, char *out,
                       size_t len);
