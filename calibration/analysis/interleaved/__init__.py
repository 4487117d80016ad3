"""mount_bench in shuffled rounds beside the fit's back-to-back repeats."""
