/*
 * dnsstub.c — answering the run's DNS queries REFUSED. See dnsstub.h.
 *
 * The query is parsed by the pure reader (dns.c); names are recorded in
 * presentation form with every unusual byte escaped, and the audit layer
 * limits and escapes them again. The answer goes back to exactly the
 * address the query came from, inside the run's own namespace.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "egress/dns.h"
#include "egress/dnsstub.h"
#include "shared/macro.h"

static const char *qtype_name(uint16_t t)
{
        switch (t) {
        case 1:
                return "A";
        case 2:
                return "NS";
        case 5:
                return "CNAME";
        case 6:
                return "SOA";
        case 12:
                return "PTR";
        case 15:
                return "MX";
        case 16:
                return "TXT";
        case 28:
                return "AAAA";
        case 33:
                return "SRV";
        case 64:
                return "SVCB";
        case 65:
                return "HTTPS";
        case 255:
                return "ANY";
        default:
                return NULL;
        }
}

static void record(struct audit_emitter *e, const struct dns_query *q, const char *why)
{
        struct rf_error err = {0};
        char type[16];
        const char *tn = qtype_name(q->qtype);

        if (!e)
                return;
        if (tn)
                snprintf(type, sizeof type, "%s", tn);
        else
                snprintf(type, sizeof type, "TYPE%u", q->qtype);
        if (why) {
                struct audit_field f[] = {{.key = "error", .type = AUDIT_STR, .s = why}};
                (void)audit_emit(e, "dns.malformed", "-", "malformed DNS messages, last:", f,
                                 ARRAY_SIZE(f), 0, &err);
                return;
        }
        struct audit_field f[] = {
                {.key = "name", .type = AUDIT_STR, .s = q->name},
                {.key = "qtype", .type = AUDIT_STR, .s = type},
                {.key = "reason",
                 .type = AUDIT_STR,
                 .s = "a run resolves no names itself; its egress proxy does"},
        };
        (void)audit_emit(e, "dns.refused", q->name, "refused queries for", f, ARRAY_SIZE(f), 0,
                         &err);
}

int dnsstub_serve(int fd, struct audit_emitter *e)
{
        int n;

        for (n = 0; n < DNSSTUB_BATCH; n++) {
                uint8_t msg[DNS_MSG_MAX + 1], out[DNS_MSG_MAX];
                struct sockaddr_storage from;
                socklen_t fl = sizeof from;
                ssize_t len =
                        recvfrom(fd, msg, sizeof msg, MSG_TRUNC, (struct sockaddr *)&from, &fl);
                if (len < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                break;
                        if (errno == ECONNREFUSED) /* an earlier answer's ICMP error */
                                continue;
                        return negative_errno();
                }
                struct dns_query q;
                struct rf_error err = {0};
                int k;
                if (dns_query_parse(msg, (size_t)len > sizeof msg ? sizeof msg : (size_t)len, &q,
                                    &err) == 0) {
                        record(e, &q, NULL);
                        k = dns_refused(msg, &q, out, sizeof out);
                } else {
                        record(e, &q, err.msg);
                        k = dns_formerr(msg, (size_t)len > sizeof msg ? sizeof msg : (size_t)len,
                                        out);
                }
                if (k > 0)
                        (void)sendto(fd, out, (size_t)k, MSG_DONTWAIT, (struct sockaddr *)&from,
                                     fl);
        }
        return n;
}
