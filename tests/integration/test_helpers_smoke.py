"""Smoke tests for the lockhold helper: prove it really holds i_rwsem.

Everything else in the suite builds on "lockhold write holds the inode lock
for HOLD_MS", so check that against plain timing first, without ilock.
"""

import json
import os
import re

import pytest

from util import make_file, wait_line

HOLD_MS = 500
MS = 1_000_000


def _lockhold(helpers_dir):
    return os.path.join(helpers_dir, "lockhold")


def _start_holder(procs, helpers_dir, path, hold_ms=HOLD_MS):
    """Start `lockhold write` and return (proc, HOLDING fields) once it holds."""
    p = procs.start([_lockhold(helpers_dir), "write", path, 0, 4096, hold_ms])
    line = wait_line(p, "HOLDING ", timeout=10)
    m = re.fullmatch(r"HOLDING pid=(\d+) tid=(\d+) t=(\d+)", line)
    assert m, f"bad HOLDING line: {line!r}"
    return p, {k: int(v) for k, v in zip(("pid", "tid", "t"), m.groups())}


def _finish_holder(p, hold):
    """The holder must release on its own and report the full write."""
    line = wait_line(p, "RELEASED ", timeout=10)
    m = re.fullmatch(r"RELEASED t=(\d+) wrote=(\d+)", line)
    assert m, f"bad RELEASED line: {line!r}"
    assert p.wait(timeout=10) == 0
    assert int(m.group(2)) == 4096
    assert int(m.group(1)) - hold["t"] >= HOLD_MS * MS


def _run_waiters(procs, helpers_dir, mode, path, nthreads):
    p = procs.start([_lockhold(helpers_dir), mode, path, 0, 4096, nthreads])
    out, _ = p.communicate(timeout=30)
    assert p.returncode == 0, f"lockhold {mode} failed: rc={p.returncode}"
    res = json.loads(out)
    assert len(res["tids"]) == len(res["blocked_ns"]) == nthreads
    return res


@pytest.fixture
def smoke_file(fs_factory):
    def make(fstype):
        fs = fs_factory(fstype)
        return make_file(os.path.join(fs.mnt, "data"), 1 << 20)
    return make


def test_xfs_buffered_reads_wait_for_writer(smoke_file, procs, helpers_dir):
    # XFS buffered reads take IOLOCK (== i_rwsem) shared: they must queue.
    path = smoke_file("xfs")
    holder, hold = _start_holder(procs, helpers_dir, path)
    res = _run_waiters(procs, helpers_dir, "read", path, 2)
    _finish_holder(holder, hold)
    for ns in res["blocked_ns"]:
        assert ns >= 300 * MS, f"reader not blocked: {res}"


def test_ext4_buffered_reads_do_not_wait(smoke_file, procs, helpers_dir):
    # ext4 buffered reads take no inode lock: same setup, no waiting.
    path = smoke_file("ext4")
    holder, hold = _start_holder(procs, helpers_dir, path)
    res = _run_waiters(procs, helpers_dir, "read", path, 2)
    # Still inside the hold window, or the "not blocked" result means nothing.
    assert holder.poll() is None, "holder released before the reads finished"
    _finish_holder(holder, hold)
    for ns in res["blocked_ns"]:
        assert ns < 100 * MS, f"ext4 reader unexpectedly blocked: {res}"


def test_ext4_second_writer_waits(smoke_file, procs, helpers_dir):
    # Buffered writes take i_rwsem exclusive on ext4 too.
    path = smoke_file("ext4")
    holder, hold = _start_holder(procs, helpers_dir, path)
    res = _run_waiters(procs, helpers_dir, "pwrite", path, 1)
    _finish_holder(holder, hold)
    assert res["blocked_ns"][0] >= 300 * MS, f"second writer not blocked: {res}"
