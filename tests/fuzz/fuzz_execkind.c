/*
 * fuzz_execkind.c — libFuzzer target for exec_kind (src/shared/execkind.c),
 * which reads the first bytes of a createContainer hook's binary.
 *
 * The input is copied into a heap buffer of exactly its length (an
 * over-read is ASan's). Beyond "no crash": the result agrees with a model
 * written here — "#!" a script; not ELF other; an ELF whose class or byte
 * order is unknown, whose header is cut short, whose program header size
 * is below the class's, with PN_XNUM, or whose program headers do not lie
 * within the input -EBADMSG; else a loader exactly when one program
 * header's type is PT_INTERP.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/execkind.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static uint64_t rd(const unsigned char *p, size_t n, int msb)
{
        uint64_t v = 0;
        for (size_t i = 0; i < n; i++)
                v = msb ? v << 8 | p[i] : v | (uint64_t)p[i] << (8 * i);
        return v;
}

static int model(const unsigned char *d, size_t n)
{
        if (n >= 2 && d[0] == '#' && d[1] == '!')
                return EXEC_SCRIPT;
        if (n < 4 || memcmp(d, "\177ELF", 4))
                return EXEC_OTHER;
        if (n < 16 || (d[4] != 1 && d[4] != 2) || (d[5] != 1 && d[5] != 2))
                return -EBADMSG;
        int w = d[4] == 2, m = d[5] == 2;
        if (n < (size_t)(w ? 64 : 52))
                return -EBADMSG;
        uint64_t off = rd(d + (w ? 0x20 : 0x1c), w ? 8 : 4, m),
                 ent = rd(d + (w ? 0x36 : 0x2a), 2, m), num = rd(d + (w ? 0x38 : 0x2c), 2, m);
        if (ent < (uint64_t)(w ? 56 : 32) || num == 0xffff)
                return -EBADMSG;
        /* in 128 bits: no overflow to reason about */
        if ((unsigned __int128)off + (unsigned __int128)ent * num > n)
                return -EBADMSG;
        for (uint64_t i = 0; i < num; i++)
                if (rd(d + off + i * ent, 4, m) == 3)
                        return EXEC_LOADER;
        return EXEC_STATIC;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
        if (size > EXEC_HEAD_MAX)
                size = EXEC_HEAD_MAX;
        unsigned char *copy = malloc(size ? size : 1);
        if (!copy)
                return 0;
        memcpy(copy, data, size);
        if (exec_kind(copy, size) != model(copy, size))
                abort();
        free(copy);
        return 0;
}
