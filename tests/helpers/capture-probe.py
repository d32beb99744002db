#!/usr/bin/env python3
"""capture-probe.py — what tests/integration/capture.sh does inside a run.

Prints one result line per action: "ok", "connected", "errno=NAME", or what
the action says below.

  addrs                    the run's own addresses and default routes, one per line:
                           "inet ADDR/PREFIX", "inet6 ADDR/PREFIX", "default4 SRC",
                           "default6 DEV" (from /proc/net/{route,if_inet6} and ip)
  tcp IP PORT              a TCP connect (timeout 10 s)
  udp IP PORT N            N sendto()s of one byte: "errno=A,B..." (the set) or "sent"
  udp-connected IP PORT    connect, send a DNS query, recv (timeout 5 s): the first
                           errno, or "answer"
  dns-stub                 an A query to 127.0.0.1:53: "answer" when any reply comes
  nft-deltable             a netlink batch deleting `table inet ringfence`: "ack=NAME"
                           (the error in the kernel's ACK, "ack=0" for success), or
                           "socket=NAME" when the netlink socket cannot be made
  netns                    the inode of this process's network namespace
  wait-go DIR              write DIR/ready, then wait (at most 60 s) for DIR/go
"""
import errno
import os
import socket
import struct
import sys
import time


# an A query for svc.test
DNS_QUERY = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + b"\x03svc\x04test\x00" + struct.pack(">HH", 1, 1)


def name(e):
    return errno.errorcode.get(e, str(e))


def addrs():
    out = []
    with open("/proc/net/if_inet6") as f:
        for line in f:
            a, _, plen, _, _, dev = line.split()
            if dev == "lo":
                txt = socket.inet_ntop(socket.AF_INET6, bytes.fromhex(a))
                out.append("inet6 %s/%d" % (txt, int(plen, 16)))
    # IPv4 addresses: SIOCGIFADDR gives only the first; ask rtnetlink through ip
    for line in os.popen("ip -4 -o addr show dev lo").read().splitlines():
        out.append("inet " + line.split()[3])
    for line in os.popen("ip -4 route show default").read().splitlines():
        w = line.split()
        out.append("default4 " + (w[w.index("src") + 1] if "src" in w else "-"))
    for line in os.popen("ip -6 route show default").read().splitlines():
        w = line.split()
        out.append("default6 " + (w[w.index("dev") + 1] if "dev" in w else "-"))
    print("\n".join(sorted(out)))


def nlmsg(typ, flags, seq, payload):
    return struct.pack("=IHHII", 16 + len(payload), typ, flags, seq, 0) + payload


def nft_deltable():
    NETLINK_NETFILTER, NFNL_SUBSYS_NFTABLES = 12, 10
    NFT_MSG_DELTABLE, NFPROTO_INET, NFTA_TABLE_NAME = 2, 1, 1
    try:
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    except OSError as e:
        print("socket=" + name(e.errno))
        return
    s.bind((0, 0))
    name_attr = b"ringfence\0"
    attr = struct.pack("=HH", 4 + len(name_attr), NFTA_TABLE_NAME) + name_attr
    attr += b"\0" * (-len(attr) % 4)
    gen = lambda fam, res: struct.pack("=BBH", fam, 0, socket.htons(res))
    batch = nlmsg(0x10, 1, 1, gen(0, NFNL_SUBSYS_NFTABLES))
    batch += nlmsg((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_DELTABLE, 1 | 4, 2, gen(NFPROTO_INET, 0) + attr)
    batch += nlmsg(0x11, 1, 3, gen(0, NFNL_SUBSYS_NFTABLES))
    s.send(batch)
    s.settimeout(5)
    data = s.recv(65536)
    while len(data) >= 20:
        ln, typ = struct.unpack("=IH", data[:6])
        if typ == 2:  # NLMSG_ERROR
            err = struct.unpack("=i", data[16:20])[0]
            print("ack=%s" % (name(-err) if err else "0"))
            return
        data = data[(ln + 3) & ~3 :]
    print("no ack")


def main():
    cmd = sys.argv[1]
    try:
        if cmd == "addrs":
            addrs()
        elif cmd == "tcp":
            socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=10)
            print("connected")
        elif cmd == "udp":
            fam = socket.AF_INET6 if ":" in sys.argv[2] else socket.AF_INET
            u = socket.socket(fam, socket.SOCK_DGRAM)
            errs = set()
            for _ in range(int(sys.argv[4])):
                try:
                    u.sendto(b"x", (sys.argv[2], int(sys.argv[3])))
                except OSError as e:
                    errs.add(name(e.errno))
            print("errno=" + ",".join(sorted(errs)) if errs else "sent")
        elif cmd == "udp-connected":
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.settimeout(5)
            u.connect((sys.argv[2], int(sys.argv[3])))
            try:
                u.send(DNS_QUERY)
            except OSError as e:
                print("errno=" + name(e.errno))
                return
            u.recv(512)
            print("answer")
        elif cmd == "dns-stub":
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.settimeout(5)
            u.sendto(DNS_QUERY, ("127.0.0.1", 53))
            u.recv(512)
            print("answer")
        elif cmd == "nft-deltable":
            nft_deltable()
        elif cmd == "netns":
            print(os.stat("/proc/self/ns/net").st_ino)
        elif cmd == "wait-go":
            open(os.path.join(sys.argv[2], "ready"), "w").close()
            for _ in range(1200):
                if os.path.exists(os.path.join(sys.argv[2], "go")):
                    print("go")
                    return
                time.sleep(0.05)
            print("no go")
        else:
            print("usage: see the header")
            sys.exit(2)
    except socket.timeout:
        print("timeout")
    except OSError as e:
        print("errno=" + name(e.errno) if e.errno else "closed")


main()
