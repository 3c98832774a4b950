"""ilocktop in a real terminal (tmux) and in batch mode, on a real XFS.

A fio mixed read/write job on one file of a loop-mounted XFS makes buffered
readers queue (IOLOCK shared) behind writers; a second, lightly contended
file on the same filesystem (contend_many) competes for the top row.
The screen is read back with `tmux capture-pane -p`; keys go in with
`tmux send-keys`. Every tmux session is ours by name and killed at teardown.
"""

import os
import re
import signal
import subprocess
import time

import pytest

from util import bpf_ids_of, loaded_prog_ids, make_file, seed_fio, wait_line

SCREEN_TIMEOUT = 20


def _tmux_term():
    for t in ("tmux-256color", "screen-256color", "screen"):
        if subprocess.run(["infocmp", t], capture_output=True).returncode == 0:
            return t
    return "screen"


TMUX_TERM = _tmux_term()


def _tmux(*args, check=True):
    r = subprocess.run(["tmux", *args], capture_output=True, text=True, timeout=10)
    if check and r.returncode != 0:
        raise RuntimeError(f"tmux {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


class Term:
    """A shell in a detached 160x50 tmux session."""

    def __init__(self, name):
        self.name = name
        # a plain shell with a fixed prompt, no rc files: nothing but us in it;
        # TERM as tmux emulates it, so curses decodes the keys tmux sends
        args = ["new-session", "-d", "-s", name, "-x", "160", "-y", "50",
                "env", "PS1=$ ", f"TERM={TMUX_TERM}", "bash", "--norc", "--noprofile"]
        # The previous test's kill-session ends the server when it was the
        # last session; a new session asked for while it exits gets "server
        # exited unexpectedly" (seen once in CI). A new server then starts.
        for attempt in range(5):
            r = subprocess.run(["tmux", *args], capture_output=True, text=True, timeout=10)
            if r.returncode == 0:
                return
            if "server exited" not in r.stderr and "lost server" not in r.stderr:
                break
            time.sleep(0.2 * (attempt + 1))
        raise RuntimeError(f"tmux {' '.join(args)}: {r.stderr.strip()}")

    def keys(self, *keys):
        _tmux("send-keys", "-t", self.name, *keys)

    def line(self, text):
        self.keys("-l", text)
        self.keys("Enter")

    def screen(self):
        return _tmux("capture-pane", "-p", "-t", self.name)

    def wait(self, pred, what, timeout=SCREEN_TIMEOUT):
        deadline = time.monotonic() + timeout
        s = ""
        while time.monotonic() < deadline:
            s = self.screen()
            if pred(s):
                return s
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}; screen:\n{s}")

    def wait_re(self, pattern, timeout=SCREEN_TIMEOUT):
        rx = re.compile(pattern, re.M)
        return self.wait(lambda s: rx.search(s), repr(pattern), timeout)

    def pane_pid(self):
        return int(_tmux("display-message", "-p", "-t", self.name, "#{pane_pid}").strip())

    def flags(self):
        """Is the pane on the alternate screen; is its cursor shown (tmux 1/0)."""
        return _tmux("display-message", "-p", "-t", self.name,
                     "#{alternate_on} #{cursor_flag}").split()

    def kill(self):
        _tmux("kill-session", "-t", self.name, check=False)


@pytest.fixture
def term(request):
    made = []

    def make():
        t = Term(f"ilocktop-test-{os.getpid()}-{len(made)}-{request.node.name[:20]}")
        made.append(t)
        return t

    yield make
    for t in made:
        t.kill()


@pytest.fixture
def ilocktop_bin(ilock_bin):
    p = os.path.join(os.path.dirname(ilock_bin), "ilocktop")
    assert os.path.islink(p) or os.access(p, os.X_OK), f"{p} missing: run make"
    return p


@pytest.fixture
def workload(fs_factory, procs, helpers_dir):
    """The hot file under fio, a lukewarm one under contend_many; returns
    (fs, hot path, hot inode number)."""
    fs = fs_factory("xfs")
    hot = make_file(os.path.join(fs.mnt, "hot.dat"), 32 << 20)
    procs.start(seed_fio(hot, 32, 120, jobs=6, name="hot") + ["--output=/dev/null"])
    # 100 short waits a second: always there, never the worst
    light = procs.start([os.path.join(helpers_dir, "contend_many"),
                         os.path.join(fs.mnt, "light"), "1", "120", "1", "100"])
    wait_line(light, "READY ", timeout=30)
    return fs, hot, os.stat(hot).st_ino


FOOTERS = ("q quit", "Esc/Enter back", "filter (", "(")


def _table_rows(screen):
    """The column header and the table rows under it (not the help line,
    the prompt, or notes such as "(12 more rows ...)")."""
    lines = screen.splitlines()
    for i, l in enumerate(lines):
        if l.startswith("PATH "):
            return lines[i], [r for r in lines[i + 1:]
                              if r.strip() and not r.strip().startswith(FOOTERS)]
    return None, []


def _col(header, row, title):
    """The value in a right-aligned column, found by where its title ends."""
    m = re.search(re.escape(title) + r"\*?", header)
    assert m, f"no column {title!r} in {header!r}"
    end = m.end()
    return row[:end].split()[-1]


def _start(term, ilocktop_bin, fs, extra=""):
    t = term()
    t.line("S=$(stty -g)")
    t.line(f"{ilocktop_bin} -D {fs.mnt} {extra}; echo EXIT=$?")
    return t


def test_screen_top_row_sort_detail_quit(term, workload, ilocktop_bin):
    fs, hot, ino = workload
    t = _start(term, ilocktop_bin, fs)
    # the fio file is the top row, with shared waits
    s = t.wait(lambda s: (_table_rows(s)[1] or [""])[0].startswith(hot), "hot file on top")
    assert "sort: wait time" in s
    header, rows = _table_rows(s)
    assert "WAIT s/s*" in header
    assert re.search(rf"\b7:\d+:{ino}\b", rows[0]) or f":{ino} " in rows[0], rows[0]
    assert "IOLOCK" in rows[0]
    assert float(_col(header, rows[0], "SH/s").rstrip("kM")) > 0, rows[0]
    # fio's random 16 KiB blocks of a 32 MiB file rarely meet: most of the
    # wait time is between disjoint byte ranges (the range-lock headroom)
    disj = _col(header, rows[0], "DISJ")
    assert re.fullmatch(r"\d+%", disj) and int(disj[:-1]) >= 50, rows[0]
    assert "ilocktop  host" in s and "probes:" in s and "lost events" in s.lower()

    # s: the sort key moves to the next one, and the header marks it
    t.keys("s")
    s = t.wait(lambda s: re.search(r"^sort: waits\b", s, re.M) and
               "SH/s*" in (_table_rows(s)[0] or ""), "sorted by waits")
    header, _ = _table_rows(s)
    assert "EX/s*" in header and "WAIT s/s*" not in header
    t.keys("s")
    # each wait takes the whole of a repaint: the sort line and the header it marks
    t.wait(lambda s: re.search(r"^sort: max wait\b", s, re.M) and
           "MAX*" in (_table_rows(s)[0] or ""), "sorted by max wait")
    t.keys("S", "S")
    t.wait(lambda s: re.search(r"^sort: wait time\b", s, re.M) and
           "WAIT s/s*" in (_table_rows(s)[0] or ""), "sorted by wait time")

    # Enter on the top row: that inode's histograms
    t.wait(lambda s: (_table_rows(s)[1] or [""])[0].startswith(hot), "hot file on top again")
    t.keys("Home", "Enter")
    # the whole detail screen, down to its help line: a capture taken while
    # the terminal redraws can hold the top of the detail over the table
    s = t.wait(lambda s: re.search(r"^WAIT HISTOGRAM", s, re.M) and
               re.search(r"^Esc/Enter back", s, re.M), "the detail view, drawn")
    assert hot in s and f"ino {ino} " in s
    assert re.search(r"^\s+wait\s+shared\s+exclusive", s, re.M)
    assert re.search(r"\|\*+\s*\|", s), "no histogram bars"
    # who waits for whom: by command first, then thread by thread
    assert "BY COMMAND on this inode" in s
    assert re.search(r"^\s+fio buffered-(read|write) \S+\s+-> fio buffered-(read|write) \S+", s, re.M)
    # the per-thread pairs come below: page down until their heading and rows have shown
    thread_row = re.compile(r"^\s+(readers, )?fio\[\d+\].*->\s+fio\[\d+\]", re.M)
    seen_heading = seen_row = False
    for _ in range(5):
        seen_heading |= "HOLDER -> WAITER on this inode, by thread" in s
        seen_row |= seen_heading and bool(thread_row.search(s.split("by thread", 1)[-1]))
        if seen_row:
            break
        t.keys("NPage")
        time.sleep(0.3)
        s = t.screen()
    assert seen_heading and seen_row, s
    # the end of the detail: the kernel stacks behind this inode's waits
    t.keys("End")
    t.wait(lambda s: re.search(r"^WAITER STACKS since start", s, re.M) and
           "HOLDER STACKS since start" in s and
           re.search(r"^\s+\S+ \S+\s+[\d,]+ waits  \S+", s, re.M), "both stack lists, with a stack")
    t.keys("Escape")
    t.wait(lambda s: _table_rows(s)[0] is not None, "back to the table")

    # q: exit 0, the terminal as it was
    t.keys("q")
    s = t.wait_re(r"^EXIT=\d+")
    assert "EXIT=0" in s
    t.line('[ "$(stty -g)" = "$S" ] && echo STTY-SAME; tput cols; echo ALIVE-$((6*7))')
    s = t.wait_re(r"^ALIVE-42$")
    assert "STTY-SAME" in s
    assert re.search(r"^160$", s, re.M)


def test_screen_keys_filter_cumulative_pause_resize(term, workload, ilocktop_bin):
    fs, hot, ino = workload
    t = _start(term, ilocktop_bin, fs)
    t.wait(lambda s: any(r.startswith(hot) for r in _table_rows(s)[1]), "hot file shown")

    # c: totals since start
    t.keys("c")
    t.wait_re(r"showing: totals since start")
    # the header may be caught half repainted: wait for the whole of it
    t.wait(lambda s: "SHARED" in (_table_rows(s)[0] or "") and "WAITED" in (_table_rows(s)[0] or ""),
           "cumulative header")
    t.keys("c")
    t.wait_re(r"showing: rates over the last")

    # f: only rows whose path (or a holder/waiter comm) has the text
    t.keys("f")
    t.wait_re(r"^filter \(path, comm or title")
    t.keys("-l", "light/")
    t.keys("Enter")
    s = t.wait_re(r'filter: "light/"')
    s = t.wait(lambda s: _table_rows(s)[1] and
               all("/light/" in r for r in _table_rows(s)[1]), "only the light file")
    assert not any(r.startswith(hot) for r in _table_rows(s)[1])
    t.keys("Escape")  # clears the filter
    t.wait(lambda s: 'filter: "' not in s and any(r.startswith(hot) for r in _table_rows(s)[1]),
           "filter cleared")

    # p: the screen freezes (uptime stops) until p again
    t.keys("p")
    s1 = t.wait_re(r"\[PAUSED\]")
    up1 = re.search(r"up ([\d.]+ s|\S+)", s1).group(1)
    time.sleep(2.2)
    s2 = t.screen()
    # keys still redraw while paused, but no new interval comes in
    assert "[PAUSED]" in s2
    t.keys("p")
    t.wait(lambda s: "[PAUSED]" not in s and re.search(r"up ([\d.]+ s|\S+)", s).group(1) != up1,
           "unpaused")

    # ?: the help screen over the table; any key brings the table back
    t.keys("?")
    # the screen may be caught half repainted: wait for the help's columns too
    s = t.wait(lambda s: re.search(r"^ilocktop: keys and columns", s, re.M) and "DISJ " in s,
               "help screen")
    assert not _table_rows(s)[0]
    t.keys("x")
    t.wait(lambda s: "ilocktop: keys" not in s and any(r.startswith(hot) for r in _table_rows(s)[1]),
           "table after help")

    # on a small screen the help scrolls down to its last line, and back
    _tmux("resize-window", "-t", t.name, "-x", "80", "-y", "24")
    t.keys("?")
    t.wait(lambda s: re.search(r"^ilocktop: keys and columns", s, re.M) and
           "PgDn scroll" in s, "help on a small screen")
    t.keys("NPage")
    t.keys("NPage")
    s = t.wait(lambda s: "LOST EVENTS   counts lost" in s, "the help's last line")
    assert "ilocktop: keys and columns" not in s
    t.keys("x")
    t.wait(lambda s: "ilocktop: keys" not in s and "LOST EVENTS   counts" not in s,
           "table after the help")
    _tmux("resize-window", "-t", t.name, "-x", "160", "-y", "50")

    # resize: redrawn at the new width, narrower layout
    _tmux("resize-window", "-t", t.name, "-x", "90", "-y", "30")
    s = t.wait(lambda s: (_table_rows(s)[0] or "").startswith("PATH") and
               "DEV:INO" not in _table_rows(s)[0], "narrow layout")
    assert all(len(l) <= 90 for l in s.splitlines())
    _tmux("resize-window", "-t", t.name, "-x", "160", "-y", "50")
    t.wait(lambda s: "DEV:INO" in (_table_rows(s)[0] or ""), "wide layout again")

    t.keys("q")
    s = t.wait_re(r"^EXIT=\d+")
    assert "EXIT=0" in s


def _child_of(pid):
    """Our shell's child (ilocktop): read from /proc, never by name."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = [int(k) for k in f.read().split()]
        if kids:
            return kids[0]
        time.sleep(0.1)
    raise AssertionError(f"no child of {pid}")


def _writes(pid):
    """write(2)-family calls the process has made (/proc/PID/io syscw)."""
    with open(f"/proc/{pid}/io") as f:
        return int(re.search(r"^syscw: (\d+)", f.read(), re.M).group(1))


def test_screen_frame_goes_out_in_one_write(term, workload, ilocktop_bin):
    # ncurses left as newterm() sets it up flushes after every cursor move:
    # a frame of changing numbers went out in dozens of writes, each waking
    # the terminal (and, over ssh, a packet each)
    fs, hot, ino = workload
    t = _start(term, ilocktop_bin, fs, "-i 0.5")
    t.wait(lambda s: any(r.startswith(hot) for r in _table_rows(s)[1]), "hot file shown")
    pid = _child_of(t.pane_pid())
    w0, s0 = _writes(pid), t.screen()
    time.sleep(5)
    w1, s1 = _writes(pid), t.screen()
    assert s1 != s0, "the screen did not change: nothing to count"
    # 10 frames at -i 0.5; a long frame may take two writes of the buffer
    assert w1 - w0 <= 30, f"{w1 - w0} writes in 5 s at -i 0.5"
    t.keys("q")
    assert "EXIT=0" in t.wait_re(r"^EXIT=\d+")


@pytest.mark.parametrize("how", ["SIGTERM", "Ctrl-C", "SIGHUP", "Ctrl-\\"])
def test_screen_signal_restores_terminal(term, workload, ilocktop_bin, how):
    fs, hot, ino = workload
    t = _start(term, ilocktop_bin, fs)
    t.wait(lambda s: _table_rows(s)[0] is not None, "the table")
    pid = _child_of(t.pane_pid())
    with open(f"/proc/{pid}/comm") as f:
        assert f.read().strip() == "ilocktop"
    if how.startswith("SIG"):
        os.kill(pid, getattr(signal, how))
    elif how == "Ctrl-C":
        t.keys("C-c")  # SIGINT from the terminal, as a user's Ctrl-C
    else:
        t.keys("C-\\")  # SIGQUIT: its default action left raw mode and the alternate screen
    s = t.wait_re(r"^EXIT=\d+")
    assert "EXIT=0" in s
    # back on the normal screen: what it said while the probes loaded, not a blank wait
    assert "ilocktop: loading and attaching the probes" in s
    t.line('[ "$(stty -g)" = "$S" ] && echo STTY-SAME; echo ALIVE-$((6*7))')
    s = t.wait_re(r"^ALIVE-42$")
    assert "STTY-SAME" in s
    assert t.flags() == ["0", "1"], "left on the alternate screen, or the cursor hidden"
    # the probes went with it: nothing of ours is left attached
    assert not os.path.exists(f"/proc/{pid}")


def test_screen_map_read_failure_restores_terminal(term, workload, ilocktop_bin):
    # the BPF side failing after the screen is up: a real read error path,
    # triggered by the sampler's fault-injection hook after two intervals
    fs, hot, ino = workload
    t = term()
    t.line("S=$(stty -g)")
    t.line(f"ILOCK_TEST_FAIL_READ_AFTER=2 {ilocktop_bin} -D {fs.mnt}; echo EXIT=$?")
    s = t.wait_re(r"^EXIT=\d+")
    assert "EXIT=1" in s
    assert re.search(r"stopped: reading the BPF maps failed: Input/output error", s), s
    assert "PATH " not in s, "the screen was not left"
    t.line('[ "$(stty -g)" = "$S" ] && echo STTY-SAME; echo ALIVE-$((6*7))')
    s = t.wait_re(r"^ALIVE-42$")
    assert "STTY-SAME" in s


def test_batch_three_tables(workload, ilock_bin):
    fs, hot, ino = workload
    # `ilock top` is the same command; stdout is a pipe, so batch anyway
    r = subprocess.run([ilock_bin, "top", "-b", "-n", "3", "-D", fs.mnt], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    tables = r.stdout.split("--- interval ")[1:]
    assert len(tables) == 3, r.stdout
    for n, tab in enumerate(tables, 1):
        assert tab.startswith(f"{n} ---")
        header, rows = _table_rows(tab)
        assert header and "WAIT s/s*" in header
        assert any(row.startswith(hot) and f":{ino} " in row for row in rows), tab
    # plain text for logs: no escape sequences
    assert "\x1b" not in r.stdout


def test_batch_not_a_tty_and_rows(workload, ilocktop_bin):
    fs, hot, ino = workload
    # no -b, stdout a pipe: batch; --rows 1 keeps one row per table
    r = subprocess.run([ilocktop_bin, "-n", "2", "-i", "0.5", "--rows", "1", "-D", fs.mnt],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    tables = r.stdout.split("--- interval ")[1:]
    assert len(tables) == 2
    for tab in tables:
        assert len(_table_rows(tab)[1]) <= 2  # the row, maybe "(N more rows...)"


def test_batch_closed_pipe_is_quiet_a_full_disk_is_not(ilocktop_bin):
    """ilocktop -b | head ends quietly (exit 0, nothing on stderr); a write
    that fails otherwise (/dev/full) exits 1 with the reason, said once."""
    r = subprocess.run(f"{ilocktop_bin} -b -i 0.3 | head -1; echo \"rc=${{PIPESTATUS[0]}}\"",
                       shell=True, executable="/bin/bash", capture_output=True, text=True,
                       timeout=60)
    assert r.stdout.splitlines() == ["--- interval 1 ---", "rc=0"], (r.stdout, r.stderr)
    assert r.stderr == "", r.stderr
    with open("/dev/full", "w") as full:
        r = subprocess.run([ilocktop_bin, "-b", "-i", "0.3", "-n", "3"], stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=60)
    assert r.returncode == 1
    assert r.stderr == "ilocktop: writing the output failed: No space left on device\n", r.stderr


def test_screen_refuses_what_only_batch_takes(term, ilocktop_bin):
    """In a real terminal: -n (batch only) and a TERM that cannot move the
    cursor are refused on one line before the screen is taken."""
    t = term()
    t.line(f"{ilocktop_bin} -n 2; echo EXIT=$?")
    s = t.wait_re(r"^EXIT=\d+")
    assert "EXIT=2" in s and "ilocktop: -n: the screen runs until q" in s, s
    t.line(f"TERM=dumb {ilocktop_bin}; echo EXIT2=$?")
    s = t.wait_re(r"^EXIT2=\d+")
    assert "EXIT2=1" in s and "cannot use terminal type 'dumb'" in s, s


@pytest.mark.parametrize("args,reason", [
    (["--bogus"], "unknown option --bogus"),
    (["-i", "0"], "invalid value '0' for -i"),
    (["-o", "size"], "-o size"),
    (["-n", "x"], "invalid value 'x'"),
    (["--rows", "-1"], "invalid value '-1'"),
    (["-j"], "-j: no JSON here"),
    (["-d", "5"], "-d: ilocktop runs until q"),
    (["extra"], "unexpected argument 'extra'"),
    (["--renew", "5"], "invalid value '5' for --renew: seconds, 0 (never) or 10 to 86400"),
])
def test_bad_flags_exit_2_before_screen(ilocktop_bin, args, reason):
    r = subprocess.run([ilocktop_bin, *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    first = r.stderr.splitlines()[0]
    assert first.startswith("ilocktop: ") and reason in first, r.stderr
    assert "usage: ilocktop" in r.stderr
    assert r.stdout == ""


def test_unknown_terminal_fails_before_tracing(term, ilocktop_bin):
    t = term()
    t.line(f"TERM=no-such-terminal {ilocktop_bin}; echo EXIT=$?")
    s = t.wait_re(r"^EXIT=\d+")
    assert "EXIT=1" in s
    assert "cannot use terminal type 'no-such-terminal'" in s and "-b" in s, s


def test_not_root_fails_before_screen(term, ilocktop_bin):
    # in a real terminal: the error is readable and the screen never taken
    t = term()
    t.line("S=$(stty -g)")
    t.line(f"setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "
           f"{ilocktop_bin}; echo EXIT=$?")
    s = t.wait_re(r"^EXIT=\d+")
    assert "EXIT=1" in s
    assert re.search(r"needs root", s), s
    t.line('[ "$(stty -g)" = "$S" ] && echo STTY-SAME')
    t.wait_re(r"^STTY-SAME$")


def test_screen_detail_names_titled_processes(term, fs_factory, procs, helpers_dir, ilocktop_bin):
    """Processes that set titles, as PostgreSQL's do, are named by them under
    the detail view's pairs; an untitled one is not listed."""
    fs = fs_factory("xfs")
    path = make_file(os.path.join(fs.mnt, "titled.dat"), 1 << 20)
    lockhold = os.path.join(helpers_dir, "lockhold")
    env = lambda title: dict(os.environ, LOCKHOLD_TITLE=title, LOCKHOLD_LINGER_MS="60000")
    t = _start(term, ilocktop_bin, fs)
    t.wait(lambda s: _table_rows(s)[0] is not None, "the table")
    holder = procs.start([lockhold, "write", path, 0, 4096, 300], env=env("lockhold: checkpointer"))
    htid = int(re.search(r" tid=(\d+)", wait_line(holder, "HOLDING ", 10)).group(1))
    reader = procs.start([lockhold, "read", path, 0, 4096, 1],
                         env=env("lockhold: alice shop [local] SELECT"))
    plain = procs.start([lockhold, "read", path, 0, 4096, 1],
                        env=dict(os.environ, LOCKHOLD_LINGER_MS="60000"))
    for r in (reader, plain):
        wait_line(r, "{", 15)
    # totals since start: the waits stay in the window however long this takes
    t.keys("c")
    t.wait(lambda s: (_table_rows(s)[1] or [""])[0].startswith(path), "the file's row")
    # the main table's TOP HOLDER: the role, its command dropped to fit the column
    s = t.wait(lambda s: re.search(rf"checkpointer\[{htid}\] excl\s*$",
                                   (_table_rows(s)[1] or [""])[0]), "the holder by its role")
    assert f"lockhold[{htid}]" not in s, s
    # the filter finds the row by a waiter's title, and by nothing else
    t.keys("f")
    t.wait_re(r"^filter \(path, comm or title")
    t.keys("-l", "alice shop")
    t.keys("Enter")
    t.wait(lambda s: 'filter: "alice shop"' in s and
           (_table_rows(s)[1] or [""])[0].startswith(path), "the row by a title")
    t.keys("Escape")  # clears it: the prompt would start from it
    t.wait(lambda s: 'filter: "' not in s, "filter cleared")
    t.keys("f")
    t.wait_re(r"^filter \(path, comm or title")
    t.keys("-l", "bob shop")
    t.keys("Enter")
    t.wait(lambda s: 'filter: "bob shop"' in s and "(no lock matches the filter)" in s,
           "no row for a title nobody has")
    t.keys("Escape")
    t.wait(lambda s: 'filter: "' not in s and (_table_rows(s)[1] or [""])[0].startswith(path),
           "filter cleared")
    t.keys("Home", "Enter")
    # by command: the titles' roles, the client's user and database
    roles = re.compile(r"^\s+lockhold: checkpointer buffered-write EXCL\s+-> lockhold: alice shop "
                       r"buffered-read SHARED", re.M)
    s = t.wait(lambda s: re.search(r"^Esc/Enter back", s, re.M) and roles.search(s),
               "the detail view, by role")
    for _ in range(6):
        if "PROCESS TITLES of these threads" in s and "RANGES of this lock" in s:
            break
        t.keys("NPage")
        time.sleep(0.3)
        s = t.screen()
    legend = s.split("PROCESS TITLES of these threads\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [l.split(None, 1) for l in legend] == [
        [f"lockhold[{htid}]", "lockhold: checkpointer"],
        [legend[1].split()[0], "lockhold: alice shop [local] SELECT"]], s
    t.keys("q")
    assert "EXIT=0" in t.wait_re(r"^EXIT=\d+")


def test_screen_row_follows_a_renamed_file(term, fs_factory, procs, helpers_dir, ilocktop_bin):
    """A file renamed after its waits shows by its name now, said renamed."""
    fs = fs_factory("xfs")
    old = make_file(os.path.join(fs.mnt, "seg03.dat"), 1 << 20)
    new = os.path.join(fs.mnt, "seg12.dat")
    lockhold = os.path.join(helpers_dir, "lockhold")
    t = _start(term, ilocktop_bin, fs)
    t.wait(lambda s: _table_rows(s)[0] is not None, "the table")
    t.keys("c")  # totals since start: the row stays
    holder = procs.start([lockhold, "write", old, 0, 4096, 200])
    wait_line(holder, "HOLDING ", 10)
    procs.start([lockhold, "read", old, 0, 4096, 1]).communicate(timeout=20)
    t.wait(lambda s: (_table_rows(s)[1] or [""])[0].startswith(old), "the row by its first name")
    os.rename(old, new)
    s = t.wait(lambda s: (_table_rows(s)[1] or [""])[0].startswith(new + " (renamed)"),
               "the row by its name now")
    assert old not in s
    t.keys("q")
    assert "EXIT=0" in t.wait_re(r"^EXIT=\d+")


def test_screen_warns_of_a_full_table(term, fs_factory, procs, helpers_dir, ilocktop_bin):
    """--max-inodes 64 and waits on 100 files: the pairs table fills, and
    the screen says so on a line of its own, with what to do, before the
    table; q still leaves a working terminal. --renew 0: never fresh tables."""
    fs = fs_factory("xfs")
    t = _start(term, ilocktop_bin, fs, "--max-inodes 64 -i 0.5 --renew 0")
    t.wait(lambda s: "lost events: none" in s, "the first screen")
    # before anything fills, no such line
    assert "table is" not in t.screen().split("sort:")[0]
    cm = procs.start([os.path.join(helpers_dir, "contend_many"),
                      os.path.join(fs.mnt, "many"), "100", "3", "2"])
    s = t.wait(lambda s: "pairs table is full (64 entries): new pairs are lost (edge_map_full); "
                         "restart with a larger --max-inodes" in s, "the full-table line")
    lines = s.splitlines()
    (i,) = [n for n, l in enumerate(lines) if "table is full" in l]
    assert "map_full" in " ".join(lines[:i]), s  # the losses, counted, above it
    assert any(l.startswith("PATH ") for l in lines[i + 1:]), s
    cm.communicate(timeout=60)
    t.keys("q")
    s = t.wait_re(r"^EXIT=\d+")
    assert "EXIT=0" in s


def _lost_since_start(interval):
    """The "since start" total of an interval's lost-events line (0: none)."""
    m = re.search(r"^(?:!! )?(?:LOST EVENTS|lost events): .* since start ([\d,]+):", interval, re.M)
    return int(m.group(1).replace(",", "")) if m else 0


def test_batch_renews_full_tables(fs_factory, procs, helpers_dir, ilocktop_bin):
    """--max-inodes 64 and waits on 100 files fill the tables; with --renew
    10 ilocktop traces on into fresh ones at the first interval 10 s in.
    The old programs are gone by then (no probe left behind), the losses
    so far stay in the since-start figures, the files are rows by path
    again, and nothing is written to stderr."""
    fs = fs_factory("xfs")
    top = procs.start([ilocktop_bin, "-b", "-i", "1", "-n", "16", "--rows", "0",
                       "--max-inodes", "64", "--renew", "10", "-D", fs.mnt],
                      stderr=subprocess.PIPE)
    wait_line(top, "--- interval 1 ---", timeout=60)
    old_ids = bpf_ids_of(top.pid, "prog")
    assert old_ids
    # one pass over 100 files flat out fills both tables; then 5 files a second
    cm = procs.start([os.path.join(helpers_dir, "contend_many"), os.path.join(fs.mnt, "many"),
                      "100", "20", "2", "5"])
    wait_line(cm, "READY ", timeout=30)
    seen = []
    new_ids = None
    for line in top.stdout:
        seen.append(line)
        if new_ids is None and line.startswith("fresh tables "):
            new_ids = bpf_ids_of(top.pid, "prog")
    rest, err = top.communicate(timeout=60)
    out = "".join(seen) + rest
    assert top.returncode == 0, err
    assert err == "", err
    assert new_ids is not None, out
    # the same programs, loaded again; the old ones unloaded, none kept open
    assert len(new_ids) == len(old_ids) and not new_ids & old_ids, (old_ids, new_ids)
    assert not old_ids & loaded_prog_ids()

    tables = out.split("--- interval ")  # [0]: the first interval, its title read above
    renewed = [i for i, t in enumerate(tables) if "\nfresh tables " in t and "(1 so far)" in t]
    assert renewed and renewed[0] > 0, out
    before, after = tables[renewed[0] - 1], tables[renewed[0]]
    # the old tables had filled: the alarm said when fresh ones would come
    assert re.search(r"^!! (locks|pairs) table is .*; fresh tables (in .* \(--renew\)|now)$",
                     before, re.M), before
    m = re.search(r"^fresh tables [\d.]+ s ago \(1 so far\), when the (locks|pairs) table is",
                  after, re.M)
    assert m, after
    # the old tables' last read joins this interval, its locks by path still
    _, rows = _table_rows(after)
    assert rows and all(r.startswith(fs.mnt) or "others" in r.split()[0] for r in rows
                        if not r.startswith("(")), after
    # the losses of the old tables are still counted since start
    assert _lost_since_start(before) > 0, before
    assert _lost_since_start(after) >= _lost_since_start(before), (before, after)
    # the fresh tables have room: the next intervals name the files by path
    later = "".join(tables[renewed[0]:])
    assert re.search(r"^" + re.escape(os.path.join(fs.mnt, "many", "f")) + r"\d+ ", later, re.M), later
    assert procs.stop(cm) == 0  # its 20 s are not needed past this point


def _count(v):
    """A count column's value: 12, 1.2k, 3.4M."""
    mult = {"k": 1e3, "M": 1e6, "G": 1e9}.get(v[-1:], 1)
    return float(v[:-1] if mult != 1 else v) * mult


def _others_shared(screen):
    """The cumulative SHARED waits of the rows of waits kept without their inode."""
    header, rows = _table_rows(screen)
    if not header or "SHARED" not in header:
        return None
    vals = [_count(_col(header, r, "SHARED")) for r in rows if "others" in r.split()[0]]
    return sum(vals) if vals else None


def test_screen_cumulative_view_spans_renewals(term, fs_factory, procs, helpers_dir,
                                               ilocktop_bin):
    """After fresh tables, the cumulative view (c) still counts since start:
    the old tables' waits, those kept without their inode included, stay
    in it, and it says "since start"."""
    fs = fs_factory("xfs")
    t = _start(term, ilocktop_bin, fs, "--max-inodes 64 -i 0.5 --renew 20")
    t.wait(lambda s: "lost events: none" in s, "the first screen")
    t.keys("c")
    t.wait(lambda s: "showing: totals since start" in s, "the cumulative view")
    cm = procs.start([os.path.join(helpers_dir, "contend_many"),
                      os.path.join(fs.mnt, "many"), "100", "35", "2", "5"])
    # the first pass overflows the locks table: waits kept without their inode
    s = t.wait(lambda s: _others_shared(s), "an \"others\" row with waits", timeout=30)
    assert not re.search(r"^fresh tables .* ago", s, re.M), s
    before = _others_shared(s)
    s = t.wait(lambda s: re.search(r"^fresh tables .* ago \(1 so far\), when the", s, re.M),
               "the renewal line", timeout=40)
    # an interval later the view is merged from the old tables and the fresh ones
    time.sleep(1.5)
    s = t.screen()
    assert "showing: totals since start" in s, s
    assert "since the tables were renewed" not in s, s
    after = _others_shared(s)
    assert after is not None and after >= before, (before, after, s)
    # the rates, then the totals again: put together anew, the same way
    t.keys("c")
    t.wait(lambda s: "showing: rates over" in s, "the rates view")
    t.keys("c")
    s = t.wait(lambda s: "showing: totals since start" in s and _others_shared(s),
               "the cumulative view again")
    assert _others_shared(s) >= after, (after, s)
    assert procs.stop(cm) == 0
    t.keys("q")
    s = t.wait_re(r"^EXIT=\d+")
    assert "EXIT=0" in s


_UNIT_NS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def _waiter_stacks_ns(screen):
    """The wait time of the waiter stacks the detail view lists (its end
    on screen), summed; None before they show."""
    if not re.search(r"^WAITER STACKS since start", screen, re.M):
        return None
    tail = screen.split("WAITER STACKS since start", 1)[1]
    got = re.findall(r"^\s+([\d.]+) (ns|us|ms|s)\s+[\d,]+ waits  \S", tail, re.M)
    return sum(float(v) * _UNIT_NS[u] for v, u in got) if got else None


def test_screen_renews_full_tables(term, fs_factory, procs, helpers_dir, ilocktop_bin):
    """The same on the screen: while the fresh tracer loads, nothing is
    written over the screen, and then a line says when and why the
    tables were renewed; the detail view's stacks still count since start;
    q leaves a working terminal."""
    fs = fs_factory("xfs")
    t = _start(term, ilocktop_bin, fs, "--max-inodes 64 -i 0.5 --renew 10")
    t.wait(lambda s: "lost events: none" in s, "the first screen")
    cm = procs.start([os.path.join(helpers_dir, "contend_many"),
                      os.path.join(fs.mnt, "many"), "100", "20", "2", "5"])
    s = t.wait(lambda s: "--renew)" in s, "the alarm with the time to fresh tables")
    assert any(l.startswith("PATH ") for l in s.splitlines()), s
    # the detail view of one file stays open across the renewal, by path
    t.keys("f")
    t.wait_re(r"^filter \(path, comm or title")
    t.keys("-l", "many/f")
    t.keys("Enter")
    t.wait(lambda s: _table_rows(s)[1] and _table_rows(s)[1][0].startswith(fs.mnt), "a file's row")
    t.keys("Enter")
    s = t.wait(lambda s: "WAIT HISTOGRAM" in s, "the detail view")
    many = os.path.join(fs.mnt, "many", "f")
    head = [l for l in s.splitlines() if l.startswith(many)]
    assert head, s
    # its waiter stacks, at the end of the detail, before the renewal
    t.keys("End")
    s = t.wait(lambda s: _waiter_stacks_ns(s), "the waiter stacks")
    renewed = re.compile(r"^fresh tables .* ago \(1 so far\), when the", re.M)
    stacks_before = None if renewed.search(s) else _waiter_stacks_ns(s)
    s = t.wait(lambda s: renewed.search(s), "the renewal line", timeout=40)
    assert "ilocktop:" not in s and "libbpf" not in s, s  # no message over the screen
    lines = s.splitlines()
    assert lines[0].startswith("ilocktop  host "), s
    assert head[0].split()[0] in [l.split()[0] for l in lines if l.strip()], s
    assert "not seen by the path walker" not in s, s
    # the old tracer's stacks are kept: since start, not since the renewal
    t.keys("End")
    s = t.wait(lambda s: _waiter_stacks_ns(s), "the waiter stacks after the renewal")
    if stacks_before is not None:
        assert _waiter_stacks_ns(s) >= stacks_before, (stacks_before, s)
    t.keys("Escape")
    s = t.wait(lambda s: any(l.startswith("PATH ") for l in s.splitlines()), "the table again")
    assert procs.stop(cm) == 0
    t.keys("q")
    s = t.wait_re(r"^EXIT=\d+")
    assert "EXIT=0" in s
    t.line('[ "$(stty -g)" = "$S" ] && echo STTY-SAME')
    t.wait_re(r"^STTY-SAME$")
