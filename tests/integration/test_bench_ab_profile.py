"""scripts/bench/ab_iops and bpf_profile still work: one short run of each,
their tables, and nothing left behind. Runs, not results: a real
comparison takes ten rounds or more (docs/PERFORMANCE.md).
"""

import json
import os
import re
import subprocess
import sys

from conftest import REPO
from test_bench_quick import _leftovers

AB_IOPS = os.path.join(REPO, "scripts", "bench", "ab_iops")
PROFILE = os.path.join(REPO, "scripts", "bench", "bpf_profile")


def test_ab_iops_one_round_runs_and_cleans_up(tmp_path, ilock_bin):
    base = tmp_path / "images"
    base.mkdir()
    out = tmp_path / "ab.json"
    r = subprocess.run([sys.executable, AB_IOPS, "--rounds", "1", "--seconds", "1",
                        "--read-mix", "0", "--tmpdir", str(base), "--json", str(out),
                        ilock_bin, ilock_bin], capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    for row in ("baseline IOPS", "A's cost", "B's cost", "A against B"):
        assert re.search(rf"^\| {row} \| ", r.stdout, re.M), r.stdout
    assert "fio randrw 0/100" in r.stdout
    doc = json.loads(out.read_text())
    (rnd,) = doc["rounds"]
    assert sorted(rnd) == ["A", "B", "base"] and all(v > 0 for v in rnd.values()), rnd
    assert _leftovers(str(base)) == []


def test_ab_iops_bad_arguments_exit_2(tmp_path):
    for args in (["--rounds", "0", "/bin/true", "/bin/true"],
                 ["--read-mix", "101", "/bin/true", "/bin/true"],
                 [str(tmp_path / "nothing"), "/bin/true"],
                 ["/bin/true"]):
        r = subprocess.run([sys.executable, AB_IOPS] + args, capture_output=True, text=True,
                           timeout=30)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.strip() and r.stdout == "", (args, r.stderr)


def test_bpf_profile_maps_samples_to_lines(tmp_path, ilock_bin):
    base = tmp_path / "images"
    base.mkdir()
    r = subprocess.run([sys.executable, PROFILE, "--seconds", "2", "--top", "3", "--tmpdir",
                        str(base), "--ilock", ilock_bin], capture_output=True, text=True,
                       timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    m = re.search(r"^([\d,]+) samples; idle ([\d.]+)%", r.stdout, re.M)
    assert m and int(m.group(1).replace(",", "")) > 1000, r.stdout
    # the seed workload keeps contention_begin busy: its samples land on its source lines
    assert re.search(r"^\| contention_begin_btf \| [\d,]+ \| ", r.stdout, re.M), r.stdout
    block = r.stdout.split("contention_begin_btf: hottest lines", 1)[1].splitlines()[1:4]
    assert all(re.match(r"^\s+[\d,]+\s+[\d.]+%\s+\d+: \S", l) for l in block), block
    assert _leftovers(str(base)) == []


def test_bpf_profile_bad_arguments_exit_2(tmp_path):
    for args in (["--seconds", "0"], ["--freq", "0"], ["--ilock", str(tmp_path / "nothing")],
                 ["--nope"]):
        r = subprocess.run([sys.executable, PROFILE] + args, capture_output=True, text=True,
                           timeout=30)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.strip() and r.stdout == "", (args, r.stderr)
