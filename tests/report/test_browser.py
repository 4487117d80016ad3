"""The report in a real browser: headless Chromium renders it, its own script confirms every
image decoded, and a screenshot is taken (issue 21: the report must render correctly).

Skipped only where no Chromium binary exists (CI installs Debian's `chromium`, .ci/run).
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from reportdata import build

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")
BROWSER = next((b for b in BROWSERS if shutil.which(b)), None)
pytestmark = pytest.mark.skipif(
    BROWSER is None,
    reason="no Chromium binary on PATH (apt-get install chromium; .ci/run installs it)",
)
#: the flags of every run: no GPU, no sandbox (root in a container), the page's timers run
#: to completion before the DOM is dumped or the picture taken
FLAGS = ("--headless", "--disable-gpu", "--no-sandbox", "--virtual-time-budget=5000")


def _chromium(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    cmd = [str(BROWSER), *FLAGS, f"--user-data-dir={home / 'profile'}", *args]
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, check=False)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return build(tmp_path_factory.getbasetemp())


def test_the_report_renders_with_every_image_loaded(report, tmp_path):
    path, data = report
    done = _chromium("--dump-dom", path.resolve().as_uri(), home=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    title = re.search(r"<title>(.*?)</title>", dom)
    assert title and title.group(1) == (
        "cohsim plan: 10 containers x 5 layers, each up within 0.6 s"
    )
    # the table's rows, as the browser parsed them
    ranking = dom.split('id="ranking"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r'<tr class="candidate">(.*?)</tr>', ranking)
    assert len(rows) == len(data.plan.rows) == 2
    for row, plan_row in zip(rows, data.plan.rows, strict=True):
        cells = re.findall(r"<td>(.*?)</td>", row)
        assert cells[1] == plan_row.candidate.machine_label
    # the page's own check ran on load: every <img> complete, with a natural width
    check = re.search(r'id="image-check"[^>]*data-loaded="(\d+)"[^>]*data-total="(\d+)"', dom)
    assert check, "the image check did not run"
    loaded, total = map(int, check.groups())
    assert total == 3 and loaded == total
    # and a reader sees nothing of it: hidden, no text
    assert re.search(r'<p id="image-check" hidden=""[^>]*></p>', dom)


def test_the_screenshot_is_a_real_picture(report, tmp_path):
    path, _ = report
    shot = tmp_path / "report.png"
    done = _chromium(
        f"--screenshot={shot}", "--window-size=1280,2000", path.resolve().as_uri(), home=tmp_path
    )
    assert done.returncode == 0, done.stderr[-2000:]
    head = shot.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", head[16:24])
    assert (width, height) == (1280, 2000)
    assert shot.stat().st_size > 50_000  # text, tables and plots, not a blank page
