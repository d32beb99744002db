/*
 * test_execkind.c — what executing a file needs besides itself
 * (src/shared/execkind.c): static and dynamic ELF of both classes and byte
 * orders (made here), a script, other files, every refusal; then the
 * host's own binaries, read from disk (the control the toolchain writes):
 * Debian's static busybox when installed, and a dynamic /bin/sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "shared/execkind.h"
#include "tap.h"

/* An ELF header of the class and byte order with program headers of the
 * given types right after it; its length. */
static size_t elf(unsigned char *b, int wide, int msb, const uint32_t *types, size_t n)
{
        size_t eh = wide ? 64 : 52, pe = wide ? 56 : 32;
        memset(b, 0, eh + n * pe);
        memcpy(b, "\177ELF", 4);
        b[4] = wide ? 2 : 1;
        b[5] = msb ? 2 : 1;
        b[6] = 1;
#define PUT(at, v, w)                                                                              \
        for (size_t k = 0; k < (w); k++)                                                           \
                b[(at) + (msb ? (w)-1 - k : k)] = (unsigned char)((uint64_t)(v) >> (8 * k));
        PUT(wide ? 0x20 : 0x1c, eh, wide ? 8 : 4);
        PUT(wide ? 0x36 : 0x2a, pe, 2);
        PUT(wide ? 0x38 : 0x2c, n, 2);
        for (size_t i = 0; i < n; i++)
                PUT(eh + i * pe, types[i], 4);
#undef PUT
        return eh + n * pe;
}

static int file_kind(const char *path)
{
        static unsigned char head[EXEC_HEAD_MAX];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -ENOENT;
        ssize_t n = pread(fd, head, sizeof head, 0);
        close(fd);
        return n < 0 ? -EIO : exec_kind(head, (size_t)n);
}

int main(void)
{
        unsigned char b[1024];
        const uint32_t stat_t[] = {1, 4}, dyn_t[] = {6, 3, 1};
        size_t n;

        n = elf(b, 1, 0, stat_t, 2);
        is_int(exec_kind(b, n), EXEC_STATIC, "64-bit LSB, PT_LOAD and PT_NOTE only: static");
        n = elf(b, 1, 0, dyn_t, 3);
        is_int(exec_kind(b, n), EXEC_LOADER, "64-bit LSB with PT_INTERP: a loader runs it");
        n = elf(b, 0, 1, dyn_t, 3);
        is_int(exec_kind(b, n), EXEC_LOADER, "32-bit MSB with PT_INTERP: a loader runs it");
        n = elf(b, 0, 0, stat_t, 2);
        is_int(exec_kind(b, n), EXEC_STATIC, "32-bit LSB without: static");
        is_int(exec_kind(b, n - 1), -EBADMSG,
               "... its last program header cut by a byte: -EBADMSG");
        n = elf(b, 1, 0, dyn_t, 0);
        is_int(exec_kind(b, n), EXEC_STATIC, "no program header at all: static (nothing to load)");
        is_int(exec_kind((const unsigned char *)"#!/bin/sh\n", 10), EXEC_SCRIPT, "#!: a script");
        is_int(exec_kind((const unsigned char *)"#!", 2), EXEC_SCRIPT, "... even bare");
        is_int(exec_kind((const unsigned char *)"PK\3\4", 4), EXEC_OTHER, "a zip: other");
        is_int(exec_kind((const unsigned char *)"", 0), EXEC_OTHER, "an empty file: other");
        is_int(exec_kind((const unsigned char *)"\177ELF\2\1", 6), -EBADMSG,
               "an ELF cut inside its identification: -EBADMSG");
        n = elf(b, 1, 0, stat_t, 2);
        b[4] = 3;
        is_int(exec_kind(b, n), -EBADMSG, "an unknown class: -EBADMSG");
        n = elf(b, 1, 0, stat_t, 2);
        b[5] = 0;
        is_int(exec_kind(b, n), -EBADMSG, "an unknown byte order: -EBADMSG");
        n = elf(b, 1, 0, stat_t, 2);
        b[0x36] = 8; /* e_phentsize 8 */
        is_int(exec_kind(b, n), -EBADMSG, "a program header size below the class's: -EBADMSG");
        n = elf(b, 1, 0, stat_t, 2);
        b[0x38] = 0xff;
        b[0x39] = 0xff;
        is_int(exec_kind(b, n), -EBADMSG, "PN_XNUM (the count elsewhere): -EBADMSG");
        n = elf(b, 1, 0, dyn_t, 3);
        memset(b + 0x20, 0xff, 8); /* e_phoff past everything */
        is_int(exec_kind(b, n), -EBADMSG, "program headers past the bytes given: -EBADMSG");
        n = elf(b, 1, 0, dyn_t, 3);
        b[0x38] = 0xf0; /* 240 headers of 56 bytes from 64: past the buffer */
        is_int(exec_kind(b, n), -EBADMSG, "more program headers than the bytes hold: -EBADMSG");

        /* the host's binaries: what the toolchain made */
        int k = file_kind("/bin/busybox");
        if (k == -ENOENT)
                diag("no /bin/busybox: Debian's static busybox is not installed");
        else
                is_int(k, EXEC_STATIC, "control: Debian's /bin/busybox (busybox-static) is static");
        is_int(file_kind("/bin/sh"), EXEC_LOADER, "control: /bin/sh (dash) needs its loader");
        return done();
}
