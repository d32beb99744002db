/*
 * trustfiles.c — the run's TLS trust files' memfd layout (trustfiles.h).
 *
 * Pure: the writer fills a fixed header, the parser checks every length
 * against the bound before adding it up (no overflow: each is at most
 * TRUSTFILES_FILE_MAX) and borrows the input. Fuzzed by
 * tests/fuzz/fuzz_trustfiles.c.
 */
#include <errno.h>
#include <string.h>

#include "sandbox/trustfiles.h"

void trustfiles_header(const size_t len[TRUST_FILES], unsigned char out[TRUSTFILES_HDR])
{
        memcpy(out, TRUSTFILES_MAGIC, 8);
        for (size_t i = 0; i < TRUST_FILES; i++)
                for (size_t b = 0; b < 8; b++)
                        out[8 + 8 * i + b] = (unsigned char)((uint64_t)len[i] >> (8 * b));
}

int trustfiles_parse(const void *buf, size_t n, size_t bound, struct trustfiles *out)
{
        const unsigned char *p = buf;

        *out = (struct trustfiles){0};
        if (n < TRUSTFILES_HDR || memcmp(p, TRUSTFILES_MAGIC, 8) != 0)
                return -EBADMSG;
        if (bound > TRUSTFILES_FILE_MAX)
                bound = TRUSTFILES_FILE_MAX;
        size_t off = TRUSTFILES_HDR;
        for (size_t i = 0; i < TRUST_FILES; i++) {
                uint64_t v = 0;
                for (size_t b = 0; b < 8; b++)
                        v |= (uint64_t)p[8 + 8 * i + b] << (8 * b);
                if (v > bound || v > n - off) {
                        *out = (struct trustfiles){0};
                        return v > bound ? -EFBIG : -EBADMSG;
                }
                out->len[i] = (size_t)v;
                out->data[i] = v ? p + off : NULL;
                off += (size_t)v;
        }
        if (off != n || !out->len[TRUST_BUNDLE] || !out->len[TRUST_CA]) {
                *out = (struct trustfiles){0};
                return -EBADMSG;
        }
        return 0;
}
