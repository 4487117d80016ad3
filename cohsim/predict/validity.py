"""Where a prediction's inputs stand: inside the range the model was checked on, outside it,
or beyond physical sense.

Checked (`CHECKED`): each range is what the model's answers were compared against, the
measurements or the reference engine:

- containers 1-400: measured bursts of 16-200 one-container workers and mount_bench's 1-16
  workers (calibration/data/devvm-16cpu-intel-xeon-f6m207/, burst/ and mount/), and the
  analytic engine against the simulation at 10-400 (benchmarks/bench_analytic.py, LARGE);
- layers 1-100: mount_bench at 1, 10 and 50 layers (the same host), the engines' agreement at
  1-100 (benchmarks/bench_analytic.py, FULL);
- CPUs 2-192: contention measured on 2- and 16-vCPU hosts (calibration/data/devvm-*), level 2
  against MCTOP's lock curves on 2-8-socket machines of up to 160 threads
  (calibration/data/reference/lock-scaling/), level 3's relations against the published study
  on 96-192-CPU instances (calibration/analysis/machine_order/);
- node mounts 0-5,000 (only where pinned, `--node-mounts`: drawn, it stays inside its prior):
  ns_bench's namespace copy measured at 0-5,000 extra mounts
  (calibration/data/devvm-2cpu-amd-epyc-f25m1/ns-copy/), and the prior's range 20-5,000
  (models/kernel/linux-6.18.toml, background.node_mounts).

A prior of the kernel model pinned outside its documented range (`--set`, `--priors`:
cohsim.predict.pins) is outside the checked range too.

Outside it a prediction still runs, and says so: one line on stderr before the work (the
command line) and `validity` in its JSON.

Beyond physical sense (`LIMITS`), an input is refused in one line before any work:

- containers > 100,000: every live container keeps at least its root file system's overlay
  mount in the host's mount namespace, and Linux refuses mounts past fs.mount-max (100,000 a
  namespace by default, Documentation/admin-guide/sysctl/fs.rst);
- layers > 500: overlayfs stacks at most 500 lower layers (OVL_MAX_STACK, fs/overlayfs/): a
  bigger image's overlay mount fails (EINVAL);
- node mounts > 100,000: fs.mount-max again, for the mounts already there;
- CPUs > 4,096: cohsim.machine.parts.MAX_VCPUS (a machine file is refused when it is read).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cohsim.errors import CohsimError
from cohsim.machine.parts import MAX_VCPUS


@dataclass(frozen=True)
class Range:
    """One input's checked range, inclusive, and what checked it."""

    low: int
    high: int
    unit: str  #: how the input is named in a message ("containers")
    source: str  #: where the checks are (a path in the repository)


#: the ranges the model was checked on (the module docstring says how)
CHECKED = {
    "containers": Range(1, 400, "containers", "calibration/data/devvm-16cpu-intel-xeon-f6m207/"),
    "layers": Range(1, 100, "layers", "benchmarks/bench_analytic.py"),
    "cpus": Range(2, 192, "CPUs", "calibration/analysis/machine_order/"),
    "node_mounts": Range(0, 5000, "node mounts", "calibration/data/devvm-2cpu-amd-epyc-f25m1/"),
}

#: the most of each input a real node can have, and why (refused beyond)
LIMITS: dict[str, tuple[int, str]] = {
    "containers": (100_000, "each holds a mount on the node, and fs.mount-max is 100,000"),
    "layers": (500, "overlayfs stacks at most 500 lower layers (OVL_MAX_STACK)"),
    "node_mounts": (100_000, "fs.mount-max is 100,000 mounts a namespace"),
    "cpus": (MAX_VCPUS, "beyond any single server"),
}


def refuse_absurd(**inputs: int | None) -> None:
    """A CohsimError for the first input beyond its `LIMITS` (None: not given)."""
    for name, value in inputs.items():
        limit, why = LIMITS[name]
        if value is not None and value > limit:
            raise CohsimError(
                f"{value:,} {CHECKED[name].unit}: beyond what a real node can run "
                f"({why}; at most {limit:,})"
            )


@dataclass(frozen=True)
class Validity:
    """Whether a prediction's inputs lie inside the ranges the model was checked on."""

    inputs: dict[str, int]  #: the inputs assessed (a replay without --layers has none)
    outside: tuple[str, ...]  #: one phrase per input outside its range

    @property
    def inside(self) -> bool:
        return not self.outside

    def warning(self) -> str:
        """The one line a command prints when an input is outside (empty when none is)."""
        if self.inside:
            return ""
        return (
            f"outside the range the model was checked on: {'; '.join(self.outside)}: "
            "read the answer as an extrapolation"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "inside_checked_range": self.inside,
            "inputs": dict(self.inputs),
            "checked": {
                name: {
                    "low": CHECKED[name].low,
                    "high": CHECKED[name].high,
                    "source": CHECKED[name].source,
                }
                for name in self.inputs
            },  # fmt: skip
            "outside": list(self.outside),
        }


def assess(
    *,
    containers: int,
    layers: int | None,
    cpus: int,
    node_mounts: int | None,
    pins: tuple[str, ...] = (),
) -> Validity:
    """Refuse what is beyond a real node (`refuse_absurd`), then say which inputs lie outside
    the checked ranges (`CHECKED`); `pins`: one phrase per prior the user pinned outside its
    documented range (cohsim.predict.pins.check), outside too."""
    given = {"containers": containers, "layers": layers, "cpus": cpus, "node_mounts": node_mounts}
    refuse_absurd(**given)
    inputs = {k: v for k, v in given.items() if v is not None}
    outside = tuple(
        f"{v:,} {CHECKED[k].unit} (checked {CHECKED[k].low:,}-{CHECKED[k].high:,})"
        for k, v in inputs.items()
        if not CHECKED[k].low <= v <= CHECKED[k].high
    )
    return Validity(inputs, outside + tuple(f"pinned {p}" for p in pins))
