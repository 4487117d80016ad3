"""The range a number of the kernel model may take where no measurement identifies it on a
large machine (`[priors]` in models/kernel/*.toml, read by cohsim.kernel.costs): its shape, its
value at a quantile, and the checks a range must pass."""

from __future__ import annotations

import math
from dataclasses import dataclass

from cohsim.errors import CohsimError

PRIOR_SHAPES = ("uniform", "log-uniform")


@dataclass(frozen=True)
class Prior:
    """The range a number no measurement identifies may take (`[priors]` in the kernel file)."""

    key: str  #: the number's key in the file, e.g. "cpu.smt_slowdown"
    attr: str  #: its KernelParams field, e.g. "smt_slowdown"
    low: float
    high: float
    shape: str  #: "uniform" or "log-uniform" (uniform in the logarithm)
    measure: str  #: the measurement that would pin it
    why: str  #: its source line: the physics or public data behind the range

    def at(self, u: float) -> float:
        """The value at quantile `u` in [0, 1] of the prior (0: low, 1: high)."""
        if self.shape == "log-uniform":
            return math.exp(math.log(self.low) + u * math.log(self.high / self.low))
        return self.low + u * (self.high - self.low)


def check_range(
    key: str, low: float, high: float, shape: str, nominal: float, minimum: float, where: str
) -> None:
    """A prior's range: low < high, at least the number's own `minimum`, positive if log-uniform,
    the nominal value inside."""
    if not low < high:
        raise CohsimError(f"priors.{key}: low {low:g} must be below high {high:g}", where)
    if low < minimum:
        raise CohsimError(f"priors.{key}.low must be at least {minimum:g}", where)
    if shape == "log-uniform" and low <= 0:
        raise CohsimError(f"priors.{key}.low must be positive for a log-uniform prior", where)
    if not low <= nominal <= high:
        raise CohsimError(
            f"priors.{key}: the nominal value {nominal:g} is outside [{low:g}, {high:g}]", where
        )
