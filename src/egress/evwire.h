/*
 * evwire.h — the records of the egress process's event channel, as the
 * supervisor reads them (pure; fuzzed by tests/fuzz/fuzz_evwire.c).
 *
 * A datagram carries one or more records separated by '\n' (at most
 * EGRESS_EVENT_BATCH_MAX bytes, egress.h); a record is one JSON object of
 * at most EGRESS_EVENT_MAX bytes naming an event the egress process may
 * write. egress_event_serve (egress.c) splits, parses, records and answers.
 */
#ifndef RINGFENCE_EGRESS_EVWIRE_H
#define RINGFENCE_EGRESS_EVWIRE_H

#include <stdbool.h>
#include <stddef.h>

#include "audit/audit.h"
#include "shared/json.h"

struct egress_record {
        struct json_node *root; /* owned: the strings below point into it */
        const char *event;      /* one of the egress process's events */
        const char *key;        /* the coalescing key, or NULL */
        const char *what;       /* how its coalesced repeats are named, or NULL */
        bool is_async;          /* wants no answer */
        bool kill;              /* a secret.exfil whose binding ends the run */
        size_t n_fields;
        struct audit_field f[AUDIT_FIELDS_MAX]; /* AUDIT_STR or AUDIT_INT */
};

/*
 * egress_batch_next — the record at p (`left` bytes to the datagram's end):
 * its length, with *last set when no '\n' follows it. The next one starts
 * len + 1 bytes on. Pure.
 */
size_t egress_batch_next(const char *p, size_t left, bool *last);

/*
 * egress_record_parse — parse one record of `n` bytes. A synchronous
 * record (no "async":true) is valid only as its datagram's `last`. Returns
 * 0 with *r filled (egress_record_free it), or -EBADMSG; r->is_async is
 * set whenever the record was an object saying so (a failed async record
 * wants no answer either). Pure.
 */
int egress_record_parse(const char *msg, size_t n, bool last, struct egress_record *r);

/* egress_record_free — release what egress_record_parse kept (idempotent). */
void egress_record_free(struct egress_record *r);

#endif
