/*
 * tap.h — a tiny TAP (Test Anything Protocol) producer for the unit tests.
 *
 * Header-only, no dependencies beyond libc. Usage:
 *
 *     plan(3);                       // optional; without it "1..N" is printed by done()
 *     ok(x > 0, "x is positive");
 *     is_int(f(), -EINVAL, "f rejects %s", "junk");
 *     is_str(name, "agent", "default agent");
 *     return done();                 // 0 if every test passed and the plan held, else 1
 *
 * Output: "1..N", then "ok N - name" / "not ok N - name" per check, with
 * "# got/expected" diagnostics after a failure. All on stdout so the order
 * is kept; meson runs the programs with protocol 'tap'.
 *
 * Each test program includes this once; everything here is static.
 */
#pragma once

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "shared/macro.h"

static struct {
        int planned; /* -1 = no plan announced */
        int run;
        int failed;
} tap_state = {.planned = -1};

/* Announce the number of checks up front. */
static inline void plan(int n)
{
        tap_state.planned = n;
        printf("1..%d\n", n);
        fflush(stdout);
}

static inline _printf_(2, 0) void tap_vreport(bool pass, const char *fmt, va_list ap)
{
        tap_state.run++;
        if (!pass)
                tap_state.failed++;
        char name[512];
        vsnprintf(name, sizeof name, fmt, ap);
        printf("%sok %d - ", pass ? "" : "not ", tap_state.run);
        /* keep the line a TAP line: no raw controls, and '#' would start a directive */
        for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
                if (*c < 0x20 || *c == 0x7f)
                        printf("\\x%02x", *c);
                else if (*c == '#' || *c == '\\')
                        printf("\\%c", *c);
                else
                        putchar(*c);
        }
        putchar('\n');
        fflush(stdout);
}

/* Print a diagnostic line ("# ..."); never affects the result. */
static inline _printf_(1, 2) void diag(const char *fmt, ...)
{
        va_list ap;

        fputs("# ", stdout);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
}

/* One check: passes if `cond` is true. Returns cond. */
static inline _printf_(4, 5) bool tap_ok(bool cond, const char *file, int line, const char *fmt,
                                         ...)
{
        va_list ap;

        va_start(ap, fmt);
        tap_vreport(cond, fmt, ap);
        va_end(ap);
        if (!cond)
                diag("  failed at %s:%d", file, line);
        return cond;
}

static inline _printf_(5, 6) bool tap_is_int(intmax_t got, intmax_t want, const char *file,
                                             int line, const char *fmt, ...)
{
        va_list ap;
        bool pass = got == want;

        va_start(ap, fmt);
        tap_vreport(pass, fmt, ap);
        va_end(ap);
        if (!pass) {
                diag("  failed at %s:%d", file, line);
                diag("       got: %jd", got);
                diag("  expected: %jd", want);
        }
        return pass;
}

static inline _printf_(5, 6) bool tap_is_str(const char *got, const char *want, const char *file,
                                             int line, const char *fmt, ...)
{
        va_list ap;
        bool pass = (got == NULL && want == NULL) || (got && want && strcmp(got, want) == 0);

        va_start(ap, fmt);
        tap_vreport(pass, fmt, ap);
        va_end(ap);
        if (!pass) {
                diag("  failed at %s:%d", file, line);
                diag("       got: %s%s%s", got ? "'" : "", got ? got : "NULL", got ? "'" : "");
                diag("  expected: %s%s%s", want ? "'" : "", want ? want : "NULL", want ? "'" : "");
        }
        return pass;
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(got, want, ...)                                                                     \
        tap_is_int((intmax_t)(got), (intmax_t)(want), __FILE__, __LINE__, __VA_ARGS__)
#define is_str(got, want, ...) tap_is_str((got), (want), __FILE__, __LINE__, __VA_ARGS__)

/*
 * Finish: print the plan if none was announced, report a plan mismatch,
 * and return the exit status (0 only if all checks ran and passed).
 */
static inline int done(void)
{
        if (tap_state.planned < 0)
                printf("1..%d\n", tap_state.run);
        else if (tap_state.planned != tap_state.run)
                diag("planned %d tests but ran %d", tap_state.planned, tap_state.run);
        if (tap_state.failed)
                diag("failed %d of %d tests", tap_state.failed, tap_state.run);
        fflush(stdout);
        return tap_state.failed || (tap_state.planned >= 0 && tap_state.planned != tap_state.run);
}
