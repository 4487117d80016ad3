"""What turning SMT off, or keeping to one socket, does to a burst of container launches.

Run from a checkout:
    python examples/smt_and_sockets.py [--smt-instance m7i.metal-24xl]
        [--socket-instance r5.metal] [--containers 10,25,50,75,100] [--layers 50]
        [--engine analytic|des] [--replicates 8] [--out smt_and_sockets.png]

Two hardware choices an operator can make without changing containerd: boot with SMT off
(one hardware thread per core: half the CPUs), or run on one socket of a two-socket machine
(cohsim.machine's `with_smt` / `with_sockets` variants; `predict(smt=False)` /
`predict(sockets=1)`). Fewer CPUs make what the kernel does per CPU cheaper: the per-CPU
counter sums under mount_lock, the expedited grace periods, and (one socket) the cache line
never crosses the socket link, which level 2 prices (cohsim.lock). But fewer CPUs also run
the burst: past their count, containers share them.

Prints, per choice, the launch p99 with and without it at each burst size, where it turns
from a gain to a loss (if it does), and how long mount_lock and namespace_sem were held at the
largest burst; writes one figure, a panel per choice: launch p50/p99 against containers.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
from _burst import burst, counts, handoff_ns, header, machine, parser, pct, plot_launch

from cohsim.machine.catalog import Catalog
from cohsim.machine.model import Machine
from cohsim.plots.save import save_figure
from cohsim.predict import Prediction


def report(what: str, ms: tuple[Machine, Machine], runs: list[list[Prediction]], seed: int) -> None:
    """The choice `what` (machine ms[0] -> ms[1]) in sentences, from its predictions."""
    base, var = runs
    p99 = [
        (b.launch_s["p99"].value, v.launch_s["p99"].value) for b, v in zip(base, var, strict=True)
    ]
    print(
        f"{what} ({ms[0].vcpus} -> {ms[1].vcpus} CPUs), launch p99: "
        + "; ".join(
            f"{b.containers}: {x:.2f} -> {y:.2f} s" for b, (x, y) in zip(base, p99, strict=True)
        )
        + "."
    )
    gains = [y < x for x, y in p99]
    if all(gains) or not any(gains):
        verdict = "faster" if all(gains) else "slower"
        print(f"  It is {verdict} at every burst size here.")
    else:
        turn = next(b.containers for b, g in zip(base[1:], gains[1:], strict=True) if g != gains[0])
        now = "slower" if gains[0] else "faster"
        print(f"  It turns {now} from {turn} containers.")
    b, v = base[-1], var[-1]
    iv = b.launch_s["p99"]
    inside = iv.low <= v.launch_s["p99"].value <= iv.high
    print(
        f"  At {b.containers}: {pct(v.launch_s['p99'].value, iv.value):+.1f} % "
        f"({'inside' if inside else 'outside'} the interval [{iv.low:.2f}, {iv.high:.2f}] s); "
        f"mount_lock held {b.locks['mount_lock']['hold_s']:.3f} -> "
        f"{v.locks['mount_lock']['hold_s']:.3f} s, namespace_sem "
        f"{b.locks['namespace_sem']['hold_s']:.2f} -> {v.locks['namespace_sem']['hold_s']:.2f} s; "
        f"level 2's hand-off among all CPUs {handoff_ns(ms[0], [ms[0].vcpus], seed)[0]:.0f} -> "
        f"{handoff_ns(ms[1], [ms[1].vcpus], seed)[0]:.0f} ns."
    )


def main() -> None:
    ap = parser(__doc__, "smt_and_sockets.png")
    ap.set_defaults(containers="10,25,50,75,100")
    ap.add_argument("--smt-instance", default="m7i.metal-24xl", help="a machine with SMT")
    ap.add_argument("--socket-instance", default="r5.metal", help="a two-socket machine")
    args = ap.parse_args()
    ns = counts(ap, args.containers)
    catalog = Catalog()
    smt, two = machine(catalog, args.smt_instance), machine(catalog, args.socket_instance)
    choices: list[tuple[str, Machine, Machine, dict[str, Any]]] = [
        (f"SMT off on {smt.name}", smt, smt.with_smt(False), {"smt": False}),
        (f"One socket of {two.name}", two, two.with_sockets(1), {"sockets": 1}),
    ]
    header(args)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for (what, base, alt, variant), ax in zip(choices, axes, strict=True):
        runs = [burst(args, ns, instance=base.name, **kw) for kw in ({}, variant)]
        for m, preds, color in zip((base, alt), runs, ("tab:blue", "tab:orange"), strict=True):
            plot_launch(ax, preds, f"{m.name} ({m.vcpus} CPUs)", color)
        ax.set_title(f"{what}: {args.layers}-layer image ({args.engine} engine)", fontsize=9)
        report(what, (base, alt), runs, args.seed)
    save_figure(fig, args.out)
    print(f"Figure: {args.out}")


if __name__ == "__main__":
    main()
