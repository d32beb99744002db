#!/usr/bin/env python3
"""memscan.py — look for a secret's bytes in the memory of processes, from
the host side (tests/integration/inject_tls.sh: the run's processes must
never have held an injected value).

  memscan.py PID... < VALUE
  memscan.py --keys FILE PID...

reads the value from stdin (never from argv: this process's own command
line would then hold it), then for every PID every readable mapping of
/proc/PID/maps through /proc/PID/mem (root on the host may read a run's
processes), in 1 MiB pieces overlapping by len(VALUE)-1 bytes so a value
across a piece boundary is found too. Looks for the value and its base64
at each alignment (the form Basic credentials carry it in). Prints one line

  pids=N ranges=M bytes=B hits=H

then one line per hit ("hit PID ADDRESS MAPPING FORM"). Mappings that
cannot be read ([vvar], device memory: EIO) are skipped and counted in
"unreadable=K" on the summary line, mappings over 4 GiB (only a
sanitizer's shadow reservation is that large) skipped and counted in
"huge=G". With --keys, FILE holds lines "NAME HEX" (32-byte private
scalars: tests/integration/inject_cakey.sh) and each is looked for in
both byte orders, FORM "NAME-be" or "NAME-le". Exit status 0 whatever was
found (the test decides), 2 on a usage error.
"""
import base64
import sys

CHUNK = 1 << 20


# mappings past 4 GiB: a sanitizer's shadow memory, reserved and empty;
# reading it took longer than the run's processes lived
HUGE = 1 << 32


def main():
    args = sys.argv[1:]
    if args[:1] == ["--keys"] and len(args) >= 2:
        forms = {}
        for line in open(args[1]):
            name, hexv = line.split()
            b = bytes.fromhex(hexv)
            if len(b) != 32:
                print("memscan.py: a key is not 32 bytes", file=sys.stderr)
                return 2
            forms[name + "-be"], forms[name + "-le"] = b, b[::-1]
        args = args[2:]
    else:
        value = sys.stdin.buffer.read().strip()
        if len(value) < 8:
            print("memscan.py: the value is too short to look for", file=sys.stderr)
            return 2
        # the value, and its base64 at each of the three offsets it can stand
        # at inside a longer encoded string (Basic credentials: "user:VALUE");
        # only the characters that depend on the value alone are looked for
        forms = {"value": value}
        for k in range(3):
            enc = base64.b64encode(b"\0" * k + value)
            forms["base64+%d" % k] = enc[4 if k else 0:-4]
    if not args:
        print("usage: memscan.py PID... < VALUE | memscan.py --keys FILE PID...",
              file=sys.stderr)
        return 2
    over = max(len(f) for f in forms.values()) - 1
    pids = ranges = total = unreadable = huge = 0
    hits = []
    for pid in args:
        try:
            maps = open("/proc/%s/maps" % pid).read().splitlines()
            mem = open("/proc/%s/mem" % pid, "rb", buffering=0)
        except OSError:
            continue
        pids += 1
        with mem:
            for line in maps:
                parts = line.split(None, 5)
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                name = parts[5] if len(parts) > 5 else ""
                if "r" not in parts[1] or name in ("[vvar]", "[vsyscall]"):
                    continue
                if hi - lo > HUGE:
                    huge += 1  # only a sanitizer's shadow is this large (ASan builds)
                    continue
                ranges += 1
                addr, prev = lo, b""
                while addr < hi:
                    n = min(CHUNK, hi - addr)
                    try:
                        mem.seek(addr)
                        data = mem.read(n)
                    except (OSError, OverflowError):
                        unreadable += 1
                        break
                    if not data:
                        break
                    total += len(data)
                    hay = prev + data
                    for form, pat in forms.items():
                        i = hay.find(pat)
                        while i >= 0:
                            hits.append("hit %s %#x %s %s" % (pid, addr - len(prev) + i, name, form))
                            i = hay.find(pat, i + 1)
                    prev = data[-over:] if over else b""
                    addr += len(data)
    print("pids=%d ranges=%d bytes=%d hits=%d unreadable=%d huge=%d"
          % (pids, ranges, total, len(hits), unreadable, huge))
    for h in hits:
        print(h)
    return 0


if __name__ == "__main__":
    sys.exit(main())
