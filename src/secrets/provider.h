/*
 * provider.h — where a bound value comes from, resolved outside the run.
 *
 *   store:NAME[@V]  the local encrypted store (store.h)
 *   exec:CMD ARG... a command such as `op read`, `bws secret get`,
 *                   `vault kv get -field=...`: run without a shell, with a
 *                   clean environment plus the binding's pass_env list,
 *                   stdin /dev/null, a timeout, in its own process group;
 *                   its stdout (less one trailing newline) is the value
 *   env:VAR         ringfence's own environment (development only; the
 *                   grant record says so), wiped from it once read
 *
 * A failure names the secret and the provider's error — exit status,
 * signal, timeout, or the first line of its stderr — never its stdout.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "policy/binding.h"
#include "shared/error.h"

/*
 * provider_resolve — the value of `b` into secret memory (*value,
 * secmem_free it; *len bytes; *version the store version, else 0).
 * `state_dir` and `key` serve store: sources. `why` receives a short
 * reason for the audit record (no provider output at all); err the full
 * one-line message. 0 or -errno.
 */
int provider_resolve(const struct secret_binding *b, const char *state_dir,
                     const unsigned char *key, unsigned char **value, size_t *len,
                     uint32_t *version, char *why, size_t why_len, struct rf_error *err);

/* provider_wipe_env — erase the value of ringfence's own variable `name`
 * in place (an env: source, once every binding is resolved). */
void provider_wipe_env(const char *name);
