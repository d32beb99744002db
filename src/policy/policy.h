/*
 * policy.h — the run policy: what a run may see and use.
 *
 * A policy is a JSON document (format `version` 1, see docs/POLICY.md).
 * Parsing is pure: bytes in, struct out, no syscalls, no globals — so it is
 * unit-tested and fuzzed (tests/fuzz/fuzz_policy.c). Every error carries
 * file:line:col and the key path of the offending value.
 *
 * CLI flags merge on top of a file policy: scalars given on the command line
 * replace the file's, lists are appended (policy_merge()).
 *
 * Later sections (network, secrets) slot in as new members and new keys;
 * until they exist, their keys are rejected like any unknown key, so a policy
 * never silently means less than it says.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/binding.h"
#include "policy/httprule.h"
#include "policy/rules.h"
#include "shared/error.h"

#define POLICY_VERSION             1
#define POLICY_FILE_MAX            (1024 * 1024) /* bytes in a policy file */
#define POLICY_PATHS_MAX           256           /* entries in each path list */
#define POLICY_ENV_MAX             256           /* entries in `env` */
#define POLICY_STRING_MAX          4096          /* bytes in any one string value */
#define POLICY_IDENT_MAX           256           /* bytes in agent/task/... identifiers */
#define POLICY_DEPTH_MAX           16            /* JSON nesting depth */
#define POLICY_PATH_MAX            4095          /* bytes in one path (PATH_MAX less the NUL) */
#define POLICY_ENV_NAME_MAX        128           /* bytes in an environment variable name */
#define POLICY_PIDS_MAX            4194304       /* limits.pids: the kernel's PID_MAX_LIMIT */
#define POLICY_NOFILE_MAX          (1U << 30)    /* limits.nofile */
#define POLICY_CPUS_MILLI_MAX      (4096 * 1000) /* limits.cpus: 4096 CPUs */
#define POLICY_CHAIN_DEPTH_MAX     1000          /* audit.max_chain_depth */
#define POLICY_RUNS_WINDOW_MAX     1000000       /* audit.max_runs_per_window */
#define POLICY_EVENT_RATE_MAX      1000000       /* audit.event_rate, audit.event_burst */
#define POLICY_NET_RULES_MAX       256           /* entries in network.allow / deny / hosts */
#define POLICY_NET_PLAIN_PORTS_MAX 16            /* entries in network.plain_ports */
#define POLICY_NET_HTTP_MAX        64            /* entries in network.http (HTTPRULE_MAX) */
#define POLICY_PUBLISH_MAX         8             /* entries in network.publish */
#define POLICY_EGRESS_CONNS_MAX    16384         /* limits.egress_connections */
#define POLICY_ENV_RESERVED_PREFIX "RINGFENCE_"  /* env names ringfence sets itself */

/* Default sizes of the run's private tmpfs mounts. */
#define POLICY_DEFAULT_TMP_SIZE  (512ULL << 20)
#define POLICY_DEFAULT_HOME_SIZE (512ULL << 20)
#define POLICY_DEFAULT_SHM_SIZE  (64ULL << 20)

/*
 * One entry of network.publish (`--publish`): the host's loopback port
 * host_port (127.0.0.1, or [::1] when v6) reaches the run's own loopback
 * port run_port. Text form "[ADDR:]HOST_PORT:RUN_PORT", ADDR 127.0.0.1
 * (the default) or [::1]; never any other address.
 */
struct policy_publish {
        bool v6;
        uint16_t host_port, run_port;
};
#define POLICY_PUBLISH_TEXT_MAX sizeof "127.0.0.1:65535:65535"

/*
 * policy_publish_parse — the text form above (len bytes, no NUL needed)
 * into *out. 0, or -EINVAL with *why a static reason. Pure.
 * policy_publish_text — the canonical text of *pp into out
 * (POLICY_PUBLISH_TEXT_MAX bytes).
 */
int policy_publish_parse(const char *s, size_t len, struct policy_publish *out, const char **why);
void policy_publish_text(const struct policy_publish *pp, char out[POLICY_PUBLISH_TEXT_MAX]);

/* network.capture; POLICY_CAPTURE_UNSET means the default (transparent) */
enum policy_capture {
        POLICY_CAPTURE_UNSET = 0,
        POLICY_CAPTURE_TRANSPARENT,
        POLICY_CAPTURE_PROXY_ONLY,
        _POLICY_CAPTURE_MAX,
        _POLICY_CAPTURE_INVALID = -22,
};

/*
 * policy_capture_from_name — "transparent" or "proxy-only" to its value,
 * or _POLICY_CAPTURE_INVALID. policy_capture_name — the name of a value
 * (UNSET reads "transparent", the default). Pure.
 */
enum policy_capture policy_capture_from_name(const char *s);
const char *policy_capture_name(enum policy_capture c);

/* network.on_refusal_storm; POLICY_STORM_UNSET means the default (notice) */
enum policy_storm {
        POLICY_STORM_UNSET = 0,
        POLICY_STORM_NOTICE,
        POLICY_STORM_KILL,
        _POLICY_STORM_MAX,
        _POLICY_STORM_INVALID = -22,
};

/* policy_storm_from_name — "notice" or "kill", else _POLICY_STORM_INVALID;
 * policy_storm_name — its name (UNSET reads "notice"). Pure. */
enum policy_storm policy_storm_from_name(const char *s);
const char *policy_storm_name(enum policy_storm m);

/*
 * Everything a policy can say. All pointers are owned by the struct and
 * freed by policy_free(). Unset optional strings are NULL; unset numbers 0
 * (meaning "default" — see each field).
 */
struct rf_policy {
        int version; /* POLICY_VERSION once parsed */

        /* identity (attribution; issue 4 records it) */
        char *agent;        /* default "agent" (policy_apply_defaults) */
        char *on_behalf_of; /* principal the agent acts for */
        char *task;
        char *project;
        char *triggered_by;
        char *audience; /* `aud` of the run's identity token; default "ringfence" */

        /* filesystem */
        char *workspace; /* absolute path; NULL = current directory */
        /* filesystem.rootfs / --rootfs: the run's root is this directory (an
         * image's root filesystem), read-only beneath a copy-on-write layer
         * of the run's own, instead of the host's system directories;
         * NULL: the host's */
        char *rootfs;
        char **read_only; /* absolute host paths bound read-only at the same path */
        size_t n_read_only;
        char **read_write; /* absolute host paths bound read-write at the same path */
        size_t n_read_write;
        /*
         * Paths inside the workspace the run must not modify, relative to the
         * workspace root, normalised (no leading or trailing slash, no empty,
         * "." or ".." components), each at most once. protected_dir[i] is true
         * if the path was written with a trailing slash: it names a directory
         * (this matters only for the placeholder of a path that does not exist).
         * protected_set tells "key absent" (false: the sandbox applies its
         * defaults) from an explicit list, which replaces the defaults; an
         * explicit empty list (protected_set, n_protected == 0) protects nothing.
         */
        char **protected;
        bool *protected_dir; /* n_protected entries, parallel to `protected` */
        size_t n_protected;
        bool protected_set;
        uint64_t tmp_size;  /* bytes for /tmp; 0 = POLICY_DEFAULT_TMP_SIZE */
        uint64_t home_size; /* bytes for $HOME; 0 = default */
        uint64_t shm_size;  /* bytes for /dev/shm; 0 = default */

        /* environment: names and values added to the run's clean environment */
        char **env_names;
        char **env_values;
        size_t n_env;

        /* limits; 0 = not set */
        uint64_t timeout_ms;
        uint64_t memory; /* bytes */
        uint64_t pids;
        uint64_t cpus_milli; /* 1.5 cpus = 1500 */
        uint64_t nofile;

        /*
         * network (egress), all canonical: rules as net_rule_parse()'s text,
         * hosts as "name=address" (canonical name and address; one per
         * name), plain_ports: CONNECT ports where a TLS ClientHello with a
         * matching SNI is not required.
         */
        char **net_allow;
        size_t n_net_allow;
        char **net_deny;
        size_t n_net_deny;
        char **net_hosts;
        size_t n_net_hosts;
        uint16_t net_plain_ports[POLICY_NET_PLAIN_PORTS_MAX];
        size_t n_net_plain_ports;
        /* network.publish: host loopback ports that reach the run's */
        struct policy_publish net_publish[POLICY_PUBLISH_MAX];
        size_t n_net_publish;
        /* network.capture: "transparent" (default; a run with allow rules gets
         * the capture ruleset, src/sandbox/capture.h) or "proxy-only" */
        enum policy_capture net_capture;
        /* network.on_refusal_storm: what a refusal storm (one destination
         * refused EGRESS_STORM_COUNT times within EGRESS_STORM_WINDOW_MS)
         * does: "notice" (default: one line on the caller's stderr) or
         * "kill" (the run ends, recorded) */
        enum policy_storm net_on_storm;
        /* network.upstream_ca / --upstream-ca: an absolute path to a PEM CA
         * file trusted, besides the host's bundle, for the upstream side of
         * terminated TLS connections (private APIs); NULL: none */
        char *net_upstream_ca;
        /* network.http / --allow-http: HTTP rules (policy/httprule.h), each
         * as its canonical text "host[:port] METHODS glob", at most once;
         * a host and port with a rule is terminated and every request to
         * it must match one of its rules */
        char **net_http;
        size_t n_net_http;
        /* the same rules typed (policy_compile; NULL until then, and for
         * an empty list): net_allow, net_deny, net_http in their order.
         * Egress and capture take these; nothing parses a rule twice. */
        struct net_rule *allow_rules, *deny_rules;
        struct http_rule *http_rules;
        bool compiled;
        uint64_t egress_bytes; /* limits.egress_bytes: bytes both ways over the run; 0 = none */
        uint64_t egress_connections; /* limits.egress_connections: at once; 0 = default */

        /* audit: the wake-loop breaker and the run's event budget; 0 = default */
        uint64_t max_chain_depth;     /* runs in one causal chain, this one included */
        uint64_t max_runs_per_window; /* runs per (agent, task) per loop_window */
        uint64_t loop_window_ms;
        uint64_t event_rate;  /* events/s the run may cause, sustained */
        uint64_t event_burst; /* events at once */
        uint64_t event_bytes; /* record bytes over the whole run */

        /* secrets: bindings as canonical JSON (policy/binding.h), at most
         * one per (delivery, name), for the canonical form; and the same
         * bindings typed, index for index, made once when each is added:
         * grants, records and merges take these, nothing parses a binding
         * twice */
        char **secrets;
        struct secret_binding *bindings;
        size_t n_secrets;
};

/*
 * policy_compile — the typed form of the policy's rules (allow_rules,
 * deny_rules, http_rules), parsed from their canonical text once the
 * policy is final (policy_apply_defaults calls it). Again after a change:
 * the old arrays are replaced. 0, or -errno with err set (a rule that does
 * not parse: only a policy built by hand can hold one).
 */
int policy_compile(struct rf_policy *p, struct rf_error *err);

/* Allocate an empty policy (version set, everything else unset). NULL on ENOMEM. */
struct rf_policy *policy_new(void);

/* Free a policy and everything it owns. Accepts NULL; returns NULL. */
struct rf_policy *policy_free(struct rf_policy *p);
static inline void policy_freep(struct rf_policy **p)
{
        *p = policy_free(*p);
}
#define _cleanup_policy_ _cleanup_(policy_freep)

/*
 * policy_parse — parse `len` bytes of JSON (need not be NUL-terminated).
 * `filename` is used only for error messages (may be NULL).
 * On success returns 0 and stores a new policy in *ret (caller owns).
 * On failure returns -EINVAL (bad input), -E2BIG (a limit exceeded) or
 * -ENOMEM, fills `err` with file/line/col/keypath/msg, and *ret is untouched.
 * Rejects: unknown keys, duplicate keys, wrong types, bad sizes/durations,
 * relative paths (absolute ones in `filesystem.protected`), strings with NUL
 * or invalid UTF-8, a missing or unsupported `version`, trailing bytes after
 * the document.
 */
int policy_parse(const char *buf, size_t len, const char *filename, struct rf_policy **ret,
                 struct rf_error *err);

/*
 * policy_from_json — the same for a document already parsed: `root`, a
 * node of json_parse()'s tree (a policy embedded in a larger document, as
 * in a run request the daemon hands its supervisor: supervisor/runwire.h).
 * Positions in `err` are the tree's. Same return contract.
 */
struct json_node;
int policy_from_json(const struct json_node *root, const char *filename, struct rf_policy **ret,
                     struct rf_error *err);

/*
 * policy_load_file — read `path` (at most POLICY_FILE_MAX bytes; O_CLOEXEC)
 * and policy_parse() it. Same return contract; I/O errors are -errno with
 * err->msg naming the file.
 */
int policy_load_file(const char *path, struct rf_policy **ret, struct rf_error *err);

/*
 * policy_merge — apply `overlay` (typically built from CLI flags) on top of
 * `base`: every scalar/string set in overlay replaces base's; lists are
 * appended (a path already in the same list is not added twice; for
 * `protected`, a directory flag on either side wins, and protected_set is
 * the OR of both); env entries with the same name are replaced. `version` is
 * not merged. Returns 0, or
 * -E2BIG if a list limit would be exceeded, -EINVAL if the result would name
 * one path both read-only and read-write, -ENOMEM. On failure `base` is
 * unchanged and `err` (may be NULL) says why.
 */
int policy_merge(struct rf_policy *base, const struct rf_policy *overlay, struct rf_error *err);

/* Fill unset defaults (agent "agent", tmpfs sizes). Returns 0 or -ENOMEM. */
int policy_apply_defaults(struct rf_policy *p);

/*
 * Helpers that CLI flag handling uses to build an overlay; each validates
 * like the parser does. Return 0 or -EINVAL/-E2BIG/-ENOMEM with `err` set
 * (err->msg only; the caller knows which flag it was and sets the rest).
 * On failure the target is unchanged.
 *
 * policy_set_string — for identity fields: `value` must be 1..max bytes of
 *   UTF-8 with no control, zero-width or bidi characters; replaces *field.
 * policy_set_path — for `workspace`: an absolute path (see policy_path_normalize);
 *   stores the normalised form in *field, replacing it.
 * policy_add_path — append the normalised path to a read_only/read_write
 *   list unless it is already there; -E2BIG past POLICY_PATHS_MAX entries.
 * policy_add_protected — for `--protect PATH`: validate PATH like an entry
 *   of `filesystem.protected` (policy_protected_normalize), append it unless
 *   it is already there (a trailing slash then still marks the existing
 *   entry a directory), and set protected_set; -E2BIG past POLICY_PATHS_MAX
 *   entries.
 * policy_add_env — add or replace NAME=VALUE: the name must satisfy
 *   env_name_valid() and not start with POLICY_ENV_RESERVED_PREFIX; the value
 *   must be UTF-8, at most POLICY_STRING_MAX bytes (control characters such
 *   as newlines are allowed); -E2BIG past POLICY_ENV_MAX entries.
 */
int policy_set_string(char **field, const char *value, size_t max, struct rf_error *err);

/*
 * policy_set_upstream_ca — set network.upstream_ca: `path` must be absolute,
 * at most PATH_MAX - 1 bytes, without NUL or control bytes. 0, or -EINVAL
 * with *why a static reason; -ENOMEM.
 */
int policy_set_upstream_ca(struct rf_policy *p, const char *path, const char **why);
int policy_set_path(char **field, const char *path, struct rf_error *err);
int policy_add_path(char ***list, size_t *n, const char *path, struct rf_error *err);
int policy_add_protected(struct rf_policy *p, const char *path, struct rf_error *err);
int policy_add_env(struct rf_policy *p, const char *name, const char *value, struct rf_error *err);

/*
 * policy_add_net_rule — for `--allow-host RULE`: validate like an entry of
 * network.allow (net_rule_parse) and append its canonical text unless
 * present. policy_add_net_host — for `--add-host NAME:IP`: a static name
 * (canonical host name) for an address (canonical IP literal; IPv6 in
 * brackets), replacing an earlier entry for the same name. 0 or
 * -EINVAL/-E2BIG/-ENOMEM with err->msg.
 */
int policy_add_net_rule(struct rf_policy *p, const char *rule, struct rf_error *err);
/*
 * policy_add_http_rule — for `--allow-http RULE`: validate like an entry of
 * network.http (httprule_parse) and append its canonical text unless
 * present. 0 or -EINVAL/-E2BIG (past POLICY_NET_HTTP_MAX)/-ENOMEM with
 * err->msg.
 */
int policy_add_http_rule(struct rf_policy *p, const char *rule, struct rf_error *err);
int policy_add_net_host(struct rf_policy *p, const char *name_ip, struct rf_error *err);
/*
 * policy_add_publish — one network.publish entry (policy_publish_parse), for
 * `--publish` and merges: an entry for the same host address and port is
 * kept when it names the same run port and refused when it names another.
 * 0 or -EINVAL/-E2BIG (past POLICY_PUBLISH_MAX) with err->msg.
 */
int policy_add_publish(struct rf_policy *p, const struct policy_publish *pp, struct rf_error *err);
/*
 * The same two from their text, as `run --env`/`--publish` and the
 * daemon's API take them: policy_add_env_text "NAME=VALUE",
 * policy_add_publish_text policy_publish_parse's form. `what` (the flag or
 * key) begins the error's message. 0 or -errno with err->msg.
 */
int policy_add_env_text(struct rf_policy *p, const char *what, const char *text,
                        struct rf_error *err);
int policy_add_publish_text(struct rf_policy *p, const char *what, const char *text,
                            struct rf_error *err);
/*
 * policy_add_secret — add one binding (canonical JSON, secret_binding_to_json)
 * replacing one of the same delivery and name. Takes ownership of `canonical`
 * on success. -E2BIG past SECRET_BINDINGS_MAX, -EINVAL if unparsable.
 */
int policy_add_secret(struct rf_policy *p, char *canonical, struct rf_error *err);
/*
 * policy_keep_secrets — keep only the bindings of `p` named in `names`
 * (comma-separated binding names, blanks around each ignored; at most
 * SECRET_BINDINGS_MAX of at most SECRET_TARGET_MAX bytes): a container of
 * a pod picking, by name, which of its policy's grants it gets. A name no
 * binding of `p` has is refused (-ENOENT, naming it): a container never
 * asks for a secret its policy does not grant. Empty names: -EINVAL.
 * Pure. 0 or -errno with err set.
 */
int policy_keep_secrets(struct rf_policy *p, const char *names, struct rf_error *err);

/*
 * policy_set_limit — set one numeric setting from its command-line text,
 * with the ranges the parser enforces, so an overlay can never hold a value
 * a policy file could not. `key` is the policy key path: "limits.timeout"
 * (a duration), "audit.loop_window" (a duration), "limits.memory",
 * "audit.event_bytes", "filesystem.tmp_size", "filesystem.home_size",
 * "filesystem.shm_size" (sizes), "limits.pids", "limits.nofile",
 * "audit.max_chain_depth", "audit.max_runs_per_window", "audit.event_rate",
 * "audit.event_burst" (decimal integers), "limits.cpus" (parse_cpus()). Zero is refused (it means
 * "unset"). Returns 0, or -EINVAL with err->msg saying why (unknown key included).
 */
int policy_set_limit(struct rf_policy *p, const char *key, const char *value, struct rf_error *err);

/*
 * policy_path_normalize — validate the `len` bytes at `path` as a policy
 * path and store a new normalised copy (caller frees) in *ret: it must be
 * absolute, valid UTF-8, without NUL or control characters, at most
 * POLICY_PATH_MAX bytes, and without "." or ".." components; repeated
 * slashes collapse and a trailing slash is dropped ("//a//b/" -> "/a/b",
 * "/" stays "/"). Returns 0, -EINVAL (and *why, if non-NULL, points to a
 * static phrase such as "is not absolute"), or -ENOMEM. Pure: it does not
 * look at the file system (symlinks are the sandbox's business).
 */
int policy_path_normalize(const char *path, size_t len, char **ret, const char **why);

/*
 * policy_protected_normalize — validate the `len` bytes at `path` as a
 * protected path (relative to the workspace root) and store a new normalised
 * copy (caller frees) in *ret, and in *ret_dir whether it ended in a slash
 * (it names a directory). Same rules as policy_path_normalize() except that
 * the path must be relative (not empty, no leading "/"); repeated slashes
 * collapse and the trailing slash is dropped ("a//b/" -> "a/b", dir).
 * Returns 0, -EINVAL (*why, if non-NULL, says why), or -ENOMEM; *ret and
 * *ret_dir are set only on success. Pure.
 */
int policy_protected_normalize(const char *path, size_t len, char **ret, bool *ret_dir,
                               const char **why);

/*
 * policy_dup — deep copy of `p` into *ret (caller owns). 0 or -ENOMEM.
 */
int policy_dup(const struct rf_policy *p, struct rf_policy **ret);

/*
 * policy_to_json — the canonical compact JSON of `p`, a NUL-terminated
 * string stored in *ret (caller frees): keys sorted bytewise, no whitespace,
 * unset fields and empty sections left out (but an explicit empty
 * `"protected":[]` is kept: it means something), strings escaped as in RFC 8785,
 * sizes as "N[K|M|G]" strings and the timeout as "N(ms|s|m|h)" in the
 * largest unit that is exact, cpus as a decimal number, lists in their
 * order, protected directories with their trailing slash. The output is itself
 * a valid version-1 policy that parses back to the same struct, and equal
 * policies give byte-identical output, so it can be hashed for attribution.
 * Returns 0, -ENOMEM, or -EINVAL if `p` holds a string that is not valid
 * UTF-8 (only possible if the struct was filled by hand). The output of a
 * policy within the POLICY_*_MAX limits is at most a few MiB; a policy that
 * only merging made larger than POLICY_FILE_MAX serialises fine but cannot
 * be parsed back.
 */
int policy_to_json(const struct rf_policy *p, char **ret);

/*
 * parse_size — "N[K|M|G]" (powers of 1024; suffix case-insensitive; no
 * spaces, no sign) into bytes. Returns 0 or -EINVAL / -ERANGE (overflow).
 * parse_duration — "N(ms|s|m|h)" into milliseconds; same returns. A bare
 * number without unit is -EINVAL.
 */
int parse_size(const char *s, uint64_t *ret);
int parse_duration(const char *s, uint64_t *ret_ms);

/*
 * parse_cpus — "N" or "N.D" with at most three decimals ("1.5", "0.25")
 * into thousandths of a CPU. No sign, no exponent, no spaces. Returns 0 or
 * -EINVAL / -ERANGE. (In a policy file `cpus` is a JSON number instead.)
 */
int parse_cpus(const char *s, uint64_t *ret_milli);

/* True if `name` is a valid environment variable name ([A-Za-z_][A-Za-z0-9_]*, ≤ 128). */
bool env_name_valid(const char *name);

/* True if `name` is reserved for ringfence (starts with POLICY_ENV_RESERVED_PREFIX). */
bool env_name_reserved(const char *name);

/* A profile's name as `run --profile` and the daemon API take it: 1..
 * POLICY_PROFILE_NAME_MAX of a-z 0-9 - _, not starting with '-'. Pure. */
#define POLICY_PROFILE_NAME_MAX 64
bool policy_profile_name_valid(const char *s);
