"""Forced fallbacks on the host kernel: what ilock does where it must.

ILOCK_FORCE_RAW_TP=1 attaches raw_tp instead of tp_btf (a kernel whose BTF
lacks the tracepoints' types) and ILOCK_NO_XFS=1 leaves the XFS programs
out (XFS not loaded, or its tracepoints unusable). The deterministic
reader-blocked-by-writer scenario must still find the same waits, holder
and modes; only the hold times, which come from the XFS tracepoints, are
gone (docs/kernels.md, "Reduced data"). The fentry/kprobe fallbacks need
a kernel that allows them: `make test-kernels` covers those in qemu.
"""

import json
import os
import re
import subprocess

import pytest

from ilock_run import READY, edges_for, locks_for, stop_stat
from util import make_file, wait_line

HOLD_MS = 800
MS = 1_000_000
FORCED = {"ILOCK_FORCE_RAW_TP": "1", "ILOCK_NO_XFS": "1"}


def forced_env(**extra):
    env = dict(os.environ)
    env.update(FORCED)
    env.update(extra)
    return env


def test_probe_reports_forced_strategy(ilock_bin):
    r = subprocess.run([ilock_bin, "probe", "-j", "--holds=xfs"], env=forced_env(), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    p = json.loads(r.stdout)
    assert p["forced"] == ["ILOCK_FORCE_RAW_TP", "ILOCK_NO_XFS"]
    assert p["strategy"]["lock_waits"]["attach"] == "raw_tp"
    assert "forced by ILOCK_FORCE_RAW_TP" in p["strategy"]["lock_waits"]["why"]
    assert p["strategy"]["xfs_holds"] == {"attach": "off", "why": "off (ILOCK_NO_XFS)"}
    # the trial loads are real: raw_tp attached for a moment to the very tracepoint
    assert p["attach_types"]["raw_tp"]["ok"] is True
    assert p["attach_types"]["raw_tp"]["target"] == "contention_begin"

    txt = subprocess.run([ilock_bin, "probe", "--holds=xfs"], env=forced_env(), capture_output=True,
                         text=True, timeout=60)
    assert txt.returncode == 0
    assert "forced by the environment: ILOCK_FORCE_RAW_TP ILOCK_NO_XFS" in txt.stdout
    assert "  XFS holds:   off (ILOCK_NO_XFS)" in txt.stdout


def test_probe_lists_every_switch_and_refuses_filters_it_ignores(ilock_bin):
    env = dict(os.environ, ILOCK_NO_WALK="1", ILOCK_WALK_ALWAYS="0")
    r = subprocess.run([ilock_bin, "probe", "-j"], env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["forced"] == ["ILOCK_NO_WALK"]  # "0" is off
    for args, name in ((["-p", "1"], "-p"), (["--comm", "x"], "-c"), (["--ino", "5"], "--ino"),
                       (["--cgroup", "/sys/fs/cgroup"], "--cgroup")):
        r = subprocess.run([ilock_bin, "probe", *args], capture_output=True, text=True, timeout=30)
        assert r.returncode == 2 and r.stdout == "", r
        assert r.stderr.splitlines()[0] == (f"ilock probe: {name} changes nothing probe shows: it "
                                            "takes -D, --fs and --class (what they rule out is "
                                            "not attached)"), r.stderr


def test_filters_that_leave_nothing_are_refused(ilock_bin):
    """--fs ext4 --class xfs_ilock could only ever say "no waits": refused at start."""
    for cmd in (["stat", "-d", "1"], ["record", "-o", "/tmp/ilock-never.ilrec", "-d", "1"]):
        r = subprocess.run([ilock_bin, *cmd, "--fs", "ext4", "--class", "xfs_ilock"],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 1 and r.stdout == "", r
        assert r.stderr.splitlines()[-1] == ("ilock: the filters leave nothing to trace: --class "
                                             "xfs_ilock (XFS only); --fs ext4"), r.stderr
    assert not os.path.exists("/tmp/ilock-never.ilrec")


def test_probe_measures_hz_without_config(ilock_bin):
    """A container without /boot: HZ is timed from /proc/timer_list, and agrees with the config."""
    def probe(env):
        r = subprocess.run([ilock_bin, "probe", "-j"], env=env, capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, r.stderr
        p = json.loads(r.stdout)
        return p["hz"], p["hz_from"]

    hz, src = probe(dict(os.environ))
    measured, how = probe(dict(os.environ, ILOCK_NO_KCONFIG="1"))
    assert how == "measured: no kernel config found", how
    assert measured in (100, 250, 300, 1000), measured
    if src.startswith("assumed"):
        pytest.skip("no kernel config on this host to check the measured HZ against")
    assert src in ("/proc/config.gz", "/boot/config-" + os.uname().release), src
    assert measured == hz, (measured, hz, src)


def test_xfs_readers_blocked_by_writer_raw_tp_no_xfs(fs_factory, procs, helpers_dir, ilock_bin):
    xfs = fs_factory("xfs")
    lockhold = os.path.join(helpers_dir, "lockhold")
    path = make_file(os.path.join(xfs.mnt, "db.dat"), 1 << 20)
    ino = os.stat(path).st_ino

    st = procs.start([ilock_bin, "stat", "-j", "-D", xfs.mnt, "--holds=xfs"],
                     stderr=subprocess.PIPE, env=forced_env())
    wait_line(st, READY, timeout=30, stream=st.stderr)
    holder = procs.start([lockhold, "write", path, 0, 4096, HOLD_MS])
    m = re.fullmatch(r"HOLDING pid=(\d+) tid=(\d+) t=(\d+)", wait_line(holder, "HOLDING ", 10))
    hpid, htid = int(m.group(1)), int(m.group(2))
    readers = procs.start([lockhold, "read", path, 8192, 4096, 3])
    r = json.loads(readers.communicate(timeout=20)[0])
    wait_line(holder, "RELEASED ", 15)
    assert holder.wait(timeout=15) == 0
    doc = stop_stat(st)

    assert doc["attach"]["contention_begin"] == "raw_tp"
    assert doc["attach"]["contention_end"] == "raw_tp"
    for p in ("xfs_ilock", "xfs_ilock_nowait", "xfs_iunlock", "xfs_ilock_demote"):
        assert doc["attach"][p] == "off"
    assert doc["events"]["xfs_ilock"] == 0

    rows = locks_for(doc, xfs.majmin, ino)
    assert len(rows) == 1, doc["locks"]
    row = rows[0]
    assert row["fs"] == "xfs" and row["path"] == path
    assert row["shared"]["waits"] == 3
    assert row["exclusive"]["waits"] == 0
    blocked = max(r["blocked_ns"])
    assert blocked > (HOLD_MS // 2) * MS
    assert abs(row["shared"]["max_ns"] - blocked) <= 0.15 * blocked, (row["shared"], r)

    edges = edges_for(doc, xfs.majmin, ino)
    assert sum(e["waits"] for e in edges) == 3
    for e in edges:
        assert (e["holder"]["pid"], e["holder"]["tgid"]) == (htid, hpid)
        assert e["holder"]["mode"] == "exclusive"
        assert e["waiter"]["mode"] == "shared"
    assert sorted(e["waiter"]["pid"] for e in edges) == sorted(r["tids"])

    # the reduced data: no hold times or acquisition counts without XFS programs
    assert row["hold"] is None
    assert row["acquisitions"] is None
    assert all(l["hold"] is None for l in doc["locks"])


def test_holds_asked_for_and_off_is_said(ilock_bin):
    """--holds=xfs asked for where XFS holds cannot be timed: said without
    -v, or the hold columns stay empty with no reason given."""
    r = subprocess.run([ilock_bin, "stat", "-d", "0.3", "-j", "--holds=xfs"], env=forced_env(),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "ilock: warning: --holds=xfs: XFS hold times are off (ILOCK_NO_XFS)\n" in r.stderr
    # not asked for: nothing to say
    r = subprocess.run([ilock_bin, "stat", "-d", "0.3", "-j"], env=forced_env(),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "hold times" not in r.stderr, r.stderr


def test_verbose_prints_probe_once(ilock_bin):
    r = subprocess.run([ilock_bin, "stat", "-v", "-d", "1", "-j", "--holds=xfs"], env=forced_env(),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("\nstrategy:\n") == 1, r.stderr
    assert "  lock waits:  raw_tp on lock:contention_begin/end (forced by ILOCK_FORCE_RAW_TP)" \
        in r.stderr
    assert "  XFS holds:   off (ILOCK_NO_XFS)" in r.stderr
    assert json.loads(r.stdout)["attach"]["contention_begin"] == "raw_tp"


def test_fallbacks_unavailable_say_why(ilock_bin):
    """On a kernel that refuses fentry and has no kprobes (this host), asking
    for the pre-5.19 path or for --holds=all fails with one line saying why."""
    probe = json.loads(subprocess.run([ilock_bin, "probe", "-j"], capture_output=True,
                                      text=True, timeout=60).stdout)
    at = probe["attach_types"]
    if at["fentry"]["ok"] or at["kprobe"]["ok"]:
        pytest.skip("this kernel has fentry or kprobes: make test-kernels tests those paths")
    r = subprocess.run([ilock_bin, "stat", "-d", "1"], env=forced_env(ILOCK_NO_CONTENTION_TP="1"),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("ilock: cannot trace lock waits on this kernel")
    assert "ILOCK_NO_CONTENTION_TP" in lines[0] and "fentry" in lines[0] and "kprobe" in lines[0]

    r = subprocess.run([ilock_bin, "stat", "-d", "1", "--holds=all"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1
    assert r.stderr.startswith("ilock: --holds=all: unavailable: fentry")
    assert len(r.stderr.strip().splitlines()) == 1
