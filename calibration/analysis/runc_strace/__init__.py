"""The mount-table work of one real `runc run`, from strace logs (summary)."""
