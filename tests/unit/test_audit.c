/*
 * test_audit.c — the audit log: append and verify, every tamper case the
 * verifier must catch (each for the right seq and reason), segments,
 * several writers (also holding the lock for batches, which skip the
 * segment's stat), secrets refused, a full disk refused, the commit left
 * to a ticking caller.
 *
 * Every case works in its own directory under /tmp (mkdtemp), removed at
 * the end. The full-disk case mounts a small tmpfs in a child's private
 * mount namespace (root only; skipped otherwise) — never on the host.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "audit/audit.h"
#include "tap.h"

/* audit_verify's record count (the last seq verified). */
static int verify_n(const char *state, const char *head, const char *pub, uint64_t *n,
                    struct rf_error *err)
{
        struct audit_verified v = {0};
        int r = audit_verify(state, head, pub, &v, err);
        *n = v.records;
        return r;
}

static char *mk_state(void)
{
        char *p = strdup("/tmp/rf-test-audit.XXXXXX");
        if (!p || !mkdtemp(p)) {
                perror("mkdtemp");
                exit(1);
        }
        return p;
}

static void rm_state(char *p)
{
        char cmd[512];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
        if (system(cmd) != 0)
                diag("could not remove %s", p);
        free(p);
}

/* Append n records (a checkpoint after the 4th and at the end). */
static void fill(const char *state, int n)
{
        struct audit_log *log = NULL;
        struct rf_error err = {0};
        if (audit_open(state, &log, &err) < 0) {
                diag("open: %s", err.msg);
                exit(1);
        }
        for (int i = 1; i <= n; i++) {
                struct audit_field f[] = {
                        {.key = "i", .type = AUDIT_INT, .i = i},
                        {.key = "note", .type = AUDIT_STR, .s = "abcdefgh"},
                };
                if (audit_append(log, "run-1", "test.event", f, 2, i % 5 == 0, &err) < 0) {
                        diag("append: %s", err.msg);
                        exit(1);
                }
                if (i == 4 && audit_checkpoint(log, &err) < 0)
                        exit(1);
        }
        if (audit_checkpoint(log, &err) < 0)
                exit(1);
        audit_close(log);
}

/* The lines of segment 1 (each without its newline), at most 256. */
struct lines {
        char *l[256];
        size_t n;
};

static void seg_path(const char *state, unsigned seg, char *buf, size_t len)
{
        snprintf(buf, len, "%s/audit/audit-%06u.jsonl", state, seg);
}

static void read_lines(const char *state, struct lines *ls)
{
        char p[512], buf[1 << 16];
        seg_path(state, 1, p, sizeof p);
        FILE *f = fopen(p, "re");
        ls->n = 0;
        while (f && ls->n < 256 && fgets(buf, sizeof buf, f)) {
                buf[strcspn(buf, "\n")] = '\0';
                ls->l[ls->n++] = strdup(buf);
        }
        if (f)
                fclose(f);
}

static void write_lines(const char *state, struct lines *ls)
{
        char p[512];
        seg_path(state, 1, p, sizeof p);
        FILE *f = fopen(p, "we");
        for (size_t i = 0; i < ls->n; i++)
                fprintf(f, "%s\n", ls->l[i]);
        fclose(f);
}

static void free_lines(struct lines *ls)
{
        for (size_t i = 0; i < ls->n; i++)
                free(ls->l[i]);
        ls->n = 0;
}

/* Overwrite the 64-hex value of member `key` in line (in place). */
static void set_hex(char *line, const char *key, const char *hex, size_t n)
{
        char pat[64];
        snprintf(pat, sizeof pat, "\"%s\":\"", key);
        char *p = strstr(line, pat);
        if (p)
                memcpy(p + strlen(pat), hex, n);
}

static void rehash_line(char *line)
{
        char hex[65];
        size_t len = strlen(line);
        if (audit_record_hash(line, len, hex) == 0)
                memcpy(line + len - 66, hex, 64);
}

static const char *hash_of(const char *line)
{
        return line + strlen(line) - 66; /* 64 hex then `"}` */
}

/*
 * Forge: recompute prev/hash from line `from` on, as an attacker with write
 * access would; when `sk` is given, also re-sign every checkpoint with it.
 */
static void rechain(struct lines *ls, size_t from, const unsigned char *sk)
{
        for (size_t i = from; i < ls->n; i++) {
                char prev[65];
                if (i == 0)
                        memset(prev, '0', 64);
                else
                        memcpy(prev, hash_of(ls->l[i - 1]), 64);
                prev[64] = '\0';
                set_hex(ls->l[i], "prev", prev, 64);
                if (sk && strstr(ls->l[i], "\"log.checkpoint\"")) {
                        unsigned char pk[32], sig[64];
                        char pk_hex[65], sig_hex[129], msg[128];
                        crypto_sign_ed25519_sk_to_pk(pk, sk);
                        sodium_bin2hex(pk_hex, sizeof pk_hex, pk, 32);
                        set_hex(ls->l[i], "head_hash", prev, 64);
                        set_hex(ls->l[i], "key", pk_hex, 64);
                        int k = snprintf(msg, sizeof msg, "ringfence-audit-v1\n%zu\n%s", i, prev);
                        crypto_sign_detached(sig, NULL, (unsigned char *)msg, (size_t)k, sk);
                        sodium_bin2hex(sig_hex, sizeof sig_hex, sig, 64);
                        set_hex(ls->l[i], "sig", sig_hex, 128);
                }
                rehash_line(ls->l[i]);
        }
}

static int verify(const char *state, const char *head, const char *pub, char *msg, size_t len)
{
        struct rf_error err = {0};
        uint64_t n = 0;
        int r = verify_n(state, head, pub, &n, &err);
        snprintf(msg, len, "%s", r < 0 ? err.msg : "");
        return r;
}

static bool starts(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void test_clean(void)
{
        char *state = mk_state(), msg[RF_ERROR_MSG_MAX];
        fill(state, 20);
        struct rf_error err = {0};
        uint64_t n = 0;
        is_int(verify_n(state, NULL, NULL, &n, &err), 0, "clean log verifies (%s)", err.msg);
        is_int((int)n, 22, "20 records + 2 checkpoints");

        struct lines ls;
        read_lines(state, &ls);
        struct audit_record rec;
        is_int(audit_record_parse(ls.l[0], strlen(ls.l[0]), &rec, &err), 0, "record 1 parses");
        is_str(rec.prev, "0000000000000000000000000000000000000000000000000000000000000000",
               "seq 1's prev is 64 zeros");
        ok(rec.seq == 1 && strcmp(rec.event, "test.event") == 0 && strcmp(rec.run, "run-1") == 0,
           "seq, event, run read back");
        ok(starts(ls.l[0], "{\"event\":\"test.event\",\"i\":1,\"note\":\"abcdefgh\",\"prev\":"),
           "canonical: keys sorted, compact");
        ok(strstr(ls.l[4], "\"log.checkpoint\"") && strstr(ls.l[4], "\"head_seq\":4"),
           "checkpoint of head 4 is seq 5");
        free_lines(&ls);

        char head[AUDIT_HEAD_MAX];
        is_int(audit_head(state, head, sizeof head, &err), 0, "head");
        ok(starts(head, "{\"version\":1,\"seq\":22,\"hash\":\"") &&
                   strstr(head, "\"key_fpr\":\"") && strstr(head, "\"sig\":\""),
           "head names seq 22, key fingerprint, signature");
        is_int(verify(state, NULL, NULL, msg, sizeof msg), 0, "still verifies");
        rm_state(state);
}

static void test_tamper(void)
{
        char msg[RF_ERROR_MSG_MAX];
        struct lines ls;

        /* flip a byte in record 7 */
        char *state = mk_state();
        fill(state, 20);
        read_lines(state, &ls);
        char *p = strstr(ls.l[6], "abcdefgh");
        p[0] = 'X';
        write_lines(state, &ls);
        free_lines(&ls);
        is_int(verify(state, NULL, NULL, msg, sizeof msg), -EBADMSG, "flipped byte caught");
        ok(starts(msg, "seq 7: modified (hash mismatch)"), "... at seq 7, hash mismatch: %s", msg);
        rm_state(state);

        /* delete record 10 */
        state = mk_state();
        fill(state, 20);
        read_lines(state, &ls);
        free(ls.l[9]);
        memmove(&ls.l[9], &ls.l[10], (ls.n - 10) * sizeof ls.l[0]);
        ls.n--;
        write_lines(state, &ls);
        free_lines(&ls);
        is_int(verify(state, NULL, NULL, msg, sizeof msg), -EBADMSG, "deleted record caught");
        ok(starts(msg, "seq 10: seq gap") && strstr(msg, "deleted"), "... at seq 10: %s", msg);
        rm_state(state);

        /* insert a forged seq 8 with a correct prev and recomputed hash after record 7 */
        state = mk_state();
        fill(state, 20);
        read_lines(state, &ls);
        char *forged = strdup(ls.l[7]);
        memcpy(strstr(forged, "abcdefgh"), "FORGED!!", 8);
        rehash_line(forged);
        memmove(&ls.l[8], &ls.l[7], (ls.n - 7) * sizeof ls.l[0]);
        ls.l[7] = forged;
        ls.n++;
        write_lines(state, &ls);
        is_int(verify(state, NULL, NULL, msg, sizeof msg), -EBADMSG, "inserted record caught");
        ok(starts(msg, "seq 9: seq gap") && strstr(msg, "inserted"), "... at seq 9: %s", msg);
        free_lines(&ls);
        rm_state(state);

        /* swap records 12 and 13 */
        state = mk_state();
        fill(state, 20);
        read_lines(state, &ls);
        char *t = ls.l[11];
        ls.l[11] = ls.l[12];
        ls.l[12] = t;
        write_lines(state, &ls);
        free_lines(&ls);
        is_int(verify(state, NULL, NULL, msg, sizeof msg), -EBADMSG, "swapped records caught");
        ok(starts(msg, "seq 12: seq gap or reorder"), "... at seq 12: %s", msg);
        rm_state(state);

        /* modify record 3 and rechain everything after it: prev/hash all consistent,
         * seq intact, but the checkpoint at seq 5 was signed over the old head */
        state = mk_state();
        fill(state, 20);
        read_lines(state, &ls);
        memcpy(strstr(ls.l[2], "abcdefgh"), "rewrote!", 8);
        rechain(&ls, 2, NULL);
        write_lines(state, &ls);
        free_lines(&ls);
        is_int(verify(state, NULL, NULL, msg, sizeof msg), -EBADMSG, "rechained rewrite caught");
        ok(starts(msg, "seq 5: bad checkpoint signature") ||
                   starts(msg, "seq 5: checkpoint names a different head"),
           "... by the checkpoint at seq 5: %s", msg);
        rm_state(state);
}

static void test_truncate(void)
{
        char *state = mk_state(), msg[RF_ERROR_MSG_MAX], head[AUDIT_HEAD_MAX], hp[512];
        struct rf_error err = {0};
        struct lines ls;
        fill(state, 20);
        is_int(audit_head(state, head, sizeof head, &err), 0, "save the head");
        snprintf(hp, sizeof hp, "%s/head.json", state);
        FILE *f = fopen(hp, "we");
        fprintf(f, "%s\n", head);
        fclose(f);
        is_int(verify(state, hp, NULL, msg, sizeof msg), 0, "intact log reaches the saved head");

        read_lines(state, &ls);
        for (size_t i = 17; i < ls.n; i++)
                free(ls.l[i]);
        ls.n = 17;
        write_lines(state, &ls);
        free_lines(&ls);
        is_int(verify(state, NULL, NULL, msg, sizeof msg), 0,
               "truncated tail passes without a head (the chain alone cannot tell)");
        is_int(verify(state, hp, NULL, msg, sizeof msg), -EBADMSG,
               "truncation caught with the head");
        ok(starts(msg, "seq 18: truncated before seq 22"), "... %s", msg);

        /* a diverged log: same length, different content, rechained */
        rm_state(state);
        state = mk_state();
        fill(state, 20);
        is_int(audit_head(state, head, sizeof head, &err), 0, "head of a second log");
        snprintf(hp, sizeof hp, "%s/head.json", state);
        f = fopen(hp, "we");
        fprintf(f, "%s\n", head);
        fclose(f);
        read_lines(state, &ls);
        memcpy(strstr(ls.l[20], "abcdefgh"), "rewrote!", 8);
        rechain(&ls, 20, NULL);
        write_lines(state, &ls);
        free_lines(&ls);
        is_int(verify(state, hp, NULL, msg, sizeof msg), -EBADMSG, "diverged tail caught");
        ok(starts(msg, "seq 22:"), "... %s", msg);

        /* a head whose signature does not verify */
        char *s = strstr(head, "\"sig\":\"") + 7;
        s[0] = s[0] == 'a' ? 'b' : 'a';
        f = fopen(hp, "we");
        fprintf(f, "%s\n", head);
        fclose(f);
        is_int(verify(state, hp, NULL, msg, sizeof msg), -EBADMSG, "forged head refused");
        ok(starts(msg, "head: bad signature"), "... %s", msg);
        rm_state(state);
}

static void test_key_replaced(void)
{
        char *state = mk_state(), msg[RF_ERROR_MSG_MAX], pub[512], pin[512], cmd[1200];
        struct lines ls;
        fill(state, 20);
        snprintf(pub, sizeof pub, "%s/audit/key.pub", state);
        snprintf(pin, sizeof pin, "%s/pinned.pub", state);
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", pub, pin);
        ok(system(cmd) == 0, "pin the public key");
        is_int(verify(state, NULL, pin, msg, sizeof msg), 0, "verifies with the pinned key");

        /* the attacker rewrites record 3, rechains, replaces the key and re-signs */
        unsigned char pk[32], sk[64];
        char hex[65];
        crypto_sign_keypair(pk, sk);
        read_lines(state, &ls);
        memcpy(strstr(ls.l[2], "abcdefgh"), "rewrote!", 8);
        rechain(&ls, 2, sk);
        write_lines(state, &ls);
        free_lines(&ls);
        char kp[512];
        snprintf(kp, sizeof kp, "%s/audit/key", state);
        FILE *f = fopen(kp, "we");
        fwrite(sk, 1, 64, f);
        fclose(f);
        sodium_bin2hex(hex, sizeof hex, pk, 32);
        f = fopen(pub, "we");
        fprintf(f, "%s\n", hex);
        fclose(f);

        is_int(verify(state, NULL, NULL, msg, sizeof msg), 0,
               "re-signed forgery passes without a pinned key (the state dir's key proves "
               "nothing)");
        is_int(verify(state, NULL, pin, msg, sizeof msg), -EBADMSG,
               "replaced key caught with the pin");
        ok(starts(msg, "seq 5: key replaced"), "... %s", msg);
        rm_state(state);
}

static void test_segments(void)
{
        char *state = mk_state(), msg[RF_ERROR_MSG_MAX], p[512];
        struct audit_log *log = NULL;
        struct rf_error err = {0};
        is_int(audit_open(state, &log, &err), 0, "open");
        audit_set_segment_max(log, 1000);
        for (int i = 0; i < 30; i++)
                if (audit_append(log, "r", "seg.test", NULL, 0, false, &err) < 0)
                        break;
        audit_close(log);
        /* a second handle continues the chain in the newest segment */
        is_int(audit_open(state, &log, &err), 0, "reopen");
        audit_set_segment_max(log, 1000);
        is_int((int)audit_append(log, "r", "seg.test", NULL, 0, true, &err), 31, "seq continues");
        audit_close(log);
        seg_path(state, 4, p, sizeof p);
        struct stat st;
        ok(stat(p, &st) == 0, "rolled over into 4+ segments");
        uint64_t n = 0;
        is_int(verify_n(state, NULL, NULL, &n, &err), 0, "segmented log verifies (%s)", err.msg);
        is_int((int)n, 31, "31 records across segments");
        seg_path(state, 2, p, sizeof p);
        unlink(p);
        is_int(verify(state, NULL, NULL, msg, sizeof msg), -EBADMSG, "deleted segment caught");
        ok(strstr(msg, "segment 000002 is missing") != NULL, "... %s", msg);
        rm_state(state);
}

/* Fork `n` writers of the log at `state`, writer(log, k) in child k: the
 * number that failed (an exit other than 0). */
static int writers(const char *state, int n, int (*writer)(struct audit_log *l, int k))
{
        pid_t kids[8];
        for (int k = 0; k < n && k < 8; k++) {
                kids[k] = fork();
                if (kids[k] == 0) {
                        struct audit_log *l = NULL;
                        struct rf_error e = {0};
                        if (audit_open(state, &l, &e) < 0)
                                _exit(1);
                        int r = writer(l, k);
                        _exit(r ? r : audit_flush(l) < 0 ? 3 : 0);
                }
        }
        int bad = 0;
        for (int k = 0; k < n && k < 8; k++) {
                int st = 0;
                waitpid(kids[k], &st, 0);
                bad += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        }
        return bad;
}

/* 200 appends, every 50th durable. */
static int mp_writer(struct audit_log *l, int k)
{
        struct rf_error e = {0};
        audit_set_segment_max(l, 64 * 1024);
        for (int i = 0; i < 200; i++) {
                struct audit_field f = {.key = "child", .type = AUDIT_INT, .i = k};
                if (audit_append(l, "run-mp", "mp.event", &f, 1, i % 50 == 0, &e) < 0)
                        return 2;
        }
        return 0;
}

/* 20 batches of 10 appends, each under one hold. */
static int hb_writer(struct audit_log *l, int k)
{
        struct rf_error e = {0};
        audit_set_segment_max(l, 16 * 1024);
        for (int i = 0; i < 20; i++) {
                if (audit_hold(l, &e) < 0)
                        return 2;
                for (int j = 0; j < 10; j++) {
                        struct audit_field f = {.key = "child", .type = AUDIT_INT, .i = k};
                        if (audit_append(l, "run-hb", "hb.event", &f, 1, false, &e) < 0)
                                return 4;
                }
                audit_release(l);
        }
        return 0;
}

static void test_multiprocess(void)
{
        char *state = mk_state();
        struct rf_error err = {0};
        struct audit_log *log = NULL;
        is_int(audit_open(state, &log, &err), 0, "create the log before forking");
        audit_close(log);
        int bad = writers(state, 8, mp_writer);
        is_int(bad, 0, "8 writers x 200 appends succeeded");
        uint64_t n = 0;
        is_int(verify_n(state, NULL, NULL, &n, &err), 0, "shared chain verifies (%s)", err.msg);
        ok(n >= 1600, "at least 1600 records (%llu)", (unsigned long long)n);
        rm_state(state);
}

static void test_refusals(void)
{
        char *state = mk_state(), p[512];
        struct audit_log *log = NULL;
        struct rf_error err = {0};
        struct stat st0, st1;
        is_int(audit_open(state, &log, &err), 0, "open");
        is_int((int)audit_append(log, "r", "x.ok", NULL, 0, true, &err), 1, "first record");
        seg_path(state, 1, p, sizeof p);
        stat(p, &st0);
        struct audit_field sec[] = {
                {.key = "name", .type = AUDIT_STR, .s = "GITHUB_TOKEN"},
                {.key = "value", .type = AUDIT_STR, .s = "ghp_secret", .flags = AUDIT_F_SECRET},
        };
        is_int((int)audit_append(log, "r", "secret.grant", sec, 2, true, &err), -EPERM,
               "secret field refused");
        struct audit_field dup[] = {{.key = "seq", .type = AUDIT_UINT, .u = 9}};
        is_int((int)audit_append(log, "r", "x.dup", dup, 1, true, &err), -EINVAL,
               "reserved key refused");
        struct audit_field badkey[] = {{.key = "Bad Key", .type = AUDIT_BOOL, .b = true}};
        is_int((int)audit_append(log, "r", "x.bad", badkey, 1, true, &err), -EINVAL,
               "bad key refused");
        static char big[AUDIT_STRING_MAX + 2];
        memset(big, 'a', sizeof big - 1);
        struct audit_field bigf[] = {{.key = "v", .type = AUDIT_STR, .s = big}};
        is_int((int)audit_append(log, "r", "x.big", bigf, 1, true, &err), -E2BIG,
               "over-long string refused");
        stat(p, &st1);
        is_int((int)st1.st_size, (int)st0.st_size, "nothing written by refused records");

        /* hostile strings: escaped, the line stays one valid record */
        struct audit_field h[] = {
                {.key = "s", .type = AUDIT_STR, .s = "a\"b\\c\nd\x01\x7f\xff\xc3(e"},
                {.key = "raw", .type = AUDIT_RAW, .s = "{\"a\":[1,2]}"},
                {.key = "neg", .type = AUDIT_INT, .i = -5},
        };
        is_int((int)audit_append(log, "r\n", "x.esc", h, 3, true, &err), 2,
               "hostile strings logged");
        struct audit_field badraw[] = {{.key = "raw", .type = AUDIT_RAW, .s = "{\"a\":"}};
        is_int((int)audit_append(log, "r", "x.raw", badraw, 1, true, &err), -EINVAL,
               "malformed raw JSON refused");
        audit_close(log);
        struct lines ls;
        read_lines(state, &ls);
        is_int((int)ls.n, 2, "two lines");
        ok(ls.n == 2 &&
                   strstr(ls.l[1], "\"s\":\"a\\\"b\\\\c\\u000ad\\u0001\\u007f\\ufffd\\ufffd(e\""),
           "escaped: %s", ls.n == 2 ? ls.l[1] : "");
        free_lines(&ls);
        uint64_t n;
        is_int(verify_n(state, NULL, NULL, &n, &err), 0, "log with escapes verifies");
        rm_state(state);
}

static void test_parse(void)
{
        struct audit_record rec;
        struct rf_error err = {0};
        char line[512], hex[65];
        const char *body =
                "{\"event\":\"e\",\"prev\":\"000000000000000000000000000000000000000000"
                "0000000000000000000000\",\"run\":\"\",\"seq\":1,\"ts\":5,\"version\":1}";
        size_t bl = strlen(body);
        memcpy(line, body, bl - 1);
        unsigned char h[32];
        crypto_hash_sha256(h, (const unsigned char *)body, bl);
        sodium_bin2hex(hex, sizeof hex, h, 32);
        snprintf(line + bl - 1, sizeof line - bl + 1, ",\"hash\":\"%s\"}", hex);
        is_int(audit_record_parse(line, strlen(line), &rec, &err), 0, "minimal record (%s)",
               err.msg);
        char got[65];
        is_int(audit_record_hash(line, strlen(line), got), 0, "hash computed");
        is_str(got, hex, "hash = sha256 of the line without the hash member");

        const char *bad[] = {
                "[]",
                "{\"event\":\"e\"}",
                "{\"version\":1,\"event\":\"e\"}",
                "",
        };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                ok(audit_record_parse(bad[i], strlen(bad[i]), &rec, &err) < 0, "rejects %s",
                   bad[i]);
        char v2[512];
        snprintf(v2, sizeof v2, "%s", line);
        *strstr(v2, "\"version\":1") = '\0';
        ok(audit_record_parse(v2, strlen(v2), &rec, &err) < 0, "rejects a cut record");
        snprintf(v2, sizeof v2, "%s ", line);
        ok(audit_record_parse(v2, strlen(v2), &rec, &err) < 0, "rejects trailing bytes");
        snprintf(v2, sizeof v2, "%s", line);
        memcpy(strstr(v2, "\"version\":1"), "\"version\":2", 11);
        ok(audit_record_parse(v2, strlen(v2), &rec, &err) < 0, "rejects version 2");
        snprintf(v2, sizeof v2, "%s", line);
        memcpy(strstr(v2, "\"run\""), "\"aaa\"", 5);
        ok(audit_record_parse(v2, strlen(v2), &rec, &err) < 0, "rejects unsorted / missing run");
}

/* A full disk: a 256K tmpfs in a private mount namespace of a child. */
static void test_enospc(void)
{
        if (geteuid() != 0) {
                ok(true, "# SKIP full-disk case needs root for a private tmpfs");
                return;
        }
        char *dir = mk_state();
        pid_t pid = fork();
        if (pid == 0) {
                if (unshare(CLONE_NEWNS) < 0 ||
                    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                        _exit(77);
                if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=256k,mode=0700") < 0)
                        _exit(77);
                char state[600], filler[700];
                snprintf(state, sizeof state, "%s/state", dir);
                struct audit_log *log = NULL;
                struct rf_error e = {0};
                if (audit_open(state, &log, &e) < 0 ||
                    audit_append(log, "r", "before.full", NULL, 0, true, &e) != 1)
                        _exit(3);
                snprintf(filler, sizeof filler, "%s/filler", dir);
                int fd = open(filler, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
                static char block[4096];
                while (write(fd, block, sizeof block) > 0)
                        ;
                while (write(fd, block, 1) > 0)
                        ;
                close(fd);
                int64_t r = 0;
                for (int i = 0; i < 64 && r >= 0;
                     i++) /* the segment's last page may still have room */
                        r = audit_append(log, "r", "after.full", NULL, 0, true, &e);
                audit_close(log);
                if (r != -ENOSPC)
                        _exit(4);
                if (audit_verify(state, NULL, NULL, NULL, &e) < 0)
                        _exit(5);
                _exit(0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 100;
        if (code == 77)
                ok(true, "# SKIP no private mount namespace here");
        else
                is_int(code, 0, "full tmpfs: append fails with -ENOSPC, the log still verifies");
        rm_state(dir);
}

/* ---- reading backwards --------------------------------------------------- */

struct rlines {
        char **v;
        size_t n;
        size_t stop_after; /* 0: read all */
};

static int rcollect(const char *line, size_t len, void *ctx)
{
        struct rlines *l = ctx;
        char **v = realloc(l->v, (l->n + 1) * sizeof *v);
        if (!v || strlen(line) != len)
                return -ENOMEM;
        l->v = v;
        l->v[l->n++] = strdup(line);
        return l->stop_after && l->n == l->stop_after ? 7 : 0;
}

static void free_rlines(struct rlines *l)
{
        for (size_t i = 0; i < l->n; i++)
                free(l->v[i]);
        free(l->v);
}

/* Records of mixed sizes (up to ~40 KiB, so lines straddle the 64 KiB
 * chunks), over several segments: newest first is exactly oldest first
 * reversed, and a callback's stop value comes back. */
static void test_reverse(void)
{
        char *state = mk_state();
        struct audit_log *log = NULL;
        struct rf_error err = {0};
        static char big[4001];

        memset(big, 'b', sizeof big - 1);
        if (audit_open(state, &log, &err) < 0) {
                diag("open: %s", err.msg);
                exit(1);
        }
        audit_set_segment_max(log, 150 * 1024);
        for (int i = 1; i <= 120; i++) {
                struct audit_field f[12];
                size_t n = 0;
                f[n++] = (struct audit_field){.key = "i", .type = AUDIT_INT, .i = i};
                for (int k = 0; k < (i * 7) % 11; k++) {
                        static const char *const keys[] = {"a", "b", "c", "d", "e",
                                                           "f", "g", "h", "j", "k"};
                        f[n++] = (struct audit_field){.key = keys[k], .type = AUDIT_STR, .s = big};
                }
                if (audit_append(log, "run-r", "test.reverse", f, n, false, &err) < 0) {
                        diag("append: %s", err.msg);
                        exit(1);
                }
        }
        audit_close(log);
        struct rlines fwd = {0}, rev = {0}, part = {.stop_after = 5};
        is_int(audit_foreach_line(state, rcollect, &fwd), 0, "forward read");
        is_int(audit_foreach_line_reverse(state, rcollect, &rev), 0, "reverse read");
        is_int(rev.n, fwd.n, "the same number of lines both ways (%zu)", fwd.n);
        bool same = rev.n == fwd.n;
        for (size_t i = 0; same && i < fwd.n; i++)
                same = !strcmp(fwd.v[i], rev.v[rev.n - 1 - i]);
        ok(same, "reverse is exactly forward reversed, across chunks and segments");
        is_int(audit_foreach_line_reverse(state, rcollect, &part), 7,
               "a callback's stop value is returned");
        ok(part.n == 5 && !strcmp(part.v[0], fwd.v[fwd.n - 1]), "... after the newest 5 lines");
        free_rlines(&fwd);
        free_rlines(&rev);
        free_rlines(&part);
        rm_state(state);
}

/* A new handle finds the chain's tail by reading the segment's last
 * record: a 4 KiB window first, the largest record's when that cut it.
 * Last records of 100 B, just under and over 4 KiB and of 20 KiB, each
 * followed by an append through a fresh handle: the chain verifies. */
static void test_tail_window(void)
{
        char *state = mk_state();
        struct rf_error err = {0};
        static char pad[4001];
        static const char *const keys[] = {"a", "b", "c", "d", "e", "f", "g", "h",
                                           "i", "j", "k", "l", "m", "n", "o", "p"};
        /* the padding of the record each fresh handle must read back, up
         * to a record near the largest (AUDIT_RECORD_MAX) */
        static const size_t sizes[] = {100, 3900, 4000, 8000, 20000, 64000};

        for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
                for (int round = 0; round < 2; round++) {
                        struct audit_log *log = NULL;
                        if (audit_open(state, &log, &err) < 0) {
                                diag("open: %s", err.msg);
                                exit(1);
                        }
                        struct audit_field f[ARRAY_SIZE(keys)];
                        size_t n = 0;
                        for (size_t left = round ? 5 : sizes[i]; left > 0 && n < ARRAY_SIZE(keys);
                             n++) {
                                size_t k = left > 4000 ? 4000 : left;
                                memset(pad, 'p', k);
                                pad[k] = '\0';
                                f[n] = (struct audit_field){
                                        .key = keys[n], .type = AUDIT_STR, .s = strdup(pad)};
                                left -= k;
                        }
                        int64_t r = audit_append(log, "run-t", "test.tail", f, n, true, &err);
                        if (round)
                                is_int(r < 0 ? (int)r : 0, 0,
                                       "a fresh handle appends after a record of %zu bytes "
                                       "of fields (%s)",
                                       sizes[i], err.msg);
                        for (size_t j = 0; j < n; j++)
                                free((char *)f[j].s);
                        audit_close(log);
                }
        }
        uint64_t n = 0;
        is_int(verify_n(state, NULL, NULL, &n, &err), 0, "the chain verifies (%s)", err.msg);
        is_int((int)n, (int)(2 * ARRAY_SIZE(sizes)), "every record is in it");
        rm_state(state);
}

/* The size of the only segment of `state`'s log. */
static off_t seg_size(const char *state)
{
        char path[512];
        struct stat st;
        snprintf(path, sizeof path, "%s/audit/audit-000001.jsonl", state);
        return stat(path, &st) < 0 ? -1 : st.st_size;
}

/* Append {pad_0 .. pad_n} (fields of `lens` bytes) through a fresh handle:
 * the appended line's length with its newline, or -errno. */
static off_t append_padded(const char *state, const size_t *lens, size_t n, struct rf_error *err)
{
        static const char *const keys[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i",
                                           "j", "k", "l", "m", "n", "o", "p", "q"};
        struct audit_field f[ARRAY_SIZE(keys)];
        struct audit_log *log = NULL;
        off_t before = seg_size(state);
        if (n > ARRAY_SIZE(keys) || audit_open(state, &log, err) < 0)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                char *v = malloc(lens[i] + 1);
                memset(v, 'p', lens[i]);
                v[lens[i]] = '\0';
                f[i] = (struct audit_field){.key = keys[i], .type = AUDIT_STR, .s = v};
        }
        int64_t r = audit_append(log, "run-m", "test.max", f, n, true, err);
        for (size_t i = 0; i < n; i++)
                free((char *)f[i].s);
        audit_close(log);
        return r < 0 ? (off_t)r : seg_size(state) - (before < 0 ? 0 : before);
}

/* A line of exactly the largest size (AUDIT_RECORD_MAX bytes and its
 * newline) is taken, and a fresh handle appends after it; one byte more
 * is refused. */
static void test_tail_largest(void)
{
        char *state = mk_state();
        struct rf_error err = {0};
        size_t lens[17];
        for (size_t i = 0; i < 16; i++)
                lens[i] = 4000;
        lens[16] = 100;
        off_t first = append_padded(state, lens, 17, &err); /* seq 1: measures the overhead */
        ok(first > 0, "a record of 64,100 bytes of fields is taken (%s)", err.msg);
        lens[16] += (size_t)(AUDIT_RECORD_MAX + 1 - first);
        off_t big = append_padded(state, lens, 17, &err); /* seq 2: the same digits */
        is_int((int)big, AUDIT_RECORD_MAX + 1, "a line of exactly the largest size (%s)", err.msg);
        size_t small[1] = {5};
        is_int((int)append_padded(state, small, 1, &err) > 0, 1,
               "a fresh handle appends after it (%s)", err.msg);
        uint64_t n = 0;
        is_int(verify_n(state, NULL, NULL, &n, &err), 0, "the chain verifies (%s)", err.msg);
        lens[16] += 1;
        is_int((int)append_padded(state, lens, 17, &err), -E2BIG, "one byte more is refused");
        rm_state(state);
}

/* A run-end checkpoint joins the group commit: appended, not synced by
 * itself; audit_writeback starts the write without making it durable;
 * audit_flush does. */
static void test_checkpoint_commit(void)
{
        char *state = mk_state();
        struct audit_log *log = NULL;
        struct rf_error err = {0};
        if (audit_open(state, &log, &err) < 0) {
                diag("open: %s", err.msg);
                exit(1);
        }
        is_int(audit_writeback(log), 0, "writeback of a clean log: nothing to do");
        struct audit_field f[] = {{.key = "i", .type = AUDIT_INT, .i = 1}};
        ok(audit_append(log, "run-1", "test.event", f, 1, true, &err) > 0, "a durable record (%s)",
           err.msg);
        is_int((int)audit_dirty_ms(log), 0, "... is synced");
        is_int(audit_checkpoint(log, &err), 0, "a checkpoint (%s)", err.msg);
        ok(audit_dirty_ms(log) > 0, "... is appended, not yet synced");
        is_int(audit_writeback(log), 0, "its writeback starts");
        ok(audit_dirty_ms(log) > 0, "... and makes nothing durable by itself");
        is_int(audit_flush(log), 0, "audit_flush syncs it");
        is_int((int)audit_dirty_ms(log), 0, "... and the log is clean");
        audit_close(log);
        uint64_t n = 0;
        is_int(verify_n(state, NULL, NULL, &n, &err), 0, "the chain verifies (%s)", err.msg);
        is_int((int)n, 2, "... with both records");
        rm_state(state);
}

/* Batches under audit_hold: the tail another handle moved before the
 * hold is seen (the first append looks), the appends of one hold need not
 * look again, a segment can roll over inside a hold, and the chain of
 * several processes batching at once verifies. */
static void test_hold_batches(void)
{
        char *state = mk_state();
        struct audit_log *a = NULL, *b = NULL;
        struct rf_error err = {0};
        if (audit_open(state, &a, &err) < 0 || audit_open(state, &b, &err) < 0) {
                diag("open: %s", err.msg);
                exit(1);
        }
        audit_set_segment_max(a, 600); /* a record is ~250 bytes: a roll-over every 2 */
        audit_set_segment_max(b, 600);
        is_int((int)audit_append(a, "r", "hold.test", NULL, 0, false, &err), 1, "A appends: 1");
        is_int((int)audit_append(b, "r", "hold.test", NULL, 0, false, &err), 2, "B appends: 2");
        is_int(audit_hold(a, &err), 0, "A holds the lock (%s)", err.msg);
        int64_t s3 = audit_append(a, "r", "hold.test", NULL, 0, false, &err);
        int64_t s4 = audit_append(a, "r", "hold.test", NULL, 0, false, &err);
        int64_t s5 = audit_append(a, "r", "hold.test", NULL, 0, false, &err);
        int64_t s6 = audit_append(a, "r", "hold.test", NULL, 0, false, &err);
        audit_release(a);
        ok(s3 == 3 && s4 == 4 && s5 == 5 && s6 == 6,
           "A's batch continues after B's record: 3..6 (%lld %lld %lld %lld)", (long long)s3,
           (long long)s4, (long long)s5, (long long)s6);
        is_int((int)audit_append(b, "r", "hold.test", NULL, 0, false, &err), 7,
               "B after the batch: 7");
        is_int(audit_hold(a, &err), 0, "A holds again");
        is_int((int)audit_append(a, "r", "hold.test", NULL, 0, false, &err), 8,
               "a new hold sees B's record: 8");
        audit_release(a);
        char p[512];
        struct stat st;
        seg_path(state, 3, p, sizeof p);
        ok(stat(p, &st) == 0, "segments rolled over, inside holds too");
        is_int(audit_flush(a), 0, "flush");
        audit_close(a);
        audit_close(b);
        uint64_t n = 0;
        is_int(verify_n(state, NULL, NULL, &n, &err), 0, "the chain verifies (%s)", err.msg);
        is_int((int)n, 8, "... with all 8 records");
        rm_state(state);

        /* several processes, each appending in batches of 10 */
        state = mk_state();
        if (audit_open(state, &a, &err) < 0)
                exit(1);
        audit_close(a);
        int bad = writers(state, 4, hb_writer);
        is_int(bad, 0, "4 writers x 20 batches of 10 succeeded");
        is_int(verify_n(state, NULL, NULL, &n, &err), 0, "their shared chain verifies (%s)",
               err.msg);
        is_int((int)n, 800, "... with all 800 records");
        rm_state(state);
}

/* audit_set_ticked: an append past the commit window leaves the commit to
 * the caller (it stays dirty); a durable one still syncs; untouched, the
 * append past the window syncs itself (the control). */
static void test_ticked(void)
{
        char *state = mk_state();
        struct audit_log *log = NULL;
        struct rf_error err = {0};
        if (audit_open(state, &log, &err) < 0)
                exit(1);
        const struct timespec past_window = {.tv_nsec = (AUDIT_COMMIT_WINDOW_MS + 2) * 1000000L};
        for (int ticked = 0; ticked < 2; ticked++) {
                audit_set_ticked(log, ticked);
                ok(audit_append(log, "r", "tick.test", NULL, 0, false, &err) > 0, "append (%s)",
                   err.msg);
                ok(audit_dirty_ms(log) > 0, "%s: the record waits for the window",
                   ticked ? "ticked" : "not ticked");
                nanosleep(&past_window, NULL);
                ok(audit_append(log, "r", "tick.test", NULL, 0, false, &err) > 0,
                   "append past the window");
                if (ticked)
                        ok(audit_dirty_ms(log) > 0, "ticked: it did not sync (the caller does)");
                else
                        is_int((int)audit_dirty_ms(log), 0, "not ticked: it synced itself");
                is_int(audit_flush(log), 0, "the caller's commit");
                is_int((int)audit_dirty_ms(log), 0, "... makes the log clean");
        }
        ok(audit_append(log, "r", "tick.test", NULL, 0, true, &err) > 0,
           "a durable append, ticked");
        is_int((int)audit_dirty_ms(log), 0, "... synced before it returned");
        audit_close(log);
        uint64_t n = 0;
        is_int(verify_n(state, NULL, NULL, &n, &err), 0, "the chain verifies (%s)", err.msg);
        is_int((int)n, 5, "... with its 5 records");
        rm_state(state);
}

int main(void)
{
        if (sodium_init() < 0)
                return 1;
        test_parse();
        test_clean();
        test_tamper();
        test_truncate();
        test_key_replaced();
        test_segments();
        test_multiprocess();
        test_refusals();
        test_enospc();
        test_reverse();
        test_tail_window();
        test_tail_largest();
        test_checkpoint_commit();
        test_hold_batches();
        test_ticked();
        return done();
}
