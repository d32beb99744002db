/*
 * trustfiles.c — how the run's TLS trust files reach init (trustfiles.h).
 *
 * The writer fills a fixed header; the parser is pure, checks every field
 * against its bound before adding anything up (no overflow: each length is
 * at most TRUSTFILES_FILE_MAX, each offset at most TRUSTFILES_SRC_OFF_MAX)
 * and is fuzzed by tests/fuzz/fuzz_trustfiles.c.
 */
#include <errno.h>
#include <string.h>

#include "sandbox/trustfiles.h"

enum { F_PRE, F_SRC, F_SRC_OFF, F_SRC_LEN, F_POST, F_FIELDS };

static void put_u64(unsigned char *p, uint64_t v)
{
        for (size_t b = 0; b < 8; b++)
                p[b] = (unsigned char)(v >> (8 * b));
}

static uint64_t get_u64(const unsigned char *p)
{
        uint64_t v = 0;
        for (size_t b = 0; b < 8; b++)
                v |= (uint64_t)p[b] << (8 * b);
        return v;
}

void trustfiles_header(const struct trustfiles *t, unsigned char out[TRUSTFILES_HDR])
{
        memcpy(out, TRUSTFILES_MAGIC, 8);
        for (size_t i = 0; i < TRUST_FILES; i++) {
                const struct trustfile *f = &t->f[i];
                unsigned char *p = out + 8 + 8 * F_FIELDS * i;
                put_u64(p + 8 * F_PRE, f->pre);
                put_u64(p + 8 * F_SRC, f->src);
                put_u64(p + 8 * F_SRC_OFF, f->src_off);
                put_u64(p + 8 * F_SRC_LEN, f->src_len);
                put_u64(p + 8 * F_POST, f->post);
        }
}

int trustfiles_parse(const unsigned char hdr[TRUSTFILES_HDR], uint64_t n, size_t bound,
                     struct trustfiles *out)
{
        *out = (struct trustfiles){0};
        if (n < TRUSTFILES_HDR || memcmp(hdr, TRUSTFILES_MAGIC, 8) != 0)
                return -EBADMSG;
        if (bound > TRUSTFILES_FILE_MAX)
                bound = TRUSTFILES_FILE_MAX;
        uint64_t off = TRUSTFILES_HDR;
        int r = 0;
        for (size_t i = 0; i < TRUST_FILES && r == 0; i++) {
                const unsigned char *p = hdr + 8 + 8 * F_FIELDS * i;
                struct trustfile *f = &out->f[i];
                uint64_t pre = get_u64(p + 8 * F_PRE), src = get_u64(p + 8 * F_SRC),
                         src_off = get_u64(p + 8 * F_SRC_OFF), src_len = get_u64(p + 8 * F_SRC_LEN),
                         post = get_u64(p + 8 * F_POST);
                if (pre > bound || src_len > bound || post > bound)
                        r = -EFBIG;
                else if (pre + src_len + post > bound)
                        r = -EFBIG;
                else if (src >= TRUST_SOURCES || src_off > TRUSTFILES_SRC_OFF_MAX ||
                         (src == TRUST_SRC_NONE && (src_off || src_len)))
                        r = -EBADMSG;
                else if (pre + post > n - off)
                        r = -EBADMSG;
                else {
                        f->len = (size_t)(pre + src_len + post);
                        f->pre_off = off;
                        f->pre = pre;
                        f->src = (unsigned)src;
                        f->src_off = src_off;
                        f->src_len = src_len;
                        f->post_off = off + pre;
                        f->post = post;
                        off += pre + post;
                }
        }
        if (r == 0 && (off != n || !out->f[TRUST_BUNDLE].len || !out->f[TRUST_CA].len))
                r = -EBADMSG;
        if (r < 0)
                *out = (struct trustfiles){0};
        return r;
}
