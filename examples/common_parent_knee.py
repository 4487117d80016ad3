"""Why containerd's per-layer mounts have a knee, and how mapping the layers' common parent
once moves it away.

Run from a checkout:
    python examples/common_parent_knee.py [--instance mesh] [--containers 10,25,50,75,100]
        [--layers 50] [--engine analytic|des] [--replicates 8] [--out common_parent_knee.png]

One burst, three mount strategies (cohsim.workload.synth): per-layer (a bind per layer:
open_tree, mount_setattr, move_mount, then umount), common-parent (the layers' common parent
bound once) and lowerdir-plus (the layers handed to overlayfs as file descriptors, never
attached). Each attach or detach of a bind in the host's namespace holds namespace_sem for
writing while it walks the root mount's peer group, and every container waits for every
other's holds: they add up, and each grows with the mount table the burst fills. The knee is
the first burst whose launch p50 is twice a container's alone.

Prints each strategy's knee, one container's planned write holds and walks (cohsim.kernel.calls),
how the holds grow with the burst and what held the lock longest (the prediction's breakdown).
Figure: launch p50/p99 against containers, and namespace_sem's write holds per container.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from _burst import burst, counts, header, machine, parser, plot_launch

from cohsim.kernel.calls import plan_calls
from cohsim.kernel.costs import load_kernel
from cohsim.machine.catalog import Catalog
from cohsim.plots.save import save_figure
from cohsim.predict import Prediction, burst_workload

STRATEGIES = {"per-layer": "tab:red", "common-parent": "tab:blue", "lowerdir-plus": "tab:green"}
Runs = dict[str, tuple[Prediction, list[Prediction]]]  #: strategy -> (alone, the bursts)


def planned(strategy: str, layers: int) -> tuple[int, int]:
    """One container's namespace_sem write holds and peer-group walks, as level 3 plans them."""
    events = burst_workload(strategy, 1, layers).threads[0].events
    steps = plan_calls(events, load_kernel(), layers, 0.0)
    writes = sum(1 for s in steps if s.op.ns_write_ns > 0 or s.op.per_mount_write_ns > 0)
    return writes, sum(1 for s in steps if s.group_walk)


def write_s(p: Prediction, per_container: bool = False) -> float:
    """namespace_sem's write holds in the burst (the breakdown's), s; or per container, ms."""
    assert p.breakdown is not None
    held = sum(p.breakdown.ns_write_s.values())
    return 1e3 * held / p.containers if per_container else held


def knee(alone: Prediction, preds: list[Prediction]) -> Prediction | None:
    """The first burst whose launch p50 is at least twice a container's alone."""
    first = alone.launch_s["p50"].value
    return next((p for p in preds if p.launch_s["p50"].value >= 2 * first), None)


def report(runs: Runs, layers: int, cpus: int) -> None:
    """What the figure shows, from the predictions."""
    bursts = runs["per-layer"][1]
    first, n = bursts[0].containers, bursts[-1].containers
    for strategy, (alone, preds) in runs.items():
        k, a, t = knee(alone, preds), alone.launch_s["p50"].value, preds[-1].launch_s["p50"].value
        where = f"knee at {k.containers}" if k else f"no knee up to {n}"
        print(
            f"{strategy}: {a:.2f} s alone, {t:.2f} s at {n} containers ({t / a:.1f}x); {where}, "
            f"where the burst's write holds add up to {write_s(k or preds[-1]):.2f} s."
        )
    plans = {s: planned(s, layers) for s in runs}
    print(
        "One container plans namespace_sem write holds and peer-group walks: "
        + "; ".join(f"{s} {w} and {g}" for s, (w, g) in plans.items())
        + "."
    )
    grow = [
        f"{s} {write_s(p[0], True):.1f} -> {write_s(p[-1], True):.1f} ms"
        for s, (_, p) in runs.items()
    ]
    print(
        f"A container's holds add up to more as the burst grows ({first} -> {n}; each walks a "
        f"peer group and a table the burst fills): {'; '.join(grow)}."
    )
    held = [f"{s} {p[-1].breakdown.dominant}" for s, (_, p) in runs.items() if p[-1].breakdown]
    print(f"At {n}, the mechanism holding namespace_sem longest: {', '.join(held)}.")
    (w1, g1), (w2, g2) = plans["per-layer"], plans["common-parent"]
    k1, k2 = (knee(*runs[s]) for s in ("per-layer", "common-parent"))
    if k1:
        to = f"{k2.containers}" if k2 else f"beyond {n}"
        print(
            f"So common-parent, with {w1 / w2:.0f}x fewer write holds and {g1 / g2:.0f}x fewer "
            f"walks per container, moves the knee from {k1.containers} containers to {to}."
        )
    if n > cpus:
        print(f"(Past {cpus} containers they also share the machine's {cpus} CPUs.)")


def main() -> None:
    ap = parser(__doc__, "common_parent_knee.png")
    ap.set_defaults(containers="10,25,50,75,100")
    ap.add_argument("--instance", default="mesh", help="an archetype or an instance type")
    args = ap.parse_args()
    ns = counts(ap, args.containers)
    m = machine(Catalog(), args.instance)
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    runs: Runs = {}
    for strategy, color in STRATEGIES.items():
        alone, *preds = burst(args, [1, *ns], instance=m.name, strategy=strategy)
        runs[strategy] = (alone, preds)
        plot_launch(left, preds, strategy, color)
        right.plot(ns, [write_s(p, True) for p in preds], "o-", color=color, label=strategy)
        if k := knee(alone, preds):
            left.axvline(k.containers, color=color, ls=":", lw=1)
    left.set_title(
        f"{m.name}, {args.layers}-layer image ({args.engine} engine)\n"
        "knees dotted: the first burst whose p50 is twice a container's alone",
        fontsize=9,
    )
    right.set(yscale="log", xlabel="containers launched at once", ylabel="ms per container")
    right.set_title(
        "namespace_sem's write holds per container:\nwhat each makes the others wait for",
        fontsize=9,
    )
    right.legend(fontsize=7)
    save_figure(fig, args.out)
    header(args)
    report(runs, args.layers, m.vcpus)
    print(f"Figure: {args.out}")


if __name__ == "__main__":
    main()
