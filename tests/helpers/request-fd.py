#!/usr/bin/env python3
"""request-fd.py — start `ringfence run --request-fd 3` the way the daemon
does, with a run request (supervisor/runwire.h) read from a file, for the
tests of that entry itself.

usage: request-fd.py [--uid N] [--unsealed] RINGFENCE REQUEST-FILE

The request goes into a memfd, sealed against writes, growth and
shrinking as the daemon seals it (--unsealed: not sealed), passed as fd 3;
--uid: exec as that uid and gid (no groups), as an unprivileged caller
would. Exits with ringfence's status.
"""
import fcntl
import os
import sys

args = sys.argv[1:]
uid = None
sealed = True
while args and args[0].startswith("--"):
    if args[0] == "--uid":
        uid = int(args[1])
        args = args[2:]
    elif args[0] == "--unsealed":
        sealed = False
        args = args[1:]
    else:
        sys.exit("request-fd.py: unknown option " + args[0])
rf, req = args
with open(req, "rb") as f:
    data = f.read()
fd = os.memfd_create("ringfence-request", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
os.write(fd, data)
if sealed:
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK |
                fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
if fd != 3:
    os.dup2(fd, 3)
os.set_inheritable(3, True)  # (dup2 onto itself would leave close-on-exec)
if uid is not None:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
os.execv(rf, ["ringfence", "run", "--request-fd", "3"])
