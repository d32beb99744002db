/*
 * fuzz_console.c — libFuzzer target for what `ringfence console` reads
 * from a browser or shows of a run (src/console/auth.c, render.c): the
 * Cookie header, query and form fields, the Host header, a session lookup
 * and the inert rendering of any bytes.
 *
 * The input is copied into a heap buffer of exactly its length (no NUL),
 * so a read past `len` is an ASan report. Beyond "no crash, no UB": a
 * found cookie lies within the input; a decoded field has no NUL and fits
 * its bound; a host accepted ends with the port; inert text is valid
 * UTF-8 with no C0 control, and its HTML form has no '<', '>', '"' or
 * '\''.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "console/auth.h"
#include "console/render.h"

static bool valid_utf8_no_c0(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] < 0x20)
                        return false;
        struct json_buf b = {0};
        bool ok = json_buf_append_string(&b, s, n) == 0;
        json_buf_done(&b);
        return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct console_auth a;
        char *buf = malloc(size ? size : 1);
        if (!buf)
                abort();
        memcpy(buf, data, size);
        size_t off, vl;
        if (console_cookie(buf, size, CONSOLE_COOKIE, &off, &vl) == 0 &&
            (off > size || vl > size - off))
                abort();
        char out[CONSOLE_FIELD_MAX + 1];
        int n = console_field(buf, size, "csrf", out, sizeof out);
        if (n >= 0 && ((size_t)n > CONSOLE_FIELD_MAX || strlen(out) != (size_t)n))
                abort();
        if (console_host_ok(buf, size, 8650) && (size < 5 || memcmp(buf + size - 5, ":8650", 5)))
                abort();
        if (!a.token[0]) {
                unsigned char r[64] = {1};
                console_auth_token(&a, r, 0, 1000);
                (void)console_auth_login(&a, a.token, CONSOLE_TOKEN_HEX, r, 1);
        }
        if (console_auth_session(&a, buf, size, 2) >= 0 && !memmem(buf, size, a.s[0].id, 64))
                abort();
        struct json_buf b = {0};
        console_inert(&b, buf, size);
        if (!b.error && !valid_utf8_no_c0(b.data ? b.data : "", b.len))
                abort();
        json_buf_done(&b);
        console_html(&b, buf, size);
        for (size_t i = 0; !b.error && i < b.len; i++)
                if (strchr("<>\"'", b.data[i]) && b.data[i])
                        abort();
        json_buf_done(&b);
        console_json_str(&b, buf, size);
        json_buf_done(&b);
        /* array elements: each within the input, after the last, in order */
        size_t pos = 0, aoff, alen, last = 0;
        for (int k = 0; k < 4096 && console_array_next(buf, size, &pos, &aoff, &alen) > 0; k++) {
                if (aoff < last || aoff + alen > size || pos > size || alen == 0)
                        abort();
                last = aoff + alen;
        }
        free(buf);
        return 0;
}
