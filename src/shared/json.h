/*
 * json.h — a small, strict JSON (RFC 8259) parser that remembers where
 * every value came from.
 *
 * Why not jansson here: policy errors must point at file:line:col of the
 * offending key or value, and jansson reports positions only for syntax
 * errors. This parser builds a read-only DOM in which every node carries the
 * 1-based line and column of its first byte (and, for object members, of
 * its key), so the policy layer can say exactly where a type or value is
 * wrong.
 *
 * Design:
 *   - Pure: bytes in, tree out. No I/O, no globals, no locale, no logging.
 *     Safe to fuzz (tests/fuzz/fuzz_json.c).
 *   - Strict: exactly one value, optional surrounding whitespace, nothing
 *     else. Rejected: comments, trailing commas, single quotes, leading zeros,
 *     NaN/Infinity, duplicate object keys, raw control characters and NUL
 *     (also as \u0000) in strings, invalid or overlong UTF-8, encoded
 *     surrogates, lone surrogate escapes, a byte-order mark, trailing bytes.
 *   - Bounded: every input-controlled size has a named maximum below, and it
 *     is checked before the memory is allocated. Recursion depth is bounded
 *     by JSON_DEPTH_MAX, so the parser's stack use is bounded too.
 *   - Numbers keep their lexeme; the integer accessors convert exactly (no
 *     detour through double) and refuse fractions, exponents and overflow.
 *
 * Positions: lines count '\n'; columns count characters (UTF-8 code points,
 * a tab is one column), both 1-based.
 *
 * Threat notes: the input is untrusted (a policy file, later API bodies).
 * Strings handed out are valid UTF-8 without NUL, so they are safe C strings;
 * they may still contain control characters (escaped in the input) — callers
 * that print them must escape them (json_escape_for_message()).
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "shared/error.h"

#define JSON_INPUT_MAX   (1024 * 1024)      /* bytes of input document */
#define JSON_DEPTH_MAX   16                 /* nesting of arrays/objects; top-level container = 1 */
#define JSON_STRING_MAX  4096               /* bytes of one decoded string (keys included) */
#define JSON_NUMBER_MAX  64                 /* bytes of one number lexeme */
#define JSON_MEMBERS_MAX 1024               /* members of one object / elements of one array */
#define JSON_NODES_MAX   16384              /* values in one document (keys not counted) */
#define JSON_OUTPUT_MAX  (16 * 1024 * 1024) /* bytes a struct json_buf may grow to */

enum json_type {
        JSON_NULL,
        JSON_FALSE,
        JSON_TRUE,
        JSON_NUMBER,
        JSON_STRING,
        JSON_ARRAY,
        JSON_OBJECT,
        _JSON_TYPE_MAX,
        _JSON_TYPE_INVALID = -EINVAL,
};

/*
 * One value. The whole tree is owned by its root and freed with
 * json_node_free(root); callers treat nodes as read-only.
 */
struct json_node {
        enum json_type type;
        unsigned line, col; /* position of the value's first byte */

        /* Set only on a member of an object: its key and where the key starts. */
        char *key; /* owned; NUL-terminated, valid UTF-8, no NUL inside */
        size_t key_len;
        unsigned key_line, key_col;

        /*
         * JSON_STRING: decoded value (owned, NUL-terminated, valid UTF-8, no
         * NUL inside). JSON_NUMBER: the number's lexeme exactly as written.
         * NULL otherwise.
         */
        char *str;
        size_t len; /* bytes in str */

        /* JSON_ARRAY elements / JSON_OBJECT members in document order (owned). */
        struct json_node **items;
        size_t n_items;
        size_t items_cap; /* private to json.c */
};

/*
 * json_parse — parse exactly one JSON document from `len` bytes at `buf`
 * (need not be NUL-terminated; an embedded NUL byte is a syntax error).
 * On success returns 0 and stores the root in *ret (caller owns; free with
 * json_node_free()). On failure returns -EINVAL (not strict JSON), -E2BIG (a
 * JSON_*_MAX limit exceeded) or -ENOMEM; *ret is untouched, and `err` (may be
 * NULL) gets code, line, col (of the offending byte), keypath (where in the
 * document, e.g. "limits.pids" or "filesystem.read_only[2]"; "" at the top)
 * and a one-line message. err->file is left alone.
 */
int json_parse(const char *buf, size_t len, struct json_node **ret, struct rf_error *err);

/* Free a node and everything below it. Accepts NULL; returns NULL. */
struct json_node *json_node_free(struct json_node *n);
static inline void json_node_freep(struct json_node **n)
{
        *n = json_node_free(*n);
}
#define _cleanup_json_ _cleanup_(json_node_freep)

/* Human name of a type ("null", "boolean", "number", "string", "array", "object"). */
const char *json_type_name(enum json_type t);

/*
 * json_object_get — the member of object `obj` whose key is `key` (a C
 * string), or NULL if absent or if `obj` is not an object. Keys are unique
 * (json_parse() rejects duplicates). Borrowed pointer into the tree.
 */
const struct json_node *json_object_get(const struct json_node *obj, const char *key);

/*
 * json_array_get — element `i` of array (or member `i` of object) `n`, or
 * NULL if out of range or `n` is not a container. Borrowed pointer.
 */
const struct json_node *json_array_get(const struct json_node *n, size_t i);

/* Iterate the elements of an array or the members of an object, in document order. */
#define JSON_FOREACH(child, parent)                                                                \
        for (size_t _i_##child = 0;                                                                \
             _i_##child < (parent)->n_items && ((child) = (parent)->items[_i_##child], 1);         \
             _i_##child++)

/* True if `n` is true or false. */
bool json_is_bool(const struct json_node *n);

/*
 * Number accessors. Each returns 0 and stores the value, or:
 *   -EINVAL  `n` is not a number, or (integer accessors) the lexeme has a
 *            fraction or an exponent, or (decimal) more precision than asked;
 *   -ERANGE  the value does not fit (including a negative number for the
 *            unsigned accessors, "-0" too).
 * json_number_decimal stores value × 10^scale as an exact integer: scale 3
 * turns "1.5" into 1500 and rejects "1.2345"; exponents are honoured
 * ("15e-1" is 1500). scale must be ≤ 18.
 * json_number_double uses strtod() and so assumes the "C" LC_NUMERIC (the
 * default; ringfence never calls setlocale); returns -ERANGE on overflow to
 * infinity.
 */
int json_number_uint64(const struct json_node *n, uint64_t *ret);
int json_number_int64(const struct json_node *n, int64_t *ret);
int json_number_decimal(const struct json_node *n, unsigned scale, uint64_t *ret);
int json_number_double(const struct json_node *n, double *ret);

/*
 * json_utf8_valid — true if `len` bytes at `s` are well-formed UTF-8 (no
 * overlong forms, no surrogates, nothing above U+10FFFF). If not and
 * `bad_offset` is non-NULL, stores the offset of the first bad byte.
 * NUL bytes are valid UTF-8; callers that forbid them check separately.
 */
bool json_utf8_valid(const char *s, size_t len, size_t *bad_offset);

/*
 * json_text_is_safe — true if `len` bytes at `s` are valid UTF-8 containing
 * none of the characters json_escape_for_message() would escape except '"'
 * and '\\': no NUL or other C0/C1 control, no DEL, no zero-width, bidi
 * or line/paragraph separator characters, no BOM. For names that people read
 * (identities), where such characters would let one name pass for another.
 */
bool json_text_is_safe(const char *s, size_t len);

/*
 * json_escape_for_message — append a printable, single-line rendering of
 * `len` bytes at `s` to the NUL-terminated buffer `buf` of size `size`
 * (truncating, always NUL-terminating). Control characters (C0, DEL, C1),
 * backslash and '"' are written as JSON-style escapes, invalid UTF-8 bytes
 * as \xNN; everything else is copied. For putting untrusted text into error
 * messages that end up on a terminal.
 *
 * This is THE display escaping of ringfence: every human-readable output of
 * a string that a run or a caller controls (the audit table, ps, error
 * lines, the egress's and the daemon's refusal texts) goes through it or
 * json_escape_fwrite(), so no terminal control sequence, bidi or line
 * separator and no invalid UTF-8 reaches an operator's terminal, and every
 * escape is unambiguous (backslash itself is escaped). Only whole escapes
 * and whole characters are written: a cut never leaves half of one.
 * JSON output does not use it (the JSON writer escapes by its own rules).
 */
void json_escape_for_message(char *buf, size_t size, const char *s, size_t len);

/*
 * json_escape_fwrite — json_escape_for_message()'s rendering of `len` bytes
 * at `s`, written to `f` without a length limit. With `keep_quotes`, '"' and
 * backslash are written as they are: for a whole message line whose quoted
 * pieces may already be escaped (the CLI's error line), where only what
 * acts on a terminal must go. 0, or -EIO if a write failed.
 */
int json_escape_fwrite(FILE *f, const char *s, size_t len, bool keep_quotes);

/*
 * Key paths, the "where" of an error message: "limits.pids",
 * "filesystem.read_only[2]", "env[\"A B\"]". json_keypath_append_key adds
 * ".key" (no dot at the start), or ["key"] with escapes when the key is not
 * made only of [A-Za-z0-9_-]; json_keypath_append_index adds "[i]". Both
 * append to the NUL-terminated `buf` of `size` bytes and stop cleanly
 * (never splitting a character) when it is full.
 */
void json_keypath_append_key(char *buf, size_t size, const char *key, size_t key_len);
void json_keypath_append_index(char *buf, size_t size, size_t index);

/*
 * JSON writer helpers (used for canonical output, e.g. policy_to_json()).
 * struct json_buf is a growing, NUL-terminated byte buffer; `data` is owned.
 * Every append returns 0, -ENOMEM, or -E2BIG if the buffer would exceed
 * JSON_OUTPUT_MAX (a backstop: writers bound their output by their own
 * limits long before). After an error, further appends fail with the same
 * code, so callers may check once at the end.
 */
struct json_buf {
        char *data;
        size_t len, cap;
        int error; /* first error, 0 if none */
};

/* Append raw bytes. */
int json_buf_append(struct json_buf *b, const char *s, size_t len);
/* Append `len` bytes of valid UTF-8 as a JSON string literal with canonical escapes:
 * \" \\ \b \f \n \r \t, \u00xx (lower-case hex) for other C0 controls, all else raw.
 * -EINVAL if `s` is not valid UTF-8 or contains NUL. */
int json_buf_append_string(struct json_buf *b, const char *s, size_t len);
/* The same for text that need not be UTF-8 (a command a caller named):
 * every byte that is not part of well-formed UTF-8, and NUL, is written as
 * U+FFFD, as the audit log records it. -ENOMEM, or the buffer's error. */
int json_buf_append_string_lossy(struct json_buf *b, const char *s, size_t len);
/* Append an unsigned integer in decimal. */
int json_buf_append_uint(struct json_buf *b, uint64_t v);
/* Append v[0, n) as a JSON array of strings, each as json_buf_append_string. */
int json_buf_append_string_array(struct json_buf *b, char *const *v, size_t n);
/* Release the buffer's memory; leaves it empty. */
void json_buf_done(struct json_buf *b);
