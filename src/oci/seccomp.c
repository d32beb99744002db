/*
 * seccomp.c — a container's own seccomp profile (linux.seccomp) compiled
 * into a BPF program with libseccomp, for ringfence-oci only (the ringfence
 * binary never links libseccomp).
 *
 * The profile is installed after ringfence's own filter (launch.c), so both
 * run on every syscall and the kernel takes the stricter verdict: the
 * container keeps every refusal its engine asked for, and ringfence's floor
 * stays under it whatever the profile allows. Only the native ABI is
 * compiled; every other one is killed by ringfence's filter first. Names
 * libseccomp does not know are skipped (as runc skips them); actions a run
 * cannot serve (SCMP_ACT_NOTIFY: no listener is handed to the engine,
 * SCMP_ACT_TRACE: no tracer) and flags other than the harmless ones are
 * refused with the key path, never dropped.
 */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>

#include "oci/seccomp.h"
#include "sandbox/seccomp-export.h"
#include "shared/macro.h"

static void ctx_releasep(scmp_filter_ctx *c)
{
        if (*c)
                seccomp_release(*c);
}

/* An action by its spec name (errno_ret for the ERRNO ones, else EPERM as
 * the spec says). 0, or -EOPNOTSUPP. */
static int action_of(const char *name, bool has_errno, uint32_t errno_ret, uint32_t *out)
{
        uint32_t e = has_errno ? errno_ret : EPERM;
        if (!name)
                return -EINVAL;
        if (!strcmp(name, "SCMP_ACT_ALLOW"))
                *out = SCMP_ACT_ALLOW;
        else if (!strcmp(name, "SCMP_ACT_ERRNO"))
                *out = SCMP_ACT_ERRNO(e & 0xffff);
        else if (!strcmp(name, "SCMP_ACT_KILL") || !strcmp(name, "SCMP_ACT_KILL_THREAD"))
                *out = SCMP_ACT_KILL_THREAD;
        else if (!strcmp(name, "SCMP_ACT_KILL_PROCESS"))
                *out = SCMP_ACT_KILL_PROCESS;
        else if (!strcmp(name, "SCMP_ACT_TRAP"))
                *out = SCMP_ACT_TRAP;
        else if (!strcmp(name, "SCMP_ACT_LOG"))
                *out = SCMP_ACT_LOG;
        else
                return -EOPNOTSUPP;
        return 0;
}

static int refuse(struct rf_error *err, const char *kp, const char *what)
{
        rf_error_set(err, -EOPNOTSUPP, "%s: not served by ringfence-oci", what);
        snprintf(err->keypath, sizeof err->keypath, "%s", kp);
        return -EOPNOTSUPP;
}

int oci_seccomp_build(const struct oci_seccomp *sc, struct rf_seccomp_plan *out,
                      struct rf_error *err)
{
        _cleanup_(ctx_releasep) scmp_filter_ctx ctx = NULL;
        static const char *const harmless_flags[] = {"SECCOMP_FILTER_FLAG_TSYNC",
                                                     "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
                                                     "SECCOMP_FILTER_FLAG_LOG"};
        uint32_t def;
        char kp[64];
        int r;

        if (action_of(sc->default_action, sc->has_default_errno_ret, sc->default_errno_ret, &def) <
            0)
                return refuse(err, "linux.seccomp.defaultAction",
                              sc->default_action ? sc->default_action : "a missing action");
        for (size_t i = 0; i < sc->n_flags; i++) {
                bool ok = false;
                for (size_t k = 0; k < ARRAY_SIZE(harmless_flags); k++)
                        ok |= !strcmp(sc->flags[i], harmless_flags[k]);
                if (!ok)
                        return refuse(err, "linux.seccomp.flags", sc->flags[i]);
        }
        if (seccomp_arch_native() != SCMP_ARCH_X86_64)
                return rf_error_set(err, -EOPNOTSUPP, "linux.seccomp: only x86_64");
        ctx = seccomp_init(def);
        if (!ctx)
                return rf_error_set(err, -ENOMEM, "linux.seccomp: cannot initialise libseccomp");
        /* no_new_privs and the bad-arch kill are ringfence's own filter's */
        if ((r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0)
                return rf_error_set(err, r, "linux.seccomp: %s", strerror(-r));
        for (size_t i = 0; i < sc->n_syscalls; i++) {
                const struct oci_syscall *s = &sc->syscalls[i];
                uint32_t act;
                snprintf(kp, sizeof kp, "linux.seccomp.syscalls[%zu].action", i);
                if (action_of(s->action, s->has_errno_ret, s->errno_ret, &act) < 0)
                        return refuse(err, kp, s->action ? s->action : "a missing action");
                if (act == def)
                        continue; /* libseccomp refuses a rule that is the default */
                struct scmp_arg_cmp cmp[OCI_SYSCALL_ARGS_MAX];
                unsigned seen = 0;
                bool split = false; /* one argument compared twice: a rule each (runc's way) */
                for (size_t a = 0; a < s->n_args; a++) {
                        cmp[a] = (struct scmp_arg_cmp){.arg = s->args[a].index,
                                                       .op = (enum scmp_compare)s->args[a].op,
                                                       .datum_a = s->args[a].value,
                                                       .datum_b = s->args[a].value_two};
                        split |= (seen >> s->args[a].index) & 1u;
                        seen |= 1u << s->args[a].index;
                }
                for (size_t n = 0; n < s->n_names; n++) {
                        int nr = seccomp_syscall_resolve_name(s->names[n]);
                        if (nr < 0)
                                continue; /* not on this ABI: skipped, as runc does */
                        if (!split)
                                r = seccomp_rule_add_exact_array(ctx, act, nr, (unsigned)s->n_args,
                                                                 cmp);
                        else {
                                r = 0;
                                for (size_t a = 0; a < s->n_args && r >= 0; a++)
                                        r = seccomp_rule_add_exact_array(ctx, act, nr, 1, &cmp[a]);
                        }
                        if (r < 0 && r != -EEXIST && r != -EDOM) {
                                snprintf(kp, sizeof kp, "linux.seccomp.syscalls[%zu]", i);
                                rf_error_set(err, r, "%s: %s", s->names[n], strerror(-r));
                                snprintf(err->keypath, sizeof err->keypath, "%s", kp);
                                return r;
                        }
                }
        }
        return seccomp_export(ctx, out, err);
}
