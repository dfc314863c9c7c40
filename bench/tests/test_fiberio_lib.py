"""Unit tests of what the fiberio scenario added to the harness: perf stat's CSV read into
syscalls by name, and the backend's CPU kept apart from a system's own."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lib import httpbench, perfcount  # noqa: E402

PERF_CSV = """139072,,raw_syscalls:sys_enter,1736451620,100.00,80.086,K/sec
12604,,context-switches,1736487864,100.00,7.258,K/sec
3079,,syscalls:sys_enter_poll,1736451620,100.00,,
0,,syscalls:sys_enter_dup,1736451620,100.00,,
<not counted>,,syscalls:sys_enter_getpid,0,0.00,,
"""


class PerfParseTest(unittest.TestCase):
    def test_events_by_name(self):
        self.assertEqual(perfcount._parse(PERF_CSV),
                         {"syscalls": 139072, "context-switches": 12604, "poll": 3079, "dup": 0})

    def test_garbage_is_ignored(self):
        self.assertEqual(perfcount._parse("Error:\nNo permission\n,,\n"), {})


class Busy:
    """A system whose processes are this one: its CPU moves while the test burns some."""

    def __init__(self, backend):
        self.backend = backend

    def cpu_pids(self):
        return [], []

    def backend_pids(self):
        return [os.getpid()] if self.backend else []


class BackendCpuTest(unittest.TestCase):
    def burn(self, system):
        done = httpbench.cpu_meter(system)
        x = 0
        for i in range(3_000_000):
            x += i
        return done({"requests": 10})

    def test_backend_cpu_is_counted_apart(self):
        res = self.burn(Busy(True))
        self.assertGreater(res["cpu_backend_us"], 0)
        self.assertEqual(res["cpu_us"], 0)

    def test_no_backend_no_key(self):
        self.assertNotIn("cpu_backend_us", self.burn(Busy(False)))


if __name__ == "__main__":
    unittest.main()
