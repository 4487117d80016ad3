"""The typed parts a `cohsim.machine.model.Machine` is composed of: `Topology` (counts of
sockets, LLC domains, cores and threads, and the interconnect), `Microarch` (PAUSE, clock) and
`Coherence` (the per-class cache-line transfer latencies), `Walks` (how a walk of a list of
mounts bends with its length, where measured), each checked when made, and the classes of a
pair of hardware threads (`PairClass`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum

from cohsim.errors import CohsimError

INTERCONNECTS = ("mesh", "chiplet", "cmn")


class PairClass(IntEnum):
    """Topology class of a pair of hardware threads, as far as a shared cache line sees it."""

    SAME = 0  #: the same hardware thread
    SMT = 1  #: two hardware threads of one core
    SAME_LLC = 2  #: two cores of one LLC domain (a CCX, or a socket's mesh/CMN LLC)
    CROSS_LLC = 3  #: two LLC domains of one socket, line homed on that socket
    CROSS_SOCKET = 4  #: two sockets
    REMOTE_HOME = 5  #: two LLC domains of one socket, line homed on another socket

    @property
    def label(self) -> str:
        return self.name.lower()


#: the most hardware threads a machine may have: beyond any single-system-image server (the
#: largest sold have under 2,000: HPE Superdome Flex, 32 sockets x 28 cores x 2 = 1,792), the
#: CPU count pause_bench accepts (calibration/bench/pause_bench.c, MAX_CPUS), and where the
#: model's per-CPU-pair tables (vcpus^2 entries: 16.8 M here) still fit in memory; 100,000
#: cores a socket ended in a numpy MemoryError (37 GiB for one boolean matrix)
MAX_VCPUS = 4096


@dataclass(frozen=True)
class Topology:
    """How many of each part, and how they nest."""

    interconnect: str  #: "mesh" (Intel CHA mesh + TOR), "chiplet" (AMD CCX + IO die) or "cmn" (Arm)
    sockets: int  #: physical packages
    cores_per_socket: int  #: physical cores in one socket
    threads_per_core: int  #: hardware threads (SMT siblings) per core: 1 or 2
    llc_domain_cores: int  #: cores sharing one last-level cache (a CCX, or a whole socket)
    numa_nodes: int  #: NUMA nodes the firmware exposes (informational: no c2c effect is modelled)

    def __post_init__(self) -> None:
        if self.interconnect not in INTERCONNECTS:
            raise CohsimError(
                f"interconnect must be one of {', '.join(INTERCONNECTS)}, not {self.interconnect!r}"
            )
        for name in (
            "sockets",
            "cores_per_socket",
            "threads_per_core",
            "llc_domain_cores",
            "numa_nodes",
        ):
            if getattr(self, name) < 1:
                raise CohsimError(f"{name} must be at least 1, not {getattr(self, name)}")
        if self.threads_per_core > 2:
            raise CohsimError(f"threads_per_core must be 1 or 2, not {self.threads_per_core}")
        if self.cores_per_socket % self.llc_domain_cores:
            raise CohsimError(
                f"cores_per_socket ({self.cores_per_socket}) is not a multiple of "
                f"llc_domain_cores ({self.llc_domain_cores})"
            )
        if self.numa_nodes % self.sockets:
            raise CohsimError(
                f"numa_nodes ({self.numa_nodes}) is not a multiple of sockets ({self.sockets})"
            )
        if self.vcpus > MAX_VCPUS:
            raise CohsimError(
                f"{self.vcpus:,} hardware threads ({self.sockets} x {self.cores_per_socket} x "
                f"{self.threads_per_core}): beyond any single server; cohsim models at most "
                f"{MAX_VCPUS:,}"
            )

    @property
    def cores(self) -> int:
        return self.sockets * self.cores_per_socket

    @property
    def vcpus(self) -> int:
        return self.cores * self.threads_per_core

    @property
    def llc_domains_per_socket(self) -> int:
        return self.cores_per_socket // self.llc_domain_cores

    @property
    def llc_domains(self) -> int:
        return self.sockets * self.llc_domains_per_socket


#: Microarch's cache figures: all three given or none
CACHE_KEYS = ("l2_kib", "l2_load_ns", "llc_load_ns")


@dataclass(frozen=True)
class Microarch:
    """The core's microarchitecture, as far as spinning on a lock is concerned."""

    uarch: str  #: microarchitecture name, e.g. "Cascade Lake-SP"
    pause_cycles: float  #: latency of one PAUSE (x86) or YIELD (arm64) spin-wait hint, cycles
    freq_ghz: float  #: core clock under all-core load, GHz
    #: CPU work runs this much slower while every CPU of the machine is busy, from sharing the
    #: topology does not show (a VM's vCPUs on SMT siblings or shared host cores); measured by
    #: calibration/bench/corun_bench.c. 1 on bare metal, where SMT is modelled from the topology.
    corun_slowdown: float = 1.0
    #: the caches a walk of the kernel's mount lists runs from (cohsim.kernel.walk prices the
    #: walks by them where no [walks] were measured): a core's private L2 (KiB), one load that
    #: hits it and one that hits the last-level cache (ns at `freq_ghz`: public figures,
    #: calibration/data/reference/cache_latency.csv). None: not known (the kernel model's line)
    l2_kib: float | None = None
    l2_load_ns: float | None = None
    llc_load_ns: float | None = None

    def __post_init__(self) -> None:
        if not self.pause_cycles > 0:
            raise CohsimError(f"pause_cycles must be positive, not {self.pause_cycles}")
        if not self.freq_ghz > 0:
            raise CohsimError(f"freq_ghz must be positive, not {self.freq_ghz}")
        if not self.corun_slowdown >= 1.0:
            raise CohsimError(f"corun_slowdown must be at least 1, not {self.corun_slowdown}")
        caches = {k: getattr(self, k) for k in CACHE_KEYS}
        given = [k for k, v in caches.items() if v is not None]
        if given and len(given) != len(caches):
            missing = ", ".join(k for k in CACHE_KEYS if k not in given)
            raise CohsimError(f"{', '.join(given)} given without {missing}: give all three")
        for key in given:
            if not (math.isfinite(caches[key]) and caches[key] > 0):
                raise CohsimError(f"{key} must be a positive number, not {caches[key]}")
        if given and caches["llc_load_ns"] < caches["l2_load_ns"]:
            raise CohsimError(
                f"llc_load_ns ({caches['llc_load_ns']}) must be at least l2_load_ns "
                f"({caches['l2_load_ns']})"
            )

    @property
    def caches_known(self) -> bool:
        """Whether the L2 and LLC figures are given."""
        return self.llc_load_ns is not None

    @property
    def pause_ns(self) -> float:
        """One spin-wait hint in nanoseconds."""
        return self.pause_cycles / self.freq_ghz


@dataclass(frozen=True)
class Coherence:
    """One-way cache-line transfer latency per pair class, ns (the core-to-core benchmark's value).

    A value is required exactly where the topology has such pairs; `None` elsewhere.
    """

    same_llc_ns: float  #: two cores of one LLC domain
    smt_ns: float | None = None  #: two SMT siblings of one core
    cross_llc_ns: float | None = None  #: two LLC domains of one socket, line homed there
    cross_socket_ns: float | None = None  #: two sockets

    def values(self) -> dict[str, float]:
        """The latencies that are set, by key."""
        keys = ("smt_ns", "same_llc_ns", "cross_llc_ns", "cross_socket_ns")
        return {k: v for k in keys if (v := getattr(self, k)) is not None}

    def check(self, topology: Topology) -> None:
        """Raise if a latency the topology needs is missing, negative, or out of order."""
        needed = {
            "smt_ns": topology.threads_per_core > 1,
            "cross_llc_ns": topology.llc_domains_per_socket > 1,
            "cross_socket_ns": topology.sockets > 1,
        }
        for key, need in needed.items():
            if need and getattr(self, key) is None:
                raise CohsimError(f"coherence.{key} is required by this topology but missing")
        for key, value in self.values().items():
            if not value > 0:
                raise CohsimError(f"coherence.{key} must be positive, not {value}")
        chain = [(k, v) for k, v in self.values().items() if needed.get(k, True)]
        for (k1, v1), (k2, v2) in zip(chain, chain[1:], strict=False):
            strict = k1 == "smt_ns" or k2 == "cross_llc_ns"
            if v2 < v1 or (strict and v2 == v1):
                raise CohsimError(
                    f"coherence.{k2} ({v2}) must be "
                    f"{'greater than' if strict else 'at least'} {k1} ({v1})"
                )


#: one band of a walk's cost: (the list length it starts at, its cost per element / the line)
Band = tuple[float, float]


@dataclass(frozen=True)
class Walks:
    """What walking one of the kernel's lists of mounts costs on this machine against the
    kernel model's per-element line (models/kernel/linux-6.18.toml: `per_child_ns`, measured
    where the cost was flat in the list's length): per band of lengths, each element in the
    band costs `scale` times the line (cohsim.kernel.walk). `children`: a mount's children
    (open_tree's __has_locked_children()); `peers`: a peer group (propagate_mnt(), the
    unmounts' walks of the parent's peers). Empty: the line at every length (the kernel
    model's `peer_walk_scale` prices it then). Measured by `cohsim bench prop --ring`."""

    children: tuple[Band, ...] = ()
    peers: tuple[Band, ...] = ()

    def __post_init__(self) -> None:
        for name in ("children", "peers"):
            bands = getattr(self, name)
            if not bands:
                continue
            starts = [b[0] for b in bands]
            if starts[0] != 0 or any(b <= a for a, b in zip(starts, starts[1:], strict=False)):
                raise CohsimError(f"walks.{name}_from must start at 0 and increase, not {starts}")
            if not all(math.isfinite(s) and s > 0 for _, s in bands):
                raise CohsimError(f"walks.{name}_scale must be positive numbers")

    def __bool__(self) -> bool:
        return bool(self.children or self.peers)
