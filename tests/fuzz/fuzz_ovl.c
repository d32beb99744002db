/*
 * fuzz_ovl.c — libFuzzer target for ovl_parse_super (src/sandbox/ovl-parse.c),
 * which reads an overlay mount's layers from mountinfo super options.
 *
 * The input is copied into a heap buffer of exactly its length (no NUL),
 * so a read past `len` is an ASan report. Beyond "no crash, no UB": every
 * accepted layer is absolute, NUL-terminated within its bound, has no
 * "." or ".." component, and there is at least one lower layer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/ovl.h"

static struct ovl_layers layers;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *buf = malloc(size ? size : 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        if (ovl_parse_super(buf, size, &layers) == 0) {
                if (layers.n == 0 || layers.n > OVL_LAYERS_MAX ||
                    (layers.has_upper && layers.n < 2))
                        abort();
                for (size_t i = 0; i < layers.n; i++) {
                        const char *p = layers.path[i];
                        if (p[0] != '/' || !memchr(p, '\0', OVL_PATH_MAX) || strstr(p, "/../") ||
                            strstr(p, "/./"))
                                abort();
                        size_t n = strlen(p);
                        if ((n >= 3 && !strcmp(p + n - 3, "/..")) ||
                            (n >= 2 && !strcmp(p + n - 2, "/.")))
                                abort();
                }
        }
        free(buf);
        return 0;
}
