/*
 * fuzz_api.c — the daemon's request path on arbitrary bytes: the origin-
 * form HTTP parser and the API router (as the parser process runs them),
 * the operator configuration parser (and the audit scope it gives a
 * caller, which must parse back; the state dir's reserve, a share of the
 * file system never above it), and the wire unpacker the privileged
 * side uses on what the parser sends. The first byte picks which.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/api.h"
#include "daemon/config.h"
#include "daemon/scope.h"
#include "daemon/wire.h"
#include "egress/http.h"
#include "shared/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        const char *in = (const char *)data + 1;
        size_t len = size - 1;
        char why[256];
        switch (data[0] % 3) {
        case 0: {
                struct http_request hr;
                const char *w = NULL;
                int k = http_origin_request_parse(in, len, &hr, &w);
                if (k <= 0)
                        return 0;
                if ((size_t)k > len || hr.path.off + hr.path.len > (size_t)k)
                        abort();
                struct api_req r;
                if (api_route(in + hr.method.off, hr.method.len, in + hr.path.off, hr.path.len,
                              in + k, len - (size_t)k, &r, why, sizeof why) == 0) {
                        static char buf[WIRE_MAX];
                        struct wire_head h = {.conn = 1, .kind = WIRE_REQUEST}, h2;
                        struct api_req r2;
                        int n = wire_pack(&h, &r, buf, sizeof buf);
                        if (n > 0 && wire_unpack(buf, (size_t)n, &h2, &r2) == 0)
                                api_req_clear(&r2);
                        api_req_clear(&r);
                }
                return 0;
        }
        case 1: {
                struct dconf c;
                if (dconf_parse(in, len, &c, why, sizeof why) == 0) {
                        /* every caller's audit scope is one the stream can read */
                        struct json_buf j = {0};
                        gid_t g = 100;
                        if (dconf_audit_scope(&c, 1000, &g, 1, &j) && !j.error) {
                                struct audit_scope *s = NULL;
                                if (audit_scope_parse(j.data, j.len, &s) < 0)
                                        abort();
                                audit_scope_free(s);
                        }
                        json_buf_done(&j);
                        (void)dconf_limits_for(&c, 1000, &g, 1, "a");
                        /* the reserve: a share is at most half the file system */
                        if (c.reserve_pct &&
                            (dconf_reserve_bytes(&c, UINT64_MAX) > UINT64_MAX / 2 ||
                             dconf_reserve_bytes(&c, 4096) > 2048))
                                abort();
                        dconf_clear(&c);
                }
                return 0;
        }
        default: {
                struct wire_head h;
                struct api_req r;
                if (wire_unpack(in, len, &h, &r) == 0)
                        api_req_clear(&r);
                return 0;
        }
        }
}
