#!/usr/bin/env python3
# tests/helpers/oci-shim.py — what an engine's shim does with a runtime
# (containerd-shim-runc-v2, conmon), reduced to what the tests check.
#
#   oci-shim.py RUNTIME ROOT BUNDLE ID [--tty] [--kill-before-start SIG]
#               [--delete-created]
#
# Becomes a child subreaper, runs `RUNTIME --root ROOT create` (with a
# console socket of its own under --tty), reads the pid file, checks who
# the container's init is, `start`s it, reaps it and reports. Prints one
# "key=value" line per fact, for the test to read:
#   create_rc, state_created (the state's status after create), pid_match
#   (state's pid == pid file's), init_parent (shim|other: after create
#   exits, whose child init is), start_rc, exit (init's exit code as waitpid
#   gives it, or sig:N), output (what the container wrote, tty or pipe,
#   escaped), tty (a console master arrived), state_after, delete_rc,
#   left (entries left in ROOT/ID).
# Everything the shim starts is its own child; it reaps them all before it
# exits, and kills nothing by name.
import ctypes
import json
import os
import socket
import subprocess
import sys
import array

PR_SET_CHILD_SUBREAPER = 36


def say(k, v):
    print(f"{k}={v}", flush=True)


def main():
    rt, root, bundle, cid = sys.argv[1:5]
    opts = sys.argv[5:]
    tty = "--tty" in opts
    kill_sig = opts[opts.index("--kill-before-start") + 1] if "--kill-before-start" in opts else None
    delete_created = "--delete-created" in opts
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("cannot become a subreaper")
    pidfile = os.path.join(root, cid + ".pid")
    args = [rt, "--root", root, "create", "--bundle", bundle, "--pid-file", pidfile]
    csock = None
    if tty:
        spath = os.path.join(root, cid + ".console")
        csock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        csock.bind(spath)
        csock.listen(1)
        args += ["--console-socket", spath]
    rd, wr = os.pipe()
    args.append(cid)
    p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=wr, stderr=wr)
    os.close(wr)
    master = None
    if tty:
        csock.settimeout(30)
        try:
            conn, _ = csock.accept()
            fds = array.array("i")
            msg, anc, _, _ = conn.recvmsg(64, socket.CMSG_SPACE(fds.itemsize))
            for lvl, typ, data in anc:
                if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                    fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
            master = fds[0] if fds else None
        except OSError:
            master = None
    rc = p.wait()
    say("create_rc", rc)
    if rc != 0:
        err = b""
        os.set_blocking(rd, False)
        try:
            err = os.read(rd, 65536)
        except BlockingIOError:
            pass
        say("create_err", json.dumps(err.decode(errors="replace")))
        # whatever create left running is ours to reap (nothing, if it
        # cleaned up)
        while True:
            try:
                os.waitpid(-1, os.WNOHANG)
                break
            except ChildProcessError:
                break
        say("left", len(os.listdir(os.path.join(root, cid))) if os.path.isdir(os.path.join(root, cid)) else 0)
        return
    say("tty", "yes" if master is not None else "no")
    pid = int(open(pidfile).read())
    st = json.loads(subprocess.run([rt, "--root", root, "state", cid], capture_output=True,
                                   text=True).stdout or "{}")
    say("state_created", st.get("status"))
    say("pid_match", "yes" if st.get("pid") == pid else f"no ({st.get('pid')} vs {pid})")
    try:
        ppid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    except OSError:
        ppid = -1
    say("init_parent", "shim" if ppid == os.getpid() else f"other ({ppid})")
    if kill_sig:
        r = subprocess.run([rt, "--root", root, "kill", cid, kill_sig])
        say("kill_rc", r.returncode)
    elif delete_created:
        r = subprocess.run([rt, "--root", root, "delete", cid])
        say("delete_created_rc", r.returncode)
    else:
        r = subprocess.run([rt, "--root", root, "start", cid])
        say("start_rc", r.returncode)
    out = b""
    src = master if master is not None else rd
    while True:
        try:
            chunk = os.read(src, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            break
        out += chunk
        if master is not None and b"@end@" in out:
            break
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
    say("output", json.dumps(out.decode(errors="replace")))
    st = json.loads(subprocess.run([rt, "--root", root, "state", cid], capture_output=True,
                                   text=True).stdout or "{}")
    say("state_after", st.get("status"))
    r = subprocess.run([rt, "--root", root, "delete", cid], capture_output=True)
    say("delete_rc", r.returncode)
    d = os.path.join(root, cid)
    say("left", len(os.listdir(d)) if os.path.isdir(d) else 0)


main()
