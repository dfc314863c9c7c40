"""bench/loadgen (the mixed scenario's load generator) against a small local HTTP/1.1 server:
per-class counts and percentiles, keep-alive, timeouts, non-2xx, the seeded class sequence."""

import http.server
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)

from lib import loadgen  # noqa: E402


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.lock = threading.Lock()
        self.paths = {}  # client port -> paths in the order received

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}"

    def handle_error(self, request, client_address):
        # loadgen hangs up on a request it timed out; that is expected here, anything else is not.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def reset(self):
        with self.lock:
            self.paths = {}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the servers under test
    disable_nagle_algorithm = True  # headers and body go out in two writes

    def do_GET(self):
        with self.server.lock:
            self.server.paths.setdefault(self.client_address[1], []).append(self.path)
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        ms = int(q.get("ms", ["0"])[0])
        if ms:
            time.sleep(ms / 1000)
        body = b"ok\n"
        self.send_response(404 if self.path.startswith("/missing") else 200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class LoadgenTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="ferry-bench-loadgen-")
        cls.bin = os.path.join(cls.tmp.name, "loadgen")
        subprocess.run(["go", "build", "-o", cls.bin, "./bench/loadgen"], cwd=os.path.dirname(BENCH), check=True,
                       timeout=300)
        cls.server = Server()
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()
        cls.tmp.cleanup()

    def setUp(self):
        self.server.reset()

    def run_loadgen(self, classes, duration=1, conns=4, seed=1, timeout_s=10):
        return loadgen.run(self.bin, self.server.url, duration, conns, classes, seed=seed, timeout_s=timeout_s)

    def test_classes_percentiles_and_keep_alive(self):
        doc = self.run_loadgen([("fast", 9, "/fast?ms=1"), ("slow", 1, "/slow?ms=60")])
        self.assertEqual([c["name"] for c in doc["classes"]], ["fast", "slow"])
        fast, slow = doc["classes"]
        for c in doc["classes"]:
            lat = c["latency_ms"]
            self.assertGreater(c["requests"], 0, c)
            self.assertEqual(lat["n"], c["requests"])
            self.assertLessEqual(lat["min"], lat["p50"])
            self.assertLessEqual(lat["p50"], lat["p90"])
            self.assertLessEqual(lat["p90"], lat["p99"])
            self.assertLessEqual(lat["p99"], lat["max"])
            self.assertAlmostEqual(c["rps"], c["requests"] / doc["duration_s"])
        self.assertGreaterEqual(slow["latency_ms"]["min"], 60)
        self.assertLess(fast["latency_ms"]["p50"], 60)
        e = doc["errors"]
        self.assertEqual((e["connect"], e["read"], e["write"], e["timeout"], e["non2xx"]), (0, 0, 0, 0, 0))
        self.assertLessEqual(e["unfinished"], 4)
        self.assertEqual(doc["requests"], fast["requests"] + slow["requests"])
        sent = fast["sent"] + slow["sent"]
        self.assertTrue(0.03 < slow["sent"] / sent < 0.25, (fast["sent"], slow["sent"]))
        # Every request the server saw came over one of the 4 connections, in full.
        self.assertEqual(len(self.server.paths), 4)
        self.assertEqual(sum(len(p) for p in self.server.paths.values()), sent)
        flat = loadgen.flatten(doc)
        self.assertEqual(flat["failed"], 0)
        self.assertEqual(flat["slow_p99_ms"], slow["latency_ms"]["p99"])
        self.assertEqual(flat["fast_requests"], fast["requests"])

    def test_timeouts_and_non2xx_are_failures(self):
        doc = self.run_loadgen([("hang", 1, "/hang?ms=3000")], conns=2, timeout_s=0.3)
        hang = doc["classes"][0]
        self.assertEqual(hang["requests"], 0)
        self.assertIsNone(hang["latency_ms"])
        self.assertGreaterEqual(doc["errors"]["timeout"], 2)
        self.assertEqual(loadgen.flatten(doc)["failed_share"], 1.0)

        doc = self.run_loadgen([("missing", 1, "/missing")], conns=1)
        self.assertGreater(doc["requests"], 0)
        self.assertEqual(doc["errors"]["non2xx"], doc["requests"])

    def test_seed_fixes_each_connections_sequence(self):
        classes = [("a", 1, "/a"), ("b", 1, "/b")]

        def first_paths(seed):
            self.server.reset()
            self.run_loadgen(classes, duration=0.3, conns=1, seed=seed)
            (paths,) = self.server.paths.values()
            self.assertGreater(len(paths), 20)
            return paths[:20]

        seq = first_paths(7)
        self.assertEqual(first_paths(7), seq)
        self.assertNotEqual(first_paths(8), seq)

    def test_only_loopback(self):
        with self.assertRaisesRegex(loadgen.LoadgenError, "loopback"):
            loadgen.run(self.bin, "http://192.0.2.1:80", 1, 1, [("a", 1, "/")])


if __name__ == "__main__":
    unittest.main()
