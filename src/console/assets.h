/*
 * assets.h — the console page's script and style, built into the binary
 * from src/console/assets/ (embed.py): the page loads nothing else.
 */
#pragma once

extern const char console_app_js[];
extern const char console_app_css[];
