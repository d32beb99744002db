/*
 * policy-internal.h — helpers shared by the files of src/policy only.
 *
 * The validation rules live here once, so the JSON parser (policy-parse.c)
 * and the CLI setters (policy.c) cannot drift apart. Each check returns NULL
 * when the value is acceptable, or a static phrase saying why not, which
 * callers put into their error message after the key path or flag name.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

/* Identity strings: 1..max bytes, UTF-8, json_text_is_safe(). */
const char *policy_ident_problem(const char *s, size_t len, size_t max);

/* Env names: env_name_valid() and not reserved. */
const char *policy_env_name_problem(const char *name);

/* Env values: UTF-8 (control characters allowed), at most POLICY_STRING_MAX bytes. */
const char *policy_env_value_problem(const char *s, size_t len);

/* network: a plain port already listed; put "name=address" replacing the
 * same name (0, -E2BIG past POLICY_NET_RULES_MAX, -ENOMEM); build the
 * canonical "name=address" entry from a name and an IP text (0 or -EINVAL
 * with *why). */
bool policy_net_port_listed(const struct rf_policy *p, uint16_t port);
int policy_net_host_put(struct rf_policy *p, const char *entry);
int policy_net_host_entry(const char *name, size_t name_len, const char *ip, size_t ip_len,
                          char *out, size_t out_len, const char **why);

/*
 * Put one secret binding, its canonical text and its typed form (taking
 * ownership of both on success), replacing one of the same delivery and
 * name. 0, -E2BIG past SECRET_BINDINGS_MAX (err->msg, keypath
 * "secrets"), -ENOMEM; `p` and the arguments unchanged on failure.
 */
int policy_secret_put(struct rf_policy *p, char *canonical, struct secret_binding *b,
                      struct rf_error *err);

/* True if `s` is one of the `n` strings of `list`. */
bool policy_strv_contains(char *const *list, size_t n, const char *s);

/* The first read_write path that is also in read_only, or NULL. Borrowed. */
const char *policy_find_conflict(const struct rf_policy *p);

/*
 * Append an already normalised, owned path to a list (taking ownership on
 * success). Returns 1 if added, 0 if it was already there (and frees it),
 * -E2BIG past POLICY_PATHS_MAX, -ENOMEM. The list is unchanged on failure
 * and the path then still belongs to the caller.
 */
int policy_list_take(char ***list, size_t *n, char *path);

/*
 * Append an already normalised, owned protected path with its directory flag
 * (taking ownership on success). Returns 1 if added, 0 if it was already
 * there (the path is freed and a true `dir` sets the existing entry's flag),
 * -E2BIG past POLICY_PATHS_MAX, -ENOMEM. protected_set is not touched. On
 * failure the list is unchanged and the path still belongs to the caller.
 */
int policy_protected_take(struct rf_policy *p, char *path, bool dir);

/*
 * Set env NAME=VALUE from already validated strings: replaces the value of
 * an existing NAME, else appends. Returns 0, -E2BIG past POLICY_ENV_MAX, or
 * -ENOMEM; `p` unchanged on failure.
 */
int policy_env_put(struct rf_policy *p, const char *name, const char *value);
