"""CI smoke test: `run.py --quick --scenario hello` really starts every system, measures
them, and writes a report and results.json full of numbers."""

import json
import os
import re
import unittest
import xml.etree.ElementTree as ET

from quickrun import QuickRun

SYSTEMS = ["ferry", "ferry-direct", "ferry-p1", "fpm", "fpm-preload", "php-s", "go", "go-nethttp"]


class QuickHelloTest(QuickRun, unittest.TestCase):
    scenario = "hello"

    def test_results_json_has_numbers_for_every_system(self):
        with open(os.path.join(self.dir, "results.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["failures"], [])
        hello = doc["scenarios"]["hello"]
        self.assertEqual(hello["status"], "ok")
        results = hello["data"]["results"]
        self.assertEqual(sorted(results), sorted(SYSTEMS))
        for key in SYSTEMS:
            r = results[key]
            self.assertEqual(len(r["iterations"]), 1, key)
            self.assertGreater(r["rps"]["median"], 0, key)
            self.assertGreater(r["p99_ms"]["median"], 0, key)
            self.assertGreaterEqual(r["p99_ms"]["median"], r["p50_ms"]["median"], key)
            self.assertEqual(r["iterations"][0]["non2xx"], 0, key)
        for ratio in hello["data"]["ratios"]:
            self.assertGreater(ratio["ratio"]["median"], 0, ratio["label"])
        rss = hello["data"]["memory_after_boot"]["ferry"]["rss_kib"]
        self.assertEqual(len(rss), doc["workers"])
        self.assertTrue(all(r > 1024 for r in rss), rss)

    def test_report_has_tables_and_charts(self):
        with open(os.path.join(self.dir, "report.md")) as f:
            md = f.read()
        self.assertRegex(md, r"\| Ferry \(pipes, pipeline 32\) \| [0-9,]+ \|")
        self.assertRegex(md, r"\| Ferry / nginx\+php-fpm \| \*\*[0-9.]+x\*\*")
        charts = re.findall(r"!\[[^\]]*\]\(([^)]+\.svg)\)", md)
        self.assertIn("hello_rps.svg", charts)
        for chart in charts:
            ET.parse(os.path.join(self.dir, chart))
        self.assertRegex(self.proc.stdout, r"Ferry / nginx\+php-fpm: [0-9.]+x")

    def test_no_server_left_running(self):
        # Every server was started with the results dir in its config path; none may survive.
        leftovers = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if self.out.name in cmd:
                leftovers.append(cmd)
        self.assertEqual(leftovers, [])


if __name__ == "__main__":
    unittest.main()
