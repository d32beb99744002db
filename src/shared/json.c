/*
 * json.c — strict JSON parser with positions, and a tiny canonical writer
 * (see json.h for the contract).
 *
 * Parser design: recursive descent over a byte cursor that tracks line and
 * column. Recursion only happens for arrays and objects and is cut off at
 * JSON_DEPTH_MAX, so the stack stays small whatever the input.
 *
 * Strings are lexed twice by the same function: first in counting mode
 * (validates, measures the decoded length, stops as soon as it passes
 * JSON_STRING_MAX), then — only if that succeeded — into a buffer of exactly
 * the right size. So no input can make us allocate more than the limit, and
 * there is a single piece of escape/UTF-8 logic.
 *
 * Duplicate keys are found when an object closes, by sorting a temporary
 * array of member pointers (O(n log n), n ≤ JSON_MEMBERS_MAX), and reported
 * at the key that appears later in the document.
 *
 * For error messages the parser keeps a small stack (one frame per open
 * container) of the current key or array index, from which err->keypath is
 * rendered.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/json.h"

/* ------------------------------------------------------------------------ */
/* UTF-8                                                                      */

/*
 * Length of the well-formed UTF-8 sequence at s (at most `avail` bytes), or 0
 * if it is not well formed (Unicode 15, table 3-7). Stores the code point.
 */
static size_t utf8_decode(const unsigned char *s, size_t avail, uint32_t *cp)
{
        unsigned char c = s[0];
        unsigned char lo = 0x80, hi = 0xBF;
        size_t n;

        if (c < 0x80) {
                *cp = c;
                return 1;
        }
        if (c < 0xC2)
                return 0; /* continuation byte, or overlong 2-byte lead */
        if (c < 0xE0) {
                n = 2;
                *cp = c & 0x1F;
        } else if (c < 0xF0) {
                n = 3;
                *cp = c & 0x0F;
                if (c == 0xE0)
                        lo = 0xA0; /* overlong */
                else if (c == 0xED)
                        hi = 0x9F; /* surrogates */
        } else if (c < 0xF5) {
                n = 4;
                *cp = c & 0x07;
                if (c == 0xF0)
                        lo = 0x90; /* overlong */
                else if (c == 0xF4)
                        hi = 0x8F; /* above U+10FFFF */
        } else
                return 0;

        if (avail < n)
                return 0;
        if (s[1] < lo || s[1] > hi)
                return 0;
        *cp = (*cp << 6) | (s[1] & 0x3F);
        for (size_t i = 2; i < n; i++) {
                if ((s[i] & 0xC0) != 0x80)
                        return 0;
                *cp = (*cp << 6) | (s[i] & 0x3F);
        }
        return n;
}

static size_t utf8_encode(uint32_t cp, char out[4])
{
        if (cp < 0x80) {
                out[0] = (char)cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (char)(0xC0 | (cp >> 6));
                out[1] = (char)(0x80 | (cp & 0x3F));
                return 2;
        }
        if (cp < 0x10000) {
                out[0] = (char)(0xE0 | (cp >> 12));
                out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
                out[2] = (char)(0x80 | (cp & 0x3F));
                return 3;
        }
        out[0] = (char)(0xF0 | (cp >> 18));
        out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[3] = (char)(0x80 | (cp & 0x3F));
        return 4;
}

bool json_utf8_valid(const char *s, size_t len, size_t *bad_offset)
{
        const unsigned char *u = (const unsigned char *)s;
        size_t i = 0;

        while (i < len) {
                uint32_t cp;
                size_t n = utf8_decode(u + i, len - i, &cp);
                if (n == 0) {
                        if (bad_offset)
                                *bad_offset = i;
                        return false;
                }
                i += n;
        }
        return true;
}

/* ------------------------------------------------------------------------ */
/* Message helpers                                                            */

/* Append n bytes to buf (size `size`, NUL-terminated) only if all of them fit. */
static bool append_unit(char *buf, size_t size, const char *s, size_t n)
{
        size_t used = strnlen(buf, size);

        if (used >= size || size - used <= n)
                return false;
        memcpy(buf + used, s, n);
        buf[used + n] = '\0';
        return true;
}

/* Code points that must not reach a terminal raw: controls, bidi and line/paragraph separators. */
static bool cp_needs_escape(uint32_t cp)
{
        return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) ||
               (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
               (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF;
}

bool json_text_is_safe(const char *s, size_t len)
{
        const unsigned char *u = (const unsigned char *)s;
        size_t i = 0;

        while (i < len) {
                uint32_t cp;
                size_t n = utf8_decode(u + i, len - i, &cp);
                if (n == 0 || cp == 0 || cp_needs_escape(cp))
                        return false;
                i += n;
        }
        return true;
}

/*
 * One unit of the display rendering of the bytes at u (len > 0): the
 * characters to write in *unit (pointing into tmp or at u) and *unit_len;
 * returns how many input bytes it covers. The one place that decides what
 * reaches a terminal raw: backslash and '"' are escaped (unless keep_quotes),
 * so every escape is unambiguous; \n \t \r, other controls (C0, DEL, C1) and the characters of
 * cp_needs_escape() as \uXXXX; a byte that is not valid UTF-8 as \xNN.
 */
static size_t escape_unit(const unsigned char *u, size_t len, bool keep_quotes, char tmp[16],
                          const char **unit, size_t *unit_len)
{
        uint32_t cp;
        size_t n = utf8_decode(u, len, &cp);

        *unit = tmp;
        if (n == 0) {
                *unit_len = (size_t)snprintf(tmp, 16, "\\x%02x", u[0]);
                return 1;
        }
        if ((cp == '"' || cp == '\\') && !keep_quotes) {
                tmp[0] = '\\';
                tmp[1] = (char)cp;
                *unit_len = 2;
        } else if (cp == '\n') {
                *unit = "\\n", *unit_len = 2;
        } else if (cp == '\t') {
                *unit = "\\t", *unit_len = 2;
        } else if (cp == '\r') {
                *unit = "\\r", *unit_len = 2;
        } else if (cp_needs_escape(cp)) {
                *unit_len = (size_t)snprintf(tmp, 16, "\\u%04" PRIx32, cp);
        } else {
                *unit = (const char *)u;
                *unit_len = n;
        }
        return n;
}

void json_escape_for_message(char *buf, size_t size, const char *s, size_t len)
{
        const unsigned char *u = (const unsigned char *)s;
        size_t i = 0, used;

        if (size == 0)
                return;
        used = strnlen(buf, size);
        if (used >= size)
                return;
        while (i < len) {
                char tmp[16];
                const char *unit;
                size_t unit_len, n = escape_unit(u + i, len - i, false, tmp, &unit, &unit_len);

                if (size - used <= unit_len)
                        break; /* only whole units: never half an escape or character */
                memcpy(buf + used, unit, unit_len);
                used += unit_len;
                i += n;
        }
        buf[used] = '\0';
}

int json_escape_fwrite(FILE *f, const char *s, size_t len, bool keep_quotes)
{
        const unsigned char *u = (const unsigned char *)s;
        size_t i = 0;

        while (i < len) {
                char tmp[16];
                const char *unit;
                size_t unit_len,
                        n = escape_unit(u + i, len - i, keep_quotes, tmp, &unit, &unit_len);

                if (fwrite(unit, 1, unit_len, f) != unit_len)
                        return -EIO;
                i += n;
        }
        return 0;
}

static bool key_is_plain(const char *key, size_t len)
{
        if (len == 0)
                return false;
        for (size_t i = 0; i < len; i++) {
                char c = key[i];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-'))
                        return false;
        }
        return true;
}

void json_keypath_append_key(char *buf, size_t size, const char *key, size_t key_len)
{
        if (size == 0)
                return;
        if (key_is_plain(key, key_len)) {
                if (buf[0] && !append_unit(buf, size, ".", 1))
                        return;
                /* a plain key is ASCII: no character can be split */
                size_t used = strlen(buf);
                size_t room = size - used - 1;
                size_t n = key_len < room ? key_len : room;
                memcpy(buf + used, key, n);
                buf[used + n] = '\0';
                return;
        }
        if (!append_unit(buf, size, "[\"", 2))
                return;
        json_escape_for_message(buf, size, key, key_len);
        append_unit(buf, size, "\"]", 2);
}

void json_keypath_append_index(char *buf, size_t size, size_t index)
{
        char tmp[32];
        int n = snprintf(tmp, sizeof tmp, "[%zu]", index);

        if (size > 0 && n > 0)
                append_unit(buf, size, tmp, (size_t)n);
}

/* ------------------------------------------------------------------------ */
/* Nodes                                                                      */

struct json_node *json_node_free(struct json_node *n)
{
        if (!n)
                return NULL;
        for (size_t i = 0; i < n->n_items; i++)
                json_node_free(n->items[i]);
        free(n->items);
        free(n->key);
        free(n->str);
        free(n);
        return NULL;
}

const char *json_type_name(enum json_type t)
{
        switch (t) {
        case JSON_NULL:
                return "null";
        case JSON_FALSE:
        case JSON_TRUE:
                return "boolean";
        case JSON_NUMBER:
                return "number";
        case JSON_STRING:
                return "string";
        case JSON_ARRAY:
                return "array";
        case JSON_OBJECT:
                return "object";
        case _JSON_TYPE_MAX:
        case _JSON_TYPE_INVALID:
        default:
                return "invalid";
        }
}

const struct json_node *json_object_get(const struct json_node *obj, const char *key)
{
        if (!obj || obj->type != JSON_OBJECT || !key)
                return NULL;
        size_t len = strlen(key);
        for (size_t i = 0; i < obj->n_items; i++) {
                const struct json_node *m = obj->items[i];
                if (m->key_len == len && memcmp(m->key, key, len) == 0)
                        return m;
        }
        return NULL;
}

const struct json_node *json_array_get(const struct json_node *n, size_t i)
{
        if (!n || (n->type != JSON_ARRAY && n->type != JSON_OBJECT) || i >= n->n_items)
                return NULL;
        return n->items[i];
}

bool json_is_bool(const struct json_node *n)
{
        return n && (n->type == JSON_TRUE || n->type == JSON_FALSE);
}

/* ------------------------------------------------------------------------ */
/* Parser                                                                     */

struct cursor {
        const char *p;
        unsigned line, col;
};

struct frame {
        bool is_array;
        const char *key; /* borrowed: current member's key, NULL between members */
        size_t key_len;
        size_t index; /* current element of an array */
};

struct parser {
        struct cursor c;
        const char *end;
        size_t n_nodes;
        unsigned depth;
        struct frame stack[JSON_DEPTH_MAX];
        struct rf_error *err;
};

static void cursor_advance(struct cursor *c)
{
        unsigned char ch = (unsigned char)*c->p++;

        if (ch == '\n') {
                c->line++;
                c->col = 1;
        } else if ((ch & 0xC0) != 0x80) {
                c->col++;
        }
}

static void cursor_skip(struct cursor *c, size_t n)
{
        while (n--)
                cursor_advance(c);
}

static void render_keypath(const struct parser *ps, char *buf, size_t size)
{
        buf[0] = '\0';
        for (unsigned i = 0; i < ps->depth; i++) {
                const struct frame *f = &ps->stack[i];
                if (f->is_array)
                        json_keypath_append_index(buf, size, f->index);
                else if (f->key)
                        json_keypath_append_key(buf, size, f->key, f->key_len);
        }
}

static int fail_at(struct parser *ps, unsigned line, unsigned col, int code, const char *fmt, ...)
        _printf_(5, 6);
static int fail_at(struct parser *ps, unsigned line, unsigned col, int code, const char *fmt, ...)
{
        struct rf_error *err = ps->err;

        if (!err)
                return code;
        va_list ap;
        va_start(ap, fmt);
        rf_error_vset(err, code, fmt, ap);
        va_end(ap);
        err->line = line;
        err->col = col;
        render_keypath(ps, err->keypath, sizeof err->keypath);
        return code;
}

#define fail(ps, code, ...) fail_at((ps), (ps)->c.line, (ps)->c.col, (code), __VA_ARGS__)

static bool at_end(const struct parser *ps)
{
        return ps->c.p >= ps->end;
}

static int peek(const struct parser *ps)
{
        return at_end(ps) ? -1 : (unsigned char)*ps->c.p;
}

static void skip_ws(struct parser *ps)
{
        while (!at_end(ps)) {
                char ch = *ps->c.p;
                if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r')
                        return;
                cursor_advance(&ps->c);
        }
}

/* Describe the byte at the cursor for "unexpected X" messages. */
static void describe_here(const struct parser *ps, char *buf, size_t size)
{
        int ch = peek(ps);

        if (ch < 0)
                snprintf(buf, size, "end of input");
        else if (ch > 0x20 && ch < 0x7F)
                snprintf(buf, size, "'%c'", ch);
        else
                snprintf(buf, size, "byte 0x%02x", (unsigned)ch);
}

/* Error for an unexpected byte where `expected` was wanted. */
static int unexpected(struct parser *ps, const char *expected)
{
        char what[32];
        int ch = peek(ps);

        if (ch == '/')
                return fail(ps, -EINVAL, "comments are not allowed in JSON");
        if (ch == '\'')
                return fail(ps, -EINVAL, "strings must use double quotes");
        describe_here(ps, what, sizeof what);
        return fail(ps, -EINVAL, "unexpected %s, expected %s", what, expected);
}

static int node_new(struct parser *ps, enum json_type type, unsigned line, unsigned col,
                    struct json_node **ret)
{
        if (ps->n_nodes >= JSON_NODES_MAX)
                return fail_at(ps, line, col, -E2BIG, "more than %d values in the document",
                               JSON_NODES_MAX);
        struct json_node *n = calloc(1, sizeof *n);
        if (!n)
                return fail_at(ps, line, col, -ENOMEM, "out of memory");
        ps->n_nodes++;
        n->type = type;
        n->line = line;
        n->col = col;
        *ret = n;
        return 0;
}

static int hex4(const char *p, uint32_t *ret)
{
        uint32_t v = 0;

        for (int i = 0; i < 4; i++) {
                char ch = p[i];
                v <<= 4;
                if (ch >= '0' && ch <= '9')
                        v |= (uint32_t)(ch - '0');
                else if (ch >= 'a' && ch <= 'f')
                        v |= (uint32_t)(ch - 'a' + 10);
                else if (ch >= 'A' && ch <= 'F')
                        v |= (uint32_t)(ch - 'A' + 10);
                else
                        return -EINVAL;
        }
        *ret = v;
        return 0;
}

/*
 * Lex the string whose opening quote is at c. With out == NULL only
 * validates and measures; otherwise writes the decoded bytes (the caller
 * sized out from the counting pass). On success c is just past the closing
 * quote and *ret_len holds the decoded length.
 */
static int lex_string(struct parser *ps, struct cursor *c, char *out, size_t *ret_len)
{
        unsigned start_line = c->line, start_col = c->col;
        size_t len = 0;

        cursor_advance(c); /* opening quote */
        for (;;) {
                if (c->p >= ps->end)
                        return fail_at(ps, start_line, start_col, -EINVAL, "unterminated string");

                unsigned char ch = (unsigned char)*c->p;
                char enc[4];
                size_t n_enc;

                if (ch == '"') {
                        cursor_advance(c);
                        break;
                }
                if (ch == '\\') {
                        size_t avail = (size_t)(ps->end - c->p);
                        if (avail < 2)
                                return fail_at(ps, start_line, start_col, -EINVAL,
                                               "unterminated string");
                        char e = c->p[1];
                        size_t consumed = 2;
                        switch (e) {
                        case '"':
                        case '\\':
                        case '/':
                                enc[0] = e;
                                n_enc = 1;
                                break;
                        case 'b':
                                enc[0] = '\b', n_enc = 1;
                                break;
                        case 'f':
                                enc[0] = '\f', n_enc = 1;
                                break;
                        case 'n':
                                enc[0] = '\n', n_enc = 1;
                                break;
                        case 'r':
                                enc[0] = '\r', n_enc = 1;
                                break;
                        case 't':
                                enc[0] = '\t', n_enc = 1;
                                break;
                        case 'u': {
                                uint32_t cp, lo;
                                if (avail < 6 || hex4(c->p + 2, &cp) < 0)
                                        return fail_at(ps, c->line, c->col, -EINVAL,
                                                       "\\u must be followed by four hex digits");
                                consumed = 6;
                                if (cp == 0)
                                        return fail_at(ps, c->line, c->col, -EINVAL,
                                                       "NUL (\\u0000) is not allowed in strings");
                                if (cp >= 0xDC00 && cp <= 0xDFFF)
                                        return fail_at(ps, c->line, c->col, -EINVAL,
                                                       "lone low surrogate \\u%04" PRIX32, cp);
                                if (cp >= 0xD800 && cp <= 0xDBFF) {
                                        if (avail < 12 || c->p[6] != '\\' || c->p[7] != 'u' ||
                                            hex4(c->p + 8, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF)
                                                return fail_at(
                                                        ps, c->line, c->col, -EINVAL,
                                                        "lone high surrogate \\u%04" PRIX32
                                                        " (must be followed by a low surrogate)",
                                                        cp);
                                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                        consumed = 12;
                                }
                                n_enc = utf8_encode(cp, enc);
                                break;
                        }
                        default: {
                                struct cursor at = *c;
                                cursor_advance(&at);
                                if ((unsigned char)e > 0x20 && (unsigned char)e < 0x7F)
                                        return fail_at(ps, at.line, at.col, -EINVAL,
                                                       "invalid escape '\\%c'", e);
                                return fail_at(ps, at.line, at.col, -EINVAL,
                                               "invalid escape (byte 0x%02x after '\\')",
                                               (unsigned char)e);
                        }
                        }
                        if (len + n_enc > JSON_STRING_MAX)
                                return fail_at(ps, start_line, start_col, -E2BIG,
                                               "string longer than %d bytes", JSON_STRING_MAX);
                        if (out)
                                memcpy(out + len, enc, n_enc);
                        len += n_enc;
                        cursor_skip(c, consumed);
                        continue;
                }
                if (ch == 0)
                        return fail_at(ps, c->line, c->col, -EINVAL,
                                       "NUL byte is not allowed in strings");
                if (ch < 0x20)
                        return fail_at(ps, c->line, c->col, -EINVAL,
                                       "control character 0x%02x in string must be escaped", ch);

                uint32_t cp;
                size_t n = utf8_decode((const unsigned char *)c->p, (size_t)(ps->end - c->p), &cp);
                if (n == 0)
                        return fail_at(ps, c->line, c->col, -EINVAL,
                                       "invalid UTF-8 in string (byte 0x%02x)", ch);
                if (len + n > JSON_STRING_MAX)
                        return fail_at(ps, start_line, start_col, -E2BIG,
                                       "string longer than %d bytes", JSON_STRING_MAX);
                if (out)
                        memcpy(out + len, c->p, n);
                len += n;
                cursor_skip(c, n);
        }
        *ret_len = len;
        return 0;
}

/* Parse a string at the cursor into a new NUL-terminated buffer. */
static int parse_string_raw(struct parser *ps, char **ret, size_t *ret_len)
{
        struct cursor probe = ps->c;
        size_t len;
        int r;

        r = lex_string(ps, &probe, NULL, &len);
        if (r < 0)
                return r;
        char *s = malloc(len + 1);
        if (!s)
                return fail(ps, -ENOMEM, "out of memory");
        r = lex_string(ps, &ps->c, s, &len);
        if (r < 0) {
                free(s);
                return r;
        }
        s[len] = '\0';
        *ret = s;
        *ret_len = len;
        return 0;
}

static bool is_digit(int ch)
{
        return ch >= '0' && ch <= '9';
}

static void skip_digits(struct parser *ps)
{
        while (is_digit(peek(ps)))
                cursor_advance(&ps->c);
}

static int parse_number(struct parser *ps, struct json_node **ret)
{
        struct cursor start = ps->c;
        int r;

        if (peek(ps) == '-')
                cursor_advance(&ps->c);
        if (peek(ps) == '0') {
                cursor_advance(&ps->c);
                if (is_digit(peek(ps)))
                        return fail_at(ps, start.line, start.col, -EINVAL,
                                       "leading zeros are not allowed in numbers");
        } else if (is_digit(peek(ps))) {
                skip_digits(ps);
        } else {
                return unexpected(ps, "a digit");
        }
        if (peek(ps) == '.') {
                cursor_advance(&ps->c);
                if (!is_digit(peek(ps)))
                        return unexpected(ps, "a digit after '.'");
                skip_digits(ps);
        }
        if (peek(ps) == 'e' || peek(ps) == 'E') {
                cursor_advance(&ps->c);
                if (peek(ps) == '+' || peek(ps) == '-')
                        cursor_advance(&ps->c);
                if (!is_digit(peek(ps)))
                        return unexpected(ps, "a digit in the exponent");
                skip_digits(ps);
        }

        size_t len = (size_t)(ps->c.p - start.p);
        if (len > JSON_NUMBER_MAX)
                return fail_at(ps, start.line, start.col, -E2BIG,
                               "number longer than %d characters", JSON_NUMBER_MAX);

        struct json_node *n = NULL;
        r = node_new(ps, JSON_NUMBER, start.line, start.col, &n);
        if (r < 0)
                return r;
        n->str = malloc(len + 1);
        if (!n->str) {
                json_node_free(n);
                return fail_at(ps, start.line, start.col, -ENOMEM, "out of memory");
        }
        memcpy(n->str, start.p, len);
        n->str[len] = '\0';
        n->len = len;
        *ret = n;
        return 0;
}

static int parse_literal(struct parser *ps, struct json_node **ret)
{
        static const struct {
                const char *word;
                enum json_type type;
        } literals[] = {
                {"true", JSON_TRUE},
                {"false", JSON_FALSE},
                {"null", JSON_NULL},
        };
        struct cursor start = ps->c;
        size_t len = 0;

        /* take the whole identifier-like run, so "trueish" and "nullx" fail here */
        while (start.p + len < ps->end) {
                char ch = start.p[len];
                if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || is_digit(ch) ||
                      ch == '_'))
                        break;
                len++;
        }
        for (size_t i = 0; i < ARRAY_SIZE(literals); i++) {
                if (strlen(literals[i].word) == len &&
                    memcmp(literals[i].word, start.p, len) == 0) {
                        cursor_skip(&ps->c, len);
                        return node_new(ps, literals[i].type, start.line, start.col, ret);
                }
        }
        char shown[40] = "";
        json_escape_for_message(shown, sizeof shown, start.p, len < 24 ? len : 24);
        return fail(ps, -EINVAL, "invalid literal '%s%s' (expected true, false or null)", shown,
                    len > 24 ? "..." : "");
}

static int parse_value(struct parser *ps, struct json_node **ret);

static int push_item(struct parser *ps, struct json_node *parent, struct json_node *child)
{
        if (parent->n_items == parent->items_cap) {
                size_t cap = parent->items_cap ? parent->items_cap * 2 : 4;
                if (cap > JSON_MEMBERS_MAX)
                        cap = JSON_MEMBERS_MAX;
                struct json_node **items = realloc(parent->items, cap * sizeof *items);
                if (!items)
                        return fail(ps, -ENOMEM, "out of memory");
                parent->items = items;
                parent->items_cap = cap;
        }
        parent->items[parent->n_items++] = child;
        return 0;
}

static int enter_container(struct parser *ps, bool is_array)
{
        if (ps->depth >= JSON_DEPTH_MAX)
                return fail(ps, -E2BIG, "nesting deeper than %d levels", JSON_DEPTH_MAX);
        ps->stack[ps->depth++] = (struct frame){.is_array = is_array};
        return 0;
}

static int parse_array(struct parser *ps, struct json_node *arr)
{
        int r;

        r = enter_container(ps, true);
        if (r < 0)
                return r;
        struct frame *f = &ps->stack[ps->depth - 1];

        cursor_advance(&ps->c); /* [ */
        skip_ws(ps);
        if (peek(ps) == ']') {
                cursor_advance(&ps->c);
                ps->depth--;
                return 0;
        }
        for (;;) {
                struct json_node *child = NULL;

                f->index = arr->n_items;
                skip_ws(ps);
                if (peek(ps) == ']')
                        return fail(ps, -EINVAL, "trailing comma in array");
                if (arr->n_items >= JSON_MEMBERS_MAX)
                        return fail(ps, -E2BIG, "more than %d elements in an array",
                                    JSON_MEMBERS_MAX);
                r = parse_value(ps, &child);
                if (r < 0)
                        return r;
                r = push_item(ps, arr, child);
                if (r < 0) {
                        json_node_free(child);
                        return r;
                }
                skip_ws(ps);
                if (peek(ps) == ',') {
                        cursor_advance(&ps->c);
                        continue;
                }
                if (peek(ps) == ']') {
                        cursor_advance(&ps->c);
                        break;
                }
                return unexpected(ps, "',' or ']'");
        }
        ps->depth--;
        return 0;
}

static int member_cmp(const void *a, const void *b)
{
        const struct json_node *x = *(const struct json_node *const *)a;
        const struct json_node *y = *(const struct json_node *const *)b;
        size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
        int c = memcmp(x->key, y->key, n);

        if (c != 0)
                return c;
        if (x->key_len != y->key_len)
                return x->key_len < y->key_len ? -1 : 1;
        /* equal keys: document order */
        if (x->key_line != y->key_line)
                return x->key_line < y->key_line ? -1 : 1;
        return x->key_col < y->key_col ? -1 : x->key_col > y->key_col;
}

static bool pos_before(unsigned l1, unsigned c1, unsigned l2, unsigned c2)
{
        return l1 < l2 || (l1 == l2 && c1 < c2);
}

/* Reject duplicate keys in a finished object; report the earliest repeat. */
static int check_duplicates(struct parser *ps, struct json_node *obj, struct frame *f)
{
        const struct json_node *dup = NULL, *first = NULL;

        if (obj->n_items < 2)
                return 0;
        _cleanup_free_ struct json_node **sorted = malloc(obj->n_items * sizeof *sorted);
        if (!sorted)
                return fail(ps, -ENOMEM, "out of memory");
        memcpy(sorted, obj->items, obj->n_items * sizeof *sorted);
        qsort(sorted, obj->n_items, sizeof *sorted, member_cmp);

        for (size_t i = 1; i < obj->n_items; i++) {
                const struct json_node *a = sorted[i - 1], *b = sorted[i];
                if (a->key_len != b->key_len || memcmp(a->key, b->key, a->key_len) != 0)
                        continue;
                if (!dup || pos_before(b->key_line, b->key_col, dup->key_line, dup->key_col))
                        dup = b;
        }
        if (!dup)
                return 0;
        /* the first occurrence of this key: equal keys sort in document order */
        for (size_t i = 0; i < obj->n_items && !first; i++)
                if (sorted[i]->key_len == dup->key_len &&
                    memcmp(sorted[i]->key, dup->key, dup->key_len) == 0)
                        first = sorted[i];
        f->key = dup->key;
        f->key_len = dup->key_len;
        return fail_at(ps, dup->key_line, dup->key_col, -EINVAL,
                       "duplicate key (first at line %u, column %u)", first->key_line,
                       first->key_col);
}

static int parse_object(struct parser *ps, struct json_node *obj)
{
        int r;

        r = enter_container(ps, false);
        if (r < 0)
                return r;
        struct frame *f = &ps->stack[ps->depth - 1];

        cursor_advance(&ps->c); /* { */
        skip_ws(ps);
        if (peek(ps) == '}') {
                cursor_advance(&ps->c);
                ps->depth--;
                return 0;
        }
        for (;;) {
                _cleanup_free_ char *key = NULL;
                size_t key_len;
                struct json_node *child = NULL;

                f->key = NULL;
                skip_ws(ps);
                if (peek(ps) == '}')
                        return fail(ps, -EINVAL, "trailing comma in object");
                if (peek(ps) != '"')
                        return unexpected(ps, "a string (object key)");
                unsigned key_line = ps->c.line, key_col = ps->c.col;
                if (obj->n_items >= JSON_MEMBERS_MAX)
                        return fail(ps, -E2BIG, "more than %d members in an object",
                                    JSON_MEMBERS_MAX);
                r = parse_string_raw(ps, &key, &key_len);
                if (r < 0)
                        return r;
                f->key = key;
                f->key_len = key_len;

                skip_ws(ps);
                if (peek(ps) != ':')
                        return unexpected(ps, "':' after object key");
                cursor_advance(&ps->c);

                r = parse_value(ps, &child);
                if (r < 0)
                        return r;
                child->key_line = key_line;
                child->key_col = key_col;
                child->key_len = key_len;
                child->key = TAKE_PTR(key);
                f->key = child->key;
                r = push_item(ps, obj, child);
                if (r < 0) {
                        json_node_free(child);
                        return r;
                }

                skip_ws(ps);
                if (peek(ps) == ',') {
                        cursor_advance(&ps->c);
                        continue;
                }
                if (peek(ps) == '}') {
                        cursor_advance(&ps->c);
                        break;
                }
                return unexpected(ps, "',' or '}'");
        }
        r = check_duplicates(ps, obj, f);
        if (r < 0)
                return r;
        ps->depth--;
        return 0;
}

static int parse_value(struct parser *ps, struct json_node **ret)
{
        struct json_node *n = NULL;
        unsigned line, col;
        int r;

        skip_ws(ps);
        line = ps->c.line;
        col = ps->c.col;
        switch (peek(ps)) {
        case '{':
        case '[': {
                bool is_array = peek(ps) == '[';
                r = node_new(ps, is_array ? JSON_ARRAY : JSON_OBJECT, line, col, &n);
                if (r < 0)
                        return r;
                r = is_array ? parse_array(ps, n) : parse_object(ps, n);
                if (r < 0) {
                        json_node_free(n);
                        return r;
                }
                break;
        }
        case '"':
                r = node_new(ps, JSON_STRING, line, col, &n);
                if (r < 0)
                        return r;
                r = parse_string_raw(ps, &n->str, &n->len);
                if (r < 0) {
                        json_node_free(n);
                        return r;
                }
                break;
        case '-':
        case '0':
        case '1':
        case '2':
        case '3':
        case '4':
        case '5':
        case '6':
        case '7':
        case '8':
        case '9':
                r = parse_number(ps, &n);
                if (r < 0)
                        return r;
                break;
        default:
                if ((peek(ps) >= 'a' && peek(ps) <= 'z') || (peek(ps) >= 'A' && peek(ps) <= 'Z')) {
                        r = parse_literal(ps, &n);
                        if (r < 0)
                                return r;
                        break;
                }
                return unexpected(ps, "a value");
        }
        *ret = n;
        return 0;
}

int json_parse(const char *buf, size_t len, struct json_node **ret, struct rf_error *err)
{
        struct parser ps = {
                .c = {.line = 1, .col = 1},
                .err = err,
        };
        struct json_node *root = NULL;
        int r;

        if (!buf && len == 0)
                buf = ""; /* an empty document may come as (NULL, 0) */
        if (!buf)
                return fail(&ps, -EINVAL, "no input");
        ps.c.p = buf;
        ps.end = buf + len;
        if (len > JSON_INPUT_MAX) {
                ps.c.line = ps.c.col = 0;
                return fail(&ps, -E2BIG, "document larger than %d bytes", JSON_INPUT_MAX);
        }
        if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
                return fail(&ps, -EINVAL, "byte order mark is not allowed");

        r = parse_value(&ps, &root);
        if (r < 0)
                return r;
        skip_ws(&ps);
        if (!at_end(&ps)) {
                json_node_free(root);
                if (peek(&ps) == '/')
                        return fail(&ps, -EINVAL, "comments are not allowed in JSON");
                return fail(&ps, -EINVAL, "trailing data after the JSON document");
        }
        *ret = root;
        return 0;
}

/* ------------------------------------------------------------------------ */
/* Numbers                                                                    */

#define EXP_SATURATE 100000

/*
 * Exact decimal conversion of a validated JSON number lexeme to
 * value × 10^scale. See json_number_decimal() in json.h.
 */
static int lexeme_to_scaled(const char *s, size_t len, unsigned scale, bool allow_negative,
                            bool *negative, uint64_t *ret)
{
        const char *end = s + len;
        const char *digits_end, *frac = NULL;
        long exp = 0;
        size_t n_frac = 0;

        *negative = false;
        if (s < end && *s == '-') {
                *negative = true;
                s++;
        }
        if (*negative && !allow_negative)
                return -ERANGE;

        /* Collect the significant digits: integer part then fraction. */
        const char *int_start = s;
        while (s < end && is_digit(*s))
                s++;
        digits_end = s;
        if (s < end && *s == '.') {
                frac = ++s;
                while (s < end && is_digit(*s))
                        s++;
                n_frac = (size_t)(s - frac);
        }
        if (s < end && (*s == 'e' || *s == 'E')) {
                bool eneg = false;
                s++;
                if (*s == '+' || *s == '-')
                        eneg = *s++ == '-';
                while (s < end && is_digit(*s)) {
                        if (exp < EXP_SATURATE)
                                exp = exp * 10 + (*s - '0');
                        s++;
                }
                if (eneg)
                        exp = -exp;
        }

        /* shift = how many places the digit string moves left */
        long shift = exp - (long)n_frac + (long)scale;
        size_t n_int = (size_t)(digits_end - int_start);
        size_t n_all = n_int + n_frac;
        size_t keep = n_all;

        if (shift < 0) {
                /* the last -shift digits are dropped and must all be zero */
                size_t drop = (size_t)-shift;
                if (drop > n_all)
                        drop = n_all;
                keep = n_all - drop;
                for (size_t i = keep; i < n_all; i++) {
                        char d = i < n_int ? int_start[i] : frac[i - n_int];
                        if (d != '0')
                                return -EINVAL;
                }
                shift = 0;
        }

        uint64_t v = 0;
        for (size_t i = 0; i < keep; i++) {
                char d = i < n_int ? int_start[i] : frac[i - n_int];
                if (v > (UINT64_MAX - (uint64_t)(d - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t)(d - '0');
        }
        if (v != 0)
                for (long i = 0; i < shift; i++) {
                        if (v > UINT64_MAX / 10)
                                return -ERANGE;
                        v *= 10;
                }
        *ret = v;
        return 0;
}

static bool lexeme_is_integer(const struct json_node *n)
{
        return !memchr(n->str, '.', n->len) && !memchr(n->str, 'e', n->len) &&
               !memchr(n->str, 'E', n->len);
}

int json_number_decimal(const struct json_node *n, unsigned scale, uint64_t *ret)
{
        bool negative;

        if (!n || n->type != JSON_NUMBER || scale > 18)
                return -EINVAL;
        return lexeme_to_scaled(n->str, n->len, scale, false, &negative, ret);
}

int json_number_uint64(const struct json_node *n, uint64_t *ret)
{
        if (!n || n->type != JSON_NUMBER || !lexeme_is_integer(n))
                return -EINVAL;
        return json_number_decimal(n, 0, ret);
}

int json_number_int64(const struct json_node *n, int64_t *ret)
{
        bool negative;
        uint64_t mag;
        int r;

        if (!n || n->type != JSON_NUMBER || !lexeme_is_integer(n))
                return -EINVAL;
        r = lexeme_to_scaled(n->str, n->len, 0, true, &negative, &mag);
        if (r < 0)
                return r;
        if (negative) {
                if (mag > (uint64_t)INT64_MAX + 1)
                        return -ERANGE;
                *ret = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
        } else {
                if (mag > INT64_MAX)
                        return -ERANGE;
                *ret = (int64_t)mag;
        }
        return 0;
}

int json_number_double(const struct json_node *n, double *ret)
{
        char *end;
        double d;

        if (!n || n->type != JSON_NUMBER)
                return -EINVAL;
        errno = 0;
        d = strtod(n->str, &end);
        if (end != n->str + n->len)
                return -EINVAL; /* e.g. a locale with another decimal point */
        if (isinf(d))
                return -ERANGE;
        *ret = d;
        return 0;
}

/* ------------------------------------------------------------------------ */
/* Writer                                                                     */

int json_buf_append(struct json_buf *b, const char *s, size_t len)
{
        if (b->error)
                return b->error;
        if (len > JSON_OUTPUT_MAX || b->len + len > JSON_OUTPUT_MAX)
                return (b->error = -E2BIG);
        if (b->len + len + 1 > b->cap) {
                size_t cap = b->cap ? b->cap : 256;
                while (cap < b->len + len + 1)
                        cap *= 2;
                char *d = realloc(b->data, cap);
                if (!d)
                        return (b->error = -ENOMEM);
                b->data = d;
                b->cap = cap;
        }
        memcpy(b->data + b->len, s, len);
        b->len += len;
        b->data[b->len] = '\0';
        return 0;
}

int json_buf_append_string_lossy(struct json_buf *b, const char *s, size_t len)
{
        if (b->error)
                return b->error;
        if (json_utf8_valid(s, len, NULL) && !memchr(s, '\0', len))
                return json_buf_append_string(b, s, len);
        if (len > (SIZE_MAX - 1) / 3)
                return (b->error = -ENOMEM);
        _cleanup_free_ char *t = malloc(3 * len + 1);
        if (!t)
                return (b->error = -ENOMEM);
        size_t n = 0, i = 0;
        while (i < len) {
                size_t bad = len - i;
                if (json_utf8_valid(s + i, len - i, &bad))
                        bad = len - i;
                /* the valid run before the first bad byte, NULs replaced */
                for (size_t k = 0; k < bad; k++) {
                        if (s[i + k] == '\0') {
                                memcpy(t + n, "\xef\xbf\xbd", 3);
                                n += 3;
                        } else {
                                t[n++] = s[i + k];
                        }
                }
                i += bad;
                if (i < len) {
                        memcpy(t + n, "\xef\xbf\xbd", 3);
                        n += 3;
                        i++;
                }
        }
        return json_buf_append_string(b, t, n);
}

int json_buf_append_string(struct json_buf *b, const char *s, size_t len)
{
        size_t run = 0; /* start of the pending run of bytes copied verbatim */

        if (b->error)
                return b->error;
        if (!json_utf8_valid(s, len, NULL) || memchr(s, '\0', len))
                return (b->error = -EINVAL);
        json_buf_append(b, "\"", 1);
        for (size_t i = 0; i < len; i++) {
                unsigned char ch = (unsigned char)s[i];
                char esc[8];
                const char *e = NULL;

                switch (ch) {
                case '"':
                        e = "\\\"";
                        break;
                case '\\':
                        e = "\\\\";
                        break;
                case '\b':
                        e = "\\b";
                        break;
                case '\f':
                        e = "\\f";
                        break;
                case '\n':
                        e = "\\n";
                        break;
                case '\r':
                        e = "\\r";
                        break;
                case '\t':
                        e = "\\t";
                        break;
                default:
                        if (ch < 0x20) {
                                snprintf(esc, sizeof esc, "\\u%04x", ch);
                                e = esc;
                        }
                        break;
                }
                if (!e)
                        continue;
                json_buf_append(b, s + run, i - run);
                json_buf_append(b, e, strlen(e));
                run = i + 1;
        }
        json_buf_append(b, s + run, len - run);
        return json_buf_append(b, "\"", 1);
}

int json_buf_append_string_array(struct json_buf *b, char *const *v, size_t n)
{
        json_buf_append(b, "[", 1);
        for (size_t i = 0; i < n; i++) {
                if (i)
                        json_buf_append(b, ",", 1);
                json_buf_append_string(b, v[i], strlen(v[i]));
        }
        return json_buf_append(b, "]", 1);
}

int json_buf_append_uint(struct json_buf *b, uint64_t v)
{
        char tmp[24];
        int n = snprintf(tmp, sizeof tmp, "%" PRIu64, v);

        return json_buf_append(b, tmp, (size_t)n);
}

void json_buf_done(struct json_buf *b)
{
        free(b->data);
        *b = (struct json_buf){0};
}
