"""Small helpers shared by ilock's integration tests (stdlib only)."""

import importlib.machinery
import importlib.util
import json
import os
import selectors
import subprocess
import time

_CHUNK = 1 << 20


def load_script(path):
    """A Python script without a .py suffix (scripts/bench/overhead, ...) as a
    module, so tests can call its pure parts."""
    name = os.path.basename(path)
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def make_file(path, size_bytes):
    """Write `size_bytes` of real data to `path` (no holes) and fsync it.

    Allocated blocks matter: writes into holes or unwritten extents take
    different (often exclusive) lock paths than overwrites.
    """
    block = bytes(range(256)) * (_CHUNK // 256)
    with open(path, "wb") as f:
        left = size_bytes
        while left > 0:
            n = min(left, len(block))
            f.write(block[:n])
            left -= n
        f.flush()
        os.fsync(f.fileno())
    return str(path)


def bpf_ids_of(pid, kind):
    """The ids of the BPF objects of `kind` ("prog" or "map") that a process
    holds open, from its fds' fdinfo (other tracers on the host may run too)."""
    ids = set()
    prefix = f"{kind}_id:"
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                ids |= {int(l.split()[1]) for l in f if l.startswith(prefix)}
        except OSError:
            pass  # closed meanwhile
    return ids


def prog_names(pid):
    """The names of the BPF programs a process holds (the kernel keeps 15 chars)."""
    names = set()
    for i in bpf_ids_of(pid, "prog"):
        out = subprocess.run(["bpftool", "prog", "show", "id", str(i), "-j"],
                             capture_output=True, text=True, timeout=30).stdout
        names.add(json.loads(out).get("name", ""))
    return names


def loaded_prog_ids():
    """The ids of every BPF program loaded on the host now."""
    out = subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True, text=True,
                         timeout=30).stdout
    return {p["id"] for p in json.loads(out or "[]")}


def seed_fio(path, size_mb, runtime, jobs=8, name="seed"):
    """The seed workload in small, as fio's argv: random 60/40 reads and
    writes of 16k, buffered, psync, `jobs` threads on one file."""
    return ["fio", f"--name={name}", f"--filename={path}", f"--size={size_mb}M", "--rw=randrw",
            "--rwmixread=60", "--bs=16k", f"--numjobs={jobs}", "--thread", "--ioengine=psync",
            "--time_based", f"--runtime={runtime}"]


def run_seed_fio(procs, path, size_mb, runtime, jobs=8):
    """seed_fio() to its end; it must succeed."""
    fio = procs.start(seed_fio(path, size_mb, runtime, jobs))
    fio.communicate(timeout=60)
    assert fio.returncode == 0


def run_bg(cmd, **kwargs):
    """Start `cmd` with stdout piped (text mode); stderr is inherited so
    pytest's fd capture shows it on failure."""
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("text", True)
    return subprocess.Popen([str(c) for c in cmd], **kwargs)


def wait_line(proc, prefix, timeout, stream=None):
    """Read `proc`'s stdout until a line starts with `prefix`; return that
    line without its newline. Lines before it are discarded.

    `stream` reads another of proc's pipes (e.g. proc.stderr) instead.
    Raises TimeoutError after `timeout` seconds and EOFError if stdout
    closes first. Reads one byte at a time from a non-blocking fd so it
    never consumes past the matching line: the caller can keep reading
    proc.stdout (or call communicate()) afterwards without losing output.
    """
    fd = (stream or proc.stdout).fileno()
    deadline = time.monotonic() + timeout
    seen = []
    line = bytearray()
    was_blocking = os.get_blocking(fd)
    os.set_blocking(fd, False)
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    try:
        while True:
            try:
                b = os.read(fd, 1)
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    raise TimeoutError(
                        f"no line starting with {prefix!r} from pid {proc.pid} "
                        f"within {timeout}s; last lines: {seen[-5:]!r}"
                    ) from None
                continue
            if not b:
                raise EOFError(
                    f"pid {proc.pid} closed stdout (rc={proc.poll()}) before a "
                    f"line starting with {prefix!r}; last lines: {seen[-5:]!r}"
                )
            if b != b"\n":
                line += b
                continue
            text = line.decode("utf-8", "replace")
            line.clear()
            if text.startswith(prefix):
                return text
            seen.append(text)
    finally:
        sel.close()
        os.set_blocking(fd, was_blocking)


def tids_of(pid):
    return sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))


def blocked_tid(pid, timeout=10, wchan=None):
    """The thread of pid asleep in D state (its lock wait), once it is.
    With wchan, only a sleep in a kernel function whose name holds it
    counts: a process starting up can sleep in D on page-cache reads before
    it reaches the lock."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for tid in tids_of(pid):
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    asleep = f.read().rsplit(")", 1)[1].split()[0] == "D"
                if asleep and wchan is not None:
                    with open(f"/proc/{pid}/task/{tid}/wchan") as f:
                        asleep = wchan in f.read()
            except OSError:
                continue
            if asleep:
                return tid
        time.sleep(0.05)
    raise AssertionError(f"no thread of {pid} blocked in D state"
                         + (f" in {wchan}" if wchan else ""))


def cgroup_remove(root, cg):
    """Move whatever is still in cgroup cg back to the root, then remove it
    (rmdir fails on a cgroup with processes)."""
    with open(os.path.join(cg, "cgroup.procs")) as f:
        left = f.read().split()
    for pid in left:
        try:
            with open(os.path.join(root, "cgroup.procs"), "w") as f:
                f.write(pid)
        except OSError:
            pass
    os.rmdir(cg)
