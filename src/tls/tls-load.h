/*
 * tls-load.h — load the TLS-termination module (ringfence-tls.so) on demand.
 *
 * Called by the egress process of a run with TLS termination, before its
 * lockdown (it cannot open or map files after it). The supervisor checks
 * that the module is there (rf_tls_module_check) and, while it makes the
 * run's CA and trust files (tls/trustmake.h), snapshots it and checks its
 * version (rf_tls_module_version): it never maps OpenSSL, nor does any
 * process of a run without TLS termination.
 */
#pragma once

#include <stddef.h>

#include "tls/tlsterm.h"

/* The host's roots (PEM) and Java store, read by trust_load and overlaid
 * in the run (sandbox/plan.h). */
#define RF_TLS_HOST_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
#define RF_TLS_HOST_JAVA   "/etc/ssl/certs/java/cacerts"

struct rf_tls_module {
        void *handle;                   /* owned: dlopen handle */
        const struct rf_tls_vtable *vt; /* borrowed from the module; valid while loaded */
        char path[256];                 /* the file that was loaded */
};

/*
 * The module path this binary will load: the build tree's
 * RF_BUILD_ROOT/ringfence-tls.so when /proc/self/exe lives inside the build
 * tree (uninstalled test runs), else the installed RF_TLS_MODULE_PATH. Both
 * are fixed at build time; no environment variable is consulted. Writes a
 * NUL-terminated path into buf; 0, -ENAMETOOLONG.
 */
int rf_tls_module_path(char *buf, size_t size);

/* Why the module was refused, for a message: "not installed" (-ENOENT),
 * "writable by others than root" (-EPERM), else strerror. */
const char *rf_tls_file_why(int err);

/*
 * Load the module at `path` (absolute): opened O_NOFOLLOW, refused (-EPERM)
 * unless it is a regular file owned by root or by the caller's euid and
 * neither group- nor world-writable (same for its directory, unless that is
 * root-owned and sticky); then dlopen'ed through /proc/self/fd with
 * RTLD_NOW|RTLD_LOCAL (no re-resolution of the path), its vtable looked up
 * by RF_TLS_VTABLE_SYMBOL and checked (ABI version and size, else
 * -EPROTO), and init() called. On success fills *m (release with
 * rf_tls_unload). -ENOENT if absent, -ELIBBAD if dlopen fails.
 */
int rf_tls_load_path(const char *path, struct rf_tls_module *m);

/*
 * rf_tls_module_path() into path[size], then the checks of rf_tls_load_path
 * (the file opened and closed again, nothing mapped): 0, or what
 * rf_tls_load_path would fail with (-ENOENT, -EPERM, -ENAMETOOLONG).
 */
int rf_tls_module_check(char *path, size_t size);
/* The same, the checked file kept open: an O_RDONLY|O_CLOEXEC fd or -errno. */
int rf_tls_module_open(char *path, size_t size);

/* rf_tls_module_path() + rf_tls_load_path(). */
int rf_tls_load(struct rf_tls_module *m);

/* The largest module file a snapshot takes. */
#define RF_TLS_MODULE_MAX ((size_t)16 << 20)

/*
 * rf_tls_snapshot — the regular file open at `src` (at most `max` bytes)
 * copied into a new memfd named `name`, sealed against writes, growth and
 * shrinking: what a process reads later is what was there now, whatever
 * happens to the file. Returns the memfd (O_CLOEXEC) or -errno (-EINVAL
 * not a regular file, -EFBIG over max).
 */
int rf_tls_snapshot(int src, size_t max, const char *name);

/*
 * rf_tls_module_version — does the sealed snapshot fd (rf_tls_snapshot of
 * rf_tls_module_open's file)
 * name this binary's vtable symbol (RF_TLS_VTABLE_SYMBOL, NUL-terminated, in
 * its bytes)? 0, -EPROTO if not (a module of another version), -EBADF if fd
 * is no sealed snapshot. Nothing is loaded: the supervisor checks the module
 * this way at the run's start, the egress process loads it (rf_tls_load_fd,
 * which checks the vtable itself) at the run's first connection.
 */
int rf_tls_module_version(int fd);

/* rf_tls_load_fd — load the module from a sealed snapshot (checked with
 * memfd_sealed_size first: -EBADF otherwise), as rf_tls_load_path does
 * from a path. */
int rf_tls_load_fd(int fd, struct rf_tls_module *m);

/* dlclose the module (NULL handle is fine). Handles made through the vtable
 * must be freed first. */
void rf_tls_unload(struct rf_tls_module *m);
