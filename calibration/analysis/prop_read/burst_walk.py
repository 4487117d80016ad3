"""How much a burst's predicted launch moves with the peer walk's cost: the kernel model's
`propagation.peer_walk_scale` set to each factor, every other number as it is.

    python -m calibration.analysis.prop_read.burst_walk [INSTANCE [CONTAINERS [LAYERS]]]

Default: m7i.metal-48xl (192 CPUs, the catalog's Sapphire Rapids two-socket part), 100
containers x 50 layers, containerd's per-layer strategy. The model prices every peer of the
root's group at a cost per op (models/kernel/linux-6.18.toml: ``move_mount.per_peer_ns``
37.5, ``umount_detach.mount_lock_per_peer_ns`` 32.7, ``umount.mount_lock_per_peer_ns`` 49.6,
all from the AMD dev VM), bent by the machine's caches where they are known
(cohsim.kernel.walk.cache_bands: L2 loads below the ring's knee, LLC loads beyond it, whatever
those per-op numbers are), and cohsim.kernel.callcost adds them to the namespace_sem write
hold and the unmounts' nested mount_lock section, every one times ``peer_walk_scale``. This
writes a copy of the kernel file with ``peer_walk_scale`` at each factor of `FACTORS` (its
prior's ends, the price's error on the three measured hosts, and two between) and predicts
the burst with it through cohsim's public API (cohsim.predict.api.predict; one replicate, the
nominal one, seed 0). The kernel file, the machine catalog and the fit are this checkout's
(`MODELS`, `FIT`: the committed fit a default prediction of a catalog instance uses, whose
kernel part applies to every instance), not the installed package's, so that the figures
are the tree's own. Printed per factor: the launch p50 and the mount phase's end (s), and
each as a ratio to the factor 1's.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

from cohsim.machine.catalog import Catalog
from cohsim.predict.api import predict

REPO = Path(__file__).resolve().parents[3]
MODELS = REPO / "models"
FIT = REPO / "calibration/fits/devvm-2cpu-intel-xeon-f6m167.json"
FACTORS = (0.68, 1.0, 1.3, 1.75)
#: the kernel file's [propagation] key that scales every walk: "key = number" at a line's start
WALK_SCALE = re.compile(r"^(peer_walk_scale)( *= *)([0-9.]+)", re.MULTILINE)


def scaled_kernel(text: str, factor: float) -> str:
    """The kernel file `text` with its peer_walk_scale multiplied by `factor`."""
    return WALK_SCALE.sub(lambda m: f"{m[1]}{m[2]}{float(m[3]) * factor!r}", text)


def main(argv: list[str]) -> int:
    instance = argv[0] if argv else "m7i.metal-48xl"
    containers = int(argv[1]) if len(argv) > 1 else 100
    layers = int(argv[2]) if len(argv) > 2 else 50
    text = (MODELS / "kernel" / "linux-6.18.toml").read_text()
    catalog = Catalog(MODELS)
    print(f"{instance}: {containers} containers x {layers} layers, per-layer, seed 0, nominal")
    print(f"  walk scale keys set: {len(WALK_SCALE.findall(text))}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for f in FACTORS:
            path = Path(tmp) / f"linux-6.18-x{f}.toml"
            path.write_text(scaled_kernel(text, f))
            p = predict(
                instance=instance,
                containers=containers,
                layers=layers,
                kernel=str(path),
                calibration=str(FIT),
                catalog=catalog,
                replicates=1,
                seed=0,
            )
            rows.append((f, p.launch_s["p50"].value, p.mount_s["max"].value))
    base = next((launch, mount) for f, launch, mount in rows if f == 1.0)
    print(f"  {'factor':>6} {'launch p50 s':>12} {'ratio':>6} {'mount end s':>11} {'ratio':>6}")
    for f, launch, mount in rows:
        print(
            f"  {f:>6.2f} {launch:>12.2f} {launch / base[0]:>6.2f} {mount:>11.2f}"
            f" {mount / base[1]:>6.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
