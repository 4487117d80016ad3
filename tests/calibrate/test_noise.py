"""noise: the kernel fit's residual weights (host scatter plus the simulation's)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cohsim.calibrate.measuredruns import MountRun
from cohsim.calibrate.mountreplay import SimRun
from cohsim.calibrate.noise import MIN_NOISE, noise_sd


def _run(stride: float, cps: float, repeat: int, layers: int = 1) -> MountRun:
    return MountRun("per-layer", 1, layers, repeat, 4, 1, stride, 0.0, cps, 0.0, 21, 8)


def test_noise_is_the_hosts_repeat_scatter_plus_the_simulations():
    # two shapes, three repeats each: log scatter pooled over both (4 degrees of freedom)
    a = [_run(s, 1000.0, i) for i, s in enumerate((100.0, 110.0, 90.0))]
    b = [_run(s, 1000.0, i, layers=10) for i, s in enumerate((200.0, 200.0, 230.0))]
    groups = {a[0].key: a, b[0].key: b}

    def sims(sa: float, sb: float) -> dict:
        return {a[0].key: SimRun(sa, 1000.0), b[0].key: SimRun(sb, 1000.0)}

    sets = [sims(100.0, 200.0), sims(120.0, 190.0), sims(80.0, 210.0)]
    sd = noise_sd(groups, sets)
    ss = sum(
        (x - np.mean(np.log(v))) ** 2 for v in ((100, 110, 90), (200, 200, 230)) for x in np.log(v)
    )
    sim_var = np.mean([np.var(np.log(v), ddof=1) for v in ((100, 120, 80), (200, 190, 210))])
    assert sd[("stride_ns", "", 1)] == pytest.approx(math.sqrt(ss / 4 + sim_var))
    # containers/s agree everywhere: no noise to weigh by, so the floor
    assert sd[("containers_per_s", "", 1)] == MIN_NOISE
    # one seed set: the host's scatter alone
    assert noise_sd(groups, sets[:1])[("stride_ns", "", 1)] == pytest.approx(math.sqrt(ss / 4))
