"""What every scenario gets: paths, options, progress output and the list of failures."""

import os
import subprocess
import sys
import tempfile
import time

from .proc import StartError
from .php84 import Php84
from .revision import Revisions


class Context:
    def __init__(self, root, out_dir, settings, connections, threads, workers, keep_tmp=False, ferry_revs=(),
                 php_versions=()):
        self.root = root
        self.out_dir = out_dir
        self.tmp = os.path.join(out_dir, "tmp")
        os.makedirs(self.tmp, exist_ok=True)
        # Unix socket paths are limited to 107 bytes; a deep checkout would overflow them.
        probe = os.path.join(self.tmp, "x" * 24 + ".sock")
        self.sock_dir = self.tmp if len(probe) < 100 else tempfile.mkdtemp(prefix="ferry-bench-")
        self.settings = settings
        self.connections = connections
        self.threads = threads
        self.workers = workers
        self.workers_given = False  # run.py --workers: a scenario with its own default keeps to it otherwise
        self.keep_tmp = keep_tmp
        self.failures = []
        self.scenario = "-"
        self.started = time.monotonic()
        self._go_bins = {}
        self.soak_requests = None  # run.py --soak-requests; the soak scenario's default otherwise
        # --ferry-rev: built on first use by a scenario that compares revisions.
        self.revisions = Revisions(root, ferry_revs, self)
        # --php 8.4: prepared on first use by hello or framework.
        self.php84 = Php84(self, php_versions)

    @property
    def quick(self):
        return self.settings.quick

    @property
    def ferry_bin(self):
        return os.path.join(self.root, "bin", "ferry")

    def path(self, *parts):
        p = os.path.join(self.tmp, *parts)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        return p

    def dir(self, *parts):
        p = os.path.join(self.tmp, *parts)
        os.makedirs(p, exist_ok=True)
        return p

    def sock(self, name):
        return os.path.join(self.sock_dir, name)

    def progress(self, msg):
        elapsed = time.monotonic() - self.started
        print(f"[{elapsed:6.1f}s] [{self.scenario}] {msg}", flush=True)

    def fail(self, msg):
        self.failures.append(f"{self.scenario}: {msg}")
        print(f"[{self.scenario}] FAILURE: {msg}", file=sys.stderr, flush=True)

    def run(self, argv, cwd=None, timeout=600, env=None):
        """Runs a build step; raises StartError with its output when it fails."""
        try:
            res = subprocess.run(argv, cwd=cwd or self.root, capture_output=True, text=True,
                                 timeout=timeout, env=env)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise StartError(f"{' '.join(argv)}: {e}") from e
        if res.returncode != 0:
            raise StartError(f"{' '.join(argv)} exited {res.returncode}:\n{(res.stderr or res.stdout)[-2000:]}")
        return res.stdout

    def ensure_ferry(self):
        """bin/ferry as `make build` makes it; built here too when run.py is called directly."""
        if not os.access(self.ferry_bin, os.X_OK):
            self.progress("building bin/ferry (make build)")
            self.run(["make", "-s", "build"])
        return self.ferry_bin

    def go_build(self, package, name):
        if name not in self._go_bins:
            out = self.path("bin", name)
            self.progress(f"go build {package}")
            self.run(["go", "build", "-o", out, package])
            self._go_bins[name] = out
        return self._go_bins[name]
