"""prop_bench: mount propagation into live slave namespaces and full mountinfo reads."""
