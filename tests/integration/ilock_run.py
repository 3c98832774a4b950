"""Run the real ilock binary in integration tests."""

import json
import signal
import subprocess

from util import wait_line

READY = "ilock: tracing"


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


def locks_for(doc, dev, ino, cls="i_rwsem"):
    return [l for l in doc["locks"] if l["dev"] == dev and l["ino"] == ino and l["class"] == cls]


def edges_for(doc, dev, ino, cls="i_rwsem"):
    return [e for e in doc["edges"] if e["dev"] == dev and e["ino"] == ino and e["class"] == cls]
