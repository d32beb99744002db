/*
 * fuzz_store.c — the secret store's record reader (store_record_parse) on
 * arbitrary file contents: a parsed record's pieces lie inside the input
 * and add up to it, and its version is in range.
 */
#include <stdint.h>
#include <stdlib.h>

#include "secrets/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct store_record rec;
        if (store_record_parse(data, size, &rec) < 0)
                return 0;
        if (rec.version == 0 || rec.version > SECRET_VERSION_MAX || rec.ct < data ||
            rec.ct + rec.ct_len != data + size || rec.nonce < data || rec.nonce + 24 > rec.ct ||
            rec.ct_len < STORE_MAC_LEN)
                abort();
        return 0;
}
