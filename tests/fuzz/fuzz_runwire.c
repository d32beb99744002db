/*
 * fuzz_runwire.c — libFuzzer target for the daemon's typed run request to
 * its supervisor (src/supervisor/runwire.c: `ringfence run --request-fd`).
 *
 * The input is read in a heap buffer of exactly its length. Beyond "no
 * crash, no out-of-bounds read, no leak, no UB": a refusal sets the error's
 * message; what is accepted has a valid run id, an absolute state dir, a
 * command and an overlay; it encodes again, and the encoding parses to a
 * request that encodes to the same bytes (the encoder and decoder agree on
 * every accepted request).
 */
#include <stdlib.h>
#include <string.h>

#include "supervisor/runwire.h"

int LLVMFuzzerTestOneInput(const char *data, size_t size);

int LLVMFuzzerTestOneInput(const char *data, size_t size)
{
        char *copy = malloc(size ? size : 1);
        struct run_wire w, w2;
        struct rf_error err = {0};
        if (!copy)
                return 0;
        memcpy(copy, data, size);
        int r = run_wire_parse(copy, size, &w, &err);
        if (r < 0) {
                if (!err.msg[0] && r != -ENOMEM)
                        abort();
        } else {
                if (strlen(w.run_id) != RF_RUN_ID_LEN || !w.state_dir || w.state_dir[0] != '/' ||
                    !w.argc || !w.argv || w.argv[w.argc] || !w.overlay || !w.log_max)
                        abort();
                char *a = NULL, *b = NULL;
                if (run_wire_to_json(&w, &a) < 0)
                        abort();
                if (run_wire_parse(a, strlen(a), &w2, &err) < 0 || run_wire_to_json(&w2, &b) < 0 ||
                    strcmp(a, b) != 0)
                        abort();
                run_wire_clear(&w2);
                free(a);
                free(b);
        }
        run_wire_clear(&w);
        free(copy);
        return 0;
}
