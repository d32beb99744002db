/*
 * bench/audit.c — append and verify throughput of the audit log.
 *
 * Appends N records (a run.* like event with five fields) with the hash
 * chain, non-durable so group commit applies (one fdatasync per
 * AUDIT_COMMIT_WINDOW_MS, plus one durable record every 1000), then a final
 * audit_flush: every record is on disk when the clock stops. Then verifies
 * the log and reports MB/s. Usage: bench-audit [N] [STATE_DIR]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "audit/audit.h"

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long dir_bytes(const char *state)
{
        char p[4096];
        long total = 0;
        for (unsigned i = 1;; i++) {
                struct stat st;
                snprintf(p, sizeof p, "%s/audit/audit-%06u.jsonl", state, i);
                if (stat(p, &st) < 0)
                        return total;
                total += st.st_size;
        }
}

int main(int argc, char **argv)
{
        long n = argc > 1 ? atol(argv[1]) : 200000;
        char tmpl[] = "/tmp/rf-bench-audit.XXXXXX";
        const char *state = argc > 2 ? argv[2] : mkdtemp(tmpl);
        struct rf_error err = {0};
        struct audit_log *log = NULL;
        if (!state || audit_open(state, &log, &err) < 0) {
                fprintf(stderr, "bench-audit: open: %s\n", err.msg);
                return 1;
        }
        double t0 = now_s();
        for (long i = 0; i < n; i++) {
                struct audit_field f[] = {
                        {.key = "agent", .type = AUDIT_STR, .s = "claude-code"},
                        {.key = "host", .type = AUDIT_STR, .s = "api.example.com:443"},
                        {.key = "decision", .type = AUDIT_STR, .s = "allow"},
                        {.key = "bytes", .type = AUDIT_UINT, .u = (uint64_t)i * 17},
                        {.key = "pid", .type = AUDIT_INT, .i = 4242},
                };
                int64_t s = audit_append(log, "0190c3e2-7b1a-7f00-8000-000000000001",
                                         "egress.connect", f, 5, i % 1000 == 999, &err);
                if (s < 0) {
                        fprintf(stderr, "bench-audit: append: %s\n", err.msg);
                        return 1;
                }
        }
        if (audit_flush(log) < 0) {
                fprintf(stderr, "bench-audit: flush failed\n");
                return 1;
        }
        double t1 = now_s();
        log = audit_close(log);

        struct audit_verified v = {0};
        double t2 = now_s();
        if (audit_verify(state, NULL, NULL, &v, &err) < 0) {
                fprintf(stderr, "bench-audit: verify: %s\n", err.msg);
                return 1;
        }
        double t3 = now_s();
        long bytes = dir_bytes(state);
        printf("append: %ld records in %.3f s = %.0f records/s (durable: group commit, flushed)\n",
               n, t1 - t0, (double)n / (t1 - t0));
        printf("verify: %" PRIu64 " records, %.1f MB in %.3f s = %.1f MB/s (%.0f records/s)\n",
               v.records, (double)bytes / 1e6, t3 - t2, (double)bytes / 1e6 / (t3 - t2),
               (double)v.records / (t3 - t2));
        printf("state: %s\n", state);
        return 0;
}
