"""Pictures for people. Every function draws on the `ax` it is given and returns what it drew.

`machine` draws topologies and core-to-core heat maps (and holds `save_figure`), `lock` the
hand-off curves, `launch` the launch-time distributions.
"""
