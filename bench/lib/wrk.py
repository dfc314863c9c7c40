"""Runs wrk and turns its text output into numbers."""

import re
import signal
import subprocess
import threading
import time

_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0, "h": 3600000.0}
_SIZE = re.compile(r"^([0-9.]+)(us|ms|s|m|h)$")


class WrkError(Exception):
    pass


def to_ms(text):
    """'812.00us' -> 0.812, '1.57ms' -> 1.57, '2.01s' -> 2010.0."""
    m = _SIZE.match(text.strip())
    if not m:
        raise WrkError(f"unexpected wrk latency value {text!r}")
    return float(m.group(1)) * _UNITS[m.group(2)]


def parse(text, eof_delimited=False):
    """Extracts rps, requests, duration, latency percentiles and error counts.

    eof_delimited: the server ends every response by closing the connection (php -S sends
    no Content-Length); wrk then counts each end of response as a read error, which is
    not a failure. Raises WrkError naming the missing line when the output is not a wrk report."""
    out = {"rps": None, "requests": None, "duration_s": None, "p50_ms": None, "p75_ms": None,
           "p90_ms": None, "p99_ms": None, "avg_ms": None, "connect_errors": 0, "read_errors": 0,
           "write_errors": 0, "timeouts": 0, "non2xx": 0}
    m = re.search(r"^Requests/sec:\s+([0-9.]+)", text, re.M)
    if not m:
        raise WrkError("wrk output has no 'Requests/sec:' line:\n" + text[-800:])
    out["rps"] = float(m.group(1))
    m = re.search(r"^\s*(\d+) requests in ([0-9.]+)(us|ms|s|m)", text, re.M)
    if not m:
        raise WrkError("wrk output has no 'N requests in T' line:\n" + text[-800:])
    out["requests"] = int(m.group(1))
    out["duration_s"] = to_ms(m.group(2) + m.group(3)) / 1000.0
    m = re.search(r"^\s*Latency\s+(\S+)", text, re.M)
    if m:
        out["avg_ms"] = to_ms(m.group(1))
    for pct in ("50", "75", "90", "99"):
        m = re.search(rf"^\s*{pct}%\s+(\S+)", text, re.M)
        if m:
            out[f"p{pct}_ms"] = to_ms(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        out["connect_errors"], out["read_errors"], out["write_errors"], out["timeouts"] = map(int, m.groups())
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if m:
        out["non2xx"] = int(m.group(1))
    read = 0 if eof_delimited else out["read_errors"]
    out["failed"] = out["non2xx"] + out["connect_errors"] + read + out["write_errors"] + out["timeouts"]
    # wrk counts a timed-out or refused request nowhere else, so they are added to the
    # attempts; a read/write error hits a request that is already counted.
    attempts = out["requests"] + out["connect_errors"] + out["timeouts"]
    out["failed_share"] = out["failed"] / attempts if attempts else 1.0
    return out


def run(url, duration, connections, threads, script=None, timeout_s=None, eof_delimited=False):
    threads = max(1, min(threads, connections))
    argv = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{int(duration)}s", "--latency"]
    if timeout_s:
        argv.append(f"--timeout={timeout_s}s")
    if script:
        argv += ["-s", script]
    argv.append(url)
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=duration + 60)
    except subprocess.TimeoutExpired as e:
        raise WrkError(f"wrk did not finish within {duration + 60}s: {' '.join(argv)}") from e
    if res.returncode != 0:
        first = (res.stderr or res.stdout).strip().splitlines()[:2]
        raise WrkError(f"wrk exited {res.returncode}: {' '.join(argv)}: {' / '.join(first)}")
    result = parse(res.stdout, eof_delimited)
    result["argv"] = " ".join(argv)
    return result


# wrk only stops on time. For a run of N requests each thread sends its share and stops;
# every `step` requests it prints how many it has sent, so the caller can place what it
# samples meanwhile on the request axis. wrk's main thread still sleeps the whole -d, so the
# caller interrupts it (SIGINT: wrk then reports as usual) once every thread is done.
COUNT_LUA = """\
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end

function init(args)
  share, step, sent = tonumber(args[1]), tonumber(args[2]), 0
  req = wrk.format()
end

function request()
  sent = sent + 1
  if sent % step == 0 or sent == share then
    io.write("sent ", id, " ", sent, "\\n")
    if sent == share then io.write("done ", id, "\\n") end
    io.stdout:flush()
  end
  if sent >= share then wrk.thread:stop() end
  return req
end
"""


def run_count(url, requests, connections, threads, script_path, on_sent=None, give_up=None, min_rate=500):
    """Runs wrk until `requests` requests were sent (a few connections' worth may still be
    in flight and are not counted). on_sent(total) is called from a reader thread as the
    count grows; wrk is stopped early once give_up() says so. min_rate (req/s) only sizes
    wrk's -d, a cap that a healthy run never hits."""
    threads = max(1, min(threads, connections))
    share = -(-requests // threads)
    step = max(100, share // 500)
    with open(script_path, "w") as f:
        f.write(COUNT_LUA)
    cap = max(60, requests // min_rate)
    argv = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{cap}s", "--latency", "-s", script_path, url,
            "--", str(share), str(step)]
    try:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        raise WrkError(f"cannot run wrk: {e}") from e
    sent, done, report = {}, set(), []

    def read():
        for line in p.stdout:
            parts = line.split()
            if len(parts) == 3 and parts[0] == "sent":
                sent[parts[1]] = int(parts[2])
                if on_sent:
                    on_sent(sum(sent.values()))
            elif len(parts) == 2 and parts[0] == "done":
                done.add(parts[1])
                if len(done) == threads and p.poll() is None:
                    p.send_signal(signal.SIGINT)
            else:
                report.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + cap + 60
    try:
        while True:
            try:
                p.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() > deadline:
                p.kill()
                p.wait()
                raise WrkError(f"wrk did not finish within {cap + 60}s: {' '.join(argv)}")
            if give_up and give_up():
                # The server is gone: no thread would ever reach its share.
                p.send_signal(signal.SIGINT)
                give_up = None
    finally:
        reader.join(timeout=5)
    err = p.stderr.read()
    if p.returncode != 0:
        first = (err or "".join(report)).strip().splitlines()[:2]
        raise WrkError(f"wrk exited {p.returncode}: {' '.join(argv)}: {' / '.join(first)}")
    result = parse("".join(report))
    result["argv"] = " ".join(argv)
    result["sent"] = sum(sent.values())
    return result
