"""Sweeps: many predictions over a grid of instances, counts, strategies and hardware variants.

`grid` builds the points (cohsim.sweep.grid), `run_points` / `run_sweep` compute them on Dask
or in this process, each kept on disk under its inputs' digest (cohsim.sweep.pointcache), and
return one flat `Row` per point in grid order (cohsim.sweep.row), which `csv_text` and
`json_doc` write (cohsim.sweep.outputs) and `sweep_figure` draws (cohsim.sweep.plot).
"""

from cohsim.sweep.grid import SweepPoint, grid, select_instances, variants_of
from cohsim.sweep.outputs import csv_text, json_doc, json_text
from cohsim.sweep.row import COLUMNS, Row
from cohsim.sweep.runner import Sweep, run_points, run_sweep
from cohsim.sweep.sweepoptions import SweepOptions

__all__ = [
    "COLUMNS",
    "Row",
    "Sweep",
    "SweepOptions",
    "SweepPoint",
    "csv_text",
    "json_doc",
    "json_text",
    "grid",
    "run_points",
    "run_sweep",
    "select_instances",
    "variants_of",
]
