"""How far the 16-vCPU host's burst times spread from run to run, and whether the model's
worst misses there are beyond that spread (scatter)."""
