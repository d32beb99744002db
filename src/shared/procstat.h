/*
 * procstat.h — the fields of /proc/PID/stat ringfence reads: the process's
 * name (as the kernel shows it: at most 15 bytes, any bytes but NUL — it is
 * the process's own, shown inert by callers), its state and its parent.
 * procstat_parse is pure and fuzzed (tests/fuzz/fuzz_procstat.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define PROCSTAT_COMM_MAX 64 /* bytes of a name kept (the kernel's are 15) */

struct procstat {
        char comm[PROCSTAT_COMM_MAX + 1]; /* NUL-terminated, cut at the bound */
        char state;                       /* R, S, D, Z, X, ... */
        pid_t ppid;
};

/*
 * procstat_parse — buf (len bytes, need not be NUL-terminated): "PID (COMM)
 * STATE PPID ...", COMM ending at the last ')'. 0, or -EBADMSG. Pure.
 */
int procstat_parse(const char *buf, size_t len, struct procstat *out);

/*
 * procstat_uid_map_initial — whether `buf` (len bytes, need not be
 * NUL-terminated), a uid_map's text, is the initial user namespace's: one
 * line mapping 0 to 0 for 4294967295 ids (fields separated by any blanks,
 * an optional final newline). Anything else, and anything malformed: false.
 * Pure.
 */
bool procstat_uid_map_initial(const char *buf, size_t len);

/* procstat_read — /proc/PID/stat of `pid`, parsed. 0, -ESRCH when it is
 * gone (or not ours to see), -EBADMSG. */
int procstat_read(pid_t pid, struct procstat *out);
