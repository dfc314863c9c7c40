"""roadrunner: a RoadRunner worker (spiral/roadrunner-worker's protocol, PSR7Worker) served by Ferry,
against the same PSR-7 app on Ferry's own protocol."""

import os

from lib import httpbench, report
from lib.proc import Proc, free_port, wait_http
from lib.systems import Ferry, check, q

NAME = "roadrunner"
TITLE = "RoadRunner workers on Ferry vs Ferry's own protocol"
COMPARES_REVISIONS = False
BODY = b"Hello, world\n"

RATIOS = [
    ("Ferry protocol / RoadRunner protocol (proto)", "ferry", "rr-proto"),
    ("RoadRunner protocol: proto / JSON context", "rr-proto", "rr-json"),
]

# Measured elsewhere (rr cannot be built here), quoted by issue 17: rr 2025 with ext-protobuf on hello.
RR_ITSELF = {"rps": 16700, "cpu_us": 66.7}


class FerryRR(Ferry):
    """Ferry with pool.protocol set: the worker is the RoadRunner-side test worker running app.php."""

    def __init__(self, ctx, key, label, protocol, app):
        worker = os.path.join(ctx.root, "cmd", "ferry", "testdata", "rr_worker.php")
        env = {"RR_TEST_APP": app}
        if protocol == "roadrunner-json":
            env["RR_TEST_JSON_ONLY"] = "1"
        super().__init__(ctx, key, label, worker, env=env)
        self.protocol = protocol

    def start(self):
        # Ferry.start's config, plus pool.protocol; no admin socket, no revision.
        self.port = free_port()
        self.config = os.path.join(self.dir, "ferry.yaml")
        lines = ["server:", f"  address: {q(f'127.0.0.1:{self.port}')}",
                 "pool:", f"  protocol: {self.protocol}", f"  command: [php, {q(self.worker)}]",
                 f"  num_workers: {self.workers}", "  env:"]
        lines += [f"    {k}: {q(v)}" for k, v in self.env.items()]
        lines += ["admin:", "  socket: ''", "log:", "  level: info"]
        with open(self.config, "w") as f:
            f.write("\n".join(lines) + "\n")
        proc = Proc(self.label, [self.ctx.ensure_ferry(), "serve", "-c", self.config], self._log("ferry"),
                    cwd=self.ctx.root).start()
        self.procs.append(proc)
        wait_http(proc, self.port)


def systems(ctx):
    app = os.path.join(ctx.root, "bench", "apps", "roadrunner")
    return [
        Ferry(ctx, "ferry", "Ferry protocol (Psr7Worker)", os.path.join(app, "ferry.php")),
        FerryRR(ctx, "rr-proto", "RoadRunner protocol, protobuf context", "roadrunner", os.path.join(app, "app.php")),
        FerryRR(ctx, "rr-json", "RoadRunner protocol, JSON context", "roadrunner-json", os.path.join(app, "app.php")),
    ]


def run(ctx):
    sec = report.Section(NAME, TITLE)
    sec.add("The same PSR-7 hello world (`bench/apps/roadrunner/app.php`, Nyholm) behind two PHP sides: Ferry's "
            "`Psr7Worker`, and the RoadRunner worker of `cmd/ferry/testdata/rr_worker.php`, which speaks "
            "RoadRunner's protocol as spiral/roadrunner-worker and roadrunner-http do (protobuf "
            "`http.v1.Request` decoded in plain PHP, as without ext-protobuf) and builds the same Nyholm "
            "ServerRequest as `PSR7Worker`. Ferry runs both with `pool.protocol` set accordingly. "
            f"{ctx.workers} workers each. `rr` itself cannot be built here: measured elsewhere on hello with "
            f"ext-protobuf it served {RR_ITSELF['rps']} req/s at {RR_ITSELF['cpu_us']} us of CPU per request.", "")
    started, errors = httpbench.start_all(ctx, systems(ctx), lambda s: check(s, "/", want_body=BODY,
                                                                               want_type="text/plain"))
    try:
        if not started:
            return sec.failed("no system started: " + "; ".join(errors.values()))
        results = httpbench.compare(ctx, started)
    finally:
        httpbench.stop_all(started)
    report.http_table(sec, results)
    if not any(r["iterations"] for r in results.values()):
        return sec.failed("no system completed a measurement: see the table")
    for key, err in errors.items():
        sec.add(f"- **{key} not measured**: {err}")
    ratios = httpbench.ratios(results, RATIOS, ctx.settings)
    report.ratio_table(sec, ratios)
    sec.add("### CPU time per request", "",
            "Front (the ferry process: HTTP, encoding the request, decoding the answer) and PHP (the workers) "
            "separately, from /proc over each iteration. The front's share is what the RoadRunner encoding costs "
            "Ferry; the PHP share is the worker's own protocol and PSR-7 work.", "")
    report.cpu_table(sec, results)
    sec.chart(ctx, "roadrunner_rps.svg", "roadrunner: requests per second", "requests/s", report.rps_bars(results))
    sec.data = {"results": httpbench.public(results), "ratios": ratios, "start_errors": errors, "rr_itself": RR_ITSELF}
    sec.summarize(ratios)
    cpu = {k: ((r.get("cpu_front_us") or {}).get("median", 0), (r.get("cpu_php_us") or {}).get("median", 0))
           for k, r in results.items() if r.get("cpu_front_us")}
    if cpu:
        sec.summary.append("CPU us per request (front + PHP): " +
                           ", ".join(f"{k} {f:.1f} + {p:.1f}" for k, (f, p) in cpu.items()))
    return sec
