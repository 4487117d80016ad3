"""Calibration: reading benchmark data (`benchdata`), fitting the free parameters with
uncertainty (`calibration`), and checking predictions against held-out runs (`heldout`).
"""

from cohsim.calibrate.benchdata import BenchData, MountRun, load_bench, simulate_run
from cohsim.calibrate.calibration import Calibration, default_fit, load_fit
from cohsim.calibrate.heldout import BOUND, SPLITS, held_out

__all__ = [
    "BOUND",
    "SPLITS",
    "BenchData",
    "Calibration",
    "MountRun",
    "default_fit",
    "held_out",
    "load_bench",
    "load_fit",
    "simulate_run",
]
