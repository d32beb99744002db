/*
 * fuzz_procstat.c — libFuzzer target for procstat_parse
 * (src/shared/procstat.c), which reads /proc/PID/stat's name, state and
 * parent for `ringfence-oci ps`, exec's attach check and delete, and for
 * procstat_uid_map_initial (is this the host's root, hostuid_root).
 *
 * The input is copied into a heap buffer of exactly its length (no NUL),
 * so a read past `len` is an ASan report. Beyond "no crash, no UB": an
 * accepted line has a NUL-terminated name within its bound, a parent in
 * range, and a ')' of the input right before " STATE ".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/procstat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct procstat ps;
        char *buf = malloc(size ? size : 1);
        if (!buf)
                abort();
        memcpy(buf, data, size);
        if (procstat_parse(buf, size, &ps) == 0 &&
            (!memchr(ps.comm, '\0', sizeof ps.comm) || ps.ppid < 0 || ps.ppid > 0x3fffffff ||
             !memchr(buf, ')', size)))
                abort();
        /* the initial namespace's map: its count among the bytes, no sign */
        if (procstat_uid_map_initial(buf, size) &&
            (size < 14 || !memmem(buf, size, "4294967295", 10) || memchr(buf, '-', size)))
                abort();
        free(buf);
        return 0;
}
