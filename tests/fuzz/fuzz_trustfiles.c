/*
 * fuzz_trustfiles.c — libFuzzer target for the trust files' memfd layout
 * (src/sandbox/trustfiles.c), which init parses from the header of the
 * memfd the supervisor wrote (MSG_TRUST).
 *
 * The first byte picks the bound (so small bounds reach -EFBIG), the next
 * two the memfd's length beyond the header (a few KiB at most, or a huge
 * one with 0xffff); the rest is the header, zero-padded. An accepted input
 * must agree with a model written here: the magic, every source number in
 * range, a range only with a source, each offset and length within its
 * bound, every file within the bound, the inline bytes filling the memfd
 * exactly, bundle and CA present; each file's inline parts lie inside the
 * memfd, back to back in file order; and the header the writer makes for
 * the parsed files is the input's own. A rejected input leaves the output
 * empty.
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

static uint64_t get_u64(const unsigned char *p)
{
        uint64_t v = 0;
        for (size_t k = 0; k < 8; k++)
                v |= (uint64_t)p[k] << (8 * k);
        return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 3)
                return 0;
        size_t bound = data[0] == 0xff ? TRUSTFILES_FILE_MAX + 1 : (size_t)data[0] * 16;
        unsigned extra = (unsigned)data[1] | (unsigned)data[2] << 8;
        uint64_t n = extra == 0xffff ? UINT64_MAX : TRUSTFILES_HDR + (uint64_t)extra - 8;
        if (extra < 8)
                n = extra; /* shorter than the header */
        unsigned char hdr[TRUSTFILES_HDR] = {0};
        memcpy(hdr, data + 3, size - 3 < sizeof hdr ? size - 3 : sizeof hdr);

        struct trustfiles t;
        int r = trustfiles_parse(hdr, n, bound, &t);

        /* the model */
        int want = 0;
        uint64_t off = TRUSTFILES_HDR, lens[TRUST_FILES] = {0};
        size_t b = bound > TRUSTFILES_FILE_MAX ? TRUSTFILES_FILE_MAX : bound;
        if (n < TRUSTFILES_HDR || memcmp(hdr, TRUSTFILES_MAGIC, 8) != 0)
                want = -1;
        for (size_t i = 0; want == 0 && i < TRUST_FILES; i++) {
                const unsigned char *p = hdr + 8 + 40 * i;
                uint64_t pre = get_u64(p), src = get_u64(p + 8), src_off = get_u64(p + 16),
                         src_len = get_u64(p + 24), post = get_u64(p + 32);
                if (pre > b || src_len > b || post > b || pre + src_len + post > b ||
                    src >= TRUST_SOURCES || src_off > TRUSTFILES_SRC_OFF_MAX ||
                    (src == TRUST_SRC_NONE && (src_off || src_len)) || pre + post > n - off)
                        want = -1;
                else {
                        lens[i] = pre + src_len + post;
                        off += pre + post;
                }
        }
        if (want == 0 && (off != n || !lens[TRUST_BUNDLE] || !lens[TRUST_CA]))
                want = -1;

        CHECK((r == 0) == (want == 0));
        if (r == 0) {
                uint64_t at = TRUSTFILES_HDR;
                for (size_t i = 0; i < TRUST_FILES; i++) {
                        const struct trustfile *f = &t.f[i];
                        CHECK(f->len == lens[i] && f->len == f->pre + f->src_len + f->post);
                        CHECK(f->pre_off == at && f->post_off == at + f->pre);
                        CHECK(f->post_off + f->post <= n);
                        at += f->pre + f->post;
                }
                CHECK(at == n);
                unsigned char again[TRUSTFILES_HDR];
                trustfiles_header(&t, again);
                CHECK(memcmp(again, hdr, TRUSTFILES_HDR) == 0);
        } else {
                for (size_t i = 0; i < TRUST_FILES; i++)
                        CHECK(t.f[i].len == 0 && t.f[i].src == 0 && t.f[i].pre_off == 0);
        }
        return 0;
}
