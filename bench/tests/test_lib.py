"""Unit tests of the harness's parsing, statistics and drawing (no servers started, except
a throwaway stdlib HTTP server for the status check)."""

import http.server
import os
import sys
import tempfile
import threading
import unittest
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lib import httpbench, method, proc, svg, wrk  # noqa: E402
from lib.context import Context  # noqa: E402
from lib.proc import StartError, cpu_seconds, descendants  # noqa: E402
from lib.systems import System, check  # noqa: E402
from scenarios import external, relay, soak  # noqa: E402

WRK_OUT = """Running 5s test @ http://127.0.0.1:8080/
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.85ms    1.33ms  12.02ms   77.35%
    Req/Sec    14.27k     4.46k   33.71k    73.17%
  Latency Distribution
     50%  812.00us
     75%    2.39ms
     90%    3.43ms
     99%    1.02s
  58244 requests in 2.10s, 7.22MB read
  Socket errors: connect 3, read 4, write 5, timeout 6
  Non-2xx or 3xx responses: 7
Requests/sec:  27762.39
Transfer/sec:      3.44MB
"""


class WrkParseTest(unittest.TestCase):
    def test_fields(self):
        r = wrk.parse(WRK_OUT)
        self.assertEqual(r["rps"], 27762.39)
        self.assertEqual(r["requests"], 58244)
        self.assertAlmostEqual(r["duration_s"], 2.10)
        self.assertAlmostEqual(r["p50_ms"], 0.812)
        self.assertAlmostEqual(r["p99_ms"], 1020.0)
        self.assertAlmostEqual(r["avg_ms"], 1.85)
        self.assertEqual((r["connect_errors"], r["read_errors"], r["write_errors"], r["timeouts"], r["non2xx"]),
                         (3, 4, 5, 6, 7))
        self.assertEqual(r["failed"], 25)
        self.assertAlmostEqual(r["failed_share"], 25 / (58244 + 3 + 6))

    def test_eof_delimited_read_errors_are_not_failures(self):
        r = wrk.parse(WRK_OUT, eof_delimited=True)
        self.assertEqual(r["failed"], 21)

    def test_clean_run_has_no_failures(self):
        text = "\n".join(ln for ln in WRK_OUT.splitlines() if "errors" not in ln and "Non-2xx" not in ln)
        r = wrk.parse(text)
        self.assertEqual(r["failed"], 0)
        self.assertEqual(r["failed_share"], 0.0)

    def test_not_a_report(self):
        with self.assertRaisesRegex(wrk.WrkError, "Requests/sec"):
            wrk.parse("unable to connect to 127.0.0.1:1 Connection refused")
        with self.assertRaisesRegex(wrk.WrkError, "latency value"):
            wrk.to_ms("12parsecs")


class MethodTest(unittest.TestCase):
    def test_settling(self):
        self.assertFalse(method.is_settled([100, 101, 102, 100], 5, 0.03))
        self.assertTrue(method.is_settled([50, 100, 101, 102, 100, 99], 5, 0.03))
        self.assertFalse(method.is_settled([100, 101, 110, 100, 99], 5, 0.03))

    def test_alternation_and_settle_stop(self):
        calls = []
        values = {"a": iter([10, 200, 100, 100, 100, 100, 100] + [100] * 20),
                  "b": iter([10, 50, 50, 50, 50, 50, 50] + [50] * 20)}

        def measure(name):
            calls.append(name)
            return {"rps": next(values[name])}

        s = method.Settings(window=5, max_iterations=10, pause=0, warmup=True)
        st = method.alternate(["a", "b"], measure, s)
        # Warm-up once each, then strict A B A B until both settled (round 6 for "a").
        self.assertEqual(calls[:4], ["a", "b", "a", "b"])
        self.assertEqual(len(calls), 2 + 2 * 6)
        self.assertTrue(st["a"]["settled"] and st["b"]["settled"])
        r = method.paired_ratios(st["a"], st["b"], "rps", s)
        self.assertEqual((r["min"], r["median"], r["max"]), (2.0, 2.0, 2.0))

    def test_cap_and_failure(self):
        n = {"i": 0}

        def measure(name):
            if name == "bad":
                raise RuntimeError("boom")
            n["i"] += 1
            return {"rps": 100 + 10 * (n["i"] % 2)}

        s = method.Settings(window=5, max_iterations=7, pause=0, warmup=False)
        st = method.alternate(["good", "bad"], measure, s)
        self.assertFalse(st["good"]["settled"])
        self.assertEqual(len(st["good"]["iterations"]), 7)
        self.assertIn("boom", st["bad"]["error"])
        self.assertEqual(len(method.window_of(st["good"], s)), 7)


class SvgTest(unittest.TestCase):
    def test_chart_is_valid_xml_with_whiskers(self):
        doc = svg.bar_chart("t <&>", "rps", [
            {"label": "A", "value": 100, "lo": 90, "hi": 110, "group": "g1"},
            {"label": "B", "value": 50, "group": "g2"}], note="n")
        root = ET.fromstring(doc)
        rects = [e for e in root.iter() if e.tag.endswith("rect")]
        self.assertEqual(len(rects), 3)  # background + 2 bars
        texts = [e.text for e in root.iter() if e.tag.endswith("text")]
        self.assertIn("t <&>", texts)
        self.assertIn("g1", texts)
        self.assertEqual(svg.nice_max(1234), 2000)
        self.assertEqual(svg.nice_max(0.3), 0.5)


class LineChartTest(unittest.TestCase):
    def test_lines_marks_and_a_y_axis_that_shows_small_changes(self):
        doc = svg.line_chart("t <&>", "requests", "MiB", [
            {"label": "RSS", "points": [(0, 20.0), (1000, 24.5), (5000, 25.0)]},
            {"label": "PSS", "points": [(0, 19.0), (5000, 23.5)]}], marks=[(500, "warm-up")], note="n")
        root = ET.fromstring(doc)
        lines = [e for e in root.iter() if e.tag.endswith("polyline")]
        self.assertEqual(len(lines), 2)
        self.assertEqual(len(lines[0].get("points").split()), 3)
        texts = [e.text for e in root.iter() if e.tag.endswith("text")]
        self.assertIn("t <&>", texts)
        self.assertIn("warm-up", texts)
        # The y axis starts at a round number under the lowest value, not at 0.
        ys = [float(e.text) for e in root.iter() if e.tag.endswith("text") and e.get("text-anchor") == "end"]
        self.assertGreater(min(ys), 10)
        self.assertLessEqual(min(ys), 19)
        self.assertGreaterEqual(max(ys), 25)
        with self.assertRaises(ValueError):
            svg.line_chart("t", "x", "y", [{"label": "none", "points": []}])


class SoakJudgeTest(unittest.TestCase):
    @staticmethod
    def samples(rss):
        return [{"sent": sent, "VmRSS": v, "Pss": v - 100} for sent, v in rss]

    def test_growth_is_measured_from_the_end_of_warm_up(self):
        # The boot and warm-up climb does not count; 25000 -> 26000 KiB is +4%.
        r = soak.judge(self.samples([(0, 18000), (50, 24000), (100, 25000), (600, 25500), (1000, 26000)]), 1000)
        self.assertEqual(r["warm"]["sent"], 100)
        self.assertEqual(r["end"]["sent"], 1000)
        self.assertAlmostEqual(r["rss_growth"], 0.04)
        self.assertAlmostEqual(r["pss_growth"], 25900 / 24900 - 1)
        self.assertTrue(r["verdict"])

    def test_growth_over_the_limit_fails(self):
        r = soak.judge(self.samples([(0, 18000), (120, 24000), (1000, 25300)]), 1000)
        self.assertAlmostEqual(r["rss_growth"], 25300 / 24000 - 1)
        self.assertFalse(r["verdict"])

    def test_no_verdict_without_a_sample_after_warm_up(self):
        for samples in ([], self.samples([(0, 18000)]), self.samples([(0, 18000), (1000, 25000)])):
            self.assertIsNone(soak.judge(samples, 1000)["verdict"], samples)

    def test_a_heap_still_settling_is_told_from_a_growing_one(self):
        mib = 1 << 20
        warm = {"next_gc": 9.3 * mib, "heap_inuse": 6.5 * mib, "heap_idle": 4 * mib, "heap_released": 1.7 * mib}
        end = {"next_gc": 9.3 * mib, "heap_inuse": 5.9 * mib, "heap_idle": 5 * mib, "heap_released": 0.7 * mib}
        self.assertIn("still settling", soak.settling(warm, end))
        self.assertEqual(soak.settling(warm, dict(end, next_gc=12 * mib)), "")  # the live heap grew
        self.assertEqual(soak.settling(warm, dict(end, heap_idle=9 * mib)), "")  # past the ceiling
        self.assertEqual(soak.settling({}, end), "")  # a revision without /metrics

    def test_memory_of_this_process(self):
        m = soak.memory(os.getpid())
        self.assertGreater(m["VmRSS"], 1024)
        self.assertGreater(m["Pss"], 0)
        self.assertGreater(m["Threads"], 0)
        self.assertIsNone(soak.memory(2 ** 22 + 7))


class ParsersTest(unittest.TestCase):
    def test_go_bench(self):
        out = ("goos: linux\nBenchmarkEcho/pipes-2   20000   45123 ns/op\nBenchmarkEcho/tcp-2 20000 "
               "81000.5 ns/op   12 B/op\nBenchmarkEchoParallel-2 20000 9000 ns/op\nPASS\n")
        self.assertEqual(relay.parse(out), {"Echo/pipes": 45123.0, "Echo/tcp": 81000.5, "EchoParallel": 9000.0})
        with self.assertRaises(StartError):
            relay.parse("FAIL\n")

    def test_flatten_json(self):
        doc = {"meta": {"php": "8.2", "cpus": 2}, "results": [
            {"op": "select", "mode": "sync", "ops_per_sec": 100, "fibers": 1, "samples": [90, 110, 100]},
            {"op": "select", "mode": "fibers", "ops_per_sec": 900}],
            "bars": {"fibers_vs_sync": {"ratio": 9.0, "pass": True}}}
        self.assertEqual(external.metadata(doc), [("php", "8.2"), ("cpus", 2)])
        flat = external.flatten({"ratios": {"a/b": 2.0, "a/c": 3.0, "b/c": 1.5, "c/d": 1.0},
                                 "results": [{"system": "x", "rps": 5, "rps_runs": [4, 6]}]})
        self.assertEqual(flat[0], ("ratios / a/b", {"value": 2.0}, None))
        self.assertEqual(flat[-1], ("results / x", {"rps": 5.0}, (4, 6)))
        rows = external.flatten({k: v for k, v in doc.items() if k != "meta"})
        self.assertEqual(rows, [("results / select sync", {"ops_per_sec": 100.0, "fibers": 1.0}, (90, 110)),
                                ("results / select fibers", {"ops_per_sec": 900.0}, None),
                                ("bars / fibers_vs_sync", {"ratio": 9.0}, None)])
        self.assertEqual(external.chart_metrics(rows[:2], ["ops_per_sec", "fibers"]), ["ops_per_sec"])
        self.assertEqual(external.main_metric(rows[0][1]), "ops_per_sec")
        self.assertIsNone(external.MEASURES.search("iterations"))

    def test_same_label_rows_get_their_parameters(self):
        rows = [("r / scan", {"fibers": 1.0, "ops_per_sec": 5.0}, None),
                ("r / scan", {"fibers": 10.0, "ops_per_sec": 9.0}, None), ("r / ping", {"ops_per_sec": 1.0}, None)]
        self.assertEqual([r[0] for r in external.disambiguate(rows)], ["r / scan fibers=1", "r / scan fibers=10", "r / ping"])


class StreamingTest(unittest.TestCase):
    class Ctx:
        root = "."

        def __init__(self):
            self.lines = []

        def progress(self, msg):
            self.lines.append(msg)

    def test_stderr_is_shown_line_by_line_and_stdout_kept(self):
        ctx = self.Ctx()
        script = "import sys\nfor i in range(3):\n    print(f'step {i}', file=sys.stderr, flush=True)\nprint('{\"ok\": 1}')\nsys.exit(3)"
        code, out, err = external.run_streaming([sys.executable, "-c", script], ctx, timeout=30)
        self.assertEqual(code, 3)
        self.assertEqual(out.strip(), '{"ok": 1}')
        self.assertEqual(ctx.lines, ["  step 0", "  step 1", "  step 2"])
        self.assertIn("step 2", err)

    def test_a_script_past_its_time_is_killed(self):
        code, _, _ = external.run_streaming([sys.executable, "-c", "import time; time.sleep(30)"], self.Ctx(), timeout=0.5)
        self.assertIsNone(code)


class ProcTest(unittest.TestCase):
    def test_cpu_time_of_a_process_tree(self):
        # A shell whose child burns CPU for a moment: the grandchild is found, its CPU counted.
        import subprocess
        sh = subprocess.Popen(["sh", "-c", "python3 -c 'import time; t=time.time()\nwhile time.time()-t<0.3: pass\ntime.sleep(5)' & wait"])
        try:
            import time
            deadline = time.time() + 5
            while time.time() < deadline and not descendants(sh.pid):
                time.sleep(0.02)
            kids = descendants(sh.pid)
            self.assertTrue(kids, "the busy child was not found")
            time.sleep(0.6)
            self.assertGreater(cpu_seconds(kids), 0.15)
            self.assertEqual(cpu_seconds([2 ** 22 + 12345]), 0)  # no such process
        finally:
            for pid in descendants(sh.pid):
                os.kill(pid, 9)
            sh.wait()


    def test_servers_get_their_own_session_unless_shared(self):
        # Own session = own scheduler autogroup; shared = wrk's session, own process group
        # either way, so a stop still reaches the server's children.
        for shared in (False, True):
            with tempfile.TemporaryDirectory() as d:
                proc.SHARED_SESSION = shared
                p = proc.Proc("sleeper", ["sleep", "30"], os.path.join(d, "log")).start()
                try:
                    self.assertEqual(os.getpgid(p.pid), p.pid)
                    self.assertEqual(os.getsid(p.pid) == os.getsid(0), shared)
                    self.assertIn("per thread" if shared else "session", proc.scheduling())
                finally:
                    proc.SHARED_SESSION = False
                    p.stop()
                self.assertFalse(p.alive())


class Answer500(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(500)
        self.send_header("Content-Length", "4")
        self.end_headers()
        self.wfile.write(b"oops")

    def log_message(self, *args):
        pass


class StatusCheckTest(unittest.TestCase):
    def test_non_200_fails_the_run(self):
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer500)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.addCleanup(srv.shutdown)
        with tempfile.TemporaryDirectory() as d:
            ctx = Context(d, d, method.Settings(quick=True), 1, 1, 1)

            class Fake(System):
                def start(self):
                    self.port = srv.server_address[1]

            s = Fake(ctx, "fake", "fake system")
            s.start()
            with self.assertRaisesRegex(StartError, "answered 500"):
                check(s, "/")
            ok, errors = httpbench.start_all(ctx, [Fake(ctx, "fake", "fake system")], lambda x: check(x, "/"))
            self.assertEqual(ok, [])
            self.assertIn("fake", errors)
            self.assertEqual(len(ctx.failures), 1)


if __name__ == "__main__":
    unittest.main()


class H2LoadParseTest(unittest.TestCase):
    OUT = """Application protocol: h2
finished in 1.00s, 20106.00 req/s, 2.78MB/s
requests: 20106 total, 20110 started, 20106 done, 20100 succeeded, 6 failed, 0 errored, 0 timeout
status codes: 20100 2xx, 0 3xx, 2 4xx, 4 5xx
"""

    def test_counts_and_rate(self):
        from scenarios import h2
        r = h2.parse(self.OUT)
        self.assertEqual(r["requests"], 20100)
        self.assertEqual(r["rps"], 20106.0)
        self.assertEqual(r["non2xx"], 6)
        self.assertEqual(r["protocol"], "h2")

    def test_unexpected_output_is_an_error(self):
        from scenarios import h2
        with self.assertRaises(h2.H2LoadError):
            h2.parse("connect: Connection refused")


PPROF_TRACES = """File: ferry
Type: cpu
-----------+-------------------------------------------------------
      10ms   bytes.Index
             github.com/ferry-php/ferry/internal/gateway.(*headCheck).scan
             github.com/ferry-php/ferry/internal/gateway.(*conn).Read
             github.com/valyala/fasthttp.(*Server).serveConn
-----------+-------------------------------------------------------
      10ms   bytes.Index
             github.com/ferry-php/ferry/internal/listen.(*headCheck).scan
             github.com/ferry-php/ferry/internal/listen.(*Conn).Read
             github.com/valyala/fasthttp.(*Server).serveConn
-----------+-------------------------------------------------------
     1.47s   internal/runtime/syscall/linux.Syscall6
             syscall.write
             internal/poll.(*FD).Write
             net.(*netFD).Write
             net.(*conn).Write
             github.com/valyala/fasthttp.(*Server).serveConn
-----------+-------------------------------------------------------
      20ms   internal/runtime/syscall/linux.Syscall6
             syscall.read
             internal/poll.(*FD).Read
             os.(*File).Read
             github.com/ferry-php/ferry/internal/frame.(*Reader).Read
             github.com/ferry-php/ferry/internal/pool.(*Worker).readLoop
-----------+-------------------------------------------------------
      30ms   internal/runtime/syscall/linux.Syscall6
             syscall.write
             os.(*File).Write
             github.com/ferry-php/ferry/internal/pool.(*Worker).writeOnceLocked
             github.com/ferry-php/ferry/internal/pool.(*Worker).submit
             github.com/valyala/fasthttp.(*Server).serveConn
-----------+-------------------------------------------------------
       5ms   runtime.futex
             runtime.findRunnable
             runtime.schedule
             runtime.mcall
-----------+-------------------------------------------------------
"""


class ProfileBucketsTest(unittest.TestCase):
    def test_each_sample_lands_in_the_first_matching_bucket(self):
        from scenarios import profile
        got = profile.parse_traces(PPROF_TRACES)
        self.assertAlmostEqual(got.pop("gateway rest (header checks, answers)"), 0.020)
        self.assertAlmostEqual(got.pop("HTTP write (loopback send, waking wrk)"), 1.47)
        self.assertAlmostEqual(got.pop("relay reads"), 0.020)
        self.assertAlmostEqual(got.pop("relay writes"), 0.030)
        self.assertAlmostEqual(got.pop("Go scheduler, netpoll and sysmon"), 0.005)
        self.assertEqual(got, {})
