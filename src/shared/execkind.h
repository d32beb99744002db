/*
 * execkind.h — what executing a file needs besides the file itself, read
 * from its first bytes: nothing (a statically linked ELF), its program
 * interpreter (an ELF with PT_INTERP: the dynamic loader, which then opens
 * the libraries), a script's interpreter ("#!"), or what the kernel would
 * refuse or hand to binfmt_misc.
 *
 * For ringfence-oci's createContainer hooks: the binary is the host's
 * (opened in the runtime's namespace), but it runs in the container's
 * root, where everything the kernel or the loader looks up by path is the
 * image's — code of the image's, run as the container's root with every
 * capability of its user namespace and none of ringfence's layers. Only a
 * static ELF runs nothing but itself there.
 *
 * exec_kind() is pure (no allocation, no syscall), bounds every offset by
 * the bytes it is given, and is fuzzed by tests/fuzz/fuzz_execkind.c.
 */
#pragma once

#include <stddef.h>

enum exec_kind {
        EXEC_STATIC, /* an ELF without PT_INTERP (static, or static-pie) */
        EXEC_LOADER, /* an ELF with PT_INTERP: a dynamic loader runs it */
        EXEC_SCRIPT, /* "#!": an interpreter runs it */
        EXEC_OTHER,  /* neither: refused by the kernel, or binfmt_misc's */
};

/* How many of a file's first bytes exec_kind needs at most. */
#define EXEC_HEAD_MAX ((size_t)65536)

/*
 * exec_kind — the kind of the file whose first len bytes are head (all of
 * it when shorter than EXEC_HEAD_MAX). An enum exec_kind, or -EBADMSG for
 * an ELF whose header or program headers are cut short or malformed (a
 * class or byte order it does not know, a program header size too small,
 * PN_XNUM, headers past the bytes given). Pure.
 */
int exec_kind(const unsigned char *head, size_t len);
