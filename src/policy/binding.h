/*
 * binding.h — what a run is granted: secret bindings, parsed and canonical.
 *
 * A binding says where a value comes from (its source: the local store,
 * an external command such as a vault CLI, or ringfence's own environment
 * in development) and how the run receives it (its delivery: an
 * environment variable, a file on the run's private tmpfs, or on demand
 * from the run's broker socket). Policies write bindings as JSON objects,
 * the CLI as NAME=SOURCE; both become one canonical JSON text, which is
 * what the policy's canonical form (and so its hash) holds, and a typed
 * struct secret_binding made once, which the policy keeps beside it for
 * everything that acts on the binding (policy.h: rf_policy.bindings).
 *
 *   {"name": "GITHUB_TOKEN", "deliver": "env", "from": "store:github"}
 *   {"name": "db.pem", "deliver": "file", "from": "store:db-cert@2", "ttl": "10m"}
 *   {"name": "api", "deliver": "broker",
 *    "exec": ["vault", "kv", "get", "-field=token", "secret/api"],
 *    "pass_env": ["VAULT_ADDR", "VAULT_TOKEN"], "timeout": "5s"}
 *
 * An injection (issue 15) never enters the run: its variable `env` holds a
 * random placeholder and the egress process replaces the placeholder with
 * the value in requests to the binding's `hosts` only (egress/inject.h):
 *
 *   {"name": "anthropic", "deliver": "inject", "from": "store:anthropic",
 *    "env": "ANTHROPIC_API_KEY", "hosts": ["api.anthropic.com"],
 *    "header": "x-api-key: {}", "placeholder": {"prefix": "sk-ant-", "length": 108},
 *    "on_exfil": "kill"}
 *
 * "query": "key" also replaces the placeholder standing as the whole value
 * of the query parameter `key` in requests to the hosts (never elsewhere
 * in the URL). "body": true also replaces it in request bodies toward the
 * hosts (any lengths: the egress process rewrites the body's framing).
 * "basic": "USER" sets `Authorization: Basic base64(USER:VALUE)` on every
 * request to the hosts, like a header template (exclusive with "header").
 *
 * CLI: --inject ENV=SOURCE@HOST[:PORT][,HOST[:PORT]...] (split at the last '@');
 * a host entry http://HOST:PORT is plaintext HTTP (secret_inject_host_parse).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SECRET_BINDINGS_MAX        64            /* bindings per run */
#define SECRET_VALUE_MAX           (64 * 1024)   /* bytes of one value */
#define SECRET_TOTAL_MAX           (1024 * 1024) /* bytes of all of a run's values */
#define SECRET_NAME_MAX            64            /* store, file and broker names */
#define SECRET_TARGET_MAX          128           /* an env delivery's variable name */
#define SECRET_EXEC_ARGS_MAX       32            /* argv of an exec source */
#define SECRET_EXEC_ARG_MAX        4096          /* bytes of one of its arguments */
#define SECRET_PASS_ENV_MAX        32            /* variables passed through to it */
#define SECRET_EXEC_TIMEOUT_MS     10000         /* default exec timeout */
#define SECRET_EXEC_TIMEOUT_MAX_MS 300000        /* longest exec timeout */
#define SECRET_TTL_MAX_MS          (30ULL * 86400 * 1000)
#define SECRET_VERSION_MAX         999999
#define SECRET_INJECT_HOSTS_MAX    16  /* hosts of one injection */
#define SECRET_INJECT_HOST_MAX     253 /* a host name */
/* an injection host entry: "http://" + name + ":65535" */
#define SECRET_INJECT_ENTRY_MAX (SECRET_INJECT_HOST_MAX + 13)
#define SECRET_HEADER_MAX       256 /* an injection's header template */
#define SECRET_QUERY_MAX        64  /* an injection's query parameter name */
#define SECRET_BASIC_USER_MAX   128 /* an injection's HTTP Basic user name */
#define SECRET_PH_PREFIX_MAX    32  /* a placeholder's fixed prefix */
#define SECRET_PH_RANDOM_MIN    22  /* random characters: 22 x 6 bits = 132 bits */
#define SECRET_PH_DEFAULT_LEN   40  /* length without a shape */
#define SECRET_PH_LEN_MAX       256 /* a placeholder's length */

enum secret_delivery {
        SECRET_ENV,
        SECRET_FILE,
        SECRET_BROKER,
        SECRET_INJECT,
        _SECRET_DELIVERY_MAX
};
enum secret_source { SOURCE_STORE, SOURCE_EXEC, SOURCE_ENV, _SOURCE_MAX };

struct secret_binding {
        enum secret_delivery delivery;
        char name[SECRET_TARGET_MAX + 1]; /* variable (env) or file/broker name */
        enum secret_source source;
        char key[SECRET_TARGET_MAX + 1]; /* store: the secret's name; env: the variable */
        uint32_t version;                /* store: a pinned version, 0 = the latest */
        char **argv;                     /* exec: owned, NULL-terminated */
        size_t argc;
        char **pass_env; /* exec: variables passed through from ringfence's environment */
        size_t n_pass_env;
        uint64_t timeout_ms; /* exec; 0 = SECRET_EXEC_TIMEOUT_MS */
        uint64_t ttl_ms;     /* the grant ends this long after the run starts; 0 = with the run */
        /* inject only */
        char env[SECRET_TARGET_MAX + 1]; /* the variable holding the placeholder */
        char **hosts;                    /* owned: "name" (HTTPS) or "name:port" */
        size_t n_hosts;
        char header[SECRET_HEADER_MAX + 1];       /* "Name: text{}text", or "" */
        char query[SECRET_QUERY_MAX + 1];         /* a query parameter replaced too, or "" */
        char basic[SECRET_BASIC_USER_MAX + 1];    /* HTTP Basic user (Authorization set), or "" */
        bool body;                                /* "body": true: replaced in request bodies too */
        char ph_prefix[SECRET_PH_PREFIX_MAX + 1]; /* the placeholder's shape */
        uint32_t ph_length;                       /* 0 = SECRET_PH_DEFAULT_LEN */
        bool exfil_kill;                          /* on_exfil: "kill" (default "refuse") */
};

/* Names for messages and records: "env", "file", "broker"; "store", "exec", "env". */
const char *secret_delivery_name(enum secret_delivery d);
const char *secret_source_name(enum secret_source s);

/*
 * secret_source_parse — a SOURCE string into b's source fields:
 * "store:NAME" or "store:NAME@VERSION", "env:VAR", "exec:CMD ARG..."
 * (split on single spaces, no quoting, no empty arguments). Returns 0, or
 * -EINVAL / -E2BIG with *why a static explanation. Pure.
 */
int secret_source_parse(const char *s, struct secret_binding *b, const char **why);

/*
 * secret_binding_from_json — a policy's binding object (struct json_node
 * from shared/json.h). Unknown keys, a missing or doubled source, a name
 * invalid for its delivery, out-of-range limits are refused with `why`
 * (a message naming the key). 0 or -errno. Pure.
 */
struct json_node;
int secret_binding_from_json(const struct json_node *obj, struct secret_binding *b, char *why,
                             size_t why_len);

/* secret_binding_parse — canonical (or any valid) JSON text of one binding. Pure; fuzzed. */
int secret_binding_parse(const char *text, size_t len, struct secret_binding *b, char *why,
                         size_t why_len);

/* secret_binding_to_json — the canonical text (sorted keys, compact). 0 or -ENOMEM. */
int secret_binding_to_json(const struct secret_binding *b, char **ret);

/*
 * secret_binding_cli — `--secret NAME=SOURCE` (delivery env),
 * `--secret-file`, `--secret-broker`: the canonical text in *ret. 0 or
 * -EINVAL with `why`.
 */
int secret_binding_cli(enum secret_delivery d, const char *arg, char **ret, char *why,
                       size_t why_len);

/*
 * secret_inject_cli — `--inject ENV=SOURCE@HOST[:PORT][,HOST[:PORT]...]`:
 * SOURCE and the hosts split at the last '@' (so store:NAME@VERSION keeps
 * its version); the binding is named ENV and delivered to ENV. The
 * canonical text in *ret; 0 or -EINVAL/-E2BIG with `why`. Pure; fuzzed
 * (fuzz_inject).
 */
int secret_inject_cli(const char *arg, char **ret, char *why, size_t why_len);

/*
 * secret_inject_host_parse — one injection host entry into its canonical
 * form (lower case, no trailing dot) in out (SECRET_INJECT_ENTRY_MAX + 1
 * bytes): HOST (HTTPS on 443, terminated), HOST:PORT (TLS on that port,
 * terminated), or http://HOST:PORT (plaintext HTTP on that port: the
 * operator's explicit choice; the port is required and never 443). Names
 * of letters, digits, '-' and '.' or IPv4 literals; no wildcards. 0 or
 * -EINVAL with *why. Pure.
 */
int secret_inject_host_parse(const char *s, size_t len, char *out, const char **why);

/* Release what a binding owns; leaves it zeroed. */
void secret_binding_clear(struct secret_binding *b);

/* secret_binding_copy — *dst becomes a deep copy of *src (dst's old
 * contents are not freed). 0, or -ENOMEM with *dst zeroed. */
int secret_binding_copy(struct secret_binding *dst, const struct secret_binding *src);
