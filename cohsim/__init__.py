"""cohsim: cache coherence under lock contention, and container launch latency, on server CPUs."""

from cohsim import _pure

__version__ = "0.1.0"

if _pure.wanted():  # COHSIM_PURE_PYTHON: the sources, not the compiled modules (cohsim._pure)
    _pure.install()
