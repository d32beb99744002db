/*
 * resolvconf.c — the nameservers of a resolv.conf text, for the egress
 * process's own resolver (pure; fuzzed by tests/fuzz/fuzz_resolvconf.c).
 * Only `nameserver ADDR` lines with a canonical IPv4 or IPv6 literal
 * count; options, search domains, scoped (%zone) or odd spellings are
 * skipped. See egress.h.
 */
#include <netinet/in.h>
#include <string.h>

#include "egress/egress.h"

size_t resolv_conf_parse(const char *text, size_t len, struct sockaddr_storage ns[EGRESS_NS_MAX],
                         socklen_t ns_len[EGRESS_NS_MAX])
{
        size_t n = 0, i = 0;
        while (i < len && n < EGRESS_NS_MAX) {
                size_t e = i;
                while (e < len && text[e] != '\n')
                        e++;
                const char *l = text + i;
                size_t ll = e - i;
                i = e + 1;
                if (ll < 11 || memcmp(l, "nameserver", 10) || (l[10] != ' ' && l[10] != '\t'))
                        continue;
                size_t a = 10;
                while (a < ll && (l[a] == ' ' || l[a] == '\t'))
                        a++;
                size_t b = a;
                while (b < ll && l[b] != ' ' && l[b] != '\t' && l[b] != '\r' && l[b] != '#')
                        b++;
                uint8_t addr[16];
                int family;
                if (b == a || net_ip_parse(l + a, b - a, false, addr, &family) < 0)
                        continue;
                memset(&ns[n], 0, sizeof ns[n]);
                if (family == AF_INET) {
                        struct sockaddr_in *s4 = (struct sockaddr_in *)&ns[n];
                        s4->sin_family = AF_INET;
                        s4->sin_port = htons(53);
                        memcpy(&s4->sin_addr, addr, 4);
                        ns_len[n] = sizeof *s4;
                } else {
                        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ns[n];
                        s6->sin6_family = AF_INET6;
                        s6->sin6_port = htons(53);
                        memcpy(&s6->sin6_addr, addr, 16);
                        ns_len[n] = sizeof *s6;
                }
                n++;
        }
        return n;
}
