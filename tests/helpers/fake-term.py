#!/usr/bin/env python3
"""fake-term.py — a scripted terminal emulator for tests/integration/contain_tty.sh.

Usage: fake-term.py --out FILE [--delays MS,MS,...] -- COMMAND [ARG...]

Runs COMMAND in a new session on a fresh pseudo-terminal (its controlling
tty: stdin, stdout and stderr), like a terminal emulator would, and:

  - writes everything COMMAND sends to the terminal (the host side of the
    pty) to FILE, byte for byte;
  - answers the queries a terminal answers, as a terminal does, into the
    terminal's input: DA1 (ESC [ c, ESC [ 0 c) with ESC [ ? 6 2 ; 2 2 c, and
    OSC 11 ; ? (BEL or ST) with an OSC 11 colour. The k-th query seen is
    answered DELAYS[k] ms after it arrived (the last delay repeats), so
    replies can come after COMMAND has ended, as over SSH;
  - once COMMAND has exited and every reply has been written, plays "the
    next program" on the same terminal: it writes a marker line into the
    terminal's input and reads the terminal (canonical mode) up to the
    marker. Whatever comes before the marker is input that was left for
    that next program: a reply that leaked past COMMAND.

Prints `exit=N`, `queries=N`, `replies=N` and `leaked=HEX` (empty when
nothing leaked). Nothing here asserts timing: the order of events (exit,
then all replies written, then the marker) is fixed; the delays only decide
whether a reply arrives before or after COMMAND's end.
"""
import fcntl
import os
import select
import struct
import sys
import termios
import time

QUERIES = [
    (b"\x1b[c", b"\x1b[?62;22c"),
    (b"\x1b[0c", b"\x1b[?62;22c"),
    (b"\x1b]11;?\x07", b"\x1b]11;rgb:1e1e/1e1e/1e1e\x1b\\"),
    (b"\x1b]11;?\x1b\\", b"\x1b]11;rgb:1e1e/1e1e/1e1e\x1b\\"),
]
MARK = b"RF-NEXT-PROGRAM-MARK"
SAFETY_S = 90  # a hang ends the helper (the test then fails), never the suite


def main():
    args = sys.argv[1:]
    out_path, delays = None, [150]
    while args and args[0] != "--":
        if args[0] == "--out":
            out_path = args[1]
            args = args[2:]
        elif args[0] == "--delays":
            delays = [int(x) for x in args[1].split(",")]
            args = args[2:]
        else:
            sys.exit("fake-term.py: unknown option " + args[0])
    if not args or not out_path:
        sys.exit(__doc__)
    cmd = args[1:]

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    pid = os.fork()
    if pid == 0:
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        for fd in (0, 1, 2):
            os.dup2(slave, fd)
        os.close(master)
        os.close(slave)
        os.environ["TERM"] = "xterm-256color"
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)

    os.set_blocking(master, False)
    seen = bytearray()
    scan = 0
    pending = []  # (due, reply bytes)
    n_queries = n_replies = 0
    status = None
    start = time.monotonic()

    def read_master():
        while True:
            try:
                chunk = os.read(master, 65536)
            except BlockingIOError:
                return
            except OSError:
                return
            if not chunk:
                return
            seen.extend(chunk)

    while status is None or pending:
        now = time.monotonic()
        if now - start > SAFETY_S:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            sys.exit("fake-term.py: the command did not finish")
        timeout = 0.05
        if pending:
            timeout = max(0.0, min(timeout, min(d for d, _ in pending) - now))
        r, _, _ = select.select([master], [], [], timeout)
        if r:
            read_master()
        # queries, in the order they were sent
        while True:
            hits = [(seen.find(q, scan), q, a) for q, a in QUERIES]
            hits = [h for h in hits if h[0] >= 0]
            if not hits:
                break
            at, q, a = min(hits)
            scan = at + len(q)
            delay = delays[min(n_queries, len(delays) - 1)]
            pending.append((time.monotonic() + delay / 1000.0, a))
            n_queries += 1
        now = time.monotonic()
        for item in [p for p in pending if p[0] <= now]:
            os.write(master, item[1])
            pending.remove(item)
            n_replies += 1
        if status is None:
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(st)
    read_master()
    with open(out_path, "wb") as f:
        f.write(seen)  # what reached the terminal while COMMAND ran

    # "the next program": what is waiting in the terminal's input for it
    attrs = termios.tcgetattr(slave)
    attrs[3] |= termios.ICANON
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    os.write(master, MARK + b"\n")
    got = bytearray()
    while MARK not in got:
        r, _, _ = select.select([slave], [], [], 10)
        if not r:
            sys.exit("fake-term.py: the marker did not come back")
        got.extend(os.read(slave, 4096))
        read_master()  # the echo
    leaked = bytes(got[: got.index(MARK)])
    print("exit=%d" % status)
    print("queries=%d" % n_queries)
    print("replies=%d" % n_replies)
    print("leaked=%s" % leaked.hex())


if __name__ == "__main__":
    main()
