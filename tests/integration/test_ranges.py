"""What holders and waiters were doing: operations, byte ranges, range-lock
headroom, stacks and journal waits (issue 5), on real loop-mounted XFS and ext4.

Holders are deterministic where the kernel lets them be: `lockhold write`
holds the inode lock exclusive inside a buffered write whose user buffer
faults through userfaultfd; `lockhold fiemap` holds the XFS IOLOCK shared
inside an ioctl the same way. The ext4 direct-write tests rely on what 6.18
does (see ../shared/KERNEL-NOTES.md): unaligned writes into holes take
i_rwsem exclusive, aligned overwrites of allocated blocks take it shared.
"""

import json
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import REPO
from ilock_run import (READY, edges_for, locks_for, start_record, start_stat, stop_record,
                       stop_stat)
from util import blocked_tid, make_file, prog_names, wait_line

MiB = 1 << 20
MS = 1_000_000


def lockhold(helpers_dir):
    return os.path.join(helpers_dir, "lockhold")


def hold_write(procs, helpers_dir, path, off, length, hold_ms):
    p = procs.start([lockhold(helpers_dir), "write", path, off, length, hold_ms])
    m = re.fullmatch(r"HOLDING pid=(\d+) tid=(\d+) t=(\d+)", wait_line(p, "HOLDING ", 10))
    assert m
    return p, int(m.group(2))


def finish(p):
    wait_line(p, "RELEASED ", 15)
    assert p.wait(timeout=15) == 0


def ino_of(path):
    return os.stat(path).st_ino


def range_share(ranges, key):
    total = sum(ranges[k]["wait_ns"] for k in ("overlapping", "disjoint", "unknown"))
    assert total > 0, ranges
    return ranges[key]["wait_ns"] / total


def readers_behind_writer(procs, helpers_dir, ilock_bin, fs, read_off, rec=None, stat_args=(),
                          seen=None):
    """A writer holding [0, 1 MiB) exclusive; 3 readers of [read_off, +1 MiB).
    With rec, `ilock record` watches too, and the checks run on what
    `ilock report -j` makes of the recording. seen, a dict, gets the names
    of stat's BPF programs ("progs") and its "attach"."""
    path = make_file(os.path.join(fs.mnt, "db.dat"), 16 * MiB)
    st = start_stat(procs, ilock_bin, "-D", fs.mnt, *stat_args)
    if seen is not None:
        seen["progs"] = prog_names(st.pid)
    if rec:
        recp = start_record(ilock_bin, rec, "-i", "0.5", "-D", fs.mnt)
        procs.append(recp)
    holder, htid = hold_write(procs, helpers_dir, path, 0, MiB, 800)
    readers = procs.start([lockhold(helpers_dir), "read", path, read_off, MiB, 3])
    r = json.loads(readers.communicate(timeout=20)[0])
    finish(holder)
    doc = stop_stat(st)
    if seen is not None:
        seen["attach"] = doc["attach"]
    if rec:
        stop_record(recp)
        rep = subprocess.run([ilock_bin, "report", "-j", rec], capture_output=True, text=True,
                             timeout=30)
        assert rep.returncode == 0, rep.stderr
        doc = json.loads(rep.stdout)
    rows = locks_for(doc, fs.majmin, ino_of(path))
    assert len(rows) == 1, doc["locks"]
    edges = [e for e in edges_for(doc, fs.majmin, ino_of(path)) if e["waiter"]["tgid"] == r["pid"]]
    assert sum(e["waits"] for e in edges) == 3, edges
    for e in edges:
        assert e["holder"]["pid"] == htid
        assert (e["holder"]["op"], e["holder"]["mode"]) == ("buffered-write", "exclusive")
        assert (e["waiter"]["op"], e["waiter"]["mode"]) == ("buffered-read", "shared")
    return rows[0], edges


def test_xfs_disjoint_ranges(xfs, procs, helpers_dir, ilock_bin):
    """The defaults (--ops syscalls) run no op source on every buffered I/O;
    the waiters' and the holder's syscalls name both sides and their ranges."""
    seen = {}
    row, edges = readers_behind_writer(procs, helpers_dir, ilock_bin, xfs, 8 * MiB, seen=seen)
    progs = seen["progs"]
    assert not [n for n in progs if n.startswith("op_xfs_buffere")], progs
    assert "op_xfs_read_fau" in progs or "op_xfs_read_fault" in progs, progs
    assert seen["attach"]["ops"] == "tp_btf (syscalls)", seen["attach"]
    assert range_share(row["ranges"], "disjoint") >= 0.95, row["ranges"]
    assert row["headroom"] >= 0.95
    for e in edges:
        assert e["ranges"]["disjoint"]["waits"] == e["waits"], e


def test_xfs_ops_from_io_tracepoints(xfs, procs, helpers_dir, ilock_bin):
    """--ops io adds the XFS buffered I/O tracepoints to the syscalls: the
    same ops and ranges come out."""
    seen = {}
    row, edges = readers_behind_writer(procs, helpers_dir, ilock_bin, xfs, 8 * MiB,
                                       stat_args=("--ops", "io"), seen=seen)
    progs = seen["progs"]
    assert [n for n in progs if n.startswith("op_xfs_buffere")], progs
    assert seen["attach"]["ops"] == "tp_btf", seen["attach"]
    assert range_share(row["ranges"], "disjoint") >= 0.95, row["ranges"]


def test_report_keeps_ops_ranges_and_stacks(xfs, procs, helpers_dir, ilock_bin, tmp_path):
    """A recording keeps each wait's ops and range class (format 1.1) and
    its kernel stacks, named when recorded (1.2): `ilock report` shows the
    same ops, range classes, headroom and stacks as stat."""
    rec = str(tmp_path / "ranges.ilrec")
    row, edges = readers_behind_writer(procs, helpers_dir, ilock_bin, xfs, 8 * MiB, rec=rec)
    assert range_share(row["ranges"], "disjoint") >= 0.95, row["ranges"]
    assert row["headroom"] >= 0.95
    for e in edges:
        assert e["ranges"]["disjoint"]["waits"] == e["waits"], e
    # where each side was: the readers in the rwsem slow path under the
    # XFS read, the writer asleep in its userfaultfd fault
    waiter = [s for e in edges for s in e["stacks"]["waiter"]]
    assert sum(s["waits"] for s in waiter) == 3, waiter
    for s in waiter:
        assert s["frames"][0] == "rwsem_down_read_slowpath", s
        assert "xfs_file_buffered_read" in s["frames"], s
    holder = [f for e in edges for s in e["stacks"]["holder"] for f in s["frames"]]
    assert "handle_userfault" in holder, holder

    folded = subprocess.run([ilock_bin, "report", "--folded", "-D", xfs.mnt, rec],
                            capture_output=True, text=True, timeout=30)
    assert folded.returncode == 0, folded.stderr
    lines = [l.rsplit(" ", 1) for l in folded.stdout.splitlines()]
    ours = [(st.split(";"), int(w)) for st, w in lines if "xfs_file_buffered_read" in st]
    assert ours, folded.stdout
    for frames, _ in ours:
        assert frames[:2] == ["IOLOCK", "shared"] and frames[-1] == "rwsem_down_read_slowpath"
    # the waits' time, all of it: the three readers each waited most of 800 ms
    assert sum(w for _, w in ours) == sum(e["wait_ns"] for e in edges)
    assert sum(w for _, w in ours) > 3 * 300 * MS

    # the HTML page shows the same: ops, headroom, and the stacks by name
    page = str(tmp_path / "ranges.html")
    html = subprocess.run([ilock_bin, "report", "--html", page, "-D", xfs.mnt, rec],
                          capture_output=True, text=True, timeout=30)
    assert html.returncode == 0, html.stderr
    text = open(page).read()
    assert '<td class="l">buffered-write</td>' in text
    assert '<td class="l">buffered-read</td>' in text
    assert "<td>100%</td>" in text  # disjoint share of the pair
    assert "<li>rwsem_down_read_slowpath</li>" in text
    assert "<li>xfs_file_buffered_read</li>" in text
    assert "<li>handle_userfault</li>" in text


def test_readers_behind_a_queued_writer(xfs, procs, ilock_bin):
    """Readers of one block, writers of a disjoint region: a reader that
    waits on a reader-owned lock waits for the writer queued ahead of it
    (readers do not pass a queued writer), so that writer is its holder and
    the ranges compared are the writer's and its own. Named after the last
    reader instead, two readers of the same block came out 'overlapping'
    (a third of the wait time, headroom 0.72, where a range lock would
    have let nearly every wait through)."""
    path = make_file(os.path.join(xfs.mnt, "db"), 64 * MiB)
    st = start_stat(procs, ilock_bin, "-D", xfs.mnt, "--no-stacks")
    common = ["--thread", "--ioengine=psync", "--bs=16k", "--time_based", "--runtime=4",
              "--filename=" + path]
    readers = procs.start(["fio", "--name=r", "--rw=randread", "--offset=0", "--size=16k",
                           "--numjobs=4"] + common, stdout=subprocess.DEVNULL)
    writers = procs.start(["fio", "--name=w", "--rw=randwrite", "--offset=32M", "--size=16M",
                           "--numjobs=2"] + common, stdout=subprocess.DEVNULL)
    assert readers.wait(timeout=60) == 0 and writers.wait(timeout=60) == 0
    doc = stop_stat(st)

    (row,) = locks_for(doc, xfs.majmin, ino_of(path), "i_rwsem")
    assert row["shared"]["waits"] > 1000, row
    edges = edges_for(doc, xfs.majmin, ino_of(path))
    behind_writer = sum(e["wait_ns"] for e in edges if e["waiter"]["mode"] == "shared" and
                        e["holder"]["mode"] == "queued-exclusive")
    behind_readers = sum(e["wait_ns"] for e in edges if e["waiter"]["mode"] == "shared" and
                         e["holder"]["mode"] == "readers")
    assert behind_writer > 0 and behind_readers <= 0.02 * behind_writer, (behind_writer,
                                                                          behind_readers)
    assert range_share(row["ranges"], "overlapping") < 0.02, row["ranges"]
    assert row["headroom"] > 0.85, row


def test_no_thread_is_its_own_holder(xfs, procs, helpers_dir, ilock_bin):
    """Four threads, each reading and writing a region of its own: no two
    threads' byte ranges ever meet. The owner field of a reader-owned lock
    is only a hint of the last reader, and a thread that read, let go and
    waits again can find itself there: named as its own holder, its range
    compared with itself, that wait came out 'overlapping' (2 to 125 waits
    in each of four 4 s runs before this was fixed)."""
    path = os.path.join(xfs.mnt, "own")
    st = start_stat(procs, ilock_bin, "-D", xfs.mnt, "--no-stacks")
    own = procs.start([os.path.join(helpers_dir, "own_regions"), path, "4", "4", "50"])
    out = own.communicate(timeout=60)[0]
    assert own.returncode == 0 and "DONE" in out, out
    doc = stop_stat(st)

    (row,) = locks_for(doc, xfs.majmin, ino_of(path), "i_rwsem")
    assert row["shared"]["waits"] + row["exclusive"]["waits"] > 1000, row
    edges = edges_for(doc, xfs.majmin, ino_of(path))
    self_named = [e for e in edges if e["holder"]["pid"] == e["waiter"]["pid"]]
    assert not self_named, self_named
    assert row["ranges"]["overlapping"]["waits"] == 0, row["ranges"]


def test_xfs_overlapping_ranges(xfs, procs, helpers_dir, ilock_bin):
    row, edges = readers_behind_writer(procs, helpers_dir, ilock_bin, xfs, 0)
    assert range_share(row["ranges"], "overlapping") >= 0.95, row["ranges"]
    assert row["headroom"] <= 0.05
    for e in edges:
        assert e["ranges"]["overlapping"]["waits"] == e["waits"], e


def test_diff_compares_ranges(xfs, procs, helpers_dir, ilock_bin, tmp_path):
    """`ilock diff` of readers of disjoint bytes (before) against readers of
    the writer's own bytes (after): per lock class and per file, the
    disjoint waits go and overlapping ones come, rates only (pairs keep no
    histogram)."""
    before, after = str(tmp_path / "disjoint.ilrec"), str(tmp_path / "overlap.ilrec")
    readers_behind_writer(procs, helpers_dir, ilock_bin, xfs, 8 * MiB, rec=before)
    readers_behind_writer(procs, helpers_dir, ilock_bin, xfs, 0, rec=after)
    r = subprocess.run([ilock_bin, "diff", "-j", "-D", xfs.mnt, before, after],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    rows = {(c["class"], c["kind"]): c["metrics"] for c in doc["classes"]}
    dis, ov = rows[("i_rwsem", "disjoint")], rows[("i_rwsem", "overlapping")]
    assert set(dis) == set(ov) == {"waits_per_s", "wait_ns_per_s"}, (dis, ov)
    # three readers waited behind the writer each time, most of 800 ms each
    secs_a, secs_b = doc["before"]["duration_s"], doc["after"]["duration_s"]
    assert dis["waits_per_s"]["before"] == pytest.approx(3 / secs_a, rel=1e-4)
    assert dis["waits_per_s"]["after"] == 0
    assert ov["waits_per_s"]["before"] == 0
    assert ov["waits_per_s"]["after"] == pytest.approx(3 / secs_b, rel=1e-4)
    assert dis["wait_ns_per_s"]["before"] * secs_a > 3 * 300 * MS
    assert any(l.startswith("i_rwsem disjoint ranges wait: ") for l in doc["summary"]["lines"])
    # and per inode: the file, matched by path
    files = {(i["label"], i["kind"]): i for i in doc["inodes"]}
    path = os.path.join(xfs.mnt, "db.dat")
    f_dis, f_ov = files[(path, "disjoint")], files[(path, "overlapping")]
    assert f_dis["matched_by"] == "path"
    assert f_dis["metrics"]["waits_per_s"]["before"] == dis["waits_per_s"]["before"]
    assert f_dis["metrics"]["waits_per_s"]["after"] == 0
    assert f_ov["metrics"]["waits_per_s"]["after"] == ov["waits_per_s"]["after"]
    # by command: other threads, other processes, one role on both sides
    role = "lockhold buffered-write EXCL -> lockhold buffered-read SHARED"
    roles = {x["label"]: x for x in doc["roles"] if x["class"] == "i_rwsem"}
    assert doc["roles_by_op"] is True
    assert role in roles, list(roles)
    assert roles[role]["holder"]["op"] == "buffered-write"
    m = roles[role]["metrics"]
    assert set(m) == {"waits_per_s", "wait_ns_per_s"}
    assert m["waits_per_s"]["before"] == pytest.approx(3 / secs_a, rel=1e-4)
    assert m["waits_per_s"]["after"] == pytest.approx(3 / secs_b, rel=1e-4)
    text = subprocess.run([ilock_bin, "diff", "-D", xfs.mnt, before, after],
                          capture_output=True, text=True, timeout=30)
    assert "\n  i_rwsem overlapping ranges\n" in text.stdout, text.stdout
    # one writer thread held, three reader threads waited, in each run
    assert roles[role]["threads"] == {"before": {"holders": 1, "waiters": 3},
                                      "after": {"holders": 1, "waiters": 3}}, roles[role]
    assert (f"\n  i_rwsem  {role}  (threads 1 -> 3 before, 1 -> 3 after)\n    waits/s"
            in text.stdout), text.stdout


@pytest.mark.parametrize("how,off,op,mode,rng", [
    ("sendfile", 8 * MiB, "buffered-read", "shared", "disjoint"),
    ("sendfile", 0, "buffered-read", "shared", "overlapping"),
    ("copy", 8 * MiB, "buffered-write", "exclusive", "disjoint"),
    ("copy", MiB // 2, "buffered-write", "exclusive", "overlapping"),
])
def test_xfs_copy_syscalls_range_from_user_pointer(xfs, procs, helpers_dir, ilock_bin, how, off,
                                                   op, mode, rng):
    """sendfile reads the held file at the offset its pointer argument
    holds, copy_file_range writes it at its off_out: the decoder reads the
    waiter's memory for them. A writer holds [0, 1 MiB) exclusive, so a
    64 KiB copy at 8 MiB is disjoint from it and one inside it overlaps."""
    path = make_file(os.path.join(xfs.mnt, "db.dat"), 16 * MiB)
    other = os.path.join(xfs.mnt, "other.dat")
    if how == "copy":
        make_file(other, MiB)
    st = start_stat(procs, ilock_bin, "-D", xfs.mnt)
    holder, htid = hold_write(procs, helpers_dir, path, 0, MiB, 600)
    w = procs.start([lockhold(helpers_dir), "copy", path, other, how, off, 65536])
    r = json.loads(w.communicate(timeout=20)[0])
    finish(holder)
    doc = stop_stat(st)
    assert r["bytes"] == 65536, r
    edges = [e for e in edges_for(doc, xfs.majmin, ino_of(path)) if e["waiter"]["tgid"] == r["pid"]]
    assert sum(e["waits"] for e in edges) == 1, edges
    (e,) = edges
    assert e["holder"]["pid"] == htid
    assert (e["holder"]["op"], e["holder"]["mode"]) == ("buffered-write", "exclusive")
    assert (e["waiter"]["op"], e["waiter"]["mode"]) == (op, mode), e
    assert e["ranges"][rng]["waits"] == 1, e["ranges"]


def test_xfs_truncate_claims_from_the_lower_size(xfs, procs, helpers_dir, ilock_bin):
    """XFS writes dirty data back under the IOLOCK before a size change:
    readers of [8 MiB, 9 MiB) wait behind a truncate from 64 MiB to 64 MiB
    + 4 KiB. It claims from 64 MiB on against readers (below both sizes it
    changes nothing they read), so every such wait is disjoint."""
    path = os.path.join(xfs.mnt, "t.dat")
    open(path, "wb").close()
    st = start_stat(procs, ilock_bin, "-D", xfs.mnt)
    readers = procs.start([lockhold(helpers_dir), "rloop", path, 8 * MiB, 65536, 2, 2500])
    time.sleep(0.1)
    tr = procs.start([lockhold(helpers_dir), "truncate", path, 64 * MiB, 64 * MiB + 4096])
    m = re.search(r"took_ns=(\d+)", wait_line(tr, "TRUNCATED ", 60))
    assert tr.wait(timeout=30) == 0
    readers.communicate(timeout=30)
    doc = stop_stat(st)
    behind = [e for e in edges_for(doc, xfs.majmin, ino_of(path))
              if e["holder"]["op"] == "truncate" and e["waiter"]["tgid"] == readers.pid]
    assert behind, (int(m.group(1)), [(e["holder"]["op"], e["waiter"]["op"])
                                      for e in edges_for(doc, xfs.majmin, ino_of(path))])
    waits = sum(e["waits"] for e in behind)
    disjoint = sum(e["ranges"]["disjoint"]["waits"] for e in behind)
    assert disjoint >= 0.95 * waits, behind
    assert all(e["waiter"]["op"] == "buffered-read" for e in behind)


def test_xfs_unknown_holder_inside_ioctl(xfs, procs, helpers_dir, ilock_bin):
    """FIEMAP holds the IOLOCK shared while it copies extents out: the
    holder's op is a syscall with no byte range, so the wait is unknown
    on the holder's side, not guessed."""
    path = make_file(os.path.join(xfs.mnt, "f.dat"), MiB)
    st = start_stat(procs, ilock_bin, "-D", xfs.mnt)
    holder = procs.start([lockhold(helpers_dir), "fiemap", path, 800])
    htid = int(re.search(r"tid=(\d+)", wait_line(holder, "HOLDING ", 10)).group(1))
    w = procs.start([lockhold(helpers_dir), "pwrite", path, 8192, 4096, 1])
    wr = json.loads(w.communicate(timeout=20)[0])
    finish(holder)
    doc = stop_stat(st)
    edges = [e for e in edges_for(doc, xfs.majmin, ino_of(path)) if e["waiter"]["tgid"] == wr["pid"]]
    assert sum(e["waits"] for e in edges) == 1, edges
    e = edges[0]
    assert e["holder"]["pid"] == htid and e["holder"]["mode"] == "readers"
    assert e["holder"]["op"] == "other"
    assert e["waiter"]["op"] == "buffered-write" and e["waiter"]["mode"] == "exclusive"
    assert e["ranges"]["unknown"]["holder_missing"] == 1
    assert e["ranges"]["overlapping"]["waits"] == 0 and e["ranges"]["disjoint"]["waits"] == 0
    assert e["headroom"] is None
    # the holder's sampled stack shows where it sleeps: in the ioctl's copy-out
    holder_frames = [f for s in e["stacks"]["holder"] for f in (s["frames"] or [])]
    assert "xfs_vn_fiemap" in holder_frames and "handle_userfault" in holder_frames
    row = locks_for(doc, xfs.majmin, ino_of(path))[0]
    assert row["ranges"]["unknown"]["holder_missing"] >= 1


def test_ext4_unaligned_direct_writes_take_it_exclusive(ext4, procs, helpers_dir, ilock_bin):
    """512-byte writes into holes of a sparse file: 6.18 ext4 takes i_rwsem
    exclusive for unaligned writes into holes (unaligned overwrites of
    allocated blocks would be shared), so two writers queue exclusive."""
    path = os.path.join(ext4.mnt, "sparse.dat")
    with open(path, "wb") as f:
        f.truncate(64 * MiB)
    st = start_stat(procs, ilock_bin, "-D", ext4.mnt)
    w = procs.start([lockhold(helpers_dir), "dsparse", path, 2, 2000])
    out = json.loads(w.communicate(timeout=60)[0])
    doc = stop_stat(st)
    ino = ino_of(path)
    excl = [e for e in edges_for(doc, ext4.majmin, ino)
            if e["waiter"]["mode"] == "exclusive" and e["waiter"]["tgid"] == out["pid"]]
    assert sum(e["waits"] for e in excl) > 0, edges_for(doc, ext4.majmin, ino)
    for e in excl:
        assert e["waiter"]["op"] == "direct-write" and "unaligned" in e["waiter"]["op_flags"], e
        assert "extending" not in e["waiter"]["op_flags"]
    dio = [d for d in doc["direct_writes"] if d["dev"] == ext4.majmin and d["ino"] == ino]
    assert sum(d["count"] for d in dio) == out["writes"], dio
    assert all(d["lock"] == "exclusive" and d["unaligned"] for d in dio), dio


def test_ext4_aligned_overwrites_stay_shared(ext4, procs, helpers_dir, ilock_bin):
    path = make_file(os.path.join(ext4.mnt, "db.dat"), MiB)
    # --ops=all: shared direct writes are counted too, not only exclusive ones
    st = start_stat(procs, ilock_bin, "-D", ext4.mnt, "--ops=all")
    w = procs.start([lockhold(helpers_dir), "dwrite", path, 0, 4096, 2, 3000])
    w.communicate(timeout=60)
    assert w.returncode == 0
    doc = stop_stat(st)
    ino = ino_of(path)
    assert all(l["exclusive"]["waits"] == 0 for l in locks_for(doc, ext4.majmin, ino)), doc["locks"]
    assert not [e for e in edges_for(doc, ext4.majmin, ino) if e["waiter"]["mode"] == "exclusive"]
    # not vacuous: the writes were seen, every one of them shared
    dio = [d for d in doc["direct_writes"] if d["dev"] == ext4.majmin and d["ino"] == ino]
    assert sum(d["count"] for d in dio) == 6000, dio
    assert all(d["lock"] == "shared" and not d["unaligned"] for d in dio), dio


def test_ext4_fsync_journal_wait_is_its_own_class(ext4, procs, ilock_bin):
    """An fsync after allocating writes waits for jbd2 to commit: that time
    is jbd2_wait on the file, behind the jbd2 thread, not an inode lock wait."""
    path = os.path.join(ext4.mnt, "log.dat")
    st = start_stat(procs, ilock_bin, "-D", ext4.mnt)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for _ in range(3):
            os.write(fd, b"x" * (1 * MiB))
            os.fsync(fd)
    finally:
        os.close(fd)
    doc = stop_stat(st)
    ino = ino_of(path)
    rows = locks_for(doc, ext4.majmin, ino, "jbd2_wait")
    assert len(rows) == 1 and rows[0]["exclusive"]["waits"] >= 1, doc["locks"]
    assert rows[0]["ranges"]["overlapping"]["waits"] == 0  # no byte ranges for the journal
    edges = edges_for(doc, ext4.majmin, ino, "jbd2_wait")
    assert edges and all(e["holder"]["op"] == "journal-commit" for e in edges)
    assert all(e["holder"]["comm"].startswith("jbd2/") for e in edges), edges
    assert all(e["waiter"]["tgid"] == os.getpid() and e["waiter"]["op"] == "fsync" for e in edges)
    assert doc["events"]["jbd2_waits"] == rows[0]["exclusive"]["waits"]
    # kept apart: the fsyncs made no i_rwsem waits of their own
    assert not locks_for(doc, ext4.majmin, ino, "i_rwsem")


@pytest.mark.parametrize("fstype", ["xfs", "ext4"])
def test_directory_waits_name_namespace_ops(fs_factory, fstype, procs, helpers_dir, ilock_bin):
    """Eight threads creating, stat-ing and unlinking files in one
    directory wait on the directory's i_rwsem. Each side's op is what the
    syscall does to the directory (create, unlink), not `unknown`, and
    since names are no byte ranges those waits have no range class: no
    headroom on the directory, `null` ranges on its pairs."""
    fs = fs_factory(fstype)
    d = os.path.join(fs.mnt, "spool")
    os.mkdir(d)
    metaload = os.path.join(os.path.dirname(helpers_dir), "bench", "metaload")
    st = start_stat(procs, ilock_bin, "-D", fs.mnt, "--no-stacks")
    out = subprocess.run([metaload, d, "3", "8"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    doc = stop_stat(st)

    (row,) = locks_for(doc, fs.majmin, ino_of(d), "i_rwsem")
    assert row["exclusive"]["waits"] > 100, row
    assert row["headroom"] is None, row
    assert row["directory"] is True, row
    # the files in it are no directories
    assert all(not r["directory"] for r in doc["locks"] if r["ino"] != ino_of(d))
    edges = edges_for(doc, fs.majmin, ino_of(d))
    waits = sum(e["waits"] for e in edges)
    ops = {}
    for e in edges:
        for side in ("holder", "waiter"):
            ops[e[side]["op"]] = ops.get(e[side]["op"], 0) + e["waits"]
    # both sides of most waits named; creates and unlinks on each
    assert ops.get("create", 0) > 0.2 * waits and ops.get("unlink", 0) > 0.2 * waits, ops
    assert ops.get("unknown", 0) < 0.2 * waits, ops
    named = [e for e in edges if e["holder"]["op"] in ("create", "unlink")]
    assert named and all(e["ranges"] is None and e["headroom"] is None for e in named), named[:2]


@pytest.mark.parametrize("fstype", ["xfs", "ext4"])
def test_create_behind_readdir(fs_factory, fstype, procs, helpers_dir, ilock_bin):
    """A deterministic directory wait: `lockhold readdir` holds the
    directory's i_rwsem shared inside getdents64, and a create in it waits,
    exclusive. The holder's op is decoded from its syscall (readdir), the
    waiter's from ours (create), and the pair has no byte ranges."""
    fs = fs_factory(fstype)
    d = os.path.join(fs.mnt, "dir")
    os.mkdir(d)
    make_file(os.path.join(d, "a"), 4096)
    st = start_stat(procs, ilock_bin, "-D", fs.mnt)
    holder = procs.start([lockhold(helpers_dir), "readdir", d, "30000"])
    m = re.fullmatch(r"HOLDING pid=(\d+) tid=(\d+) t=(\d+)", wait_line(holder, "HOLDING ", 10))
    assert m
    htid = int(m.group(2))
    creator = procs.start(["python3", "-c", "import os, sys; os.close(os.open(sys.argv[1], "
                           "os.O_CREAT | os.O_WRONLY))", os.path.join(d, "new")])
    # release once the create is seen asleep on the lock, however slow the
    # machine: in D in path_openat (the lock slowpath is sched text, so wchan
    # names its caller), not just in D, as python's start-up reads can be
    blocked_tid(creator.pid, timeout=20, wchan="path_openat")
    time.sleep(0.3)
    holder.send_signal(signal.SIGUSR1)
    wait_line(holder, "RELEASED ", 15)
    assert holder.wait(timeout=15) == 0 and creator.wait(timeout=15) == 0
    doc = stop_stat(st)

    (row,) = locks_for(doc, fs.majmin, ino_of(d), "i_rwsem")
    assert row["directory"] is True and row["exclusive"]["waits"] == 1, row
    (e,) = edges_for(doc, fs.majmin, ino_of(d))
    assert e["holder"]["pid"] == htid and e["holder"]["op"] == "readdir", e
    assert e["holder"]["mode"] == "readers", e
    assert e["waiter"]["op"] == "create" and e["waiter"]["mode"] == "exclusive", e
    assert e["wait_ns"] >= 250 * MS, e
    assert e["ranges"] is None and e["headroom"] is None, e


def test_text_table_and_folded_stacks(xfs, procs, helpers_dir, ilock_bin):
    path = make_file(os.path.join(xfs.mnt, "db.dat"), 16 * MiB)
    runs = {}
    for mode in ("text", "folded"):
        args = [ilock_bin, "stat", "-D", xfs.mnt] + (["--folded"] if mode == "folded" else [])
        st = procs.start(args, stderr=subprocess.PIPE)
        wait_line(st, READY, 30, stream=st.stderr)
        holder, htid = hold_write(procs, helpers_dir, path, 0, MiB, 500)
        r = procs.start([lockhold(helpers_dir), "read", path, 8 * MiB, 4096, 2])
        r.communicate(timeout=20)
        finish(holder)
        st.send_signal(2)
        out, err = st.communicate(timeout=30)
        assert st.returncode == 0, err
        runs[mode] = (out, htid)

    out, htid = runs["text"]
    assert "SERIALISATION BY THREAD AND OPERATION" in out and "BYTE RANGES" in out
    assert re.search(rf"lockhold\[{htid}\] buffered-write EXCL\s+->\s+lockhold\[\d+\] "
                     rf"buffered-read SHARED\s+1 wait\s+\S+ \S+\s+\(disjoint 100%\)", out), out
    assert re.search(r"waiter .*rwsem_down_read_slowpath < .*xfs_file_buffered_read", out), out
    assert re.search(r"holder .*handle_userfault", out), out

    out, _ = runs["folded"]
    lines = [l for l in out.splitlines() if l]
    assert lines, out
    weights = 0
    for l in lines:
        stack, w = l.rsplit(" ", 1)
        frames = stack.split(";")
        assert frames[:2] == ["IOLOCK", "shared"], l
        assert frames[-1] == "rwsem_down_read_slowpath" and "xfs_file_buffered_read" in frames, l
        assert not any(f.startswith("bpf_") for f in frames), l
        weights += int(w)
    assert weights > 2 * 100 * MS  # two readers, each blocked for most of 500 ms


def test_bad_ops_flags_exit_2(ilock_bin):
    for args in (["--ops", "bogus"], ["--folded", "--json"], ["--folded", "--no-stacks"]):
        r = subprocess.run([ilock_bin, "stat", *args], capture_output=True, text=True, timeout=10)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.count("\n") <= 2 and "usage:" in r.stderr, r.stderr


PUNCH = r"""
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(sys.argv[1], os.O_RDWR)
end = time.monotonic() + float(sys.argv[2])
n = 0
while time.monotonic() < end:
    # FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE: the MMAPLOCK exclusive
    if libc.fallocate(fd, 3, ctypes.c_long((n % 256) * 4096), ctypes.c_long(4096)):
        sys.exit(f"fallocate: {os.strerror(ctypes.get_errno())}")
    n += 1
"""


def test_xfs_fault_ops_on_both_sides(xfs, procs, ilock_bin):
    """Page faults on a shared mapping against hole punches of the same
    file: the faults wait for the punches' MMAPLOCK (invalidate_lock) and
    the punches for the faults'. Both sides' ops come from the XFS fault
    events, which record the thread's syscall number from its registers,
    and a reader uses a fault op only if that number matches the live one:
    a wrong number shows as 'unknown'."""
    path = make_file(os.path.join(xfs.mnt, "mapped.dat"), 1 << 20)
    st = start_stat(procs, ilock_bin, "-D", xfs.mnt)
    faults = procs.start([os.path.join(REPO, "build", "bench", "faultloop"), path, 3])
    punch = procs.start(["python3", "-c", PUNCH, path, 3])
    faults.communicate(timeout=30)
    punch.communicate(timeout=30)
    assert faults.returncode == 0 and punch.returncode == 0
    doc = stop_stat(st)

    edges = edges_for(doc, xfs.majmin, os.stat(path).st_ino, "invalidate_lock")
    fault_ops = ("mmap-fault", "page-mkwrite")
    waiting = sum(e["waits"] for e in edges if e["waiter"]["op"] in fault_ops)
    holding = sum(e["waits"] for e in edges if e["holder"]["op"] in fault_ops)
    total = sum(e["waits"] for e in edges)
    assert total > 100, edges
    assert waiting > 0.3 * total and holding > 0, edges
    # an op left unknown for a task that was there: a holder of mode
    # "unknown" (nobody owned the lock, nobody queued ahead) has no op to read
    unknown = sum(e["waits"] for e in edges if e["holder"]["mode"] != "unknown" and
                  "unknown" in (e["waiter"]["op"], e["holder"]["op"]))
    assert unknown < 0.05 * total, edges


SYNC_RANGE = r"""
import ctypes, os, random, sys, threading, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
os.ftruncate(fd, 64 << 20)  # sparse: writes allocate, writeback converts under the ILOCK
libc = ctypes.CDLL(None, use_errno=True)
stop = time.time() + float(sys.argv[2])
def writer(seed):
    r = random.Random(seed)
    while time.time() < stop:
        os.pwrite(fd, b"x" * 8192, r.randrange(0, 8192) * 8192)
def syncer():
    # SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER, the whole file
    while time.time() < stop:
        if libc.sync_file_range(fd, ctypes.c_longlong(0), ctypes.c_longlong(0), 2 | 4):
            sys.exit("sync_file_range: errno %d" % ctypes.get_errno())
ts = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
ts += [threading.Thread(target=syncer) for _ in range(2)]
[t.start() for t in ts]
[t.join() for t in ts]
"""


def test_xfs_sync_file_range_is_its_own_op(xfs, procs, ilock_bin):
    """A database's background flush (PostgreSQL's *_flush_after) is
    sync_file_range, writeback of a range, not a durability sync: its waits
    behind writers on the XFS ILOCK (writeback maps blocks under it) name it
    `sync-file-range`, never `fdatasync`, which this workload never calls."""
    path = os.path.join(xfs.mnt, "relation.dat")
    st = start_stat(procs, ilock_bin, "-D", xfs.mnt)
    w = procs.start(["python3", "-c", SYNC_RANGE, path, 3])
    w.communicate(timeout=60)
    assert w.returncode == 0
    doc = stop_stat(st)

    edges = edges_for(doc, xfs.majmin, os.stat(path).st_ino, "xfs_ilock")
    sides = [s for e in edges for s in (e["holder"], e["waiter"])]
    assert any(s["op"] == "sync-file-range" for s in sides), edges
    assert not any(s["op"] == "fdatasync" for s in sides), edges
