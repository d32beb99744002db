/*
 * captured.c — the pure decisions of a captured connection: its original
 * destination (loopback / own / pool name / literal) and its first bytes
 * (TLS / HTTP / other) and whether they are whole enough to answer a
 * refusal. See captured.h; the loop that uses them is proxy.c.
 */
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "policy/addr.h"
#include "egress/captured.h"
#include "sandbox/plan.h" /* RF_EGRESS_CAPTURE_PORT */

static enum captured_kind refuse(struct captured_dest *out, const char *reason)
{
        out->kind = CAPD_REFUSE;
        out->reason = reason;
        return CAPD_REFUSE;
}

enum captured_kind captured_dest_decide(const struct synth_map *m, bool map_ok, int family,
                                        const uint8_t addr[16], uint16_t port,
                                        struct captured_dest *out)
{
        static const uint8_t self6[16] = SYNTH_V6_NET;
        memset(out, 0, sizeof *out);
        if (family != AF_INET && family != AF_INET6)
                return refuse(out, "not an IPv4 or IPv6 destination");
        enum addr_class k = addr_classify(addr, family);
        if (k == ADDR_LOOPBACK)
                return refuse(out, port == RF_EGRESS_CAPTURE_PORT
                                           ? "the egress process's own listener"
                                           : "a loopback address (the run's own host)");
        if (k == ADDR_UNSPECIFIED)
                return refuse(out, "an unspecified address");
        bool self;
        if (family == AF_INET) {
                uint32_t a = (uint32_t)addr[0] << 24 | (uint32_t)addr[1] << 16 |
                             (uint32_t)addr[2] << 8 | addr[3];
                self = a == SYNTH_V4_SELF;
        } else
                self = !memcmp(addr, self6, 15) && addr[15] == 1;
        if (self)
                return refuse(out, "the run's own address");
        if (!synth_in_pool(family, addr)) {
                out->kind = CAPD_LITERAL;
                return CAPD_LITERAL;
        }
        const char *name = map_ok && m ? synth_lookup(m, family, addr) : NULL;
        if (!name)
                return refuse(out, map_ok ? "not an address this run's resolver handed out"
                                          : "the map of this run's resolver is broken");
        out->kind = CAPD_NAME;
        out->name = name;
        return CAPD_NAME;
}

enum captured_first captured_first_bytes(const uint8_t *buf, size_t len)
{
        if (len == 0)
                return CAPF_NEED_MORE;
        if (buf[0] >= 20 && buf[0] <= 24)
                return CAPF_TLS;
        size_t i = 0;
        while (i < len && i < CAPTURED_METHOD_MAX && buf[i] >= 'A' && buf[i] <= 'Z')
                i++;
        if (i == CAPTURED_METHOD_MAX)
                return CAPF_OTHER; /* no method, whatever follows: cut anywhere, the same */
        if (i == len)
                return CAPF_NEED_MORE;
        if (i == 0 || buf[i] != ' ')
                return CAPF_OTHER;
        if (i + 1 == len)
                return CAPF_NEED_MORE;
        uint8_t t = buf[i + 1];
        return t == '/' || t == '*' || t == 'h' ? CAPF_HTTP : CAPF_OTHER;
}

bool captured_first_whole(const uint8_t *buf, size_t len, size_t cap)
{
        if (len >= cap)
                return true;
        switch (captured_first_bytes(buf, len)) {
        case CAPF_NEED_MORE:
                return false;
        case CAPF_TLS:
                /* a record: type, version (2), length (2, big endian), body */
                return len >= 5 && len - 5 >= ((size_t)buf[3] << 8 | buf[4]);
        case CAPF_HTTP:
                return memmem(buf, len, "\r\n\r\n", 4) || memmem(buf, len, "\n\n", 2);
        case CAPF_OTHER:
        default:
                return true;
        }
}
