"""Fixtures for ilock's integration tests.

These tests need root, kernel BTF (/sys/kernel/btf/vmlinux) and losetup.
If any is missing, every test FAILS with the reason: a silently skipped
suite on a machine that should run it hides breakage. To skip the whole
suite deliberately (e.g. on a CI runner without loop devices), set
ILOCK_SKIP_INTEGRATION=1.

Fixtures:
  fs_factory(fstype, size="512M", mkfs_opts=None, under=None, fs_size=None) -> Fs
      Fresh xfs/ext4 filesystem on a loop device. Fs has .mnt, .dev,
      .majmin, .fstype, .image, .tmpdir. Always torn down (umount, detach,
      remove tempdir), even after a failed test or a half-done setup.
  xfs, ext4 -> Fs
      fs_factory("xfs") and fs_factory("ext4"), for tests that need one each.
  procs -> ProcList
      Collects Popen objects (procs.start(cmd) or procs.append(p)); any still
      running at teardown get SIGTERM, then SIGKILL. Only these are killed.
  helpers_dir -> "<repo>/build/helpers" (lockhold must be built there)
  ilock_bin -> "<repo>/build/ilock"
"""

import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

import pytest

from util import run_bg

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(REPO, "build")

MKFS = {
    "xfs": ["mkfs.xfs", "-q", "-f"],
    "ext4": ["mkfs.ext4", "-q", "-F"],
}

TERM_GRACE_S = 2.0


def _run(cmd, timeout=120):
    """Run a setup command; raise with its stderr so failures say why."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(
            f"{shlex.join(cmd)} failed (rc={r.returncode}): {r.stderr.strip()}"
        )
    return r.stdout


@pytest.fixture(scope="session", autouse=True)
def _integration_prereqs():
    """Fail (not skip) without root, BTF or losetup; ILOCK_SKIP_INTEGRATION=1
    skips everything instead."""
    if os.environ.get("ILOCK_SKIP_INTEGRATION") == "1":
        pytest.skip("ILOCK_SKIP_INTEGRATION=1")
    problems = []
    if os.geteuid() != 0:
        problems.append("must run as root (BPF and loop devices)")
    if not os.path.exists("/sys/kernel/btf/vmlinux"):
        problems.append("no /sys/kernel/btf/vmlinux (kernel built without BTF)")
    if shutil.which("losetup") is None:
        problems.append("losetup not found in PATH (util-linux)")
    if problems:
        pytest.fail(
            "integration prerequisites missing: " + "; ".join(problems)
            + " (set ILOCK_SKIP_INTEGRATION=1 to skip the suite)",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def helpers_dir():
    d = os.path.join(BUILD, "helpers")
    if not os.access(os.path.join(d, "lockhold"), os.X_OK):
        pytest.fail(f"{d}/lockhold not found: run make helpers", pytrace=False)
    return d


@pytest.fixture(scope="session")
def ilock_bin():
    p = os.path.join(BUILD, "ilock")
    if not os.access(p, os.X_OK):
        pytest.fail(f"{p} not found: run make", pytrace=False)
    return p


class ProcList(list):
    """Popen objects a test started; the fixture cleans up the survivors."""

    def start(self, cmd, **kwargs):
        p = run_bg(cmd, **kwargs)
        self.append(p)
        return p

    def stop(self, p, timeout=30):
        """End one of them now, as Ctrl-C would (SIGTERM, by pid), rather
        than wait out the duration it was started with; its exit status."""
        _signal(p, signal.SIGTERM)
        p.communicate(timeout=timeout)
        return p.returncode

    def kill_all(self):
        live = [p for p in self if p.poll() is None]
        for p in live:
            _signal(p, signal.SIGTERM)
        deadline = time.monotonic() + TERM_GRACE_S
        for p in live:
            try:
                p.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal(p, signal.SIGKILL)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass  # stuck in D state; umount -l still lets us go on
        for p in self:
            for f in (p.stdin, p.stdout, p.stderr):
                if f:
                    f.close()


def _signal(p, sig):
    # By pid only: never a process group or name, so we touch nothing else.
    try:
        os.kill(p.pid, sig)
    except ProcessLookupError:
        pass


@pytest.fixture
def procs():
    pl = ProcList()
    yield pl
    pl.kill_all()


@dataclass
class Fs:
    fstype: str
    tmpdir: str
    image: str
    mnt: str
    dev: str = ""
    majmin: str = ""
    mounted: bool = field(default=False, repr=False)


def _teardown_fs(fs):
    errors = []
    if fs.mounted:
        for _ in range(5):
            if subprocess.run(["umount", fs.mnt], capture_output=True).returncode == 0:
                fs.mounted = False
                break
            time.sleep(0.3)
        else:
            # Something still holds it busy; detach so the run can go on.
            r = subprocess.run(["umount", "-l", fs.mnt], capture_output=True, text=True)
            if r.returncode == 0:
                fs.mounted = False
            else:
                errors.append(f"umount -l {fs.mnt}: {r.stderr.strip()}")
    if fs.dev:
        # After a lazy umount the kernel auto-clears the device when freed.
        r = subprocess.run(["losetup", "-d", fs.dev], capture_output=True, text=True)
        if r.returncode != 0:
            errors.append(f"losetup -d {fs.dev}: {r.stderr.strip()}")
    if not fs.mounted:
        shutil.rmtree(fs.tmpdir, ignore_errors=True)
    return errors


@pytest.fixture
def fs_factory(procs):
    """Depends on `procs` so test processes die before we umount (they would
    keep the fs busy); procs' own teardown is then a no-op."""
    made = []

    def make(fstype, size="512M", mkfs_opts=None, under=None, fs_size=None):
        """under: a directory for the image (another test fs: a loop device
        stacked on a file there); fs_size: a filesystem smaller than its
        image, as mkfs's size argument."""
        if fstype not in MKFS:
            raise ValueError(f"unsupported fstype {fstype!r}")
        if isinstance(mkfs_opts, str):
            mkfs_opts = shlex.split(mkfs_opts)
        tmpdir = tempfile.mkdtemp(prefix="ilock-test-", dir=under)
        fs = Fs(fstype=fstype, tmpdir=tmpdir,
                image=os.path.join(tmpdir, f"{fstype}.img"),
                mnt=os.path.join(tmpdir, "mnt"))
        # Record first: whatever step fails, teardown undoes the earlier ones.
        made.append(fs)
        os.mkdir(fs.mnt)
        _run(["truncate", "-s", str(size), fs.image])
        _run(MKFS[fstype] + list(mkfs_opts or []) + [fs.image] + ([fs_size] if fs_size else []))
        fs.dev = _run(["losetup", "--find", "--show", fs.image]).strip()
        _run(["mount", "-t", fstype, fs.dev, fs.mnt])
        fs.mounted = True
        st = os.stat(fs.mnt)
        fs.majmin = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
        return fs

    yield make

    procs.kill_all()
    errors = []
    for fs in reversed(made):
        errors += _teardown_fs(fs)
    if errors:
        pytest.fail("fs teardown: " + "; ".join(errors), pytrace=False)


@pytest.fixture
def xfs(fs_factory):
    """A fresh XFS on a loop device, torn down after the test."""
    return fs_factory("xfs")


@pytest.fixture
def ext4(fs_factory):
    """A fresh ext4 on a loop device, torn down after the test."""
    return fs_factory("ext4")
