"""CI smoke test of the burst scenario: `run.py --quick --scenario burst --burst-steps 1,10,1`
starts the three Ferry pools and both php-fpm pools one after the other, steps the load on
each, samples their worker counts, and reports every step (about 15 s)."""

import json
import os
import re
import unittest
import xml.etree.ElementTree as ET

from quickrun import QuickRun

SYSTEMS = ["ferry-fork", "ferry-exec", "ferry-fixed", "fpm-dynamic", "fpm-ondemand"]


class QuickBurstTest(QuickRun, unittest.TestCase):
    scenario = "burst"
    args = ["--burst-steps", "1,10,1"]

    def data(self):
        with open(os.path.join(self.dir, "results.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["failures"], [])
        self.assertEqual(doc["scenarios"]["burst"]["status"], "ok")
        return doc["scenarios"]["burst"]["data"]

    def test_every_system_ran_every_step(self):
        data = self.data()
        self.assertEqual(data["options"]["levels"], [1, 10, 1])
        self.assertEqual(list(data["passes"]), SYSTEMS)
        for key, passes in data["passes"].items():
            self.assertEqual(len(passes), 1, key)
            steps = passes[0]["steps"]
            self.assertEqual([s["connections"] for s in steps], [1, 10, 1], key)
            for s in steps:
                self.assertGreater(s["requests"], 0, (key, s))
                self.assertEqual(s["failed"], 0, (key, s))
                # Each request sleeps 20 ms in PHP: no latency can be shorter.
                self.assertGreaterEqual(s["p50_ms"], 20, (key, s))
                self.assertLessEqual(s["p50_ms"], s["p99_ms"], (key, s))
                self.assertIsNotNone(s["workers_end"], (key, s))

    def test_pool_sizes_were_sampled(self):
        passes = self.data()["passes"]
        for key, p in passes.items():
            self.assertGreater(len(p[0]["samples"]), 5, key)
        # The fixed pool never moves, and a forked pool's zygote is not one of its workers.
        self.assertEqual({n for _, n in passes["ferry-fixed"][0]["samples"]}, {2})
        # 10 connections on 2 workers queue at once: the forked elastic pool and ondemand grow.
        self.assertGreater(passes["ferry-fork"][0]["most"], 2)
        self.assertGreater(passes["fpm-ondemand"][0]["most"], 2)
        self.assertGreater(passes["ferry-fork"][0]["metrics"]["scale_up"], 0)

    def test_report_has_tables_verdict_and_charts(self):
        with open(os.path.join(self.dir, "report.md")) as f:
            md = f.read()
        self.assertIn("**Ferry elastic 2..16, fork** (1 pass(es)):", md)
        self.assertRegex(md, r"\| 2 \| 10 \| [0-9,]+ \| [0-9.]+ \| \*\*[0-9.]+\*\* \|")
        self.assertRegex(md, r"- (holds|does NOT hold): Ferry elastic 2\.\.16, fork's p99")
        charts = re.findall(r"!\[[^\]]*\]\(([^)]+\.svg)\)", md)
        self.assertEqual(charts, ["burst_pool.svg", "burst_p99.svg"])
        for chart in charts:
            ET.parse(os.path.join(self.dir, chart))


if __name__ == "__main__":
    unittest.main()
