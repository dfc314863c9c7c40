"""Unit tests of the burst scenario's parts that need no server: its step option, the reading
of Ferry's metrics, the sampler, and the verdict on issue 33's goal."""

import argparse
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lib import burstreport, poolsize  # noqa: E402
from scenarios import burst  # noqa: E402

METRICS = """# HELP ferry_worker_spawns_total Workers started, by reason.
# TYPE ferry_worker_spawns_total counter
ferry_worker_spawns_total{reason="start"} 2
ferry_worker_spawns_total{reason="scale_up"} 14
ferry_worker_restarts_total{reason="scale_down"} 13
ferry_worker_restarts_total{reason="crash"} 1
ferry_worker_spawn_seconds_bucket{le="0.001"} 0
ferry_worker_spawn_seconds_sum 0.32
ferry_worker_spawn_seconds_count 16
ferry_workers_rss_bytes 1.2e+08
"""


class BurstOptionTest(unittest.TestCase):
    def test_levels(self):
        self.assertEqual(burst.levels_arg("1,10,25,50,100,1"), (1, 10, 25, 50, 100, 1))
        for bad in ("", "1,,2", "0,10", "1,1001", "ten"):
            with self.assertRaises(argparse.ArgumentTypeError, msg=bad):
                burst.levels_arg(bad)


class MetricsTest(unittest.TestCase):
    def test_metric_values(self):
        self.assertEqual(poolsize.metric_values(METRICS, "ferry_worker_spawns_total"),
                         {'{reason="start"}': 2.0, '{reason="scale_up"}': 14.0})
        self.assertEqual(poolsize.metric_values(METRICS, "ferry_workers_rss_bytes"), {"": 1.2e8})
        self.assertEqual(poolsize.metric_values("", "ferry_workers_rss_bytes"), {})
        # A name that only begins like another is another metric.
        self.assertEqual(poolsize.metric_values(METRICS, "ferry_worker_spawn_seconds"), {})

    def test_pool_metrics(self):
        class Fake:
            admin_socket = "/nonexistent/ferry.sock"
        self.assertEqual(poolsize.ferry_pool_metrics(Fake()), {})
        orig = poolsize.admin_get
        poolsize.admin_get = lambda sock, path, timeout=2.0: METRICS
        try:
            m = poolsize.ferry_pool_metrics(Fake())
        finally:
            poolsize.admin_get = orig
        self.assertEqual((m["scale_up"], m["scale_down"], m["crash"], m["spawns"]), (14, 13, 1, 16))
        self.assertAlmostEqual(m["spawn_ms_mean"], 20.0)


class SamplerTest(unittest.TestCase):
    def test_samples_until_stopped_and_skips_unreadable_counts(self):
        calls, enough = [], threading.Event()

        def count():
            calls.append(1)
            if len(calls) >= 4:
                enough.set()
            return None if len(calls) == 2 else len(calls)

        s = poolsize.Sampler(count, time.monotonic(), 0.01)
        s.start()
        self.assertTrue(enough.wait(5))
        samples = s.stop()
        self.assertFalse(s.is_alive())
        self.assertNotIn(2, [n for _, n in samples])
        self.assertEqual([t for t, _ in samples], sorted(t for t, _ in samples))
        self.assertGreaterEqual(len(samples), 3)


def passes(*p99s):
    return [{"steps": [{"p99_ms": v} for v in p99s]}]


class VerdictTest(unittest.TestCase):
    labels = {"a": "A", "b": "B"}

    def test_holds_within_the_tie(self):
        ok, line = burstreport.verdict({"a": passes(20.9, 100, 50), "b": passes(20.0, 120, 48)}, self.labels,
                                       (1, 50, 1), "a", "b")
        self.assertTrue(ok, line)

    def test_a_step_over_fails_and_is_named(self):
        ok, line = burstreport.verdict({"a": passes(20, 200, 20), "b": passes(20, 120, 20)}, self.labels,
                                       (1, 50, 1), "a", "b")
        self.assertFalse(ok)
        self.assertIn("step 2 (50 connections: 200.0 ms against 120.0)", line)

    def test_one_side_missing(self):
        ok, line = burstreport.verdict({"a": passes(20), "b": []}, self.labels, (1,), "a", "b")
        self.assertIsNone(ok)
        self.assertIn("not measured", line)


if __name__ == "__main__":
    unittest.main()
