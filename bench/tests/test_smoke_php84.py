"""--php 8.4: a quick hello run with Ferry on PHP 8.4 (JIT off and on) and on 8.2 with the
JIT, beside the usual systems; and what happens without the trixie root (a clear failure of
the run, never a silent 8.2-only report). The smoke run needs the root that
scripts/trixie-root.sh makes (FERRY_TRIXIE_ROOT, or .cache/trixie-root): without it, it is
skipped and says so."""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

from quickrun import BENCH, QuickRun

sys.path.insert(0, BENCH)
from lib import php84  # noqa: E402
from lib.context import Context  # noqa: E402
from lib.method import Settings  # noqa: E402

ROOT = os.path.dirname(BENCH)
TRIXIE = php84.trixie_root(ROOT)
HAVE_ROOT = os.path.isfile(os.path.join(TRIXIE, ".ferry-stamp"))
PHP84_SYSTEMS = ["ferry-jit", "ferry-php84", "ferry-php84-jit"]
DEFAULT_SYSTEMS = ["ferry", "ferry-direct", "ferry-p1", "fpm", "fpm-preload", "php-s", "go", "go-nethttp"]


class Php84WithoutRootTest(unittest.TestCase):
    def test_a_missing_root_is_one_clear_failure_and_no_system(self):
        with tempfile.TemporaryDirectory(prefix="ferry-bench-php84-") as out:
            old = os.environ.get("FERRY_TRIXIE_ROOT")
            os.environ["FERRY_TRIXIE_ROOT"] = os.path.join(out, "no-root")
            try:
                ctx = Context(ROOT, out, Settings(quick=True), 1, 1, 1, php_versions=["8.4"])
            finally:
                if old is None:
                    del os.environ["FERRY_TRIXIE_ROOT"]
                else:
                    os.environ["FERRY_TRIXIE_ROOT"] = old
            self.assertTrue(ctx.php84)
            self.assertEqual(ctx.php84.systems("/w.php", "Ferry"), [])
            self.assertEqual(len(ctx.failures), 1)
            self.assertIn("--php 8.4: no trixie root at", ctx.failures[0])
            self.assertIn("scripts/trixie-root.sh", ctx.failures[0])
            # framework asks again after hello: neither retried nor reported twice.
            self.assertEqual(ctx.php84.systems("/w.php", "Ferry"), [])
            self.assertEqual(len(ctx.failures), 1)
            self.assertIn("not measured", ctx.php84.report_lines()[0])

    def test_without_the_flag_nothing_is_added(self):
        with tempfile.TemporaryDirectory(prefix="ferry-bench-php84-") as out:
            ctx = Context(ROOT, out, Settings(quick=True), 1, 1, 1)
            self.assertFalse(ctx.php84)
            self.assertEqual(ctx.php84.systems("/w.php", "Ferry"), [])
            self.assertEqual(ctx.php84.report_lines(), [])
            self.assertEqual(ctx.failures, [])

    def test_only_84_is_accepted(self):
        res = subprocess.run([sys.executable, os.path.join(BENCH, "run.py"), "--php", "8.3", "--list"],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(res.returncode, 2)
        self.assertIn("invalid choice: '8.3'", res.stderr)


@unittest.skipUnless(HAVE_ROOT, f"no trixie root at {TRIXIE}: run scripts/trixie-root.sh (or set "
                                "FERRY_TRIXIE_ROOT) to smoke-test --php 8.4")
class QuickHelloPhp84Test(QuickRun, unittest.TestCase):
    scenario = "hello"
    args = ["--php", "8.4", "--keep-tmp"]

    def doc(self):
        with open(os.path.join(self.dir, "results.json")) as f:
            return json.load(f)

    def test_every_php_and_jit_variant_has_numbers(self):
        doc = self.doc()
        self.assertEqual(doc["failures"], [])
        hello = doc["scenarios"]["hello"]["data"]
        self.assertEqual(sorted(hello["results"]), sorted(DEFAULT_SYSTEMS + PHP84_SYSTEMS))
        for key in PHP84_SYSTEMS + ["ferry"]:
            r = hello["results"][key]
            self.assertGreater(r["rps"]["median"], 0, key)
            self.assertGreater(r["cpu_php_us"]["median"], 0, key)
            self.assertEqual(r["iterations"][0]["non2xx"], 0, key)
        facts = hello["php84"]["php"]
        self.assertTrue(facts["8.4"].startswith("8.4."), facts)
        self.assertTrue(facts["8.2"].startswith("8.2."), facts)
        for v in ("8.2", "8.4"):
            self.assertIn('"on":true', facts[f"{v} jit on"])
            self.assertNotIn('"on":true', facts[f"{v} jit off"])
        self.assertEqual(len(hello["php84"]["ratios"]), 4)
        for ratio in hello["php84"]["ratios"] + hello["php84"]["cpu_ratios"]:
            self.assertGreater(ratio["ratio"]["median"], 0, ratio["label"])

    def test_the_84_workers_run_php_84_with_the_jit_asked_for(self):
        # Each Ferry's pool.command and flags, as its config and log left them in tmp/.
        tmp = os.path.join(self.dir, "tmp", "hello")
        for key, jit in (("ferry-php84", "off"), ("ferry-php84-jit", "tracing"), ("ferry-jit", "tracing")):
            with open(os.path.join(tmp, key, "ferry.yaml")) as f:
                conf = f.read()
            self.assertIn(f'jit: "{jit}"', conf, key)
            self.assertEqual("scripts/php84" in conf, "php84" in key, conf)
        if os.path.isfile(os.path.join(ROOT, "ext", "ferry", ".build", "modules", "ferry.so")):
            with open(os.path.join(tmp, "ferry-php84", "ferry.log")) as f:
                self.assertIn(".build-php84/modules/ferry.so", f.read())

    def test_report_has_the_ratio_tables_and_the_chart(self):
        with open(os.path.join(self.dir, "report.md")) as f:
            md = f.read()
        self.assertIn("### PHP 8.2 and PHP 8.4, JIT off and on", md)
        self.assertRegex(md, r"\| req/s, PHP 8\.4 / PHP 8\.2, JIT off \| \*\*[0-9.]+x\*\*")
        self.assertRegex(md, r"\| CPU per request, JIT on / off, PHP 8\.4 \| \*\*[0-9.]+x\*\*")
        self.assertRegex(md, r"- \*\*PHP 8\.4\*\*: 8\.4\.")
        charts = re.findall(r"!\[[^\]]*\]\(([^)]+\.svg)\)", md)
        self.assertIn("hello_php84_cpu.svg", charts)
        svg = ET.parse(os.path.join(self.dir, "hello_php84_cpu.svg"))
        self.assertIn("PHP 8.4 JIT", ET.tostring(svg.getroot(), encoding="unicode"))


if __name__ == "__main__":
    unittest.main()
