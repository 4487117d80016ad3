"""Analyses of the committed calibration data, one folder a question; each script prints what
its data folder's README reports. They are not part of cohsim: they import it like any other
user, and each other as this package, so run them from the repository root:

    python -m calibration.analysis.mount_trace.analyse TRACE.txt.xz ...

tests/analysis/ runs each one on the committed data.
"""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: the 2-vCPU development VM's measurements
DEVVM = REPO / "calibration" / "data" / "devvm-2cpu-intel-xeon-f6m167"
#: its mount_trace.sh traces (tracefs text, xz), one folder a campaign
TRACES = DEVVM / "mount-trace"
