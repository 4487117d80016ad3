"""Where a burst's sequence time goes, by lock, in a mount_trace.sh trace (trace) and in the
level-3 simulation of the same shape (model)."""
