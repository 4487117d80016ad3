"""ns_bench: a container's mount-namespace copy and teardown against the mount table's size."""
