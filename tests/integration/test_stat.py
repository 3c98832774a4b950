"""`ilock stat` against real XFS and ext4 on loop devices.

A deterministic holder: `lockhold write` takes the inode lock exclusive for
a buffered write whose user buffer faults through userfaultfd, and holds it
until the test's time is up. Readers (`lockhold read`) or a second writer
then wait behind it, and we know exactly who waited, behind whom, how long.
"""

import fcntl
import json
import os
import re
import signal
import struct
import subprocess
import time


from ilock_run import edges_for, locks_for, start_record, start_stat, stop_record, stop_stat
from util import blocked_tid, cgroup_remove, make_file, prog_names, run_seed_fio, seed_fio, wait_line

HOLD_MS = 800
MS = 1_000_000


def lockhold(helpers_dir):
    return os.path.join(helpers_dir, "lockhold")


def hold(procs, helpers_dir, path, hold_ms=HOLD_MS, off=0, length=4096):
    p = procs.start([lockhold(helpers_dir), "write", path, off, length, hold_ms])
    m = re.fullmatch(r"HOLDING pid=(\d+) tid=(\d+) t=(\d+)", wait_line(p, "HOLDING ", 10))
    assert m
    return p, int(m.group(1)), int(m.group(2))


def finish(p):
    wait_line(p, "RELEASED ", 15)
    assert p.wait(timeout=15) == 0


def run_json(procs, cmd):
    p = procs.start(cmd)
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 0, f"{cmd} exited {p.returncode}"
    return json.loads(out)


def ino_of(path):
    return os.stat(path).st_ino


def test_xfs_readers_blocked_by_writer(xfs, procs, helpers_dir, ilock_bin, tmp_path):
    path = make_file(os.path.join(xfs.mnt, "db.dat"), 1 << 20)
    # the readers run under another name (comm), so the two sides' comms differ
    reader_bin = tmp_path / "lockreader"
    os.symlink(lockhold(helpers_dir), reader_bin)
    busy = make_file(os.path.join(xfs.mnt, "busy.dat"), 1 << 20)
    ino = ino_of(path)

    st = start_stat(procs, ilock_bin, "-D", xfs.mnt, "--holds=xfs")
    # one thread hammering an unrelated file: busy, but never contended
    spin = procs.start([lockhold(helpers_dir), "spin", busy, 2, 1])
    holder, hpid, htid = hold(procs, helpers_dir, path)
    readers = procs.start([str(reader_bin), "read", path, 8192, 4096, 3])
    r = json.loads(readers.communicate(timeout=20)[0])
    finish(holder)
    spin.communicate(timeout=20)
    doc = stop_stat(st)

    assert doc["version"] == 1
    assert doc["attach"]["contention_begin"] in ("tp_btf", "raw_tp")
    rows = locks_for(doc, xfs.majmin, ino)
    assert len(rows) == 1, doc["locks"]
    row = rows[0]
    assert row["fs"] == "xfs"
    assert row["path"] == path
    assert row["gen"] == generation(path), row  # the file's, not a number read elsewhere
    assert row["shared"]["waits"] == 3
    assert row["exclusive"]["waits"] == 0

    # max wait within 15% of the longest time a reader was really blocked
    blocked = max(r["blocked_ns"])
    assert blocked > (HOLD_MS // 2) * MS
    assert abs(row["shared"]["max_ns"] - blocked) <= 0.15 * blocked, (row["shared"], r)
    assert sum(c for _, _, c in row["shared"]["hist"]) == 3

    # every wait is paired with the writer as an exclusive holder
    edges = edges_for(doc, xfs.majmin, ino)
    assert sum(e["waits"] for e in edges) == 3
    for e in edges:
        assert e["holder"]["pid"] == htid and e["holder"]["tgid"] == hpid
        assert e["holder"]["mode"] == "exclusive"
        assert e["holder"]["comm"] == "lockhold"
        assert e["waiter"]["comm"] == "lockreader"
        assert e["waiter"]["mode"] == "shared"
        assert e["waiter"]["tgid"] == r["pid"]
    assert sorted(e["waiter"]["pid"] for e in edges) == sorted(r["tids"])

    # by command: the three reader threads are one role behind one writer
    roles = [x for x in doc["roles"] if x["dev"] == xfs.majmin and x["ino"] == ino]
    assert len(roles) == 1, roles
    role = roles[0]
    assert role["holder"] == {"comm": "lockhold", "role": None, "mode": "exclusive",
                              "op": "buffered-write", "op_flags": []}
    assert role["waiter"] == {"comm": "lockreader", "role": None, "mode": "shared",
                              "op": "buffered-read", "op_flags": []}
    assert (role["holder_threads"], role["waiter_threads"]) == (1, 3)
    assert role["waits"] == 3
    assert role["wait_ns"] == sum(e["wait_ns"] for e in edges)
    assert role["headroom"] == 1.0  # the readers read bytes the writer did not write

    # XFS hold times: the IOLOCK was held exclusive for at least the hold
    assert row["hold"] is not None
    assert row["hold"]["exclusive"]["max_ns"] >= HOLD_MS * MS
    assert row["acquisitions"]["exclusive"] >= 1

    # the busy file the readers never touched has no waits
    busy_rows = [l for l in doc["locks"] if l["ino"] == ino_of(busy)]
    assert all(l["shared"]["waits"] == 0 and l["exclusive"]["waits"] == 0 for l in busy_rows)
    for k, v in doc["lost"].items():
        assert k in doc["lost"] and isinstance(v, int)
    assert doc["lost"]["wait_map_full"] == 0 and doc["lost"]["edge_map_full"] == 0


def test_holds_off_keeps_waits_and_pairs(xfs, procs, helpers_dir, ilock_bin):
    """The default, --holds=off, attaches no XFS hold program and reports no
    hold times, but the waits and who made whom wait are all there."""
    path = make_file(os.path.join(xfs.mnt, "db.dat"), 1 << 20)
    ino = ino_of(path)

    st = start_stat(procs, ilock_bin, "-D", xfs.mnt)
    holder, hpid, htid = hold(procs, helpers_dir, path, hold_ms=300)
    readers = procs.start([lockhold(helpers_dir), "read", path, 8192, 4096, 2])
    r = json.loads(readers.communicate(timeout=20)[0])
    finish(holder)
    doc = stop_stat(st)

    assert doc["attach"]["contention_begin"] in ("tp_btf", "raw_tp")
    assert doc["attach"]["xfs_ilock"] == "off", doc["attach"]
    (row,) = locks_for(doc, xfs.majmin, ino)
    assert row["shared"]["waits"] == 2
    assert row["hold"] is None and row["acquisitions"] is None, row
    edges = edges_for(doc, xfs.majmin, ino)
    assert sum(e["waits"] for e in edges) == 2
    assert all(e["holder"]["pid"] == htid and e["holder"]["mode"] == "exclusive" for e in edges)
    assert sorted(e["waiter"]["pid"] for e in edges) == sorted(r["tids"])


def test_filters_leave_off_the_programs_they_rule_out(xfs, ext4, procs, helpers_dir,
                                                       ilock_bin):
    """A program that could only see what the filters drop is not attached,
    even when asked for (--holds=xfs --ops io):
    with -D on an ext4 mount, no XFS hold or XFS op program runs on every
    XFS I/O of the host; with --fs xfs, no ext4 or journal one. What the
    filters keep still works: the ext4 writer-writer wait is reported."""
    path = make_file(os.path.join(ext4.mnt, "db.dat"), 1 << 20)

    st = start_stat(procs, ilock_bin, "-D", ext4.mnt, "--holds=xfs", "--ops", "io")
    names = prog_names(st.pid)
    holder, hpid, htid = hold(procs, helpers_dir, path, hold_ms=300)
    writer = procs.start([lockhold(helpers_dir), "pwrite", path, 65536, 4096, 1])
    w = json.loads(writer.communicate(timeout=20)[0])
    finish(holder)
    doc = stop_stat(st)

    assert doc["attach"]["xfs_ilock"] == "off", doc["attach"]
    assert not [n for n in names if n.startswith(("xfs_", "op_xfs_"))], names
    assert any(n.startswith("op_ext4_") for n in names), names
    assert doc["attach"]["jbd2_wait"] == "tp_btf", doc["attach"]
    (row,) = locks_for(doc, ext4.majmin, ino_of(path))
    assert row["exclusive"]["waits"] == 1
    (e,) = edges_for(doc, ext4.majmin, ino_of(path))
    assert (e["holder"]["pid"], e["waiter"]["pid"]) == (htid, w["tids"][0])

    # --fs xfs: the XFS programs are back, the ext4 and journal ones gone
    st = start_stat(procs, ilock_bin, "--fs", "xfs", "--holds=xfs", "--ops", "io")
    names = prog_names(st.pid)
    doc = stop_stat(st)
    assert doc["attach"]["xfs_ilock"] in ("tp_btf", "raw_tp"), doc["attach"]
    assert doc["attach"]["jbd2_wait"] == "off", doc["attach"]
    assert any(n.startswith("xfs_ilock") for n in names), names
    assert not [n for n in names if n.startswith(("op_ext4_", "jbd2_"))], names

    # -D naming an XFS mount keeps the XFS hold programs
    st = start_stat(procs, ilock_bin, "-D", xfs.mnt, "--holds=xfs", "--ops", "io")
    names = prog_names(st.pid)
    stop_stat(st)
    assert any(n.startswith("xfs_iunlock") for n in names), names

    # ilock probe says the same before anything runs
    def probe(*args):
        r = subprocess.run([ilock_bin, "probe", "-j", "--holds=xfs", *args],
                           capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)["strategy"]["xfs_holds"]

    h = probe("-D", ext4.mnt)
    assert h["attach"] == "off" and f"-D {ext4.majmin} is ext4" in h["why"], h
    assert probe("-D", xfs.mnt)["attach"] in ("tp_btf", "raw_tp")
    assert probe("--class", "jbd2_wait")["attach"] == "off"
    r = subprocess.run([ilock_bin, "probe", "--fs", "nofs"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "--fs nofs" in r.stderr, r.stderr


def test_wait_begun_before_attach_is_counted_not_kept(xfs, procs, helpers_dir, ilock_bin):
    """A reader that was already blocked when ilock attached ends its wait
    with no begin seen: one end_without_begin, no wait. A reader blocked
    after attach is a wait as ever."""
    path = make_file(os.path.join(xfs.mnt, "db.dat"), 1 << 20)
    ino = ino_of(path)

    # held until both readers have surely waited: loading ilock may take
    # seconds on a slow machine, so release by signal, not by a fixed time
    holder, hpid, htid = hold(procs, helpers_dir, path, hold_ms=30000)
    early = procs.start([lockhold(helpers_dir), "read", path, 8192, 4096, 1])
    time.sleep(0.3)
    st = start_stat(procs, ilock_bin, "-D", xfs.mnt)
    late = procs.start([lockhold(helpers_dir), "read", path, 8192, 4096, 1])
    blocked_tid(late.pid)
    time.sleep(0.8)
    holder.send_signal(signal.SIGUSR1)
    e = json.loads(early.communicate(timeout=20)[0])
    r = json.loads(late.communicate(timeout=20)[0])
    finish(holder)
    doc = stop_stat(st)

    assert min(e["blocked_ns"] + r["blocked_ns"]) > 500 * MS, (e, r)
    assert doc["lost"]["end_without_begin"] == 1, doc["lost"]
    (row,) = locks_for(doc, xfs.majmin, ino)
    assert row["shared"]["waits"] == 1, row
    (edge,) = edges_for(doc, xfs.majmin, ino)
    assert edge["waiter"]["pid"] == r["tids"][0]


def test_ext4_readers_do_not_wait_writers_do(ext4, procs, helpers_dir, ilock_bin):
    path = make_file(os.path.join(ext4.mnt, "db.dat"), 1 << 20)
    ino = ino_of(path)

    st = start_stat(procs, ilock_bin, "-D", ext4.majmin)
    holder, hpid, htid = hold(procs, helpers_dir, path)
    readers = procs.start([lockhold(helpers_dir), "read", path, 8192, 4096, 3])
    r = json.loads(readers.communicate(timeout=20)[0])
    assert max(r["blocked_ns"]) < (HOLD_MS // 4) * MS  # ext4 reads take no inode lock
    writer = procs.start([lockhold(helpers_dir), "pwrite", path, 65536, 4096, 1])
    time.sleep(0.1)
    finish(holder)
    w = json.loads(writer.communicate(timeout=20)[0])
    doc = stop_stat(st)

    rows = locks_for(doc, ext4.majmin, ino)
    assert len(rows) == 1, doc["locks"]
    row = rows[0]
    assert row["fs"] == "ext4"
    assert row["path"] == path
    assert row["shared"]["waits"] == 0
    assert row["exclusive"]["waits"] == 1
    assert row["hold"] is None  # hold times come from XFS tracepoints only
    edges = edges_for(doc, ext4.majmin, ino)
    assert len(edges) == 1
    e = edges[0]
    assert (e["holder"]["pid"], e["holder"]["mode"]) == (htid, "exclusive")
    assert (e["waiter"]["pid"], e["waiter"]["mode"]) == (w["tids"][0], "exclusive")
    assert abs(e["max_ns"] - w["blocked_ns"][0]) <= 0.15 * w["blocked_ns"][0]


def gated(procs, cmd):
    """A process whose pid is known now but which runs cmd only on go():
    the shell execs cmd in place, so the pid stays the same."""
    p = procs.start(["sh", "-c", 'read _ && exec "$@"', "gated", *[str(c) for c in cmd]],
                    stdin=subprocess.PIPE)
    return p


def go(p):
    p.stdin.write("go\n")
    p.stdin.flush()


def test_filters_pid_and_ino(xfs, procs, helpers_dir, ilock_bin):
    a = make_file(os.path.join(xfs.mnt, "a.dat"), 1 << 20)
    b = make_file(os.path.join(xfs.mnt, "b.dat"), 1 << 20)

    ra = gated(procs, [lockhold(helpers_dir), "read", a, 0, 4096, 2])
    rb = gated(procs, [lockhold(helpers_dir), "read", b, 0, 4096, 2])
    by_pid = start_stat(procs, ilock_bin, "-p", ra.pid)
    by_ino = start_stat(procs, ilock_bin, "--ino", ino_of(b), "-D", xfs.mnt)
    ha, _, _ = hold(procs, helpers_dir, a)
    hb, _, _ = hold(procs, helpers_dir, b)
    go(ra)
    go(rb)
    out_a = json.loads(ra.communicate(timeout=20)[0])
    json.loads(rb.communicate(timeout=20)[0])
    finish(ha)
    finish(hb)
    dp = stop_stat(by_pid)
    di = stop_stat(by_ino)

    assert out_a["pid"] == ra.pid
    assert {(l["ino"]) for l in dp["locks"] if l["shared"]["waits"]} == {ino_of(a)}
    assert dp["edges"] and all(e["waiter"]["tgid"] == ra.pid for e in dp["edges"])
    assert {(l["dev"], l["ino"]) for l in di["locks"]} == {(xfs.majmin, ino_of(b))}
    assert sum(l["shared"]["waits"] for l in di["locks"]) == 2


def cgroup2_root():
    """Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or
    /sys/fs/cgroup/unified on a hybrid host like this project's VM)."""
    with open("/proc/self/mounts") as f:
        for line in f:
            dev, mnt, fstype = line.split()[:3]
            if fstype == "cgroup2":
                return mnt
    raise AssertionError("no cgroup2 filesystem is mounted: --cgroup cannot be tested")


def test_filter_cgroup(xfs, procs, helpers_dir, ilock_bin):
    """--cgroup keeps the waits of tasks in that cgroup, whoever holds the lock."""
    root = cgroup2_root()
    cg = os.path.join(root, f"ilock-test-{os.getpid()}")
    os.mkdir(cg)
    try:
        a = make_file(os.path.join(xfs.mnt, "a.dat"), 1 << 20)
        b = make_file(os.path.join(xfs.mnt, "b.dat"), 1 << 20)
        ra = gated(procs, [lockhold(helpers_dir), "read", a, 0, 4096, 2])
        rb = gated(procs, [lockhold(helpers_dir), "read", b, 0, 4096, 2])
        with open(os.path.join(cg, "cgroup.procs"), "w") as f:
            f.write(str(ra.pid))
        st = start_stat(procs, ilock_bin, "--cgroup", cg, "-D", xfs.mnt)
        ha, _, _ = hold(procs, helpers_dir, a)   # the holders are outside it
        hb, _, _ = hold(procs, helpers_dir, b)
        go(ra)
        go(rb)
        ra.communicate(timeout=20)
        rb.communicate(timeout=20)
        finish(ha)
        finish(hb)
        doc = stop_stat(st)
    finally:
        cgroup_remove(root, cg)
    assert {l["ino"] for l in doc["locks"] if l["shared"]["waits"]} == {ino_of(a)}, doc["locks"]
    assert sum(l["shared"]["waits"] for l in doc["locks"]) == 2
    assert doc["edges"] and all(e["waiter"]["tgid"] == ra.pid for e in doc["edges"])
    assert doc["filters"] == f"-D {xfs.majmin} --cgroup {cg}"


def test_filter_dev(fs_factory, procs, helpers_dir, ilock_bin):
    one, two = fs_factory("xfs"), fs_factory("xfs")
    f1 = make_file(os.path.join(one.mnt, "f"), 1 << 20)
    f2 = make_file(os.path.join(two.mnt, "f"), 1 << 20)

    st = start_stat(procs, ilock_bin, "-D", two.dev)  # a block device node works too
    holders = [hold(procs, helpers_dir, f, hold_ms=500)[0] for f in (f1, f2)]
    readers = [procs.start([lockhold(helpers_dir), "read", f, 0, 4096, 2]) for f in (f1, f2)]
    for r in readers:
        r.communicate(timeout=20)
    for h in holders:
        finish(h)
    doc = stop_stat(st)
    assert {l["dev"] for l in doc["locks"]} == {two.majmin}
    assert any(l["ino"] == ino_of(f2) and l["shared"]["waits"] == 2 for l in doc["locks"])


def stat_over_two_waits(procs, helpers_dir, ilock_bin, path, *args):
    """`ilock stat -d 3 ARGS` while two readers wait 400 ms behind a writer
    of path: its output and the writer's thread id."""
    st = procs.start([ilock_bin, "stat", "-d", "3", *args], stderr=subprocess.PIPE)
    wait_line(st, "ilock: tracing", 30, stream=st.stderr)
    holder, _, htid = hold(procs, helpers_dir, path, hold_ms=400)
    procs.start([lockhold(helpers_dir), "read", path, 0, 4096, 2]).communicate(timeout=20)
    finish(holder)
    out, _ = st.communicate(timeout=30)
    assert st.returncode == 0
    return out, htid


def test_duration_text_output(xfs, procs, helpers_dir, ilock_bin):
    """The text report names the file, the lock and the pair."""
    path = make_file(os.path.join(xfs.mnt, "text.dat"), 1 << 20)
    out, htid = stat_over_two_waits(procs, helpers_dir, ilock_bin, path, "-D", xfs.mnt)
    assert "TOP INODE LOCKS" in out and "WAIT HISTOGRAMS" in out and "LOST EVENTS" in out
    line = next(l for l in out.splitlines() if l.startswith(path))
    assert "xfs" in line and "IOLOCK" in line and f"lockhold[{htid}] exclusive" in line
    assert re.search(rf"lockhold\[{htid}\] exclusive\s+->\s+lockhold\[\d+\]\s+shared\s+1 wait\s", out)
    # in short: two readers blocked most of 400 ms each, in 3 s: about 0.2 tasks waiting
    m = re.search(r"\nIN SHORT\n  (\d\.\d\d) tasks waited for inode locks on average "
                  r"\(\S+ \S+ of waiting in 3\.\d s, 2 waits\)\n  most on (\S+) IOLOCK: ", out)
    assert m, out
    assert 0.1 < float(m.group(1)) < 0.4 and m.group(2) == path


def test_folded_intervals_then_the_whole_run_under_its_own_header(xfs, procs, helpers_dir,
                                                                 ilock_bin):
    """--folded -i: each interval's stacks under its header, then the whole
    run's under one of its own, so that a flame graph of the file can cut
    them apart, and the intervals add up to the whole run."""
    path = make_file(os.path.join(xfs.mnt, "folded.dat"), 1 << 20)
    out, _ = stat_over_two_waits(procs, helpers_dir, ilock_bin, path, "--folded", "-i", "1",
                                 "-D", xfs.mnt)
    blocks, cur = [], None
    for l in out.splitlines():
        if l.startswith("# --- "):
            cur = [l, 0]
            blocks.append(cur)
        elif l.strip():
            assert cur is not None, f"stacks before any header: {l!r}"
            cur[1] += int(l.rsplit(" ", 1)[1])
    heads = [b[0] for b in blocks]
    assert all(h.startswith("# --- interval ") for h in heads[:-1]) and len(heads) >= 4, heads
    assert re.fullmatch(r"# --- whole run: 3\.\d s ---", heads[-1]), heads
    assert blocks[-1][1] > 0 and sum(b[1] for b in blocks[:-1]) == blocks[-1][1], blocks


def test_names_cannot_drive_the_terminal(xfs, procs, helpers_dir, ilock_bin, tmp_path):
    """A file name and a command name with escape sequences, a bell and a
    newline: the text report prints each control as '?', so a name cannot
    retitle, clear or forge lines on the terminal of whoever runs ilock;
    the JSON, beside it, keeps the names exact."""
    name = "evil\x1b]0;pwned\x07\nFAKE.dat"
    path = make_file(os.path.join(xfs.mnt, name), 1 << 20)
    # the holder's comm is its executable's name: \x1b[2J clears a screen
    exe = tmp_path / "h\x1b[2Jx"
    os.symlink(lockhold(helpers_dir), exe)
    text = procs.start([ilock_bin, "stat", "-d", "3", "-D", xfs.mnt], stderr=subprocess.PIPE)
    js = procs.start([ilock_bin, "stat", "-d", "3", "-D", xfs.mnt, "-j"], stderr=subprocess.PIPE)
    wait_line(text, "ilock: tracing", 30, stream=text.stderr)
    wait_line(js, "ilock: tracing", 30, stream=js.stderr)
    holder = procs.start([str(exe), "write", path, 0, 4096, 400])
    m = re.fullmatch(r"HOLDING pid=(\d+) tid=(\d+) t=(\d+)", wait_line(holder, "HOLDING ", 10))
    assert m
    htid = int(m.group(2))
    procs.start([lockhold(helpers_dir), "read", path, 0, 4096, 1]).communicate(timeout=20)
    finish(holder)
    out, _ = text.communicate(timeout=30)
    doc, _ = js.communicate(timeout=30)
    assert text.returncode == 0 and js.returncode == 0
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", out), repr(out[:2000])
    shown = path.replace("\x1b", "?").replace("\x07", "?").replace("\n", "?")
    assert f"most on {shown} IOLOCK" in out, repr(out[:3000])
    row = next((l for l in out.splitlines() if "/evil?]0;pwned??FAKE.dat " in l and " xfs " in l),
               None)
    assert row and row.endswith(f"h?[2Jx[{htid}] exclusive"), repr(out[:3000])
    assert "FAKE.dat" not in [l.strip() for l in out.splitlines()]  # no forged line
    d = json.loads(doc)
    lock = next(l for l in d["locks"] if l["ino"] == ino_of(path))
    assert lock["path"] == path
    assert any(e["holder"]["comm"] == "h\x1b[2Jx" for e in d["edges"]), d["edges"]


def test_uncontended_writer_is_not_blamed_on_locks(ext4, procs, helpers_dir, ilock_bin):
    """One thread writing alone (seed 003: a write path slow for other
    reasons) waits for no inode lock, and ilock says the locks are not it."""
    path = make_file(os.path.join(ext4.mnt, "alone.dat"), 1 << 20)
    st = start_stat(procs, ilock_bin, "-D", ext4.mnt, "--class", "i_rwsem")
    procs.start([lockhold(helpers_dir), "spin", path, 2, 1]).communicate(timeout=20)
    doc = stop_stat(st)
    assert doc["summary"]["few_waiting"] is True, doc["summary"]
    assert doc["summary"]["tasks_waiting"] < 0.05
    spin = procs.start([lockhold(helpers_dir), "spin", path, 4, 1])
    text = subprocess.run([ilock_bin, "stat", "-d", "2", "-D", ext4.mnt, "--class", "i_rwsem"],
                          capture_output=True, text=True, timeout=30)
    spin.communicate(timeout=20)
    assert text.returncode == 0, text.stderr
    # (under the filters, rw_semaphore waits elsewhere on the host get their own line)
    assert re.search(r"\nIN SHORT\n  (no task waited for an inode lock: if this workload is "
                     r"slow, the cause is not its inode locks|.*too few to slow a workload down"
                     r"|no inode lock wait matched the filters \(-D )", text.stdout), text.stdout


def test_full_maps_count_every_lost_wait(xfs, procs, helpers_dir, ilock_bin):
    """--max-inodes 64, and one wait on each of 100 files: past 56 locks the
    waits of new files are kept under their device, class and mode alone
    (wait_inodes_folded), so every wait is still in some lock row; pairs
    keep their inode, so past 56 they lose their threads and, once the last
    eighth is full too, are lost (edge_map_full): recorded + lost adds up
    to every wait seen."""
    st = start_stat(procs, ilock_bin, "-D", xfs.majmin, "--max-inodes", "64",
                    "--ops", "off", "-n", "1000")
    cm = procs.start([os.path.join(helpers_dir, "contend_many"),
                      os.path.join(xfs.mnt, "many"), "100", "3", "2"])
    out, _ = cm.communicate(timeout=60)
    assert cm.returncode == 0, out
    time.sleep(0.2)
    doc = stop_stat(st)

    seen = doc["events"]["inode_lock_waits"]
    lost = doc["lost"]
    # rows with hold times only (XFS holds have a map of their own) aside
    waited = [l for l in doc["locks"] if l["shared"]["waits"] + l["exclusive"]["waits"]]
    waits = sum(l["shared"]["waits"] + l["exclusive"]["waits"] for l in waited)
    pairs = sum(e["waits"] for e in doc["edges"])
    assert seen >= 100, doc["events"]
    folded = [l for l in waited if l["ino"] is None]
    # a slot is lost only when two CPUs create the same key at once
    assert 52 <= len(waited) - len(folded) <= 56 and 1 <= len(folded) <= 8, waited
    assert all(l["path"] is None and l["path_note"].startswith("locks table full")
               for l in folded), folded
    assert lost["wait_map_full"] == 0 and lost["wait_inodes_folded"] > 0, lost
    assert sum(l["shared"]["waits"] + l["exclusive"]["waits"] for l in folded) \
        == lost["wait_inodes_folded"], (folded, lost)
    assert waits == seen, (waits, lost, seen)
    assert len(doc["edges"]) <= 64
    assert lost["edge_threads_folded"] > 0 and lost["edge_map_full"] > 0, lost
    assert any(e["waiter"]["pid"] is None for e in doc["edges"]), doc["edges"]
    assert pairs + lost["edge_map_full"] == seen, (pairs, lost, seen)
    # the summary misses none of them, so it may judge
    summ = doc["summary"]
    assert summ["waits_left_out"] == lost["pending_map_full"] + lost["begin_without_end"], \
        (summ, lost)
    assert summ["waits"] == seen, (summ, lost, seen)
    # the tables' fill: the pairs' full, the locks' past the part for inodes
    tables = doc["tables"]
    assert tables["pairs"] == {"entries": 64, "capacity": 64}, tables
    assert tables["locks"]["capacity"] == 64 and 57 <= tables["locks"]["entries"] <= 64, tables


def test_pairs_past_the_thread_part_fold_by_command(xfs, procs, ilock_bin):
    """16 threads on one file with --max-inodes 512: more thread pairs (each
    with its modes, ops and range) than the 448 the pairs table keeps for
    them. The pairs after those are kept without their threads, so no wait
    is lost from the pairs: they add up to the lock's waits, by command the
    rows say there were more threads, and by thread the folded ones have
    no pid."""
    path = make_file(os.path.join(xfs.mnt, "many-threads.dat"), 32 << 20)
    st = start_stat(procs, ilock_bin, "-D", xfs.mnt, "--max-inodes", "512")
    run_seed_fio(procs, path, 32, 4, jobs=16)
    doc = stop_stat(st)

    lost, tables = doc["lost"], doc["tables"]
    folded = [e for e in doc["edges"] if e["waiter"]["pid"] is None]
    seen = doc["events"]["inode_lock_waits"]
    assert tables["pairs"]["capacity"] == 512 and tables["pairs"]["entries"] >= 448, tables
    assert lost["edge_threads_folded"] > 0 and folded, (lost, tables)
    assert lost["edge_map_full"] == 0, (lost, tables, len(folded))
    # every wait is in some pair, folded or not
    assert sum(e["waits"] for e in doc["edges"]) == seen, (seen, lost)
    # counted when folded, at the wait's begin: ends after the probes went are not in the pairs
    fw = sum(e["waits"] for e in folded)
    assert fw <= lost["edge_threads_folded"] <= fw + doc["events"]["in_flight"] \
        + lost["begin_without_end"], (fw, lost, doc["events"])
    for e in folded:
        assert e["waiter"]["tgid"] is None and e["waiter"]["comm"] == "fio", e
        # a named holder folds with its waiter; none named (no owner, readers) stays 0
        assert e["holder"]["pid"] is None or (e["holder"]["pid"] == 0 and e["holder"]["mode"]
                                              in ("unknown", "readers")), e
    roles = [r for r in doc["roles"] if r["waiter"]["comm"] == "fio"]
    assert any(r["threads_folded"] for r in roles), roles
    assert all(r["waiter_threads"] <= 16 for r in roles), roles


def test_threads_across_files_waits_and_pairs_agree(xfs, procs, ilock_bin):
    """Four threads each doing I/O to three files at random: every thread
    waits on each file, in both modes, behind changing holders, so a
    thread's next wait is often on another lock or pair than its last one.
    Each wait is counted once per lock and once per pair, so for every file
    and mode the pairs' waits add up to the lock's, whatever a thread's
    cached slots held."""
    paths = [make_file(os.path.join(xfs.mnt, f"t{i}.dat"), 8 << 20) for i in range(3)]
    st = start_stat(procs, ilock_bin, "-D", xfs.mnt)
    fio = procs.start(["fio", "--name=mix", "--filename=" + ":".join(paths), "--size=24M",
                       "--file_service_type=random", "--rw=randrw", "--rwmixread=60",
                       "--bs=16k", "--numjobs=4", "--thread", "--ioengine=psync",
                       "--time_based", "--runtime=3"])
    fio.communicate(timeout=60)
    assert fio.returncode == 0
    doc = stop_stat(st)

    assert doc["lost"]["wait_map_full"] == 0 and doc["lost"]["edge_map_full"] == 0
    busy = 0
    for path in paths:
        (row,) = locks_for(doc, xfs.majmin, ino_of(path))
        edges = edges_for(doc, xfs.majmin, ino_of(path))
        for mode in ("shared", "exclusive"):
            paired = sum(e["waits"] for e in edges if e["waiter"]["mode"] == mode)
            assert paired == row[mode]["waits"], (path, mode, paired, row[mode])
        assert all(e["waiter"]["tgid"] == fio.pid for e in edges), edges
        busy += row["shared"]["waits"] > 50 and row["exclusive"]["waits"] > 50
    assert busy == 3, doc["locks"]


def test_spinlock_waits_between_do_not_hide_ours(xfs, procs, ilock_bin):
    """The seed workload in small: most contention events are spinlock
    waits (many on the rwsem's own wait_lock), which contention_end skips
    by the spinlock this CPU is waiting for. Were one of our rwsem waits
    taken for such a spinlock, its end would be skipped: the wait would
    never be counted, and the thread's next begin would count it lost."""
    path = make_file(os.path.join(xfs.mnt, "seed.dat"), 32 << 20)
    st = start_stat(procs, ilock_bin, "-D", xfs.mnt)
    run_seed_fio(procs, path, 32, 3)
    doc = stop_stat(st)

    ev, lost = doc["events"], doc["lost"]
    # the test means something only if spinlock waits came between ours
    assert ev["rwsem_waits"] > 1000, ev
    assert ev["contention_begin"] > 2 * ev["rwsem_waits"], ev
    assert lost["begin_without_end"] == 0 and lost["end_without_begin"] == 0, lost
    assert ev["inode_lock_waits_begun"] == ev["inode_lock_waits"] + ev["in_flight"], ev
    counted = sum(l[m]["waits"] for l in doc["locks"] for m in ("shared", "exclusive"))
    assert counted == ev["inode_lock_waits"], (doc["locks"], ev)


def test_starting_under_load_loses_no_wait(xfs, procs, ilock_bin):
    """ilock attaches contention_end before contention_begin: a wait caught
    between the two attaches began before tracing (end_without_begin), and
    none begun under ilock goes unseen to end. The other order left such
    waits pending, for the thread's next begin to count as lost
    (begin_without_end): 13 in one start of six under the seed workload."""
    path = make_file(os.path.join(xfs.mnt, "seed.dat"), 32 << 20)
    fio = procs.start(seed_fio(path, 32, 60), stdout=subprocess.DEVNULL)
    time.sleep(1)
    before = 0
    for _ in range(8):
        r = subprocess.run([ilock_bin, "stat", "-d", "0.5", "-j", "-D", xfs.mnt],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert doc["events"]["inode_lock_waits"] > 100, doc["events"]
        assert doc["lost"]["begin_without_end"] == 0, doc["lost"]
        before += doc["lost"]["end_without_begin"]
    # the starts did catch waits under way
    assert before > 0
    fio.kill()


def generation(path):
    """The inode's i_generation, as the kernel reports it (FS_IOC_GETVERSION)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        buf = fcntl.ioctl(fd, 0x80087601, b"\0" * 8)  # _IOR('v', 1, long)
    finally:
        os.close(fd)
    return struct.unpack("<q", buf)[0] & 0xffffffff


def test_reused_inode_number_is_another_file(ext4, procs, helpers_dir, ilock_bin, tmp_path):
    """ext4 gives a freed inode number to the next file created. The two
    files are told apart by i_generation: a row each, with its own path,
    in stat and in a recording read back, not the first file's path on
    the second file's waits."""
    rec = str(tmp_path / "gens.ilock")
    st = start_stat(procs, ilock_bin, "-D", ext4.mnt)
    r = start_record(ilock_bin, rec, "-D", ext4.mnt, "-i", "1")
    ino = None
    for name, waits in (("first", 1), ("second", 2)):
        path = make_file(os.path.join(ext4.mnt, name), 1 << 20)
        if ino is None:
            ino = ino_of(path)
        assert ino_of(path) == ino, "ext4 did not hand the freed inode number out again"
        for _ in range(waits):
            holder, _, htid = hold(procs, helpers_dir, path, hold_ms=300)
            writer = procs.start([lockhold(helpers_dir), "pwrite", path, 65536, 4096, 1])
            writer.communicate(timeout=20)
            finish(holder)
        if name == "first":
            os.unlink(path)
            os.sync()
        else:
            second = path
    time.sleep(1.5)  # a whole interval of the recording after the last wait
    doc = stop_stat(st)
    stop_record(r)

    rows = locks_for(doc, ext4.majmin, ino)
    assert len(rows) == 2, rows
    by_path = {os.path.basename(x["path"] or ""): x for x in rows}
    assert set(by_path) == {"first", "second"}, rows
    assert by_path["first"]["exclusive"]["waits"] == 1, rows
    assert by_path["second"]["exclusive"]["waits"] == 2, rows
    assert by_path["first"]["gen"] != by_path["second"]["gen"], rows
    assert {x["path_note"] for x in rows} == {"inode number reused"}, rows
    assert by_path["second"]["gen"] == generation(second), rows
    # the pairs follow their own file
    gens = {x["gen"]: os.path.basename(x["path"]) for x in rows}
    waits = {"first": 0, "second": 0}
    for e in edges_for(doc, ext4.majmin, ino):
        waits[gens[e["gen"]]] += e["waits"]
    assert waits == {"first": 1, "second": 2}, edges_for(doc, ext4.majmin, ino)

    rep = subprocess.run([ilock_bin, "report", rec, "-j"], capture_output=True, text=True,
                         timeout=60)
    assert rep.returncode == 0, rep.stderr
    rrows = locks_for(json.loads(rep.stdout), ext4.majmin, ino)
    assert sorted((os.path.basename(x["path"]), x["gen"], x["exclusive"]["waits"]) for x in rrows) \
        == sorted((n, x["gen"], x["exclusive"]["waits"]) for n, x in by_path.items()), rrows


def titled(title, linger_ms=20000):
    return dict(os.environ, LOCKHOLD_TITLE=title, LOCKHOLD_LINGER_MS=str(linger_ms))


def test_process_titles_name_the_threads(xfs, procs, helpers_dir, ilock_bin):
    """Processes of one comm that set titles, as PostgreSQL's do, are told
    apart by them: the legend in text, "title" in JSON; an untitled one has
    none. The holder has exited by the end: its title was read while it ran."""
    path = make_file(os.path.join(xfs.mnt, "titles.dat"), 1 << 20)
    for fmt in ("text", "json"):
        cmd = [ilock_bin, "stat", "-D", xfs.mnt] + (["-j"] if fmt == "json" else [])
        st = procs.start(cmd, stderr=subprocess.PIPE)
        wait_line(st, "ilock: tracing", 30, stream=st.stderr)
        holder = procs.start([lockhold(helpers_dir), "write", path, 0, 4096, 400],
                             env=titled("lockhold: checkpointer", linger_ms=1500))
        m = re.fullmatch(r"HOLDING pid=(\d+) tid=(\d+) t=(\d+)", wait_line(holder, "HOLDING ", 10))
        htid = int(m.group(2))
        reader = procs.start([lockhold(helpers_dir), "read", path, 0, 4096, 1],
                             env=titled("lockhold: alice shop [local] SELECT"))
        plain = procs.start([lockhold(helpers_dir), "read", path, 0, 4096, 1],
                            env=dict(os.environ, LOCKHOLD_LINGER_MS="20000"))
        wait_line(holder, "RELEASED ", 15)
        for r in (reader, plain):
            wait_line(r, "{", 15)  # its reads are done; it lingers
        # the readers still run when stat reads at its end; the holder has gone
        assert holder.wait(timeout=15) == 0
        st.send_signal(signal.SIGINT)
        out, err = st.communicate(timeout=30)
        assert st.returncode == 0, err
        for p in (reader, plain):
            p.kill()
            p.wait(timeout=10)
        if fmt == "text":
            legend = out.split("\nPROCESS TITLES ", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
            assert legend[0].split(None, 1) == [f"lockhold[{htid}]", "lockhold: checkpointer"]
            assert [l.split(None, 1)[1] for l in legend] == [
                "lockhold: checkpointer", "lockhold: alice shop [local] SELECT"], out
            # by command, the titles' roles: the client's user and database, not what it did
            assert re.search(r"\n  lockhold: checkpointer buffered-write EXCL\s+->  lockhold: alice "
                             r"shop buffered-read SHARED\s+1 wait ", out), out
            assert re.search(r"\n  lockhold: checkpointer buffered-write EXCL\s+->  lockhold "
                             r"buffered-read SHARED\s+1 wait ", out), out
        else:
            edges = edges_for(json.loads(out), xfs.majmin, ino_of(path))
            titles = {e["waiter"]["pid"]: e["waiter"]["title"] for e in edges}
            assert sorted(titles.values(), key=str) == [None, "lockhold: alice shop [local] SELECT"]
            assert {e["holder"]["title"] for e in edges} == {"lockhold: checkpointer"}
            roles = [(r["holder"]["role"], r["waiter"]["role"])
                     for r in json.loads(out)["roles"] if r["ino"] == ino_of(path)]
            assert sorted(roles, key=str) == [("lockhold: checkpointer", "lockhold: alice shop"),
                                              ("lockhold: checkpointer", None)]
            assert all(e["holder"]["pid"] == htid for e in edges)


def test_renamed_and_moved_files_are_named_as_they_are_now(xfs, procs, helpers_dir, ilock_bin):
    """A file renamed after its waits (PostgreSQL recycles WAL segments so)
    is shown by its name now, said renamed; one moved to another directory
    keeps the first path, said moved or deleted; one left alone is as it was."""
    wal = os.path.join(xfs.mnt, "pg_wal")
    os.mkdir(wal)
    os.mkdir(os.path.join(xfs.mnt, "elsewhere"))
    names = {k: make_file(os.path.join(wal, k), 1 << 20) for k in ("seg03", "moved", "kept")}
    st = procs.start([ilock_bin, "stat", "-j", "-D", xfs.mnt], stderr=subprocess.PIPE)
    wait_line(st, "ilock: tracing", 30, stream=st.stderr)
    for path in names.values():
        holder, _, _ = hold(procs, helpers_dir, path, hold_ms=150)
        procs.start([lockhold(helpers_dir), "read", path, 0, 4096, 1]).communicate(timeout=20)
        finish(holder)
    inos = {k: ino_of(p) for k, p in names.items()}
    os.rename(names["seg03"], os.path.join(wal, "seg12"))
    os.rename(names["moved"], os.path.join(xfs.mnt, "elsewhere", "moved"))
    doc = stop_stat(st)
    locks = {l["ino"]: l for l in doc["locks"] if l["dev"] == xfs.majmin and l["class"] == "i_rwsem"}
    assert locks[inos["seg03"]]["path"] == os.path.join(wal, "seg12"), locks
    assert locks[inos["seg03"]]["path_note"] == "renamed"
    assert locks[inos["moved"]]["path"] == os.path.join(wal, "moved")
    assert locks[inos["moved"]]["path_note"] == "moved or deleted"
    assert locks[inos["kept"]]["path"] == names["kept"] and locks[inos["kept"]]["path_note"] is None
