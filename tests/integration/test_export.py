"""`ilock export`: the Prometheus / OpenMetrics exporter, end to end.

Real parts only: the real binary tracing real XFS on a loop device, checked
by Debian's promtool and scraped by a real Prometheus server; bad clients
are real sockets on loopback. Every server here listens on 127.0.0.x.
"""

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request

import pytest

from util import bpf_ids_of, loaded_prog_ids, make_file, seed_fio, wait_line

SERVING = "ilock export: serving "
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


# ---------------------------------------------------------------- helpers

class Exporter:
    def __init__(self, proc, port):
        self.proc = proc
        self.port = port

    def request(self, path="/metrics", method="GET", headers=None, timeout=5.0):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            c.request(method, path, headers=headers or {})
            r = c.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            c.close()

    def metrics(self, openmetrics=False, timeout=5.0):
        hdrs = {"Accept": "application/openmetrics-text; version=1.0.0"} if openmetrics else {}
        status, headers, body = self.request(headers=hdrs, timeout=timeout)
        assert status == 200, f"/metrics answered {status}: {body[:200]!r}"
        return body.decode("utf-8")

    def rss_kb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise AssertionError("no VmRSS")


def start_exporter(procs, ilock_bin, *args, interval="1"):
    """Start `ilock export` on a free loopback port; return once /metrics
    has its first collection."""
    p = procs.start([ilock_bin, "export", "--listen", "127.0.0.1:0", "-i", interval, *args],
                    stderr=subprocess.PIPE)
    line = wait_line(p, SERVING, 30, stream=p.stderr)
    m = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", line)
    assert m, line
    ex = Exporter(p, int(m.group(1)))
    deadline = time.monotonic() + 10
    while True:
        status, _, _ = ex.request()
        if status == 200:
            return ex
        assert status == 503 and time.monotonic() < deadline, f"/metrics answered {status}"
        time.sleep(0.1)


def samples(text):
    """[(name, {labels}, value)] of an exposition, comments skipped."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, f"unparsable sample line: {line!r}"
        labels = {k: v for k, v in LABEL.findall(m.group(2) or "")}
        out.append((m.group(1), labels, float(m.group(3))))
    return out


def value(text, name, **labels):
    """The one sample of name whose labels include these; None if absent."""
    found = [v for n, l, v in samples(text)
             if n == name and all(l.get(k) == want for k, want in labels.items())]
    assert len(found) <= 1, f"{name}{labels}: {len(found)} samples"
    return found[0] if found else None


def wait_for(pred, timeout, what, interval=0.25):
    deadline = time.monotonic() + timeout
    while True:
        got = pred()
        if got:
            return got
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def scrape_until(ex, pred, timeout, what):
    """Scrape until pred(text) holds; return that text."""
    texts = []

    def ok():
        texts.append(ex.metrics())
        return pred(texts[-1])
    wait_for(ok, timeout, what)
    return texts[-1]


def lockhold(helpers_dir):
    return os.path.join(helpers_dir, "lockhold")


def hold_and_wait(procs, helpers_dir, path, hold_ms=600):
    """lockhold holds path's i_rwsem exclusive; a reader waits on it, shared."""
    w = procs.start([lockhold(helpers_dir), "write", path, 0, 4096, hold_ms])
    assert wait_line(w, "HOLDING ", 10)
    r = procs.start([lockhold(helpers_dir), "read", path, 8192, 4096, 2],
                    stdout=subprocess.DEVNULL)
    assert r.wait(timeout=20) == 0
    assert w.wait(timeout=20) == 0


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# ---------------------------------------------------------------- arguments

@pytest.mark.parametrize("args,needle", [
    (["--listen", "127.0.0.1"], "expected HOST:PORT"),
    (["--listen", "127.0.0.1:70000"], "not a port number"),
    (["--listen", "no.such.host.invalid:9435"], "--listen no.such.host.invalid:9435"),
    (["--top-inodes", "1001"], "--top-inodes 1001"),
    (["--top-inodes", "x"], "--top-inodes x"),
    (["-i", "0"], "-i 0"),
    (["--max-pairs", "-1"], "--max-pairs -1"),
    (["--http-timeout", "0"], "--http-timeout 0"),
    (["--renew", "5"], "--renew 5"),
    (["--renew", "x"], "--renew x"),
    (["--series-idle", "5"], "--series-idle 5"),
    (["--series-idle", "2592001"], "--series-idle 2592001"),
    (["--fs", "ntfs"], "unknown filesystem"),
    (["--bogus"], "unknown option --bogus"),
    (["extra"], "unexpected argument"),
])
def test_bad_flags_exit_2(ilock_bin, args, needle):
    r = subprocess.run([ilock_bin, "export", *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 2 and needle in lines[0] and lines[1].startswith("usage: ilock export")


def test_port_in_use_fails_before_tracing(ilock_bin):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    try:
        port = s.getsockname()[1]
        t0 = time.monotonic()
        r = subprocess.run([ilock_bin, "export", "--listen", f"127.0.0.1:{port}"],
                           capture_output=True, text=True, timeout=30)
    finally:
        s.close()
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        f"ilock: --listen 127.0.0.1:{port}: cannot listen: Address already in use"]
    assert time.monotonic() - t0 < 5


def test_non_loopback_listen_warns(ilock_bin):
    # 192.0.2.1 (TEST-NET-1) is never ours: we see the warning, then a clean
    # bind failure, and never listen on anything but loopback.
    r = subprocess.run([ilock_bin, "export", "--listen", "192.0.2.1:9435"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1
    assert "not a loopback address" in r.stderr
    assert "cannot listen: Cannot assign requested address" in r.stderr


# ---------------------------------------------------------------- formats

def test_promtool_and_both_formats(xfs, procs, helpers_dir, ilock_bin):
    path = make_file(os.path.join(xfs.mnt, "db.dat"), 1 << 20)
    st = os.stat(path)
    ex = start_exporter(procs, ilock_bin, "-D", xfs.mnt, "--holds=xfs")
    before = ex.metrics()
    hold_and_wait(procs, helpers_dir, path)
    sel = dict(device=xfs.majmin, **{"class": "i_rwsem"}, mode="shared")
    text = scrape_until(ex, lambda t: value(t, "ilock_lock_wait_seconds_count", **sel), 10,
                        "the shared wait")

    # promtool, from Debian's prometheus package, accepts the text format
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr

    # the wait, per device and per inode (the file is the hottest: own series)
    assert value(text, "ilock_lock_wait_seconds_count", fs="xfs", **sel) >= 2
    assert value(text, "ilock_lock_wait_seconds_bucket", le="+Inf", **sel) == \
        value(text, "ilock_lock_wait_seconds_count", **sel)
    ino = f"{xfs.majmin}:{st.st_ino}"
    assert value(text, "ilock_inode_lock_wait_seconds_count", inode=ino, path=path, **sel) >= 2
    # waited behind the writer: holders and waiters by command, never pid
    assert value(text, "ilock_serialised_waits_total", device=xfs.majmin, holder_comm="lockhold",
                 holder_mode="exclusive", waiter_comm="lockhold", waiter_mode="shared") >= 2
    assert not re.search(r'\bpid="', text)
    # XFS hold times and acquisitions; build info; lost counters present
    assert value(text, "ilock_lock_hold_seconds_count", device=xfs.majmin,
                 mode="exclusive", **{"class": "i_rwsem"}) >= 1
    assert value(text, "ilock_lock_acquisitions_total", device=xfs.majmin,
                 mode="exclusive", **{"class": "i_rwsem"}) >= 1
    assert value(text, "ilock_build_info", version=re.search(
        r"ilock (\S+)", subprocess.run([ilock_bin, "--version"], capture_output=True,
                                       text=True).stdout).group(1), kernel=os.uname().release,
                 wait_sampling="off") == 1
    assert value(text, "ilock_lost_events_total", reason="wait_map_full") == 0
    assert value(text, "ilock_bpf_run_seconds_total") > 0

    # counters only grow between scrapes
    prev = {(n, tuple(sorted(l.items()))): v for n, l, v in samples(before)}
    for n, l, v in samples(text):
        k = (n, tuple(sorted(l.items())))
        if (n.endswith("_total") or n.endswith("_count") or n.endswith("_bucket")) and k in prev:
            assert v >= prev[k], f"{n}{l} went down: {prev[k]} -> {v}"

    # OpenMetrics on request: its content type, counter families without
    # _total, an info type, and the # EOF terminator
    status, headers, body = ex.request(headers={
        "Accept": "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"})
    om = body.decode()
    assert status == 200
    assert headers["Content-Type"] == "application/openmetrics-text; version=1.0.0; charset=utf-8"
    assert om.endswith("\n# EOF\n") and om.count("# EOF") == 1
    assert "# TYPE ilock_lost_events counter\n" in om
    assert "# TYPE ilock_build info\n" in om
    assert "# UNIT ilock_lock_wait_seconds seconds\n" in om
    assert not re.search(r"^# TYPE \S+_total ", om, re.M)
    # the text format otherwise
    status, headers, body = ex.request(headers={"Accept": "text/plain"})
    assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert "# EOF" not in body.decode() and "# TYPE ilock_lost_events_total counter\n" in body.decode()
    assert {n for n, _, _ in samples(om)} == {n for n, _, _ in samples(body.decode())}


def test_holds_off_exports_waits_without_holds(xfs, procs, helpers_dir, ilock_bin):
    """--holds=off (the default): the waits and pairs are exported; no hold
    series at all."""
    path = make_file(os.path.join(xfs.mnt, "db.dat"), 1 << 20)
    ex = start_exporter(procs, ilock_bin, "-D", xfs.mnt, "--holds=off")
    hold_and_wait(procs, helpers_dir, path)
    sel = dict(device=xfs.majmin, **{"class": "i_rwsem"}, mode="shared")
    text = scrape_until(ex, lambda t: value(t, "ilock_lock_wait_seconds_count", **sel), 10,
                        "the shared wait")
    assert value(text, "ilock_lock_wait_seconds_count", fs="xfs", **sel) >= 2
    assert value(text, "ilock_serialised_waits_total", device=xfs.majmin, holder_comm="lockhold",
                 holder_mode="exclusive", waiter_comm="lockhold", waiter_mode="shared") >= 2
    names = {n for n, _, _ in samples(text)}
    assert not [n for n in names if n.startswith(("ilock_lock_hold_seconds",
                                                  "ilock_lock_acquisitions"))], names


@pytest.mark.parametrize("ops", ["syscalls", "off"])
def test_range_metrics_and_no_stacks(xfs, procs, helpers_dir, ilock_bin, ops):
    """The holder writes bytes [0, 4K), the reader waits to read [8K, 12K):
    disjoint, which a range lock would have let through. With --ops off
    nobody's range is known. No metric shows a stack, so none is taken,
    though the holder sleeps (where ilock stat samples its stack)."""
    path = make_file(os.path.join(xfs.mnt, "db.dat"), 1 << 20)
    ex = start_exporter(procs, ilock_bin, "-D", xfs.mnt, "--ops", ops)
    hold_and_wait(procs, helpers_dir, path)
    sel = dict(device=xfs.majmin, **{"class": "i_rwsem"})
    want = "disjoint" if ops == "syscalls" else "unknown"
    text = scrape_until(ex, lambda t: value(t, "ilock_range_waits_total", range=want, **sel), 10,
                        f"the {want} waits")
    waits = value(text, "ilock_serialised_waits_total", device=xfs.majmin, holder_comm="lockhold",
                  holder_mode="exclusive", waiter_comm="lockhold", waiter_mode="shared")
    assert waits >= 2
    ranges = {r: value(text, "ilock_range_waits_total", range=r, **sel)
              for r in ("overlapping", "disjoint", "unknown")}
    assert ranges[want] == waits and sum(ranges.values()) == waits, ranges
    secs = value(text, "ilock_range_wait_seconds_total", range=want, **sel)
    assert 0 < secs <= value(text, "ilock_lock_wait_seconds_sum", mode="shared", **sel)
    # by what each side was doing: a buffered write held the readers up (unknown without ops)
    hop, wop = ("buffered-write", "buffered-read") if ops == "syscalls" else ("unknown", "unknown")
    assert value(text, "ilock_serialised_op_waits_total", holder_op=hop, holder_mode="exclusive",
                 waiter_op=wop, waiter_mode="shared", **sel) == waits
    assert value(text, "ilock_serialised_op_wait_seconds_total", holder_op=hop,
                 holder_mode="exclusive", waiter_op=wop, waiter_mode="shared", **sel) == secs
    for ev in ("holder_stacks", "holder_running", "waiter_stacks_reused"):
        assert value(text, "ilock_events_total", event=ev) == 0, ev


def test_http_methods_and_paths(procs, ilock_bin):
    ex = start_exporter(procs, ilock_bin)
    status, headers, body = ex.request("/")
    assert status == 200 and b'href="/metrics"' in body
    status, headers, body = ex.request("/metrics", method="HEAD")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 1000
    for method in ("POST", "PUT", "DELETE", "OPTIONS"):
        status, headers, _ = ex.request("/metrics", method=method)
        assert status == 405 and headers.get("Allow") == "GET, HEAD", method
    for path in ("/metrics/", "/foo", "/metrics.txt", "/../etc/passwd"):
        status, _, _ = ex.request(path)
        assert status == 404, path
    # the answers are counted, and a keep-alive connection serves scrapes in a row
    c = http.client.HTTPConnection("127.0.0.1", ex.port, timeout=5)
    for _ in range(3):
        c.request("GET", "/metrics")
        r = c.getresponse()
        assert r.status == 200 and r.getheader("Connection") != "close"
        r.read()
    c.close()
    text = scrape_until(ex, lambda t: value(t, "ilock_exporter_http_errors_total") >= 8, 5,
                        "the error count")
    assert value(text, "ilock_exporter_scrapes_total", format="text") >= 3


def test_sigterm_stops_serving_and_detaches(procs, ilock_bin):
    ex = start_exporter(procs, ilock_bin)
    ids = bpf_ids_of(ex.proc.pid, "prog")
    assert len(ids) >= 2 and ids <= loaded_prog_ids()
    ex.proc.send_signal(signal.SIGTERM)
    assert ex.proc.wait(timeout=10) == 0
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", ex.port), timeout=2).close()
    wait_for(lambda: not ids & loaded_prog_ids(), 5, "the programs to be released")


# ---------------------------------------------------------------- Prometheus

@pytest.fixture
def prometheus(procs, tmp_path):
    """A real Prometheus server on loopback; start(targets) -> base URL."""
    if shutil.which("prometheus") is None:
        pytest.fail("prometheus not installed (Debian package prometheus; scripts/setup.sh)",
                    pytrace=False)

    def start(target_port, rules=None):
        cfg = tmp_path / "prometheus.yml"
        cfg.write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            + (f"rule_files:\n  - {rules}\n" if rules else "") +
            "scrape_configs:\n  - job_name: ilock\n    scrape_interval: 1s\n"
            "    scrape_timeout: 1s\n    static_configs:\n"
            f"      - targets: ['127.0.0.1:{target_port}']\n")
        port = free_port()
        p = procs.start(["prometheus", f"--config.file={cfg}",
                         f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                         f"--web.listen-address=127.0.0.1:{port}"],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"

        def ready():
            if p.poll() is not None:
                raise AssertionError(f"prometheus exited {p.returncode}")
            try:
                with urllib.request.urlopen(base + "/-/ready", timeout=1) as r:
                    return r.status == 200
            except OSError:
                return False
        wait_for(ready, 30, "prometheus to be ready")
        return base

    return start


def promql(base, query):
    url = base + "/api/v1/query?" + urllib.parse.urlencode({"query": query})
    with urllib.request.urlopen(url, timeout=5) as r:
        doc = json.load(r)
    assert doc["status"] == "success", doc
    return doc["data"]["result"]


RULES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "contrib",
                     "ilock-rules.yml")


def test_contrib_rules_check():
    r = subprocess.run(["promtool", "check", "rules", RULES], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS: 11 rules found" in r.stdout, r.stdout


RULES_TEST = """
rule_files: [RULES]
evaluation_interval: 1m
tests:
  # the exporter dies at 2m: its own series go stale, so only `up` can tell
  - interval: 1m
    input_series:
      - series: 'up{job="ilock", instance="db1:9435"}'
        values: '1 1 0x20'
      - series: 'ilock_exporter_inode_series{instance="db1:9435"}'
        values: '80x30'
      - series: 'ilock_exporter_inode_series_limit{instance="db1:9435"}'
        values: '80x30'
      - series: 'ilock_exporter_pair_series{instance="db1:9435"}'
        values: '3x30'
      - series: 'ilock_exporter_pair_series_limit{instance="db1:9435"}'
        values: '100x30'
    alert_rule_test:
      - eval_time: 4m
        alertname: IlockExporterDown
        exp_alerts: []
      - eval_time: 10m
        alertname: IlockExporterDown
        exp_alerts:
          - exp_labels: {severity: warning, job: ilock, instance: "db1:9435"}
            exp_annotations:
              summary: "db1:9435: ilock export is down or unreachable"
              description: "No inode lock metrics from this host: systemctl status ilock-export."
      - eval_time: 20m
        alertname: IlockSeriesLimitReached
        exp_alerts:
          - exp_labels: {severity: info, instance: "db1:9435"}
            exp_annotations:
              summary: 'db1:9435: new hot inodes or holder/waiter pairs are exported only as "other"'
              description: "ilock top on the host names them. Series that saw no wait for --series-idle (an hour by default) give their places up; a larger --top-inodes / --max-pairs, or restarting ilock export, frees more."
  # room left in both: quiet
  - interval: 1m
    input_series:
      - series: 'ilock_exporter_inode_series{instance="db1:9435"}'
        values: '79x30'
      - series: 'ilock_exporter_inode_series_limit{instance="db1:9435"}'
        values: '80x30'
      - series: 'ilock_exporter_pair_series{instance="db1:9435"}'
        values: '99x30'
      - series: 'ilock_exporter_pair_series_limit{instance="db1:9435"}'
        values: '100x30'
    alert_rule_test:
      - eval_time: 20m
        alertname: IlockSeriesLimitReached
        exp_alerts: []
  # the pairs table fills with threads as they start; the locks table does not
  - interval: 1m
    input_series:
      - series: 'ilock_table_entries{instance="db1:9435", table="pairs"}'
        values: '1000+1000x14 16384x16'
      - series: 'ilock_table_capacity{instance="db1:9435", table="pairs"}'
        values: '16384x30'
      - series: 'ilock_table_entries{instance="db1:9435", table="locks"}'
        values: '16000x30'
      - series: 'ilock_table_capacity{instance="db1:9435", table="locks"}'
        values: '0x30'
    alert_rule_test:
      - eval_time: 20m
        alertname: IlockTableNearlyFull
        exp_alerts: []
      - eval_time: 24m
        alertname: IlockTableNearlyFull
        exp_alerts:
          - exp_labels: {severity: info, instance: "db1:9435", table: pairs}
            exp_annotations:
              summary: "db1:9435: ilock's pairs table is 100% full"
              description: "Once full, new entries are lost and the counts are low bounds. ilock export's fresh tables (--renew) do not keep up, or fail (ilock_table_renewal_failures_total): raise --max-inodes."
  # a wait that lasts: quiet at 5 s, firing at 12 s, quiet again once it ends
  - interval: 1m
    input_series:
      - series: 'ilock_oldest_wait_seconds{instance="db1:9435"}'
        values: '0 0.02 5 12 0 0'
    alert_rule_test:
      - eval_time: 2m
        alertname: InodeLockStalled
        exp_alerts: []
      - eval_time: 3m
        alertname: InodeLockStalled
        exp_alerts:
          - exp_labels: {severity: warning, instance: "db1:9435"}
            exp_annotations:
              summary: "db1:9435: a task has waited 12s for an inode lock, and still waits"
              description: "ilock stat -d 1 on the host names the waiter, the file, and who holds the lock now (WAITING NOW)."
      - eval_time: 4m
        alertname: InodeLockStalled
        exp_alerts: []
  # an fsync that lasts: its own alert, not the lock waits'
  - interval: 1m
    input_series:
      - series: 'ilock_oldest_fsync_seconds{instance="db1:9435"}'
        values: '0 3 9 25 0'
      - series: 'ilock_oldest_wait_seconds{instance="db1:9435"}'
        values: '0 0 0 0 0'
    alert_rule_test:
      - eval_time: 2m
        alertname: FsyncStalled
        exp_alerts: []
      - eval_time: 3m
        alertname: FsyncStalled
        exp_alerts:
          - exp_labels: {severity: warning, instance: "db1:9435"}
            exp_annotations:
              summary: "db1:9435: an ext4 fsync has lasted 25s, and goes on"
              description: "ilock stat -d 1 on the host names the task, the file, and the journal commit it waits on (WAITING NOW)."
      - eval_time: 3m
        alertname: InodeLockStalled
        exp_alerts: []
      - eval_time: 4m
        alertname: FsyncStalled
        exp_alerts: []
"""


def test_contrib_alerts_fire_when_they_should(tmp_path):
    """promtool's rule tests: an exporter that is down (its own series gone
    stale, so IlockExporterStale stays quiet), series limits reached
    (new hot inodes anonymous in "other"), a table 80% full for 10 minutes,
    a wait and an fsync still going on after 10 s each fire, and only
    then."""
    t = tmp_path / "rules_test.yml"
    t.write_text(RULES_TEST.replace("RULES", os.path.abspath(RULES)))
    r = subprocess.run(["promtool", "test", "rules", str(t)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS" in r.stdout, r.stdout


def test_prometheus_end_to_end(xfs, procs, ilock_bin, prometheus):
    path = make_file(os.path.join(xfs.mnt, "seed.dat"), 64 << 20)
    ex = start_exporter(procs, ilock_bin, "-D", xfs.mnt)
    base = prometheus(ex.port, rules=RULES)
    # the seed workload: buffered reads (IOLOCK shared on XFS) behind writes
    procs.start(seed_fio(path, 64, 20), stdout=subprocess.DEVNULL)
    sel = f'device="{xfs.majmin}",class="i_rwsem",mode="shared"'

    def nonzero(query):
        res = promql(base, query)
        vals = [float(r["value"][1]) for r in res]
        return vals if vals and all(v > 0 for v in vals) else None

    count = wait_for(lambda: nonzero(f"ilock_lock_wait_seconds_count{{{sel}}}"), 30,
                     "ilock_lock_wait_seconds_count in Prometheus")
    assert len(count) == 1
    p99 = wait_for(lambda: nonzero(
        f"histogram_quantile(0.99, rate(ilock_lock_wait_seconds_bucket{{{sel}}}[10s]))"), 30,
        "a p99 from the buckets")
    assert 1e-6 <= p99[0] < 70, p99
    # Prometheus negotiated OpenMetrics, and its strict parser took every scrape
    assert nonzero('ilock_exporter_scrapes_total{format="openmetrics"}')
    assert nonzero('up{job="ilock"}')
    # one scrape's per-inode series add up to its aggregate, in Prometheus too
    diff = promql(base, f"sum(ilock_inode_lock_wait_seconds_count{{{sel}}}) - "
                        f"sum(ilock_lock_wait_seconds_count{{{sel}}})")
    assert len(diff) == 1 and float(diff[0]["value"][1]) == 0
    # the in-kernel tables' fill: part of the default 16,384, short of the alert (pairs
    # count every thread pair, op and range seen: some hundreds in these seconds)
    fill = {r["metric"]["table"]: float(r["value"][1])
            for r in promql(base, "ilock_table_entries / ilock_table_capacity")}
    assert set(fill) == {"locks", "pairs"} and all(0 < v < 0.5 for v in fill.values()), fill
    assert [float(r["value"][1]) for r in promql(base, 'ilock_table_capacity{table="pairs"}')] \
        == [16384], "pairs capacity"
    # contrib/ilock-rules.yml, evaluated: tasks waiting, and the range-lock
    # headroom of fio's random 16 KiB blocks of 64 MiB, which rarely meet
    dc = f'device="{xfs.majmin}",class="i_rwsem"'
    waiting = wait_for(lambda: nonzero(f"device_class:ilock_lock_wait_seconds:rate5m{{{dc}}}"),
                       30, "the waiting-tasks recording rule")
    assert len(waiting) == 1 and waiting[0] < 64, waiting
    headroom = wait_for(lambda: nonzero(f"device_class:ilock_range_headroom:ratio_rate1h{{{dc}}}"),
                        30, "the headroom recording rule")
    assert len(headroom) == 1 and 0.5 <= headroom[0] <= 1, headroom
    # readers behind writers, by op: the question of shared/seeds/000, in PromQL
    rw = wait_for(lambda: nonzero(
        f'sum(rate(ilock_serialised_op_wait_seconds_total{{{dc},holder_op="buffered-write",'
        f'waiter_op="buffered-read"}}[1m]))'), 30, "writes holding up reads")
    assert len(rw) == 1 and rw[0] < 64, rw
    # and contrib's recording rule for readers behind writers, at most all the waiting
    behind = wait_for(lambda: nonzero(f"device_class:ilock_readers_behind_writers:rate5m{{{dc}}}"),
                      30, "the readers-behind-writers recording rule")
    assert len(behind) == 1 and behind[0] <= waiting[0] * 1.5, (behind, waiting)
    # the lost-events alert stays quiet: the waits under way at the start
    # (end_without_begin) leave no count low, and nothing else was lost
    lost = promql(base, 'sum by (reason) (ilock_lost_events_total) > 0')
    alerts = promql(base, 'ALERTS{alertname="IlockLostEvents"}')
    assert not alerts, (alerts, lost)
    with urllib.request.urlopen(base + "/api/v1/rules?type=alert", timeout=5) as r:
        rules = [x for g in json.load(r)["data"]["groups"] for x in g["rules"]]
    (rule,) = [x for x in rules if x["name"] == "IlockLostEvents"]
    assert rule["health"] == "ok" and rule["state"] == "inactive", rule
    assert not rule["lastEvaluation"].startswith("0001-"), rule


# ---------------------------------------------------------------- bad clients

def slow_sockets(src_ip, n, port, payload=b"GET /metrics HTTP/1.1\r\nHost: x\r\n"):
    """n connections from src_ip, each with a request that never ends.
    Refused or reset ones are fine: the server is allowed to shed them."""
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.settimeout(2)
        try:
            s.bind((src_ip, 0))
            s.connect(("127.0.0.1", port))
            s.sendall(payload)
        except OSError:
            s.close()
            continue
        socks.append(s)
    return socks


def trickle(socks, stop):
    """Slowloris: one more header byte per connection every 0.3 s."""
    while not stop.is_set():
        for s in socks:
            try:
                s.send(b"X")
            except OSError:
                pass
        stop.wait(0.3)


def timed_scrape(ex):
    t0 = time.monotonic()
    text = ex.metrics(timeout=1.0)
    took = time.monotonic() - t0
    assert took < 1.0 and text
    return took


def test_bad_clients(procs, ilock_bin):
    # -D 1:1 (a memory device, no filesystem): other tests' contention on
    # this machine cannot change our memory use
    ex = start_exporter(procs, ilock_bin, "-D", "1:1", "--http-timeout", "3")
    timed_scrape(ex)
    rss0 = ex.rss_kb()
    collections0 = value(ex.metrics(), "ilock_exporter_collections_total")
    stop = threading.Event()
    held = []
    try:
        # slowloris from one address: the per-address limit sheds most of them
        loris = slow_sockets("127.0.0.2", 100, ex.port)
        held += loris
        threading.Thread(target=trickle, args=(loris, stop), daemon=True).start()
        # 200 parallel connections from 20 addresses, each a request never finished
        for i in range(20):
            held += slow_sockets(f"127.0.1.{i + 1}", 10, ex.port)
        assert len(held) >= 200

        # oversized headers: answered with an error and closed, not buffered
        for i in range(10):
            s = socket.create_connection(("127.0.0.1", ex.port), timeout=5,
                                         source_address=("127.0.0.3", 0))
            try:
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (256 << 10))
            except OSError:
                pass  # the server may close before we are done sending
            try:
                reply = s.recv(200)
            except OSError:
                reply = b""
            s.close()
            assert reply == b"" or re.match(rb"HTTP/1\.1 4\d\d ", reply), reply

        # 200 well-formed scrapes at once, from 10 threads: all answered
        results = []

        def scraper():
            for _ in range(20):
                try:
                    results.append(len(ex.metrics(timeout=10)))
                except Exception as e:  # noqa: BLE001 - collected for the assert
                    results.append(e)
        threads = [threading.Thread(target=scraper) for _ in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert len(results) == 200 and all(isinstance(r, int) and r > 0 for r in results), \
            [r for r in results if not isinstance(r, int)][:3]

        # with all of that still connected: every scrape within 1 s, for 3 s,
        # and collection keeps going
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            timed_scrape(ex)
            time.sleep(0.2)
        text = scrape_until(
            ex, lambda t: value(t, "ilock_exporter_collections_total") >= collections0 + 2,
            3, "collections to go on")
        assert value(text, "ilock_exporter_http_errors_total") == 0
        rss1 = ex.rss_kb()
        assert rss1 - rss0 < 16 * 1024, f"RSS grew from {rss0} kB to {rss1} kB"
    finally:
        stop.set()
        for s in held:
            s.close()

    # idle connections are dropped after --http-timeout
    idle = slow_sockets("127.0.0.4", 5, ex.port, payload=b"")
    assert len(idle) == 5
    time.sleep(4.5)
    for s in idle:
        s.settimeout(2)
        try:
            assert s.recv(10) == b""
        except ConnectionResetError:
            pass
        s.close()
    assert ex.proc.poll() is None
    timed_scrape(ex)


# ---------------------------------------------------------------- cardinality

def contend_batch(lh, part, hold_ms):
    """One lockhold writer per file holds its i_rwsem exclusive while one
    reader queues behind it. Returns the files whose reader did not start
    inside the writer's hold (a loaded machine): the caller tries them again."""
    writers = [subprocess.Popen([lh, "write", f, "0", "4096", str(hold_ms)],
                                stdout=subprocess.PIPE, text=True) for f in part]
    readers, held, released, outs = [], [], [], []
    try:
        for w in writers:
            m = re.match(r"HOLDING pid=\d+ tid=\d+ t=(\d+)", w.stdout.readline())
            assert m
            held.append(int(m.group(1)))
        readers = [subprocess.Popen([lh, "read", f, "4096", "4096", "1"],
                                    stdout=subprocess.PIPE, text=True) for f in part]
        outs = [json.loads(r.communicate(timeout=30)[0]) for r in readers]
        for w in writers:
            m = re.match(r"RELEASED t=(\d+)", w.stdout.readline())
            assert m
            released.append(int(m.group(1)))
    finally:
        for p in writers + readers:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            if p.stdout:
                p.stdout.close()
    assert all(p.returncode == 0 for p in writers + readers)
    # a buffered read on XFS takes IOLOCK shared: begun while the writer
    # still sat in its fault, holding it exclusive, it waited (lockhold's
    # times are all CLOCK_MONOTONIC)
    return [f for f, h, rel, out in zip(part, held, released, outs)
            if not h < out["start_ns"][0] < min(rel, h + hold_ms * 1_000_000)]


def contend_each(helpers_dir, files, batch=200, hold_ms=700):
    """At least one real wait on every file, `batch` files at a time."""
    lh = lockhold(helpers_dir)
    todo = list(files)
    for _ in range(4):
        missed = []
        for b in range(0, len(todo), batch):
            missed += contend_batch(lh, todo[b:b + batch], hold_ms)
        todo = missed
        if not todo:
            return
    raise AssertionError(f"{len(todo)} files never contended")


def test_cardinality_bounded(xfs, procs, helpers_dir, ilock_bin):
    k = 5
    d = os.path.join(xfs.mnt, "many")
    os.mkdir(d)
    files = []
    for i in range(1000):
        p = os.path.join(d, f"f{i:04d}")
        with open(p, "wb") as f:
            f.write(b"x" * 8192)
        files.append(p)
    ex = start_exporter(procs, ilock_bin, "-D", xfs.mnt, "--top-inodes", str(k),
                        "--max-pairs", "4")
    contend_each(helpers_dir, files)
    try:
        text = scrape_until(ex, lambda t: value(t, "ilock_contended_inodes") >= 1000, 5,
                            "1,000 contended inodes")
    except AssertionError:
        t = ex.metrics()
        raise AssertionError(f"contended inodes: {value(t, 'ilock_contended_inodes')}, waits: "
                             f"{value(t, 'ilock_lock_wait_seconds_count', device=xfs.majmin)}")
    sel = dict(device=xfs.majmin, **{"class": "i_rwsem"}, mode="shared")
    assert value(text, "ilock_lock_wait_seconds_count", **sel) >= 1000

    per_inode = [(n, l, v) for n, l, v in samples(text) if n.startswith("ilock_inode_lock_wait")]
    inode_labels = {l["inode"] for _, l, _ in per_inode}
    # the documented bound: at most 2K inodes of their own, plus "other"
    assert "other" in inode_labels and len(inode_labels) <= 2 * k + 1, sorted(inode_labels)
    assert value(text, "ilock_exporter_inode_series") == len(inode_labels) - 1
    assert value(text, "ilock_exporter_inode_series_limit") == 2 * k
    # (2K inodes + "other") x classes x 2 modes, each PROM_NBUCKETS + 2 samples
    assert len(per_inode) <= (2 * k + 1) * 3 * 2 * (28 + 2)
    # per-inode series (own + other) still add up to the aggregate
    counts = [v for n, l, v in per_inode if n.endswith("_count") and l["mode"] == "shared"
              and l["class"] == "i_rwsem"]
    assert sum(counts) == value(text, "ilock_lock_wait_seconds_count", **sel)
    # the whole exposition stays small whatever the inode count
    assert len(samples(text)) < 1500
    pairs = [l for n, l, _ in samples(text) if n == "ilock_serialised_waits_total"]
    assert len(pairs) <= 4 + 4 * 5 * 2  # P + D·C·H·2 (docs/exporter.md, "The bound")


def test_idle_inode_series_make_room(xfs, procs, helpers_dir, ilock_bin, prometheus):
    """--series-idle: with both places taken (K = 1), a file that gets
    hot later is named once the idle series give theirs up; inode="other"
    never goes down, the series left plus what the retired ones counted
    make the device's total, and a real Prometheus drops the retired series
    (stale) and takes the new one."""
    files = {}
    for name in ("a", "b", "c"):
        files[name] = os.path.join(xfs.mnt, name)
        with open(files[name], "wb") as f:
            f.write(b"x" * 16384)
    ex = start_exporter(procs, ilock_bin, "-D", xfs.mnt, "--top-inodes", "1",
                        "--series-idle", "10")
    base = prometheus(ex.port)
    sel = dict(device=xfs.majmin, **{"class": "i_rwsem"}, mode="shared")

    def own(text, name):
        return value(text, "ilock_inode_lock_wait_seconds_count", path=files[name], **sel)

    # one admission a collection: a, then b, fill both places
    hold_and_wait(procs, helpers_dir, files["a"])
    scrape_until(ex, lambda t: own(t, "a"), 5, "a series of a's own")
    hold_and_wait(procs, helpers_dir, files["b"])
    before = scrape_until(ex, lambda t: own(t, "b"), 5, "a series of b's own")
    assert value(before, "ilock_exporter_inode_series") == 2
    # c waits now and then: in "other" while the places are taken
    hold_and_wait(procs, helpers_dir, files["c"])
    text = scrape_until(ex, lambda t: (value(t, "ilock_inode_lock_wait_seconds_count",
                                             inode="other", **sel) or 0) >= 1, 5, "c in other")
    assert own(text, "c") is None
    gone_counts = own(text, "a") + own(text, "b")
    other = value(text, "ilock_inode_lock_wait_seconds_count", inode="other", **sel)
    deadline = time.monotonic() + 40
    while own(text, "c") is None:
        assert time.monotonic() < deadline, "c never got a series of its own"
        hold_and_wait(procs, helpers_dir, files["c"], hold_ms=300)
        time.sleep(1.5)
        text = ex.metrics()
        now_other = value(text, "ilock_inode_lock_wait_seconds_count", inode="other", **sel)
        assert now_other >= other, (now_other, other)
        other = now_other
    assert own(text, "a") is None and own(text, "b") is None
    assert value(text, "ilock_exporter_inode_series_retired_total") == 2
    inode_counts = sum(v for n, l, v in samples(text)
                       if n == "ilock_inode_lock_wait_seconds_count"
                       and all(l.get(k) == want for k, want in sel.items()))
    assert inode_counts + gone_counts == value(text, "ilock_lock_wait_seconds_count", **sel)

    def in_prometheus(name):
        q = f'ilock_inode_lock_wait_seconds_count{{path="{files[name]}",mode="shared"}}'
        return len(promql(base, q))
    # Prometheus had a and b, then saw them go (stale at its next scrape) and c come
    wait_for(lambda: in_prometheus("c") == 1 and not in_prometheus("a")
             and not in_prometheus("b"), 10, "Prometheus to drop a and b and take c")
    got = promql(base, "ilock_exporter_inode_series_retired_total")
    assert [float(r["value"][1]) for r in got] == [2], got
    seen = promql(base, f'count(count_over_time(ilock_inode_lock_wait_seconds_count'
                        f'{{path="{files["a"]}",mode="shared"}}[5m]))')
    assert [float(r["value"][1]) for r in seen] == [1], seen


# ---------------------------------------------------------------- process titles

def test_titled_processes_by_role_in_prometheus(xfs, procs, helpers_dir, ilock_bin, prometheus):
    """Processes that set titles, as PostgreSQL's do, are told apart by
    role labels: two client connections of one user and database are one
    series, an untitled process keeps its comm, and nothing is by pid."""
    path = make_file(os.path.join(xfs.mnt, "titled.dat"), 1 << 20)
    ex = start_exporter(procs, ilock_bin, "-D", xfs.mnt)
    base = prometheus(ex.port)
    env = lambda title: dict(os.environ, LOCKHOLD_LINGER_MS="60000",
                             **({"LOCKHOLD_TITLE": title} if title else {}))
    w = procs.start([lockhold(helpers_dir), "write", path, 0, 4096, 1500],
                    env=env("lockhold: checkpointer"))
    assert wait_line(w, "HOLDING ", 10)
    readers = [procs.start([lockhold(helpers_dir), "read", path, 8192, 4096, 1],
                           env=env(t), stdout=subprocess.PIPE)
               for t in ("lockhold: alice shop [local] SELECT",
                         "lockhold: alice shop 10.1.2.3(5123) idle", None)]
    for r in readers:
        assert wait_line(r, "{", 20)
    sel = f'device="{xfs.majmin}",class="i_rwsem",holder_mode="exclusive",waiter_mode="shared"'

    def by_role():
        res = promql(base, f"sum by (holder_comm, holder_role, waiter_comm, waiter_role) "
                           f"(ilock_serialised_waits_total{{{sel}}})")
        got = {(r["metric"]["holder_comm"], r["metric"]["holder_role"], r["metric"]["waiter_comm"],
                r["metric"]["waiter_role"]): float(r["value"][1]) for r in res}
        return got if len(got) == 2 and sum(got.values()) >= 3 else None

    got = wait_for(by_role, 40, "the pairs by role in Prometheus")
    assert got == {("lockhold", "lockhold: checkpointer", "lockhold", "lockhold: alice shop"): 2,
                   ("lockhold", "lockhold: checkpointer", "lockhold", "lockhold"): 1}, got
    assert not re.search(r'\bpid="', ex.metrics())


# ---------------------------------------------------------------- full tables

def never_down(text):
    """{(name, labels): value} of the samples that may never go down."""
    return {(n, tuple(sorted(l.items()))): v for n, l, v in samples(text)
            if n.endswith(("_total", "_count", "_sum", "_bucket"))}


def test_renews_full_tables_and_keeps_every_series(xfs, procs, helpers_dir, ilock_bin,
                                                   prometheus):
    """--max-inodes 64 and waits on 100 files fill the tables; with --renew
    10 the exporter traces on into fresh ones. No series goes down or away
    across the renewal (a counter that did would read as a reset, and a
    real Prometheus scraping all along finds none), a titled pair keeps
    its role, the per-inode series still add up to the aggregate, the
    losses stay counted, and the old programs are gone."""
    path = make_file(os.path.join(xfs.mnt, "titled.dat"), 1 << 20)
    ex = start_exporter(procs, ilock_bin, "-D", xfs.mnt, "--max-inodes", "64", "--renew", "10",
                        "--top-inodes", "4")
    base = prometheus(ex.port)
    old_ids = bpf_ids_of(ex.proc.pid, "prog")
    assert old_ids
    # a pair by title first: its role must outlive the tables it was counted in
    # (they stay a few seconds, to be looked up, and are gone by the renewal)
    env = lambda title: dict(os.environ, LOCKHOLD_TITLE=title, LOCKHOLD_LINGER_MS="4000")
    w = procs.start([lockhold(helpers_dir), "write", path, 0, 4096, 800],
                    env=env("lockhold: checkpointer"))
    assert wait_line(w, "HOLDING ", 10)
    r = procs.start([lockhold(helpers_dir), "read", path, 8192, 4096, 1],
                    env=env("lockhold: alice shop [local] SELECT"), stdout=subprocess.PIPE)
    assert wait_line(r, "{", 20)
    role = dict(holder_role="lockhold: checkpointer", waiter_role="lockhold: alice shop")
    texts = [scrape_until(ex, lambda t: value(t, "ilock_serialised_waits_total", **role), 10,
                          "the titled pair's series")]
    # one pass over 100 files flat out fills both tables; then 5 files a second
    cm = procs.start([os.path.join(helpers_dir, "contend_many"), os.path.join(xfs.mnt, "many"),
                      "100", "25", "2", "5"])
    wait_line(cm, "READY ", timeout=30)
    new_ids = None
    renewed_at = None
    # scraped all along, until a few seconds into the fresh tables
    while cm.poll() is None and (renewed_at is None or time.monotonic() - renewed_at < 4):
        texts.append(ex.metrics())
        if new_ids is None and value(texts[-1], "ilock_table_renewals_total") >= 1:
            new_ids = bpf_ids_of(ex.proc.pid, "prog")
            renewed_at = time.monotonic()
        time.sleep(0.5)
    assert procs.stop(cm) == 0
    time.sleep(1.5)
    texts.append(ex.metrics())
    assert new_ids is not None, "no renewal: " + str(value(texts[-1], "ilock_table_entries",
                                                            table="locks"))
    # the same programs, loaded again; the old ones unloaded
    assert len(new_ids) == len(old_ids) and not new_ids & old_ids, (old_ids, new_ids)
    assert not old_ids & loaded_prog_ids()

    # every counter, histogram bucket and sum goes on from where it was, none vanishes
    for a, b in zip(texts, texts[1:]):
        before, after = never_down(a), never_down(b)
        gone = set(before) - set(after)
        assert not gone, sorted(gone)[:5]
        down = [(k, before[k], after[k]) for k in before if after[k] < before[k]]
        assert not down, down[:5]
    last = texts[-1]
    assert value(last, "ilock_table_renewal_failures_total") == 0
    # the old tables were full enough to lose entries; that stays counted
    lost = sum(v for n, l, v in samples(last) if n == "ilock_lost_events_total"
               and l["reason"] in ("wait_inodes_folded", "wait_map_full", "edge_threads_folded",
                                   "edge_map_full"))
    assert lost > 0, last
    # the titled pair kept its role, though the thread ids it was counted under are gone
    assert value(last, "ilock_serialised_waits_total", **role) >= 1
    # each inode counted once, though most waited both before and after a renewal:
    # at most the 100 files, titled.dat and their directories (fewer when a full
    # table kept some waits without their inode: wait_inodes_folded)
    assert 1 <= value(last, "ilock_contended_inodes") <= 103, \
        value(last, "ilock_contended_inodes")
    # the pairs by role add up to the same pairs by op: no count counted twice
    for n in ("waits_total", "wait_seconds_total"):
        by_role = sum(v for pn, _, v in samples(last) if pn == "ilock_serialised_" + n)
        by_op = sum(v for pn, _, v in samples(last) if pn == "ilock_serialised_op_" + n)
        assert by_role == pytest.approx(by_op, rel=1e-9), (n, by_role, by_op)
    # own series and inode="other" still add up to each aggregate
    for n, l, v in samples(last):
        if n != "ilock_lock_wait_seconds_count":
            continue
        per = [pv for pn, pl, pv in samples(last) if pn == "ilock_inode_lock_wait_seconds_count"
               and pl["device"] == l["device"] and pl["class"] == l["class"]
               and pl["mode"] == l["mode"]]
        assert sum(per) == v, (l, per, v)
    # Prometheus scraped through the renewals and saw no counter reset
    renewals = wait_for(lambda: promql(base, "ilock_table_renewals_total >= 1"), 10,
                        "Prometheus to scrape a renewal")
    names = sorted({n for n, _ in never_down(last) if n.startswith("ilock_")})
    seen = 0
    for n in names:  # one name at a time: resets() drops the names
        seen += len(promql(base, f"resets({n}[5m])"))
        reset = promql(base, f"resets({n}[5m]) > 0")
        assert not reset, (n, [r["metric"] for r in reset][:5])
    assert len(names) > 10 and seen > 100, (names, seen, renewals)
    ex.proc.send_signal(signal.SIGTERM)
    _, err = ex.proc.communicate(timeout=20)
    assert ex.proc.returncode == 0, err
    assert re.search(r"tracing on into fresh tables \(renewal 1, [\d.]+ s, [\d.]+ s of CPU\); "
                     r"every series keeps",
                     err), err
    assert "warning" not in err and "error" not in err, err
    wait_for(lambda: not new_ids & loaded_prog_ids(), 5, "the programs to be released")
