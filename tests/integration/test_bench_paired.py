"""scripts/bench/paired still works, and the switch it relies on does what it
says: with bench_idle set, ilock's programs do nothing at all; cleared,
they trace again. Runs, not targets: those are judged by the full run.
"""

import json
import os
import re
import subprocess
import sys
import time


from conftest import REPO
from ilock_run import locks_for, start_stat, stop_stat
from test_bench_quick import _leftovers
from test_stat import finish, hold, ino_of, lockhold
from util import load_script, make_file

PAIRED = os.path.join(REPO, "scripts", "bench", "paired")


def _paired_module():
    return load_script(PAIRED)


def _idle(map_id, v=None):
    if v is not None:
        subprocess.run(["bpftool", "map", "update", "id", str(map_id), "key", "0", "0", "0", "0",
                        "value", str(v), "0", "0", "0"], check=True, capture_output=True)
    out = subprocess.run(["bpftool", "-j", "map", "lookup", "id", str(map_id), "key", "0", "0",
                          "0", "0"], capture_output=True, text=True, check=True).stdout
    return int(json.loads(out)["value"][0], 16)


def _contend(procs, helpers_dir, path):
    holder, _, _ = hold(procs, helpers_dir, path, hold_ms=300)
    readers = procs.start([lockhold(helpers_dir), "read", path, 8192, 4096, 2])
    readers.communicate(timeout=20)
    finish(holder)


def test_bench_idle_stops_and_restarts_the_work(xfs, procs, helpers_dir, ilock_bin):
    idle_path = make_file(os.path.join(xfs.mnt, "idle.dat"), 1 << 20)
    live_path = make_file(os.path.join(xfs.mnt, "live.dat"), 1 << 20)

    st = start_stat(procs, ilock_bin, "-D", xfs.mnt)
    bench = _paired_module().bench_map_id(st.pid)  # found as the benchmark finds it
    assert _idle(bench) == 0  # ilock itself never sets it
    assert _idle(bench, 1) == 1
    _contend(procs, helpers_dir, idle_path)
    assert _idle(bench, 0) == 0
    _contend(procs, helpers_dir, live_path)
    doc = stop_stat(st)

    assert locks_for(doc, xfs.majmin, ino_of(idle_path)) == [], doc["locks"]
    (row,) = locks_for(doc, xfs.majmin, ino_of(live_path))
    assert row["shared"]["waits"] == 2
    # idle programs return before they count anything, so no wait went
    # missing either: nothing began that did not end
    assert doc["lost"]["end_without_begin"] == 0, doc["lost"]
    assert doc["lost"]["begin_without_end"] == 0, doc["lost"]


def test_block_costs_and_verdict():
    m = _paired_module()
    w = [("off", 100, 1.0), ("on", 90, 1.0), ("on", 45, 0.5), ("off", 100, 1.0),
         ("on", 80, 1.0), ("off", 100, 1.0), ("off", 100, 1.0), ("on", 80, 1.0),
         ("on", 1, 1.0)]  # an unfinished block is left out
    c = m.block_costs(w)
    assert [round(x, 6) for x in c] == [0.1, 0.2]

    v = m.verdict([0.02] * 20, [0.01] * 20)
    assert v["state"] == "PASS" and "ilock <= 2x floor: PASS" in v["line"], v
    assert abs(v["ilock_total"] - (1 - 0.98 * 0.99)) < 1e-12
    assert m.verdict([0.01] * 20, [0.03] * 20)["state"] == "MISS"
    noisy = [(-1) ** i * 0.1 for i in range(20)]
    assert m.verdict(noisy, [0.0] * 20)["state"] == "UNRESOLVED"


def test_paired_quick_runs_and_cleans_up(tmp_path):
    base = tmp_path / "images"
    base.mkdir()
    out = tmp_path / "paired.json"
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, PAIRED, "--blocks", "5", "--window", "0.25",
                        "--repeats", "1", "--tmpdir", str(base), "--json", str(out)],
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-2000:]
    assert time.monotonic() - t0 < 150
    assert "| floor | empty programs attached / not | 5 |" in r.stdout, r.stdout
    assert "| ilock | ilock's work on / idle | 5 |" in r.stdout, r.stdout
    assert re.search(r"^ilock <= 2x floor: (PASS|MISS|UNRESOLVED) ", r.stderr, re.M), r.stderr

    doc = json.loads(out.read_text())
    assert sorted(p["phase"] for p in doc["raw"]) == ["floor", "ilock"]
    m = _paired_module()
    for p in doc["raw"]:
        states = [s for s, _, _ in p["windows"]]
        assert states == [s for b in range(5) for s in m.BLOCK[b % 2]], states
        # fio ran all along: every window saw its system calls
        assert all(n > 0 and 0.2 < secs < 1.0 for _, n, secs in p["windows"]), p["windows"]
    assert _leftovers(str(base)) == []


def test_paired_bad_flags_exit_2():
    for args in (["--blocks", "2"], ["--window", "0"], ["--repeats", "0"], ["--nope"]):
        r = subprocess.run([sys.executable, PAIRED] + args, capture_output=True, text=True,
                           timeout=30)
        assert r.returncode == 2, (args, r.stderr)
        assert "usage: paired" in r.stderr
        assert r.stdout == ""
