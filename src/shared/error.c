/*
 * error.c — struct rf_error helpers (see error.h).
 */
#include <stdio.h>
#include <string.h>

#include "error.h"

int rf_error_set(struct rf_error *err, int code, const char *fmt, ...)
{
        if (!err)
                return code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
        return code;
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
