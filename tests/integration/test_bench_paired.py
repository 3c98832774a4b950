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


def test_cpu_ratios_and_perf3_verdict():
    m = _paired_module()
    # (state, calls, seconds, cpu): CPU per call none 1.0, ilock 1.01, perf 1.2
    blk = [("none", 100, 1.0, 100.0), ("ilock", 100, 1.0, 101.0), ("perf", 50, 1.0, 60.0),
           ("perf", 50, 1.0, 60.0), ("ilock", 100, 1.0, 101.0), ("none", 100, 1.0, 100.0)]
    r = m.block_cpu_ratios(blk * 2 + blk[:3], 6, "none", ("ilock", "perf"))
    assert [tuple(round(x, 9) for x in t) for t in r] == [(1.01, 1.2)] * 2  # half a block left out
    # windows from before CPU was taken: nothing to judge, not a crash
    assert m.block_cpu_ratios([w[:3] for w in blk], 6, "none", ("ilock", "perf")) == []
    # a state that made no calls in a block leaves that block out
    idle = [("none", 100, 1.0, 100.0), ("ilock", 0, 1.0, 1.0), ("perf", 50, 1.0, 60.0)] * 2
    assert m.block_cpu_ratios(idle, 6, "none", ("ilock", "perf")) == []

    # ilock: floor 1%, work 1% -> 2.01%; perf 12% -> a third 4%: PASS
    v = m.perf3_verdict([1.01] * 20, [(1.01, 1.12)] * 20)
    assert v["state"] == "PASS", v
    assert abs(v["ilock_cpu"] - (1.01 * 1.01 - 1)) < 1e-9 and abs(v["perf_cpu"] - 0.12) < 1e-9
    # the floor counts: with a 4% floor the same work misses a third of 12%
    assert m.perf3_verdict([1.04] * 20, [(1.01, 1.12)] * 20)["state"] == "MISS"
    noisy = [(1.0 + (-1) ** i * 0.2, 1.06) for i in range(20)]
    assert m.perf3_verdict([1.0] * 20, noisy)["state"] == "UNRESOLVED"


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
        states = [s for s, _, _, _ in p["windows"]]
        assert states == [s for b in range(5) for s in m.BLOCK[b % 2]], states
        # fio ran all along: every window saw its system calls and its CPU
        assert all(n > 0 and 0.2 < secs < 1.0 and 0 < cpu < 2 * secs
                   for _, n, secs, cpu in p["windows"]), p["windows"]
    assert _leftovers(str(base)) == []


def test_paired_perf_phase_switches_perf_and_ilock(tmp_path):
    """--perf: perf lock record and ilock stay attached while the windows
    switch between neither, ilock's work and perf's recording (perf acks
    each switch, or the run fails); every window has calls and CPU, every
    block a pair of ratios, and the verdict is given."""
    base = tmp_path / "images"
    base.mkdir()
    out = tmp_path / "paired.json"
    r = subprocess.run([sys.executable, PAIRED, "--perf", "--blocks", "5", "--window", "0.25",
                        "--repeats", "1", "--tmpdir", str(base), "--json", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert re.search(r"^\| perf lock record \(events enabled / disabled, ilock idle\) \| 5 \| ",
                     r.stdout, re.M), r.stdout
    assert re.search(r"^ilock <= perf/3 in CPU per I/O: (PASS|MISS|UNRESOLVED) ", r.stderr,
                     re.M), r.stderr
    doc = json.loads(out.read_text())
    m = _paired_module()
    (perf,) = [p for p in doc["raw"] if p["phase"] == "perf"]
    states = [s for s, _, _, _ in perf["windows"]]
    assert states == [s for b in range(5) for s in m.PERF_BLOCK[b % 3]], states
    assert all(n > 0 and cpu > 0 for _, n, _, cpu in perf["windows"]), perf["windows"]
    assert len(m.block_cpu_ratios(perf["windows"], 6, "none", ("ilock", "perf"))) == 5
    assert doc["results"]["perf_blocks"] == 5 and "perf3" in doc["results"]
    assert _leftovers(str(base)) == []


def test_paired_bad_flags_exit_2():
    for args in (["--blocks", "2"], ["--window", "0"], ["--repeats", "0"], ["--nope"]):
        r = subprocess.run([sys.executable, PAIRED] + args, capture_output=True, text=True,
                           timeout=30)
        assert r.returncode == 2, (args, r.stderr)
        assert "usage: paired" in r.stderr
        assert r.stdout == ""
