#!/usr/bin/env python3
"""Write a single-platform OCI image archive (linux/amd64) from layer tarballs.

No Docker needed: each layer is an uncompressed tar of a filesystem tree; this
computes the digests, writes the image config, manifest, index.json (with the
image name annotations containerd's `ctr images import` understands) and packs
everything as an OCI layout tarball.

usage: oci-image.py --name docker.io/library/foo:dev --out foo.tar \
         --layer base.tar --layer app.tar [--config images/foo/image.json] \
         [--entrypoint '["node"]'] [--cmd '[]'] [--env K=V ...] [--user 10001] \
         [--workdir /app] [--label k=v ...]

--config reads user, workdir, env, entrypoint, cmd and labels from an
image.json (images/*/image.json: what the Dockerfiles say too);
flags given as well are added to it (env, labels) or win (the others).
"""
import argparse, datetime, hashlib, io, json, os, shutil, tarfile

CHUNK = 1 << 20


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(CHUNK)
            if not b:
                break
            h.update(b)
    return h.hexdigest(), os.path.getsize(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True, help="fully qualified image reference")
    ap.add_argument("--out", required=True)
    ap.add_argument("--layer", action="append", default=[])
    ap.add_argument("--entrypoint", default=None, help="JSON array")
    ap.add_argument("--cmd", default=None, help="JSON array")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--user", default="")
    ap.add_argument("--workdir", default="")
    ap.add_argument("--label", action="append", default=[])
    ap.add_argument("--config", default=None, help="image.json: user, workdir, env, entrypoint, cmd, labels")
    a = ap.parse_args()
    if a.config:
        with open(a.config) as f:
            declared = json.load(f)
        a.env = declared.get("env", []) + a.env
        a.label = [f"{k}={v}" for k, v in declared.get("labels", {}).items()] + a.label
        for key in ("entrypoint", "cmd"):
            if getattr(a, key) is None and key in declared:
                setattr(a, key, json.dumps(declared[key]))
        a.user = a.user or declared.get("user", "")
        a.workdir = a.workdir or declared.get("workdir", "")

    blobs = []  # (digest, size, media type, path-or-bytes)
    layer_descs, diff_ids = [], []
    for layer in a.layer:
        digest, size = sha256_file(layer)
        diff_ids.append("sha256:" + digest)
        d = {"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": "sha256:" + digest, "size": size}
        layer_descs.append(d)
        blobs.append((digest, layer))

    config = {
        "created": "1970-01-01T00:00:00Z",
        "architecture": "amd64",
        "os": "linux",
        "config": {
            # Docker's default PATH unless the image declares its own (the Go image: /usr/local/go/bin first)
            "Env": ([] if any(e.startswith("PATH=") for e in a.env) else ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]) + a.env,
        },
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "history": [{"created": "1970-01-01T00:00:00Z", "created_by": "codeplane hack/cluster/oci-image.py"}],
    }
    c = config["config"]
    if a.entrypoint is not None:
        c["Entrypoint"] = json.loads(a.entrypoint)
    if a.cmd is not None:
        c["Cmd"] = json.loads(a.cmd)
    if a.user:
        c["User"] = a.user
    if a.workdir:
        c["WorkingDir"] = a.workdir
    if a.label:
        c["Labels"] = dict(l.split("=", 1) for l in a.label)

    def json_blob(obj):
        data = json.dumps(obj, separators=(",", ":"), sort_keys=True).encode()
        digest = hashlib.sha256(data).hexdigest()
        blobs.append((digest, data))
        return digest, len(data)

    cfg_digest, cfg_size = json_blob(config)
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": "sha256:" + cfg_digest, "size": cfg_size},
        "layers": layer_descs,
    }
    man_digest, man_size = json_blob(manifest)
    tag = a.name.rsplit(":", 1)[1] if ":" in a.name.rsplit("/", 1)[-1] else "latest"
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": "sha256:" + man_digest,
            "size": man_size,
            "platform": {"architecture": "amd64", "os": "linux"},
            "annotations": {"io.containerd.image.name": a.name, "org.opencontainers.image.ref.name": tag},
        }],
    }

    tmp = a.out + ".tmp"
    with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as t:
        def add_bytes(name, data):
            ti = tarfile.TarInfo(name)
            ti.size, ti.mode, ti.mtime = len(data), 0o644, 0
            t.addfile(ti, io.BytesIO(data))
        add_bytes("oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode())
        add_bytes("index.json", json.dumps(index, indent=1).encode())
        seen = set()
        for digest, src in blobs:
            if digest in seen:
                continue
            seen.add(digest)
            name = "blobs/sha256/" + digest
            if isinstance(src, bytes):
                add_bytes(name, src)
            else:
                ti = t.gettarinfo(src, arcname=name)
                ti.uid = ti.gid = 0
                ti.uname = ti.gname = ""
                ti.mode, ti.mtime = 0o644, 0
                with open(src, "rb") as f:
                    t.addfile(ti, f)
    os.replace(tmp, a.out)
    print(f"{a.name} manifest sha256:{man_digest} -> {a.out}")


if __name__ == "__main__":
    main()
