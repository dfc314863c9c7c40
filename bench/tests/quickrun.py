"""Shared by the smoke tests: one `run.py --quick --scenario NAME` into a temp dir per test
class, checked to have exited 0 and left exactly one results directory."""

import os
import subprocess
import sys
import tempfile

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class QuickRun:
    """Mix into a unittest.TestCase and set `scenario`."""

    scenario = None
    args = []  # more run.py options
    timeout = 120  # seconds for the whole run

    @classmethod
    def setUpClass(cls):
        cls.out = tempfile.TemporaryDirectory(prefix=f"ferry-bench-smoke-{cls.scenario}-")
        cls.proc = subprocess.run([sys.executable, os.path.join(BENCH, "run.py"), "--quick", "--scenario", cls.scenario,
                                   "--out", cls.out.name, *cls.args], capture_output=True, text=True,
                                  timeout=cls.timeout)
        runs = os.listdir(cls.out.name)
        cls.dir = os.path.join(cls.out.name, runs[0]) if len(runs) == 1 else None

    @classmethod
    def tearDownClass(cls):
        cls.out.cleanup()

    def setUp(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stdout[-3000:] + self.proc.stderr[-3000:])
        self.assertIsNotNone(self.dir, "expected exactly one results directory")
