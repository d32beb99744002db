/*
 * test_json.c — unit tests for src/shared/json.c: the strict parser (every
 * rejection class, with its exact line:col and key path), positions, limits,
 * number accessors, and the writer/escaping helpers.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/json.h"
#include "tap.h"

/* "line:col: keypath: msg" (keypath part only if set), the shape tests compare against. */
static void format_err(const struct rf_error *e, char *buf, size_t size)
{
        if (e->keypath[0])
                snprintf(buf, size, "%u:%u: %s: %s", e->line, e->col, e->keypath, e->msg);
        else
                snprintf(buf, size, "%u:%u: %s", e->line, e->col, e->msg);
}

static void check_fail_len(const char *doc, size_t len, int code, const char *want,
                           const char *name)
{
        struct json_node *root = (struct json_node *)0x1; /* must stay untouched */
        struct rf_error e = {0};
        char got[1024];
        int r;

        r = json_parse(doc, len, &root, &e);
        is_int(r, code, "%s: return code", name);
        is_int(e.code, code, "%s: err->code", name);
        format_err(&e, got, sizeof got);
        is_str(got, want, "%s: message", name);
        ok(root == (struct json_node *)0x1, "%s: *ret untouched", name);
        ok(!strchr(e.msg, '\n') && !strchr(e.keypath, '\n'), "%s: one line", name);
}

/* doc is a string literal; its length is taken with sizeof so embedded NULs count. */
#define FAIL(doc, code, want) check_fail_len((doc), sizeof(doc) - 1, (code), (want), (want))

static struct json_node *parse_ok(const char *doc, const char *name)
{
        struct json_node *root = NULL;
        struct rf_error e = {0};
        int r = json_parse(doc, strlen(doc), &root, &e);

        if (!is_int(r, 0, "%s: parses", name))
                diag("error: %u:%u: %s: %s", e.line, e.col, e.keypath, e.msg);
        return root;
}

static void test_scalars(void)
{
        static const struct {
                const char *doc;
                enum json_type type;
        } cases[] = {
                {"true", JSON_TRUE},
                {"false", JSON_FALSE},
                {"null", JSON_NULL},
                {"0", JSON_NUMBER},
                {"-0", JSON_NUMBER},
                {"1.5e3", JSON_NUMBER},
                {"-12.25E-2", JSON_NUMBER},
                {"\"\"", JSON_STRING},
                {"[]", JSON_ARRAY},
                {"{}", JSON_OBJECT},
                {" \t\r\n{ } \n", JSON_OBJECT},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct json_node *n = parse_ok(cases[i].doc, cases[i].doc);
                ok(n && n->type == cases[i].type, "'%s' has type %s", cases[i].doc,
                   json_type_name(cases[i].type));
                json_node_free(n);
        }

        struct json_node *n = parse_ok("-12.25E-2", "number lexeme");
        is_str(n ? n->str : NULL, "-12.25E-2", "number keeps its lexeme");
        json_node_free(n);

        is_str(json_type_name(JSON_TRUE), "boolean", "type name boolean");
        is_str(json_type_name(JSON_OBJECT), "object", "type name object");
        is_str(json_type_name(_JSON_TYPE_INVALID), "invalid", "type name invalid");
        ok(json_node_free(NULL) == NULL, "json_node_free(NULL)");
        struct rf_error e = {0};
        struct json_node *none = NULL;
        is_int(json_parse(NULL, 0, &none, &e), -EINVAL, "(NULL, 0) is an empty document");
        is_str(e.msg, "unexpected end of input, expected a value", "(NULL, 0) message");
        is_int(json_parse(NULL, 5, &none, NULL), -EINVAL, "(NULL, 5) is refused");
}

static void test_positions(void)
{
        const char *doc = "{\n"
                          "  \"a\": 1,\n"
                          "\t\"b\": [true, \"x\",\n"
                          "        {\"c\": null}],\n"
                          "  \"é\": \"ü\", \"d\": -2\n"
                          "}\n";
        struct json_node *root = parse_ok(doc, "positions document");
        if (!root) {
                ok(false, "skipping position checks");
                return;
        }
        const struct json_node *a = json_object_get(root, "a");
        const struct json_node *b = json_object_get(root, "b");
        const struct json_node *d = json_object_get(root, "d");
        const struct json_node *e = json_object_get(root, "é");

        is_int(root->line, 1, "root line");
        is_int(root->col, 1, "root col");
        is_int(root->n_items, 4, "root has 4 members");
        ok(a && a->key_line == 2 && a->key_col == 3, "key a at 2:3");
        ok(a && a->line == 2 && a->col == 8, "value of a at 2:8");
        ok(b && b->key_line == 3 && b->key_col == 2, "tab counts as one column: key b at 3:2");
        ok(b && b->type == JSON_ARRAY && b->line == 3 && b->col == 7, "array b at 3:7");
        const struct json_node *b1 = json_array_get(b, 1);
        ok(b1 && b1->type == JSON_STRING && b1->line == 3 && b1->col == 14, "b[1] at 3:14");
        const struct json_node *b2 = json_array_get(b, 2);
        ok(b2 && b2->line == 4 && b2->col == 9, "b[2] at 4:9");
        const struct json_node *c = json_object_get(b2, "c");
        ok(c && c->type == JSON_NULL && c->line == 4 && c->col == 15, "c at 4:15");
        ok(e && e->key_line == 5 && e->key_col == 3 && e->col == 8,
           "non-ASCII key: columns count characters (value at 5:8)");
        ok(d && d->key_col == 13 && d->col == 18, "after multibyte chars: d key 5:13, value 5:18");
        is_str(e ? e->str : NULL, "ü", "UTF-8 value");
        ok(json_array_get(b, 3) == NULL, "array_get out of range");
        ok(json_object_get(b, "x") == NULL, "object_get on array is NULL");
        ok(json_object_get(root, "zz") == NULL, "object_get missing key");
        ok(json_is_bool(json_array_get(b, 0)) && !json_is_bool(b1), "json_is_bool");

        size_t count = 0;
        const struct json_node *m;
        JSON_FOREACH(m, root)
        {
                ok(m->key != NULL, "member %zu has a key", count);
                count++;
        }
        is_int(count, 4, "JSON_FOREACH visits all members in order");
        json_node_free(root);
}

static void test_strings(void)
{
        struct json_node *n;

        n = parse_ok("\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"", "short escapes");
        is_str(n ? n->str : NULL, "a\"b\\c/d\b\f\n\r\t", "short escapes decode");
        json_node_free(n);

        n = parse_ok("\"\\u00e9\\u00E9\\u20ac\\ud83d\\ude00\"", "unicode escapes");
        is_str(n ? n->str : NULL, "éé€😀", "\\u escapes and a surrogate pair decode to UTF-8");
        is_int(n ? n->len : 0, strlen("éé€😀"), "decoded length");
        json_node_free(n);

        n = parse_ok("\"\\u007f\\u0001\"", "escaped controls are allowed");
        is_str(n ? n->str : NULL, "\x7f\x01", "escaped controls decode");
        json_node_free(n);

        n = parse_ok("\"日本語 \xf0\x9f\x98\x80 \xef\xbf\xbf\"", "raw UTF-8 up to 4 bytes");
        json_node_free(n);
}

static void test_syntax_errors(void)
{
        FAIL("", -EINVAL, "1:1: unexpected end of input, expected a value");
        FAIL("   \n ", -EINVAL, "2:2: unexpected end of input, expected a value");
        FAIL("{", -EINVAL, "1:2: unexpected end of input, expected a string (object key)");
        FAIL("[", -EINVAL, "1:2: [0]: unexpected end of input, expected a value");
        FAIL("{\"a\":1,}", -EINVAL, "1:8: trailing comma in object");
        FAIL("[1,]", -EINVAL, "1:4: [1]: trailing comma in array");
        FAIL("[1 2]", -EINVAL, "1:4: [0]: unexpected '2', expected ',' or ']'");
        FAIL("{\"a\" 1}", -EINVAL, "1:6: a: unexpected '1', expected ':' after object key");
        FAIL("{\"a\":1 \"b\":2}", -EINVAL, "1:8: a: unexpected '\"', expected ',' or '}'");
        FAIL("{a:1}", -EINVAL, "1:2: unexpected 'a', expected a string (object key)");
        FAIL("{'a':1}", -EINVAL, "1:2: strings must use double quotes");
        FAIL("// c\n{}", -EINVAL, "1:1: comments are not allowed in JSON");
        FAIL("{} /* x */", -EINVAL, "1:4: comments are not allowed in JSON");
        FAIL("{\"a\": /* x */ 1}", -EINVAL, "1:7: a: comments are not allowed in JSON");
        FAIL("{}x", -EINVAL, "1:3: trailing data after the JSON document");
        FAIL("{}{}", -EINVAL, "1:3: trailing data after the JSON document");
        FAIL("1 2", -EINVAL, "1:3: trailing data after the JSON document");
        FAIL("{}\0", -EINVAL, "1:3: trailing data after the JSON document");
        FAIL("\0", -EINVAL, "1:1: unexpected byte 0x00, expected a value");
        FAIL("\xef\xbb\xbf{}", -EINVAL, "1:1: byte order mark is not allowed");
        FAIL("[1,,2]", -EINVAL, "1:4: [1]: unexpected ',', expected a value");
        FAIL("{,}", -EINVAL, "1:2: unexpected ',', expected a string (object key)");
        FAIL("]", -EINVAL, "1:1: unexpected ']', expected a value");
        FAIL("\xc3\xa9", -EINVAL, "1:1: unexpected byte 0xc3, expected a value");
}

static void test_literal_and_number_errors(void)
{
        FAIL("NaN", -EINVAL, "1:1: invalid literal 'NaN' (expected true, false or null)");
        FAIL("Infinity", -EINVAL, "1:1: invalid literal 'Infinity' (expected true, false or null)");
        FAIL("-Infinity", -EINVAL, "1:2: unexpected 'I', expected a digit");
        FAIL("tru", -EINVAL, "1:1: invalid literal 'tru' (expected true, false or null)");
        FAIL("truex", -EINVAL, "1:1: invalid literal 'truex' (expected true, false or null)");
        FAIL("True", -EINVAL, "1:1: invalid literal 'True' (expected true, false or null)");
        FAIL("[nul]", -EINVAL, "1:2: [0]: invalid literal 'nul' (expected true, false or null)");
        FAIL("01", -EINVAL, "1:1: leading zeros are not allowed in numbers");
        FAIL("-01", -EINVAL, "1:1: leading zeros are not allowed in numbers");
        FAIL("00", -EINVAL, "1:1: leading zeros are not allowed in numbers");
        FAIL("1.", -EINVAL, "1:3: unexpected end of input, expected a digit after '.'");
        FAIL("1.e5", -EINVAL, "1:3: unexpected 'e', expected a digit after '.'");
        FAIL("1e", -EINVAL, "1:3: unexpected end of input, expected a digit in the exponent");
        FAIL("1e+", -EINVAL, "1:4: unexpected end of input, expected a digit in the exponent");
        FAIL("-", -EINVAL, "1:2: unexpected end of input, expected a digit");
        FAIL(".5", -EINVAL, "1:1: unexpected '.', expected a value");
        FAIL("+1", -EINVAL, "1:1: unexpected '+', expected a value");
        FAIL("0x10", -EINVAL, "1:2: trailing data after the JSON document");
        FAIL("1.5.3", -EINVAL, "1:4: trailing data after the JSON document");
}

static void test_string_errors(void)
{
        FAIL("\"abc", -EINVAL, "1:1: unterminated string");
        FAIL("\"abc\\", -EINVAL, "1:1: unterminated string");
        FAIL("{\"k\":\"abc", -EINVAL, "1:6: k: unterminated string");
        FAIL("\"a\\qb\"", -EINVAL, "1:4: invalid escape '\\q'");
        FAIL("\"a\\'b\"", -EINVAL, "1:4: invalid escape '\\''");
        FAIL("\"a\\\x01\"", -EINVAL, "1:4: invalid escape (byte 0x01 after '\\')");
        FAIL("\"\\u12\"", -EINVAL, "1:2: \\u must be followed by four hex digits");
        FAIL("\"\\u12g4\"", -EINVAL, "1:2: \\u must be followed by four hex digits");
        FAIL("\"\\u0000\"", -EINVAL, "1:2: NUL (\\u0000) is not allowed in strings");
        FAIL("\"a\0b\"", -EINVAL, "1:3: NUL byte is not allowed in strings");
        FAIL("\"a\x01\"", -EINVAL, "1:3: control character 0x01 in string must be escaped");
        FAIL("\"a\tb\"", -EINVAL, "1:3: control character 0x09 in string must be escaped");
        FAIL("\"a\nb\"", -EINVAL, "1:3: control character 0x0a in string must be escaped");
        FAIL("\"\\ud800\"", -EINVAL,
             "1:2: lone high surrogate \\uD800 (must be followed by a low surrogate)");
        FAIL("\"\\ud800x\"", -EINVAL,
             "1:2: lone high surrogate \\uD800 (must be followed by a low surrogate)");
        FAIL("\"\\ud800\\u0041\"", -EINVAL,
             "1:2: lone high surrogate \\uD800 (must be followed by a low surrogate)");
        FAIL("\"\\udbff\\udbff\"", -EINVAL,
             "1:2: lone high surrogate \\uDBFF (must be followed by a low surrogate)");
        FAIL("\"\\udc00\"", -EINVAL, "1:2: lone low surrogate \\uDC00");
        FAIL("\"x\\ud83d\\ude00\\udfff\"", -EINVAL, "1:15: lone low surrogate \\uDFFF");
        /* invalid UTF-8, each reported at the offending lead byte */
        FAIL("\"\xc3\"", -EINVAL, "1:2: invalid UTF-8 in string (byte 0xc3)");
        FAIL("\"\xc3", -EINVAL, "1:2: invalid UTF-8 in string (byte 0xc3)");
        FAIL("\"\xc0\x80\"", -EINVAL, "1:2: invalid UTF-8 in string (byte 0xc0)");
        FAIL("\"\xc1\xbf\"", -EINVAL, "1:2: invalid UTF-8 in string (byte 0xc1)");
        FAIL("\"\xe0\x80\x80\"", -EINVAL, "1:2: invalid UTF-8 in string (byte 0xe0)");
        FAIL("\"\xe0\x9f\xbf\"", -EINVAL, "1:2: invalid UTF-8 in string (byte 0xe0)");
        FAIL("\"\xed\xa0\x80\"", -EINVAL, "1:2: invalid UTF-8 in string (byte 0xed)");
        FAIL("\"\xed\xbf\xbf\"", -EINVAL, "1:2: invalid UTF-8 in string (byte 0xed)");
        FAIL("\"\xf0\x80\x80\x80\"", -EINVAL, "1:2: invalid UTF-8 in string (byte 0xf0)");
        FAIL("\"\xf4\x90\x80\x80\"", -EINVAL, "1:2: invalid UTF-8 in string (byte 0xf4)");
        FAIL("\"\xf5\x80\x80\x80\"", -EINVAL, "1:2: invalid UTF-8 in string (byte 0xf5)");
        FAIL("\"\xff\"", -EINVAL, "1:2: invalid UTF-8 in string (byte 0xff)");
        FAIL("\"ab\x80\"", -EINVAL, "1:4: invalid UTF-8 in string (byte 0x80)");
        FAIL("\"\xe2\x82\"", -EINVAL, "1:2: invalid UTF-8 in string (byte 0xe2)");
        FAIL("{\"\xff\":1}", -EINVAL, "1:3: invalid UTF-8 in string (byte 0xff)");
}

static void test_duplicates_and_keypaths(void)
{
        FAIL("{\"a\":1,\"b\":2,\"a\":3}", -EINVAL,
             "1:14: a: duplicate key (first at line 1, column 2)");
        FAIL("{\"x\":{\"k\":1,\n \"k\":2}}", -EINVAL,
             "2:2: x.k: duplicate key (first at line 1, column 7)");
        FAIL("{\"b\":1,\"a\":1,\"b\":1,\"a\":2}", -EINVAL,
             "1:14: b: duplicate key (first at line 1, column 2)");
        FAIL("{\"\":1,\"\":2}", -EINVAL, "1:7: [\"\"]: duplicate key (first at line 1, column 2)");
        /* keys differing only after an escape are different keys; equal after decoding are equal */
        FAIL("{\"a\":1,\"\\u0061\":2}", -EINVAL,
             "1:8: a: duplicate key (first at line 1, column 2)");
        struct json_node *n = parse_ok("{\"a\":1,\"A\":2,\"a \":3,\"aa\":4}", "near-duplicates");
        json_node_free(n);

        FAIL("{\"filesystem\":{\"read_only\":[\"/a\",]}}", -EINVAL,
             "1:34: filesystem.read_only[1]: trailing comma in array");
        FAIL("{\"a b\":[1,}", -EINVAL, "1:11: [\"a b\"][1]: unexpected '}', expected a value");
        FAIL("{\"x\":{\"a\\nb\\u001b[31m\":[tru]}}", -EINVAL,
             "1:25: x[\"a\\nb\\u001b[31m\"][0]: invalid literal 'tru' (expected true, false or "
             "null)");
        FAIL("[[[{\"deep\":{\"er\":[0,1,2,x]}}]]]", -EINVAL,
             "1:25: [0][0][0].deep.er[3]: invalid literal 'x' (expected true, false or null)");
}

static char *repeat(const char *head, const char *unit, size_t n, const char *tail)
{
        size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
        char *s = malloc(hl + ul * n + tl + 1);
        if (!s)
                abort();
        memcpy(s, head, hl);
        for (size_t i = 0; i < n; i++)
                memcpy(s + hl + i * ul, unit, ul);
        memcpy(s + hl + ul * n, tail, tl + 1);
        return s;
}

static int parse_str(const char *doc, struct rf_error *e)
{
        struct json_node *n = NULL;
        int r = json_parse(doc, strlen(doc), &n, e);
        json_node_free(n);
        return r;
}

static void test_limits(void)
{
        struct rf_error e;
        char *s, *t;

        /* depth */
        s = repeat("", "[", JSON_DEPTH_MAX, "");
        t = repeat(s, "]", JSON_DEPTH_MAX, "");
        e = (struct rf_error){0};
        is_int(parse_str(t, &e), 0, "depth %d is accepted", JSON_DEPTH_MAX);
        free(s);
        free(t);
        s = repeat("", "[", JSON_DEPTH_MAX + 1, "");
        t = repeat(s, "]", JSON_DEPTH_MAX + 1, "");
        e = (struct rf_error){0};
        is_int(parse_str(t, &e), -E2BIG, "depth %d is refused", JSON_DEPTH_MAX + 1);
        is_int(e.col, JSON_DEPTH_MAX + 1, "depth error at the opening bracket");
        is_str(e.msg, "nesting deeper than 16 levels", "depth message");
        free(s);
        free(t);
        s = repeat("", "{\"a\":", JSON_DEPTH_MAX + 1, "");
        e = (struct rf_error){0};
        is_int(parse_str(s, &e), -E2BIG, "deep objects refused");
        is_str(e.keypath, "a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a", "deep keypath");
        free(s);
        s = repeat("", "[", 1000000, "");
        is_int(parse_str(s, NULL), -E2BIG, "a million '[' fail fast, no stack overflow");
        free(s);

        /* strings */
        s = repeat("\"", "x", JSON_STRING_MAX, "\"");
        is_int(parse_str(s, NULL), 0, "string of %d bytes accepted", JSON_STRING_MAX);
        free(s);
        s = repeat("[\"", "x", JSON_STRING_MAX + 1, "\"]");
        e = (struct rf_error){0};
        is_int(parse_str(s, &e), -E2BIG, "string of %d bytes refused", JSON_STRING_MAX + 1);
        ok(e.line == 1 && e.col == 2, "string limit reported at the string's start");
        is_str(e.msg, "string longer than 4096 bytes", "string limit message");
        free(s);
        s = repeat("\"", "\\u00e9", JSON_STRING_MAX / 2 + 1, "\"");
        is_int(parse_str(s, NULL), -E2BIG, "limit counts decoded bytes (escapes expand)");
        free(s);
        s = repeat("{\"", "k", JSON_STRING_MAX + 1, "\":1}");
        is_int(parse_str(s, NULL), -E2BIG, "keys are limited too");
        free(s);
        s = repeat("\"", "x", JSON_STRING_MAX * 10, "");
        is_int(parse_str(s, NULL), -E2BIG, "unterminated huge string: limit, not a scan of it all");
        free(s);

        /* numbers */
        s = repeat("1", "0", JSON_NUMBER_MAX - 1, "");
        is_int(parse_str(s, NULL), 0, "number of %d characters accepted", JSON_NUMBER_MAX);
        free(s);
        s = repeat("[1", "0", JSON_NUMBER_MAX, "]");
        e = (struct rf_error){0};
        is_int(parse_str(s, &e), -E2BIG, "number of %d characters refused", JSON_NUMBER_MAX + 1);
        is_str(e.msg, "number longer than 64 characters", "number limit message");
        is_int(e.col, 2, "number limit at the number's start");
        free(s);

        /* members and elements */
        s = repeat("[", "0,", JSON_MEMBERS_MAX - 1, "0]");
        is_int(parse_str(s, NULL), 0, "array of %d elements accepted", JSON_MEMBERS_MAX);
        free(s);
        s = repeat("[", "0,", JSON_MEMBERS_MAX, "0]");
        e = (struct rf_error){0};
        is_int(parse_str(s, &e), -E2BIG, "array of %d elements refused", JSON_MEMBERS_MAX + 1);
        is_str(e.msg, "more than 1024 elements in an array", "element limit message");
        is_int(e.col, 2 + 2 * JSON_MEMBERS_MAX, "element limit at the extra element");
        free(s);
        {
                size_t cap = (JSON_MEMBERS_MAX + 1) * 16 + 16, used = 0;
                char *o = malloc(cap);
                if (!o)
                        abort();
                used += (size_t)snprintf(o + used, cap - used, "{");
                for (int i = 0; i < JSON_MEMBERS_MAX; i++)
                        used += (size_t)snprintf(o + used, cap - used, "%s\"k%d\":0", i ? "," : "",
                                                 i);
                used += (size_t)snprintf(o + used, cap - used, "}");
                is_int(parse_str(o, NULL), 0, "object of %d members accepted", JSON_MEMBERS_MAX);
                o[used - 1] = '\0';
                snprintf(o + used - 1, cap - used + 1, ",\"extra\":0}");
                e = (struct rf_error){0};
                is_int(parse_str(o, &e), -E2BIG, "object of %d members refused",
                       JSON_MEMBERS_MAX + 1);
                is_str(e.msg, "more than 1024 members in an object", "member limit message");
                free(o);
        }

        /* total values: 16 arrays of 1000 numbers fit (16017 values), 17 do not */
        char *inner = repeat("[", "1,", 999, "1]");
        for (int k = 16; k <= 17; k++) {
                size_t il = strlen(inner), cap = (il + 1) * (size_t)k + 3, used = 1;
                char *o = malloc(cap);
                if (!o)
                        abort();
                o[0] = '[';
                for (int i = 0; i < k; i++) {
                        if (i)
                                o[used++] = ',';
                        memcpy(o + used, inner, il);
                        used += il;
                }
                o[used++] = ']';
                o[used] = '\0';
                e = (struct rf_error){0};
                int r = parse_str(o, &e);
                if (k == 16)
                        is_int(r, 0, "%d values accepted", 1 + 16 * 1001);
                else {
                        is_int(r, -E2BIG, "more than %d values refused", JSON_NODES_MAX);
                        is_str(e.msg, "more than 16384 values in the document",
                               "value limit message");
                }
                free(o);
        }
        free(inner);

        /* whole input */
        s = repeat("\"", " ", JSON_INPUT_MAX, "\"");
        e = (struct rf_error){0};
        is_int(parse_str(s, &e), -E2BIG, "input over JSON_INPUT_MAX refused");
        is_str(e.msg, "document larger than 1048576 bytes", "input limit message");
        free(s);
}

static void num(const char *lexeme, struct json_node **n)
{
        *n = NULL;
        if (json_parse(lexeme, strlen(lexeme), n, NULL) < 0)
                *n = NULL;
}

static void test_numbers(void)
{
        static const struct {
                const char *lexeme;
                int r;
                uint64_t v;
        } u64[] = {
                {"0", 0, 0},
                {"42", 0, 42},
                {"18446744073709551615", 0, UINT64_MAX},
                {"18446744073709551616", -ERANGE, 0},
                {"99999999999999999999999", -ERANGE, 0},
                {"-1", -ERANGE, 0},
                {"-0", -ERANGE, 0},
                {"1.0", -EINVAL, 0},
                {"1e2", -EINVAL, 0},
                {"1E2", -EINVAL, 0},
                {"-1.5", -EINVAL, 0},
        };
        for (size_t i = 0; i < ARRAY_SIZE(u64); i++) {
                struct json_node *n;
                uint64_t v = 0;
                num(u64[i].lexeme, &n);
                int r = json_number_uint64(n, &v);
                is_int(r, u64[i].r, "uint64 '%s' -> %d", u64[i].lexeme, u64[i].r);
                if (r == 0)
                        ok(v == u64[i].v, "uint64 '%s' value", u64[i].lexeme);
                json_node_free(n);
        }

        static const struct {
                const char *lexeme;
                int r;
                int64_t v;
        } i64[] = {
                {"0", 0, 0},
                {"-0", 0, 0},
                {"-42", 0, -42},
                {"9223372036854775807", 0, INT64_MAX},
                {"9223372036854775808", -ERANGE, 0},
                {"-9223372036854775808", 0, INT64_MIN},
                {"-9223372036854775809", -ERANGE, 0},
                {"1.5", -EINVAL, 0},
                {"-1e3", -EINVAL, 0},
        };
        for (size_t i = 0; i < ARRAY_SIZE(i64); i++) {
                struct json_node *n;
                int64_t v = 0;
                num(i64[i].lexeme, &n);
                int r = json_number_int64(n, &v);
                is_int(r, i64[i].r, "int64 '%s' -> %d", i64[i].lexeme, i64[i].r);
                if (r == 0)
                        ok(v == i64[i].v, "int64 '%s' value", i64[i].lexeme);
                json_node_free(n);
        }

        static const struct {
                const char *lexeme;
                unsigned scale;
                int r;
                uint64_t v;
        } dec[] = {
                {"1.5", 3, 0, 1500},
                {"1.500", 3, 0, 1500},
                {"1.50000", 3, 0, 1500},
                {"0.001", 3, 0, 1},
                {"0.0001", 3, -EINVAL, 0},
                {"1.2345", 3, -EINVAL, 0},
                {"15e-1", 3, 0, 1500},
                {"0.15E1", 3, 0, 1500},
                {"1e-3", 3, 0, 1},
                {"1e-4", 3, -EINVAL, 0},
                {"0e-99999999999999", 3, 0, 0},
                {"0e99999999999999", 3, 0, 0},
                {"1e99999999999999", 3, -ERANGE, 0},
                {"100e-2", 0, 0, 1},
                {"120e-1", 0, 0, 12},
                {"1e18", 0, 0, 1000000000000000000ULL},
                {"1e20", 0, -ERANGE, 0},
                {"18446744073709551.615", 3, 0, UINT64_MAX},
                {"18446744073709551.616", 3, -ERANGE, 0},
                {"-1.5", 3, -ERANGE, 0},
                {"2", 18, 0, 2000000000000000000ULL},
                {"2", 19, -EINVAL, 0},
        };
        for (size_t i = 0; i < ARRAY_SIZE(dec); i++) {
                struct json_node *n;
                uint64_t v = 0;
                num(dec[i].lexeme, &n);
                int r = json_number_decimal(n, dec[i].scale, &v);
                is_int(r, dec[i].r, "decimal '%s' scale %u -> %d", dec[i].lexeme, dec[i].scale,
                       dec[i].r);
                if (r == 0)
                        ok(v == dec[i].v, "decimal '%s' value %" PRIu64 " (want %" PRIu64 ")",
                           dec[i].lexeme, v, dec[i].v);
                json_node_free(n);
        }

        struct json_node *n;
        double d = 0;
        num("1.5", &n);
        ok(json_number_double(n, &d) == 0 && d == 1.5, "double 1.5");
        json_node_free(n);
        num("-2.5e-3", &n);
        ok(json_number_double(n, &d) == 0 && d == -0.0025, "double -2.5e-3");
        json_node_free(n);
        num("1e400", &n);
        is_int(json_number_double(n, &d), -ERANGE, "double overflow is -ERANGE");
        json_node_free(n);

        num("\"12\"", &n);
        uint64_t u;
        is_int(json_number_uint64(n, &u), -EINVAL, "a string is not a number");
        is_int(json_number_double(n, &d), -EINVAL, "double of a string");
        json_node_free(n);
        is_int(json_number_uint64(NULL, &u), -EINVAL, "NULL node");
}

static void test_utf8_and_escaping(void)
{
        size_t off = 99;

        ok(json_utf8_valid("", 0, NULL), "empty is valid UTF-8");
        ok(json_utf8_valid("a\0b", 3, NULL), "NUL is valid UTF-8 (callers check)");
        ok(!json_utf8_valid("ab\xc3(", 4, &off) && off == 2, "bad offset reported");
        ok(!json_utf8_valid("\xed\xa0\x80", 3, NULL), "encoded surrogate invalid");
        ok(json_utf8_valid("\xf4\x8f\xbf\xbf", 4, NULL), "U+10FFFF valid");

        ok(json_text_is_safe("alice@example.com", 17), "plain ASCII is safe");
        ok(json_text_is_safe("Zoë 日本", strlen("Zoë 日本")), "letters are safe");
        ok(!json_text_is_safe("a\x1b[31m", 7), "ESC is not safe");
        ok(!json_text_is_safe("a\x7f", 2), "DEL is not safe");
        ok(!json_text_is_safe("a\xc2\x9b", 3), "C1 CSI is not safe");
        ok(!json_text_is_safe("ad\xe2\x80\xaemin", 8), "bidi override is not safe");
        ok(!json_text_is_safe("al\xe2\x80\x8bice", 8), "zero-width space is not safe");
        ok(!json_text_is_safe("a\0b", 3), "NUL is not safe");
        ok(!json_text_is_safe("\xff", 1), "invalid UTF-8 is not safe");

        char buf[64] = "";
        json_escape_for_message(buf, sizeof buf, "a\"b\\c\n\t\x1b\xc2\x9b\xe2\x80\xae\xff\xc3\xa9",
                                16);
        is_str(buf, "a\\\"b\\\\c\\n\\t\\u001b\\u009b\\u202e\\xffé", "escape for message");
        char crlf[16] = "";
        json_escape_for_message(crlf, sizeof crlf, "a\r\nb", 4);
        is_str(crlf, "a\\r\\nb", "CR and LF escaped");
        char small[8] = "";
        json_escape_for_message(small, sizeof small, "abc\xc3\xa9\xc3\xa9", 7);
        is_str(small, "abcéé", "escape truncates at character boundary (fits)");
        char tiny[5] = "";
        json_escape_for_message(tiny, sizeof tiny, "abc\xc3\xa9", 5);
        is_str(tiny, "abc", "escape never splits a character");

        char kp[32] = "";
        json_keypath_append_key(kp, sizeof kp, "limits", 6);
        json_keypath_append_key(kp, sizeof kp, "pids", 4);
        json_keypath_append_index(kp, sizeof kp, 7);
        json_keypath_append_key(kp, sizeof kp, "a.b", 3);
        is_str(kp, "limits.pids[7][\"a.b\"]", "keypath rendering");
        char kp2[8] = "";
        json_keypath_append_key(kp2, sizeof kp2, "abcdefghij", 10);
        is_str(kp2, "abcdefg", "keypath truncates");
}

static void test_writer(void)
{
        struct json_buf b = {0};

        is_int(json_buf_append_string(&b, "a\"\\\b\f\n\r\t\x01\x1f/é\x7f", 14), 0, "append string");
        is_str(b.data, "\"a\\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f/é\x7f\"", "canonical escapes");
        json_buf_done(&b);
        ok(b.data == NULL && b.len == 0, "json_buf_done resets");

        is_int(json_buf_append_string(&b, "\xff", 1), -EINVAL, "invalid UTF-8 refused");
        is_int(json_buf_append(&b, "x", 1), -EINVAL, "error is sticky");
        json_buf_done(&b);
        is_int(json_buf_append_string(&b, "a\0b", 3), -EINVAL, "NUL refused");
        json_buf_done(&b);

        /* the lossy form: bad bytes and NUL become U+FFFD, valid text as is */
        is_int(json_buf_append_string_lossy(&b, "t\xff\xc3", 3), 0, "lossy: invalid UTF-8 taken");
        is_str(b.data, "\"t\xef\xbf\xbd\xef\xbf\xbd\"", "... each bad byte as U+FFFD");
        json_buf_done(&b);
        is_int(json_buf_append_string_lossy(&b,
                                            "a\0\xe2\x82\xac\x80"
                                            "b",
                                            7),
               0, "lossy: NUL and a stray byte");
        is_str(b.data,
               "\"a\xef\xbf\xbd\xe2\x82\xac\xef\xbf\xbd"
               "b\"",
               "... the euro sign kept, the rest replaced");
        json_buf_done(&b);
        is_int(json_buf_append_string_lossy(&b, "plain\x1b", 6), 0, "lossy: valid text");
        is_str(b.data, "\"plain\\u001b\"", "... written as the strict form writes it");
        json_buf_done(&b);

        json_buf_append_uint(&b, 0);
        json_buf_append(&b, ",", 1);
        json_buf_append_uint(&b, UINT64_MAX);
        is_str(b.data, "0,18446744073709551615", "append uint");
        json_buf_done(&b);

        /* what the writer produces, the parser reads back */
        const char *nasty = "\x01\x02\x1f\"\\/\xf0\x9f\x98\x80\x7f";
        json_buf_append_string(&b, nasty, strlen(nasty));
        struct json_node *n = NULL;
        is_int(json_parse(b.data, b.len, &n, NULL), 0, "writer output parses");
        is_str(n ? n->str : NULL, nasty, "writer output round-trips");
        json_node_free(n);
        json_buf_done(&b);
}

/* The display escaping every human-readable output goes through (issue 13):
 * what a run or a caller chose never drives the operator's terminal. */
static void test_display(void)
{
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        const char osc[] = "x\x1b]0;pwn\x07\xc2\x9b"
                           "2J\\u001b\xff";
        is_int(json_escape_fwrite(f, osc, sizeof osc - 1, false), 0, "fwrite: 0");
        fclose(f);
        is_str(out, "x\\u001b]0;pwn\\u0007\\u009b2J\\\\u001b\\xff",
               "ESC, BEL, C1 CSI as \\uXXXX; a literal backslash doubled; a bad byte as \\xNN");
        free(out);

        f = open_memstream(&out, &len);
        is_int(json_escape_fwrite(f, "say \"a\\b\"\x1b[2J\x7f\n", 15, true), 0,
               "fwrite keep_quotes: 0");
        fclose(f);
        is_str(out, "say \"a\\b\"\\u001b[2J\\u007f\\n",
               "keep_quotes: quotes and backslash raw, controls and DEL still escaped");
        free(out);

        char why[8] = "";
        is_int(rf_why(why, sizeof why, -EINVAL, "%s", "too long a reason"), -EINVAL,
               "rf_why returns its r");
        is_str(why, "too lon", "... and wrote the message, truncated");
        is_int(rf_why(NULL, 0, 404, "x"), 404, "rf_why with no buffer: just r");

        char col[8] = "";
        json_escape_for_message(col, sizeof col, "ab\x1b[31m", 7);
        is_str(col, "ab", "a cut never leaves half an escape (\\u001b does not fit)");
        char ok_[16] = "";
        json_escape_for_message(ok_, sizeof ok_, "r\xc3\xa9sum\xc3\xa9", 8);
        is_str(ok_, "r\xc3\xa9sum\xc3\xa9", "valid UTF-8 letters stay as they are");
}

int main(void)
{
        test_scalars();
        test_positions();
        test_strings();
        test_syntax_errors();
        test_literal_and_number_errors();
        test_string_errors();
        test_duplicates_and_keypaths();
        test_limits();
        test_numbers();
        test_utf8_and_escaping();
        test_writer();
        test_display();
        return done();
}
