"""How a sweep runs: the one place its options and their defaults are written.

A sweep runs each of its points as one prediction with the same run options (`run`: seed,
replicates, deadline, engine), on the same target (`target`: kernel model, calibration, pinned
priors; each point names its machine) and runtime. It keeps
finished points in a cache folder (cohsim.sweep.pointcache), and spreads the points over Dask
workers: an existing cluster's (`scheduler`, its address), or a local cluster of worker
processes, one thread each, as many as the CPUs this process may use (`workers` to say
otherwise; 1, or a handful of points, runs them in this process). None of these choices
changes a row: same seed, same bytes, whatever runs them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from cohsim.errors import CohsimError
from cohsim.predict.options import RunOptions
from cohsim.predict.question import Burst, Target
from cohsim.sweep import pointcache
from cohsim.workload.runtime import RUNTIMES

#: with no more points than this to compute, the local path runs them in this process (a
#: local cluster takes seconds to start)
SERIAL_POINTS = 2
#: a Dask scheduler's address as Dask reads it: [PROTOCOL://]HOST:PORT, HOST a name, an IPv4
#: address or an IPv6 one in brackets (distributed.comm.addressing: no port is an error there),
#: or an in-process cluster's inproc:// address (a library caller's)
_INPROC = re.compile(r"inproc://\S+")
_ADDRESS = re.compile(
    r"(?:(?:tcp|tls|ws|wss|ucx)://)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)"
    r":(\d{1,5})"
)


def check_address(address: str) -> None:
    """A CohsimError unless `address` has a scheduler address's form: refused at once, not
    after a connection attempt that times out with a traceback."""
    if _INPROC.fullmatch(address):
        return
    match = _ADDRESS.fullmatch(address)
    if not match or not 0 < int(match.group(1)) < 65536:
        raise CohsimError(
            f"--scheduler {address!r} is not a Dask scheduler address "
            "([tcp://]HOST:PORT, e.g. tcp://10.0.0.5:8786)"
        )


@dataclass(frozen=True)
class SweepOptions:
    """How a sweep's points are computed and kept; every default is written here."""

    #: the predictions' run options (each point runs with jobs=1: no pool inside a worker)
    run: RunOptions = field(default_factory=RunOptions)
    #: the cache folder; None: $COHSIM_CACHE/sweep or ~/.cache/cohsim/sweep; "off": none
    cache: Path | str | None = None
    #: address of an existing Dask scheduler (tcp://host:8786); None: a local cluster
    scheduler: str | None = None
    #: the local cluster's worker processes; None: the CPUs this process may use; 1: none
    #: (every point in this process)
    workers: int | None = None
    #: a progress bar on stderr (points done / total, time left)
    progress: bool = False
    #: what every point runs on besides its machine: the kernel model, the calibration and
    #: the priors pinned (cohsim.predict.question.Target; its machine is the point's)
    target: Target = field(default_factory=Target)
    #: the container runtime's own mount calls (cohsim.workload.runtime; the default is
    #: `Burst`'s)
    runtime: str = Burst.runtime
    #: how long to wait for the scheduler to answer, and for its first worker, s
    connect_timeout_s: float = 5.0

    def __post_init__(self) -> None:
        if self.workers is not None and (isinstance(self.workers, bool) or self.workers < 1):
            raise CohsimError(f"workers must be at least 1, not {self.workers!r}")
        if self.runtime not in RUNTIMES:
            raise CohsimError(f"unknown runtime {self.runtime!r} (expected {', '.join(RUNTIMES)})")
        self.target.no_machine("sweep")
        if self.scheduler is not None:
            check_address(self.scheduler)
        if not self.connect_timeout_s > 0:
            raise CohsimError(f"connect timeout must be positive, not {self.connect_timeout_s}")

    @property
    def point_run(self) -> RunOptions:
        """The run options of each point: `run` in one process, no record, no ranking."""
        return replace(self.run, jobs=1, record=False, explain=False)

    def cache_dir(self) -> Path | None:
        """The cache folder, or None when the cache is off."""
        if self.cache is None:
            return pointcache.default_dir()
        if str(self.cache).lower() == "off":
            return None
        return Path(self.cache)

    def local_workers(self) -> int:
        """How many worker processes the local cluster starts."""
        if self.workers is not None:
            return self.workers
        return max(1, len(os.sched_getaffinity(0)))
