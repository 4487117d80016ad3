"""The committed fits (calibration/fits/, shipped as `cohsim._fits`) and which one describes an
instance: what a prediction loads when no fit is named (`default_fit`). They are read as
results (cohsim.calibrate.fitresult), without the estimator that made them."""

from __future__ import annotations

import functools

from cohsim.calibrate.fitjson import choose_fit
from cohsim.calibrate.fitresult import FitResult, load_fit
from cohsim.errors import CohsimError
from cohsim.io import fits_dir
from cohsim.machine.catalog import Catalog


def default_fit(instance_or_family: str) -> FitResult | None:
    """The committed fit that describes this instance or family, if any.

    A fit with kernel parameters applies to every instance (its `applies_to.kernel.instances`
    is "*"); its lock parameters only to the instances/families it names. Exact instance
    matches win; then a family match; then any kernel fit (`cohsim.calibrate.fitjson.choose_fit`).
    """
    paths = sorted(fits_dir().glob("*.json"))
    loaded = _committed_fits(tuple((str(p), p.stat().st_mtime_ns) for p in paths))
    return choose_fit(loaded, instance_or_family, _family(instance_or_family))


@functools.lru_cache(maxsize=4)
def _committed_fits(files: tuple[tuple[str, int], ...]) -> tuple[FitResult, ...]:
    """The committed fits, read once per process (keyed by path and modification time: a
    fit rewritten since is read again). Predictions only read them, and the results are
    frozen."""
    return tuple(load_fit(path) for path, _ in files)


@functools.lru_cache(maxsize=256)
def _family(instance_or_family: str) -> str:
    """The catalog family of an instance (a family's own name otherwise)."""
    try:
        return Catalog().get(instance_or_family).family
    except CohsimError:
        return instance_or_family
