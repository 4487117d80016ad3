"""The runtimes' own mount calls (cohsim.workload.runtime): what the classifier sees of each,
their mount-op counts, and which way a prediction moves without the namespace copy."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import pytest

from cohsim.cli.app import build_parser, main
from cohsim.kernel.classify import ThreadState, classify
from cohsim.workload.parse import parse_text
from cohsim.workload.runtime import RUNTIMES, runtime_calls, runtime_mount_ops
from cohsim.workload.synth import STRATEGIES, expected_mount_ops, synthesize, write_strace


def runtime_ops(runtime: str) -> Counter[str]:
    """The classifier's ops of one container's runtime part, read back from strace text."""
    one = synthesize("per-layer", 1, 1, seed=0, runtime=runtime)
    bare = synthesize("per-layer", 1, 1, seed=0, runtime="none")
    events = parse_text(write_strace(one)).threads[0].events
    st = ThreadState()
    ops = [classify(e, st) for e in events]
    return Counter(ops[len(bare.threads[0].events) :])


def test_runc_is_the_recorded_sequence() -> None:
    ops = runtime_ops("runc")
    assert (ops["ns_copy"], ops["umount_oldroot"], ops["pivot_root"]) == (1, 1, 1)
    assert ops["mount_rslave"] == 2 and ops["mountinfo_read"] == 4


def test_shared_namespace_joins_instead_of_copying() -> None:
    """shared-ns: setns() (other) where runc unshares; no copy, no rslave of /, no pivot and
    no old root; every mount under the rootfs and every mask and read-only path kept."""
    ops, runc = runtime_ops("shared-ns"), runtime_ops("runc")
    assert (ops["ns_copy"], ops["umount_oldroot"], ops["pivot_root"], ops["mount_rslave"]) == (
        0, 0, 0, 0,
    )  # fmt: skip
    for op in ("mount_bind", "mount_new", "mount_remount", "mount_enotdir", "mount_failed",
               "mountinfo_read", "umount_detach"):  # fmt: skip
        assert ops[op] == runc[op], op
    # the setns, and the unshare of the other namespaces (runc's carried CLONE_NEWNS too)
    assert ops["other"] == runc["other"] + 2


def test_host_namespace_skips_the_copy_and_what_needs_one() -> None:
    """host-ns: no copy and no pivot; prepareRoot's rslave of / stays (the host's /); no
    read-only root, read-only paths or masks (runc refuses them without a mount namespace)."""
    ops = runtime_ops("host-ns")
    assert (ops["ns_copy"], ops["umount_oldroot"], ops["pivot_root"]) == (0, 0, 0)
    assert ops["mount_rslave"] == 1
    assert ops["mount_remount"] == 1  # runc's binary only
    assert ops["mount_enotdir"] == ops["mount_failed"] == 0
    assert ops["mount_new"] == 7 and ops["mount_bind"] == 1 + 1 + 6  # binary, rootfs, devices


def test_setns_reads_as_a_join() -> None:
    trace = synthesize("common-parent", 1, 1, seed=0, runtime="shared-ns")
    (setns,) = [e for e in trace.threads[0].events if e.name == "setns"]
    assert setns.flags == ("CLONE_NEWNS",) and setns.ok
    assert not any(e.name == "unshare" and "CLONE_NEWNS" in e.flags for e in trace.events)


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_mount_ops_match_the_closed_form(strategy: str, runtime: str) -> None:
    trace = parse_text(write_strace(synthesize(strategy, 3, 4, seed=1, runtime=runtime)))
    assert trace.mount_ops == expected_mount_ops(strategy, 3, 4, runtime)


def test_mount_ops_per_runtime() -> None:
    counts = {r: runtime_mount_ops(r) for r in RUNTIMES}
    assert counts == {"runc": 33, "shared-ns": 30, "host-ns": 18, "none": 0}
    assert list(runtime_calls("none", "0" * 64, "/r")) == []


@pytest.mark.parametrize(
    ("strategy", "digest"),
    [("per-layer", "5d6dc5e7d141a790"), ("common-parent", "6dd7031bcc8b0507"),
     ("lowerdir-plus", "e29d9516d7074629")],
)  # fmt: skip
def test_runc_keeps_its_bytes(strategy: str, digest: str) -> None:
    """The variants share runc's parts; runc's text is the same bytes as before they came
    (the digests of the text before the variants were added)."""
    text = write_strace(synthesize(strategy, 2, 2, seed=5, runtime="runc"), "ttt")
    assert hashlib.sha256(text.encode()).hexdigest()[:16] == digest


def _p50(capsys: pytest.CaptureFixture[str], runtime: str) -> float:
    argv = ["predict", "--arch", "mesh", "--containers", "100", "--layers", "10",
            "--runtime", runtime, "--engine", "analytic", "--json"]  # fmt: skip
    assert main(argv) == 0
    return float(json.loads(capsys.readouterr().out)["launch_s"]["p50"]["value"])


def test_no_copy_is_faster_than_runc_at_100_containers(capsys: pytest.CaptureFixture[str]) -> None:
    """100 containers x 10 layers, analytic: a shared namespace copy, and no copy, start
    faster than runc's copy each; containerd alone fastest."""
    p50 = {r: _p50(capsys, r) for r in RUNTIMES}
    assert p50["none"] < p50["shared-ns"] < p50["runc"]
    assert p50["none"] < p50["host-ns"] < p50["runc"]


@pytest.mark.parametrize(
    "argv",
    [
        ["predict", "--arch", "mesh"],
        ["plan"],
        ["sweep"],
        ["trace", "synth", "--strategy", "per-layer", "--out", "t.strace"],
        ["kernel", "op", "ns_copy"],
    ],
)
def test_every_command_takes_every_runtime(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """`--runtime` is one flag (cohsim.cli.args.add_runtime): the same choices and help in
    predict, plan, sweep, trace synth and kernel op."""
    for runtime in RUNTIMES:
        args = build_parser(argv[0]).parse_args([*argv, "--runtime", runtime])
        assert args.runtime == runtime
    with pytest.raises(SystemExit):
        build_parser(argv[0]).parse_args([*argv, "--help"])
    assert "all containers join one namespace" in " ".join(capsys.readouterr().out.split())
