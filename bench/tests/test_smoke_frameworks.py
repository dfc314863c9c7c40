"""CI smoke tests of the symfony and laravel scenarios: `run.py --quick --scenario NAME`
serves php/symfony's and php/laravel's test apps on Ferry, nginx + php-fpm and nginx +
php-fpm + preload, checks that they answer alike, and reports all three with the paired
ratios (about 10 s each)."""

import json
import os
import re
import unittest
import xml.etree.ElementTree as ET

from quickrun import QuickRun

SYSTEMS = ["ferry", "ferry-direct", "fpm", "fpm-preload"]
RATIOS = ["Ferry / nginx+php-fpm", "Ferry direct / Ferry", "Ferry / nginx+php-fpm+preload", "php-fpm+preload / php-fpm"]


class FrameworkQuickRun(QuickRun):
    ferry_label = None

    def scenario_doc(self):
        with open(os.path.join(self.dir, "results.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["failures"], [])
        sec = doc["scenarios"][self.scenario]
        self.assertEqual(sec["status"], "ok", sec["reason"])
        return sec

    def test_every_system_is_measured_with_cpu_per_request(self):
        data = self.scenario_doc()["data"]
        self.assertEqual(sorted(data["results"]), sorted(SYSTEMS))
        for key in SYSTEMS:
            r = data["results"][key]
            it = r["iterations"][0]
            self.assertGreater(r["rps"]["median"], 0, key)
            self.assertEqual(it["non2xx"], 0, key)
            self.assertEqual(it["failed"], 0, key)
            self.assertGreaterEqual(it["p99_ms"], it["p90_ms"], key)
            self.assertGreaterEqual(it["p90_ms"], it["p50_ms"], key)
            # Every system runs PHP for every request: its workers or children must have spent CPU.
            self.assertGreater(r["cpu_php_us"]["median"], 0, key)
        self.assertEqual([r["label"] for r in data["ratios"]], RATIOS)
        for r in data["ratios"]:
            self.assertGreater(r["ratio"]["median"], 0, r["label"])

    def test_preload_loaded_every_recorded_class(self):
        data = self.scenario_doc()["data"]
        n = data["preloaded_classes"]
        self.assertGreater(n, 50)
        self.assertEqual(data["preload"]["fpm-preload"], f"{n} of {n} recorded classes preloaded")

    def test_report_has_tables_ratios_and_charts(self):
        with open(os.path.join(self.dir, "report.md")) as f:
            md = f.read()
        self.assertIn(f"## {self.scenario}: ", md)
        self.assertRegex(md, rf"\| {re.escape(self.ferry_label)} \| [0-9,]+ \|")
        self.assertRegex(md, r"\| Ferry / nginx\+php-fpm\+preload \| \*\*[0-9.]+x\*\*")
        self.assertIn("### Latency percentiles", md)
        self.assertIn("### CPU time per request", md)
        charts = re.findall(r"!\[[^\]]*\]\(([^)]+\.svg)\)", md)
        self.assertEqual(charts, [f"{self.scenario}_rps.svg", f"{self.scenario}_p99.svg", f"{self.scenario}_cpu.svg"])
        for chart in charts:
            ET.parse(os.path.join(self.dir, chart))
        self.assertRegex(self.proc.stdout, r"Ferry / nginx\+php-fpm: [0-9.]+x")


class QuickSymfonyTest(FrameworkQuickRun, unittest.TestCase):
    scenario = "symfony"
    ferry_label = "Ferry (Symfony Runtime)"


class QuickLaravelTest(FrameworkQuickRun, unittest.TestCase):
    scenario = "laravel"
    ferry_label = "Ferry (ferry-laravel)"


if __name__ == "__main__":
    unittest.main()
