"""The `cohsim` command line: one module per command group, `app` the dispatcher.

The command line runs numpy's BLAS on one thread (`OPENBLAS_NUM_THREADS=1`, unless the
environment already says otherwise), set here before anything imports numpy. cohsim's linear
algebra is on matrices of a few parameters, where a BLAS thread pool never pays; its idle
threads spin instead: in `perf record` of the default mesh prediction on a 2-CPU machine, 4-8 %
of the samples were OpenBLAS's idle thread (`blas_thread_server`) spinning while the
simulations' worker processes wanted both CPUs, and none with one thread. The workers, forked or
spawned from this process, inherit the setting. A library caller's own process is left as it
is.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from cohsim.cli.app import main  # noqa: E402  (after the environment is set)

__all__ = ["main"]
