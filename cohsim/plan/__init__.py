"""Capacity planning: which instance type for N containers launched at once (`cohsim plan`).

`candidates` says which machine configurations and strategies are compared, `outcome` what a
plan reads from one evaluated point, `burst` the search for the largest burst that meets
the deadline, `evaluate` how points are run by default (the sweep engine), `api` the plan
itself (`plan`, `PlanOptions`, `Plan`), `table` its text table.
"""

from cohsim._entry import make_callable
from cohsim.plan.api import PRICE_NOTE, SORTS, Plan, PlanOptions, PlanRow, plan, rank
from cohsim.plan.burst import SafeBurst, safe_bursts
from cohsim.plan.candidates import Candidate, select
from cohsim.plan.outcome import Evaluate, Outcome, Probe

__all__ = [
    "PRICE_NOTE",
    "SORTS",
    "Candidate",
    "Evaluate",
    "Outcome",
    "Plan",
    "PlanOptions",
    "PlanRow",
    "Probe",
    "SafeBurst",
    "plan",
    "rank",
    "safe_bursts",
    "select",
]

make_callable(__name__, plan)  # `from cohsim import plan; plan(...)` (cohsim._entry)
