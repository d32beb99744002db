#!/usr/bin/python3
# tests/helpers/cri-client.py — a minimal client of the Kubernetes CRI
# (runtime.v1), what the kubelet says to containerd, for
# tests/integration/oci_cri.sh: no crictl in Debian, so the few calls a pod
# needs are made here over gRPC (Debian's python3-grpcio) with the
# protobuf messages encoded by hand from the fields the CRI defines.
#
# Usage: cri-client.py SOCKET COMMAND ARGS...
#   version
#   runp CONFIG.json HANDLER           -> the pod sandbox's id
#   create POD CONFIG.json SANDBOX.json -> the container's id
#   start ID | stop ID | rm ID | stopp POD | rmp POD
#   exec ID TIMEOUT CMD...             -> its stdout and stderr; exits with its status
#
# CONFIG.json names fields as the CRI does (snake_case); only those in
# SCHEMA below are encoded, an unknown one is an error.
import json
import sys

import grpc

# message -> field -> (number, type); a type is a scalar name, a message
# name, "map" (map<string,string>) or ("repeated", type)
SCHEMA = {
    "VersionRequest": {"version": (1, "string")},
    "PodSandboxMetadata": {
        "name": (1, "string"), "uid": (2, "string"),
        "namespace": (3, "string"), "attempt": (4, "uint32")},
    "DNSConfig": {
        "servers": (1, ("repeated", "string")), "searches": (2, ("repeated", "string")),
        "options": (3, ("repeated", "string"))},
    "NamespaceOption": {"network": (1, "int32"), "pid": (2, "int32"), "ipc": (3, "int32")},
    "LinuxSandboxSecurityContext": {"namespace_options": (1, "NamespaceOption")},
    "LinuxPodSandboxConfig": {
        "cgroup_parent": (1, "string"), "security_context": (2, "LinuxSandboxSecurityContext"),
        "sysctls": (3, "map")},
    "PodSandboxConfig": {
        "metadata": (1, "PodSandboxMetadata"), "hostname": (2, "string"),
        "log_directory": (3, "string"), "dns_config": (4, "DNSConfig"),
        "labels": (6, "map"), "annotations": (7, "map"), "linux": (8, "LinuxPodSandboxConfig")},
    "RunPodSandboxRequest": {"config": (1, "PodSandboxConfig"), "runtime_handler": (2, "string")},
    "ContainerMetadata": {"name": (1, "string"), "attempt": (2, "uint32")},
    "ImageSpec": {"image": (1, "string")},
    "KeyValue": {"key": (1, "string"), "value": (2, "string")},
    "LinuxContainerSecurityContext": {"namespace_options": (3, "NamespaceOption")},
    "LinuxContainerConfig": {"security_context": (2, "LinuxContainerSecurityContext")},
    "Mount": {
        "container_path": (1, "string"), "host_path": (2, "string"), "readonly": (3, "bool"),
        "selinux_relabel": (4, "bool"), "propagation": (5, "int32")},
    "ContainerConfig": {
        "metadata": (1, "ContainerMetadata"), "image": (2, "ImageSpec"),
        "command": (3, ("repeated", "string")), "args": (4, ("repeated", "string")),
        "working_dir": (5, "string"), "envs": (6, ("repeated", "KeyValue")),
        "mounts": (7, ("repeated", "Mount")),
        "labels": (9, "map"), "annotations": (10, "map"), "log_path": (11, "string"),
        "linux": (15, "LinuxContainerConfig")},
    "CreateContainerRequest": {
        "pod_sandbox_id": (1, "string"), "config": (2, "ContainerConfig"),
        "sandbox_config": (3, "PodSandboxConfig")},
    "StartContainerRequest": {"container_id": (1, "string")},
    "StopContainerRequest": {"container_id": (1, "string"), "timeout": (2, "int64")},
    "RemoveContainerRequest": {"container_id": (1, "string")},
    "StopPodSandboxRequest": {"pod_sandbox_id": (1, "string")},
    "RemovePodSandboxRequest": {"pod_sandbox_id": (1, "string")},
    "ExecSyncRequest": {
        "container_id": (1, "string"), "cmd": (2, ("repeated", "string")),
        "timeout": (3, "int64")},
}
VARINT = {"uint32", "int32", "int64", "bool"}


def varint(n):
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num, wire, payload):
    key = varint(num << 3 | wire)
    if wire == 0:
        return key + varint(payload)
    return key + varint(len(payload)) + payload


def encode_one(num, typ, v):
    if typ in VARINT:
        return field(num, 0, int(v))
    if typ == "string":
        return field(num, 2, v.encode())
    if typ == "bytes":
        return field(num, 2, v)
    return field(num, 2, encode(typ, v))


def encode(msg, obj):
    schema = SCHEMA[msg]
    out = b""
    for k, v in obj.items():
        if k not in schema:
            raise SystemExit(f"cri-client: {msg}.{k}: not a field this client knows")
        num, typ = schema[k]
        if typ == "map":
            for mk, mv in v.items():
                out += field(num, 2, field(1, 2, mk.encode()) + field(2, 2, mv.encode()))
        elif isinstance(typ, tuple):
            for e in v:
                out += encode_one(num, typ[1], e)
        else:
            out += encode_one(num, typ, v)
    return out


def decode(data):
    """Top-level fields: number -> list of values (varints as ints,
    length-delimited as bytes)."""
    fields, i = {}, 0
    while i < len(data):
        key, i = read_varint(data, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = read_varint(data, i)
        elif wire == 2:
            n, i = read_varint(data, i)
            v, i = data[i:i + n], i + n
        elif wire == 5:
            v, i = data[i:i + 4], i + 4
        elif wire == 1:
            v, i = data[i:i + 8], i + 8
        else:
            raise SystemExit(f"cri-client: wire type {wire} in a reply")
        fields.setdefault(num, []).append(v)
    return fields


def read_varint(data, i):
    n = shift = 0
    while True:
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def call(channel, method, msg, obj, timeout=120):
    fn = channel.unary_unary("/runtime.v1.RuntimeService/" + method,
                             request_serializer=None, response_deserializer=None)
    try:
        return decode(fn(encode(msg, obj), timeout=timeout))
    except grpc.RpcError as e:
        print(f"cri-client: {method}: {e.code().name}: {e.details()}", file=sys.stderr)
        sys.exit(2)


def first_str(fields, num):
    return fields.get(num, [b""])[0].decode()


def main():
    sock, cmd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    channel = grpc.insecure_channel("unix://" + sock)
    load = lambda p: json.load(open(p))
    if cmd == "version":
        r = call(channel, "Version", "VersionRequest", {"version": "v1"})
        print(first_str(r, 2), first_str(r, 3), first_str(r, 4))
    elif cmd == "runp":
        r = call(channel, "RunPodSandbox", "RunPodSandboxRequest",
                 {"config": load(args[0]), "runtime_handler": args[1]})
        print(first_str(r, 1))
    elif cmd == "create":
        r = call(channel, "CreateContainer", "CreateContainerRequest",
                 {"pod_sandbox_id": args[0], "config": load(args[1]),
                  "sandbox_config": load(args[2])})
        print(first_str(r, 1))
    elif cmd in ("start", "rm"):
        method, msg = {"start": ("StartContainer", "StartContainerRequest"),
                       "rm": ("RemoveContainer", "RemoveContainerRequest")}[cmd]
        call(channel, method, msg, {"container_id": args[0]})
    elif cmd == "stop":
        call(channel, "StopContainer", "StopContainerRequest",
             {"container_id": args[0], "timeout": 5})
    elif cmd in ("stopp", "rmp"):
        method, msg = {"stopp": ("StopPodSandbox", "StopPodSandboxRequest"),
                       "rmp": ("RemovePodSandbox", "RemovePodSandboxRequest")}[cmd]
        call(channel, method, msg, {"pod_sandbox_id": args[0]})
    elif cmd == "exec":
        r = call(channel, "ExecSync", "ExecSyncRequest",
                 {"container_id": args[0], "timeout": int(args[1]), "cmd": args[2:]},
                 timeout=int(args[1]) + 30)
        sys.stdout.write(r.get(1, [b""])[0].decode(errors="replace"))
        sys.stdout.write(r.get(2, [b""])[0].decode(errors="replace"))
        sys.exit(r.get(3, [0])[0])
    else:
        raise SystemExit(f"cri-client: unknown command {cmd}")


if __name__ == "__main__":
    main()
