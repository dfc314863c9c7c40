"""Unit tests of the memory and respawn scenarios' readings: smaps_rollup per process and per
process tree, Go durations and log times from Ferry's log, percentiles."""

import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lib import smaps  # noqa: E402
from lib.proc import children  # noqa: E402
from scenarios import respawn  # noqa: E402


class FakeProc:
    def __init__(self, pid):
        self.pid = pid


class FakeFerry:
    kind = "ferry"

    def __init__(self, pid, workers):
        self.procs = [FakeProc(pid)]
        self.workers = workers

    def worker_pids(self):
        return self.workers


class SmapsTest(unittest.TestCase):
    def test_rollup_of_this_process(self):
        r = smaps.rollup(os.getpid())
        self.assertGreater(r["rss"], 1024)
        self.assertLessEqual(r["pss"], r["rss"])
        self.assertLessEqual(r["uss"], r["pss"])
        self.assertEqual(r["uss"], r["private_clean"] + r["private_dirty"])

    def test_a_process_that_is_gone_reads_none(self):
        p = subprocess.Popen(["true"])
        p.wait()
        self.assertIsNone(smaps.rollup(p.pid))

    def test_tree_roles_sums_and_per_worker(self):
        # A front with two children, one of them a worker per the admin socket: the other is
        # what a zygote looks like from outside (a PHP process that is not a worker).
        tree = subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30 & wait"])
        try:
            deadline = time.monotonic() + 5
            while len(children(tree.pid)) < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
            kids = children(tree.pid)
            self.assertEqual(len(kids), 2)
            system = FakeFerry(tree.pid, [kids[0]])
            self.assertEqual(smaps.tree_roles(system), [(tree.pid, "ferry"), (kids[0], "worker"), (kids[1], "zygote")])
            m = smaps.measure(system)
            self.assertEqual(len(m["processes"]), 3)
            self.assertEqual(m["workers"], 1)
            for k in smaps.MEASURES:
                self.assertEqual(m["total"][k], sum(p[k] for p in m["processes"]))
                self.assertEqual(m["per_worker"][k], m["processes"][1][k])
            self.assertEqual(m["roles"]["zygote"]["n"], 1)
        finally:
            for pid in children(tree.pid):
                os.kill(pid, 9)
            tree.wait()


class RespawnParseTest(unittest.TestCase):
    def test_go_durations(self):
        self.assertEqual(respawn.go_ms("3ms"), 3.0)
        self.assertEqual(respawn.go_ms("0s"), 0.0)
        self.assertEqual(respawn.go_ms("1.234s"), 1234.0)
        self.assertEqual(respawn.go_ms("1m2.5s"), 62500.0)
        self.assertAlmostEqual(respawn.go_ms("850µs"), 0.85)
        for bad in ("", "3", "ms", "3ms junk"):
            with self.assertRaises(ValueError, msg=bad):
                respawn.go_ms(bad)

    def test_log_lines(self):
        log = ('time=2026-11-28T01:25:00.827Z level=ERROR msg="worker died" pid=14082 status="signal: killed"\n'
               'time=2026-11-28T01:25:00.828Z level=INFO msg="worker ready" pid=14134 boot=3ms\n')
        self.assertEqual(respawn.READY.findall(log), [("14134", "3ms")])
        (t, pid), = respawn.DIED.findall(log)
        self.assertEqual(pid, "14082")
        self.assertAlmostEqual(respawn.log_time(t) % 60, 0.827, places=3)

    def test_stats_p90_is_a_measured_value(self):
        st = respawn.stats([float(v) for v in range(1, 11)])
        self.assertEqual((st["median"], st["p90"], st["max"], st["min"]), (5.5, 9.0, 10.0, 1.0))
        self.assertEqual(respawn.stats([4.0])["p90"], 4.0)
        self.assertIsNone(respawn.stats([]))


if __name__ == "__main__":
    unittest.main()
