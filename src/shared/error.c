/*
 * error.c — struct rf_error helpers and the wrap helper rf_why (see error.h):
 * the one place messages are formatted into an rf_error or a caller's buffer.
 */
#include <stdio.h>
#include <string.h>

#include "error.h"

int rf_error_vset(struct rf_error *err, int code, const char *fmt, va_list ap)
{
        if (!err)
                return code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        err->code = code;
        return code;
}

int rf_error_set(struct rf_error *err, int code, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        rf_error_vset(err, code, fmt, ap);
        va_end(ap);
        return code;
}

int rf_why(char *why, size_t len, int r, const char *fmt, ...)
{
        if (!why || len == 0)
                return r;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
        return r;
}

void rf_error_format(const struct rf_error *err, char *buf, size_t len)
{
        size_t n = 0;

        if (len == 0)
                return;
        buf[0] = '\0';
        if (err->file[0]) {
                if (err->line)
                        n += (size_t)snprintf(buf + n, len - n, "%s:%u:%u: ", err->file, err->line,
                                              err->col);
                else
                        n += (size_t)snprintf(buf + n, len - n, "%s: ", err->file);
        }
        if (n < len && err->keypath[0])
                n += (size_t)snprintf(buf + n, len - n, "%s: ", err->keypath);
        if (n < len)
                snprintf(buf + n, len - n, "%s", err->msg[0] ? err->msg : "unknown error");
}
