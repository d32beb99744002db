#!/usr/bin/env python3
# tests/helpers/oci-fds.py — an engine passing fds to a runtime's create:
# --preserve-fds (socket activation, Podman's --preserve-fds) and
# --pidfd-socket (runc 1.2: a pidfd of the container's init, over
# SCM_RIGHTS).
#
#   oci-fds.py RUNTIME ROOT BUNDLE ID [--no-pidfd] [--preserve N]
#
# A child subreaper (as containerd's shim is). Makes two pipes and spawns
# `RUNTIME create --preserve-fds N` (default 2) with the read end of the
# first at fd 3 and the write end of the second at fd 4 (dup2 by
# posix_spawn: nothing else of ours is inherited), and unless --no-pidfd a
# listening socket for --pidfd-socket. Then writes a line into the first
# pipe, `start`s the container, reads the second pipe to its end (which
# comes only when every holder of its write end is gone: the container's
# alone, if the runtime kept no copy), reaps init and prints one
# "key=value" line per fact:
#   create_rc, create_err, pidfd (received|none|error: ...), pidfd_pid
#   (the Pid: of its fdinfo), pid (the pid file's), pidfd_signal0 (ok, or
#   the errno name: pidfd_send_signal(fd, 0) while init lives),
#   start_rc, from_container (what it wrote to fd 4, escaped; "timeout" if
#   no end came in 30 s), exit (init's status), pidfd_after (the errno
#   name of pidfd_send_signal 0 once init is reaped: ESRCH), delete_rc,
#   stderr (the container's, escaped).
# Everything it starts is its own child, reaped before it exits.
import ctypes
import errno
import json
import os
import select
import signal
import socket
import subprocess
import sys
import array

PR_SET_CHILD_SUBREAPER = 36


def say(k, v):
    print(f"{k}={v}", flush=True)


def recv_fd(conn):
    fds = array.array("i")
    msg, anc, _, _ = conn.recvmsg(64, socket.CMSG_SPACE(fds.itemsize))
    for lvl, typ, data in anc:
        if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    return (fds[0] if fds else None), msg


def main():
    rt, root, bundle, cid = sys.argv[1:5]
    opts = sys.argv[5:]
    want_pidfd = "--no-pidfd" not in opts
    n = int(opts[opts.index("--preserve") + 1]) if "--preserve" in opts else 2
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("cannot become a subreaper")
    pidfile = os.path.join(root, cid + ".pid")
    args = [rt, "--root", root, "create", "--bundle", bundle, "--pid-file", pidfile,
            "--preserve-fds", str(n)]
    lsock = None
    if want_pidfd:
        spath = os.path.join(root, cid + ".pidfd")
        lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        lsock.bind(spath)
        lsock.listen(1)
        args += ["--pidfd-socket", spath]
    args.append(cid)
    in_r, in_w = os.pipe()     # engine -> container (fd 3)
    out_r, out_w = os.pipe()   # container -> engine (fd 4)
    err_r, err_w = os.pipe()   # the runtime's stdout and stderr
    acts = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, err_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)]
    if n >= 1:
        acts.append((os.POSIX_SPAWN_DUP2, in_r, 3))
    if n >= 2:
        acts.append((os.POSIX_SPAWN_DUP2, out_w, 4))
    pid_create = os.posix_spawn(rt, args, os.environ, file_actions=acts)
    for fd in (in_r, out_w, err_w):
        os.close(fd)
    pidfd = None
    if lsock is not None:
        lsock.settimeout(30)
        try:
            conn, _ = lsock.accept()
            pidfd, msg = recv_fd(conn)
            conn.close()
            say("pidfd", "received" if pidfd is not None else "none")
            say("pidfd_msg", json.dumps(msg.decode(errors="replace")))
        except OSError as e:
            say("pidfd", f"error: {e}")
    _, st = os.waitpid(pid_create, 0)
    rc = os.WEXITSTATUS(st) if os.WIFEXITED(st) else -1
    say("create_rc", rc)
    os.set_blocking(err_r, False)
    try:
        err = os.read(err_r, 65536)
    except BlockingIOError:
        err = b""
    say("create_err", json.dumps(err.decode(errors="replace")))
    if rc != 0:
        while True:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                break
        return
    pid = int(open(pidfile).read())
    say("pid", pid)
    if pidfd is not None:
        fdpid = None
        for line in open(f"/proc/self/fdinfo/{pidfd}"):
            if line.startswith("Pid:"):
                fdpid = int(line.split()[1])
        say("pidfd_pid", fdpid)
        try:
            signal.pidfd_send_signal(pidfd, 0)
            say("pidfd_signal0", "ok")
        except OSError as e:
            say("pidfd_signal0", errno.errorcode.get(e.errno, e.errno))
    try:
        os.write(in_w, b"from-the-engine\n")
    except BrokenPipeError:
        pass  # no container holds fd 3 (--preserve 0)
    os.close(in_w)
    r = subprocess.run([rt, "--root", root, "start", cid])
    say("start_rc", r.returncode)
    out = b""
    eof = False
    while True:
        ready, _, _ = select.select([out_r], [], [], 30)
        if not ready:
            break
        chunk = os.read(out_r, 65536)
        if not chunk:
            eof = True
            break
        out += chunk
    say("from_container", json.dumps(out.decode(errors="replace")) if eof else "timeout")
    status = None
    while True:  # init first; the runtime's supervisor, reparented to us, too
        try:
            got, st_ = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if got == pid:
            status = st_
    if status is None:
        say("exit", "unreaped")
    elif os.WIFEXITED(status):
        say("exit", os.WEXITSTATUS(status))
    else:
        say("exit", f"sig:{os.WTERMSIG(status)}")
    if pidfd is not None:
        try:
            signal.pidfd_send_signal(pidfd, 0)
            say("pidfd_after", "ok")
        except OSError as e:
            say("pidfd_after", errno.errorcode.get(e.errno, e.errno))
    r = subprocess.run([rt, "--root", root, "delete", cid], capture_output=True)
    say("delete_rc", r.returncode)
    try:
        err = os.read(err_r, 65536)
    except BlockingIOError:
        err = b""
    say("stderr", json.dumps(err.decode(errors="replace")))


main()
