/*
 * spec.h — an OCI bundle's config.json (runtime-spec 1.x), read for
 * ringfence-oci.
 *
 * Pure: bytes in, struct out (oci_spec_parse), no syscalls, so it is
 * unit-tested and fuzzed (tests/fuzz/fuzz_oci_spec.c). The document is
 * untrusted (an engine writes it from an image and a user's flags): every
 * list has a limit below, checked before anything is allocated for it.
 *
 * What the spec defines is read and checked for type and shape; a field
 * ringfence-oci does not implement fails with its key path and the words
 * "not supported" (docs/OCI.md lists them), so a container never runs with
 * less than its config asks. Properties the spec does not define are
 * ignored, as the spec requires. Strings point into the parsed document,
 * which the spec owns (oci_spec_free).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/error.h"

#define OCI_ARGS_MAX          4096 /* process.args */
#define OCI_ENV_MAX           4096 /* process.env */
#define OCI_GIDS_MAX          64   /* process.user.additionalGids */
#define OCI_CAPS_MAX          64   /* each capability set */
#define OCI_RLIMITS_MAX       32
#define OCI_MOUNTS_MAX        256
#define OCI_MOUNT_OPTS_MAX    32
#define OCI_NS_MAX            8 /* one of each type */
#define OCI_IDMAP_MAX         32
#define OCI_DEVICES_MAX       256
#define OCI_PATHS_MAX         256 /* maskedPaths, readonlyPaths */
#define OCI_SYSCTL_MAX        64
#define OCI_HOOKS_MAX         32 /* per stage */
#define OCI_HUGEPAGES_MAX     8  /* linux.resources.hugepageLimits entries */
#define OCI_ANNOTATIONS_MAX   256
#define OCI_SYSCALLS_MAX      1024 /* linux.seccomp.syscalls entries */
#define OCI_SYSCALL_NAMES_MAX 512  /* names in one entry */
#define OCI_SYSCALL_ARGS_MAX  6

enum oci_ns {
        OCI_NS_PID,
        OCI_NS_NETWORK,
        OCI_NS_MOUNT,
        OCI_NS_IPC,
        OCI_NS_UTS,
        OCI_NS_USER,
        OCI_NS_CGROUP,
        OCI_NS_TIME,
        _OCI_NS_COUNT,
        _OCI_NS_INVALID = -22,
};

enum oci_hook_stage {
        OCI_HOOK_PRESTART,
        OCI_HOOK_CREATE_RUNTIME,
        OCI_HOOK_CREATE_CONTAINER,
        OCI_HOOK_START_CONTAINER,
        OCI_HOOK_POSTSTART,
        OCI_HOOK_POSTSTOP,
        _OCI_HOOK_COUNT,
};

/*
 * oci_page_size_kb — a hugepageLimits pageSize ("64KB", "2MB", "1GB":
 * digits, a K, M or G, then B) in KiB: 0 for anything else, or past 16 GB.
 * Pure.
 */
uint64_t oci_page_size_kb(const char *s);

/* oci_hook_stage_name — the config's name of stage `st` ("createRuntime", …). Pure. */
const char *oci_hook_stage_name(enum oci_hook_stage st);

enum oci_caps_set {
        OCI_CAPS_BOUNDING,
        OCI_CAPS_EFFECTIVE,
        OCI_CAPS_INHERITABLE,
        OCI_CAPS_PERMITTED,
        OCI_CAPS_AMBIENT,
        _OCI_CAPS_COUNT,
};

struct oci_namespace {
        enum oci_ns type;
        const char *path; /* join this one (absolute), or NULL: a new one */
};

struct oci_idmap {
        uint32_t container_id, host_id, size;
};

struct oci_mount {
        const char *destination; /* absolute, no "." or ".." component */
        const char *type;        /* NULL: a bind (options say so) */
        const char *source;      /* NULL allowed for some types */
        const char *options[OCI_MOUNT_OPTS_MAX];
        size_t n_options;
};

struct oci_rlimit {
        int resource; /* RLIMIT_* */
        uint64_t hard, soft;
};

struct oci_device {
        char type; /* 'c', 'b', 'u' or 'p' */
        const char *path;
        int64_t major, minor;
        uint32_t file_mode;
        bool has_mode;
        uint32_t uid, gid;
        bool has_uid, has_gid;
};

struct oci_hook {
        const char *path;         /* absolute */
        const char **args, **env; /* NULL-terminated, or NULL */
        size_t n_args, n_env;
        uint64_t timeout_s; /* 0: none */
};

struct oci_syscall_arg {
        unsigned index;
        uint64_t value, value_two;
        int op; /* SCMP_CMP_* numbering: 1 NE .. 7 MASKED_EQ */
};

struct oci_syscall {
        const char **names;
        size_t n_names;
        const char *action; /* SCMP_ACT_* name */
        uint32_t errno_ret;
        bool has_errno_ret;
        struct oci_syscall_arg args[OCI_SYSCALL_ARGS_MAX];
        size_t n_args;
};

struct oci_seccomp {
        bool present;
        const char *default_action;
        uint32_t default_errno_ret;
        bool has_default_errno_ret;
        const char **architectures;
        size_t n_architectures;
        const char **flags;
        size_t n_flags;
        struct oci_syscall *syscalls;
        size_t n_syscalls;
};

struct oci_kv {
        const char *key, *value;
};

struct oci_spec {
        const char *oci_version;
        /* process (required for create) */
        bool has_process;
        bool terminal;
        uint32_t uid, gid;
        uint32_t umask;
        bool has_umask;
        uint32_t gids[OCI_GIDS_MAX];
        size_t n_gids;
        const char **args; /* NULL-terminated */
        size_t n_args;
        const char **env; /* NULL-terminated */
        size_t n_env;
        const char *cwd;
        bool has_caps;
        const char **caps[_OCI_CAPS_COUNT]; /* each NULL-terminated, or NULL */
        size_t n_caps[_OCI_CAPS_COUNT];
        struct oci_rlimit rlimits[OCI_RLIMITS_MAX];
        size_t n_rlimits;
        bool no_new_privileges;
        int64_t oom_score_adj;
        bool has_oom_score_adj;
        /* root */
        const char *root_path; /* relative to the bundle, or absolute */
        bool root_readonly;
        const char *hostname, *domainname;
        struct oci_mount *mounts;
        size_t n_mounts;
        struct oci_hook *hooks[_OCI_HOOK_COUNT];
        size_t n_hooks[_OCI_HOOK_COUNT];
        struct oci_kv *annotations;
        size_t n_annotations;
        /* linux */
        struct oci_namespace namespaces[OCI_NS_MAX];
        size_t n_namespaces;
        struct oci_idmap uid_mappings[OCI_IDMAP_MAX], gid_mappings[OCI_IDMAP_MAX];
        size_t n_uid_mappings, n_gid_mappings;
        struct oci_device *devices;
        size_t n_devices;
        const char *cgroups_path;
        uint64_t memory_limit; /* bytes; 0: none (-1 in the spec: none too) */
        uint64_t memory_swap;
        uint64_t pids_limit; /* 0: none */
        uint64_t cpu_shares, cpu_quota, cpu_period;
        bool has_cpu_quota;
        const char *cpu_cpus, *cpu_mems;
        struct oci_hugepage {
                uint64_t page_kb; /* pageSize in KiB ("2MB": 2048) */
                uint64_t limit;   /* bytes */
        } hugepages[OCI_HUGEPAGES_MAX];
        size_t n_hugepages;
        struct oci_kv *sysctl;
        size_t n_sysctl;
        struct oci_seccomp seccomp;
        const char **masked_paths;
        size_t n_masked_paths;
        const char **readonly_paths;
        size_t n_readonly_paths;
        const char *rootfs_propagation;

        void *doc_; /* the parsed document the strings point into */
};

/*
 * oci_spec_parse — config.json's `len` bytes (need not be NUL-terminated)
 * into *ret (free with oci_spec_free). 0, or -EINVAL (not JSON, a wrong
 * type or shape, a required field missing), -E2BIG (a limit above),
 * -EOPNOTSUPP (a field ringfence-oci does not implement), -ENOMEM; then
 * err has the key path and one line. Pure.
 */
int oci_spec_parse(const char *buf, size_t len, struct oci_spec **ret, struct rf_error *err);

/* Free a spec. Accepts NULL; returns NULL. */
struct oci_spec *oci_spec_free(struct oci_spec *s);
static inline void oci_spec_freep(struct oci_spec **s)
{
        *s = oci_spec_free(*s);
}

/* "pid", "network", ... for a namespace type; NULL for an invalid one. */
const char *oci_ns_name(enum oci_ns t);

/* The annotation `key`'s value, or NULL. */
const char *oci_spec_annotation(const struct oci_spec *s, const char *key);
