/*
 * evwire.c — the egress process's event records, parsed for the
 * supervisor. See evwire.h.
 */
#include <errno.h>
#include <string.h>

#include "egress/egress.h"
#include "egress/evwire.h"
#include "shared/macro.h"

/* What the egress process may record, and how its repeats are named. */
static const struct {
        const char *event;
        const char *what; /* coalesced repeats: "N more <what> <key>" */
} egress_events[] = {
        {"egress.allow", NULL},   {"egress.deny", "refused connections to"},
        {"egress.request", NULL}, {"egress.response", NULL},
        {"egress.close", NULL},   {"egress.limit", "refusals by limit"},
        {"egress.tls", NULL},     {"secret.inject", NULL},
        {"secret.exfil", NULL},
};

size_t egress_batch_next(const char *p, size_t left, bool *last)
{
        const char *nl = memchr(p, '\n', left);
        *last = !nl;
        return nl ? (size_t)(nl - p) : left;
}

void egress_record_free(struct egress_record *r)
{
        r->root = json_node_free(r->root);
}

int egress_record_parse(const char *msg, size_t n, bool last, struct egress_record *r)
{
        *r = (struct egress_record){0};
        if (n > EGRESS_EVENT_MAX || json_parse(msg, n, &r->root, NULL) < 0)
                return -EBADMSG;
        if (r->root->type != JSON_OBJECT)
                goto bad;
        const struct json_node *ev = json_object_get(r->root, "event"),
                               *key = json_object_get(r->root, "key"),
                               *fields = json_object_get(r->root, "fields"),
                               *as = json_object_get(r->root, "async");
        r->is_async = as && as->type == JSON_TRUE;
        if (!r->is_async && !last)
                goto bad;
        for (size_t i = 0; ev && ev->type == JSON_STRING && i < ARRAY_SIZE(egress_events); i++)
                if (!strcmp(ev->str, egress_events[i].event)) {
                        r->event = ev->str;
                        r->what = egress_events[i].what;
                }
        if (!r->event || !fields || fields->type != JSON_OBJECT ||
            fields->n_items > AUDIT_FIELDS_MAX || (key && key->type != JSON_STRING))
                goto bad;
        r->key = key ? key->str : NULL;
        for (size_t i = 0; i < fields->n_items; i++) {
                const struct json_node *m = fields->items[i];
                int64_t v;
                if (m->type == JSON_STRING)
                        r->f[r->n_fields++] =
                                (struct audit_field){.key = m->key, .type = AUDIT_STR, .s = m->str};
                else if (m->type == JSON_NUMBER && json_number_int64(m, &v) == 0)
                        r->f[r->n_fields++] =
                                (struct audit_field){.key = m->key, .type = AUDIT_INT, .i = v};
                else
                        goto bad;
        }
        if (!strcmp(r->event, "secret.exfil")) {
                const struct json_node *act = json_object_get(fields, "action");
                r->kill = act && act->type == JSON_STRING && !strcmp(act->str, "kill");
        }
        return 0;
bad:;
        bool was_async = r->is_async;
        egress_record_free(r);
        *r = (struct egress_record){.is_async = was_async};
        return -EBADMSG;
}
