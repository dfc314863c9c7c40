"""Unit tests of lib/phpapp.py and bench/apps/symfony's record.php and preload.php, on a
tiny PHP app in a temp dir and throwaway stdlib HTTP servers (no framework, no Ferry)."""

import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lib import method, phpapp  # noqa: E402
from lib.context import Context  # noqa: E402
from lib.proc import StartError  # noqa: E402
from lib.systems import IS_ROOT, System  # noqa: E402

FILES = {
    "autoload.php": """<?php
spl_autoload_register(static function (string $c): void {
    $f = __DIR__ . '/src/' . str_replace('\\\\', '/', $c) . '.php';
    if (is_file($f)) { require $f; }
});
""",
    "src/Demo/Named.php": "<?php namespace Demo; interface Named { public function name(): string; }\n",
    "src/Demo/Greets.php": "<?php namespace Demo; trait Greets { public function greet(): string { return 'hi'; } }\n",
    "src/Demo/Base.php": "<?php namespace Demo; abstract class Base implements Named {}\n",
    "src/Demo/Page.php": "<?php namespace Demo; final class Page extends Base { use Greets; "
                         "public function name(): string { return 'page'; } }\n",
    "src/Demo/Unused.php": "<?php namespace Demo; final class Unused {}\n",
    "public/index.php": "<?php require dirname(__DIR__) . '/autoload.php'; $p = new Demo\\Page(); "
                        "echo $p->name(), ' ', $p->greet(), ' ', $_SERVER['REQUEST_URI'];\n",
}
DEMO = ["Demo\\Named", "Demo\\Greets", "Demo\\Base", "Demo\\Page"]


class RecordPreloadTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="ferry-bench-phpapp-")
        self.addCleanup(self.tmp.cleanup)
        self.app = os.path.join(self.tmp.name, "app")
        for rel, text in FILES.items():
            path = os.path.join(self.app, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)

    def record(self):
        return phpapp.record_preload(self.app, os.path.join(self.app, "public", "index.php"), "/x?y=1", {},
                                     os.path.join(self.app, "autoload.php"), self.tmp.name)

    def preload(self, listing, code):
        flags = ["-d", "opcache.enable_cli=1", "-d", f"opcache.preload={phpapp.PRELOADER}"]
        if IS_ROOT:
            flags += ["-d", "opcache.preload_user=root"]
        return subprocess.run(["php"] + flags + ["-r", code], env=dict(os.environ, FERRY_BENCH_PRELOAD=listing),
                              capture_output=True, text=True, timeout=60)

    def test_records_the_classes_the_request_declared_with_their_files(self):
        listing, n, body = self.record()
        self.assertEqual(body, "page hi /x?y=1")
        with open(listing) as f:
            doc = json.load(f)
        self.assertEqual(doc["autoload"], [os.path.join(self.app, "autoload.php")])
        self.assertEqual(doc["recorded_from"], "/x?y=1")
        # Internal classes and the unused one are not listed; interfaces and traits come first.
        names = [c for c, _ in doc["classes"]]
        self.assertEqual(names[:2], DEMO[:2])
        self.assertEqual(sorted(names[2:]), sorted(DEMO[2:]))
        self.assertEqual(n, len(DEMO))
        for name, file in doc["classes"]:
            self.assertEqual(file, os.path.join(self.app, "src", name.replace("\\", "/") + ".php"))

    def test_preload_declares_them_before_any_script_runs(self):
        listing, _, _ = self.record()
        # No autoloader in this script: the classes exist only if preloading declared them.
        res = self.preload(listing, "foreach (['Demo\\\\Page', 'Demo\\\\Unused'] as $c) "
                                    "{ echo $c, '=', (int) class_exists($c, false), ' '; } "
                                    "echo (int) interface_exists('Demo\\\\Named', false), (new Demo\\Page())->greet();")
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertEqual(res.stdout, "Demo\\Page=1 Demo\\Unused=0 1hi")
        self.assertIn("preload.php: 4 of 4 recorded classes preloaded", res.stderr)

    def test_preload_names_what_it_could_not_load(self):
        listing, _, _ = self.record()
        with open(listing) as f:
            doc = json.load(f)
        doc["classes"].append(["Demo\\Ghost", os.path.join(self.app, "src", "Demo", "Unused.php")])
        with open(listing, "w") as f:
            json.dump(doc, f)
        res = self.preload(listing, "echo (int) class_exists('Demo\\\\Unused', false);")
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn("preload.php: 4 of 5 recorded classes preloaded; not preloaded: Demo\\Ghost (not declared by",
                      res.stderr)

    def test_a_failing_front_controller_is_a_start_error(self):
        with open(os.path.join(self.app, "public", "index.php"), "w") as f:
            f.write("<?php throw new RuntimeException('no boot');\n")
        with self.assertRaisesRegex(StartError, "no boot"):
            self.record()


class Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = self.server.body
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class SameAnswersTest(unittest.TestCase):
    def system(self, body):
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
        srv.body = body
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        s = System(Context(tmp.name, tmp.name, method.Settings(quick=True), 1, 1, 1), "s", f"system {body[:20]!r}")
        s.port = srv.server_address[1]
        return s

    def test_the_same_body_everywhere_passes_and_a_different_one_fails(self):
        checker = phpapp.SameAnswers([("/", 200, "application/json", None)])
        checker(self.system(b'{"a": 1}'))
        checker(self.system(b'{"a": 1}'))
        with self.assertRaisesRegex(StartError, "differs from system"):
            checker(self.system(b'{"a": 2}'))

    def test_json_without_ignores_only_the_named_keys(self):
        checker = phpapp.SameAnswers([("/", 200, "application/json", phpapp.json_without("pid"))])
        checker(self.system(b'{"a": 1, "pid": 10}'))
        checker(self.system(b'{"a": 1, "pid": 20}'))
        with self.assertRaisesRegex(StartError, "differs"):
            checker(self.system(b'{"a": 3, "pid": 20}'))

    def test_cookie_script_sends_one_cookie_header(self):
        self.assertEqual(phpapp.cookie_script('s=a"b'), 'wrk.headers["Cookie"] = "s=a\\"b"\n')


if __name__ == "__main__":
    unittest.main()
