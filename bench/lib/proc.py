"""Processes the harness starts: free ports, readiness probes, clean shutdown, RSS."""

import http.client
import json
import os
import signal
import socket
import subprocess
import time


class StartError(Exception):
    """A system under test did not start or did not answer as expected."""


def free_port():
    # The port is released before the server binds it; on a quiet loopback the window
    # is small enough, and a clash shows up as a clear StartError.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(port, path="/", headers=None, timeout=5.0):
    """One GET on 127.0.0.1:port; returns (status, headers dict lower-case, body bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, body
    finally:
        conn.close()


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over a unix socket: Ferry's admin socket."""

    def __init__(self, path, timeout=5.0):
        super().__init__("ferry", timeout=timeout)
        self.unix_path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self.unix_path)
        self.sock = s


def admin_get(sock_path, path, timeout=5.0):
    """GET path on Ferry's admin socket, decoded from JSON; raises OSError, ValueError or
    HTTPException when it cannot answer."""
    conn = UnixHTTPConnection(sock_path, timeout=timeout)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read()
        if resp.status != 200:
            raise OSError(f"admin {path}: {resp.status} {body[:200]!r}")
        return json.loads(body)
    finally:
        conn.close()


def tail(path, lines=15):
    try:
        with open(path, "rb") as f:
            data = f.read()[-8192:].decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(data.splitlines()[-lines:])


_RUNNING = set()

# Where the servers run, scheduler-wise. By default each gets its own session, and so its own
# autogroup on kernels with CONFIG_SCHED_AUTOGROUP: the CPU is shared fairly between wrk
# and each system as a whole, whatever its thread count, as between services under systemd.
# With SHARED_SESSION (run.py --shared-session) they stay in wrk's session and the
# CPU is shared per thread instead: a server with more runnable threads than wrk starves
# it, and a fast server is then capped by wrk, not by its own cost.
SHARED_SESSION = False


def scheduling():
    """One line for the report: how the CPU was shared between wrk and the servers."""
    if SHARED_SESSION:
        return "servers in wrk's session (--shared-session): CPU shared per thread"
    if autogroups_enabled():
        return "each server in its own session and scheduler autogroup: CPU shared per system"
    return "each server in its own session; autogroups off, so CPU shared per thread"


def autogroups_enabled():
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            return f.read().strip() == "1"
    except OSError:
        return False


def stop_all_procs():
    """Safety net for an interrupted run: stops whatever a scenario left running."""
    for p in list(_RUNNING):
        p.stop()


class Proc:
    """A child process leading its own process group (in its own session unless
    SHARED_SESSION), so it and its children can be signalled together by the id we
    started, without touching anything else on the machine."""

    def __init__(self, name, argv, log_path, cwd=None, env=None, stop_signal=signal.SIGTERM):
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.cwd = cwd
        self.env = env
        self.stop_signal = stop_signal
        self.popen = None

    def start(self):
        log = open(self.log_path, "ab")
        try:
            grouping = {"process_group": 0} if SHARED_SESSION else {"start_new_session": True}
            self.popen = subprocess.Popen(
                self.argv, cwd=self.cwd, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, **grouping)
        except OSError as e:
            raise StartError(f"{self.name}: cannot run {self.argv[0]}: {e}") from e
        finally:
            log.close()
        _RUNNING.add(self)
        return self

    @property
    def pid(self):
        return self.popen.pid if self.popen else None

    def alive(self):
        return self.popen is not None and self.popen.poll() is None

    def stop(self, grace=8.0):
        _RUNNING.discard(self)
        if self.popen is None or self.popen.poll() is not None:
            self._reap_group()
            return
        try:
            os.kill(self.popen.pid, self.stop_signal)
        except ProcessLookupError:
            pass
        try:
            self.popen.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self._kill_group(signal.SIGKILL)
            self.popen.wait(timeout=5)
        self._reap_group()

    def _kill_group(self, sig):
        try:
            os.killpg(self.popen.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _reap_group(self):
        # Children left behind by a crashed parent (PHP workers, fpm children) still carry
        # our process group id; they must not outlive the benchmark.
        if self.popen is not None:
            self._kill_group(signal.SIGKILL)


def wait_http(proc, port, path="/", timeout=15.0, headers=None):
    """Polls until the server answers anything on port; returns (status, headers, body)."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if proc is not None and not proc.alive():
            raise StartError(f"{proc.name} exited with code {proc.popen.returncode} before answering;"
                             f" log {proc.log_path}:\n{tail(proc.log_path)}")
        try:
            return http_get(port, path, headers=headers, timeout=5.0)
        except (OSError, http.client.HTTPException) as e:
            last = e
            time.sleep(0.1)
    where = f"; log {proc.log_path}:\n{tail(proc.log_path)}" if proc else ""
    raise StartError(f"nothing answered on 127.0.0.1:{port}{path} within {timeout:.0f}s ({last}){where}")


def wait_file(path, proc, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            return
        if not proc.alive():
            raise StartError(f"{proc.name} exited with code {proc.popen.returncode};"
                             f" log {proc.log_path}:\n{tail(proc.log_path)}")
        time.sleep(0.05)
    raise StartError(f"{proc.name} did not create {path} within {timeout:.0f}s:\n{tail(proc.log_path)}")


def stat_fields(pid):
    """The fields of /proc/<pid>/stat after the command name (state first), or None if
    the process is gone. The name may contain spaces and parentheses, so the fields
    start after the last ')'."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2:].split()


def children(pid):
    """Direct children of pid, found by scanning /proc (no psutil in the stdlib)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = stat_fields(entry)
            if fields and len(fields) > 1 and int(fields[1]) == pid:
                out.append(int(entry))
    return sorted(out)


def descendants(pid):
    """pid's children, their children, and so on."""
    out, todo = [], [pid]
    while todo:
        kids = children(todo.pop())
        out += kids
        todo += kids
    return out


TICK = 1 / os.sysconf("SC_CLK_TCK")


def cpu_split(pids):
    """(user, system) CPU seconds of pids so far; a process that is gone counts 0."""
    user = system = 0
    for pid in pids:
        fields = stat_fields(pid)
        if fields:
            user += int(fields[11])  # utime, stime: fields 14 and 15 of stat
            system += int(fields[12])
    return user * TICK, system * TICK


def cpu_seconds(pids):
    """User + system CPU time of pids so far; a process that is gone counts 0."""
    return sum(cpu_split(pids))


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None
