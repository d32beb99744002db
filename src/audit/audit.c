/*
 * audit.c — appending to the audit log: one chain shared by every writer of
 * a state dir, signed checkpoints, the signed head.
 *
 * Layout: STATE_DIR/audit/ holds `lock` (flock target), `key` (Ed25519
 * secret key, 64 bytes, 0600), `key.pub` (hex public key) and the segments
 * audit-000001.jsonl, audit-000002.jsonl, ... Only the newest segment is
 * ever appended to.
 *
 * Append protocol (several processes, one chain): validate everything that
 * can be refused without the lock (secret fields, keys, sizes) — so a
 * refused record leaves no trace —, then take flock(LOCK_EX) on `lock`, find
 * the newest segment (another writer may have rolled: it seals the old one
 * with mode 0400 first), read its last line (a line is at most
 * AUDIT_RECORD_MAX + 1 bytes with its newline) for the previous seq and
 * hash unless the segment is exactly as this handle last left it,
 * serialise the record
 * with seq + 1 and prev, and write it with a single write() to an O_APPEND
 * fd. A short or failed write is cut off again (ftruncate to the old size)
 * so the chain never ends in a torn line, and the error is returned: the
 * caller refuses the action it wanted to record. After a failed fdatasync
 * the handle is poisoned (every later call fails): the kernel may have
 * dropped the dirty pages, so nothing written through it can be trusted to
 * be on disk.
 *
 * Durability (group commit): a durable append is fdatasync'ed before
 * returning; a non-durable one marks the handle dirty and is synced by the
 * next durable append, by audit_flush/audit_close, or by the first append
 * that finds the oldest unsynced record older than AUDIT_COMMIT_WINDOW_MS.
 * There is no timer thread: a writer that goes idle calls audit_flush.
 *
 * Threat notes: the key and the segments live in one directory, so anyone
 * who can write there can rewrite the whole chain and re-sign it; the chain
 * alone only proves internal consistency. What makes tampering evident is a
 * head (audit_head) or public key kept somewhere else, passed to
 * audit_verify. The secret key is wiped (sodium_memzero) when the handle
 * is closed.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include "audit/audit-internal.h"

struct audit_log {
        int dirfd;  /* owned: STATE_DIR/audit */
        int lockfd; /* owned: STATE_DIR/audit/lock */
        int segfd;  /* owned: newest segment as last seen, O_RDWR|O_APPEND */
        unsigned seg;
        uint64_t segment_max;

        /* The chain's tail as this handle left it: valid while segfd has tail_size bytes. */
        bool tail_valid;
        off_t tail_size;
        uint64_t tail_seq;
        char tail_hash[65];

        int64_t dirty_since_ms; /* monotonic ms of the oldest unsynced record, 0 if clean */
        int64_t last_checkpoint_ms;
        int broken;    /* first fdatasync error; every later call fails with it */
        unsigned held; /* audit_hold depth: the lock is taken once for all of them */
        /* the tail was written by this handle since the lock was taken
         * (audit_hold): no other writer can have moved it, so the next
         * append under the same hold needs no fstat to know the segment */
        bool tail_ours;
        bool ticked;    /* audit_set_ticked: the window's commit is the caller's */
        bool dir_dirty; /* audit_open created names in dirfd not yet synced */

        /* the signing key, in a page of its own: locked, out of core dumps,
         * and wiped in any child the process forks (the run's egress
         * process is a fork of its supervisor) */
        unsigned char *sk;
        unsigned char pk[crypto_sign_PUBLICKEYBYTES];
        char pk_hex[2 * crypto_sign_PUBLICKEYBYTES + 1];

        char *line; /* owned: AUDIT_RECORD_MAX + 1 bytes, the record being built */
};

#define KEY_PAGE 4096

static int64_t now_ms(clockid_t clk)
{
        struct timespec ts;
        clock_gettime(clk, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int segment_name(unsigned n, char buf[32])
{
        snprintf(buf, 32, AUDIT_SEGMENT_NAME, n);
        return 0;
}

int audit_list_segments(int dirfd, unsigned **ret, size_t *n)
{
        _cleanup_free_ unsigned *v = NULL;
        size_t cnt = 0, cap = 0;
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        DIR *d = fdopendir(fd);
        if (!d) {
                safe_close(fd);
                return negative_errno();
        }
        struct dirent *de;
        int r = 0;
        while ((de = readdir(d))) {
                unsigned num;
                char tail[8], back[32];
                if (sscanf(de->d_name, "audit-%6u.jsonl%1s", &num, tail) != 1 || num == 0)
                        continue;
                segment_name(num, back);
                if (strcmp(back, de->d_name) != 0)
                        continue;
                if (cnt == cap) {
                        size_t nc = cap ? cap * 2 : 16;
                        unsigned *nv = reallocarray(v, nc, sizeof *nv);
                        if (!nv) {
                                r = -ENOMEM;
                                break;
                        }
                        v = nv;
                        cap = nc;
                }
                v[cnt++] = num;
        }
        closedir(d);
        if (r < 0)
                return r;
        for (size_t i = 1; i < cnt; i++) /* insertion sort: readdir order is arbitrary */
                for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
                        unsigned t = v[j];
                        v[j] = v[j - 1];
                        v[j - 1] = t;
                }
        *ret = TAKE_PTR(v);
        *n = cnt;
        return 0;
}

/* The last line of buf[0, want) (the last `want` bytes of a `size`-byte
 * segment, ending in a newline): 0 with its seq and hash, -EAGAIN if the
 * window may have cut it and a larger one could hold it (`last`: none
 * could), or -EBADMSG with err. */
static int tail_record(const char *buf, size_t want, off_t size, bool last, uint64_t *seq,
                       char hash[65], struct rf_error *err)
{
        if (want == 0 || buf[want - 1] != '\n')
                return rf_error_set(err, -EBADMSG, "audit log ends in a torn record");
        size_t start = want - 1;
        while (start > 0 && buf[start - 1] != '\n')
                start--;
        if (start == 0 && want < (size_t)size)
                return last ? rf_error_set(err, -EBADMSG, "last audit record too long") : -EAGAIN;
        struct audit_record rec;
        struct rf_error perr = {0};
        if (audit_record_parse(buf + start, want - 1 - start, &rec, &perr) < 0)
                return rf_error_set(err, -EBADMSG, "last audit record unreadable: %s", perr.msg);
        *seq = rec.seq;
        memcpy(hash, rec.hash, 65);
        return 0;
}

/*
 * The last record of segment `fd` (`size` bytes): its seq and hash. 0, or
 * -EBADMSG if the tail is not a whole valid record, or -errno. A record is
 * ~0.5 KiB: a 4 KiB window first, the largest record's only if it was cut
 * — that one holds a line of AUDIT_RECORD_MAX + 1 bytes (newline
 * included, as serialise allows) and the newline before it.
 */
static int read_last_record(int fd, off_t size, uint64_t *seq, char hash[65], struct rf_error *err)
{
        char small[4096];
        _cleanup_free_ char *big = NULL;
        for (int pass = 0;; pass++) {
                size_t cap = pass ? AUDIT_RECORD_MAX + 2 : sizeof small;
                size_t want = size > (off_t)cap ? cap : (size_t)size;
                char *buf = pass ? (big = malloc(want)) : small;
                if (!buf)
                        return -ENOMEM;
                ssize_t k = RETRY_EINTR(pread(fd, buf, want, size - (off_t)want));
                if (k < 0)
                        return rf_error_set(err, negative_errno(), "read audit log tail: %m");
                if ((size_t)k != want)
                        return rf_error_set(err, -EBADMSG, "audit log ends in a torn record");
                int r = tail_record(buf, want, size, pass > 0, seq, hash, err);
                if (r != -EAGAIN)
                        return r;
        }
}

/*
 * The chain's tail: the last record of the newest non-empty segment at or
 * below `seg` (a segment is empty when its first record could not be
 * written), or seq 0 and the genesis hash. `segfd` is segment `seg`.
 */
static int read_chain_tail(int dirfd, unsigned seg, int segfd, uint64_t *seq, char hash[65],
                           struct rf_error *err)
{
        for (; seg >= 1; seg--) {
                _cleanup_close_ int own = -1;
                int fd = segfd;
                if (fd < 0) {
                        char name[32];
                        segment_name(seg, name);
                        fd = own = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                        if (fd < 0)
                                return rf_error_set(err, negative_errno(), "open %s: %m", name);
                }
                segfd = -1;
                struct stat st;
                if (fstat(fd, &st) < 0)
                        return negative_errno();
                if (st.st_size > 0)
                        return read_last_record(fd, st.st_size, seq, hash, err);
        }
        *seq = 0;
        memcpy(hash, audit_genesis_hash, 65);
        return 0;
}

/* Open (O_RDWR|O_APPEND) segment n, creating it when `create`. */
static int open_segment(int dirfd, unsigned n, bool create)
{
        char name[32];
        segment_name(n, name);
        int fd = openat(dirfd, name,
                        O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0), 0600);
        return fd < 0 ? negative_errno() : fd;
}

/*
 * Under the lock: make log->segfd the newest segment. A writer that rolls
 * first seals the full segment (mode 0400), then creates the next, so a
 * segment whose owner-write bit is set is the newest and this costs no
 * syscall beyond the caller's fstat. A seal without a next segment (a
 * crash in between) is completed here. `st` is updated to the new segment.
 */
static int follow_newest_segment(struct audit_log *log, struct stat *st)
{
        while (!(st->st_mode & S_IWUSR)) {
                if (log->seg >= AUDIT_SEGMENT_NMAX)
                        return -EFBIG;
                int fd = open_segment(log->dirfd, log->seg + 1, true);
                if (fd < 0)
                        return fd;
                safe_close(log->segfd);
                log->segfd = fd;
                log->seg++;
                log->tail_valid = false;
                if (fstat(fd, st) < 0)
                        return negative_errno();
        }
        return 0;
}

/* ---- serialising a record ------------------------------------------------ */

struct wbuf {
        char *p;
        size_t len, cap;
        bool full;
};

static void put(struct wbuf *b, const char *s, size_t n)
{
        if (b->full || n > b->cap - b->len) {
                b->full = true;
                return;
        }
        memcpy(b->p + b->len, s, n);
        b->len += n;
}

static void puts_(struct wbuf *b, const char *s)
{
        put(b, s, strlen(s));
}

/* Bytes in the UTF-8 sequence starting at s (n bytes left), or 0 if it is not valid. */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
        size_t l = s[0] < 0x80             ? 1
                   : (s[0] & 0xe0) == 0xc0 ? 2
                   : (s[0] & 0xf0) == 0xe0 ? 3
                   : (s[0] & 0xf8) == 0xf0 ? 4
                                           : 0;
        if (l == 0 || l > n || !json_utf8_valid((const char *)s, l, NULL))
                return 0;
        return l;
}

/*
 * A JSON string literal: '"' and '\\' escaped, every control character
 * (C0, DEL) as \u00xx, invalid UTF-8 bytes replaced by U+FFFD — a run
 * cannot break a line, forge a member or make the record unreadable.
 */
static void put_string(struct wbuf *b, const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        size_t n = strlen(s);
        put(b, "\"", 1);
        for (size_t i = 0; i < n;) {
                unsigned char c = p[i];
                if (c == '"' || c == '\\') {
                        char e[2] = {'\\', (char)c};
                        put(b, e, 2);
                        i++;
                } else if (c < 0x20 || c == 0x7f) {
                        char e[8];
                        snprintf(e, sizeof e, "\\u%04x", c);
                        put(b, e, 6);
                        i++;
                } else if (c < 0x80) {
                        size_t j = i + 1;
                        while (j < n && p[j] >= 0x20 && p[j] < 0x7f && p[j] != '"' && p[j] != '\\')
                                j++;
                        put(b, s + i, j - i);
                        i = j;
                } else {
                        size_t l = utf8_seq_len(p + i, n - i);
                        if (l == 0) {
                                puts_(b, "\\ufffd");
                                i++;
                        } else {
                                put(b, s + i, l);
                                i += l;
                        }
                }
        }
        put(b, "\"", 1);
}

static void put_uint(struct wbuf *b, uint64_t v)
{
        char t[24];
        int k = snprintf(t, sizeof t, "%" PRIu64, v);
        put(b, t, (size_t)k);
}

static void put_int(struct wbuf *b, int64_t v)
{
        char t[24];
        int k = snprintf(t, sizeof t, "%" PRId64, v);
        put(b, t, (size_t)k);
}

enum member_kind { M_FIELD, M_VERSION, M_SEQ, M_TS, M_RUN, M_EVENT, M_PREV };

struct member {
        const char *key;
        enum member_kind kind;
        const struct audit_field *f;
};

static int member_cmp(const void *a, const void *b)
{
        return strcmp(((const struct member *)a)->key, ((const struct member *)b)->key);
}

static bool key_valid(const char *k)
{
        size_t n = strlen(k);
        if (n == 0 || n > AUDIT_KEY_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((k[i] >= 'a' && k[i] <= 'z') || (k[i] >= '0' && k[i] <= '9') || k[i] == '_' ||
                      k[i] == '.'))
                        return false;
        return true;
}

/*
 * Everything that can be refused before the lock: a refused record leaves
 * nothing behind. Fills `m` (AUDIT_FIELDS_MAX + 6 entries) sorted.
 */
static int validate(const char *run, const char *event, const struct audit_field *fields,
                    size_t n_fields, struct member *m, size_t *n_m, struct rf_error *err)
{
        if (n_fields > AUDIT_FIELDS_MAX)
                return rf_error_set(err, -E2BIG, "more than %d audit fields", AUDIT_FIELDS_MAX);
        if (strlen(run) > AUDIT_RUN_MAX)
                return rf_error_set(err, -EINVAL, "run id longer than %d bytes", AUDIT_RUN_MAX);
        if (strlen(event) > AUDIT_EVENT_MAX || !key_valid(event))
                return rf_error_set(err, -EINVAL, "bad audit event name");
        for (size_t i = 0; i < n_fields; i++) {
                const struct audit_field *f = &fields[i];
                if (f->flags & AUDIT_F_SECRET)
                        return rf_error_set(err, -EPERM, "audit field `%s` is a secret",
                                            key_valid(f->key) ? f->key : "?");
                if (!f->key || !key_valid(f->key))
                        return rf_error_set(err, -EINVAL, "bad audit field key");
                switch (f->type) {
                case AUDIT_STR:
                        if (!f->s)
                                return rf_error_set(err, -EINVAL, "field `%s`: no value", f->key);
                        if (strlen(f->s) > AUDIT_STRING_MAX)
                                return rf_error_set(err, -E2BIG, "field `%s` longer than %d bytes",
                                                    f->key, AUDIT_STRING_MAX);
                        break;
                case AUDIT_RAW: {
                        _cleanup_json_ struct json_node *t = NULL;
                        if (!f->s || json_parse(f->s, strlen(f->s), &t, NULL) < 0 ||
                            (t->type != JSON_OBJECT && t->type != JSON_ARRAY))
                                return rf_error_set(err, -EINVAL,
                                                    "field `%s`: not a JSON container", f->key);
                        break;
                }
                case AUDIT_INT:
                case AUDIT_UINT:
                case AUDIT_BOOL:
                        break;
                default:
                        return rf_error_set(err, -EINVAL, "field `%s`: bad type", f->key);
                }
                m[i] = (struct member){f->key, M_FIELD, f};
        }
        size_t n = n_fields;
        m[n++] = (struct member){"version", M_VERSION, NULL};
        m[n++] = (struct member){"seq", M_SEQ, NULL};
        m[n++] = (struct member){"ts", M_TS, NULL};
        m[n++] = (struct member){"run", M_RUN, NULL};
        m[n++] = (struct member){"event", M_EVENT, NULL};
        m[n++] = (struct member){"prev", M_PREV, NULL};
        qsort(m, n, sizeof *m, member_cmp);
        for (size_t i = 1; i < n; i++)
                if (strcmp(m[i - 1].key, m[i].key) == 0)
                        return rf_error_set(err, -EINVAL, "duplicate or reserved audit key `%s`",
                                            m[i].key);
        for (size_t i = 0; i < n; i++)
                if (strcmp(m[i].key, "hash") == 0)
                        return rf_error_set(err, -EINVAL, "reserved audit key `hash`");
        *n_m = n;
        return 0;
}

/* Serialise into log->line; returns the line length (newline included) or -E2BIG. */
static ssize_t serialise(struct audit_log *log, const struct member *m, size_t n, const char *run,
                         const char *event, uint64_t seq, int64_t ts, const char *prev)
{
        struct wbuf b = {log->line, 0, AUDIT_RECORD_MAX + 1, false};
        put(&b, "{", 1);
        for (size_t i = 0; i < n; i++) {
                if (i > 0)
                        put(&b, ",", 1);
                put_string(&b, m[i].key);
                put(&b, ":", 1);
                switch (m[i].kind) {
                case M_VERSION:
                        put_uint(&b, AUDIT_FORMAT_VERSION);
                        break;
                case M_SEQ:
                        put_uint(&b, seq);
                        break;
                case M_TS:
                        put_int(&b, ts);
                        break;
                case M_RUN:
                        put_string(&b, run);
                        break;
                case M_EVENT:
                        put_string(&b, event);
                        break;
                case M_PREV:
                        put_string(&b, prev);
                        break;
                case M_FIELD:
                default:
                        switch (m[i].f->type) {
                        case AUDIT_STR:
                                put_string(&b, m[i].f->s);
                                break;
                        case AUDIT_INT:
                                put_int(&b, m[i].f->i);
                                break;
                        case AUDIT_UINT:
                                put_uint(&b, m[i].f->u);
                                break;
                        case AUDIT_BOOL:
                                puts_(&b, m[i].f->b ? "true" : "false");
                                break;
                        case AUDIT_RAW:
                        default:
                                puts_(&b, m[i].f->s);
                                break;
                        }
                        break;
                }
        }
        put(&b, "}", 1);
        if (b.full)
                return -E2BIG;
        /* hash = SHA-256 of `{...}`; then replace the closing brace by the hash member */
        unsigned char h[crypto_hash_sha256_BYTES];
        char hex[65];
        crypto_hash_sha256(h, (const unsigned char *)b.p, b.len);
        sodium_bin2hex(hex, sizeof hex, h, sizeof h);
        b.len--;
        puts_(&b, ",\"hash\":\"");
        put(&b, hex, 64);
        puts_(&b, "\"}\n");
        if (b.full || b.len - 1 > AUDIT_RECORD_MAX)
                return -E2BIG;
        return (ssize_t)b.len;
}

/* ---- appending ------------------------------------------------------------ */

static int sync_segment(struct audit_log *log)
{
        if (log->broken)
                return log->broken;
        if (log->dirty_since_ms == 0)
                return 0;
        if (fdatasync(log->segfd) < 0) {
                log->broken = negative_errno();
                return log->broken;
        }
        log->dirty_since_ms = 0;
        return 0;
}

/*
 * Under the lock: the newest segment's size in *size (size may be NULL), and the chain's tail
 * (log->tail_*) as that segment ends, read again only when another writer
 * moved it. Inside a hold, after this handle's own append, none can have
 * (every writer appends under the lock): no stat then. 0 or -errno (err).
 */
static int tail_locked(struct audit_log *log, off_t *size, struct rf_error *err)
{
        if (log->held && log->tail_ours && log->tail_valid) {
                if (size)
                        *size = log->tail_size;
                return 0;
        }
        struct stat st;
        if (fstat(log->segfd, &st) < 0)
                return rf_error_set(err, negative_errno(), "stat audit segment: %m");
        int r = follow_newest_segment(log, &st);
        if (r < 0)
                return rf_error_set(err, r, "audit segment lookup: %s", strerror(-r));
        if (!log->tail_valid || st.st_size != log->tail_size) {
                r = read_chain_tail(log->dirfd, log->seg, log->segfd, &log->tail_seq,
                                    log->tail_hash, err);
                if (r < 0)
                        return r;
                log->tail_size = st.st_size;
                log->tail_valid = true;
        }
        if (size)
                *size = st.st_size;
        return 0;
}

/* Under the lock: append one record (already validated). Returns its seq or -errno. */
static int64_t append_locked(struct audit_log *log, const struct member *m, size_t n,
                             const char *run, const char *event, bool durable, struct rf_error *err)
{
        int r;

        if (log->broken)
                return rf_error_set(err, log->broken, "audit log failed to sync earlier");
        off_t size;
        r = tail_locked(log, &size, err);
        if (r < 0)
                return r;
        log->tail_valid = false;
        log->tail_ours = false;

        ssize_t len = serialise(log, m, n, run, event, log->tail_seq + 1, now_ms(CLOCK_REALTIME),
                                log->tail_hash);
        if (len < 0)
                return rf_error_set(err, (int)len, "audit record longer than %d bytes",
                                    AUDIT_RECORD_MAX);

        if (size > 0 && (uint64_t)size + (uint64_t)len > log->segment_max) {
                if (log->seg >= AUDIT_SEGMENT_NMAX)
                        return rf_error_set(err, -EFBIG, "audit log has no segment numbers left");
                r = sync_segment(log);
                if (r < 0)
                        return rf_error_set(err, r, "sync audit segment: %s", strerror(-r));
                if (fchmod(log->segfd, 0400) < 0) /* seal: see follow_newest_segment */
                        return rf_error_set(err, negative_errno(), "seal audit segment: %m");
                int fd = open_segment(log->dirfd, log->seg + 1, true);
                if (fd < 0)
                        return rf_error_set(err, fd, "create audit segment: %s", strerror(-fd));
                if (fsync(log->dirfd) < 0) {
                        r = negative_errno();
                        safe_close(fd);
                        return rf_error_set(err, r, "sync audit dir: %m");
                }
                safe_close(log->segfd);
                log->segfd = fd;
                log->seg++;
                size = 0;
        }

        ssize_t k = RETRY_EINTR(write(log->segfd, log->line, (size_t)len));
        if (k != len) {
                r = k < 0 ? negative_errno() : -ENOSPC;
                /* never leave a torn line: cut back to the record boundary */
                if (k > 0 && ftruncate(log->segfd, size) < 0)
                        log->broken = -EIO;
                return rf_error_set(err, r, "write audit record: %s", strerror(-r));
        }
        int64_t mono = now_ms(CLOCK_MONOTONIC);
        if (log->dirty_since_ms == 0)
                log->dirty_since_ms = mono;
        if (durable || (!log->ticked && mono - log->dirty_since_ms >= AUDIT_COMMIT_WINDOW_MS)) {
                r = sync_segment(log);
                if (r < 0)
                        return rf_error_set(err, r, "sync audit record: %s", strerror(-r));
        }

        log->tail_seq++;
        memcpy(log->tail_hash, log->line + len - 67, 64); /* `<hex>"}\n` ends the line */
        log->tail_hash[64] = '\0';
        log->tail_size = size + len;
        log->tail_valid = true;
        log->tail_ours = log->held > 0;
        return (int64_t)log->tail_seq;
}

/* Under the lock: a signed log.checkpoint of the current tail. */
static int64_t checkpoint_locked(struct audit_log *log, bool durable, struct rf_error *err)
{
        int r = tail_locked(log, NULL, err);
        if (r < 0)
                return r;
        char msg[128], hash[65];
        unsigned char sig[crypto_sign_BYTES];
        char sig_hex[2 * crypto_sign_BYTES + 1];
        uint64_t seq = log->tail_seq;
        memcpy(hash, log->tail_hash, sizeof hash);
        int k = audit_sig_message(seq, hash, msg, sizeof msg);
        if (k < 0)
                return k;
        crypto_sign_detached(sig, NULL, (const unsigned char *)msg, (size_t)k, log->sk);
        sodium_bin2hex(sig_hex, sizeof sig_hex, sig, sizeof sig);

        struct audit_field f[] = {
                {.key = "head_seq", .type = AUDIT_UINT, .u = seq},
                {.key = "head_hash", .type = AUDIT_STR, .s = hash},
                {.key = "key", .type = AUDIT_STR, .s = log->pk_hex},
                {.key = "sig", .type = AUDIT_STR, .s = sig_hex},
        };
        struct member m[ARRAY_SIZE(f) + 6];
        size_t n;
        r = validate("", "log.checkpoint", f, ARRAY_SIZE(f), m, &n, err);
        if (r < 0)
                return r;
        int64_t s = append_locked(log, m, n, "", "log.checkpoint", durable, err);
        if (s > 0)
                log->last_checkpoint_ms = now_ms(CLOCK_MONOTONIC);
        return s;
}

static int lock_log(struct audit_log *log, struct rf_error *err)
{
        if (log->held)
                return 0; /* audit_hold has it */
        if (RETRY_EINTR(flock(log->lockfd, LOCK_EX)) < 0)
                return rf_error_set(err, negative_errno(), "lock audit log: %m");
        return 0;
}

static void unlock_log(struct audit_log *log)
{
        if (!log->held) {
                log->tail_ours = false; /* others may write once it is released */
                (void)flock(log->lockfd, LOCK_UN);
        }
}

int audit_hold(struct audit_log *log, struct rf_error *err)
{
        if (log->held == 0) {
                int r = lock_log(log, err);
                if (r < 0)
                        return r;
        }
        log->held++;
        return 0;
}

void audit_release(struct audit_log *log)
{
        if (log->held && --log->held == 0)
                unlock_log(log);
}

int64_t audit_append(struct audit_log *log, const char *run, const char *event,
                     const struct audit_field *fields, size_t n_fields, bool durable,
                     struct rf_error *err)
{
        struct member m[AUDIT_FIELDS_MAX + 6];
        size_t n;
        if (!run)
                run = "";
        if (!event)
                return rf_error_set(err, -EINVAL, "no audit event");
        int r = validate(run, event, fields, n_fields, m, &n, err);
        if (r < 0)
                return r;
        r = lock_log(log, err);
        if (r < 0)
                return r;
        int64_t seq = append_locked(log, m, n, run, event, durable, err);
        if (seq > 0 && (seq % AUDIT_CHECKPOINT_EVERY == 0 ||
                        now_ms(CLOCK_MONOTONIC) - log->last_checkpoint_ms >=
                                AUDIT_CHECKPOINT_SECONDS * 1000LL)) {
                int64_t c = checkpoint_locked(log, true, err);
                if (c < 0)
                        seq = c;
        }
        unlock_log(log);
        return seq;
}

int audit_checkpoint(struct audit_log *log, struct rf_error *err)
{
        int r = lock_log(log, err);
        if (r < 0)
                return r;
        int64_t s = checkpoint_locked(log, false, err);
        unlock_log(log);
        return s < 0 ? (int)s : 0;
}

int64_t audit_dirty_ms(const struct audit_log *log)
{
        return log->dirty_since_ms;
}

int audit_flush(struct audit_log *log)
{
        return sync_segment(log);
}

int audit_writeback(struct audit_log *log)
{
        if (log->broken)
                return log->broken;
        if (log->dirty_since_ms == 0)
                return 0;
        return sync_file_range(log->segfd, 0, 0, SYNC_FILE_RANGE_WRITE) < 0 ? negative_errno() : 0;
}

void audit_set_ticked(struct audit_log *log, bool ticked)
{
        log->ticked = ticked;
}

void audit_set_segment_max(struct audit_log *log, uint64_t bytes)
{
        log->segment_max = bytes ? bytes : 1;
}

/* ---- opening ---------------------------------------------------------------- */

/* Write `len` bytes to a new file `name` atomically (temp file + link/rename).
 * The file's data is synced; its directory entry is the caller's to sync
 * (audit_open syncs the directory once for everything it created). */
static int write_file_atomic(int dirfd, const char *name, const void *data, size_t len,
                             bool replace)
{
        char tmp[64];
        snprintf(tmp, sizeof tmp, ".%s.%d.tmp", name, (int)getpid());
        (void)unlinkat(dirfd, tmp, 0);
        _cleanup_close_ int fd =
                openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return negative_errno();
        int r = 0;
        if (RETRY_EINTR(write(fd, data, len)) != (ssize_t)len)
                r = errno ? negative_errno() : -ENOSPC;
        else if (fsync(fd) < 0)
                r = negative_errno();
        else if (replace ? renameat(dirfd, tmp, dirfd, name) < 0
                         : linkat(dirfd, tmp, dirfd, name, 0) < 0)
                r = negative_errno();
        (void)unlinkat(dirfd, tmp, 0);
        return r;
}

static int load_or_create_key(struct audit_log *log, struct rf_error *err)
{
        int r = audit_key_read(log->dirfd, log->sk, err);
        if (r == -ENOENT) {
                unsigned char pk[crypto_sign_PUBLICKEYBYTES];
                crypto_sign_keypair(pk, log->sk);
                r = write_file_atomic(log->dirfd, "key", log->sk, crypto_sign_SECRETKEYBYTES,
                                      false);
                log->dir_dirty |= r == 0;
                if (r == -EEXIST) /* another process won the race: use its key */
                        r = audit_key_read(log->dirfd, log->sk, err);
                else if (r < 0)
                        return rf_error_set(err, r, "create audit key: %s", strerror(-r));
        }
        if (r < 0)
                return r;
        crypto_sign_ed25519_sk_to_pk(log->pk, log->sk);
        sodium_bin2hex(log->pk_hex, sizeof log->pk_hex, log->pk, sizeof log->pk);

        /* key.pub is derived: (re)write it when missing or different */
        char line[sizeof log->pk_hex + 1], cur[sizeof line + 1];
        snprintf(line, sizeof line, "%s\n", log->pk_hex);
        _cleanup_close_ int fd = openat(log->dirfd, "key.pub", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        ssize_t k = fd < 0 ? -1 : RETRY_EINTR(read(fd, cur, sizeof cur));
        if (k != (ssize_t)strlen(line) || memcmp(cur, line, (size_t)k) != 0) {
                r = write_file_atomic(log->dirfd, "key.pub", line, strlen(line), true);
                log->dir_dirty |= r == 0;
                if (r < 0)
                        return rf_error_set(err, r, "write audit key.pub: %s", strerror(-r));
        }
        return 0;
}

static int open_audit_dir(const char *state_dir, bool create, struct rf_error *err)
{
        _cleanup_close_ int sfd = -1;
        if (create && mkdir(state_dir, 0700) < 0 && errno != EEXIST)
                return rf_error_set(err, negative_errno(), "create state dir %s: %m", state_dir);
        sfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (sfd < 0)
                return rf_error_set(err, negative_errno(), "open state dir %s: %m", state_dir);
        if (create && mkdirat(sfd, "audit", 0700) == 0) {
                /* made now: its name durable before anything in it is */
                if (fsync(sfd) < 0)
                        return rf_error_set(err, negative_errno(), "sync state dir %s: %m",
                                            state_dir);
        } else if (create && errno != EEXIST)
                return rf_error_set(err, negative_errno(), "create %s/audit: %m", state_dir);
        int fd = openat(sfd, "audit", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return rf_error_set(err, negative_errno(), "open %s/audit: %m", state_dir);
        return fd;
}

int audit_open(const char *state_dir, struct audit_log **ret, struct rf_error *err)
{
        if (sodium_init() < 0)
                return rf_error_set(err, -EIO, "libsodium initialisation failed");
        struct audit_log *log = calloc(1, sizeof *log);
        if (!log)
                return -ENOMEM;
        log->dirfd = log->lockfd = log->segfd = -1;
        log->segment_max = AUDIT_SEGMENT_MAX;
        log->last_checkpoint_ms = now_ms(CLOCK_MONOTONIC);
        int r = -ENOMEM;
        log->line = malloc(AUDIT_RECORD_MAX + 1);
        if (!log->line)
                goto fail;
        void *page =
                mmap(NULL, KEY_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (page == MAP_FAILED)
                goto fail;
        log->sk = page;
        if (madvise(page, KEY_PAGE, MADV_WIPEONFORK) < 0) {
                r = rf_error_set(err, negative_errno(), "protect the audit key: %m");
                goto fail;
        }
        (void)madvise(page, KEY_PAGE, MADV_DONTDUMP);
        (void)mlock(page, KEY_PAGE);
        r = log->dirfd = open_audit_dir(state_dir, true, err);
        if (r < 0)
                goto fail;
        log->lockfd = openat(log->dirfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (log->lockfd < 0) {
                r = rf_error_set(err, negative_errno(), "open audit lock: %m");
                goto fail;
        }
        r = lock_log(log, err);
        if (r < 0)
                goto fail;
        r = load_or_create_key(log, err);
        if (r >= 0) {
                _cleanup_free_ unsigned *segs = NULL;
                size_t n = 0;
                r = audit_list_segments(log->dirfd, &segs, &n);
                if (r < 0)
                        rf_error_set(err, r, "list audit segments: %s", strerror(-r));
                else {
                        log->seg = n ? segs[n - 1] : 1;
                        r = log->segfd = open_segment(log->dirfd, log->seg, n == 0);
                        if (r < 0)
                                rf_error_set(err, r, "open audit segment: %s", strerror(-r));
                        log->dir_dirty |= n == 0;
                }
        }
        /* one directory sync for the key, key.pub and the first segment
         * made here: a record is durable only with its segment's name, and
         * nothing is signed with a key whose name may still be lost (other
         * writers wait for the lock) */
        if (r >= 0 && log->dir_dirty && fsync(log->dirfd) < 0)
                r = rf_error_set(err, negative_errno(), "sync audit dir: %m");
        unlock_log(log);
        if (r < 0)
                goto fail;
        *ret = log;
        return 0;
fail:
        audit_close(log);
        return r;
}

struct audit_log *audit_close(struct audit_log *log)
{
        if (!log)
                return NULL;
        if (log->segfd >= 0)
                (void)sync_segment(log);
        safe_close(log->segfd);
        safe_close(log->lockfd);
        safe_close(log->dirfd);
        if (log->sk) {
                sodium_memzero(log->sk, crypto_sign_SECRETKEYBYTES);
                munmap(log->sk, KEY_PAGE);
        }
        free(log->line);
        free(log);
        return NULL;
}

/* ---- the signed head ------------------------------------------------------ */

int audit_head(const char *state_dir, char *buf, size_t len, struct rf_error *err)
{
        if (sodium_init() < 0)
                return rf_error_set(err, -EIO, "libsodium initialisation failed");
        _cleanup_close_ int dirfd = open_audit_dir(state_dir, false, err);
        if (dirfd < 0)
                return dirfd;
        _cleanup_close_ int lockfd = openat(dirfd, "lock", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (lockfd < 0)
                return rf_error_set(err, negative_errno(), "open audit lock: %m");
        if (RETRY_EINTR(flock(lockfd, LOCK_SH)) < 0)
                return rf_error_set(err, negative_errno(), "lock audit log: %m");

        unsigned char sk[crypto_sign_SECRETKEYBYTES], pk[crypto_sign_PUBLICKEYBYTES];
        _cleanup_free_ unsigned *segs = NULL;
        size_t n = 0;
        uint64_t seq = 0;
        char hash[65];
        memcpy(hash, audit_genesis_hash, sizeof hash);
        int r = audit_key_read(dirfd, sk, err);
        if (r == -ENOENT)
                r = rf_error_set(err, r, "no audit key");
        if (r >= 0)
                r = audit_list_segments(dirfd, &segs, &n);
        if (r >= 0 && n > 0)
                r = read_chain_tail(dirfd, segs[n - 1], -1, &seq, hash, err);
        if (r < 0) {
                sodium_memzero(sk, sizeof sk);
                return r;
        }

        char msg[128], pk_hex[65], fpr[65], sig_hex[2 * crypto_sign_BYTES + 1];
        unsigned char sig[crypto_sign_BYTES], h[crypto_hash_sha256_BYTES];
        int k = audit_sig_message(seq, hash, msg, sizeof msg);
        crypto_sign_detached(sig, NULL, (const unsigned char *)msg, (size_t)k, sk);
        crypto_sign_ed25519_sk_to_pk(pk, sk);
        sodium_memzero(sk, sizeof sk);
        crypto_hash_sha256(h, pk, sizeof pk);
        sodium_bin2hex(pk_hex, sizeof pk_hex, pk, sizeof pk);
        sodium_bin2hex(fpr, sizeof fpr, h, 8);
        sodium_bin2hex(sig_hex, sizeof sig_hex, sig, sizeof sig);
        k = snprintf(buf, len,
                     "{\"version\":%d,\"seq\":%" PRIu64 ",\"hash\":\"%s\",\"ts\":%" PRId64
                     ",\"key\":\"%s\",\"key_fpr\":\"%s\",\"sig\":\"%s\"}",
                     AUDIT_FORMAT_VERSION, seq, hash, now_ms(CLOCK_REALTIME), pk_hex, fpr, sig_hex);
        if (k < 0 || (size_t)k >= len)
                return rf_error_set(err, -ENOBUFS, "head buffer too small");
        return 0;
}

#define REVERSE_CHUNK (64 * 1024)
#define REVERSE_FIRST (8 * 1024) /* the first read: most scans stop within it */

/*
 * One segment, newest line first. buf holds a chunk read from before `pos`
 * followed by `carry`: the start of the line the previous (later) chunk
 * began in the middle of. Complete lines are handed out from the end; what
 * precedes the chunk's first newline becomes the next carry (or, at the
 * start of the file, the first line).
 */
static int reverse_segment(int fd, char *buf, audit_line_fn fn, void *ctx)
{
        struct stat st;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        off_t pos = st.st_size;
        size_t carry = 0;             /* bytes of the partial line, kept at buf + REVERSE_CHUNK */
        bool skip = false;            /* the partial line is over-long: drop it */
        size_t chunk = REVERSE_FIRST; /* doubles up to REVERSE_CHUNK */

        while (pos > 0) {
                size_t want = pos > (off_t)chunk ? chunk : (size_t)pos;
                chunk = chunk * 2 > REVERSE_CHUNK ? REVERSE_CHUNK : chunk * 2;
                pos -= (off_t)want;
                char *start = buf + REVERSE_CHUNK - want;
                ssize_t k = pread(fd, start, want, pos);
                if (k != (ssize_t)want)
                        return k < 0 ? negative_errno() : -EIO;
                char *end = buf + REVERSE_CHUNK + carry; /* one past the data */
                char *p = end;
                for (;;) {
                        char *nl = memrchr(start, '\n', (size_t)(p - start));
                        if (!nl)
                                break;
                        size_t len = (size_t)(p - nl - 1);
                        if (len > 0 && !skip && len <= AUDIT_RECORD_MAX) {
                                char save = nl[1 + len];
                                nl[1 + len] = '\0';
                                int r = fn(nl + 1, len, ctx);
                                nl[1 + len] = save;
                                if (r != 0)
                                        return r;
                        }
                        skip = false;
                        p = nl;
                }
                /* [start, p) is the beginning of a line that starts earlier */
                carry = (size_t)(p - start);
                if (carry > AUDIT_RECORD_MAX) {
                        skip = true;
                        carry = 0;
                }
                memmove(buf + REVERSE_CHUNK, start, carry);
        }
        if (carry > 0 && !skip) {
                char *l = buf + REVERSE_CHUNK;
                l[carry] = '\0';
                return fn(l, carry, ctx);
        }
        return 0;
}

/*
 * The audit dir of state_dir (*dfd) and its segment numbers, ascending.
 * 1 if there are any to read, 0 if there is no log yet, or -errno.
 */
static int open_segments(const char *state_dir, int *dfd, unsigned **segs, size_t *n)
{
        char path[4096];

        *segs = NULL;
        *n = 0;
        snprintf(path, sizeof path, "%s/audit", state_dir);
        *dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (*dfd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        int r = audit_list_segments(*dfd, segs, n);
        return r < 0 ? r : 1;
}

int audit_foreach_line_reverse(const char *state_dir, audit_line_fn fn, void *ctx)
{
        _cleanup_free_ unsigned *segs = NULL;
        _cleanup_close_ int dfd = -1;
        size_t n = 0;
        int r = open_segments(state_dir, &dfd, &segs, &n);

        if (r <= 0)
                return r;
        r = 0;
        /* a chunk, then room for a carried line of AUDIT_RECORD_MAX and a NUL */
        _cleanup_free_ char *buf = malloc(REVERSE_CHUNK + AUDIT_RECORD_MAX + 2);
        if (!buf)
                return -ENOMEM;
        for (size_t i = n; i-- > 0 && r == 0;) {
                char name[32];
                segment_name(segs[i], name);
                _cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0)
                        return negative_errno();
                r = reverse_segment(fd, buf, fn, ctx);
        }
        return r;
}

int audit_foreach_line(const char *state_dir, audit_line_fn fn, void *ctx)
{
        static char line[AUDIT_RECORD_MAX + 2];
        _cleanup_free_ unsigned *segs = NULL;
        _cleanup_close_ int dfd = -1;
        size_t n = 0;
        int r = open_segments(state_dir, &dfd, &segs, &n);

        if (r <= 0)
                return r;
        r = 0;
        for (size_t i = 0; i < n && r == 0; i++) {
                char name[32];
                segment_name(segs[i], name);
                int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                FILE *fp = fd >= 0 ? fdopen(fd, "r") : NULL;
                if (!fp) {
                        safe_close(fd);
                        return negative_errno();
                }
                while (r == 0 && fgets(line, sizeof line, fp)) {
                        size_t len = strlen(line);
                        if (len && line[len - 1] == '\n')
                                line[--len] = '\0';
                        r = fn(line, len, ctx);
                }
                fclose(fp);
        }
        return r;
}
