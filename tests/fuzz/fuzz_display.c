/*
 * fuzz_display.c — libFuzzer target for the display escaping
 * (json_escape_for_message / json_escape_fwrite, src/shared/json.c): what
 * every human-readable output of run- and caller-chosen bytes goes through.
 *
 * Invariants on any input bytes:
 *   - the rendering is valid UTF-8 with no C0/C1 control, DEL, bidi or
 *     line/paragraph separator (json_text_is_safe);
 *   - it is unambiguous: decoding its escapes gives back the input exactly;
 *   - the bounded form is a prefix of the unbounded one, cut only between
 *     whole escapes/characters;
 *   - keep_quotes differs only in leaving '"' and '\\' raw, and is still
 *     terminal-safe.
 * A violated invariant aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                   \
        do {                                                                                       \
                if (!(x))                                                                          \
                        abort();                                                                   \
        } while (0)

static int hex(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

/* Undo the escapes of `s` (len bytes) into out; the decoded length, or -1
 * if an escape is malformed. */
static long unescape(const char *s, size_t len, unsigned char *out)
{
        size_t o = 0;
        for (size_t i = 0; i < len;) {
                if (s[i] != '\\') {
                        out[o++] = (unsigned char)s[i++];
                        continue;
                }
                if (i + 1 >= len)
                        return -1;
                char e = s[i + 1];
                if (e == '\\' || e == '"') {
                        out[o++] = (unsigned char)e;
                        i += 2;
                } else if (e == 'n' || e == 't' || e == 'r') {
                        out[o++] = e == 'n' ? '\n' : e == 't' ? '\t' : '\r';
                        i += 2;
                } else if (e == 'x' && i + 3 < len && hex(s[i + 2]) >= 0 && hex(s[i + 3]) >= 0) {
                        out[o++] = (unsigned char)(hex(s[i + 2]) << 4 | hex(s[i + 3]));
                        i += 4;
                } else if (e == 'u' && i + 5 < len) {
                        uint32_t cp = 0;
                        for (int k = 2; k < 6; k++) {
                                int h = hex(s[i + k]);
                                if (h < 0)
                                        return -1;
                                cp = cp << 4 | (uint32_t)h;
                        }
                        if (cp < 0x80)
                                out[o++] = (unsigned char)cp;
                        else if (cp < 0x800) {
                                out[o++] = (unsigned char)(0xC0 | cp >> 6);
                                out[o++] = (unsigned char)(0x80 | (cp & 0x3F));
                        } else {
                                out[o++] = (unsigned char)(0xE0 | cp >> 12);
                                out[o++] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
                                out[o++] = (unsigned char)(0x80 | (cp & 0x3F));
                        }
                        i += 6;
                } else
                        return -1;
        }
        return (long)o;
}

static char *render(const uint8_t *data, size_t size, bool keep_quotes, size_t *len)
{
        char *buf = NULL;
        FILE *f = open_memstream(&buf, len);
        CHECK(f);
        CHECK(json_escape_fwrite(f, (const char *)data, size, keep_quotes) == 0);
        CHECK(fclose(f) == 0);
        return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size > 4096)
                return 0;
        size_t len, qlen;
        char *out = render(data, size, false, &len);
        char *q = render(data, size, true, &qlen);

        CHECK(json_text_is_safe(out, len));
        CHECK(json_text_is_safe(q, qlen));
        unsigned char *back = malloc(len + 1);
        CHECK(back);
        long n = unescape(out, len, back);
        CHECK(n == (long)size && memcmp(back, data, size) == 0);
        free(back);

        /* the bounded form: a prefix, cut between whole units */
        size_t cap = size % 97 + 1;
        char *b = malloc(cap);
        CHECK(b);
        b[0] = '\0';
        json_escape_for_message(b, cap, (const char *)data, size);
        size_t bl = strlen(b);
        CHECK(bl < cap && bl <= len && memcmp(b, out, bl) == 0);
        CHECK(json_text_is_safe(b, bl));
        if (bl < len) {
                unsigned char *pre = malloc(bl + 1);
                CHECK(pre);
                CHECK(unescape(b, bl, pre) >= 0);
                free(pre);
        }
        free(b);
        free(out);
        free(q);
        return 0;
}
