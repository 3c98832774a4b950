"""Waits in progress: a stall is shown while it lasts, not only once it ends.

`lockhold write` holds the inode lock exclusive for as long as we say (its
user buffer faults through userfaultfd); a reader (XFS) or a writer (ext4)
queues behind it. While it waits, `ilock stat`, the exporter and ilocktop
must name it: the waiter, the file, its mode, who held the lock at the
start and who holds it now.
"""

import json
import os
import re
import signal
import subprocess
import time

from ilock_run import start_stat, stop_stat
from test_export import samples, start_exporter
from test_stat import hold, lockhold
from test_top import _start, ilocktop_bin, term  # noqa: F401 (fixtures)
from util import blocked_tid, cgroup_remove, make_file, wait_line


def test_stat_names_a_wait_in_progress(xfs, procs, helpers_dir, ilock_bin, tmp_path):
    path = make_file(os.path.join(xfs.mnt, "db.dat"), 1 << 20)
    ino = os.stat(path).st_ino
    reader_bin = tmp_path / "lockreader"
    os.symlink(lockhold(helpers_dir), reader_bin)

    st = start_stat(procs, ilock_bin, "-D", xfs.mnt)
    holder, hpid, htid = hold(procs, helpers_dir, path, 6000)
    t0 = time.monotonic()
    reader = procs.start([str(reader_bin), "read", path, 8192, 4096, 1])
    rtid = blocked_tid(reader.pid)
    time.sleep(1.2)
    waited_at_least = time.monotonic() - t0 - 0.2
    doc = stop_stat(st)
    waited_at_most = time.monotonic() - t0

    wn = doc["waiting_now"]
    assert wn["available"] is True
    mine = [w for w in wn["waits"] if w["waiter"]["pid"] == rtid]
    assert len(mine) == 1, wn
    w = mine[0]
    # the wait is not over, so no histogram has it; this is the only place it shows
    assert waited_at_least * 1e9 <= w["waited_ns"] <= waited_at_most * 1e9, (w, waited_at_least)
    assert (w["dev"], w["ino"], w["path"], w["class"]) == (xfs.majmin, ino, path, "i_rwsem")
    assert w["class_fs_name"] == "IOLOCK"
    assert w["waiter"]["comm"] == "lockreader" and w["waiter"]["mode"] == "shared"
    assert w["waiter"]["tgid"] == reader.pid
    assert w["waiter"]["op"] == "buffered-read"
    assert (w["waiter"]["offset"], w["waiter"]["end"]) == (8192, 8192 + 4096)
    assert (w["holder"]["pid"], w["holder"]["tgid"]) == (htid, hpid)
    assert w["holder"]["mode"] == "exclusive" and w["holder"]["comm"] == "lockhold"
    assert w["holder"]["op"] == "buffered-write"
    # the writer still holds it, asleep in its userfaultfd fault
    assert w["owner_now"]["pid"] == htid and w["owner_now"]["mode"] == "exclusive"
    assert w["owner_state"] in ("S", "D"), w
    assert wn["in_progress"] >= 1
    assert w == max(wn["waits"], key=lambda x: x["waited_ns"]), "oldest first"
    assert doc["events"]["in_flight"] >= 1
    holder.send_signal(15)
    holder.wait(timeout=15)
    reader.communicate(timeout=15)


def test_a_wait_begun_before_tracing_is_named(xfs, procs, helpers_dir, ilock_bin, tmp_path):
    """The on-call case: the host is already stuck when ilock starts. A
    reader queued behind a writer before tracing began is found by the lock
    the kernel notes in task_struct.blocker: named with its file, mode and
    the owner now, its age a lower bound. (It used to read "no task waited
    for an inode lock: ... the cause is not its inode locks".)"""
    probe = json.loads(subprocess.run([ilock_bin, "probe", "-j"], capture_output=True,
                                      text=True, timeout=60).stdout)
    if not probe["layout"]["task_blocker"]:
        import pytest
        pytest.skip("this kernel has no task_struct.blocker")
    path = make_file(os.path.join(xfs.mnt, "db.dat"), 1 << 20)
    ino = os.stat(path).st_ino
    reader_bin = tmp_path / "lockreader"
    os.symlink(lockhold(helpers_dir), reader_bin)
    holder, hpid, htid = hold(procs, helpers_dir, path, 15000)
    reader = procs.start([str(reader_bin), "read", path, 8192, 4096, 1])
    rtid = blocked_tid(reader.pid)
    t0 = time.monotonic()
    r = subprocess.run([ilock_bin, "stat", "-j", "-d", "1.5", "-D", xfs.mnt], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["events"]["rwsem_waits"] == 0 or doc["summary"]["waits"] == 0, doc["events"]
    mine = [w for w in doc["waiting_now"]["waits"] if w["waiter"]["pid"] == rtid]
    assert len(mine) == 1, doc["waiting_now"]
    w = mine[0]
    assert w["began_before_tracing"] is True
    # since tracing began (1.5 s and loading), not since the wait began
    assert 1.4e9 <= w["waited_ns"] <= (time.monotonic() - t0) * 1e9, w
    assert (w["dev"], w["ino"], w["path"], w["class"]) == (xfs.majmin, ino, path, "i_rwsem")
    assert w["waiter"]["comm"] == "lockreader" and w["waiter"]["mode"] == "shared"
    assert w["holder"]["mode"] == "unknown" and w["holder"]["pid"] == 0
    assert w["owner_now"]["pid"] == htid and w["owner_now"]["mode"] == "exclusive"

    text = subprocess.run([ilock_bin, "stat", "-d", "1.5", "-D", xfs.mnt], capture_output=True,
                          text=True, timeout=60).stdout
    assert re.search(r"\n  STALLED: lockreader\[" + str(rtid) + r"\] has waited more than "
                     r"[\d.]+ s, since before tracing began, shared, for " + re.escape(path) +
                     r" IOLOCK; held now by lockhold\[" + str(htid) + r"\] exclusive", text), text
    assert "the cause is not its inode locks" not in text
    assert "began before tracing, its holder then not seen; now held by lockhold[" in text

    # a recording keeps it, and report says it began before the recording
    rec = tmp_path / "stuck.ilrec"
    r = subprocess.run([ilock_bin, "record", "-o", str(rec), "-d", "1.5", "-D", xfs.mnt],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rep = subprocess.run([ilock_bin, "report", str(rec)], capture_output=True, text=True,
                         timeout=30).stdout
    assert re.search(r"lockreader\[" + str(rtid) + r"\] waited at least [\d.]+ s, shared, for "
                     + re.escape(path) + r" IOLOCK\n      began before the recording, its holder "
                     r"then not seen; at the last read held by lockhold\[" + str(htid) + r"\] "
                     r"exclusive", rep), rep
    stalls = json.loads(subprocess.run([ilock_bin, "report", "-j", str(rec)], capture_output=True,
                                       text=True, timeout=30).stdout)["stalls"]
    assert [x["began_before_recording"] for x in stalls if x["waiter"]["pid"] == rtid] == [True]
    holder.send_signal(15)
    holder.wait(timeout=15)
    reader.communicate(timeout=15)


def test_a_wait_begun_before_tracing_under_cgroup(xfs, procs, helpers_dir, ilock_bin):
    """--cgroup keeps waits begun before tracing too (bpf_task_under_cgroup
    on the waiter, from the task iterator): the reader in the cgroup is
    listed, the one outside is not."""
    from test_stat import cgroup2_root
    probe = json.loads(subprocess.run([ilock_bin, "probe", "-j"], capture_output=True,
                                      text=True, timeout=60).stdout)
    if not probe["layout"]["task_blocker"]:
        import pytest
        pytest.skip("this kernel has no task_struct.blocker")
    root = cgroup2_root()
    cg = os.path.join(root, f"ilock-before-{os.getpid()}")
    os.mkdir(cg)
    holders, readers = [], []
    try:
        for name in ("in.dat", "out.dat"):
            path = make_file(os.path.join(xfs.mnt, name), 1 << 20)
            holders.append(hold(procs, helpers_dir, path, 8000)[0])
            inner = [lockhold(helpers_dir), "read", path, 8192, 4096, 1]
            if name == "in.dat":
                # into the cgroup before it runs the read
                inner = ["sh", "-c", f'echo $$ > {cg}/cgroup.procs && exec "$@"', "sh", *inner]
            readers.append(procs.start(inner))
        # after the wrapper's exec (its own write to cgroup.procs can sleep in D)
        deadline = time.monotonic() + 10
        while open(f"/proc/{readers[0].pid}/comm").read().strip() != "lockhold":
            assert time.monotonic() < deadline
            time.sleep(0.02)
        tids = [blocked_tid(r.pid) for r in readers]
        r = subprocess.run([ilock_bin, "stat", "-j", "-d", "1", "-D", xfs.mnt, "--cgroup", cg],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        waits = json.loads(r.stdout)["waiting_now"]["waits"]
        assert [(w["waiter"]["pid"], w["began_before_tracing"]) for w in waits] == \
            [(tids[0], True)], (tids, waits)
    finally:
        for h in holders:
            h.send_signal(15)
            h.wait(timeout=15)
        for rd in readers:
            rd.communicate(timeout=15)
        cgroup_remove(root, cg)


def test_text_and_exporter_show_the_stall_then_let_go(ext4, procs, helpers_dir, ilock_bin):
    """ext4: a writer behind a writer. The text names it under WAITING NOW;
    the exporter's oldest-wait gauge grows while it lasts and drops to 0
    once the holder lets go."""
    path = make_file(os.path.join(ext4.mnt, "log.dat"), 1 << 20)
    ex = start_exporter(procs, ilock_bin, "-D", ext4.mnt, interval="0.5")
    st = procs.start([ilock_bin, "stat", "-D", ext4.mnt, "-d", "2.5"], stderr=subprocess.PIPE)
    wait_line(st, "ilock: tracing", timeout=30, stream=st.stderr)
    holder, hpid, htid = hold(procs, helpers_dir, path, 3500)
    writer = procs.start([lockhold(helpers_dir), "pwrite", path, 65536, 4096, 1])
    wtid = blocked_tid(writer.pid)

    def oldest():
        status, _, body = ex.request()
        assert status == 200
        v = [s for s in samples(body.decode()) if s[0] == "ilock_oldest_wait_seconds"]
        assert len(v) == 1, body
        stalled = [s for s in samples(body.decode()) if s[0] == "ilock_stalled_waits"]
        return v[0][2], stalled[0][2]

    deadline = time.monotonic() + 10
    while (o := oldest())[0] < 1.0:
        assert time.monotonic() < deadline, f"the gauge stayed at {o}"
        time.sleep(0.2)
    assert o[1] >= 1

    out, err = st.communicate(timeout=30)
    assert st.returncode == 0, err
    text = out
    assert "\nWAITING NOW (in progress for 100 ms or more" in text, text
    m = re.search(r"\n  STALLED: lockhold\[(\d+)\] has waited ([\d.]+) s so far, exclusive, for "
                  + re.escape(path) + r" i_rwsem, held at the start by lockhold\[(\d+)\] "
                  r"exclusive; held now by the same thread, state [SD]", text)
    assert m, text
    assert (int(m.group(1)), int(m.group(3))) == (wtid, htid)
    assert f"lockhold[{wtid}] exclusive, buffered-write 4 KiB at 64 KiB on {path}" in text

    writer.communicate(timeout=20)  # returns once the holder let go
    holder.communicate(timeout=20)
    deadline = time.monotonic() + 10
    while (o := oldest())[0] >= 0.1:
        assert time.monotonic() < deadline, f"the gauge stayed at {o} after the wait ended"
        time.sleep(0.2)


def test_ilocktop_alarms_on_a_stall(term, xfs, procs, helpers_dir, ilocktop_bin):  # noqa: F811
    path = make_file(os.path.join(xfs.mnt, "hot.dat"), 1 << 20)
    t = _start(term, ilocktop_bin, xfs, "-i 0.5")
    t.wait_re(r"^ilocktop  host ")
    holder, hpid, htid = hold(procs, helpers_dir, path, 5000)
    reader = procs.start([lockhold(helpers_dir), "read", path, 8192, 4096, 1])
    rtid = blocked_tid(reader.pid)
    # the whole line, hint included: tmux may capture a line half drawn
    t.wait_re(r"^STALLED [\d.]+m?s: lockhold\[%d\] shared on .*hot\.dat IOLOCK, held now by "
              r"lockhold\[%d\] excl \([SD]\).*\(w: its lock\)" % (rtid, htid))
    # w opens the stalled lock, which has no row until one of its waits ends
    t.keys("w")
    s = t.wait(lambda s: re.search(r"^WAITING NOW on this lock", s, re.M) and
               re.search(r"^Esc/Enter back", s, re.M), "the stalled lock's detail, drawn")
    assert re.search(r"lockhold\[%d\] shared, buffered-read 4 KiB at 8 KiB\n\s+held at "
                     r"the start by lockhold\[%d\] exclusive" % (rtid, htid), s), s
    t.keys("Escape")
    t.wait_re(r"^PATH ")
    reader.communicate(timeout=20)
    holder.communicate(timeout=20)
    # once it ended, the alarm goes
    t.wait(lambda scr: "STALLED" not in scr and "ilocktop  host" in scr, "the alarm to clear")
    t.keys("q")
    t.wait_re(r"^EXIT=0$")


def test_record_keeps_the_stall_and_report_names_it(xfs, procs, helpers_dir, ilock_bin,
                                                    tmp_path):
    """A recording keeps each read's stalls; the report shows the wait once,
    at the longest a read saw it, with its holder and when it began."""
    from ilock_run import start_record, stop_record
    path = make_file(os.path.join(xfs.mnt, "db.dat"), 1 << 20)
    out = str(tmp_path / "stall.ilrec")
    rec = start_record(ilock_bin, out, "-i", "0.25", "-D", xfs.mnt)
    procs.append(rec)
    holder, hpid, htid = hold(procs, helpers_dir, path, 1800)
    t0 = time.monotonic()
    reader = procs.start([lockhold(helpers_dir), "read", path, 8192, 4096, 1])
    rtid = blocked_tid(reader.pid)
    reader.communicate(timeout=20)
    blocked_s = time.monotonic() - t0
    holder.communicate(timeout=20)
    time.sleep(0.6)  # a read after the wait ended
    stop_record(rec)

    r = subprocess.run([ilock_bin, "report", "-j", out], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["recording"]["format_version"] == "1.8"
    mine = [s for s in doc["stalls"] if s["waiter"]["pid"] == rtid]
    assert len(mine) == 1, doc["stalls"]
    s = mine[0]
    # seen at several reads, once here; at most one interval (0.25 s) short of the wait
    assert s["last_interval"] > s["first_interval"]
    assert blocked_s - 0.25 - 0.3 <= s["waited_at_least_ns"] / 1e9 <= blocked_s, (s, blocked_s)
    assert s["outcome"] == "ended"
    assert s["start_s"] >= 0
    assert (s["dev"], s["class"], s["range"]) == (xfs.majmin, "i_rwsem", "disjoint")
    assert s["path"] == path
    assert s["waiter"]["mode"] == "shared" and s["waiter"]["op"] == "buffered-read"
    assert (s["holder"]["pid"], s["holder"]["mode"]) == (htid, "exclusive")
    assert s["owner_at_last_read"]["pid"] == htid

    text = subprocess.run([ilock_bin, "report", out], capture_output=True, text=True,
                          timeout=60).stdout
    assert "\nSTALLS (waits still in progress, 100 ms or more" in text, text
    assert re.search(r"lockhold\[%d\] waited at least [\d.]+ m?s, shared, buffered-read, for "
                     % rtid + re.escape(path) + r" IOLOCK\n      held at the start by "
                     r"lockhold\[%d\] exclusive, buffered-write; at the last read by "
                     r"lockhold\[%d\] exclusive, state [SD]; ranges disjoint; it ended before "
                     r"the next read\n" % (htid, htid), text), text
    html = tmp_path / "stall.html"
    h = subprocess.run([ilock_bin, "report", "--html", str(html), out], capture_output=True,
                       text=True, timeout=60)
    assert h.returncode == 0, h.stderr
    page = html.read_text()
    assert "<h2>Stalls: waits still in progress" in page
    assert f"lockhold[{rtid}] waited at least" in page
    # -p of another process leaves it out
    other = subprocess.run([ilock_bin, "report", "-j", "-p", str(os.getpid()), out],
                           capture_output=True, text=True, timeout=60)
    assert not [s for s in json.loads(other.stdout)["stalls"] if s["waiter"]["pid"] == rtid]


def test_without_the_iterator_tracing_goes_on(xfs, procs, helpers_dir, ilock_bin):
    """ILOCK_NO_WALK=1 acts as a kernel whose verifier refused the task
    iterator: waits are still traced, waiting_now says it was not read."""
    path = make_file(os.path.join(xfs.mnt, "db.dat"), 1 << 20)
    env = dict(os.environ, ILOCK_NO_WALK="1")
    st = procs.start([ilock_bin, "stat", "-j", "-D", xfs.mnt], stderr=subprocess.PIPE, env=env)
    wait_line(st, "ilock: tracing", timeout=30, stream=st.stderr)
    holder, hpid, htid = hold(procs, helpers_dir, path, 600)
    reader = procs.start([lockhold(helpers_dir), "read", path, 8192, 4096, 1])
    reader.communicate(timeout=20)
    holder.communicate(timeout=20)
    doc = stop_stat(st)
    assert doc["attach"]["waiting_now"] == "off"
    assert doc["waiting_now"]["available"] is False and doc["waiting_now"]["waits"] == []
    assert sum(l["shared"]["waits"] for l in doc["locks"] if l["dev"] == xfs.majmin) == 1


def test_fsync_in_progress_names_the_journal_commit(xfs, fs_factory, procs, helpers_dir,
                                                     ilock_bin, tmp_path):
    """shared/seeds/004: an ext4 fsync stuck behind its journal commit. The
    ext4 image is a file on XFS, on a loop device of its own, so holding the
    image's XFS inode lock (lockhold write, past the end of the ext4 fs)
    stalls every write the journal makes. An fsync after a metadata change
    must then wait for a commit that cannot finish: ilock lists it while it
    lasts, with the commit and the jbd2 thread."""
    ext4 = fs_factory("ext4", size="128M", under=xfs.mnt, fs_size="64M")
    path = make_file(os.path.join(ext4.mnt, "ib_logfile0"), 1 << 16)
    ino = os.stat(path).st_ino
    subprocess.run(["sync", "-f", path], check=True, timeout=30)
    from ilock_run import start_record, stop_record
    st = start_stat(procs, ilock_bin, "-D", ext4.majmin)
    out = str(tmp_path / "fsync.ilrec")
    rec = start_record(ilock_bin, out, "-i", "0.25", "-D", ext4.majmin)
    procs.append(rec)
    # past the ext4 fs's 64 MiB: the held write changes nothing of it
    holder = procs.start([lockhold(helpers_dir), "write", ext4.image, 100 << 20, 4096, 30000])
    assert wait_line(holder, "HOLDING ", 10)
    os.chmod(path, 0o600)  # a metadata change: the fsync must commit it
    syncer = procs.start(["python3", "-c",
                          "import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)",
                          path])
    stid = blocked_tid(syncer.pid, wchan="jbd2")  # in the commit wait, past start-up
    time.sleep(1.5)
    doc = stop_stat(st)
    holder.send_signal(signal.SIGUSR1)
    assert syncer.wait(timeout=30) == 0
    holder.wait(timeout=15)
    time.sleep(0.6)  # a read after the fsync ended
    stop_record(rec)

    wn = doc["waiting_now"]
    fs = [w for w in wn["waits"] if w["kind"] == "fsync" and w["waiter"]["pid"] == stid]
    assert len(fs) == 1, wn
    w = fs[0]
    assert (w["dev"], w["ino"], w["class"]) == (ext4.majmin, ino, "jbd2_wait"), w
    assert w["waited_ns"] >= 1_400_000_000, w
    assert w["waiter"]["op"] == "fsync"
    # the commit of the chmod's transaction runs, stuck writing the journal
    assert w["owner_now"]["comm"].startswith("jbd2/"), w
    assert w["journal"]["commit_tid"] is not None, w
    assert w["journal"]["commit_tid"] <= w["journal"]["need_tid"]
    assert 0 < w["journal"]["commit_running_ns"] <= w["waited_ns"] + 100_000_000, w
    assert w["owner_state"] == "D", w
    assert doc["events"]["fsyncs_begun"] >= 1

    # recorded: the report lists the fsync once, as a stall of the journal
    r = subprocess.run([ilock_bin, "report", "-j", out], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    rd = json.loads(r.stdout)
    mine = [x for x in rd["stalls"] if x["waiter"]["pid"] == stid]
    assert len(mine) == 1, rd["stalls"]
    x = mine[0]
    assert (x["class"], x["path"], x["outcome"]) == ("jbd2_wait", path, "ended"), x
    assert x["waited_at_least_ns"] >= 1_000_000_000, x
    assert x["owner_at_last_read"]["comm"].startswith("jbd2/"), x
    assert x["journal_commit_running"] is True, x
    text = subprocess.run([ilock_bin, "report", out], capture_output=True, text=True,
                          timeout=60).stdout
    assert re.search(r"python3\[%d\] was in fsync of %s for at least [\d.]+ s\n      a journal "
                     r"commit running at the last read, by jbd2/[^\[]+\[\d+\], state D; it "
                     r"ended before the next read\n" % (stid, re.escape(path)), text), text
    # and the fsync's journal wait, once it ended, in the tables as ever
    (row,) = [lk for lk in rd["locks"] if lk["class"] == "jbd2_wait" and lk["ino"] == ino]
    assert row["exclusive"]["waits"] == 1 and row["exclusive"]["max_ns"] >= 1_000_000_000, row


def test_fsync_stall_text_and_exporter(xfs, fs_factory, procs, helpers_dir, ilock_bin):
    """The same stall in IN SHORT, WAITING NOW and the exporter's
    ilock_oldest_fsync_seconds, which the lock-wait gauge does not count."""
    ext4 = fs_factory("ext4", size="128M", under=xfs.mnt, fs_size="64M")
    path = make_file(os.path.join(ext4.mnt, "ib_logfile0"), 1 << 16)
    subprocess.run(["sync", "-f", path], check=True, timeout=30)
    ex = start_exporter(procs, ilock_bin, "-D", ext4.majmin, interval="0.5")
    st = procs.start([ilock_bin, "stat", "-D", ext4.majmin], stderr=subprocess.PIPE)
    wait_line(st, "ilock: tracing", timeout=30, stream=st.stderr)
    holder = procs.start([lockhold(helpers_dir), "write", ext4.image, 100 << 20, 4096, 30000])
    assert wait_line(holder, "HOLDING ", 10)
    os.chmod(path, 0o600)
    syncer = procs.start(["python3", "-c",
                          "import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)",
                          path])
    stid = blocked_tid(syncer.pid, wchan="jbd2")  # in the commit wait, past start-up

    def gauges():
        status, _, body = ex.request()
        assert status == 200
        v = {s[0]: s[2] for s in samples(body.decode())
             if s[0] in ("ilock_oldest_fsync_seconds", "ilock_oldest_wait_seconds")}
        assert len(v) == 2, body
        return v

    deadline = time.monotonic() + 10
    while (g := gauges())["ilock_oldest_fsync_seconds"] < 1.0:
        assert time.monotonic() < deadline, f"the gauge stayed at {g}"
        time.sleep(0.2)
    # an fsync is not an inode lock wait: that gauge stays at 0
    assert g["ilock_oldest_wait_seconds"] == 0, g
    time.sleep(0.2)  # the fsync over a second old for stat too, however slow its start
    st.send_signal(signal.SIGINT)
    out, err = st.communicate(timeout=30)
    assert st.returncode == 0, err
    holder.send_signal(signal.SIGUSR1)
    assert syncer.wait(timeout=30) == 0
    holder.wait(timeout=15)

    m = re.search(r"\n  STALLED: python3\[(\d+)\] has been in fsync of " + re.escape(path) +
                  r" for ([\d.]+) s so far; journal commit of transaction \d+ running for "
                  r"[\d.]+ s, by jbd2/[^\[]+\[\d+\], state D \(WAITING NOW below\)", out)
    assert m, out
    assert int(m.group(1)) == stid
    assert re.search(r"\nWAITING NOW .*\n  [\d.]+ s +python3\[%d\] fsync of %s\n +journal commit "
                     r"of transaction" % (stid, re.escape(path)), out), out
    # once it is over the gauge drops back
    deadline = time.monotonic() + 10
    while gauges()["ilock_oldest_fsync_seconds"] != 0:
        assert time.monotonic() < deadline, "the fsync gauge never dropped"
        time.sleep(0.2)
