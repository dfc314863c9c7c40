"""CI smoke tests of the memory and respawn scenarios (issue 33): `run.py --quick --scenario
memory` reads the process trees of Ferry (fork and exec) and nginx + php-fpm on every app
(about 40 s); `--scenario respawn` kills workers of both Ferrys and times their replacement
(a few seconds)."""

import json
import os
import re
import unittest
import xml.etree.ElementTree as ET

from quickrun import QuickRun

MODES = ("fork", "exec", "fpm", "refork")


def scenario(test):
    with open(os.path.join(test.dir, "results.json")) as f:
        doc = json.load(f)
    test.assertEqual(doc["failures"], [])
    sec = doc["scenarios"][test.scenario]
    test.assertEqual(sec["status"], "ok", sec["reason"])
    return sec


class QuickMemoryTest(QuickRun, unittest.TestCase):
    scenario = "memory"
    timeout = 400

    def test_every_process_of_every_system_is_read(self):
        data = scenario(self)["data"]
        self.assertEqual(data["workers"], 4)  # the scenario's own default, without --workers
        self.assertEqual(sorted(data["apps"]), sorted(["hello", "framework", "laravel", "symfony"]))
        for name, app in data["apps"].items():
            for mode in MODES:
                key = f"{name}-{mode}"
                m = app["measured"][key]["memory"]
                self.assertEqual(m["workers"], 4, key)
                roles = {r: v["n"] for r, v in m["roles"].items()}
                want = {"fork": {"ferry": 1, "zygote": 1, "worker": 4}, "exec": {"ferry": 1, "worker": 4},
                        "refork": {"ferry": 1, "zygote": 1, "worker": 4}}
                if mode in want:
                    self.assertEqual(roles, want[mode], key)
                else:
                    self.assertEqual(roles["fpm master"], 1, key)
                    self.assertGreaterEqual(roles["nginx"], 2, key)
                for p in m["processes"]:
                    self.assertGreater(p["rss"], 0, (key, p))
                    self.assertLessEqual(p["uss"], p["pss"], (key, p))
                    self.assertLessEqual(p["pss"], p["rss"], (key, p))
                self.assertGreater(app["measured"][key]["rps"], 0, key)
                self.assertGreater(app["results"][key]["rps"]["median"], 0, key)
            # Forked workers share what the zygote booted: each owns less than an exec'd one.
            fork, exec_ = (app["measured"][f"{name}-{m}"]["memory"]["per_worker"]["uss"] for m in ("fork", "exec"))
            self.assertLess(fork, exec_, name)

    def test_report_has_a_table_per_app_and_the_chart(self):
        with open(os.path.join(self.dir, "report.md")) as f:
            md = f.read()
        for name in ("hello", "framework", "laravel", "symfony"):
            self.assertIn(f"### {name}: ", md)
        self.assertRegex(md, r"\| Ferry, boot: fork \| 6 \(4 workers\) \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+x \|")
        self.assertRegex(md, r"\| hello: req/s, Ferry fork / Ferry exec \| \*\*[0-9.]+x\*\*")
        charts = re.findall(r"!\[[^\]]*\]\(([^)]+\.svg)\)", md)
        self.assertEqual(charts, ["memory_pss.svg"])
        root = ET.parse(os.path.join(self.dir, charts[0])).getroot()
        self.assertEqual(len([e for e in root.iter() if e.tag.endswith("rect")]), 1 + 16)  # background + bars


class QuickRespawnTest(QuickRun, unittest.TestCase):
    scenario = "respawn"

    def test_each_kill_is_replaced_and_timed(self):
        data = scenario(self)["data"]
        self.assertEqual(data["kills"], 3)
        for name in ("hello", "laravel"):
            runs = data["apps"][name]["runs"]
            for mode in ("fork", "exec"):
                r = runs[f"{name}-{mode}"]
                self.assertEqual(len(r["kills"]), 3, (name, mode))
                for k in r["kills"]:
                    self.assertNotEqual(k["new_pid"], k["pid"])
                    self.assertGreaterEqual(k["boot_ms"], 0)
                    # boot is printed rounded to the millisecond, and wall also holds noticing the death.
                    self.assertGreaterEqual(k["wall_ms"] + 1, k["boot_ms"], k)
            self.assertLess(runs[f"{name}-fork"]["wall_ms"]["median"], runs[f"{name}-exec"]["wall_ms"]["median"], name)

    def test_report_has_the_table_and_chart(self):
        with open(os.path.join(self.dir, "report.md")) as f:
            md = f.read()
        self.assertRegex(md, r"\| laravel \| fork \| 3 \| [0-9.]+ / [0-9.]+ / [0-9.]+ \|")
        self.assertIn("Goal (Laravel, fork, under 5 ms)", md)
        charts = re.findall(r"!\[[^\]]*\]\(([^)]+\.svg)\)", md)
        self.assertEqual(charts, ["respawn.svg"])
        ET.parse(os.path.join(self.dir, charts[0]))


if __name__ == "__main__":
    unittest.main()
