"""The largest burst that still meets the deadline: a search over the container count.

For one candidate the question is the largest N for which N containers launched at once all
start within the deadline at the p99 (`Outcome.meets`). Its interval reads the same test at
the two ends of the launch p99's interval: with the p99's high end (the pessimistic reading)
the safe burst is smaller, with its low end larger. Each of the three tests has its own
bracket (`_Bracket`): `ok`, a count known to pass (0 passes by definition), and `bad`, a
count known to fail (None until one is found), searched until `bad == ok + 1`.

The launch p99 grows smoothly and faster than linearly with the count, so each guess is where
a power law p99 = a N^k through the bracket's ends meets the deadline (regula falsi in
log-log), tried with the count after it so that a good guess closes the bracket at once;
beyond the last passing count, k is the slope of the last two passing points (2 before there
are two), aimed 10 % further to find a failure. A guess that did not at least halve the
bracket is followed by a plain halving, so the search takes at worst twice a bisection's
rounds, however the p99 behaves. A bracket only takes results that fall strictly inside it,
so at the end `ok` was seen to pass and `ok + 1` to fail whatever the noise: the figure
agrees with direct predictions at that count and one above, by construction. If `max_burst`
passes, the search stops there and says so (`capped`).

All candidates advance together, round by round: each round gathers every bracket's next
counts (a few per candidate, fewer once they coincide), asks the evaluator for all of them in
one call (so a parallel evaluator runs them side by side), and gives every result to every
bracket of its candidate. The results of all rounds are kept (`probes`): they are each
candidate's launch-vs-containers curve, for the report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cohsim.errors import CohsimError
from cohsim.plan.candidates import Candidate
from cohsim.plan.outcome import ENDS, Evaluate, Outcome, Probe

#: the growth assumed for the launch p99 with the count before two points measure it (the
#: burst is superlinear: each container's calls find more mounts and more waiters)
GROWTH = 2.0
#: a guess beyond the last passing count aims this much further, to find a failure at once
OVERSHOOT = 1.1


@dataclass
class _Bracket:
    """One test's bracket: `ok` passed (0 trivially), `bad` failed (None: none seen yet),
    with the p99s seen there (`t_ok`, `t_bad`) and the passing count before `ok` (`prev`)."""

    deadline_s: float
    ok: int = 0
    t_ok: float = 0.0
    bad: int | None = None
    t_bad: float = 0.0
    prev: tuple[int, float] | None = None
    width: float = math.inf  #: the bracket's width when it last guessed

    def take(self, n: int, t: float) -> None:
        """The p99 `t` at `n`: kept only if `n` lies strictly inside the bracket."""
        if n <= self.ok or (self.bad is not None and n >= self.bad):
            return
        if t <= self.deadline_s:
            if self.ok:
                self.prev = (self.ok, self.t_ok)
            self.ok, self.t_ok = n, t
        else:
            self.bad, self.t_bad = n, t

    def next_counts(self, start: int, max_burst: int) -> list[int]:
        """The counts to try next (none when the bracket is closed)."""
        if self.ok == 0 and self.bad is None:
            return [start]
        if self.bad is None:
            if self.ok >= max_burst:
                return []
            grow = _slope(self.prev, (self.ok, self.t_ok)) or GROWTH
            guess = math.ceil(_reach(self.ok, self.t_ok, grow, self.deadline_s) * OVERSHOOT)
            return [min(max_burst, 8 * self.ok, max(self.ok + 1, guess))]
        if self.bad - self.ok <= 1:
            return []
        width = self.bad - self.ok
        stalled, self.width = width > self.width / 2, width
        k = GROWTH if self.ok == 0 else _slope((self.ok, self.t_ok), (self.bad, self.t_bad))
        n0, t0 = (self.bad, self.t_bad) if self.ok == 0 else (self.ok, self.t_ok)
        if stalled or k is None:
            return [(self.ok + self.bad) // 2]
        n = math.floor(_reach(n0, t0, k, self.deadline_s))
        n = min(self.bad - 1, max(self.ok + 1, n))
        return sorted({n, min(n + 1, self.bad - 1)})


def _slope(a: tuple[int, float] | None, b: tuple[int, float]) -> float | None:
    """d log p99 / d log N between two points, where it is a usable positive number."""
    if a is None or a[0] == b[0] or min(a[1], b[1]) <= 0:
        return None
    k = math.log(b[1] / a[1]) / math.log(b[0] / a[0])
    return k if math.isfinite(k) and k > 0.05 else None


def _reach(n0: int, t0: float, k: float, deadline_s: float) -> float:
    """The count at which p99 = a N^k through (n0, t0) meets the deadline."""
    return float(n0 * (deadline_s / max(t0, 1e-12)) ** (1.0 / k))


@dataclass(frozen=True)
class SafeBurst:
    """The largest burst meeting the deadline at the p99, and at its interval's two ends."""

    value: int  #: with the p99 itself
    low: int  #: with the p99's high end (pessimistic)
    high: int  #: with the p99's low end (optimistic)
    capped: bool  #: the search stopped at max_burst with the test still passing
    max_burst: int
    #: every count this candidate was evaluated at, and what it gave
    probes: dict[int, Outcome] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "low": self.low,
            "high": self.high,
            "capped": self.capped,
            "max_burst": self.max_burst,
            "unit": "containers",
        }


#: an end of the p99 interval -> the SafeBurst field its test gives
_FIELD = {"value": "value", "high": "low", "low": "high"}


def safe_bursts(
    candidates: Sequence[Candidate],
    evaluate: Evaluate,
    *,
    layers: int,
    deadline_s: float,
    start: int,
    max_burst: int,
) -> list[SafeBurst]:
    """The safe burst of every candidate (same order), searched together round by round."""
    if start < 1:
        raise CohsimError(f"the search starts at a positive count, not {start}")
    if max_burst < start:
        raise CohsimError(f"max_burst ({max_burst}) is below the question's count ({start})")
    seen: list[dict[int, Outcome]] = [{} for _ in candidates]
    brackets = [{end: _Bracket(deadline_s) for end in ENDS} for _ in candidates]
    while True:
        wanted: list[tuple[int, int]] = []  # (candidate index, count)
        for i, cand_brackets in enumerate(brackets):
            counts = {n for b in cand_brackets.values() for n in b.next_counts(start, max_burst)}
            wanted += [(i, n) for n in sorted(counts - set(seen[i]))]
        if not wanted:
            break
        probes = [Probe(candidates[i], n, layers) for i, n in wanted]
        outcomes = evaluate(probes)
        if len(outcomes) != len(probes):
            raise CohsimError(
                f"the evaluator answered {len(outcomes)} points for {len(probes)} asked"
            )
        for (i, n), out in zip(wanted, outcomes, strict=True):
            seen[i][n] = out
            for end, b in brackets[i].items():
                b.take(n, out.p99_at(end))
    return [_result(b, s, max_burst) for b, s in zip(brackets, seen, strict=True)]


def _result(brackets: dict[str, _Bracket], seen: dict[int, Outcome], max_burst: int) -> SafeBurst:
    values = {_FIELD[end]: b.ok for end, b in brackets.items()}
    capped = brackets["value"].bad is None
    return SafeBurst(
        values["value"],
        values["low"],
        values["high"],
        capped,
        max_burst,
        dict(sorted(seen.items())),
    )
