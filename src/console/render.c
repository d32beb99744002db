/*
 * render.c — inert text for the console (see render.h).
 */
#include "console/render.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* the length of the well-formed UTF-8 sequence at s (1..4, its code point
 * in *cp), or 0: not UTF-8 */
static size_t utf8_seq(const unsigned char *s, size_t len, uint32_t *cp)
{
        unsigned char c = s[0];
        size_t n;
        uint32_t v, min;
        if (c < 0x80) {
                *cp = c;
                return 1;
        }
        if (c >= 0xc2 && c <= 0xdf) {
                n = 2, v = c & 0x1f, min = 0x80;
        } else if (c >= 0xe0 && c <= 0xef) {
                n = 3, v = c & 0x0f, min = 0x800;
        } else if (c >= 0xf0 && c <= 0xf4) {
                n = 4, v = c & 0x07, min = 0x10000;
        } else {
                return 0;
        }
        if (len < n)
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                v = v << 6 | (s[i] & 0x3f);
        }
        if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
                return 0;
        *cp = v;
        return n;
}

static void put_cp(struct json_buf *b, uint32_t cp)
{
        char u[4];
        size_t n;
        if (cp < 0x800) {
                u[0] = (char)(0xc0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
        } else {
                u[0] = (char)(0xe0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
                u[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
        }
        json_buf_append(b, u, n);
}

void console_inert(struct json_buf *b, const char *s, size_t len)
{
        const unsigned char *p = (const unsigned char *)s;
        bool cut = len > CONSOLE_TEXT_MAX;
        if (cut)
                len = CONSOLE_TEXT_MAX;
        for (size_t i = 0; i < len;) {
                uint32_t cp;
                size_t n = utf8_seq(p + i, len - i, &cp);
                char esc[16];
                if (n == 0) {
                        int k = snprintf(esc, sizeof esc, "\\x%02x", p[i]);
                        json_buf_append(b, esc, (size_t)k);
                        i++;
                        continue;
                }
                if (cp < 0x20)
                        put_cp(b, 0x2400 + cp);
                else if (cp == 0x7f)
                        put_cp(b, 0x2421);
                else if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
                         cp == 0x2028 || cp == 0x2029 || cp == 0x200e || cp == 0x200f ||
                         cp == 0x061c || cp == 0xfeff) {
                        int k = snprintf(esc, sizeof esc, "\\u%04x", (unsigned)cp);
                        json_buf_append(b, esc, (size_t)k);
                } else
                        json_buf_append(b, s + i, n);
                i += n;
        }
        if (cut)
                put_cp(b, 0x2026);
}

void console_html(struct json_buf *b, const char *s, size_t len)
{
        struct json_buf t = {0};
        console_inert(&t, s, len);
        for (size_t i = 0; i < t.len; i++) {
                const char *e = NULL;
                switch (t.data[i]) {
                case '&':
                        e = "&amp;";
                        break;
                case '<':
                        e = "&lt;";
                        break;
                case '>':
                        e = "&gt;";
                        break;
                case '"':
                        e = "&quot;";
                        break;
                case '\'':
                        e = "&#39;";
                        break;
                default:
                        break;
                }
                if (e)
                        json_buf_append(b, e, strlen(e));
                else
                        json_buf_append(b, t.data + i, 1);
        }
        if (t.error && !b->error)
                b->error = t.error;
        json_buf_done(&t);
}

void console_json_str(struct json_buf *b, const char *s, size_t len)
{
        struct json_buf t = {0};
        console_inert(&t, s, len);
        if (t.error) {
                if (!b->error)
                        b->error = t.error;
        } else {
                /* "</" inside a JSON string never closes a script: the
                 * console serves JSON only as application/json anyway */
                json_buf_append_string(b, t.data ? t.data : "", t.len);
        }
        json_buf_done(&t);
}

int console_array_next(const char *s, size_t len, size_t *pos, size_t *off, size_t *elen)
{
        size_t i = *pos;
        while (i < len &&
               (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t' || s[i] == ','))
                i++;
        if (i >= len)
                return -EBADMSG;
        if (s[i] == ']') {
                *pos = i + 1;
                return 0;
        }
        size_t start = i;
        int depth = 0;
        bool in_str = false;
        for (; i < len; i++) {
                char c = s[i];
                if (in_str) {
                        if (c == '\\')
                                i++; /* the escaped byte, whatever it is */
                        else if (c == '"')
                                in_str = false;
                        continue;
                }
                if (depth == 0 && i > start &&
                    (c == ',' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t'))
                        break; /* a scalar element ends */
                if (c == '"')
                        in_str = true;
                else if (c == '{' || c == '[') {
                        if (++depth > JSON_DEPTH_MAX)
                                return -EBADMSG;
                } else if (c == '}' || c == ']') {
                        if (--depth < 0)
                                return -EBADMSG; /* a ']' where an element was due */
                        if (depth == 0) {
                                i++;
                                break;
                        }
                }
        }
        if (depth != 0 || in_str || i > len)
                return -EBADMSG;
        *off = start;
        *elen = i - start;
        *pos = i;
        return 1;
}

void console_age(struct json_buf *b, int64_t ms)
{
        uint64_t s = ms > 0 ? (uint64_t)ms / 1000 : 0;
        char t[48];
        int n;
        if (s < 60)
                n = snprintf(t, sizeof t, "%llus", (unsigned long long)s);
        else if (s < 3600)
                n = snprintf(t, sizeof t, "%llum %llus", (unsigned long long)(s / 60),
                             (unsigned long long)(s % 60));
        else if (s < 86400)
                n = snprintf(t, sizeof t, "%lluh %llum", (unsigned long long)(s / 3600),
                             (unsigned long long)(s % 3600 / 60));
        else
                n = snprintf(t, sizeof t, "%llud %lluh", (unsigned long long)(s / 86400),
                             (unsigned long long)(s % 86400 / 3600));
        json_buf_append(b, t, (size_t)n);
}
