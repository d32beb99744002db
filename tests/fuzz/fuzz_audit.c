/*
 * fuzz_audit.c — libFuzzer target for the audit record reader
 * (src/audit/audit-record.c): audit_record_parse and audit_record_hash.
 *
 * The input is copied into a heap buffer of exactly its length (no NUL),
 * so a read past `len` is an ASan report. Beyond "no crash, no UB", the
 * properties verify relies on are checked, and a violation aborts:
 *   - an accepted record has seq >= 1, NUL-terminated run/event/prev/hash
 *     inside `store`, and prev/hash of 64 lower-case hex digits;
 *   - an accepted record's hash member is exactly the line's last 66..2
 *     bytes, so audit_record_hash succeeds on it;
 *   - audit_record_hash is deterministic and never accepts a line that
 *     does not end with `,"hash":"<64 hex>"}`.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int hex64(const char *s)
{
        for (int i = 0; i < 64; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return 0;
        return s[64] == '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *line = malloc(size ? size : 1);
        if (!line)
                return 0;
        memcpy(line, data, size);

        struct audit_record rec;
        struct rf_error err = {0};
        char h1[65], h2[65];
        int hr = audit_record_hash(line, size, h1);
        if (hr == 0) {
                if (audit_record_hash(line, size, h2) != 0 || memcmp(h1, h2, 65) != 0)
                        abort();
                if (size < 75 || line[size - 1] != '}' ||
                    memcmp(line + size - 75, ",\"hash\":\"", 9))
                        abort();
        }
        if (audit_record_parse(line, size, &rec, &err) == 0) {
                const char *end = rec.store + sizeof rec.store;
                if (rec.seq == 0 || !rec.run || !rec.event || !rec.prev || !rec.hash)
                        abort();
                if (rec.hash < rec.store || rec.hash + 65 > end || !hex64(rec.prev) ||
                    !hex64(rec.hash) || memchr(rec.run, '\0', (size_t)(end - rec.run)) == NULL)
                        abort();
                if (hr != 0 || memcmp(rec.hash, line + size - 66, 64) != 0)
                        abort();
        }
        free(line);
        return 0;
}
