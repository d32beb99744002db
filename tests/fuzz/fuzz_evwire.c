/*
 * fuzz_evwire.c — libFuzzer target for the egress process's event records
 * as the supervisor reads them (src/egress/evwire.c). Beyond no crash and
 * no leak: the records of a datagram cover it exactly; a parsed record
 * names an egress.* or secret.* event, at most AUDIT_FIELDS_MAX fields,
 * each a keyed string or integer; a synchronous record is only ever the
 * last; only a secret.exfil can kill the run.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress/egress.h"
#include "egress/evwire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size > EGRESS_EVENT_BATCH_MAX)
                return 0;
        char *msg = malloc(size ? size : 1);
        if (!msg)
                return 0;
        memcpy(msg, data, size);
        size_t off = 0;
        bool last = size == 0;
        while (off < size) {
                size_t len = egress_batch_next(msg + off, size - off, &last);
                if (len > size - off || (!last && msg[off + len] != '\n') ||
                    memchr(msg + off, '\n', len))
                        abort();
                struct egress_record r;
                int k = egress_record_parse(msg + off, len, last, &r);
                if (k == 0) {
                        if (!r.root || !r.event ||
                            (strncmp(r.event, "egress.", 7) && strncmp(r.event, "secret.", 7)) ||
                            r.n_fields > AUDIT_FIELDS_MAX || (!r.is_async && !last) ||
                            (r.kill && strcmp(r.event, "secret.exfil")))
                                abort();
                        for (size_t i = 0; i < r.n_fields; i++)
                                if (!r.f[i].key ||
                                    (r.f[i].type != AUDIT_STR && r.f[i].type != AUDIT_INT) ||
                                    (r.f[i].type == AUDIT_STR && !r.f[i].s))
                                        abort();
                } else if (r.root || r.event || r.n_fields)
                        abort();
                egress_record_free(&r);
                egress_record_free(&r); /* idempotent */
                off += len + !last;
        }
        if (off != size) /* a trailing newline ends the last record too */
                abort();
        free(msg);
        return 0;
}
