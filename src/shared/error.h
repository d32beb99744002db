/*
 * error.h — the detail a failing call hands back to the one place that prints.
 *
 * Library code never prints. Functions return -errno and, where the caller
 * needs more (a policy file position, which setup step failed), fill a
 * struct rf_error. main()/the dispatch loops turn it into one line.
 */
#pragma once

#include <stdarg.h>
#include <stddef.h>

#include "macro.h"

#define RF_ERROR_MSG_MAX  512
#define RF_ERROR_PATH_MAX 256

struct rf_error {
        int code;                        /* negative errno, 0 if unset */
        unsigned line, col;              /* 1-based position in `file`, 0 if none */
        char file[RF_ERROR_PATH_MAX];    /* input file name, "" if none */
        char keypath[RF_ERROR_PATH_MAX]; /* e.g. "limits.memory", "" if none */
        char msg[RF_ERROR_MSG_MAX];      /* what failed and why, no trailing newline */
};

/*
 * rf_error_set — record `code` and a printf-style message into `err` (which
 * may be NULL). Returns `code` so callers can `return rf_error_set(err, -EINVAL, ...)`.
 * Keeps any file/line/col already set.
 */
int rf_error_set(struct rf_error *err, int code, const char *fmt, ...) _printf_(3, 4);

/*
 * rf_error_vset — rf_error_set() with a va_list: the one formatter of an
 * rf_error's message (the JSON and policy parsers add their positions).
 */
int rf_error_vset(struct rf_error *err, int code, const char *fmt, va_list ap) _printf_(3, 0);

/*
 * rf_why — the wrap helper for code that reports into a caller's text
 * buffer instead of an rf_error (the daemon's API and config, secret
 * bindings and providers): printf into `why` (`len` bytes, truncated and
 * NUL-terminated; `why` may be NULL or `len` 0) and return `r`, so a caller
 * writes `return rf_why(why, len, -EINVAL, "...")` (or an HTTP status).
 */
int rf_why(char *why, size_t len, int r, const char *fmt, ...) _printf_(4, 5);

/*
 * rf_error_format — write the one-line human form of `err` into buf:
 * "file:line:col: keypath: msg" with the parts that are set.
 */
void rf_error_format(const struct rf_error *err, char *buf, size_t len);
