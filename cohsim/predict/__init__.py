"""Predictions: a workload on a machine, replicated, with intervals (`core`)."""
