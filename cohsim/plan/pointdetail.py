"""A point's full prediction as the plan's report reads it, kept in the sweep cache: `details`.

The report (cohsim.report.content) shows more of a point than a sweep's row holds: each
replicate's launch p99 (its fixes' draw-by-draw comparison), where namespace_sem's holds and
the CPUs' time went, what the intervals are, the priors drawn and, for its first row, the
priors ranked by their effect on the p99 (`explain`). `PointDetail` is that part of a
prediction, `PointDetail.of(prediction)`; `details` gives one for each asked point, in order,
reading each from the sweep's on-disk cache (cohsim.sweep.pointcache) or predicting it
(cohsim.plan.evaluate.predict_probe) and keeping it there, so a second report of the same
question predicts nothing.

The key is the sweep point's (every input of the prediction: the machine, the kernel model,
the calibration, the point, the run options, the runtime, the pins, the cohsim version) with
the code digest of this module's import graph in place of the sweep's, and whether the priors
are ranked (`explain`, which a sweep's point never asks). A folder that cannot be written is
read, not written (as the sweep's: cohsim.sweep.pointcache.writable); a file not believed
(edited, another key) is computed again, with a warning.

Each point predicted here also leaves the sweep's own row of it in the sweep cache, where
there is none (the row cohsim.sweep.runner.compute gives: the same prediction, since the
number of processes and the ranking's extra runs change no replicate), so the report's
confirmation of its fixes, asked after, reads them back instead of simulating them again.

A detail computed here is the detail read back: the document is made, passed through JSON (as
the file holds it, keys sorted; ordered maps are kept as lists of pairs) and read back before
it is used, so a report from the cache is the same bytes as one computed afresh. Floats are
kept as Python writes them and read back bit for bit (not rounded).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
from tqdm import tqdm

from cohsim import cache
from cohsim.kernel.priors import Prior
from cohsim.kernel.result import Profile
from cohsim.machine.catalog import Catalog
from cohsim.plan.evaluate import points_of, predict_probe
from cohsim.plan.outcome import Probe
from cohsim.predict import Prediction, RunOptions
from cohsim.predict.breakdown import Breakdown
from cohsim.predict.unknowns import Sensitivity
from cohsim.sweep import SweepOptions, pointcache
from cohsim.sweep.row import row_of
from cohsim.sweep.runner import tasks_of

#: the module that makes a detail: its import graph is the code in every key
SOURCE = "cohsim.plan.pointdetail"
STORE = cache.Store(schema=1, field="detail")


def draw_p99s(p: Prediction) -> tuple[float, ...]:
    """Each replicate's launch p99 (s), the nominal one first."""
    return tuple(float(np.percentile(r, 99)) for r in p.replicate_launch_s)


def _pairs(d: dict[str, float]) -> list[list[Any]]:
    return [[k, v] for k, v in d.items()]


@dataclass(frozen=True)
class PointDetail:
    """What the report reads of one point's full prediction (`Prediction`'s fields of the
    same names), and each replicate's launch p99 (`draws_s`, the nominal one first)."""

    machine: str
    kernel: str
    calibration: str
    level: tuple[str, ...]
    engine: dict[str, Any]
    interval: dict[str, Any]
    priors: dict[str, Any]
    breakdown: Breakdown | None
    profile: Profile | None
    sensitivity: tuple[Sensitivity, ...]
    sensitivity_noise_s: float
    draws_s: tuple[float, ...]

    @classmethod
    def of(cls, p: Prediction) -> PointDetail:
        """The detail of prediction `p`, as read back from its document (`from_doc`)."""
        raw = cls(
            p.machine,
            p.kernel,
            p.calibration,
            tuple(p.level),
            p.engine,
            p.interval,
            p.priors,
            p.breakdown,
            p.profile,
            p.sensitivity,
            p.sensitivity_noise_s,
            draw_p99s(p),
        )
        return cls.from_doc(json.loads(json.dumps(raw.to_doc(), sort_keys=True)))

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> PointDetail:
        """A detail from its document (a KeyError, TypeError or ValueError where it is not
        one)."""
        b, f = doc["breakdown"], doc["profile"]
        return cls(
            machine=doc["machine"],
            kernel=doc["kernel"],
            calibration=doc["calibration"],
            level=tuple(doc["level"]),
            engine=doc["engine"],
            interval=doc["interval"],
            priors=doc["priors"],
            breakdown=None if b is None else Breakdown(dict(b[0]), dict(b[1]), b[2], dict(b[3])),
            profile=None if f is None else Profile(dict(f[0]), dict(f[1]), f[2], f[3]),
            sensitivity=tuple(Sensitivity(Prior(**s[0]), *s[1:]) for s in doc["sensitivity"]),
            sensitivity_noise_s=doc["sensitivity_noise_s"],
            draws_s=tuple(doc["draws_s"]),
        )

    def to_doc(self) -> dict[str, Any]:
        """The document `from_doc` reads (what the cache keeps)."""
        b, f = self.breakdown, self.profile
        return {
            "machine": self.machine,
            "kernel": self.kernel,
            "calibration": self.calibration,
            "level": list(self.level),
            "engine": self.engine,
            "interval": self.interval,
            "priors": self.priors,
            "breakdown": None
            if b is None
            else [_pairs(b.mean_s), _pairs(b.slowest_s), b.base_s, _pairs(b.ns_write_s)],
            "profile": None
            if f is None
            else [_pairs(f.cpu_ns), _pairs(f.off_cpu_ns), f.span_ns, f.cpus],
            "sensitivity": [
                [
                    asdict(s.prior),
                    s.nominal,
                    s.launch_p99_low_s,
                    s.launch_p99_high_s,
                    s.mount_p99_low_s,
                    s.mount_p99_high_s,
                ]
                for s in self.sensitivity
            ],  # fmt: skip
            "sensitivity_noise_s": self.sensitivity_noise_s,
            "draws_s": list(self.draws_s),
        }


@dataclass(frozen=True)
class Ask:
    """One detail to give: a point, the engine that answers it, and whether the priors are
    ranked (`explain`: 2 more runs a prior)."""

    probe: Probe
    engine: str
    explain: bool = False


def _key(ask: Ask, run: RunOptions, catalog: Catalog, shared: pointcache.Shared) -> str:
    """The key of one detail: the sweep point's key over this module's code, and `explain`."""
    (point,) = points_of([ask.probe])
    doc = {
        "point": pointcache.point_digest(point, catalog, run, shared),
        "explain": ask.explain,
        "schema": STORE.schema,
    }
    return cache.key_of(doc)


def _keep_row(
    p: Prediction, probe: Probe, sweep: SweepOptions, catalog: Catalog, shared: pointcache.Shared
) -> None:
    """Keep the sweep's row of `probe` from its prediction `p`, where the sweep cache has none:
    the row the sweep computes (cohsim.sweep.runner.compute: the same prediction, since the
    number of processes and the ranking's extra runs change no replicate)."""
    folder = sweep.cache_dir()
    if folder is None:
        return
    (task,) = tasks_of(points_of([probe]), sweep, catalog, shared)
    if pointcache.load(folder, task.digest) is not None:
        return
    row = row_of(task.point, p, vcpus=task.vcpus, sockets=task.sockets, engine=task.run.engine,
                 digest=task.digest)  # fmt: skip
    pointcache.save(folder, task.digest, row.to_dict())


def details(
    asks: Sequence[Ask],
    sweeps: dict[str, SweepOptions],
    catalog: Catalog,
    *,
    progress: bool = False,
) -> list[PointDetail]:
    """Each ask's detail, in order: read from the sweep cache (`sweeps`' folder; "off":
    none) or predicted as `sweeps[engine]`'s points are (its run options, target and
    runtime: the same for every engine) and kept there, with the sweep's row of the point (where the
    sweep has none: a confirmation asked after reads it back); the same ask is answered
    once. With `progress`, a bar on stderr counts the details (those read back at the
    start)."""
    if not asks:
        return []
    any_sweep = sweeps[asks[0].engine]
    on, runtime, folder = any_sweep.target, any_sweep.runtime, any_sweep.cache_dir()
    rows = pointcache.Shared.read(on.kernel, on.calibration, runtime, on.pins)
    shared = replace(rows, code=cache.code_digest(SOURCE))
    keys = [_key(a, sweeps[a.engine].run, catalog, shared) for a in asks]
    got = pointcache.read_all(folder, keys, PointDetail.from_doc, STORE)
    todo = {k: a for k, a in zip(keys, asks, strict=True) if k not in got}
    bar = tqdm(
        total=len(got) + len(todo),
        initial=len(got),
        disable=not progress,
        file=sys.stderr,
        unit="prediction",
        desc="report",
        dynamic_ncols=True,
    )
    with bar:
        for k, a in todo.items():
            run = replace(sweeps[a.engine].run, explain=a.explain)
            p = predict_probe(a.probe, run, catalog, target=on, runtime=runtime)
            got[k] = PointDetail.of(p)
            STORE.save(folder, k, got[k].to_doc())
            _keep_row(p, a.probe, sweeps[a.engine], catalog, rows)
            bar.update(1)
    return [got[k] for k in keys]
