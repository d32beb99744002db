/*
 * main.c — ringfence-oci: ringfence behind runc's command line (issue 17).
 *
 * A container is a ringfence run (supervisor/start.h) whose root is the
 * bundle's root filesystem (--rootfs) and whose settings come from its
 * config.json (oci/spec.h, oci/request.h). This first step has `run`
 * (create, start and wait, in the foreground), `spec`, `features` and
 * `--version`; runc's other commands are known and refused with a line
 * saying they are not there yet, and an unknown command or option fails
 * (exit 1, or 125 once a container was asked for and refused).
 *
 * Global options as runc's: --root DIR (the containers' state, default
 * /run/ringfence-oci), --log FILE and --log-format text|json (errors also
 * go there, as engines read them), --debug, --rootless, and
 * --systemd-cgroup, refused: there is no systemd cgroup driver yet.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "config.h"
#include "oci/request.h"
#include "oci/spec.h"
#include "policy/policy.h"
#include "shared/json.h"
#include "shared/macro.h"
#include "supervisor/run.h"
#include "supervisor/start.h"

#define OCI_ROOT_DEFAULT "/run/ringfence-oci"
#define OCI_ID_MAX       128

static struct {
        const char *root;
        const char *log;
        bool log_json;
        bool debug;
} g = {.root = OCI_ROOT_DEFAULT};

/* One error line: stderr, and the --log file (JSON lines with
 * --log-format json, as runc writes them). */
static void oci_error(const char *fmt, ...) _printf_(1, 2);
static void oci_error(const char *fmt, ...)
{
        char msg[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        fputs("ringfence-oci: ", stderr);
        (void)json_escape_fwrite(stderr, msg, strlen(msg), true);
        fputc('\n', stderr);
        if (!g.log)
                return;
        int fd = open(g.log, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        FILE *f = fd >= 0 ? fdopen(fd, "a") : NULL;
        if (!f) {
                safe_close(fd);
                return;
        }
        if (g.log_json) {
                struct json_buf b = {0};
                char ts[64];
                time_t now = time(NULL);
                struct tm tm;
                strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
                json_buf_append(&b, "{\"level\":\"error\",\"msg\":", 23);
                json_buf_append_string(&b, msg, strlen(msg));
                json_buf_append(&b, ",\"time\":", 8);
                json_buf_append_string(&b, ts, strlen(ts));
                json_buf_append(&b, "}\n", 2);
                if (!b.error)
                        fputs(b.data, f);
                json_buf_done(&b);
        } else {
                fputs("ringfence-oci: ", f);
                (void)json_escape_fwrite(f, msg, strlen(msg), true);
                fputc('\n', f);
        }
        fclose(f);
}

static void oci_print_error(const struct rf_error *err)
{
        char buf[RF_ERROR_MSG_MAX + 2 * RF_ERROR_PATH_MAX + 32];
        rf_error_format(err, buf, sizeof buf);
        oci_error("%s", buf);
}

static void usage(FILE *f)
{
        fputs("Usage: ringfence-oci [GLOBAL OPTIONS] COMMAND [OPTIONS] [ID]\n"
              "\n"
              "ringfence as an OCI runtime (runc's command line).\n"
              "\n"
              "Commands:\n"
              "  run [-b BUNDLE] ID   create, start and wait for container ID (foreground)\n"
              "  spec [-b BUNDLE]     write a config.json that ringfence-oci runs\n"
              "  features             what this runtime implements (JSON)\n"
              "  --version            the versions of ringfence-oci and the runtime spec\n"
              "\n"
              "Not there yet (refused): create, start, state, kill, delete, exec, ps,\n"
              "pause, resume, update, events, list, checkpoint, restore.\n"
              "\n"
              "Global options:\n"
              "  --root DIR           the containers' state (default " OCI_ROOT_DEFAULT ")\n"
              "  --log FILE           errors also to FILE\n"
              "  --log-format FMT     text or json\n"
              "  --debug              more detail\n"
              "  --rootless true|false|auto   accepted (ringfence decides by its uid)\n"
              "  --systemd-cgroup     refused: no systemd cgroup driver yet\n"
              "\n"
              "See docs/OCI.md.\n",
              f);
}

/* A container id as runc takes them: [A-Za-z0-9_+.-], 1-128 bytes, not
 * "." or "..". */
static bool id_valid(const char *id)
{
        size_t n = strlen(id);
        if (n == 0 || n > OCI_ID_MAX || !strcmp(id, ".") || !strcmp(id, ".."))
                return false;
        return strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+.-") ==
               n;
}

/* The bundle's config.json, whole (at most JSON_INPUT_MAX bytes). */
static int read_config(int bundle, char **buf, size_t *len, struct rf_error *err)
{
        _cleanup_close_ int fd = openat(bundle, "config.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0)
                return rf_error_set(err, -errno, "config.json: %s", strerror(errno));
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return rf_error_set(err, -EINVAL, "config.json: not a regular file");
        if (st.st_size > JSON_INPUT_MAX)
                return rf_error_set(err, -E2BIG, "config.json: larger than %d bytes",
                                    JSON_INPUT_MAX);
        _cleanup_free_ char *b = malloc((size_t)st.st_size + 1);
        size_t got = 0;
        if (!b)
                return rf_error_set(err, -ENOMEM, "out of memory");
        while (got < (size_t)st.st_size) {
                ssize_t n = read(fd, b + got, (size_t)st.st_size - got);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return rf_error_set(err, n < 0 ? -errno : -EIO, "config.json: short read");
                got += (size_t)n;
        }
        *buf = TAKE_PTR(b);
        *len = got;
        return 0;
}

/* --- run ---------------------------------------------------------------------- */

struct container {
        char dir[PATH_MAX]; /* ROOT/ID, made here; removed at the end */
        char ws[PATH_MAX];  /* ROOT/ID/ws: the run's (empty) workspace */
        bool made;
};

static void container_done(struct container *c)
{
        if (!c->made)
                return;
        (void)rmdir(c->ws);
        (void)rmdir(c->dir);
        c->made = false;
}

static int container_make(struct container *c, const char *id, uid_t uid, gid_t gid,
                          struct rf_error *err)
{
        if (mkdir(g.root, 0700) < 0 && errno != EEXIST)
                return rf_error_set(err, -errno, "--root %s: %s", g.root, strerror(errno));
        if (snprintf(c->dir, sizeof c->dir, "%s/%s", g.root, id) >= (int)sizeof c->dir - 3)
                return rf_error_set(err, -ENAMETOOLONG, "--root %s: too long", g.root);
        memcpy(c->ws, c->dir, strlen(c->dir));
        memcpy(c->ws + strlen(c->dir), "/ws", 4);
        if (mkdir(c->dir, 0711) < 0)
                return rf_error_set(err, -errno, "container %s: %s", id,
                                    errno == EEXIST ? "exists already" : strerror(errno));
        c->made = true;
        if (mkdir(c->ws, 0700) < 0 || chown(c->ws, uid, gid) < 0)
                return rf_error_set(err, -errno, "container %s: its directory: %s", id,
                                    strerror(errno));
        return 0;
}

static void hook_note(void *ctx, const char *line)
{
        oci_error("%s", line);
}

static int oci_run(int argc, char **argv)
{
        static const struct option opts[] = {
                {"bundle", required_argument, NULL, 'b'},
                {"pid-file", required_argument, NULL, 'P'},
                {"console-socket", required_argument, NULL, 'C'},
                {"detach", no_argument, NULL, 'd'},
                {"keep", no_argument, NULL, 'k'},
                {"no-pivot", no_argument, NULL, 'N'},
                {"no-new-keyring", no_argument, NULL, 'K'},
                {"no-subreaper", no_argument, NULL, 'S'},
                {"preserve-fds", required_argument, NULL, 'F'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        const char *bundle = ".";
        struct rf_error err = {0};
        int c, r;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+b:dh", opts, NULL)) != -1) {
                switch (c) {
                case 'b':
                        bundle = optarg;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                case 'N': /* ringfence always pivots (the host's root is gone) */
                case 'K': /* no session keyring is reachable from a run */
                case 'S':
                case 'k':
                        break;
                case 'F':
                        if (strcmp(optarg, "0") != 0) {
                                oci_error(
                                        "run: --preserve-fds: not yet (a run holds fds 0-2 only)");
                                return 1;
                        }
                        break;
                case 'P':
                case 'C':
                case 'd':
                        oci_error("run: %s: not yet (see docs/OCI.md)", argv[optind - 1]);
                        return 1;
                default:
                        oci_error("run: unknown option %s", argv[optind - 1]);
                        return 1;
                }
        }
        if (optind != argc - 1) {
                oci_error("run: one container id (usage: ringfence-oci run [-b BUNDLE] ID)");
                return 1;
        }
        const char *id = argv[optind];
        if (!id_valid(id)) {
                oci_error("run: container id \"%.130s\": 1-128 of [A-Za-z0-9_+.-]", id);
                return 1;
        }
        char bpath[PATH_MAX], rootfs[PATH_MAX], pfile[PATH_MAX];
        if (!realpath(bundle, bpath)) {
                oci_error("run: bundle %s: %s", bundle, strerror(errno));
                return 1;
        }
        _cleanup_close_ int bfd = open(bpath, O_PATH | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *doc = NULL;
        size_t len = 0;
        _cleanup_(oci_spec_freep) struct oci_spec *spec = NULL;
        _cleanup_policy_ struct rf_policy *overlay = policy_new();
        if (bfd < 0 || !overlay) {
                oci_error("run: bundle %s: %s", bpath, strerror(bfd < 0 ? errno : ENOMEM));
                return 1;
        }
        if ((r = read_config(bfd, &doc, &len, &err)) < 0 ||
            (r = oci_spec_parse(doc, len, &spec, &err)) < 0 ||
            (r = oci_overlay(spec, overlay, &err)) < 0 ||
            (r = oci_policy_path(spec, pfile, sizeof pfile, &err)) < 0) {
                oci_print_error(&err);
                return RF_EXIT_REFUSED;
        }
        bool named_policy = r == 1;
        int n = spec->root_path[0] == '/' ? snprintf(rootfs, sizeof rootfs, "%s", spec->root_path)
                                          : snprintf(rootfs, sizeof rootfs, "%.2048s/%.2000s",
                                                     bpath, spec->root_path);
        if (n < 0 || (size_t)n >= sizeof rootfs) {
                oci_error("run: root.path: too long");
                return RF_EXIT_REFUSED;
        }
        _cleanup_free_ char *state_dir = NULL;
        _cleanup_(container_done) struct container ct = {0};
        if ((r = policy_set_string(&overlay->rootfs, rootfs, PATH_MAX, &err)) < 0 ||
            (r = cli_state_dir(NULL, 1, &state_dir, &err)) < 0 ||
            (r = container_make(&ct, id, spec->uid, spec->gid, &err)) < 0 ||
            (r = policy_set_string(&overlay->workspace, ct.ws, PATH_MAX, &err)) < 0) {
                oci_print_error(&err);
                return RF_EXIT_REFUSED;
        }
        struct run_request req = {
                .policy_file = named_policy ? pfile : NULL,
                .overlay = overlay,
                .argv = (char *const *)spec->args,
                .state_dir = state_dir,
                .cwd = ct.ws,
                .cwd_inside = spec->cwd,
                .hostname = spec->hostname && spec->hostname[0] ? spec->hostname : NULL,
                .masked = spec->masked_paths,
                .n_masked = spec->n_masked_paths,
                .readonly = spec->readonly_paths,
                .n_readonly = spec->n_readonly_paths,
                .use_pty = spec->terminal && isatty(STDIN_FILENO),
                .uid = getuid(),
                .refusals_to = stderr,
                .note = hook_note,
        };
        int status = run_start(&req, &err);
        if (err.msg[0])
                oci_print_error(&err);
        return status;
}

/* --- spec, features, version ------------------------------------------------- */

static const char default_spec[] =
        "{\n"
        "  \"ociVersion\": \"1.0.2\",\n"
        "  \"process\": {\n"
        "    \"terminal\": true,\n"
        "    \"user\": {\"uid\": 0, \"gid\": 0},\n"
        "    \"args\": [\"sh\"],\n"
        "    \"env\": [\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\",\n"
        "            \"TERM=xterm\"],\n"
        "    \"cwd\": \"/\",\n"
        "    \"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"hard\": 1024, \"soft\": 1024}],\n"
        "    \"noNewPrivileges\": true\n"
        "  },\n"
        "  \"root\": {\"path\": \"rootfs\", \"readonly\": true},\n"
        "  \"hostname\": \"ringfence\",\n"
        "  \"mounts\": [\n"
        "    {\"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\"},\n"
        "    {\"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": \"tmpfs\",\n"
        "     \"options\": [\"nosuid\", \"strictatime\", \"mode=755\", \"size=65536k\"]},\n"
        "    {\"destination\": \"/dev/pts\", \"type\": \"devpts\", \"source\": \"devpts\",\n"
        "     \"options\": [\"nosuid\", \"noexec\", \"newinstance\", \"ptmxmode=0666\", "
        "\"mode=0620\"]},\n"
        "    {\"destination\": \"/dev/shm\", \"type\": \"tmpfs\", \"source\": \"shm\",\n"
        "     \"options\": [\"nosuid\", \"noexec\", \"nodev\", \"mode=1777\", \"size=65536k\"]}\n"
        "  ],\n"
        "  \"annotations\": {\"ringfence.io/agent\": \"container\"},\n"
        "  \"linux\": {\n"
        "    \"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"network\"}, {\"type\": \"ipc\"},\n"
        "                   {\"type\": \"uts\"}, {\"type\": \"mount\"}, {\"type\": \"cgroup\"}],\n"
        "    \"maskedPaths\": [\"/proc/acpi\", \"/proc/asound\", \"/proc/kcore\", \"/proc/keys\",\n"
        "                    \"/proc/latency_stats\", \"/proc/timer_list\", "
        "\"/proc/timer_stats\",\n"
        "                    \"/proc/sched_debug\", \"/proc/scsi\", \"/sys/firmware\"],\n"
        "    \"readonlyPaths\": [\"/proc/bus\", \"/proc/fs\", \"/proc/irq\", \"/proc/sys\",\n"
        "                      \"/proc/sysrq-trigger\"]\n"
        "  }\n"
        "}\n";

static int cmd_spec(int argc, char **argv)
{
        const char *bundle = ".";
        for (int i = 1; i < argc; i++) {
                if ((!strcmp(argv[i], "-b") || !strcmp(argv[i], "--bundle")) && i + 1 < argc)
                        bundle = argv[++i];
                else if (!strcmp(argv[i], "--rootless"))
                        ; /* the same config: ringfence maps the user itself */
                else {
                        oci_error("spec: unknown option %s", argv[i]);
                        return 1;
                }
        }
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/config.json", bundle);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0) {
                oci_error("spec: %s: %s", path, strerror(errno));
                return 1;
        }
        ssize_t n = write(fd, default_spec, sizeof default_spec - 1);
        if (close(fd) < 0 || n != (ssize_t)sizeof default_spec - 1) {
                oci_error("spec: %s: cannot write it", path);
                return 1;
        }
        return 0;
}

static int cmd_features(void)
{
        fputs("{\n"
              "  \"ociVersionMin\": \"1.0.0\",\n"
              "  \"ociVersionMax\": \"1.2.1\",\n"
              "  \"hooks\": [],\n"
              "  \"mountOptions\": [],\n"
              "  \"linux\": {\n"
              "    \"namespaces\": [\"cgroup\", \"ipc\", \"mount\", \"network\", \"pid\", "
              "\"user\", \"uts\"],\n"
              "    \"capabilities\": [],\n"
              "    \"cgroup\": {\"v1\": true, \"v2\": true, \"systemd\": false, "
              "\"systemdUser\": false},\n"
              "    \"seccomp\": {\"enabled\": false},\n"
              "    \"apparmor\": {\"enabled\": false},\n"
              "    \"selinux\": {\"enabled\": false},\n"
              "    \"intelRdt\": {\"enabled\": false}\n"
              "  },\n"
              "  \"annotations\": {\n"
              "    \"io.github.ringfence.oci.commands\": \"run spec features\",\n"
              "    \"io.github.ringfence.oci.floor\": \"no capabilities, ringfence's seccomp "
              "filter, Landlock, no /sys\"\n"
              "  }\n"
              "}\n",
              stdout);
        return 0;
}

int main(int argc, char **argv)
{
        static const char *const later[] = {"create", "start", "state",      "kill",   "delete",
                                            "exec",   "ps",    "pause",      "resume", "update",
                                            "events", "list",  "checkpoint", "restore"};
        /* fds 0-2 exist (a run's relay and the log need them) */
        for (int fd = 0; fd < 3; fd++)
                if (fcntl(fd, F_GETFD) < 0) {
                        int n = open("/dev/null", O_RDWR);
                        if (n < 0)
                                return RF_EXIT_REFUSED;
                        if (n != fd) {
                                dup2(n, fd);
                                close(n);
                        }
                }
        struct rlimit core = {0, 0};
        (void)setrlimit(RLIMIT_CORE, &core);
        (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

        if (argc >= 2 && !strcmp(argv[1], RUN_TLS_HELPER_ARG)) /* spawned by a run */
                return run_tls_helper_main(argc, argv);
        int i = 1;
        for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
                const char *o = argv[i], *eq = strchr(o, '=');
                size_t ol = eq ? (size_t)(eq - o) : strlen(o);
                bool takes = !strncmp(o, "--root", ol) || !strncmp(o, "--log", ol) ||
                             !strncmp(o, "--log-format", ol) || !strncmp(o, "--rootless", ol) ||
                             !strncmp(o, "--criu", ol);
                const char *v = eq ? eq + 1 : NULL;
                if (takes && !v) {
                        if (i + 1 >= argc) {
                                oci_error("%s: needs a value", o);
                                return 1;
                        }
                        v = argv[++i];
                }
                if (!strncmp(o, "--root", ol) && ol == 6)
                        g.root = v;
                else if (!strncmp(o, "--log", ol) && ol == 5)
                        g.log = v;
                else if (!strncmp(o, "--log-format", ol) && ol == 12) {
                        if (strcmp(v, "json") && strcmp(v, "text")) {
                                oci_error("--log-format %s: text or json", v);
                                return 1;
                        }
                        g.log_json = !strcmp(v, "json");
                } else if (!strncmp(o, "--rootless", ol) && ol == 10) {
                        if (strcmp(v, "true") && strcmp(v, "false") && strcmp(v, "auto")) {
                                oci_error("--rootless %s: true, false or auto", v);
                                return 1;
                        }
                } else if (!strcmp(o, "--debug"))
                        g.debug = true;
                else if (!strcmp(o, "--systemd-cgroup")) {
                        oci_error("--systemd-cgroup: no systemd cgroup driver yet (cgroupfs only)");
                        return 1;
                } else if (!strcmp(o, "--version"))
                        break;
                else if (!strcmp(o, "--help")) {
                        usage(stdout);
                        return 0;
                } else {
                        oci_error("unknown global option %s (see ringfence-oci --help)", o);
                        return 1;
                }
        }
        if (i >= argc) {
                usage(stderr);
                return 1;
        }
        if (g.root[0] != '/') {
                oci_error("--root %s: an absolute path", g.root);
                return 1;
        }
        const char *cmd = argv[i];
        if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
                printf("ringfence-oci version %s%s\nspec: 1.2.1\n", RF_VERSION,
                       RF_CONFIG_TEST_BUILD ? " (test build)" : "");
                return 0;
        }
        if (!strcmp(cmd, "run"))
                return oci_run(argc - i, argv + i);
        if (!strcmp(cmd, "spec"))
                return cmd_spec(argc - i, argv + i);
        if (!strcmp(cmd, "features"))
                return cmd_features();
        for (size_t k = 0; k < ARRAY_SIZE(later); k++)
                if (!strcmp(cmd, later[k])) {
                        oci_error("%s: not there yet (this ringfence-oci has run, spec and "
                                  "features; see docs/OCI.md)",
                                  cmd);
                        return 1;
                }
        oci_error("unknown command %s (see ringfence-oci --help)", cmd);
        return 1;
}
