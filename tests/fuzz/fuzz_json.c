/*
 * fuzz_json.c — libFuzzer target for the strict JSON parser (src/shared/json.c).
 *
 * Beyond "no crash, no leak, no UB" it checks invariants on every document
 * that parses:
 *   - every member can be found again by its key (json_object_get);
 *   - positions are 1-based and never go backwards in document order;
 *   - every string is valid UTF-8 without NUL, and the canonical writer's
 *     rendering of it parses back to the same bytes;
 *   - the number accessors agree with each other;
 *   - error messages and key paths are single printable lines.
 * A violated invariant aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                   \
        do {                                                                                       \
                if (!(x))                                                                          \
                        abort();                                                                   \
        } while (0)

static void check_line(const char *s)
{
        for (; *s; s++)
                CHECK((unsigned char)*s >= 0x20 && (unsigned char)*s != 0x7f);
}

static void check_string(const char *s, size_t len)
{
        struct json_buf b = {0};
        struct json_node *n = NULL;
        char msg[128] = "";

        CHECK(s[len] == '\0');
        CHECK(!memchr(s, '\0', len));
        CHECK(json_utf8_valid(s, len, NULL));
        json_escape_for_message(msg, sizeof msg, s, len);
        check_line(msg);

        CHECK(json_buf_append_string(&b, s, len) == 0);
        CHECK(json_parse(b.data, b.len, &n, NULL) == 0);
        CHECK(n->type == JSON_STRING && n->len == len && memcmp(n->str, s, len) == 0);
        json_node_free(n);
        json_buf_done(&b);
}

static void check_number(const struct json_node *n)
{
        uint64_t u, dec;
        int64_t i;
        double d;
        int ru = json_number_uint64(n, &u);
        int ri = json_number_int64(n, &i);
        int rd = json_number_decimal(n, 0, &dec);

        CHECK(ru == 0 || ru == -EINVAL || ru == -ERANGE);
        CHECK(ri == 0 || ri == -EINVAL || ri == -ERANGE);
        if (ru == 0)
                CHECK(rd == 0 && dec == u);
        if (ru == 0 && ri == 0)
                CHECK((uint64_t)i == u);
        (void)json_number_decimal(n, 3, &dec);
        (void)json_number_double(n, &d);
}

static void walk(const struct json_node *n, unsigned *line, unsigned *col)
{
        CHECK(n->line >= 1 && n->col >= 1);
        CHECK(n->line > *line || (n->line == *line && n->col > *col) || (*line == 0 && *col == 0));
        *line = n->line;
        *col = n->col;

        switch (n->type) {
        case JSON_STRING:
                check_string(n->str, n->len);
                break;
        case JSON_NUMBER:
                CHECK(n->len > 0 && n->len <= JSON_NUMBER_MAX);
                check_number(n);
                break;
        case JSON_OBJECT:
        case JSON_ARRAY:
                CHECK(n->n_items <= JSON_MEMBERS_MAX);
                for (size_t k = 0; k < n->n_items; k++) {
                        const struct json_node *c = n->items[k];
                        if (n->type == JSON_OBJECT) {
                                CHECK(c->key);
                                check_string(c->key, c->key_len);
                                CHECK(json_object_get(n, c->key) == c);
                                CHECK(c->key_line < c->line ||
                                      (c->key_line == c->line && c->key_col < c->col));
                        } else {
                                CHECK(!c->key);
                        }
                        CHECK(json_array_get(n, k) == c);
                        walk(c, line, col);
                }
                break;
        case JSON_NULL:
        case JSON_TRUE:
        case JSON_FALSE:
                break;
        case _JSON_TYPE_MAX:
        case _JSON_TYPE_INVALID:
        default:
                abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct json_node *root = NULL;
        struct rf_error err = {0};
        int r;

        r = json_parse((const char *)data, size, &root, &err);
        if (r < 0) {
                CHECK(r == -EINVAL || r == -E2BIG || r == -ENOMEM);
                CHECK(err.code == r);
                CHECK(err.msg[0]);
                check_line(err.msg);
                check_line(err.keypath);
                CHECK(root == NULL);
                return 0;
        }
        unsigned line = 0, col = 0;
        walk(root, &line, &col);
        json_node_free(root);
        return 0;
}
