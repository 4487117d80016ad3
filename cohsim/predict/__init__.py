"""Level 5, predictions: a workload on a machine, replicated, with intervals.

`api` holds the entry points (`predict` for a synthesised burst of containers, `replay` for a
real trace, `burst_workload`), `question` the question and what it runs on (`Burst`, `Target`,
every default of the question in one place), `options` how the replicates run (`RunOptions`,
every default in one place), `target` how a prediction runs on its target, `replicates`
the simulations and their summary, `intervals` how replicates become a value with an interval,
`results` what a prediction reports (`Prediction`), `validity` whether its inputs lie inside
the ranges the model was checked on (and refuses those beyond a real node).
"""

from cohsim._entry import make_callable
from cohsim.predict.api import MAX_REPLAY_SPAN_NS, burst_workload, check_span, predict, replay
from cohsim.predict.intervals import MISFIT_LEVEL, STATS, Interval
from cohsim.predict.options import RunOptions, RunOverrides
from cohsim.predict.question import Burst, Target
from cohsim.predict.replicates import run_workload
from cohsim.predict.results import SCHEMA, Prediction
from cohsim.predict.target import resolve_calibration, resolve_machine
from cohsim.predict.validity import CHECKED, LIMITS, Validity

__all__ = [
    "CHECKED",
    "LIMITS",
    "MAX_REPLAY_SPAN_NS",
    "MISFIT_LEVEL",
    "SCHEMA",
    "STATS",
    "Burst",
    "Interval",
    "Prediction",
    "RunOptions",
    "RunOverrides",
    "Target",
    "Validity",
    "burst_workload",
    "check_span",
    "predict",
    "replay",
    "resolve_calibration",
    "resolve_machine",
    "run_workload",
]

make_callable(__name__, predict)  # `from cohsim import predict; predict(...)` (cohsim._entry)
