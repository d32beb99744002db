#!/usr/bin/python3
# tests/helpers/oci-archive.py — an OCI image archive (oci-layout, index,
# manifest, config, one layer) of a root filesystem tar, for the tests that
# import images into containerd (oci_containerd.sh, oci_cri.sh).
#
# Usage: oci-archive.py LAYER.tar OUT.tar NAME:TAG [CMD-JSON]
# (CMD-JSON: the image's Cmd, default ["/bin/sh"])
import hashlib, io, json, sys, tarfile
layer_path, out, name = sys.argv[1:4]
cmd = json.loads(sys.argv[4]) if len(sys.argv) > 4 else ["/bin/sh"]
blobs = {}
def blob(data, media):
    d = hashlib.sha256(data).hexdigest()
    blobs[d] = data
    return {"mediaType": media, "digest": "sha256:" + d, "size": len(data)}
layer = blob(open(layer_path, "rb").read(), "application/vnd.oci.image.layer.v1.tar")
config = blob(json.dumps({
    "architecture": "amd64", "os": "linux",
    "config": {"Env": ["PATH=/bin"], "Cmd": cmd},
    "rootfs": {"type": "layers", "diff_ids": [layer["digest"]]},
}).encode(), "application/vnd.oci.image.config.v1+json")
manifest = blob(json.dumps({
    "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": config, "layers": [layer],
}).encode(), "application/vnd.oci.image.manifest.v1+json")
manifest["platform"] = {"architecture": "amd64", "os": "linux"}
manifest["annotations"] = {"io.containerd.image.name": name,
                           "org.opencontainers.image.ref.name": name.rsplit(":", 1)[1]}
index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
         "manifests": [manifest]}
with tarfile.open(out, "w") as t:
    def add(path, data):
        i = tarfile.TarInfo(path)
        i.size, i.mode = len(data), 0o644
        t.addfile(i, io.BytesIO(data))
    add("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
    add("index.json", json.dumps(index).encode())
    for d, data in blobs.items():
        add("blobs/sha256/" + d, data)
