"""CI smoke test of the soak scenario: `run.py --quick --scenario soak` sends Ferry 20,000
hello requests (wrk stopping itself after its share), samples the front's memory meanwhile
and charts it over the requests (a few seconds)."""

import json
import os
import re
import unittest
import xml.etree.ElementTree as ET

from quickrun import QuickRun


class QuickSoakTest(QuickRun, unittest.TestCase):
    scenario = "soak"

    def test_memory_is_sampled_along_the_requests(self):
        with open(os.path.join(self.dir, "results.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["failures"], [])
        soak = doc["scenarios"]["soak"]
        self.assertEqual(soak["status"], "ok")
        self.assertEqual(soak["data"]["requests"], 20000)
        run = soak["data"]["runs"]["ferry"]
        # wrk stops once it has sent its share: no more, and at most the connections' worth
        # still in flight then is lost.
        self.assertLessEqual(run["wrk"]["requests"], 20000)
        self.assertGreater(run["wrk"]["requests"], 20000 - 2 * doc["connections"])
        self.assertGreaterEqual(run["wrk"]["sent"], 20000)
        samples = run["samples"]
        self.assertGreaterEqual(len(samples), 2)
        self.assertEqual(samples[0]["sent"], 0)
        self.assertEqual(samples[-1]["sent"], run["wrk"]["sent"])
        self.assertEqual([s["sent"] for s in samples], sorted(s["sent"] for s in samples))
        for s in samples:
            self.assertGreater(s["VmRSS"], 4096, s)
            self.assertGreater(s["Pss"], 0, s)
            self.assertEqual(s["VmRSS"], s["RssAnon"] + s["RssFile"] + s["RssShmem"], s)
        self.assertLess(run["warm"]["sent"], run["end"]["sent"])
        self.assertGreater(run["go_warm"]["heap_inuse"], 0)
        self.assertGreater(run["go_end"]["heap_inuse"], 0)

    def test_report_has_table_and_chart(self):
        with open(os.path.join(self.dir, "report.md")) as f:
            md = f.read()
        self.assertRegex(md, r"\| Ferry \(this tree\) \| [0-9,]+ \| [0-9,]+ \|")
        self.assertIn("the 5% limit is not applied", md)
        charts = re.findall(r"!\[[^\]]*\]\(([^)]+\.svg)\)", md)
        self.assertEqual(charts, ["soak_rss.svg"])
        root = ET.parse(os.path.join(self.dir, charts[0])).getroot()
        self.assertEqual(len([e for e in root.iter() if e.tag.endswith("polyline")]), 2)  # RSS and PSS


if __name__ == "__main__":
    unittest.main()
