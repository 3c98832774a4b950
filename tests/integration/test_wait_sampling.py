"""Wait sampling (--wait-sample N, lockwait.bpf.c): above a per-lock, per-CPU
rate only 1 in N rw_semaphore waits is looked at, timed and attributed, each
counted for N. Two ilock instances watch the same real workload at once, one
sampling and one timing every wait: the estimates must match the exact
figures, and a hot file must not stop a cold file's rare wait from being
timed exactly.
"""

import json
import os
import subprocess


from ilock_run import edges_for, locks_for, start_record, start_stat, stop_record, stop_stat
from test_stat import HOLD_MS, MS, finish, hold, ino_of, lockhold
from util import make_file, run_seed_fio, seed_fio


def run(cmd):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=60)


def role_key(r):
    return tuple((r[s]["comm"], r[s]["mode"], r[s]["op"]) for s in ("holder", "waiter"))


def test_sampled_waits_estimate_the_exact_ones(xfs, procs, ilock_bin):
    path = make_file(os.path.join(xfs.mnt, "ibdata1"), 64 << 20)
    ino = ino_of(path)
    # every wait sampled (no exact budget), 1 in 8
    sampled = start_stat(procs, ilock_bin, "-D", xfs.mnt, "--no-stacks", "--wait-sample", "8",
                         "--wait-exact-rate", "0")
    exact = start_stat(procs, ilock_bin, "-D", xfs.mnt, "--no-stacks")
    run_seed_fio(procs, path, 64, 3)
    a, b = stop_stat(sampled), stop_stat(exact)

    assert a["attach"]["wait_sampling"] == "1/8 > 0/s/lock/cpu"
    assert b["attach"]["wait_sampling"] == "off"
    assert a["summary"]["estimated"] is True and b["summary"]["estimated"] is False
    ea, eb = a["events"], b["events"]
    assert eb["rwsem_waits_sampled_out"] == 0 and eb["inode_lock_waits"] > 5_000, eb
    # 7 in 8 left out before the lock is even read; the rest timed
    assert abs(ea["rwsem_waits_sampled_out"] - 7 * ea["rwsem_waits"] / 8) \
        <= 0.02 * ea["rwsem_waits"], ea
    assert 0 < ea["inode_lock_waits"] <= ea["rwsem_waits"] // 6, ea
    for doc in (a, b):
        assert doc["lost"]["end_without_begin"] == 0 and doc["lost"]["begin_without_end"] == 0

    ra, rb = locks_for(a, xfs.majmin, ino), locks_for(b, xfs.majmin, ino)
    assert len(ra) == len(rb) == 1, (a["locks"], b["locks"])
    compared = 0
    for mode in ("shared", "exclusive"):
        n, est = rb[0][mode]["waits"], ra[0][mode]["waits"]
        if n < 2_000:
            continue
        assert abs(est - n) <= 0.15 * n, (mode, est, n)
        # each timed wait counts 8 times, in the histogram too
        assert est % 8 == 0
        assert sum(c for _, _, c in ra[0][mode]["hist"]) == est
        t, tb = ra[0][mode]["wait_ns"], rb[0][mode]["wait_ns"]
        assert abs(t - tb) <= 0.25 * tb, (mode, t, tb)
        compared += 1
    assert compared == 2, rb

    # the pairs and the roles are estimates of the same
    assert sum(e["waits"] for e in edges_for(a, xfs.majmin, ino)) == \
        ra[0]["shared"]["waits"] + ra[0]["exclusive"]["waits"]
    roles_b = {role_key(r): r["waits"] for r in b["roles"] if r["ino"] == ino}
    roles_a = {role_key(r): r["waits"] for r in a["roles"] if r["ino"] == ino}
    big = [k for k, n in roles_b.items() if n >= 3_000]
    assert len(big) >= 2, roles_b
    for k in big:
        assert abs(roles_a.get(k, 0) - roles_b[k]) <= 0.25 * roles_b[k], (k, roles_a, roles_b)
    # range-lock headroom is a share: the sample gives the same
    assert abs(ra[0]["headroom"] - rb[0]["headroom"]) <= 0.05


def test_hot_lock_leaves_a_cold_locks_waits_exact(xfs, procs, helpers_dir, ilock_bin,
                                                   tmp_path):
    """The seed workload hammers one file far over the exact rate while a
    writer holds another file's IOLOCK and three readers wait on it: those
    waits are timed and counted once each, while the hot file's are sampled."""
    busy = make_file(os.path.join(xfs.mnt, "hot.dat"), 64 << 20)
    path = make_file(os.path.join(xfs.mnt, "cold.dat"), 1 << 20)
    reader_bin = tmp_path / "lockreader"
    os.symlink(lockhold(helpers_dir), reader_bin)
    st = start_stat(procs, ilock_bin, "-D", xfs.mnt, "--wait-sample", "64")
    fio = procs.start(seed_fio(busy, 64, 4))
    holder, _, htid = hold(procs, helpers_dir, path, hold_ms=HOLD_MS)
    readers = procs.start([str(reader_bin), "read", path, 8192, 4096, 3])
    readers.communicate(timeout=20)
    finish(holder)
    fio.communicate(timeout=60)
    assert fio.returncode == 0
    doc = stop_stat(st)

    ev = doc["events"]
    assert ev["rwsem_waits_sampled_out"] > ev["inode_lock_waits"], ev
    cold = locks_for(doc, xfs.majmin, ino_of(path))
    assert len(cold) == 1, doc["locks"]
    assert cold[0]["shared"]["waits"] == 3, cold[0]["shared"]
    assert cold[0]["shared"]["max_ns"] >= (HOLD_MS // 2) * MS
    edges = edges_for(doc, xfs.majmin, ino_of(path))
    assert sum(e["waits"] for e in edges) == 3
    assert all(e["holder"]["pid"] == htid for e in edges), edges
    hot = locks_for(doc, xfs.majmin, ino_of(busy))
    # sampled: the estimate counts far more waits than were timed in all
    assert hot and hot[0]["shared"]["waits"] + hot[0]["exclusive"]["waits"] \
        > ev["inode_lock_waits"], (hot, ev)


def test_a_sampled_recording_says_so_in_every_report(xfs, procs, ilock_bin, tmp_path):
    path = make_file(os.path.join(xfs.mnt, "ibdata1"), 32 << 20)
    rec = str(tmp_path / "s.ilrec")
    p = start_record(ilock_bin, rec, "-D", xfs.mnt, "-i", "0.5", "--wait-sample", "16",
                     "--wait-exact-rate", "0")
    run_seed_fio(procs, path, 32, 2, jobs=4)
    stop_record(p)

    text = run([ilock_bin, "report", rec])
    assert text.returncode == 0, text.stderr
    assert "wait_sampling=1/16 > 0/s/lock/cpu" in text.stdout
    assert "\nsampled: " in text.stdout and "rw_semaphore waits left out" in text.stdout
    assert "waits, estimated from a sample)" in text.stdout
    doc = json.loads(run([ilock_bin, "report", rec, "-j"]).stdout)
    assert doc["summary"]["estimated"] is True
    assert doc["events"]["rwsem_waits_sampled_out"] > doc["events"]["inode_lock_waits"] > 0
    html = str(tmp_path / "r.html")
    assert run([ilock_bin, "report", rec, "--html", html]).returncode == 0
    page = open(html).read()
    assert "<th class=\"l\">wait sampling</th><td>1/16 &gt; 0/s/lock/cpu: waits, times and " \
        "histograms are estimates" in page, page[:3000]
