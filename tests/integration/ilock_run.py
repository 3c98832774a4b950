"""Run the real ilock binary in integration tests."""

import json
import signal
import subprocess

from util import run_bg, wait_line

READY = "ilock: tracing"
REC_READY = "ilock: recording to"


def start_stat(procs, ilock_bin, *args):
    """Start `ilock stat -j ARGS` and return once its probes are attached."""
    p = procs.start([ilock_bin, "stat", "-j", *args], stderr=subprocess.PIPE)
    wait_line(p, READY, timeout=30, stream=p.stderr)
    return p


def stop_stat(p, timeout=30):
    """SIGINT, as a user's Ctrl-C: ilock must detach, print JSON, exit 0."""
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=timeout)
    assert p.returncode == 0, f"ilock exited {p.returncode}: {err}"
    return json.loads(out)


def start_record(ilock_bin, out, *args):
    """Start `ilock record -o OUT ARGS` and return once it records."""
    p = run_bg([ilock_bin, "record", "-o", out, *args], stderr=subprocess.PIPE)
    try:
        wait_line(p, REC_READY, timeout=30, stream=p.stderr)
    except Exception:
        p.kill()
        p.wait()
        raise
    return p


def stop_record(p):
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 0, f"ilock record exited {p.returncode}: {err}"
    assert "wrote" in err
    return err


def locks_for(doc, dev, ino, cls="i_rwsem"):
    return [l for l in doc["locks"] if l["dev"] == dev and l["ino"] == ino and l["class"] == cls]


def edges_for(doc, dev, ino, cls="i_rwsem"):
    return [e for e in doc["edges"] if e["dev"] == dev and e["ino"] == ino and e["class"] == cls]
