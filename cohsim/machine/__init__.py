"""Level 1, the machine: hardware threads, cores, LLC domains and sockets as a graph, with
cache-line transfer latencies fitted to measured core-to-core matrices.

`model` holds the typed machine and its latency classes, `catalog` reads and writes the TOML
machine files, `matrix` reads measured core-to-core matrices, `c2c` compares and fits them, and
`placement` places threads on hardware threads.
"""
