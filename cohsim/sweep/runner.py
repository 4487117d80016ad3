"""Running a sweep: every point's prediction, computed once, kept, and returned in grid order.

`run_sweep` names each point by its inputs' digest (cohsim.sweep.pointcache), takes the points the
cache already holds, and computes the others as independent tasks: in this process when
there are few (or `workers=1`), else on Dask, a local cluster of worker processes (one
thread each) or an existing cluster (`scheduler`). Each result is written to the cache the
moment it comes back, so an interrupted sweep (Ctrl-C, a killed worker: Dask runs its tasks
again elsewhere, or a killed process) loses only the points in flight, and running it again
computes only what is missing. Points with the same digest are computed once.

The rows come back in the points' order, whatever order the tasks finish in, and a point's
row is the same whoever computes it (every point runs `predict` with jobs=1 from the same
seed): same seed, same rows, whatever the number of workers or the scheduler. A cluster's
workers must run the same cohsim code as this process (each says which it has when the sweep
starts; other code is a CohsimError, since its rows would be kept under this code's digests).
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tqdm import tqdm

from cohsim.errors import CohsimError
from cohsim.machine.catalog import Catalog
from cohsim.predict.options import RunOptions
from cohsim.predict.question import Target
from cohsim.sweep import pointcache
from cohsim.sweep.grid import SweepPoint
from cohsim.sweep.row import Row, row_of
from cohsim.sweep.sweepoptions import SERIAL_POINTS, SweepOptions


@dataclass(frozen=True)
class PointTask:
    """One point to compute, with what the client resolved for it."""

    point: SweepPoint
    digest: str
    vcpus: int
    sockets: int
    run: RunOptions
    target: Target  #: the kernel model, calibration and pins (the machine is the point's)
    runtime: str


def compute(task: PointTask, catalog: Catalog | None = None) -> dict[str, Any]:
    """A task's row (as a dict): what a worker runs.
    `catalog`: the client's (read once, not once a point: half a fast point's time)."""
    pt = task.point
    p = pt.predict(catalog or Catalog(), task.run, target=task.target, runtime=task.runtime)
    row = row_of(
        pt, p, vcpus=task.vcpus, sockets=task.sockets, engine=task.run.engine, digest=task.digest
    )
    return row.to_dict()


@dataclass(frozen=True)
class Sweep:
    """What a sweep gave: the rows in the points' order, and how many were computed."""

    rows: list[Row]
    computed: int  #: points computed by this call
    cached: int  #: points read from the cache
    code: str  #: the digest of the cohsim source the rows come from (cohsim.sweep.pointcache)


def tasks_of(
    points: Sequence[SweepPoint], options: SweepOptions, catalog: Catalog, shared: pointcache.Shared
) -> list[PointTask]:
    """Every point's task (same order; an unknown instance is a CohsimError, before any
    work)."""
    run = options.point_run
    out = []
    for pt in points:
        m = pt.machine(catalog)
        key = pointcache.point_digest(pt, catalog, run, shared)
        out.append(
            PointTask(
                pt,
                key,
                m.topology.vcpus,
                m.topology.sockets,
                run,
                options.target,
                options.runtime,
            )
        )
    return out


def run_sweep(points: Sequence[SweepPoint], options: SweepOptions | None = None) -> Sweep:
    """Every point's row, in the points' order: from the cache, or computed (and kept)."""
    options = options or SweepOptions()
    catalog = Catalog()
    on = options.target
    shared = pointcache.Shared.read(on.kernel, on.calibration, options.runtime, on.pins)
    tasks = tasks_of(points, options, catalog, shared)
    folder = options.cache_dir()
    rows = pointcache.read_all(folder, [t.digest for t in tasks], Row.from_dict)
    cached = len(rows)
    todo = list({t.digest: t for t in tasks if t.digest not in rows}.values())
    bar = tqdm(
        total=cached + len(todo),
        initial=cached,
        disable=not options.progress,
        file=sys.stderr,
        unit="point",
        desc="sweep",
        dynamic_ncols=True,
    )

    def done(key: str, doc: dict[str, Any]) -> None:
        pointcache.save(folder, key, doc)
        rows[key] = Row.from_dict(doc)
        bar.update(1)

    with bar:
        if not todo:
            pass
        elif options.scheduler is None and (
            options.local_workers() == 1 or len(todo) <= SERIAL_POINTS
        ):
            for t in todo:
                done(t.digest, compute(t, catalog))
        else:
            _on_dask(todo, options, catalog, shared.code, done)
    return Sweep([rows[t.digest] for t in tasks], len(todo), cached, shared.code)


def run_points(points: Sequence[SweepPoint], options: SweepOptions | None = None) -> list[Row]:
    """Every point's row, in the points' order (`run_sweep`'s rows)."""
    return run_sweep(points, options).rows


@contextmanager
def local_cluster(n: int) -> Iterator[Any]:
    """A local Dask cluster of `n` worker processes, one thread each. Its workers ignore
    SIGINT (they inherit that from this process while they start): a Ctrl-C at a terminal
    goes to every process of the group, and the workers' tracebacks would bury the one line
    saying the sweep was interrupted; this process closes them on its way out. (A Ctrl-C
    while they start, a second or two, is not seen. Blocking SIGINT while they start, to
    deliver it after, was tried: Dask's threads started then were seen with it unblocked,
    multiprocessing's resource tracker unblocks it, and one of them took the signal.)"""
    from distributed import LocalCluster

    main = threading.current_thread() is threading.main_thread()  # where signals are set
    was = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        cluster = LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # any free port: None still takes 8787
            memory_limit=0,  # a large point is not a leak: no worker restarts
            silence_logs=logging.ERROR,
        )
    finally:
        if main:
            signal.signal(signal.SIGINT, was)
    with cluster, _quiet_if_interrupted():
        yield cluster


#: the loggers an interrupted Dask client or cluster reports its own shutdown on (a cancelled
#: callback's traceback from tornado's loop, the workers' lost connections)
_SHUTDOWN_LOGGERS = ("tornado.application", "asyncio", "distributed")


#: the loggers that report, from the IO loop's thread, a call the interrupt cancelled before
#: the interrupt reaches `_quiet_if_interrupted`'s frame: tornado.application (exceptions in
#: the loop's callbacks: distributed's sync()) and distributed.core (the in-process
#: scheduler's "Exception while handling op gather" when the client's gather is cancelled:
#: 1 Ctrl-C in 9 in the suite's test). An exception they log is also raised where the call
#: was made, so nothing is lost by keeping them at CRITICAL while a client or cluster is open
_LOOP_LOGGERS = ("tornado.application", "distributed.core")


@contextmanager
def _quiet_if_interrupted() -> Iterator[None]:
    """On Ctrl-C, silence what Dask's client and cluster log while they close: the command
    says it was interrupted in one line (its own), not with their tracebacks. The IO loop's
    thread may log a cancelled call before the interrupt reaches this frame, so its loggers
    (`_LOOP_LOGGERS`) stay at CRITICAL while a client or cluster is open."""
    loops = [logging.getLogger(name) for name in _LOOP_LOGGERS]
    levels = [log.level for log in loops]
    for log in loops:
        log.setLevel(logging.CRITICAL)
    try:
        yield
    except KeyboardInterrupt:
        for name in _SHUTDOWN_LOGGERS:
            logging.getLogger(name).setLevel(logging.CRITICAL + 1)
        raise
    finally:
        for log, level in zip(loops, levels, strict=True):
            if log.level == logging.CRITICAL:
                log.setLevel(level)


@contextmanager
def _client(options: SweepOptions, n: int) -> Iterator[Any]:
    """A Dask client: of the cluster at `options.scheduler`, or of a local cluster of `n`
    worker processes, one thread each (closed on the way out)."""
    from distributed import Client

    if options.scheduler is None:
        with local_cluster(n) as cluster, Client(cluster) as client, _quiet_if_interrupted():
            yield client
        return
    timeout = options.connect_timeout_s
    try:
        client = Client(options.scheduler, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise CohsimError(
            f"cannot reach the Dask scheduler at {options.scheduler} within {timeout:g} s "
            f"({type(exc).__name__})"
        ) from None
    with client, _quiet_if_interrupted():
        try:
            client.wait_for_workers(1, timeout=timeout)
        except (OSError, TimeoutError) as exc:
            raise CohsimError(
                f"the Dask scheduler at {options.scheduler} has no workers "
                f"(none joined within {timeout:g} s)"
            ) from exc
        yield client


def _on_dask(
    todo: Sequence[PointTask],
    options: SweepOptions,
    catalog: Catalog,
    code: str,
    done: Callable[[str, dict[str, Any]], None],
) -> None:
    """Compute `todo` on Dask, calling `done` in this process as each comes back."""
    from distributed import as_completed

    n = min(options.local_workers(), len(todo))
    with _client(options, n) as client:
        try:
            theirs = client.run(pointcache.code_digest)
        except Exception as exc:  # e.g. no cohsim on a worker: what the worker raised
            raise CohsimError(
                f"the Dask workers cannot run cohsim ({type(exc).__name__}: {exc})"
            ) from None
        if any(c != code for c in theirs.values()):
            raise CohsimError(
                "the Dask workers run other cohsim code than this process (install the same "
                "cohsim on the workers)"
            )
        shared = client.scatter(catalog, broadcast=True)  # one copy a worker, not a task
        futures = {
            client.submit(compute, t, shared, key=f"cohsim-point-{t.digest}", pure=False): t.digest
            for t in todo
        }
        try:
            for fut in as_completed(futures, loop=client.loop):
                done(futures[fut], fut.result())
        finally:
            client.cancel(list(futures))
