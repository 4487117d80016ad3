"""What level 3 asks level 2: the cost of moving the mount_lock line when k CPUs fight for it.

Level 3 (cohsim.kernel.simulation.launch) simulates syscalls, not cache lines (simulating every line
transfer of tens of thousands of mounts on 96 CPUs would be far too slow). Whenever it needs a
line cost it asks this table, which asks the lock hand-off level once per (lock kind, CPU
count) and caches the answer:

- `spinlock_ns(n)`: a hand-off of the queued spinlock among n CPUs that all want it — the
  per-acquisition overhead of a saturated qspinlock, 1/throughput - critical section;
- `writer_ns(k)`: a mount_lock writer's wait for the line while k CPUs spin reading the
  sequence counter (path walks) — the seqcount writer's acquisition latency; 0 with none (the
  writer's own line: the level-2 run would need a reader to answer, and with one it prices that
  reader's copy);
- `reader_ns(k)`: how long after a release a spinning reader has the line again — the seqcount
  readers' latency from the writer's release to their read.

The seqcount questions give the writer (and the readers) a gap between sections
(`SEQ_THINK_NS`): a writer that re-takes the line at once starves the readers, which is not
what mount_lock's writers do.

A known shortfall of those questions: their readers read once a microsecond and seldom spin,
so `reader_ns(k)` is mostly the readers' own gap (about `SEQ_THINK_NS` at most k on the
catalog machines), not a spinner's re-read after a release: it is a phase of the writer's
and the readers' cycles, and moves with any change to either (the writer's take 12 ns
longer, when level 2 came to answer an upgrade of a shared copy after the point's
invalidations, moved it from 1,000 to 814 ns at one reader on devvm-16cpu-intel-xeon-f6m207).
`writer_ns(1)` (35-94 ns over the catalog, 24-64 before that change) is less than a
transfer, the reader's copy being there about half the time. The few readers of those runs
that did spin across a release re-read it 47-263 ns after it (m7i.metal-24xl 108 and 263 ns
at 32 and 95 readers, m7a.24xlarge 49 and 124, r5.metal 47 and 152; before that change).
A question with readers that spin is the next step (issue 29's note).

Counts are answered exactly at 0, 1, 2, 4, 8, ... and the machine's CPU count, and interpolated
linearly between; the CPUs are placed as the scheduler spreads busy threads (`scatter`). Which
model answered is recorded in `level`. The seqcount questions are always answered by the simulation:
the Markov chain's state is the number of waiters for an exclusive lock, and its seqcount
latency mixes queueing behind the writer into the transfer cost level 3 asks for.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from cohsim.kernel import linecache
from cohsim.lock.params import PS, HandoffResult, LockParams
from cohsim.machine.model import Machine
from cohsim.units import per_s_to_gap_ns

#: pause_bench-like critical section used for the queries (ns): short, like mount_lock sections
CS_REF_NS = 100.0
#: between one seqcount writer's sections, and between a walker's reads (ns). With none the
#: writer re-takes the line before any reader's request reaches it and, on a chiplet whose
#: CCX answers its writer first, readers never see the counter even (level 2 answers with
#: the readers' unfinished waits). assumption: about a microsecond, the kernel's work between
#: the mount_lock sections of a path that takes it again and again (ns-copy: 2.3 us per
#: mount copied, two short mount_lock holds among it; each put after a grace period is
#: mntput_no_expire()'s hold between a mount's other teardown); walkers re-read sooner than
#: they walk (launch.walk_interval_ns, 25 us), so this is their lower bound too
SEQ_THINK_NS = 1000.0


KINDS = ("spinlock", "writer", "reader")  #: the questions level 3 asks


def _grid(limit: int) -> list[int]:
    pts, k = [0, 1], 2
    while k < limit:
        pts.append(k)
        k *= 2
    if pts[-1] != limit and limit > 1:
        pts.append(limit)
    return pts


@dataclass
class LineCosts:
    """Cached level-2 answers for one machine (mutable cache, owned by one simulation)."""

    machine: Machine
    model: str = "des"  #: "des" or "markov"
    seed: int = 0
    acquisitions_per_thread: int = 30  #: level-2 acquisitions per thread and query (simulation)
    max_acquisitions: int = 3000  #: ... at most this many per query (big machines stay fast)
    params: LockParams | None = None  #: None: the level-2 defaults for the machine
    _cache: dict[tuple[str, int], float] = field(default_factory=dict, repr=False)
    _dense: dict[str, list[float]] = field(default_factory=dict, repr=False)
    _runs: dict[tuple[str, int], HandoffResult] = field(default_factory=dict, repr=False)
    queries: int = 0  #: level-2 simulations run
    cache: bool = True  #: read and keep the table on disk (cohsim.kernel.linecache)
    from_cache: bool = field(default=False, repr=False)  #: the table came from the disk
    _cache_tried: bool = field(default=False, repr=False)

    @property
    def level(self) -> str:
        spin = "markov" if self.model == "markov" else "des"
        return f"level 2 lock hand-off (spinlock: {spin}; seqcount: des; cached per CPU count)"

    def _max(self) -> int:
        return self.machine.vcpus

    def _acquisitions(self, threads: int) -> int:
        return min(self.max_acquisitions, self.acquisitions_per_thread * threads)

    def _simulate(self, lock: str, threads: int, model: str, record: bool) -> HandoffResult:
        """One level-2 run: `threads` scattered CPUs, the reference section; no think time for a
        spinlock (every CPU wants it), `SEQ_THINK_NS` for a seqcount. Level 2 (and simpy) is
        imported here, on a cache miss: a prediction whose table is on disk does not load it."""
        from cohsim.lock.handoff import simulate
        from cohsim.lock.handoffoptions import HandoffOptions

        options = HandoffOptions(
            lock=lock,
            placement="scatter",
            cs_ns=CS_REF_NS,
            think_ns=SEQ_THINK_NS if lock == "seqcount" else 0.0,
            acquisitions=self._acquisitions(threads),
            seed=self.seed,
            model=model,
            params=self.params,
            record=record,
        )
        return simulate(self.machine, threads, options)

    def _run(self, lock: str, threads: int) -> HandoffResult:
        """The level-2 run for `lock` ("qspinlock" or "seqcount") among `threads` CPUs, cached:
        one seqcount run answers both the writer's and the readers' question."""
        r = self._runs.get((lock, threads))
        if r is None:
            r = self._runs[(lock, threads)] = self._run_uncached((lock, threads))
            self.queries += 1
        return r

    def _run_uncached(self, spec: tuple[str, int]) -> HandoffResult:
        lock, threads = spec
        if lock == "seqcount":
            return self._simulate("seqcount", threads, "des", True)
        return self._simulate(lock, threads, self.model, False)

    def _spec(self, kind: str, n: int) -> tuple[str, int]:
        """The level-2 run that answers `kind` at n CPUs: a spinlock among max(2, n) CPUs; a
        seqcount writer with n spinning readers (both seqcount kinds share it)."""
        if kind == "spinlock":
            return "qspinlock", max(2, n)
        return "seqcount", min(self.machine.vcpus, max(2, n + 1))

    def _needed(self) -> list[tuple[str, int]]:
        """Every level-2 run the tables need, biggest first."""
        specs = {self._spec(kind, n) for kind in ("spinlock", "writer") for n in _grid(self._max())}
        return sorted(specs, key=lambda spec: (-spec[1], spec[0]))

    def _ask(self, kind: str, n: int) -> float:
        key = (kind, n)
        if key in self._cache:
            return self._cache[key]
        if kind == "writer" and n == 0:  # no CPU holds a copy: the writer's stores hit its own
            self._cache[key] = 0.0  # line (what its previous owner costs is the spinlock's
            return 0.0  # hand-off or, taken free, cohsim.kernel.linetake)
        r = self._run(*self._spec(kind, n))
        if kind == "spinlock":
            value = max(0.0, per_s_to_gap_ns(r.acquisitions_per_s) - CS_REF_NS)
        else:
            assert r.record is not None
            if kind == "writer":
                w = [(a - s) / PS for (t, s, a) in r.record.waits if t == 0]
                value = float(np.mean(w)) if w else r.mean_ns
            else:
                rel = sorted(e for (t, _a, e) in r.record.holds if t == 0)
                gaps = []
                for t, _s, a in r.record.waits:
                    if t == 0:
                        continue
                    j = bisect.bisect_right(rel, a) - 1
                    if j >= 0:
                        gaps.append((a - rel[j]) / PS)
                value = float(np.mean(gaps)) if gaps else r.mean_ns
        self._cache[key] = value
        return value

    def key(self) -> str:
        """The digest of every input of this table (cohsim.kernel.linecache)."""
        inputs = {
            "model": self.model,
            "seed": self.seed,
            "acquisitions_per_thread": self.acquisitions_per_thread,
            "max_acquisitions": self.max_acquisitions,
            "params": linecache.params_doc(self.params),
            "cs_ref_ns": CS_REF_NS,
            "seq_think_ns": SEQ_THINK_NS,
        }
        return linecache.digest(self.machine, inputs)

    def _load_cache(self) -> None:
        """Take what the disk has for this table, once."""
        if self._cache_tried or not self.cache:
            return
        self._cache_tried = True
        values = linecache.load(self.key())
        if values:
            self._cache.update(values)
            self.from_cache = True

    def _complete(self) -> bool:
        grid = _grid(self._max())
        return all((kind, n) in self._cache for kind in KINDS for n in grid)

    def _table(self, kind: str) -> list[float]:
        """Values at every integer count 0..max, interpolated between the grid points asked."""
        dense = self._dense.get(kind)
        if dense is None:
            self._load_cache()
            grid = _grid(self._max())
            values = [self._ask(kind, n) for n in grid]
            dense = [float(v) for v in np.interp(np.arange(grid[-1] + 2), grid, values)]
            self._dense[kind] = dense
        return dense

    def _interp(self, kind: str, k: float) -> float:
        dense = self._dense.get(kind) or self._table(kind)
        if k <= 0:
            return dense[0]
        top = len(dense) - 2
        if k >= top:
            return dense[top]
        i = int(k)
        return dense[i] + (dense[i + 1] - dense[i]) * (k - i)

    def spinlock_ns(self, n: float) -> float:
        """Hand-off of the mount_lock spinlock among n CPUs that want it."""
        return self._interp("spinlock", n)

    def writer_ns(self, k: float) -> float:
        """A writer getting the line while k CPUs spin on the sequence counter."""
        return self._interp("writer", k)

    def reader_ns(self, k: float) -> float:
        """A spinning reader seeing the release, among k spinning readers."""
        return self._interp("reader", max(k, 1.0))

    def prefill(self, map_fn: Callable[..., Iterable[HandoffResult]] | None = None) -> None:
        """Ask level 2 every question now (the tables are then complete and picklable).
        `map_fn` (e.g. a process pool's `map`) runs the level-2 simulations in parallel;
        each is seeded on its own, so the answers do not depend on it. A table the disk has
        is read instead (cohsim.kernel.linecache), and one computed here is kept there."""
        self._load_cache()
        if self._complete():
            for kind in KINDS:
                self._table(kind)
            return
        if map_fn is not None:
            todo = [spec for spec in self._needed() if spec not in self._runs]
            for spec, r in zip(todo, map_fn(self._run_uncached, todo), strict=True):
                self._runs[spec] = r
                self.queries += 1
        for kind in KINDS:
            self._table(kind)
        if self.cache:
            linecache.save(self.key(), self._cache)

    def table(self) -> dict[str, dict[int, float]]:
        """Everything asked so far, for reports: kind -> {CPU count: ns}."""
        out: dict[str, dict[int, float]] = {}
        for (kind, n), v in sorted(self._cache.items()):
            out.setdefault(kind, {})[n] = round(v, 3)
        return out
