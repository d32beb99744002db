/*
 * fuzz_ownwrite.c — libFuzzer target for the access-ACL reader of
 * "writable only by its owner" (src/shared/ownwrite.c:
 * ownwrite_acl_writers, which reads a file's system.posix_acl_access).
 *
 * The input is read in a heap buffer of exactly its length. Beyond "no
 * crash, no out-of-bounds read, no UB": the answer is the one an
 * independent reading gives — not an ACL (-EINVAL) unless a version 2
 * header is followed by whole 8-byte entries; a writer (1) exactly when a
 * named user or named group entry has the write bit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/ownwrite.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
        unsigned char *copy = malloc(size ? size : 1);
        if (!copy)
                return 0;
        memcpy(copy, data, size);
        int got = ownwrite_acl_writers(copy, size);
        int want;
        if (size < 4 || (size - 4) % 8 || copy[0] != 2 || copy[1] || copy[2] || copy[3]) {
                want = -EINVAL;
        } else {
                want = 0;
                for (size_t i = 4; i + 8 <= size; i += 8) {
                        unsigned tag = (unsigned)copy[i] | (unsigned)copy[i + 1] << 8;
                        if ((tag == 2 || tag == 8) && (copy[i + 2] & 2))
                                want = 1;
                }
        }
        if (got != want)
                abort();
        free(copy);
        return 0;
}
