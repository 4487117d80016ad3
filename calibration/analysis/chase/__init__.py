"""chase_bench: dependent-load latency by working-set size."""
