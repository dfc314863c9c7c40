"""CI smoke test of the mixed scenario: `run.py --quick --scenario mixed` starts Ferry and
nginx + php-fpm with 2 workers each, loads them with bench/loadgen, and reports both request
classes of both systems (a few seconds)."""

import json
import os
import re
import unittest
import xml.etree.ElementTree as ET

from quickrun import QuickRun


class QuickMixedTest(QuickRun, unittest.TestCase):
    scenario = "mixed"

    def test_both_systems_and_both_classes_are_measured(self):
        with open(os.path.join(self.dir, "results.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["failures"], [])
        mixed = doc["scenarios"]["mixed"]
        self.assertEqual(mixed["status"], "ok")
        results = mixed["data"]["results"]
        self.assertEqual(sorted(results), ["ferry", "fpm"])
        for key, r in results.items():
            it = r["iterations"][0]
            self.assertEqual(it["failed"], 0, key)
            for cls in ("fast", "slow"):
                self.assertGreater(it[f"{cls}_requests"], 0, (key, cls))
                p = [it[f"{cls}_{q}_ms"] for q in ("p50", "p90", "p99", "max")]
                self.assertEqual(p, sorted(p), (key, cls))
            # A slow request sleeps 200 ms in PHP; no measurement can be shorter.
            self.assertGreaterEqual(r["classes"]["slow"]["p50_ms"]["median"], 200, key)
        self.assertEqual(mixed["data"]["ratios"][0]["metric"], "fast_p99_ms")
        self.assertGreater(mixed["data"]["ratios"][0]["ratio"]["median"], 0)

    def test_report_has_class_table_verdict_and_charts(self):
        with open(os.path.join(self.dir, "report.md")) as f:
            md = f.read()
        self.assertRegex(md, r"\| Ferry \(default config\) \| fast \| [0-9.,]+ \| [0-9.,]+ \|")
        self.assertRegex(md, r"\| nginx \+ php-fpm \(static, 2 children\) \| slow \|")
        self.assertIn("**Verdict**: fast p99: Ferry", md)
        charts = re.findall(r"!\[[^\]]*\]\(([^)]+\.svg)\)", md)
        self.assertEqual(charts, ["mixed_fast_latency.svg", "mixed_slow_latency.svg", "mixed_rps.svg"])
        for chart in charts:
            ET.parse(os.path.join(self.dir, chart))


if __name__ == "__main__":
    unittest.main()
