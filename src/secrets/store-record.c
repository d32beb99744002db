/*
 * store-record.c — the store's record format, read without trusting it.
 * Pure (no syscalls); fuzzed by tests/fuzz/fuzz_store.c.
 */
#include <errno.h>
#include <string.h>

#include "secrets/store.h"

static uint32_t le32(const unsigned char *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
        return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

int store_record_parse(const void *buf, size_t len, struct store_record *rec)
{
        const unsigned char *b = buf;

        if (len < STORE_HEADER_LEN + STORE_MAC_LEN || len > STORE_RECORD_MAX ||
            memcmp(b, STORE_MAGIC, 8) != 0)
                return -EBADMSG;
        uint32_t version = le32(b + 8), ct_len = le32(b + 20);
        if (version == 0 || version > SECRET_VERSION_MAX ||
            (size_t)ct_len != len - STORE_HEADER_LEN)
                return -EBADMSG;
        rec->version = version;
        rec->created = le64(b + 12);
        rec->nonce = b + 24;
        rec->ct = b + STORE_HEADER_LEN;
        rec->ct_len = ct_len;
        return 0;
}
