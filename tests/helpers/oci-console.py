#!/usr/bin/env python3
# tests/helpers/oci-console.py — what an engine does for `exec -t`: listen
# on a console socket, run the runtime's exec with --tty and
# --console-socket, take the pty master it sends (SCM_RIGHTS) and read the
# process's output from it.
#
#   oci-console.py SOCKET-PATH RUNTIME-ARGV...
#
# Prints "key=value" lines: exec_rc (the runtime's status), master
# (received|none), output (what the process wrote to its terminal,
# escaped), err (the runtime's stderr, escaped). The runtime is our own
# child, reaped before we exit.
import array
import json
import os
import select
import socket
import subprocess
import sys


def say(k, v):
    print(f"{k}={v}", flush=True)


def main():
    spath = sys.argv[1]
    argv = sys.argv[2:]
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lsock.bind(spath)
    lsock.listen(1)
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    lsock.settimeout(30)
    master = None
    try:
        conn, _ = lsock.accept()
        fds = array.array("i")
        _, anc, _, _ = conn.recvmsg(64, socket.CMSG_SPACE(fds.itemsize))
        for lvl, typ, data in anc:
            if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
        master = fds[0] if fds else None
        conn.close()
    except OSError:
        master = None
    say("master", "received" if master is not None else "none")
    out = b""
    while master is not None:
        ready, _, _ = select.select([master], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the terminal's last holder is gone
            chunk = b""
        if not chunk:
            break
        out += chunk
        if b"@end@" in out:
            break
    err = p.stderr.read()
    say("exec_rc", p.wait())
    say("output", json.dumps(out.decode(errors="replace")))
    say("err", json.dumps(err.decode(errors="replace")))
    os.unlink(spath)


main()
