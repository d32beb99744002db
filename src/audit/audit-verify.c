/*
 * audit-verify.c — checking a state dir's audit log end to end.
 *
 * Walks the segments in order and, for every line, re-checks what the
 * writer promised: a strict canonical record (audit_record_parse), seq =
 * previous + 1, prev = previous hash, hash = SHA-256 of the exact bytes,
 * and for `log.checkpoint` records that head_seq/head_hash name the record
 * before and that the Ed25519 signature verifies (with the pinned key when
 * one is given). Nothing is re-serialised. The first failure ends the walk
 * with -EBADMSG and "seq N: why".
 *
 * What each check catches: a modified byte changes the hash (or breaks the
 * parse); a deleted record leaves a seq gap; an inserted or reordered
 * record breaks seq or prev; a truncated tail is invisible to the chain
 * alone, which is why a saved head is compared; a forger who rewrites
 * the whole chain must re-sign the checkpoints, which only a pinned key
 * exposes.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit-internal.h"

struct walk {
        uint64_t seq; /* last good record, 0 before the first */
        char hash[65];
        const unsigned char *pin; /* pinned public key or NULL */
        uint64_t want_seq;        /* saved head's seq, 0 if none */
        char want_hash[65];
        bool head_seen;
        uint64_t n_checkpoints, checkpoint_seq; /* signed checkpoints seen, the last one's seq */
};

/* Read a small file (≤ max bytes) whole; NUL-terminated. */
static int read_small(const char *path, char *buf, size_t max, size_t *len, struct rf_error *err)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return rf_error_set(err, negative_errno(), "open %s: %m", path);
        ssize_t k = RETRY_EINTR(read(fd, buf, max));
        if (k < 0)
                return rf_error_set(err, negative_errno(), "read %s: %m", path);
        if ((size_t)k == max)
                return rf_error_set(err, -EBADMSG, "%s: too large", path);
        buf[k] = '\0';
        *len = (size_t)k;
        return 0;
}

static bool hex_to_bin(const char *hex, unsigned char *bin, size_t n)
{
        size_t got = 0;
        return audit_is_hex(hex, 2 * n) &&
               sodium_hex2bin(bin, n, hex, 2 * n, NULL, &got, NULL) == 0 && got == n;
}

static bool sig_ok(uint64_t seq, const char *hash, const char *sig_hex, const unsigned char *pk)
{
        unsigned char sig[crypto_sign_BYTES];
        char msg[128];
        int k = audit_sig_message(seq, hash, msg, sizeof msg);
        return k > 0 && hex_to_bin(sig_hex, sig, sizeof sig) &&
               crypto_sign_verify_detached(sig, (const unsigned char *)msg, (size_t)k, pk) == 0;
}

static const char *str_member(const struct json_node *o, const char *k)
{
        const struct json_node *n = json_object_get(o, k);
        return n && n->type == JSON_STRING ? n->str : NULL;
}

static int check_checkpoint(const struct walk *w, uint64_t seq, const struct json_node *t,
                            struct rf_error *err)
{
        const struct json_node *hs = json_object_get(t, "head_seq");
        const char *hh = str_member(t, "head_hash"), *key = str_member(t, "key"),
                   *sig = str_member(t, "sig");
        uint64_t head_seq;
        unsigned char pk[crypto_sign_PUBLICKEYBYTES];
        if (!hs || json_number_uint64(hs, &head_seq) < 0 || !hh || !key || !sig ||
            !hex_to_bin(key, pk, sizeof pk))
                return rf_error_set(err, -EBADMSG, "seq %" PRIu64 ": malformed checkpoint", seq);
        if (head_seq != w->seq || strcmp(hh, w->hash) != 0)
                return rf_error_set(err, -EBADMSG,
                                    "seq %" PRIu64 ": checkpoint names a different head", seq);
        if (w->pin && sodium_memcmp(pk, w->pin, sizeof pk) != 0)
                return rf_error_set(err, -EBADMSG,
                                    "seq %" PRIu64 ": key replaced (checkpoint not signed by the "
                                    "pinned key)",
                                    seq);
        if (!sig_ok(head_seq, hh, sig, pk))
                return rf_error_set(err, -EBADMSG, "seq %" PRIu64 ": bad checkpoint signature",
                                    seq);
        return 0;
}

static int check_line(struct walk *w, const char *line, size_t len, struct rf_error *err)
{
        _cleanup_json_ struct json_node *tree = NULL;
        struct audit_record rec;
        struct rf_error perr = {0};
        uint64_t expect = w->seq + 1;
        char hex[65];

        bool checkpoint = len > 32 && memmem(line, len, "\"log.checkpoint\"", 16) != NULL;
        if (audit_record_parse_tree(line, len, &rec, checkpoint ? &tree : NULL, &perr) < 0)
                return rf_error_set(err, -EBADMSG, "seq %" PRIu64 ": modified (unreadable: %s)",
                                    expect, perr.msg);
        if (audit_record_hash(line, len, hex) < 0 || strcmp(hex, rec.hash) != 0)
                return rf_error_set(err, -EBADMSG, "seq %" PRIu64 ": modified (hash mismatch)",
                                    rec.seq);
        if (rec.seq != expect)
                return rf_error_set(err, -EBADMSG,
                                    "seq %" PRIu64 ": seq gap or reorder (found seq %" PRIu64
                                    "; deleted, inserted or reordered records)",
                                    expect, rec.seq);
        if (strcmp(rec.prev, w->hash) != 0)
                return rf_error_set(err, -EBADMSG,
                                    "seq %" PRIu64 ": prev mismatch (deleted, inserted or "
                                    "reordered records)",
                                    rec.seq);
        if (strcmp(rec.event, "log.checkpoint") == 0) {
                if (!tree) /* the event was escaped oddly: parse again for the fields */
                        return rf_error_set(err, -EBADMSG, "seq %" PRIu64 ": malformed checkpoint",
                                            rec.seq);
                int r = check_checkpoint(w, rec.seq, tree, err);
                if (r < 0)
                        return r;
                w->n_checkpoints++;
                w->checkpoint_seq = rec.seq;
        }
        w->seq = rec.seq;
        memcpy(w->hash, rec.hash, sizeof w->hash);
        if (w->want_seq && rec.seq == w->want_seq) {
                if (strcmp(rec.hash, w->want_hash) != 0)
                        return rf_error_set(err, -EBADMSG,
                                            "seq %" PRIu64 ": diverged from the saved head",
                                            rec.seq);
                w->head_seen = true;
        }
        return 0;
}

static int walk_segment(struct walk *w, int dirfd, unsigned segno, bool last, struct rf_error *err)
{
        char name[32];
        snprintf(name, sizeof name, AUDIT_SEGMENT_NAME, segno);
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return rf_error_set(err, negative_errno(), "open %s: %m", name);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return rf_error_set(err, negative_errno(), "stat %s: %m", name);
        if (st.st_size == 0)
                return 0;
        const char *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED)
                return rf_error_set(err, negative_errno(), "map %s: %m", name);
        (void)madvise((void *)map, (size_t)st.st_size, MADV_SEQUENTIAL);
        size_t size = (size_t)st.st_size, off = 0;
        int r = 0;
        while (off < size) {
                const char *nl = memchr(map + off, '\n', size - off);
                if (!nl) {
                        r = rf_error_set(err, -EBADMSG,
                                         "seq %" PRIu64 ": torn record at the end of %s",
                                         w->seq + 1, name);
                        break;
                }
                r = check_line(w, map + off, (size_t)(nl - (map + off)), err);
                if (r < 0)
                        break;
                off = (size_t)(nl - map) + 1;
        }
        (void)last;
        munmap((void *)map, size);
        return r;
}

int audit_verify(const char *state_dir, const char *head_file, const char *pubkey_file,
                 struct audit_verified *ret, struct rf_error *err)
{
        struct walk w = {0};
        unsigned char pin[crypto_sign_PUBLICKEYBYTES], head_pk[crypto_sign_PUBLICKEYBYTES];
        char buf[AUDIT_HEAD_MAX * 2];
        size_t len;
        int r;

        if (sodium_init() < 0)
                return rf_error_set(err, -EIO, "libsodium initialisation failed");
        memcpy(w.hash, audit_genesis_hash, sizeof w.hash);

        if (pubkey_file) {
                r = read_small(pubkey_file, buf, sizeof buf, &len, err);
                if (r < 0)
                        return r;
                while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
                        buf[--len] = '\0';
                if (!hex_to_bin(buf, pin, sizeof pin))
                        return rf_error_set(err, -EINVAL, "%s: not a hex Ed25519 public key",
                                            pubkey_file);
                w.pin = pin;
        }
        if (head_file) {
                _cleanup_json_ struct json_node *h = NULL;
                r = read_small(head_file, buf, sizeof buf, &len, err);
                if (r < 0)
                        return r;
                const struct json_node *sn;
                const char *hh, *key, *sig;
                if (json_parse(buf, len, &h, NULL) < 0 || h->type != JSON_OBJECT ||
                    !(sn = json_object_get(h, "seq")) || json_number_uint64(sn, &w.want_seq) < 0 ||
                    !(hh = str_member(h, "hash")) || !audit_is_hex(hh, 64) ||
                    !(key = str_member(h, "key")) || !hex_to_bin(key, head_pk, sizeof head_pk) ||
                    !(sig = str_member(h, "sig")))
                        return rf_error_set(err, -EINVAL, "%s: not an audit head", head_file);
                if (w.pin && sodium_memcmp(head_pk, w.pin, sizeof pin) != 0)
                        return rf_error_set(err, -EBADMSG,
                                            "head: key replaced (not signed by the pinned key)");
                if (!sig_ok(w.want_seq, hh, sig, head_pk))
                        return rf_error_set(err, -EBADMSG, "head: bad signature");
                memcpy(w.want_hash, hh, sizeof w.want_hash);
                if (w.want_seq == 0)
                        w.head_seen = true; /* an empty log's head */
        }

        _cleanup_close_ int dirfd = -1;
        {
                _cleanup_close_ int sfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (sfd < 0)
                        return rf_error_set(err, negative_errno(), "open %s: %m", state_dir);
                dirfd = openat(sfd, "audit", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                if (dirfd < 0)
                        return rf_error_set(err, negative_errno(), "open %s/audit: %m", state_dir);
        }
        /* a shared lock: writers finish their line first, so the tail is never torn */
        _cleanup_close_ int lockfd = openat(dirfd, "lock", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (lockfd >= 0)
                (void)RETRY_EINTR(flock(lockfd, LOCK_SH));

        _cleanup_free_ unsigned *segs = NULL;
        size_t n = 0;
        r = audit_list_segments(dirfd, &segs, &n);
        if (r < 0)
                return rf_error_set(err, r, "list audit segments: %s", strerror(-r));
        for (size_t i = 0; i < n; i++) {
                if (segs[i] != i + 1)
                        return rf_error_set(err, -EBADMSG,
                                            "seq %" PRIu64 ": segment %06zu is missing", w.seq + 1,
                                            i + 1);
                r = walk_segment(&w, dirfd, segs[i], i + 1 == n, err);
                if (r < 0)
                        return r;
        }
        if (w.want_seq && !w.head_seen)
                return rf_error_set(err, -EBADMSG,
                                    "seq %" PRIu64 ": truncated before seq %" PRIu64
                                    " (log ends at seq %" PRIu64 ")",
                                    w.seq + 1, w.want_seq, w.seq);
        if (ret) {
                *ret = (struct audit_verified){.records = w.seq,
                                               .checkpoints = w.n_checkpoints,
                                               .checkpoint_seq = w.checkpoint_seq,
                                               .head_seq = head_file ? w.want_seq : 0};
                memcpy(ret->hash, w.hash, sizeof ret->hash);
        }
        return 0;
}

uint64_t audit_log_fingerprint(const char *state_dir)
{
        char path[PATH_MAX];
        if ((size_t)snprintf(path, sizeof path, "%s/audit", state_dir) >= sizeof path)
                return 1;
        int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        uint64_t h = 1469598103934665603ULL; /* FNV-1a */
        if (!d) {                            /* no log (yet), or not readable */
                if (dfd >= 0)
                        close(dfd);
                return 1;
        }
#define MIX(p, n)                                                                                  \
        for (size_t i_ = 0; i_ < (n); i_++)                                                        \
        h = (h ^ ((const unsigned char *)(p))[i_]) * 1099511628211ULL
        for (struct dirent *e; (e = readdir(d));) {
                struct stat st;
                if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                int64_t v[7] = {(int64_t)st.st_ino,         (int64_t)st.st_size,
                                (int64_t)st.st_mtim.tv_sec, (int64_t)st.st_mtim.tv_nsec,
                                (int64_t)st.st_ctim.tv_sec, (int64_t)st.st_ctim.tv_nsec,
                                (int64_t)st.st_dev};
                MIX(e->d_name, strlen(e->d_name) + 1);
                MIX(v, sizeof v);
        }
#undef MIX
        closedir(d);
        return h ? h : 1;
}
