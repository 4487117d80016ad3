"""A local OCI image archive of busybox with N layers, for `ctr images import` (no registry).

    python -m calibration.analysis.walkers.oci_image OUT.tar NAME:TAG LAYERS [BUSYBOX]

Layer 1 holds /bin/busybox (a copy of BUSYBOX, default /bin/busybox: Debian's static one) and
the applet links sh, true, ls, cat; layers 2..N each add one small file /etc/layer-K. The
archive is an OCI image layout (oci-layout, index.json, blobs/sha256/...) whose index names the
image `docker.io/library/NAME:TAG` (annotation io.containerd.image.name), as containerd's
importer reads it.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import sys
import tarfile
from pathlib import Path

LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
CONFIG = "application/vnd.oci.image.config.v1+json"
MANIFEST = "application/vnd.oci.image.manifest.v1+json"


def _tar(entries: list[tuple[str, bytes | None, str | None, int]]) -> bytes:
    """A tar of (path, file bytes | None, link target | None, mode); directories have neither."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, data, link, mode in entries:
            info = tarfile.TarInfo(name)
            info.mode, info.mtime = mode, 0
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                t.addfile(info)
            elif data is None:
                info.type = tarfile.DIRTYPE
                t.addfile(info)
            else:
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def build(out: Path, ref: str, layers: int, busybox: Path = Path("/bin/busybox")) -> None:
    name, tag = ref.split(":")
    blobs: dict[str, bytes] = {}

    def blob(data: bytes) -> str:
        d = hashlib.sha256(data).hexdigest()
        blobs[d] = data
        return d

    diff_ids, descs = [], []
    for k in range(1, layers + 1):
        if k == 1:
            entries = [
                ("bin", None, None, 0o755),
                ("bin/busybox", busybox.read_bytes(), None, 0o755),
            ]
            entries += [(f"bin/{a}", None, "busybox", 0o777) for a in ("sh", "true", "ls", "cat")]
            entries += [(d, None, None, 0o755) for d in ("proc", "sys", "dev", "tmp", "etc")]
        else:
            entries = [
                ("etc", None, None, 0o755),
                (f"etc/layer-{k}", f"{k}\n".encode(), None, 0o644),
            ]
        raw = _tar(entries)
        diff_ids.append("sha256:" + hashlib.sha256(raw).hexdigest())
        gz = gzip.compress(raw, mtime=0)
        descs.append({"mediaType": LAYER, "digest": "sha256:" + blob(gz), "size": len(gz)})
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Env": ["PATH=/bin"], "Cmd": ["/bin/sh"]},
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
    }
    cfg = json.dumps(config, sort_keys=True).encode()
    manifest = {
        "schemaVersion": 2,
        "mediaType": MANIFEST,
        "config": {"mediaType": CONFIG, "digest": "sha256:" + blob(cfg), "size": len(cfg)},
        "layers": descs,
    }
    man = json.dumps(manifest, sort_keys=True).encode()
    index = {
        "schemaVersion": 2,
        "manifests": [
            {
                "mediaType": MANIFEST,
                "digest": "sha256:" + blob(man),
                "size": len(man),
                "platform": {"architecture": "amd64", "os": "linux"},
                "annotations": {
                    "io.containerd.image.name": f"docker.io/library/{name}:{tag}",
                    "org.opencontainers.image.ref.name": tag,
                },
            }
        ],
    }
    files = [("oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode())]
    files += [("index.json", json.dumps(index).encode())]
    files += [(f"blobs/sha256/{d}", b) for d, b in sorted(blobs.items())]
    with tarfile.open(out, "w") as t:
        for path, data in files:
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            t.addfile(info, io.BytesIO(data))


def main(argv: list[str]) -> int:
    out, ref, layers = Path(argv[0]), argv[1], int(argv[2])
    build(out, ref, layers, Path(argv[3]) if len(argv) > 3 else Path("/bin/busybox"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
