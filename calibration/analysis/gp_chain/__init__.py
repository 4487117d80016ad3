"""The gap before a chained grace period in its parts, and where the workers are off the CPU."""
