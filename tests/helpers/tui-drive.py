#!/usr/bin/env python3
"""tui-drive.py — drive a full-screen terminal program for the agent
tests (tests/integration/agents_tui.sh), as a user at a terminal would.

Usage: tui-drive.py --expect REGEX [--out FILE] [--timeout S] -- COMMAND [ARG...]

Runs COMMAND in a new session on a fresh 120x40 pseudo-terminal (its
controlling tty), answering the queries a terminal answers (cursor
position ESC[6n, DA1, OSC 10/11 colours, kitty keyboard ESC[?u) so a TUI
that waits for them goes on. Once the screen text (escape sequences
removed) matches REGEX — the TUI is up — it presses Ctrl-C (one byte
0x03 on the terminal, as a keyboard does), again every 0.4 s (within
the double-press windows TUIs use to confirm an exit), until
COMMAND exits. Prints `started=0|1`, `ctrlc=N` (presses until the exit)
and `exit=N` (the wait status's exit code, or 128+signal); with --out the
terminal's output is saved. Gives up (exit=timeout) after --timeout
seconds (default 60). Asserts nothing: the test does.
"""
import argparse
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import fcntl
import time

ap = argparse.ArgumentParser()
ap.add_argument("--expect", required=True)
ap.add_argument("--out")
ap.add_argument("--timeout", type=float, default=60)
ap.add_argument("cmd", nargs=argparse.REMAINDER)
a = ap.parse_args()
cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd

ANSWERS = [
    (b"\x1b[6n", b"\x1b[1;1R"),
    (b"\x1b[c", b"\x1b[?62;22c"),
    (b"\x1b[0c", b"\x1b[?62;22c"),
    (b"\x1b]10;?\x07", b"\x1b]10;rgb:d0d0/d0d0/d0d0\x07"),
    (b"\x1b]11;?\x07", b"\x1b]11;rgb:1e1e/1e1e/1e1e\x07"),
    (b"\x1b]10;?\x1b\\", b"\x1b]10;rgb:d0d0/d0d0/d0d0\x1b\\"),
    (b"\x1b]11;?\x1b\\", b"\x1b]11;rgb:1e1e/1e1e/1e1e\x1b\\"),
    (b"\x1b[?u", b"\x1b[?0u"),
]
ESC = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")

pid, fd = pty.fork()
if pid == 0:
    os.environ["TERM"] = "xterm-256color"
    os.execvp(cmd[0], cmd)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
out = b""
started = False
presses = 0
next_press = 0.0
deadline = time.monotonic() + a.timeout
status = None
expect = re.compile(a.expect.encode())
while time.monotonic() < deadline:
    r, _, _ = select.select([fd], [], [], 0.1)
    if r:
        try:
            b = os.read(fd, 65536)
        except OSError:
            b = b""
        if b:
            tail = out[-16:] + b
            out += b
            for q, ans in ANSWERS:
                for _ in range(tail.count(q)):
                    os.write(fd, ans)
            if not started and expect.search(ESC.sub(b"", out)):
                started = True
                next_press = time.monotonic() + 0.5
    p, st = os.waitpid(pid, os.WNOHANG)
    if p == pid:
        status = st
        break
    if started and time.monotonic() >= next_press:
        os.write(fd, b"\x03")
        presses += 1
        next_press = time.monotonic() + 0.4
if status is None:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
if a.out:
    with open(a.out, "wb") as f:
        f.write(out)
print("started=%d" % started)
print("ctrlc=%d" % presses)
if status is None:
    print("exit=timeout")
elif os.WIFSIGNALED(status):
    print("exit=%d" % (128 + os.WTERMSIG(status)))
else:
    print("exit=%d" % os.WEXITSTATUS(status))
