/*
 * render.h — text a run or caller controls, made inert for the console
 * (pure; fuzzed by fuzz_console).
 *
 * Every string the console shows that a run, an agent or a caller chose
 * (agent names, commands, tasks, egress hosts, kill reasons, output) goes
 * through console_inert first: the result is valid UTF-8 with nothing
 * active in it — C0 controls and DEL become their visible pictures
 * (U+2400 + c, U+2421), bidirectional overrides and isolates (U+202A..E,
 * U+2066..9) and line/paragraph separators become "\uXXXX" text, bytes
 * that are not UTF-8 (overlongs, surrogates, truncated sequences) become
 * "\xNN" text. Then HTML escaping (& < > " ') or a JSON string literal.
 * The page's script only ever sets textContent, never HTML.
 */
#pragma once

#include <stddef.h>

#include "shared/json.h"

#define CONSOLE_TEXT_MAX 4096 /* input bytes shown of one string; then "…" */

/* console_inert — s[0..len) made inert (above), appended to b */
void console_inert(struct json_buf *b, const char *s, size_t len);

/* console_html — console_inert, then HTML-escaped, appended to b */
void console_html(struct json_buf *b, const char *s, size_t len);

/* console_json_str — console_inert as a JSON string literal, appended to b */
void console_json_str(struct json_buf *b, const char *s, size_t len);

/*
 * console_age — a run's age as the runs page shows it (app.js's fmtAge
 * writes the same): "Ns" under a minute, "Mm Ss" under an hour, "Hh Mm"
 * under a day, else "Dd Hh"; a negative age (clocks apart) is "0s".
 */
void console_age(struct json_buf *b, int64_t ms);

/*
 * console_array_next — the next element of a JSON array in s[0..len),
 * scanning from *pos (just after its '[' or after an element): its offset
 * and length into *off, *elen, *pos moved past it. 1 an element, 0 the
 * array's ']' (then *pos is past it), -EBADMSG (not an array's inside,
 * cut, nesting beyond JSON_DEPTH_MAX). Only the framing is checked
 * (strings with their escapes, brackets): each element is then parsed
 * on its own, so a listing of many runs is never one document over the
 * parser's bounds. Pure.
 */
int console_array_next(const char *s, size_t len, size_t *pos, size_t *off, size_t *elen);
