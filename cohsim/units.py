"""Time units: the one place the factors between nanoseconds, microseconds, milliseconds and
seconds are written down.

Simulated time is integer nanoseconds in level 3 (the launch simulation's clock, every `*_ns`
field; level 2's lock simulation runs in integer picoseconds, cohsim.lock.params.PS); results
people read are in seconds (`*_s`) or, in tables, microseconds. Convert with the functions
below rather than bare `1e9` / `1000` literals, so a reader sees the unit and a search finds
every conversion.

The float factors divide (`ns / NS_PER_S`) rather than multiply by a reciprocal: `x / 1e9`
and `x * 1e-9` round differently, and results must stay byte-identical.
"""

from __future__ import annotations

NS_PER_US = 1_000  #: nanoseconds in a microsecond (an int: integer clocks stay integers)
NS_PER_MS = 1_000_000  #: nanoseconds in a millisecond
NS_PER_S = 1e9  #: nanoseconds in a second (a float: rates and seconds are floats)
US_PER_S = 1e6  #: microseconds in a second
NS_PER_S_INT = 1_000_000_000  #: the same, for exact integer clocks (parsed timestamps)
US_PER_S_INT = 1_000_000  #: the same, for exact integer formatting of microseconds
S_PER_HOUR = 3_600  #: seconds in an hour
S_PER_DAY = 86_400  #: seconds in a day (a time-of-day clock wraps after one)


def ns_to_s(ns: float) -> float:
    """Seconds in `ns` nanoseconds."""
    return ns / NS_PER_S


def s_to_ns(s: float) -> float:
    """Nanoseconds in `s` seconds (a float: round where an integer clock needs one)."""
    return s * NS_PER_S


def ns_to_us(ns: float) -> float:
    """Microseconds in `ns` nanoseconds."""
    return ns / NS_PER_US


def ns_to_ms(ns: float) -> float:
    """Milliseconds in `ns` nanoseconds."""
    return ns / NS_PER_MS


def per_s_to_gap_ns(rate_per_s: float) -> float:
    """The mean gap in nanoseconds between events arriving at `rate_per_s` a second."""
    return NS_PER_S / rate_per_s
