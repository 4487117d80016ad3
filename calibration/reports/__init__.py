"""Calibration reports: scripts that print how well a committed fit describes its host (the
figures in calibration/fits/README.md). They refit or simulate, so they take minutes; speed
benchmarks are in benchmarks/. Run them from the repository root:

    python -m calibration.reports.in_sample [FIT.json] [MOUNT_DATA_DIR] [strategy ...]
    python -m calibration.reports.held_out [--mount PATH] [workers|repeats ...]
    python -m calibration.reports.unmount_overlap [FIT.json]
"""
