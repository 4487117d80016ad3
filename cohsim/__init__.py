"""cohsim: cache coherence under lock contention, and container launch latency, on server CPUs."""

__version__ = "0.1.0"
