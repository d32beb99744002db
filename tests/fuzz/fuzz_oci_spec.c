/*
 * fuzz_oci_spec.c — libFuzzer target for an OCI bundle's config.json
 * (src/oci/spec.c), which ringfence-oci reads from a bundle an engine
 * wrote from an image and a user's flags.
 *
 * Beyond "no crash, no out-of-bounds read, no leak, no UB": a spec read
 * keeps every list within its limit, NULL-terminates its string lists,
 * gives every mount an absolute destination without "." or ".."
 * components, every namespace a known type at most once, and a refusal
 * returns nothing and says where.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "oci/request.h"
#include "oci/spec.h"

int LLVMFuzzerTestOneInput(const char *data, size_t size);

static void check_path(const char *p)
{
        if (!p || p[0] != '/' || strstr(p, "/../") || strstr(p, "/./"))
                abort();
        size_t n = strlen(p);
        if ((n >= 3 && !strcmp(p + n - 3, "/..")) || (n >= 2 && !strcmp(p + n - 2, "/.")))
                abort();
}

int LLVMFuzzerTestOneInput(const char *data, size_t size)
{
        struct oci_spec *s = NULL;
        struct rf_error err = {0};
        int r = oci_spec_parse(data, size, &s, &err);

        if (r < 0) {
                if (s || !err.msg[0])
                        abort();
                return 0;
        }
        if (!s || !s->oci_version || strncmp(s->oci_version, "1.", 2) || !s->root_path)
                abort();
        if (s->n_args > OCI_ARGS_MAX || (s->args && s->args[s->n_args]) || s->n_env > OCI_ENV_MAX ||
            (s->env && s->env[s->n_env]))
                abort();
        if (s->has_process && (!s->cwd || s->cwd[0] != '/'))
                abort();
        if (s->n_mounts > OCI_MOUNTS_MAX)
                abort();
        for (size_t i = 0; i < s->n_mounts; i++) {
                check_path(s->mounts[i].destination);
                if (s->mounts[i].n_options > OCI_MOUNT_OPTS_MAX)
                        abort();
        }
        unsigned seen = 0;
        if (s->n_namespaces > OCI_NS_MAX)
                abort();
        for (size_t i = 0; i < s->n_namespaces; i++) {
                if (!oci_ns_name(s->namespaces[i].type) || (seen & (1u << s->namespaces[i].type)))
                        abort();
                seen |= 1u << s->namespaces[i].type;
        }
        for (size_t i = 0; i < s->n_masked_paths; i++)
                check_path(s->masked_paths[i]);
        for (size_t i = 0; i < s->n_readonly_paths; i++)
                check_path(s->readonly_paths[i]);
        for (size_t i = 0; i < s->n_devices; i++)
                if (strncmp(s->devices[i].path, "/dev/", 5))
                        abort();
        for (int st = 0; st < _OCI_HOOK_COUNT; st++)
                for (size_t i = 0; i < s->n_hooks[st]; i++)
                        if (s->hooks[st][i].path[0] != '/')
                                abort();
        for (size_t i = 0; i < s->seccomp.n_syscalls; i++)
                if (!s->seccomp.syscalls[i].n_names ||
                    s->seccomp.syscalls[i].n_args > OCI_SYSCALL_ARGS_MAX)
                        abort();
        /* the overlay of what was read: refused or made, never a crash */
        struct rf_policy *o = policy_new();
        char path[512];
        if (o && oci_overlay(s, o, &err) == 0 && (o->nofile > POLICY_NOFILE_MAX))
                abort();
        if (oci_policy_path(s, path, sizeof path, &err) == 1 && strchr(path + 24, '/'))
                abort();
        policy_free(o);
        oci_spec_free(s);
        return 0;
}
