"""Types of cohsim's public API (cohsim/__init__.py imports each name on first use)."""

from cohsim.calibrate.calibration import Calibration
from cohsim.calibrate.fitresult import FitResult, load_fit
from cohsim.errors import CohsimError, UsageError
from cohsim.machine.catalog import Catalog
from cohsim.machine.model import Machine
from cohsim.plan.api import (
    Plan,
    PlanOptions,
    PlanRow,
    plan,
)
from cohsim.predict.api import predict, replay
from cohsim.predict.intervals import Interval
from cohsim.predict.options import RunOptions
from cohsim.predict.question import Burst, Target
from cohsim.predict.results import Prediction
from cohsim.predict.validity import Validity
from cohsim.sweep.grid import SweepPoint, grid
from cohsim.sweep.row import Row
from cohsim.sweep.runner import Sweep, run_sweep
from cohsim.sweep.sweepoptions import SweepOptions

__version__: str
__all__ = [
    "Burst",
    "Calibration",
    "Catalog",
    "CohsimError",
    "FitResult",
    "Interval",
    "Machine",
    "Plan",
    "PlanOptions",
    "PlanRow",
    "Prediction",
    "Row",
    "RunOptions",
    "Sweep",
    "SweepOptions",
    "SweepPoint",
    "Target",
    "UsageError",
    "Validity",
    "__version__",
    "grid",
    "load_fit",
    "plan",
    "predict",
    "replay",
    "run_sweep",
]
