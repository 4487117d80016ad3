"""Measuring real hosts: building and running the real benchmarks (the C programs of
calibration/bench/: pause_bench, mount_bench, wake_bench, ...) on the real kernel (`programs`),
each program's columns and summary (`chasebench`, `nsbench`, ...; `summary`), the facts of the
host they ran on (`hostinfo`), and the reader of ftrace dumps (`tracefs`). The command that
runs them is `cohsim bench` (cohsim.cli.bench).
"""
