/*
 * test_termfilter.c — the run → terminal filter and the reply tracker
 * (supervisor/termfilter.c): every dropped class is dropped and every kept
 * class kept, next to each other in one stream; a stream split at every
 * byte boundary filters exactly as whole; unterminated and overlong
 * sequences stay bounded; UTF-8 whose continuation bytes look like C1
 * controls passes intact while lone C1 controls do not; queries are counted
 * and their replies, split too, answer them.
 */
#include <stdlib.h>
#include <string.h>

#include "supervisor/termfilter.h"
#include "tap.h"

#define OUT_MAX 8192

/* the filter's output for `in` fed in one piece */
static size_t filt(struct termfilter *f, const char *in, size_t n, char *out)
{
        return termfilter_output(f, in, n, out);
}

static bool out_is(const char *in, const char *want, bool track)
{
        struct termfilter f;
        char out[OUT_MAX];
        termfilter_init(&f, track);
        size_t n = filt(&f, in, strlen(in), out);
        bool same = n == strlen(want) && memcmp(out, want, n) == 0;
        if (!same) {
                diag("got %zu bytes:", n);
                for (size_t i = 0; i < n; i++)
                        printf("%s%02x", i ? " " : "# ", (unsigned char)out[i]);
                putchar('\n');
        }
        return same;
}

/* `in` with its bytes given one call at a time, and at every split into
 * two calls, gives the output of one call and the same pending count */
static bool split_same(const char *in, size_t len, bool track)
{
        struct termfilter whole, part;
        char a[OUT_MAX], b[OUT_MAX];
        termfilter_init(&whole, track);
        size_t na = filt(&whole, in, len, a);
        for (size_t cut = 0; cut <= len; cut++) {
                termfilter_init(&part, track);
                size_t nb = filt(&part, in, cut, b);
                nb += filt(&part, in + cut, len - cut, b + nb);
                if (nb != na || memcmp(a, b, na) ||
                    termfilter_pending(&part) != termfilter_pending(&whole)) {
                        diag("differs when cut at %zu", cut);
                        return false;
                }
        }
        termfilter_init(&part, track);
        size_t nb = 0;
        for (size_t i = 0; i < len; i++)
                nb += filt(&part, in + i, 1, b + nb);
        return nb == na && !memcmp(a, b, na);
}

static unsigned pending_after(const char *out_stream, const char *in_stream)
{
        struct termfilter f;
        char out[OUT_MAX];
        termfilter_init(&f, true);
        (void)filt(&f, out_stream, strlen(out_stream), out);
        termfilter_input(&f, in_stream, strlen(in_stream));
        return termfilter_pending(&f);
}

int main(void)
{
        /* ---- dropped: each next to kept text and SGR, so the test also
         * shows the surrounding output survives ---- */
        static const struct {
                const char *in, *what;
        } dropped[] = {
                {"\033]52;c;ZXZpbA==\a", "OSC 52 (clipboard) ending in BEL"},
                {"\033]52;c;ZXZpbA==\033\\", "OSC 52 ending in ST"},
                {"\033]52;c;?\a", "OSC 52 query (reads the clipboard)"},
                {"\033]0;pwned\a", "OSC 0 (icon and title)"},
                {"\033]1;pwned\a", "OSC 1 (icon)"},
                {"\033]2;pwned\033\\", "OSC 2 (title)"},
                {"\033]7;file://host/etc\a", "OSC 7 (cwd)"},
                {"\033]8;;https://evil.example/\033\\", "OSC 8 (hyperlink)"},
                {"\033]9;notify\a", "OSC 9 notification"},
                {"\033]777;notify;a;b\a", "OSC 777 notification"},
                {"\033]4;1;rgb:ff/00/00\a", "OSC 4 (palette set)"},
                {"\033]4;1;?\a", "OSC 4 query (untracked)"},
                {"\033]10;#ff0000\a", "OSC 10 set (not a query)"},
                {"\033]11;?;?\a", "OSC 11 with two queries"},
                {"\033]104\a", "OSC 104 (palette reset)"},
                {"\033]50;font\a", "OSC 50 (font)"},
                {"\033]1337;File=x\a", "OSC 1337 (iTerm2 file)"},
                {"\033P$qm\033\\", "DCS DECRQSS"},
                {"\033P+q544e\033\\", "DCS XTGETTCAP"},
                {"\033Ptmux;\033\033]52;c;eA==\a\033\\", "DCS tmux passthrough"},
                {"\033_Gf=100;AAAA\033\\", "APC (kitty graphics)"},
                {"\033^private\033\\", "PM"},
                {"\033Xsos\033\\", "SOS"},
                {"\033kwindow-name\033\\", "ESC k (screen/tmux window name)"},
                {"\x9d"
                 "52;c;ZXZpbA==\x9c",
                 "8-bit OSC 52 with 8-bit ST"},
                {"\x9d"
                 "2;t\a",
                 "8-bit OSC 2 ending in BEL"},
                {"\x90$qm\x9c", "8-bit DCS"},
                {"\x9f"
                 "apc\x9c",
                 "8-bit APC"},
                {"\x9e"
                 "pm\x9c",
                 "8-bit PM"},
                {"\x98sos\x9c", "8-bit SOS"},
                {"\x9b"
                 "21t",
                 "8-bit CSI 21 t"},
                {"\x85\x8d\x9a", "lone C1 controls (NEL, RI, DECID)"},
                {"\xc2\x9d"
                 "52;c;ZXZpbA==\xc2\x9c",
                 "OSC 52 in C1 encoded as UTF-8 (U+009D ... U+009C)"},
                {"\xc2\x9d"
                 "0;t\a",
                 "OSC 0 as U+009D ending in BEL"},
                {"\xc2\x9b"
                 "21t",
                 "CSI 21 t as U+009B"},
                {"\xc2\x90$qm\xc2\x9c", "DCS as U+0090"},
                {"\xc2\x9f"
                 "apc\x1b\\",
                 "APC as U+009F ending in ESC \\"},
                {"\xc2\x85\xc2\x9a", "NEL, DECID as U+0085, U+009A"},
                {"\xc2\x9b"
                 "31m",
                 "even an SGR as U+009B"},
                {"\033[21t", "CSI 21 t (title report)"},
                {"\033[20t", "CSI 20 t (icon label report)"},
                {"\033[22;0t", "CSI 22 t (title push)"},
                {"\033[23;0t", "CSI 23 t (title pop)"},
                {"\033[8;50;200t", "CSI 8 t (resize)"},
                {"\033[3;0;0t", "CSI 3 t (move)"},
                {"\033[2t", "CSI 2 t (iconify)"},
                {"\033[11t", "CSI 11 t (state report)"},
                {"\033[13t", "CSI 13 t (position report)"},
                {"\033[19t", "CSI 19 t (screen size report)"},
                {"\033[=c", "DA3"},
                {"\033[x", "DECREQTPARM"},
                {"\033[>q", "XTVERSION"},
                {"\033[?1;1;0S", "XTSMGRAPHICS"},
                {"\033[1;1;1;1#|", "XTREPORTSGR"},
                {"\033[1$u", "DECRQTSR"},
                {"\033[1$w", "DECRQPSR"},
                {"\033[1;1;1;1;1;1*y", "DECRQCRA (screen checksum)"},
                {"\033[1'|", "DECRQLP"},
                {"\033[?996n", "DSR 996 (colour scheme)"},
                {"\033[15n", "DSR 15"},
                {"\033Z", "DECID"},
                {"\033 G", "S8C1T"},
                {"\033\\", "a stray ST"},
                {"\033[1?2m", "a malformed CSI"},
                {"\033[31\xc3\xa9m", "a CSI with text inside"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(dropped); i++) {
                char in[512], want[64];
                snprintf(in, sizeof in, "a\033[1mb%sc\033[0md", dropped[i].in);
                snprintf(want, sizeof want, "a\033[1mbc\033[0md");
                ok(out_is(in, want, true), "dropped: %s; the text and SGR around it kept",
                   dropped[i].what);
                ok(split_same(in, strlen(in), true), "... the same when split anywhere");
        }

        /* ---- kept, byte for byte ---- */
        static const struct {
                const char *in, *what;
        } kept[] = {
                {"plain text\r\n\t\b\a", "text and C0 controls (BEL beeps)"},
                {"\033[0;1;31;48;2;10;20;30m", "SGR with truecolor"},
                {"\033[38:2::10:20:30m", "SGR with colon sub-parameters"},
                {"\033[H\033[2J\033[3J\033[10;20H\033[K\033[5A\033[?25l\033[?25h", "cursor and "
                                                                                   "erase"},
                {"\033[?1049h\033[?1049l", "alternate screen"},
                {"\033[?2004h\033[?2004l", "bracketed paste"},
                {"\033[?1000h\033[?1002h\033[?1006h\033[?1004h", "mouse and focus reporting"},
                {"\033[>1u\033[<u\033[=1;1u", "kitty keyboard push/pop/set"},
                {"\033[>4;2m\033[>4n", "xterm modifyOtherKeys"},
                {"\033[?2026h\033[?2026l", "synchronized output"},
                {"\033[1;24r\033[s\033[u\0337\0338", "scroll region, save/restore cursor"},
                {"\033(B\033(0\033)0\033#8\033%G", "charset designations, DECALN, UTF-8"},
                {"\033=\033>\033c\033M\033D\033E", "keypad modes, RIS, RI, IND, NEL"},
                {"\033[2 q\033[!p\033[\"p", "cursor style, soft reset"},
                {"\033[4 t", "CSI 4 SP t (not a window op)"},
                {"\033[>0t\033[>1T", "XTSMTITLE / XTRMTITLE (modes only)"},
                {"\xc2\xa0\xc2\xa9\xc2\xbf", "U+00A0..U+00BF (C2 A0..C2 BF) are text"},
                {"caf\xc3\xa9 \xe2\x9c\x93 \xe2\x9d\x8c \xf0\x9f\x98\x80 \xc4\x9d",
                 "UTF-8 with continuation bytes 0x80-0x9f (✓ ❌ 😀 ĝ)"},
                {"\xe2\x9d", "a character split at the end... (held)"},
        };
        for (size_t i = 0; i + 1 < ARRAY_SIZE(kept); i++)
                ok(out_is(kept[i].in, kept[i].in, true) &&
                           split_same(kept[i].in, strlen(kept[i].in), true),
                   "kept: %s (also split anywhere)", kept[i].what);
        ok(out_is("\xe2\x9d", "", true), "an incomplete character is held, not passed");
        ok(out_is("\xe2\x9d"
                  "A",
                  "\xe2"
                  "A",
                  true),
           "of a malformed character the bytes 0x80-0x9f are dropped (no C1 leaks as text)");
        ok(out_is("\xed\x9d\x80", "\xed\x9d\x80", true), "ED 9D 80 (U+D740) is text");
        ok(out_is("\xe0\x9d\x80", "\xe0", true),
           "E0 9D is overlong: the 0x9d is a lone 8-bit OSC, which takes what follows");
        ok(out_is("\xc3\x9b"
                  "31m",
                  "\xc3\x9b"
                  "31m",
                  true),
           "Û (C3 9B) is text, not a CSI");
        ok(out_is("x\x9b"
                  "31mY",
                  "xY", true),
           "a lone 8-bit CSI is dropped to its final byte, even an SGR");

        /* ---- queries: pass and are counted when tracked, dropped when not ---- */
        static const struct {
                const char *q, *reply, *what;
        } queries[] = {
                {"\033[c", "\033[?62;22c", "DA1"},
                {"\033[0c", "\033[?1;2c", "DA1 (0)"},
                {"\033[>c", "\033[>41;390;0c", "DA2"},
                {"\033[5n", "\033[0n", "DSR 5"},
                {"\033[6n", "\033[24;80R", "CPR"},
                {"\033[?6n", "\033[?24;80;1R", "DECXCPR"},
                {"\033[?2026$p", "\033[?2026;2$y", "DECRQM (DEC)"},
                {"\033[4$p", "\033[4;2$y", "DECRQM (ANSI)"},
                {"\033[?u", "\033[?0u", "kitty keyboard query"},
                {"\033[14t", "\033[4;600;800t", "CSI 14 t"},
                {"\033[16t", "\033[6;16;8t", "CSI 16 t"},
                {"\033[18t", "\033[8;24;80t", "CSI 18 t"},
                {"\033]11;?\a", "\033]11;rgb:1e1e/1e1e/1e1e\a", "OSC 11 ? (BEL)"},
                {"\033]10;?\033\\", "\033]10;rgb:ffff/ffff/ffff\033\\", "OSC 10 ? (ST)"},
                {"\033]12;?\a", "\033]12;rgb:0000/0000/0000\033\\", "OSC 12 ?"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(queries); i++) {
                struct termfilter f;
                char out[OUT_MAX];
                const char *q = queries[i].q;
                termfilter_init(&f, true);
                size_t n = filt(&f, q, strlen(q), out);
                ok(n == strlen(q) && !memcmp(out, q, n) && termfilter_pending(&f) == 1,
                   "query %s passes, one pending", queries[i].what);
                ok(split_same(q, strlen(q), true), "... also split anywhere");
                termfilter_input(&f, "ab", 2);
                is_int(termfilter_pending(&f), 1, "... typed keys do not answer it");
                termfilter_input(&f, queries[i].reply, strlen(queries[i].reply));
                is_int(termfilter_pending(&f), 0, "... its reply does");
                termfilter_init(&f, false);
                ok(filt(&f, q, strlen(q), out) == 0 && termfilter_pending(&f) == 0,
                   "... and is dropped when nobody reads replies");
        }
        /* a reply split byte by byte, among keys */
        {
                struct termfilter f;
                char out[OUT_MAX];
                const char *rep = "x\033[?62;22cy\033]11;rgb:0/0/0\033\\z";
                termfilter_init(&f, true);
                (void)filt(&f, "\033[c\033]11;?\a", 11, out);
                is_int(termfilter_pending(&f), 2, "two queries pending");
                for (size_t i = 0; i < strlen(rep); i++)
                        termfilter_input(&f, rep + i, 1);
                is_int(termfilter_pending(&f), 0, "replies split byte by byte answer both");
        }
        is_int(pending_after("\033[c\033[c", "\033[?1c"), 1,
               "two DA1 queries, one reply: one pending");
        is_int(pending_after("\033[c", "\033[?1c\033[?1c"), 0,
               "a surplus reply does not go below zero");
        is_int(pending_after("\033[6n", "\033[0n"), 1, "a DSR reply does not answer a CPR");
        is_int(pending_after("\033]11;?\a", "\033]4;1;rgb:0/0/0\a"), 1,
               "an OSC 4 reply does not answer OSC 11");
        is_int(pending_after("\033[c", "\033[1;5R"), 1,
               "a CPR-shaped key (Ctrl-F3) does not answer DA1");
        is_int(pending_after("\033[c", "\x1b\x1b[?1c"), 0,
               "ESC ESC [ ? 1 c: the reply still counts");
        is_int(pending_after("\x9b"
                             "c",
                             ""),
               0, "an 8-bit DA1 is not tracked (dropped)");
        {
                struct termfilter f;
                static char q[4 * (TERMFILTER_QUERIES_MAX + 4)], out[sizeof q + TERMFILTER_SEQ_MAX];
                size_t n = 0;
                for (int i = 0; i < TERMFILTER_QUERIES_MAX + 4; i++)
                        n += (size_t)snprintf(q + n, sizeof q - n, "\033[c");
                termfilter_init(&f, true);
                size_t w = filt(&f, q, n, out);
                ok(termfilter_pending(&f) == TERMFILTER_QUERIES_MAX &&
                           w == 3 * TERMFILTER_QUERIES_MAX,
                   "at most TERMFILTER_QUERIES_MAX of a kind pass; the rest are dropped");
        }

        /* ---- split at every boundary: same output, same count ---- */
        {
                const char *mix = "t\033]52;c;ZXZpbA==\a\xe2\x9c\x93\033[1;31m\033]2;x\033\\\033[c"
                                  "\033P$qm\033\\\033]11;?\033\\\xc4\x9d\x9b"
                                  "21t\033(B\033[6n\x9d"
                                  "0;y\x9c"
                                  "end\033[?1049h\033_G\x18z\033]0;t\x1a"
                                  "w";
                ok(split_same(mix, strlen(mix), true),
                   "a mixed stream split at every byte boundary filters as whole");
                ok(split_same(mix, strlen(mix), false), "... also with queries dropped");
                ok(out_is(mix,
                          "t\xe2\x9c\x93\033[1;31m\033[c\033]11;?\033\\\xc4\x9d\033(B\033[6n"
                          "end\033[?1049hzw",
                          true),
                   "... and gives what is expected");
        }

        /* ---- CAN/SUB, ESC inside strings ---- */
        ok(out_is("\033]0;ti\x18tle", "tle", true), "CAN cancels an OSC; text after it is text");
        ok(out_is("\033[3\x1a"
                  "1m",
                  "1m", true),
           "SUB cancels a CSI");
        ok(out_is("\033]0;t\033[1m", "\033[1m", true),
           "ESC inside an OSC ends it and starts the next sequence");
        ok(out_is("\033Pq\033\033\\x", "x", true), "ESC ESC \\ in a DCS: the string ends, then ST");
        ok(out_is("\033[1\n2m", "\n\033[12m", true),
           "a C0 control inside a CSI runs (as on a terminal); the CSI is kept");

        /* ---- bounds: unterminated and overlong ---- */
        {
                static char big[64 * 1024], out[sizeof big + TERMFILTER_SEQ_MAX];
                struct termfilter f;
                size_t n = (size_t)snprintf(big, sizeof big, "\033]52;c;");
                memset(big + n, 'A', sizeof big - n - 1);
                termfilter_init(&f, true);
                size_t w = 0;
                for (size_t off = 0; off < sizeof big - 1; off += 4096)
                        w += filt(&f, big + off,
                                  sizeof big - 1 - off < 4096 ? sizeof big - 1 - off : 4096,
                                  out + w);
                ok(w == 0 && f.out.len <= TERMFILTER_SEQ_MAX,
                   "an unterminated 64 KiB OSC 52: nothing passes, at most "
                   "TERMFILTER_SEQ_MAX held");
                w = filt(&f, "\aok", 3, out);
                ok(w == 2 && !memcmp(out, "ok", 2), "... its BEL ends it; text after passes");

                n = (size_t)snprintf(big, sizeof big, "\033[");
                memset(big + n, '1', 1000);
                n += 1000;
                n += (size_t)snprintf(big + n, sizeof big - n, "mok\033[1m");
                termfilter_init(&f, true);
                w = filt(&f, big, n, out);
                ok(w == 6 && !memcmp(out, "ok\033[1m", 6) && f.out.len == 0,
                   "a CSI longer than TERMFILTER_SEQ_MAX is dropped to its final byte");

                termfilter_init(&f, true);
                memset(big, 0x9b, 4096);
                w = filt(&f, big, 4096, out);
                ok(w == 0, "4096 lone 8-bit CSIs: nothing passes");
        }

        /* ---- the output never exceeds n + TERMFILTER_SEQ_MAX per call ---- */
        {
                static char csi[TERMFILTER_SEQ_MAX + 8], out[2 * TERMFILTER_SEQ_MAX];
                struct termfilter f;
                size_t n = (size_t)snprintf(csi, sizeof csi, "\033[");
                while (n < TERMFILTER_SEQ_MAX - 1) {
                        csi[n] = n % 2 ? ';' : '1';
                        n++;
                }
                csi[n++] = 'm';
                termfilter_init(&f, true);
                size_t w = filt(&f, csi, n - 1, out);
                ok(w == 0, "a CSI of TERMFILTER_SEQ_MAX bytes is held until its final byte");
                w = filt(&f, csi + n - 1, 1, out);
                ok(w == n && w <= 1 + TERMFILTER_SEQ_MAX, "... then passes whole (%zu bytes)", w);
        }
        return done();
}
