/*
 * execkind.c — what executing a file needs besides itself (execkind.h).
 *
 * Reads the ELF identification, then e_phoff, e_phentsize and e_phnum in
 * the file's own class and byte order, and each program header's p_type;
 * every read is checked against len first (sizes multiplied in size_t
 * after bounding each factor: no overflow).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "shared/execkind.h"

#define PT_INTERP_TYPE 3
#define PN_XNUM_VALUE  0xffff

static uint64_t get(const unsigned char *p, size_t n, bool msb)
{
        uint64_t v = 0;
        for (size_t i = 0; i < n; i++)
                v |= (uint64_t)p[msb ? n - 1 - i : i] << (8 * i);
        return v;
}

int exec_kind(const unsigned char *head, size_t len)
{
        if (len >= 2 && head[0] == '#' && head[1] == '!')
                return EXEC_SCRIPT;
        if (len < 16 || memcmp(head, "\177ELF", 4) != 0)
                return len >= 4 && memcmp(head, "\177ELF", 4) == 0 ? -EBADMSG : EXEC_OTHER;
        bool wide = head[4] == 2, msb = head[5] == 2;
        if ((head[4] != 1 && head[4] != 2) || (head[5] != 1 && head[5] != 2))
                return -EBADMSG;
        /* e_phoff, e_phentsize, e_phnum; the smallest program header */
        size_t ehsize = wide ? 64 : 52, at_phoff = wide ? 0x20 : 0x1c,
               at_phentsize = wide ? 0x36 : 0x2a, at_phnum = wide ? 0x38 : 0x2c,
               min_phent = wide ? 56 : 32;
        if (len < ehsize)
                return -EBADMSG;
        uint64_t phoff = get(head + at_phoff, wide ? 8 : 4, msb);
        uint64_t phent = get(head + at_phentsize, 2, msb), phnum = get(head + at_phnum, 2, msb);
        if (phent < min_phent || phnum == PN_XNUM_VALUE || phoff > len ||
            phnum > (len - phoff) / phent)
                return -EBADMSG;
        for (uint64_t i = 0; i < phnum; i++)
                if (get(head + phoff + i * phent, 4, msb) == PT_INTERP_TYPE)
                        return EXEC_LOADER;
        return EXEC_STATIC;
}
