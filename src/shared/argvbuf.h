/*
 * argvbuf.h — a command line passed as bytes: NUL-terminated strings back
 * to back, as /proc/PID/cmdline holds them.
 *
 * The daemon starts each run's supervisor as `ringfence run --args-fd N`
 * with the rest of the command line in a sealed memfd (src/daemon/daemon.c,
 * src/cli/main.c), so a caller's environment values, paths and task never
 * appear in a process's command line, which every local user can read.
 */
#pragma once

#include <stddef.h>

#define ARGVBUF_MAX_BYTES ((size_t)1 << 20) /* the whole command line */
#define ARGVBUF_MAX_ARGS  8192

/*
 * argvbuf_split — buf[0, len): strings each ended by a NUL, the last at
 * buf[len - 1]; out[0, max) set to point at each, in order (into buf:
 * nothing is copied). Pure. The count, or -EINVAL (len 0, or the last
 * string has no NUL), -E2BIG (more than max strings or len over
 * ARGVBUF_MAX_BYTES).
 */
int argvbuf_split(const char *buf, size_t len, const char **out, size_t max);

/*
 * argvbuf_join — argv[0, n) as such bytes: a malloc'd *buf of *len bytes
 * (the caller frees it). Pure. 0, or -E2BIG past the bounds above,
 * -ENOMEM.
 */
int argvbuf_join(const char *const *argv, size_t n, char **buf, size_t *len);
