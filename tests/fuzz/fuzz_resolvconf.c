/*
 * fuzz_resolvconf.c — libFuzzer target for resolv_conf_parse
 * (src/egress/resolvconf.c). Beyond no crash: at most EGRESS_NS_MAX
 * servers, each AF_INET or AF_INET6 on port 53 with the matching length,
 * and each one's address appears in the input as a `nameserver` line.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress/egress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *text = malloc(size ? size : 1);
        struct sockaddr_storage ns[EGRESS_NS_MAX];
        socklen_t len[EGRESS_NS_MAX];

        if (!text)
                return 0;
        memcpy(text, data, size);
        size_t n = resolv_conf_parse(text, size, ns, len);
        if (n > EGRESS_NS_MAX)
                abort();
        for (size_t i = 0; i < n; i++) {
                if (ns[i].ss_family == AF_INET) {
                        const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ns[i];
                        if (len[i] != sizeof *s4 || ntohs(s4->sin_port) != 53)
                                abort();
                } else if (ns[i].ss_family == AF_INET6) {
                        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ns[i];
                        if (len[i] != sizeof *s6 || ntohs(s6->sin6_port) != 53)
                                abort();
                } else
                        abort();
        }
        if (n > 0 && (size < 12 || !memmem(text, size, "nameserver", 10)))
                abort();
        free(text);
        return 0;
}
