/*
 * nflog.c — the supervisor reads the run's ruleset refusals (see nflog.h).
 *
 * Each refused destination is recorded once per run (the ruleset already
 * rate-limits what it logs; this table makes "UDP to 192.0.2.1:53 sent 50
 * times" one record), and every logged refusal is counted in the end-of-
 * run summary like the egress process's refusals.
 */
#include <errno.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "audit/emit.h"
#include "policy/addr.h"
#include "egress/egress.h"
#include "sandbox/capture.h"
#include "shared/macro.h"
#include "supervisor/nflog.h"

_Static_assert(NFLOG_BATCH >= 2 * RF_CAPTURE_LOG_DESTS + RF_CAPTURE_LOG_RATE,
               "one nflog_serve call reads a whole burst of the ruleset's first refusals");

static bool seen_before(struct nflog_seen *s, const struct nflog_refusal *r, bool *full)
{
        *full = false;
        for (size_t i = 0; i < s->n; i++)
                if (s->v[i].family == r->family && s->v[i].proto == r->proto &&
                    s->v[i].port == r->port && !memcmp(s->v[i].addr, r->addr, 16))
                        return true;
        if (s->n >= NFLOG_DESTS_MAX) {
                *full = true;
                return false;
        }
        s->v[s->n++] = *r;
        return false;
}

static void refused(struct nflog_seen *s, const struct nflog_refusal *r, struct audit_emitter *e)
{
        char proto[8], host[46], key[80], fix[120];
        nflog_format(r, proto, host);
        bool tcp = r->proto == IPPROTO_TCP;
        const char *reason =
                tcp ? "refused by the run's ruleset: not an address this run may reach"
                    : "refused by the run's ruleset: UDP and other non-TCP traffic go nowhere but "
                      "the run's resolver (127.0.0.1:53)";
        /* a hint only where a rule is a sensible answer: never toward cloud
         * metadata, loopback, link-local or other addresses no run needs */
        enum addr_class cls = addr_classify(r->addr, r->family);
        bool hint = cls == ADDR_PUBLIC || cls == ADDR_PRIVATE || cls == ADDR_CGNAT ||
                    cls == ADDR_RESERVED;
        if (tcp && hint)
                snprintf(fix, sizeof fix,
                         r->family == AF_INET6 ? "--allow-host [%s]:%u" : "--allow-host %s:%u",
                         host, r->port);
        else
                fix[0] = '\0';
        struct audit_field f[] = {
                {.key = "host", .type = AUDIT_STR, .s = host},
                {.key = "port", .type = AUDIT_INT, .i = r->port},
                {.key = "proto", .type = AUDIT_STR, .s = proto},
                {.key = "path", .type = AUDIT_STR, .s = "capture"},
                {.key = "via", .type = AUDIT_STR, .s = "capture"}, /* as the egress process's */
                {.key = "reason", .type = AUDIT_STR, .s = reason},
                {.key = "fix", .type = AUDIT_STR, .s = fix},
        };
        egress_refusal_note(f, ARRAY_SIZE(f));
        bool full;
        if (seen_before(s, r, &full) || !e)
                return;
        snprintf(key, sizeof key, "%s:%s:%u", proto, host, r->port);
        struct rf_error err = {0};
        /* beyond the table: one coalescing key for all of them */
        (void)audit_emit(e, "egress.deny", full ? "capture:overflow" : key,
                         "refused connections to", f, ARRAY_SIZE(f), 0, &err);
}

int nflog_serve(int fd, struct nflog_seen *seen, struct audit_emitter *e)
{
        static _Alignas(struct nlmsghdr) uint8_t buf[NFLOG_MSG_MAX];
        int count = 0;

        for (int k = 0; k < NFLOG_BATCH; k++) {
                ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                break;
                        if (errno == ENOBUFS) /* the kernel dropped some: read on */
                                continue;
                        return -errno;
                }
                if (n == 0)
                        return -ECONNRESET;
                size_t off = 0;
                while ((size_t)n - off >= sizeof(struct nlmsghdr)) {
                        struct nlmsghdr h;
                        memcpy(&h, buf + off, sizeof h);
                        if (h.nlmsg_len < sizeof h || h.nlmsg_len > (size_t)n - off)
                                break;
                        struct nflog_refusal r;
                        if (nflog_parse(buf + off, (size_t)n - off, &r) == 1) {
                                refused(seen, &r, e);
                                count++;
                        }
                        off += NLMSG_ALIGN(h.nlmsg_len);
                }
        }
        return count;
}
