"""Pictures for people. Every function draws on the `ax` it is given and returns what it drew.

`machine` draws topologies and core-to-core heat maps, `lock` the hand-off curves, `launch`
the launch-time distributions, `explain` the launch breakdown and the ranking of the unknowns;
`save` writes a figure to a file atomically.
"""

import matplotlib

matplotlib.use("Agg")  # files only: never needs a display
