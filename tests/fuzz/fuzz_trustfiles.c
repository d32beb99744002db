/*
 * fuzz_trustfiles.c — libFuzzer target for the trust files' memfd layout
 * (src/sandbox/trustfiles.c), which init parses from the memfd a helper
 * wrote (MSG_TRUST).
 *
 * The first byte picks the bound (so small bounds reach -EFBIG); the rest
 * is the memfd's content, copied into a buffer of exactly its length. An
 * accepted input must agree with a model written here: the magic, three
 * little-endian lengths each within the bound, files back to back filling
 * the input exactly, bundle and CA present; each borrowed file lies inside
 * the input at its offset; and the header the writer makes for the parsed
 * lengths is the input's own. A rejected input leaves the output empty.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/trustfiles.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                   \
        do {                                                                                       \
                if (!(x))                                                                          \
                        abort();                                                                   \
        } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        size_t bound = data[0] == 0xff ? TRUSTFILES_FILE_MAX + 1 : (size_t)data[0] * 16;
        size_t n = size - 1;
        unsigned char *buf = malloc(n ? n : 1);
        if (!buf)
                return 0;
        memcpy(buf, data + 1, n);

        struct trustfiles t;
        int r = trustfiles_parse(buf, n, bound, &t);

        /* the model */
        int want = 0;
        size_t off = TRUSTFILES_HDR, lens[TRUST_FILES] = {0};
        if (n < TRUSTFILES_HDR || memcmp(buf, TRUSTFILES_MAGIC, 8) != 0)
                want = -1;
        size_t b = bound > TRUSTFILES_FILE_MAX ? TRUSTFILES_FILE_MAX : bound;
        for (size_t i = 0; want == 0 && i < TRUST_FILES; i++) {
                uint64_t v = 0;
                for (size_t k = 0; k < 8; k++)
                        v |= (uint64_t)buf[8 + 8 * i + k] << (8 * k);
                if (v > b || v > n - off)
                        want = -1;
                else {
                        lens[i] = (size_t)v;
                        off += (size_t)v;
                }
        }
        if (want == 0 && (off != n || !lens[TRUST_BUNDLE] || !lens[TRUST_CA]))
                want = -1;

        CHECK((r == 0) == (want == 0));
        if (r == 0) {
                size_t at = TRUSTFILES_HDR;
                for (size_t i = 0; i < TRUST_FILES; i++) {
                        CHECK(t.len[i] == lens[i]);
                        CHECK(t.len[i] ? t.data[i] == buf + at : t.data[i] == NULL);
                        at += t.len[i];
                }
                unsigned char hdr[TRUSTFILES_HDR];
                trustfiles_header(t.len, hdr);
                CHECK(memcmp(hdr, buf, TRUSTFILES_HDR) == 0);
        } else {
                for (size_t i = 0; i < TRUST_FILES; i++)
                        CHECK(t.len[i] == 0 && t.data[i] == NULL);
        }
        free(buf);
        return 0;
}
