"""The launch simulation's hot modules compiled with mypyc, where it can be.

pyproject.toml holds the package's metadata; this file only adds the extension modules. The
discrete-event simulation of level 3 (cohsim.kernel.simulation.launch and the resources it runs: the
clock, the CPUs, namespace_sem, mount_lock, the grace periods, the mount table, the background
readers, and the records they fill) spends its time in Python per event; mypyc compiles those
modules to C, with the same semantics (the same simulation, event for event:
tests/kernel/simulation/test_compiled.py compares the two). They are written for it: native classes
with typed fields on the hot path (the clock is one of its own, not a subclass of simpy's:
cohsim.kernel.simulation.clock; the op costs the loop reads are copied into native fields:
cohsim.kernel.callcost.OpRow). The .py sources are installed beside the compiled modules.

Pure Python instead: `COHSIM_PURE_PYTHON=1 pip install .`, an editable install (`pip install
-e`: the tree's edits must take effect), or where mypyc or a C compiler is missing (the build
says so and goes on without them).
"""

from __future__ import annotations

import glob
import os
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

#: the modules compiled: the simulation's hot loop (nearly all of a prediction's time)
COMPILED = [
    "cohsim/kernel/simulation/clock.py",
    "cohsim/kernel/simulation/launch.py",
    "cohsim/kernel/simulation/mountlock.py",
    "cohsim/kernel/simulation/rwsem.py",
    "cohsim/kernel/simulation/nssections.py",
    "cohsim/kernel/simulation/cpus.py",
    "cohsim/kernel/simulation/rcu.py",
    "cohsim/kernel/simulation/background.py",
    "cohsim/kernel/simulation/mounttable.py",
    "cohsim/kernel/callcost.py",
    "cohsim/kernel/linetake.py",
    "cohsim/kernel/simulation/records.py",
    "cohsim/kernel/simulation/threads.py",
    "cohsim/kernel/simulation/sections.py",
    "cohsim/kernel/simulation/pcpu.py",
]


class OptionalBuildExt(build_ext):
    """build_ext that leaves the package pure Python when the C build fails (no compiler):
    all compiled modules or none (they share one runtime library)."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # a missing compiler shows as several error types
            for ext in self.extensions:
                path = self.get_ext_fullpath(ext.name)
                if os.path.exists(path):
                    os.remove(path)
            _warn(f"compiling failed ({exc}); cohsim is installed as pure Python")


def _warn(text: str) -> None:
    print(f"cohsim setup: {text}", file=sys.stderr)


def _remove_stale_builds() -> None:
    """Compiled modules an earlier build left under build/ (another module list, or a compiled
    build before a pure one) would be copied into this wheel beside the sources: remove them
    all; build_ext makes the current ones again."""
    for lib in glob.glob(os.path.join("build", "lib*")):
        stale = glob.glob(os.path.join(lib, "cohsim", "**", "*.so"), recursive=True)
        stale += glob.glob(os.path.join(lib, "*__mypyc*.so"))
        for path in stale:
            os.remove(path)


def _extensions() -> list:  # type: ignore[type-arg]
    if not {"bdist_wheel", "build_ext", "build", "install"} & set(sys.argv):
        # metadata only (pip asks for it first), or an editable install, which runs the tree's
        # sources: compiled copies would hide their edits
        return []
    _remove_stale_builds()
    if os.environ.get("COHSIM_PURE_PYTHON", "") not in ("", "0"):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        _warn("mypyc is not available; cohsim is installed as pure Python")
        return []
    try:
        return mypycify(COMPILED, opt_level="3", group_name="cohsim_kernel")
    except (Exception, SystemExit) as exc:  # mypyc refusing the sources: pure Python, said so
        _warn(f"mypyc failed ({exc}); cohsim is installed as pure Python")
        return []


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
