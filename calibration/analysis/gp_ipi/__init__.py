"""What a busy vCPU adds to an expedited grace period, and the gaps between chained ones."""
