/*
 * test_oci_spec.c — an OCI bundle's config.json (src/oci/spec.c): a
 * podman-shaped config read whole; each refusal with its key path and
 * errno (a wrong type, a missing field, a path naming a parent, a field
 * ringfence-oci does not implement, a limit); properties the spec does not
 * define ignored.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "oci/mountpath.h"
#include "oci/request.h"
#include "oci/spec.h"
#include "tap.h"

#define BASE_PROCESS                                                                               \
        "\"process\":{\"user\":{\"uid\":0,\"gid\":0},\"args\":[\"/bin/true\"],\"cwd\":\"/\"}"
#define BASE_ROOT "\"root\":{\"path\":\"rootfs\"}"

static const char full[] =
        "{\"ociVersion\":\"1.0.2-dev\","
        "\"process\":{\"terminal\":true,\"user\":{\"uid\":1000,\"gid\":100,\"umask\":18,"
        "\"additionalGids\":[10,20]},\"args\":[\"sh\",\"-c\",\"echo hi\"],"
        "\"env\":[\"PATH=/usr/bin:/bin\",\"TERM=xterm\",\"EMPTY=\"],\"cwd\":\"/work\","
        "\"capabilities\":{\"bounding\":[\"CAP_CHOWN\",\"CAP_KILL\"],\"effective\":[\"CAP_KILL\"],"
        "\"permitted\":[\"CAP_KILL\"]},"
        "\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":1024,\"soft\":512}],"
        "\"noNewPrivileges\":true,\"oomScoreAdj\":-100,\"apparmorProfile\":\"\","
        "\"futureKey\":{\"x\":1}},"
        "\"root\":{\"path\":\"/var/lib/c/rootfs\",\"readonly\":true},"
        "\"hostname\":\"box\","
        "\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},"
        "{\"destination\":\"/dev\",\"type\":\"tmpfs\",\"source\":\"tmpfs\","
        "\"options\":[\"nosuid\",\"strictatime\",\"mode=755\",\"size=65536k\"]},"
        "{\"destination\":\"/data\",\"source\":\"/srv/data\",\"options\":[\"rbind\",\"ro\"]}],"
        "\"hooks\":{\"createRuntime\":[{\"path\":\"/usr/bin/hook\",\"args\":[\"hook\",\"x\"],"
        "\"env\":[\"A=1\"],\"timeout\":5}],\"poststop\":[{\"path\":\"/bin/cleanup\"}]},"
        "\"annotations\":{\"ringfence.io/allow-hosts\":\"api.example.com\","
        "\"io.kubernetes.cri.container-type\":\"sandbox\"},"
        "\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"network\","
        "\"path\":\"/run/netns/pod\"},{\"type\":\"mount\"},{\"type\":\"ipc\"},{\"type\":\"uts\"},"
        "{\"type\":\"user\"},{\"type\":\"cgroup\"}],"
        "\"uidMappings\":[{\"containerID\":0,\"hostID\":100000,\"size\":65536}],"
        "\"gidMappings\":[{\"containerID\":0,\"hostID\":100000,\"size\":65536}],"
        "\"devices\":[{\"type\":\"c\",\"path\":\"/dev/fuse\",\"major\":10,\"minor\":229,"
        "\"fileMode\":438,\"uid\":0,\"gid\":0}],"
        "\"cgroupsPath\":\"/machine/abc\","
        "\"resources\":{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}],"
        "\"memory\":{\"limit\":268435456,\"swap\":-1},\"pids\":{\"limit\":100},"
        "\"cpu\":{\"shares\":1024,\"quota\":50000,\"period\":100000}},"
        "\"sysctl\":{\"net.ipv4.ip_forward\":\"0\"},"
        "\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":38,"
        "\"architectures\":[\"SCMP_ARCH_X86_64\"],"
        "\"syscalls\":[{\"names\":[\"read\",\"write\"],\"action\":\"SCMP_ACT_ALLOW\"},"
        "{\"names\":[\"personality\"],\"action\":\"SCMP_ACT_ALLOW\","
        "\"args\":[{\"index\":0,\"value\":0,\"op\":\"SCMP_CMP_EQ\"}]}]},"
        "\"maskedPaths\":[\"/proc/kcore\",\"/sys/firmware\"],"
        "\"readonlyPaths\":[\"/proc/sys\"],\"rootfsPropagation\":\"rslave\","
        "\"intelRdt\":null}}";

static void test_full(void)
{
        struct oci_spec *s = NULL;
        struct rf_error err = {0};
        int r = oci_spec_parse(full, sizeof full - 1, &s, &err);
        is_int(r, 0, "a podman-shaped config.json is read (%s: %s)", err.keypath, err.msg);
        if (!s)
                return;
        is_str(s->oci_version, "1.0.2-dev", "ociVersion");
        ok(s->has_process && s->terminal && s->uid == 1000 && s->gid == 100 && s->has_umask &&
                   s->umask == 022,
           "process: terminal, user, umask");
        ok(s->n_gids == 2 && s->gids[0] == 10 && s->gids[1] == 20, "additionalGids");
        ok(s->n_args == 3 && !strcmp(s->args[2], "echo hi") && s->args[3] == NULL,
           "args, NULL-terminated");
        ok(s->n_env == 3 && !strcmp(s->env[2], "EMPTY=") && s->env[3] == NULL, "env");
        is_str(s->cwd, "/work", "cwd");
        ok(s->has_caps && s->n_caps[OCI_CAPS_BOUNDING] == 2 && s->n_caps[OCI_CAPS_AMBIENT] == 0 &&
                   !strcmp(s->caps[OCI_CAPS_EFFECTIVE][0], "CAP_KILL"),
           "capabilities, by set");
        ok(s->n_rlimits == 1 && s->rlimits[0].resource == RLIMIT_NOFILE &&
                   s->rlimits[0].soft == 512 && s->rlimits[0].hard == 1024,
           "rlimits");
        ok(s->no_new_privileges && s->has_oom_score_adj && s->oom_score_adj == -100,
           "noNewPrivileges, oomScoreAdj");
        ok(!strcmp(s->root_path, "/var/lib/c/rootfs") && s->root_readonly, "root");
        is_str(s->hostname, "box", "hostname");
        ok(s->n_mounts == 3 && !strcmp(s->mounts[1].type, "tmpfs") && s->mounts[1].n_options == 4 &&
                   !strcmp(s->mounts[1].options[3], "size=65536k") && s->mounts[2].type == NULL &&
                   !strcmp(s->mounts[2].source, "/srv/data"),
           "mounts: typed and binds");
        ok(s->n_hooks[OCI_HOOK_CREATE_RUNTIME] == 1 &&
                   s->hooks[OCI_HOOK_CREATE_RUNTIME][0].timeout_s == 5 &&
                   s->hooks[OCI_HOOK_CREATE_RUNTIME][0].n_args == 2 &&
                   s->n_hooks[OCI_HOOK_POSTSTOP] == 1 && s->n_hooks[OCI_HOOK_PRESTART] == 0,
           "hooks, by stage");
        is_str(oci_spec_annotation(s, "ringfence.io/allow-hosts"), "api.example.com",
               "annotations");
        ok(oci_spec_annotation(s, "nope") == NULL, "an absent annotation: NULL");
        ok(s->n_namespaces == 7 && s->namespaces[1].type == OCI_NS_NETWORK &&
                   !strcmp(s->namespaces[1].path, "/run/netns/pod") && !s->namespaces[0].path,
           "namespaces: new and joined");
        ok(s->n_uid_mappings == 1 && s->uid_mappings[0].host_id == 100000 &&
                   s->uid_mappings[0].size == 65536 && s->n_gid_mappings == 1,
           "id mappings");
        ok(s->n_devices == 1 && s->devices[0].type == 'c' && s->devices[0].major == 10 &&
                   s->devices[0].minor == 229 && s->devices[0].file_mode == 0666,
           "devices");
        is_str(s->cgroups_path, "/machine/abc", "cgroupsPath");
        ok(s->memory_limit == 268435456 && s->memory_swap == 0 && s->pids_limit == 100 &&
                   s->cpu_shares == 1024 && s->has_cpu_quota && s->cpu_quota == 50000 &&
                   s->cpu_period == 100000,
           "resources (swap -1: none)");
        ok(s->n_sysctl == 1 && !strcmp(s->sysctl[0].value, "0"), "sysctl");
        ok(s->seccomp.present && !strcmp(s->seccomp.default_action, "SCMP_ACT_ERRNO") &&
                   s->seccomp.default_errno_ret == 38 && s->seccomp.n_syscalls == 2 &&
                   s->seccomp.syscalls[1].n_args == 1 && s->seccomp.syscalls[1].args[0].op == 4,
           "seccomp");
        ok(s->n_masked_paths == 2 && s->n_readonly_paths == 1, "masked and read-only paths");
        is_str(oci_ns_name(OCI_NS_NETWORK), "network", "namespace names");
        oci_spec_free(s);
}

static void refused(const char *doc, int want, const char *keypath, const char *words,
                    const char *what)
{
        struct oci_spec *s = NULL;
        struct rf_error err = {0};
        int r = oci_spec_parse(doc, strlen(doc), &s, &err);
        is_int(r, want, "%s: refused", what);
        ok(!s, "... nothing returned");
        is_str(err.keypath, keypath, "... at %s", keypath);
        ok(words == NULL || strstr(err.msg, words) != NULL, "... saying \"%s\" (%s)",
           words ? words : "", err.msg);
        oci_spec_free(s);
}

static void test_refusals(void)
{
        refused("[]", -EINVAL, "", "expected object", "not an object");
        refused("{\"process\":{}}", -EINVAL, "", "ociVersion: required", "no ociVersion");
        refused("{\"ociVersion\":\"2.0.0\"," BASE_ROOT "}", -EOPNOTSUPP, "ociVersion", "1.x",
                "a version 2");
        refused("{\"ociVersion\":\"1.0.2\"}", -EINVAL, "", "root: required", "no root");
        refused("{\"ociVersion\":\"1.0.2\",\"root\":{\"readonly\":true}}", -EINVAL, "root",
                "path: required", "a root without a path");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"process\":{\"user\":{\"uid\":0,\"gid\":0},\"args\":\"/bin/sh\",\"cwd\":\"/\"}}",
                -EINVAL, "process.args", "expected array", "args a string");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"process\":{\"user\":{\"uid\":0,\"gid\":0},\"args\":[\"a\"]}}",
                -EINVAL, "process", "cwd: required", "a process without cwd");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"process\":{\"user\":{\"uid\":0},\"args\":[\"a\"],\"cwd\":\"/\"}}",
                -EINVAL, "process.user", "uid and gid", "a user without gid");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"process\":{\"user\":{\"uid\":-1,\"gid\":0},\"args\":[\"a\"],\"cwd\":\"/\"}}",
                -EINVAL, "process.user.uid", "integer", "a negative uid");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"process\":{\"user\":{\"uid\":0,\"gid\":0},\"args\":[\"a\"],\"cwd\":\"/\","
                "\"env\":[\"NOEQUALS\"]}}",
                -EINVAL, "process.env", "NAME=VALUE", "an env entry without '='");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"process\":{\"user\":{\"uid\":0,\"gid\":0},\"args\":[\"a\"],\"cwd\":\"/\","
                "\"apparmorProfile\":\"docker-default\"}}",
                -EOPNOTSUPP, "process.apparmorProfile", "not supported", "an AppArmor profile");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"process\":{\"user\":{\"uid\":0,\"gid\":0},\"args\":[\"a\"],\"cwd\":\"/\","
                "\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":1,\"soft\":2}]}}",
                -EINVAL, "process.rlimits[0]", "soft above hard", "an rlimit soft > hard");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"process\":{\"user\":{\"uid\":0,\"gid\":0},\"args\":[\"a\"],\"cwd\":\"/\","
                "\"rlimits\":[{\"type\":\"RLIMIT_BOGUS\",\"hard\":1,\"soft\":1}]}}",
                -EINVAL, "process.rlimits[0]", "RLIMIT_", "an unknown rlimit");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"mounts\":[{\"destination\":\"/a/../etc\",\"type\":\"tmpfs\"}]}",
                -EINVAL, "mounts[0].destination", "\"..\"", "a mount naming a parent");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"mounts\":[{\"destination\":\"relative\"}]}",
                -EINVAL, "mounts[0].destination", "absolute", "a relative mount destination");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT ",\"mounts\":[{\"type\":\"tmpfs\"}]}",
                -EINVAL, "mounts[0]", "destination: required", "a mount without destination");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"bogus\"}]}}",
                -EINVAL, "linux.namespaces[1]", "one of pid", "an unknown namespace");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"pid\"}]}}",
                -EINVAL, "linux.namespaces[1]", "twice", "a namespace twice");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"linux\":{\"namespaces\":[{\"type\":\"network\",\"path\":\"netns\"}]}}",
                -EINVAL, "linux.namespaces[0]", "absolute", "a relative namespace path");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"linux\":{\"namespaces\":[{\"type\":\"time\"}]}}",
                -EOPNOTSUPP, "linux.namespaces[0]", "not supported", "a time namespace");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"linux\":{\"uidMappings\":[{\"containerID\":0,\"hostID\":1000,\"size\":1}]}}",
                -EINVAL, "linux", "without a user namespace", "mappings without a user ns");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"linux\":{\"namespaces\":[{\"type\":\"user\"}],"
                "\"uidMappings\":[{\"containerID\":0,\"hostID\":4294967295,\"size\":2}]}}",
                -EINVAL, "linux.uidMappings[0]", "32-bit", "a mapping past 2^32");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"linux\":{\"maskedPaths\":[\"/proc/kcore\",\"proc/x\"]}}",
                -EINVAL, "linux.maskedPaths[1]", "absolute", "a relative masked path");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"linux\":{\"readonlyPaths\":[\"/proc/../etc\"]}}",
                -EINVAL, "linux.readonlyPaths[0]", "\"..\"", "a read-only path naming a parent");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"linux\":{\"devices\":[{\"type\":\"c\",\"path\":\"/etc/shadow\",\"major\":1,"
                "\"minor\":3}]}}",
                -EINVAL, "linux.devices[0]", "beneath /dev", "a device outside /dev");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"linux\":{\"intelRdt\":{\"closID\":\"x\"}}}",
                -EOPNOTSUPP, "linux.intelRdt", "not supported", "Intel RDT");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"linux\":{\"resources\":{\"memory\":{\"reservation\":1024}}}}",
                -EOPNOTSUPP, "linux.resources.memory.reservation", "not supported",
                "a memory reservation");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"linux\":{\"resources\":{\"unified\":{\"memory.high\":\"1\"}}}}",
                -EOPNOTSUPP, "linux.resources.unified", "not supported", "unified resources");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"linux\":{\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\","
                "\"listenerPath\":\"/run/l.sock\"}}}",
                -EOPNOTSUPP, "linux.seccomp.listenerPath", "not supported",
                "a seccomp notify listener");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"linux\":{\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":"
                "[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":0,"
                "\"value\":1,\"op\":\"SCMP_CMP_BOGUS\"}]}]}}}",
                -EINVAL, "linux.seccomp.syscalls[0].args[0]", "SCMP_CMP_", "an unknown op");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"linux\":{\"rootfsPropagation\":\"shared\"}}",
                -EOPNOTSUPP, "linux.rootfsPropagation", "never reach the host",
                "shared propagation");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"hooks\":{\"prestart\":[{\"path\":\"hook\"}]}}",
                -EINVAL, "hooks.prestart[0]", "absolute", "a relative hook path");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT
                ",\"hooks\":{\"poststop\":[{\"path\":\"/bin/h\",\"args\":[\"h\"],\"timeout\":0}]}}",
                -EINVAL, "hooks.poststop[0]", "greater than zero", "a hook timeout of 0");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT ",\"annotations\":{\"a\":1}}", -EINVAL,
                "annotations.a", "expected string", "an annotation that is not a string");
        refused("{\"ociVersion\":\"1.0.2\"," BASE_ROOT ",\"windows\":{\"layerFolders\":[\"x\"]}}",
                -EOPNOTSUPP, "windows", "not supported", "a windows section");
        refused("{\"ociVersion\":\"1.0.2\",\"ociVersion\":\"1.0.2\"," BASE_ROOT "}", -EINVAL,
                "ociVersion", NULL, "a duplicate key (strict JSON)");
}

static void test_limits_and_unknowns(void)
{
        /* 257 mounts: over the limit, refused before anything is read */
        size_t cap = 64 + 257 * 40;
        char *doc = malloc(cap);
        size_t n =
                (size_t)snprintf(doc, cap, "{\"ociVersion\":\"1.0.2\"," BASE_ROOT ",\"mounts\":[");
        for (int i = 0; i < 257; i++)
                n += (size_t)snprintf(doc + n, cap - n, "%s{\"destination\":\"/m%d\"}",
                                      i ? "," : "", i);
        snprintf(doc + n, cap - n, "]}");
        struct oci_spec *s = NULL;
        struct rf_error err = {0};
        is_int(oci_spec_parse(doc, strlen(doc), &s, &err), -E2BIG, "257 mounts: -E2BIG");
        is_str(err.keypath, "mounts", "... at mounts");
        free(doc);

        const char *unk = "{\"ociVersion\":\"1.1.0\"," BASE_ROOT "," BASE_PROCESS
                          ",\"somethingNew\":[1,2],\"linux\":{\"futureThing\":{\"a\":\"b\"},"
                          "\"resources\":{\"memory\":{\"limit\":-1}}}}";
        s = NULL;
        is_int(oci_spec_parse(unk, strlen(unk), &s, &err), 0,
               "properties the spec does not define: ignored");
        ok(s && s->memory_limit == 0 && s->n_args == 1 && s->uid == 0, "... the rest read");
        oci_spec_free(s);

        const char *empty = "{\"ociVersion\":\"1.0.0\"," BASE_ROOT
                            ",\"process\":{\"user\":{\"uid\":0,\"gid\":0},\"args\":[\"a\"],"
                            "\"cwd\":\"/\",\"apparmorProfile\":\"\",\"selinuxLabel\":\"\"},"
                            "\"linux\":{\"intelRdt\":null,\"mountLabel\":\"\"}}";
        s = NULL;
        is_int(oci_spec_parse(empty, strlen(empty), &s, &err), 0,
               "unsupported fields left empty: accepted (%s)", err.msg);
        oci_spec_free(s);
}

#define RUNNABLE                                                                                   \
        "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"                                \
        "\"process\":{\"user\":{\"uid\":0,\"gid\":0},\"args\":[\"sh\"],\"cwd\":\"/\","             \
        "\"env\":[\"PATH=/bin\",\"A=b=c\"],"                                                       \
        "\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":2048,\"soft\":1024}]},"                 \
        "\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},"           \
        "{\"destination\":\"/sys\",\"type\":\"sysfs\",\"source\":\"sysfs\"}%s],"                   \
        "\"annotations\":{%s},"                                                                    \
        "\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"network\"%s},{\"type\":"        \
        "\"ipc\"},"                                                                                \
        "{\"type\":\"uts\"},{\"type\":\"mount\"}],"                                                \
        "\"resources\":{\"memory\":{\"limit\":1048576},\"pids\":{\"limit\":64},"                   \
        "\"cpu\":{\"quota\":50000,\"period\":100000}}}}"

/* oci_overlay on RUNNABLE with the three holes filled; returns its result,
 * the overlay in *out (free it) */
static int overlay_of(const char *mounts, const char *ann, const char *netpath,
                      struct rf_policy **out, struct rf_error *err)
{
        char doc[4096];
        struct oci_spec *s = NULL;
        snprintf(doc, sizeof doc, RUNNABLE, mounts, ann, netpath);
        *out = policy_new();
        int r = oci_spec_parse(doc, strlen(doc), &s, err);
        if (r == 0)
                r = oci_overlay(s, *out, err);
        oci_spec_free(s);
        return r;
}

static void test_overlay(void)
{
        struct rf_policy *o = NULL;
        struct rf_error err = {0};
        int r = overlay_of("", "\"ringfence.io/allow-hosts\":\"api.example.com:443, *.gh.example\"",
                           "", &o, &err);
        is_int(r, 0, "a runnable config becomes an overlay (%s: %s)", err.keypath, err.msg);
        ok(o && o->n_env == 2 && !strcmp(o->env_names[1], "A") && !strcmp(o->env_values[1], "b=c"),
           "env: split at the first '='");
        ok(o && o->nofile == 1024, "RLIMIT_NOFILE: the soft limit");
        ok(o && o->memory == 1048576 && o->pids == 64 && o->cpus_milli == 500,
           "memory, pids, cpu quota/period as cpus");
        is_str(o ? o->agent : NULL, "container", "the default agent");
        ok(o && o->n_net_allow == 2 && !strcmp(o->net_allow[0], "api.example.com:443"),
           "allow-hosts: comma-separated rules");
        policy_free(o);

        memset(&err, 0, sizeof err);
        r = overlay_of(",{\"destination\":\"/data\",\"source\":\"/srv\",\"options\":[\"rbind\"]}",
                       "", "", &o, &err);
        is_int(r, 0, "a bind mount: the overlay takes it (oci_mounts plans it)");
        policy_free(o);

        memset(&err, 0, sizeof err);
        r = overlay_of("", "", ",\"path\":\"/run/netns/pod\"", &o, &err);
        is_int(r, 0, "joining a network namespace: left to ringfence-oci (a pod's only, by inode)");
        policy_free(o);

        memset(&err, 0, sizeof err);
        r = overlay_of("", "\"ringfence.io/allow-hosts\":\"api.example.com:443\"",
                       ",\"path\":\"/run/netns/pod\"", &o, &err);
        is_int(r, 0, "a network namespace by path with egress: left to oci_netns_use (%s)",
               err.msg);
        policy_free(o);

        memset(&err, 0, sizeof err);
        r = overlay_of("", "\"ringfence.io/allow-hosts\":\"not a rule\"", "", &o, &err);
        ok(r < 0, "a bad allow rule in the annotation: refused (%d)", r);
        is_str(err.keypath, "annotations.ringfence.io/allow-hosts", "... naming the annotation");
        policy_free(o);

        memset(&err, 0, sizeof err);
        r = overlay_of("", "\"ringfence.io/agent\":\"bad agent\\n\"", "", &o, &err);
        ok(r < 0, "an agent name with a control byte: refused");
        policy_free(o);

        char path[256];
        struct oci_spec *s = NULL;
        const char *doc = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},"
                          "\"annotations\":{\"ringfence.io/policy\":\"../etc/shadow\"}}";
        is_int(oci_spec_parse(doc, strlen(doc), &s, &err), 0, "a config naming a policy");
        is_int(s ? oci_policy_path(s, path, sizeof path, &err) : 0, -EINVAL,
               "a policy name with a slash: refused");
        oci_spec_free(s);
        doc = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},"
              "\"annotations\":{\"ringfence.io/policy\":\"ci-agents\"}}";
        s = NULL;
        is_int(oci_spec_parse(doc, strlen(doc), &s, &err), 0, "a config naming a good policy");
        is_int(s ? oci_policy_path(s, path, sizeof path, &err) : 0, 1, "... one is named");
        is_str(path, "/etc/ringfence/policies/ci-agents.json", "... in /etc/ringfence/policies");
        oci_spec_free(s);
}

/* oci_mounts on RUNNABLE's mounts with `more` appended */
static int mounts_of(const char *more, struct plan_mount *pm, size_t *n, struct rf_error *err)
{
        char doc[4096];
        struct oci_spec *s = NULL;
        static char keep[4096]; /* pm's strings point into the spec: copied out */
        snprintf(doc, sizeof doc, RUNNABLE, more, "", "");
        memset(err, 0, sizeof *err);
        *n = 0;
        int r = oci_spec_parse(doc, strlen(doc), &s, err);
        if (r == 0)
                r = oci_mounts(s, pm, n, err);
        size_t off = 0;
        for (size_t i = 0; r == 0 && i < *n; i++) {
                int k = snprintf(keep + off, sizeof keep - off, "%s", pm[i].dst);
                pm[i].dst = keep + off;
                off += (size_t)k + 1;
                if (pm[i].src) {
                        k = snprintf(keep + off, sizeof keep - off, "%s", pm[i].src);
                        pm[i].src = keep + off;
                        off += (size_t)k + 1;
                }
        }
        oci_spec_free(s);
        return r;
}

static void test_mounts(void)
{
        struct plan_mount pm[OCI_MOUNTS_MAX];
        struct rf_error err;
        size_t n;

        is_int(mounts_of("", pm, &n, &err), 0, "the standard mounts: taken");
        is_int((int)n, 0, "... none planned: the run has its own");
        is_int(mounts_of(",{\"destination\":\"/data\",\"type\":\"bind\",\"source\":\"/srv\","
                         "\"options\":[\"rbind\",\"ro\",\"nosuid\"]}"
                         ",{\"destination\":\"/etc/resolv.conf\",\"type\":\"bind\","
                         "\"source\":\"/x/resolv.conf\",\"options\":[\"bind\"]}"
                         ",{\"destination\":\"/run\",\"type\":\"tmpfs\",\"source\":\"tmpfs\","
                         "\"options\":[\"size=65536k\",\"mode=755\"]}",
                         pm, &n, &err),
               0, "a bind, the engine's resolv.conf, a tmpfs (%s)", err.msg);
        ok(n == 2 && !strcmp(pm[0].dst, "/data") && !strcmp(pm[0].src, "/srv") && pm[0].rdonly,
           "... the bind: source, destination, ro");
        ok(n == 2 && !strcmp(pm[1].dst, "/run") && !pm[1].src && pm[1].size == (64ULL << 20) &&
                   pm[1].mode == 0755,
           "... the tmpfs: size, mode; resolv.conf is the run's own (skipped)");
        is_int(mounts_of(",{\"destination\":\"/data\",\"source\":\"/srv\",\"options\":[\"rbind\","
                         "\"rshared\"]}",
                         pm, &n, &err),
               -EOPNOTSUPP, "shared propagation: refused");
        is_str(err.keypath, "mounts[2]", "... naming mounts[2]");
        is_int(mounts_of(",{\"destination\":\"/proc/sys\",\"type\":\"bind\",\"source\":\"/srv\"}",
                         pm, &n, &err),
               -EOPNOTSUPP, "a bind over /proc: refused");
        is_int(mounts_of(",{\"destination\":\"/run/ringfence/x\",\"type\":\"tmpfs\"}", pm, &n,
                         &err),
               -EOPNOTSUPP, "a tmpfs over ringfence's /run/ringfence: refused");
        is_int(mounts_of(",{\"destination\":\"/d\",\"type\":\"bind\",\"source\":\"rel\"}", pm, &n,
                         &err),
               -EINVAL, "a bind with a relative source: refused");
        is_int(mounts_of(",{\"destination\":\"/d\",\"type\":\"tmpfs\",\"options\":[\"size=0\"]}",
                         pm, &n, &err),
               -EINVAL, "a tmpfs of size 0 (no limit): refused");
        is_int(mounts_of(",{\"destination\":\"/d\",\"type\":\"tmpfs\",\"options\":"
                         "[\"size=99999999g\"]}",
                         pm, &n, &err),
               -EINVAL, "a tmpfs past the bound: refused");
        is_int(mounts_of(",{\"destination\":\"/d\",\"type\":\"overlay\",\"source\":\"o\"}", pm, &n,
                         &err),
               -EOPNOTSUPP, "an overlay mount: not yet");
        /* a kubelet's two mounts, as containerd's CRI writes them */
        is_int(mounts_of(",{\"destination\":\"/dev/termination-log\",\"type\":\"bind\","
                         "\"source\":\"/var/lib/kubelet/pods/u/containers/c/1\","
                         "\"options\":[\"rbind\",\"rprivate\",\"rw\"]}"
                         ",{\"destination\":\"/var/run/secrets/kubernetes.io/serviceaccount\","
                         "\"type\":\"bind\",\"source\":\"/var/lib/kubelet/pods/u/volumes/sa\","
                         "\"options\":[\"rbind\",\"rprivate\",\"ro\"]}",
                         pm, &n, &err),
               0, "a kubelet's /dev/termination-log and service account binds: taken (%s)",
               err.msg);
        ok(n == 2 && !strcmp(pm[0].dst, "/dev/termination-log") && !pm[0].rdonly && pm[1].rdonly,
           "... the termination log writable, the token read-only");
        is_int(mounts_of(",{\"destination\":\"/run/secrets/x\",\"type\":\"bind\","
                         "\"source\":\"/srv\"}",
                         pm, &n, &err),
               0, "a bind at /run/secrets (the engine's; ringfence's are elsewhere): taken");
        is_int(mounts_of(",{\"destination\":\"/dev/pts/0\",\"type\":\"bind\","
                         "\"source\":\"/srv\"}",
                         pm, &n, &err),
               -EOPNOTSUPP, "a bind beneath ringfence's /dev/pts: refused");
        is_str(err.keypath, "mounts[2]", "... naming mounts[2]");
}

static void test_dest_check(void)
{
        static const char *const bad[] = {"/",        "/dev",           "/dev/null",
                                          "/dev/pts", "/dev/pts/ptmx",  "/dev/ptmx",
                                          "/dev/tty", "/dev/console",   "/dev/fd/3",
                                          "/dev/shm", "/proc",          "/proc/self/attr",
                                          "/sys/x",   "/run/ringfence", "/run/ringfence/secrets/a",
                                          "/run"};
        static const char *const good[] = {"/dev/termination-log", "/dev/k8s/sa", "/devices",
                                           "/dev/ttyS9x",          "/procx",      "/run/secrets",
                                           "/run/ringfencex",      "/data"};
        struct rf_error err;
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                memset(&err, 0, sizeof err);
                is_int(oci_mount_dest_check(bad[i], true, &err), -EOPNOTSUPP,
                       "destination %s: refused", bad[i]);
        }
        for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
                is_int(oci_mount_dest_check(good[i], true, &err), 0, "destination %s: taken",
                       good[i]);
        is_int(oci_mount_dest_check("/run", false, &err), 0,
               "a tmpfs at /run (containerd's default spec): taken");
}

/* a root of links only: {path, target}; every other path is a directory,
 * and paths beneath /missing do not exist */
static const char *const fake_links[][2] = {
        {"/var/run", "/run"},
        {"/var/lock", "../run/lock"},
        {"/out", "/../../../../etc"},
        {"/rel", "../../../../../host"},
        {"/loop-a", "loop-b"},
        {"/loop-b", "/loop-a"},
        {"/chain", "var/run"},
        {"/dot", "./././var/../var/run/."},
        {"/empty", ""},
};

static int fake_readlink(void *ctx, const char *path, char *buf, size_t len)
{
        (*(int *)ctx)++;
        if (!strncmp(path, "/missing", 8))
                return -ENOENT;
        for (size_t i = 0; i < sizeof fake_links / sizeof fake_links[0]; i++)
                if (!strcmp(path, fake_links[i][0])) {
                        if (!fake_links[i][1][0])
                                return -ENOENT;
                        snprintf(buf, len, "%s", fake_links[i][1]);
                        return (int)strlen(buf);
                }
        return -EINVAL;
}

static void test_path_resolve(void)
{
        static const char *const cases[][2] = {
                {"/var/run/secrets/kubernetes.io/serviceaccount",
                 "/run/secrets/kubernetes.io/serviceaccount"},
                {"/var/lock/x", "/run/lock/x"},
                {"/out/shadow", "/etc/shadow"},
                {"/rel/x", "/host/x"},
                {"/../../x", "/x"},
                {"/a/../../b/./c//d/", "/b/c/d"},
                {"/chain/s", "/run/s"},
                {"/dot/s", "/run/s"},
                {"/missing/a/../b", "/missing/b"},
                {"/empty/x", "/empty/x"},
                {"/", "/"},
        };
        char out[4096];
        int calls = 0;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                out[0] = '\0';
                int r = oci_path_resolve(cases[i][0], fake_readlink, &calls, out, sizeof out);
                ok(r == 0 && !strcmp(out, cases[i][1]),
                   "%s resolves to %s inside the root (%d, %s)", cases[i][0], cases[i][1], r, out);
        }
        is_int(oci_path_resolve("/loop-a/x", fake_readlink, &calls, out, sizeof out), -ELOOP,
               "a symlink loop: -ELOOP");
        is_int(oci_path_resolve("var/run", fake_readlink, &calls, out, sizeof out), -EINVAL,
               "a relative path: -EINVAL");
        is_int(oci_path_resolve("/var/run/secrets", fake_readlink, &calls, out, 8), -ENAMETOOLONG,
               "a result past the buffer: -ENAMETOOLONG");
}

static void test_ceiling(void)
{
        struct rf_policy *named = policy_new(), *o = policy_new();
        struct rf_error err = {0};
        named->memory = 1000;
        named->pids = 50;
        policy_set_string(&named->agent, "ci", 64, &err);
        o->memory = 5000; /* the config asks for more */
        o->pids = 10;     /* and for less */
        policy_set_string(&o->agent, "container", 64, &err);
        is_int(oci_policy_ceiling(named, o, &err), 0, "a named policy over a config");
        ok(o->memory == 1000, "... a higher memory limit becomes the policy's");
        ok(o->pids == 10, "... a lower pids limit stays");
        ok(o->cpus_milli == 0 && o->nofile == 0, "... limits neither sets stay unset");
        ok(o->agent == NULL, "... the policy's agent stands");
        is_int(policy_add_net_rule(o, "evil.example:443", &err), 0,
               "an allow rule from the config");
        is_int(oci_policy_ceiling(named, o, &err), -EPERM, "... refused under a named policy");
        ok(strstr(err.msg, "the policy decides egress") != NULL, "... saying so (%s)", err.msg);
        policy_free(named);
        policy_free(o);
}

/* oci_netns_use of a config with annotations `ann`, facts `f` */
static int netns_use(const char *ann, struct oci_netns_facts f, struct rf_error *err)
{
        char doc[4096];
        struct oci_spec *s = NULL;
        snprintf(doc, sizeof doc, RUNNABLE, "", ann, ",\"path\":\"/run/netns/x\"");
        memset(err, 0, sizeof *err);
        int r = oci_spec_parse(doc, strlen(doc), &s, err);
        if (r == 0)
                r = oci_netns_use(s, &f, err);
        oci_spec_free(s);
        return r;
}

static void test_netns_use(void)
{
        struct rf_error err;
        static const char hosts[] = "\"ringfence.io/allow-hosts\":\"api.example.com:443\"";
        static const char cri_sb[] = "\"io.kubernetes.cri.container-type\":\"sandbox\"";
        static const char cri_ct[] = "\"io.kubernetes.cri.container-type\":\"container\"";
        static const char crio_ct[] = "\"io.kubernetes.cri-o.ContainerType\":\"container\"";
        const struct oci_netns_facts owned = {.owned = true}, fresh = {0}, busy = {.busy = true},
                                     host = {.host = true},
                                     host_owned = {.host = true, .owned = true};

        is_int(netns_use("", owned, &err), OCI_NETNS_JOIN,
               "a pod's (a ringfence container's): joined");
        is_int(netns_use(cri_ct, owned, &err), OCI_NETNS_JOIN,
               "... a Kubernetes app container in its ringfence sandbox's: joined");
        is_int(netns_use(hosts, owned, &err), -EOPNOTSUPP, "... with egress of its own: refused");
        ok(strstr(err.msg, "pod's egress") != NULL, "... saying the pod's egress is its sandbox's");
        static const char policy[] = "\"ringfence.io/policy\":\"other\"";
        is_int(netns_use(policy, owned, &err), -EOPNOTSUPP,
               "... with a named policy of its own (not the pod's): refused");
        const struct oci_netns_facts restated = {.owned = true, .pods_egress = true};
        is_int(netns_use(policy, restated, &err), OCI_NETNS_JOIN,
               "... the pod's named policy restated: joined");
        is_int(netns_use(hosts, restated, &err), OCI_NETNS_JOIN,
               "... the sandbox's own egress restated (containerd passes pod annotations on): "
               "joined");
        is_int(netns_use("", fresh, &err), OCI_NETNS_ADOPT,
               "a new namespace an engine made (Podman's bridge): captured by this container");
        is_int(netns_use(cri_sb, fresh, &err), OCI_NETNS_ADOPT,
               "... a Kubernetes pod's sandbox container's: captured");
        is_int(netns_use(hosts, fresh, &err), OCI_NETNS_ADOPT,
               "... with the egress the annotation allows");
        is_int(netns_use(cri_ct, fresh, &err), -EOPNOTSUPP,
               "a Kubernetes app container whose sandbox is not ringfence's: refused");
        ok(strstr(err.msg, "sandbox is not a ringfence-oci") != NULL, "... saying so (%s)",
           err.msg);
        is_int(netns_use(crio_ct, fresh, &err), -EOPNOTSUPP, "... named by CRI-O: refused");
        is_int(netns_use("", busy, &err), -EOPNOTSUPP,
               "a namespace another runtime's processes are in: refused (never captured)");
        is_int(netns_use(cri_sb, host, &err), -EOPNOTSUPP, "the host's namespace: refused");
        ok(strstr(err.msg, "host's network namespace") != NULL, "... saying so (%s)", err.msg);
        is_int(netns_use("", host_owned, &err), -EOPNOTSUPP,
               "the host's, even with a ringfence container in it: refused");
}

static void test_kubernetes_fields(void)
{
        struct rf_error err = {0};
        struct oci_spec *s = NULL;
        /* what the CRI writes into every container: an OOM score
         * adjustment, cpu shares, huge page limits of 0 */
        static const char doc[] =
                "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
                "\"process\":{\"user\":{\"uid\":0,\"gid\":0,\"additionalGids\":[0,1,10,27]},"
                "\"args\":[\"sh\"],\"cwd\":\"/\",\"oomScoreAdj\":-998},"
                "\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"network\"},"
                "{\"type\":\"ipc\"},{\"type\":\"uts\"},{\"type\":\"mount\"}],"
                "\"resources\":{\"cpu\":{\"shares\":2},\"hugepageLimits\":["
                "{\"pageSize\":\"2MB\",\"limit\":0},{\"pageSize\":\"1GB\",\"limit\":0}]}}}";
        int r = oci_spec_parse(doc, sizeof doc - 1, &s, &err);
        is_int(r, 0, "a Kubernetes container's config parses (%s)", err.msg);
        ok(s && s->n_hugepages == 2 && s->hugepages[0].page_kb == 2048 &&
                   s->hugepages[1].page_kb == 1048576 && s->hugepages[1].limit == 0,
           "... its huge page limits, by size in KiB");
        ok(s && s->has_oom_score_adj && s->oom_score_adj == -998 && s->cpu_shares == 2,
           "... its OOM score adjustment and cpu shares");
        struct rf_policy *o = policy_new();
        r = s ? oci_overlay(s, o, &err) : -1;
        is_int(r, 0, "... a run takes them, the image's groups of the user too (%s)", err.msg);
        policy_free(o);
        oci_spec_free(s);

        is_int((int)oci_page_size_kb("64KB"), 64, "pageSize 64KB");
        is_int((int)oci_page_size_kb("2MB"), 2048, "pageSize 2MB");
        is_int((int)oci_page_size_kb("16GB"), 16 << 20, "pageSize 16GB");
        is_int((int)oci_page_size_kb("17GB"), 0, "pageSize past 16 GB: 0");
        is_int((int)oci_page_size_kb("2mb"), 0, "pageSize in lower case: 0");
        is_int((int)oci_page_size_kb("2M"), 0, "pageSize without B: 0");
        is_int((int)oci_page_size_kb("MB"), 0, "pageSize without digits: 0");
        is_int((int)oci_page_size_kb("0MB"), 0, "pageSize 0: 0");
        is_int((int)oci_page_size_kb("2MBx"), 0, "pageSize with trailing bytes: 0");
        is_int((int)oci_page_size_kb("9999999KB"), 0, "pageSize of seven digits: 0");
}

/* oci_host_ids of a runnable config with a user namespace and `maps`
 * (the linux object's uidMappings/gidMappings members, or "") */
static int host_ids(const char *user, const char *maps, bool *has, uint32_t *u, uint32_t *g,
                    struct rf_error *err)
{
        char doc[2048];
        struct oci_spec *s = NULL;
        snprintf(doc, sizeof doc,
                 "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
                 "\"process\":{\"user\":%s,\"args\":[\"sh\"],\"cwd\":\"/\"},"
                 "\"linux\":{\"namespaces\":[{\"type\":\"user\"},{\"type\":\"pid\"}]%s}}",
                 user, maps);
        memset(err, 0, sizeof *err);
        int r = oci_spec_parse(doc, strlen(doc), &s, err);
        if (r == 0)
                r = oci_host_ids(s, has, u, g, err);
        oci_spec_free(s);
        return r;
}

static void test_host_ids(void)
{
        struct rf_error err;
        bool has = true;
        uint32_t u = 0, g = 0;
        static const char root[] = "{\"uid\":0,\"gid\":0}";
        is_int(host_ids(root, "", &has, &u, &g, &err), 0, "no id mappings: none");
        ok(!has, "... the run allocates its host uid");
        is_int(host_ids("{\"uid\":1000,\"gid\":100}",
                        ",\"uidMappings\":[{\"containerID\":0,\"hostID\":100000,\"size\":65536}],"
                        "\"gidMappings\":[{\"containerID\":0,\"hostID\":200000,\"size\":1},"
                        "{\"containerID\":100,\"hostID\":300000,\"size\":10}]",
                        &has, &u, &g, &err),
               0, "Podman --userns=auto's mappings (%s)", err.msg);
        ok(has && u == 101000 && g == 300000, "... the user's and group's host ids (%u, %u)", u, g);
        is_int(host_ids(root,
                        ",\"uidMappings\":[{\"containerID\":0,\"hostID\":0,\"size\":1}],"
                        "\"gidMappings\":[{\"containerID\":0,\"hostID\":5000,\"size\":1}]",
                        &has, &u, &g, &err),
               -EOPNOTSUPP, "the user mapped to the host's root: refused");
        ok(strstr(err.msg, "host's root") != NULL, "... saying so (%s)", err.msg);
        is_int(host_ids("{\"uid\":1000,\"gid\":0}",
                        ",\"uidMappings\":[{\"containerID\":0,\"hostID\":100000,\"size\":1000}],"
                        "\"gidMappings\":[{\"containerID\":0,\"hostID\":100000,\"size\":1}]",
                        &has, &u, &g, &err),
               -EOPNOTSUPP, "a user no range holds (1000 past 0+1000): refused");
        is_int(host_ids(root, ",\"uidMappings\":[{\"containerID\":0,\"hostID\":9,\"size\":1}]",
                        &has, &u, &g, &err),
               -EOPNOTSUPP, "uid mappings without gid mappings: refused");
}

/* run.start's container=: Kubernetes' keys, else containerd's CRI keys */
static void test_identity(void)
{
        struct rf_error err = {0};
        struct oci_spec *s = NULL;
        char out[OCI_IDENTITY_MAX];
        static const char k8s[] =
                "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
                "\"process\":{\"user\":{\"uid\":0,\"gid\":0},\"args\":[\"sh\"],\"cwd\":\"/"
                "\"},\"annotations\":{"
                "\"io.kubernetes.pod.namespace\":\"ns\",\"io.kubernetes.pod.name\":\"p\","
                "\"io.kubernetes.cri.sandbox-uid\":\"u1\",\"io.kubernetes.cri.container-name\":"
                "\"c\","
                "\"io.kubernetes.container.name\":\"\"}}";
        is_int(oci_spec_parse(k8s, sizeof k8s - 1, &s, &err), 0,
               "identity: a config parses (%s: %s)", err.keypath, err.msg);
        if (!s)
                return;
        oci_identity(s, "ID1", out, sizeof out);
        is_str(out, "id=ID1 pod=ns/p pod_uid=u1 name=c",
               "identity: Kubernetes' keys, containerd's where those are missing or empty");
        oci_identity(s, "ID1", out, 12);
        is_str(out, "id=ID1 pod=", "identity: truncated to the buffer, NUL-terminated");
        oci_spec_free(s);
        s = NULL;
        static const char bare[] =
                "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
                "\"process\":{\"user\":{\"uid\":0,\"gid\":0},\"args\":[\"sh\"],\"cwd\":\"/\"}}";
        is_int(oci_spec_parse(bare, sizeof bare - 1, &s, &err), 0, "identity: a bare config");
        if (!s)
                return;
        oci_identity(s, "ID2", out, sizeof out);
        is_str(out, "id=ID2", "identity: no pod, the id alone");
        oci_spec_free(s);
}

int main(void)
{
        test_ceiling();
        test_overlay();
        test_mounts();
        test_dest_check();
        test_path_resolve();
        test_full();
        test_refusals();
        test_limits_and_unknowns();
        test_netns_use();
        test_kubernetes_fields();
        test_host_ids();
        test_identity();
        return done();
}
