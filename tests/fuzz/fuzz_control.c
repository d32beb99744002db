/*
 * fuzz_control.c — the per-run control channel's request parser on
 * arbitrary datagrams: a parsed request has a known verb and a
 * NUL-terminated argument within its limit.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/control.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct control_req r;
        const char *why = NULL;
        if (control_req_parse((const char *)data, size, &r, &why) < 0) {
                if (!why)
                        abort();
                return 0;
        }
        if ((unsigned)r.op >= _CTL_MAX || strnlen(r.arg, sizeof r.arg) > CONTROL_REASON_MAX)
                abort();
        return 0;
}
