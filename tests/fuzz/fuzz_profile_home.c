/*
 * fuzz_profile_home.c — libFuzzer target for what a profile makes of a
 * caller's agent settings (src/cli/profile_home.c, its pure parts): JSON
 * with comments made JSON (profile_json_uncomment), Gemini CLI's
 * settings.json (profile_gemini_settings) and Codex's config.toml
 * (profile_codex_config).
 *
 * Beyond "no crash, no out-of-bounds access, no UB": uncommenting keeps
 * the length and every newline, and changes bytes only into spaces;
 * Gemini's settings, when accepted, come out as one JSON object that
 * json_parse reads back; Codex's config holds sandbox_mode =
 * "danger-full-access" as its first line. profile_home.c is compiled into
 * the target; the caller's identity (used only to read files) is stubbed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/profile_home.h"
#include "shared/json.h"

int LLVMFuzzerTestOneInput(const char *data, size_t size);

int caller_enter(const struct rf_caller *c)
{
        (void)c;
        return -EPERM;
}

void caller_leave(const struct rf_caller *c)
{
        (void)c;
}

int LLVMFuzzerTestOneInput(const char *data, size_t size)
{
        char *copy = malloc(size ? size : 1), *out = NULL;
        size_t n = 0;
        struct rf_error err = {0};
        struct json_node *doc = NULL;

        if (!copy)
                return 0;
        memcpy(copy, data, size);
        profile_json_uncomment(copy, size);
        for (size_t i = 0; i < size; i++)
                if (copy[i] != data[i] && (copy[i] != ' ' || data[i] == '\n'))
                        abort();
        free(copy);

        if (profile_gemini_settings(data, size, &out, &n, &err) == 0) {
                if (!out || json_parse(out, n, &doc, &err) < 0 || doc->type != JSON_OBJECT)
                        abort();
                json_node_free(doc);
        }
        free(out);
        out = NULL;
        if (profile_codex_config(data, size, "/ws", &out, &n) == 0) {
                static const char first[] = "sandbox_mode = \"danger-full-access\"\n";
                if (!out || n < sizeof first - 1 || memcmp(out, first, sizeof first - 1))
                        abort();
        }
        free(out);
        return 0;
}
