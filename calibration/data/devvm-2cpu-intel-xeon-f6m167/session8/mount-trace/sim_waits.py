"""Where the simulated time goes under a committed fit, per mount_bench sequence (us).

    python sim_waits.py [FIT.json]

For the shapes compared with this folder's traces and session 6's, it prints the mean per
sequence of the simulated namespace_sem wait and hold, the grace-period sleep and the
run-queue wait, and the mean per call of the large ops. Each shape is simulated as the fit
simulates it (`Calibration.mount_bench_kernel`, think time, jitter, the fit's line costs, 4
containers x 2 sequences per worker), over 4 seeds.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from cohsim.calibrate import load_fit, simulate_run
from cohsim.kernel.costs import load_kernel
from cohsim.kernel.launch import LaunchSim
from cohsim.kernel.linecosts import LineCosts
from cohsim.machine.catalog import Catalog

ROOT = Path(__file__).resolve().parents[5]
SHAPES = (("per-layer", 1), ("common-parent", 10))
OPS = ("mount_overlay", "open_tree_clone", "move_mount", "umount_detach", "umount")
OPS += ("umount_overlay",)


class FitSim:
    """A committed fit's simulation of mount_bench shapes, as the fit simulates them."""

    def __init__(self, path: str | Path) -> None:
        self.fit = load_fit(path)
        self.machine = Catalog().get(self.fit.instance_)
        self.kernel = self.fit.host_kernel(self.fit.kernel_params(load_kernel(self.fit.kernel)))
        self.costs = LineCosts(self.machine, seed=self.fit.seed)

    def run(
        self, strategy: str, workers: int, layers: int, seed: int
    ) -> tuple[LaunchSim, list[tuple[int, str, int, int]]]:
        """One simulation of the shape (4 containers x 2 sequences a worker) and its calls."""
        calls: list[tuple[int, str, int, int]] = []
        sims: list[LaunchSim] = []
        simulate_run(
            self.machine,
            self.fit.mount_bench_kernel(self.kernel, strategy, layers),
            strategy,
            workers,
            layers,
            containers=4,
            think_ns=self.fit.think_ns_[strategy][str(layers)],
            seed=seed,
            costs=self.costs,
            jitter=True,
            calls=calls,
            sims=sims,
        )
        return sims[0], calls


def main(argv: list[str]) -> int:
    fs = FitSim(argv[0] if argv else ROOT / "calibration/fits/devvm-2cpu-intel-xeon-f6m167.json")
    for strategy, layers in SHAPES:
        for workers in (2, 4):
            per_seq: dict[str, list[float]] = {}
            per_call: dict[str, list[float]] = {}
            for seed in range(4):
                sim, calls = fs.run(strategy, workers, layers, seed)
                seqs = workers * 4 * 2
                ns = sim.stats["namespace_sem"]
                for name, v in (
                    ("namespace_sem wait", ns.wait_ns),
                    ("namespace_sem hold", ns.hold_ns),
                    ("grace-period sleep", sum(r.rcu_wait_ns for r in sim.results)),
                    ("run queue", sum(r.run_queue_ns for r in sim.results)),
                ):
                    per_seq.setdefault(name, []).append(v / seqs)
                for op in OPS:
                    d = [end - start for _, o, start, end in calls if o == op]
                    if d:
                        per_call.setdefault(op, []).append(statistics.fmean(d))
            print(
                f"{strategy} {workers} workers {layers} layers: per sequence "
                + ", ".join(f"{n} {statistics.fmean(v) / 1e3:.1f}" for n, v in per_seq.items())
                + "; per call "
                + ", ".join(f"{n} {statistics.fmean(v) / 1e3:.1f}" for n, v in per_call.items())
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
