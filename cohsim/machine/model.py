"""The hardware model (level 1): hardware threads, cores, LLC domains, sockets, and the cost of
moving one cache line between any two of them.

A `Machine` is composed of typed parts — `Topology` (counts), `Microarch` (PAUSE, clock) and
`Coherence` (per-class cache-line transfer latencies) — and is held as a networkx graph:

    cpu --- core --- llc --- hub(socket) === hub(other socket)

`hub` is a socket's home agent: the mesh's CHAs (Intel), the IO die's directory (AMD) or the CMN
home nodes (Arm). Edge weights are chosen so that the graph reproduces the per-class latencies,
and every transfer is priced by walking the graph as the coherence protocol does: the requester
asks the *coherence point*, which forwards to the owner, which sends the data to the requester:

    transfer(owner -> requester) = d(requester, P) + d(P, owner) + d(owner, requester)

The coherence point P is the lowest structure both threads share (their core for SMT siblings,
their LLC domain inside one CCX or one mesh LLC) and otherwise the *line's home agent*. That one
rule produces the remote-home effect seen in the AMD two-socket matrices (two cores of socket 1
exchanging a line homed on socket 0 pay two socket crossings, as much as a cross-socket pair),
and its absence on Intel, whose whole socket is one LLC domain (see
calibration/data/core-to-core-latency/README.md, caveat on issue #97).

CPU numbering is Linux's on these servers: cores are numbered socket-major (0..C-1 on socket 0,
C..2C-1 on socket 1, ...) and the SMT sibling of CPU k is k + total cores, so a model's matrix
lines up with a measured one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from cohsim.errors import CohsimError
from cohsim.machine.parts import Coherence, Microarch, PairClass, Topology, Walks

if TYPE_CHECKING:  # networkx is imported where the graph is walked: a prediction never does
    import networkx as nx

#: the link from a node of each kind up the graph (between two hubs: "hub-hub")
_LINKS = {"cpu": "cpu-core", "core": "core-llc", "llc": "llc-hub", "hub": "hub-hub"}
_RANK = {"cpu": 0, "core": 1, "llc": 2, "hub": 3}


@dataclass(frozen=True)
class Machine:
    """A server CPU: topology, microarchitecture and coherence latencies, with provenance.

    `sources` maps a parameter ("topology", "microarch.pause_cycles", "coherence", ...) to where
    its number comes from, or to "assumption: why" when no data exists.
    """

    name: str  #: catalog name, e.g. "c5.metal"
    topology: Topology
    microarch: Microarch
    coherence: Coherence
    kind: str = "instance"  #: "instance" (a cloud instance type) or "server" (a measured host)
    vendor: str = ""  #: CPU vendor
    cpu_model: str = ""  #: CPU model string
    family: str = ""  #: parameter family: machines of one family share transferable parameters
    description: str = ""  #: one line for people
    #: how walking a list of mounts bends with its length here (empty: not measured)
    walks: Walks = field(default_factory=Walks)
    sources: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        try:
            self.coherence.check(self.topology)
        except CohsimError as exc:
            raise CohsimError(exc.what, self.name) from None

    # ----- numbering -----------------------------------------------------------------------

    @property
    def vcpus(self) -> int:
        return self.topology.vcpus

    @cached_property
    def cpu_arrays(self) -> dict[str, np.ndarray]:
        """Per-CPU `socket`, `core`, `llc`, `thread` indices (Linux numbering), as int arrays."""
        t = self.topology
        cpu = np.arange(t.vcpus)
        core = cpu % t.cores
        return {
            "thread": cpu // t.cores,
            "core": core,
            "socket": core // t.cores_per_socket,
            "llc": core // t.llc_domain_cores,
        }

    def cpu_of(self, socket: int, core: int, thread: int = 0) -> int:
        """Linux CPU id of `thread` on core `core` (index within the socket) of `socket`."""
        t = self.topology
        return thread * t.cores + socket * t.cores_per_socket + core

    def _check_cpu(self, cpu: int) -> None:
        if not 0 <= cpu < self.vcpus:
            raise CohsimError(f"cpu {cpu} is out of range 0..{self.vcpus - 1}", self.name)

    def _check_home(self, home: int | None) -> None:
        if home is not None and not 0 <= home < self.topology.sockets:
            raise CohsimError(
                f"home socket {home} is out of range 0..{self.topology.sockets - 1}", self.name
            )

    # ----- the graph -------------------------------------------------------------------------

    @cached_property
    def edge_weights_ns(self) -> dict[str, float]:
        """Weight of each edge kind, derived so that graph walks reproduce `coherence`."""
        c, t = self.coherence, self.topology
        smt = c.smt_ns or 0.0
        several = t.llc_domains_per_socket > 1
        cross_llc = c.cross_llc_ns if several and c.cross_llc_ns else c.same_llc_ns
        cross_socket = c.cross_socket_ns if c.cross_socket_ns is not None else cross_llc
        return {
            "cpu-core": smt / 4,
            "core-llc": (c.same_llc_ns - smt) / 4,
            "llc-hub": (cross_llc - c.same_llc_ns) / 4,
            "hub-hub": (cross_socket - cross_llc) / 2,
        }

    @cached_property
    def graph(self) -> nx.Graph:
        """The topology graph. Nodes are tuples ("cpu"|"core"|"llc"|"hub", index)."""
        import networkx as nx

        w = self.edge_weights_ns
        g = nx.Graph(name=self.name)
        arr = self.cpu_arrays
        for s in range(self.topology.sockets):
            g.add_node(("hub", s), kind="hub", socket=s)
        for d in range(self.topology.llc_domains):
            s = d // self.topology.llc_domains_per_socket
            g.add_node(("llc", d), kind="llc", socket=s)
            g.add_edge(("llc", d), ("hub", s), weight=w["llc-hub"], link="llc-hub")
        for k in range(self.topology.cores):
            d = k // self.topology.llc_domain_cores
            g.add_node(("core", k), kind="core", llc=d)
            g.add_edge(("core", k), ("llc", d), weight=w["core-llc"], link="core-llc")
        for cpu in range(self.vcpus):
            k = int(arr["core"][cpu])
            g.add_node(("cpu", cpu), kind="cpu", core=k)
            g.add_edge(("cpu", cpu), ("core", k), weight=w["cpu-core"], link="cpu-core")
        for s1 in range(self.topology.sockets):
            for s2 in range(s1 + 1, self.topology.sockets):
                g.add_edge(("hub", s1), ("hub", s2), weight=w["hub-hub"], link="socket")
        return g

    def _distance(self, a: tuple[str, int], b: tuple[str, int]) -> float:
        """The graph's shortest-path length from `a` to `b`. The graph is a tree under
        the hubs, whose links all weigh the same: with no negative weight the shortest path
        is the tree's, through the direct link between two hubs, and its length is summed
        from `a` as networkx's Dijkstra sums it (the same float; tests/machine checks every
        catalog machine). networkx itself answers otherwise (and a prediction, which only
        asks for lengths, need not import it)."""
        w = self.edge_weights_ns
        if min(w.values()) < 0:
            import networkx as nx

            return float(nx.shortest_path_length(self.graph, a, b, weight="weight"))
        up, down = self._up(a), self._up(b)
        above = {node: i for i, node in enumerate(down)}
        path = []
        for node in up:
            path.append(node)
            if node in above:
                path += reversed(down[: above[node]])
                break
        else:  # two sockets: from a's hub straight to b's
            path += reversed(down)
        d: float = 0
        for u, v in zip(path, path[1:], strict=False):
            lower = u if _RANK[u[0]] <= _RANK[v[0]] else v
            d = d + w[_LINKS[lower[0]]]
        return float(d)

    def _up(self, node: tuple[str, int]) -> list[tuple[str, int]]:
        """`node` and the nodes above it in the graph, up to its socket's hub."""
        t = self.topology
        kind, i = node
        out = [node]
        if kind == "cpu":
            i = int(self.cpu_arrays["core"][i])
            out.append(("core", i))
            kind = "core"
        if kind == "core":
            i //= t.llc_domain_cores
            out.append(("llc", i))
            kind = "llc"
        if kind == "llc":
            out.append(("hub", i // t.llc_domains_per_socket))
        return out

    def coherence_point(
        self, owner: int, requester: int, home: int | None = None
    ) -> tuple[str, int]:
        """The node that orders a transfer between two CPUs: shared core, shared LLC, or home.

        `home` is the socket whose home agent owns the line; None means the line is homed on the
        requester's socket (first-touch by the requester, as a NUMA-aware benchmark does).
        """
        arr = self.cpu_arrays
        if arr["core"][owner] == arr["core"][requester]:
            return ("core", int(arr["core"][owner]))
        if arr["llc"][owner] == arr["llc"][requester]:
            return ("llc", int(arr["llc"][owner]))
        return ("hub", int(arr["socket"][requester]) if home is None else home)

    def transfer_ns(self, owner: int, requester: int, home: int | None = None) -> float:
        """One-way latency of moving the line from `owner` to `requester`, walking the graph."""
        self._check_cpu(owner)
        self._check_cpu(requester)
        self._check_home(home)
        if owner == requester:
            return 0.0
        p = self.coherence_point(owner, requester, home)
        o, r = ("cpu", owner), ("cpu", requester)
        return self._distance(r, p) + self._distance(p, o) + self._distance(o, r)

    def route(self, cpu: int, home: int) -> list[tuple[str, int]]:
        """The nodes a request from `cpu` to the home agent of socket `home` passes through."""
        self._check_cpu(cpu)
        self._check_home(home)
        import networkx as nx

        return list(nx.shortest_path(self.graph, ("cpu", cpu), ("hub", home), weight="weight"))

    # ----- classes and matrices --------------------------------------------------------------

    def pair_class(self, a: int, b: int, home: int | None = None) -> PairClass:
        """The class of a pair of CPUs for a line homed on socket `home` (None: the pair's own)."""
        self._check_cpu(a)
        self._check_cpu(b)
        self._check_home(home)
        return PairClass(int(self.class_matrix(home)[a, b]))

    def class_matrix(self, home: int | None = None) -> np.ndarray:
        """PairClass codes for every pair of CPUs (int8, symmetric)."""
        arr = self.cpu_arrays
        sock, llc, core = arr["socket"], arr["llc"], arr["core"]
        same_sock = sock[:, None] == sock[None, :]
        cls = np.full((self.vcpus, self.vcpus), int(PairClass.CROSS_SOCKET), dtype=np.int8)
        cross_llc = same_sock & (llc[:, None] != llc[None, :])
        if home is None:
            cls[cross_llc] = PairClass.CROSS_LLC
        else:
            local = sock[:, None] == home
            cls[cross_llc & local] = PairClass.CROSS_LLC
            cls[cross_llc & ~local] = PairClass.REMOTE_HOME
        cls[llc[:, None] == llc[None, :]] = PairClass.SAME_LLC
        cls[core[:, None] == core[None, :]] = PairClass.SMT
        np.fill_diagonal(cls, PairClass.SAME)
        return cls

    def class_latency_ns(self, home: int | None = None) -> dict[PairClass, float]:
        """Latency of each class present on this machine, from one representative pair each.

        Every value comes from `transfer_ns`, i.e. from walking the graph.
        """
        cls = self.class_matrix(home)
        out: dict[PairClass, float] = {}
        for c in PairClass:
            if c is PairClass.SAME:
                continue
            idx = np.argwhere(cls == c)
            if len(idx):
                a, b = (int(x) for x in idx[0])
                out[c] = self.transfer_ns(b, a, home)
        return out

    def latency_matrix(self, home: int | None = None) -> np.ndarray:
        """One-way transfer latency (ns) between every pair of CPUs, float64, symmetric."""
        cls = self.class_matrix(home)
        table = np.zeros(len(PairClass))
        for c, v in self.class_latency_ns(home).items():
            table[c] = v
        return table[cls]

    @cached_property
    def percpu_walk_ns(self) -> float:
        """One walk over every CPU's line, one line at a time: the mean, over the CPUs, of the
        latencies from that CPU to every CPU (home socket 0). A per-CPU counter's sum or a
        per-CPU area's zeroing costs this over the lines fetched at a time
        (cohsim.kernel.callcost.percpu_sum_ns). Computed once per machine."""
        return float(self.latency_matrix(0).sum(axis=1).mean())

    # ----- what-if variants ------------------------------------------------------------------

    def with_smt(self, enabled: bool) -> Machine:
        """The same machine with SMT turned off (one thread per core) or left as it is."""
        if enabled or self.topology.threads_per_core == 1:
            return self
        topo = replace(self.topology, threads_per_core=1)
        return replace(self, name=f"{self.name}+smt-off", topology=topo)

    def with_sockets(self, sockets: int) -> Machine:
        """The same machine restricted to its first `sockets` sockets."""
        if sockets == self.topology.sockets:
            return self
        if not 1 <= sockets <= self.topology.sockets:
            raise CohsimError(
                f"sockets must be between 1 and {self.topology.sockets}, not {sockets}", self.name
            )
        per_node = self.topology.numa_nodes // self.topology.sockets
        topo = replace(self.topology, sockets=sockets, numa_nodes=per_node * sockets)
        return replace(self, name=f"{self.name}+{sockets}s", topology=topo)

    def with_cores(self, cores: int) -> Machine:
        """The same one-socket machine with only its first `cores` cores (each with its SMT
        siblings), in LLC domains of at most `cores`: what a run confined to them sees as far
        as the model goes (every per-CPU term, the grace period's and the per-CPU walks', then
        counts only these CPUs)."""
        t = self.topology
        if cores == t.cores_per_socket and t.sockets == 1:
            return self
        if t.sockets != 1:
            raise CohsimError(f"with_cores needs one socket, not {t.sockets}", self.name)
        llc = min(t.llc_domain_cores, cores)
        if not 1 <= cores <= t.cores_per_socket or cores % llc:
            raise CohsimError(
                f"cores must be between 1 and {t.cores_per_socket} and whole LLC domains of "
                f"{t.llc_domain_cores}, not {cores}",
                self.name,
            )
        topo = replace(t, cores_per_socket=cores, llc_domain_cores=llc)
        return replace(self, name=f"{self.name}+{cores}c", topology=topo)
