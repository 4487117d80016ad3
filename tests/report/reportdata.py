"""One small real report for the report's tests (a helper module, not a conftest: the
suite's modules import the top conftest by name): a plan of two instance types, the
fixes and full prediction of the first only, for 10
containers of a 5-layer image within 0.6 s (the kernel's fixed
launch cost is 0.5 s), on the analytic engine, every point a direct prediction in this
process (seconds)."""

from __future__ import annotations

import functools
from pathlib import Path

from cohsim.plan import PlanOptions, plan
from cohsim.plan.evaluate import predict_evaluator
from cohsim.predict import Burst
from cohsim.report import ReportData, gather, write_report

OPTIONS = PlanOptions(
    burst=Burst(containers=10, layers=5, deadline_s=0.6),
    instances=("m7a.metal-48xl", "r5.metal"),
    sort="vcpus",  # r5.metal (96) first, whatever the model says: its fixes are all four
    engine="analytic",
    max_burst=60,
    replicates=3,
)


@functools.cache
def build(base: Path) -> tuple[Path, ReportData]:
    """The report's path and what it shows (built once a session, under the session's
    temporary folder `base`: the test modules' `report` fixtures call this)."""
    evaluate = predict_evaluator(OPTIONS.run)
    (base / "report").mkdir(exist_ok=True)
    path = base / "report" / "plan.html"
    data = gather(plan(OPTIONS, evaluate=evaluate), evaluate, top=1)
    write_report(path, data)
    return path, data
