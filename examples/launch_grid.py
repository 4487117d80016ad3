"""The issue-5 report table: predicted launch for 10, 50, 100 and 200 containers of a 50-layer
image on r5.metal, m7i.metal-24xl (SMT on and off) and m7a.24xlarge, per-layer and
common-parent, with the committed calibration.

Run from a checkout:  python examples/launch_grid.py [--containers 10,50] [--replicates 3]
Prints one Markdown row per case: mount phase p50/max and launch p50/p99/max (seconds) with the
interval of the maximum.
"""

from __future__ import annotations

import argparse

from cohsim.predict import predict

MACHINES = (
    ("r5.metal", True),
    ("m7i.metal-24xl", True),
    ("m7i.metal-24xl", False),
    ("m7a.24xlarge", True),
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--containers", default="10,50,100,200")
    ap.add_argument("--layers", type=int, default=50)
    ap.add_argument("--replicates", type=int, default=3)
    ap.add_argument("--strategies", default="per-layer,common-parent")
    args = ap.parse_args()
    print(
        "| strategy | machine | containers | mount p50 s | mount max s | launch p50 s | "
        "launch p99 s | launch max s [interval] |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for strategy in args.strategies.split(","):
        for name, smt in MACHINES:
            for n in (int(x) for x in args.containers.split(",")):
                p = predict(
                    instance=name,
                    containers=n,
                    layers=args.layers,
                    strategy=strategy,
                    smt=smt,
                    replicates=args.replicates,
                )
                m, la = p.mount_s, p.launch_s
                label = name + ("" if smt else " (SMT off)")
                print(
                    f"| {strategy} | {label} | {n} | {m['p50'].value:.4f} | "
                    f"{m['max'].value:.4f} | {la['p50'].value:.3f} | {la['p99'].value:.3f} | "
                    f"{la['max'].value:.3f} [{la['max'].low:.3f}, {la['max'].high:.3f}] |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
