"""Starting and stopping what examples/voting/bench.py measures: Tarantool with init.lua,
Ferry with worker.php, nginx + PHP-FPM with public/index.php, each from configs generated in
a temp dir, on 127.0.0.1 free ports."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PUBLIC = os.path.join(HERE, "public")


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, what, timeout=30.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited during start (code {proc.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {port} within {timeout:.0f} s")


def cpu_seconds(pid):
    """User+system CPU of pid and all its descendants, from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    children, stats = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
        stats[int(entry)] = (int(fields[11]) + int(fields[12])) / ticks
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        total += stats.get(p, 0.0)
        todo.extend(children.get(p, []))
    return total


class Procs:
    """Started processes, stopped in reverse order (SIGTERM, then SIGKILL after 10 s)."""

    def __init__(self):
        self.procs = []

    def start(self, name, argv, log_path, **kw):
        out = open(log_path, "ab")
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, **kw)
        out.close()
        self.procs.append((name, p))
        return p

    def stop(self, proc):
        for i, (name, p) in enumerate(self.procs):
            if p is proc:
                del self.procs[i]
                break
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def stop_all(self):
        for _, p in reversed(list(self.procs)):
            self.stop(p)


def start_tarantool(procs, tmp, wal):
    port = free_port()
    data = os.path.join(tmp, f"tarantool-{wal}")
    env = dict(os.environ, VOTING_LISTEN=f"127.0.0.1:{port}", VOTING_DATA_DIR=data, VOTING_WAL_MODE=wal,
               VOTING_MEMTX_MEMORY=str(1 << 30), VOTING_LOG=os.path.join(tmp, f"tarantool-{wal}.log"))
    p = procs.start("tarantool", ["tarantool", os.path.join(HERE, "tarantool", "init.lua")],
                    os.path.join(tmp, f"tarantool-{wal}.out"), env=env, cwd=tmp)
    wait_port(port, p, "tarantool")
    return p, f"tcp://voting:voting@127.0.0.1:{port}"


def start_ferry(procs, tmp, uri, workers, fibers=False):
    port = free_port()
    os.makedirs(tmp, exist_ok=True)
    cfg = os.path.join(tmp, "ferry.yaml")
    with open(cfg, "w") as f:
        f.write(f"""server:
  address: 127.0.0.1:{port}
  static: {{dir: {json.dumps(PUBLIC)}}}
pool:
  command: [php, {json.dumps(os.path.join(HERE, "worker.php"))}]
  num_workers: {workers}
  fibers: {"true" if fibers else "false"}
  env: {{VOTING_TARANTOOL: {json.dumps(uri)}}}
admin: {{socket: {json.dumps(os.path.join(tmp, "ferry.sock"))}}}
log: {{level: warn}}
""")
    p = procs.start("ferry", [os.path.join(ROOT, "bin", "ferry"), "serve", "-c", cfg], os.path.join(tmp, "ferry.log"), cwd=tmp)
    wait_port(port, p, "ferry")
    return [p], port


def start_fpm(procs, tmp, uri, workers, persistent):
    port = free_port()
    os.makedirs(tmp, exist_ok=True)
    root = os.geteuid() == 0
    sock = os.path.join(tmp, "fpm.sock")
    with open(os.path.join(tmp, "php-fpm.conf"), "w") as f:
        f.write(f"""[global]
pid = {tmp}/php-fpm.pid
error_log = {tmp}/php-fpm.log
daemonize = no

[voting]
{"user = root" if root else ""}
listen = {sock}
listen.mode = 0666
listen.backlog = 1024
pm = static
pm.max_children = {workers}
pm.max_requests = 0
catch_workers_output = yes
env[VOTING_TARANTOOL] = {uri}
env[VOTING_TARANTOOL_PERSISTENT] = {1 if persistent else 0}
; the production setting: no stat() of every script on every request
php_admin_value[opcache.validate_timestamps] = 0
""")
    with open(os.path.join(tmp, "nginx.conf"), "w") as f:
        # the article's nginx settings, minus gzip (wrk does not ask for it)
        f.write(f"""{"user root root;" if root else ""}
worker_processes auto;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
events {{ worker_connections 1024; multi_accept on; use epoll; }}
http {{
  access_log off;
  keepalive_timeout 60;
  tcp_nodelay on;
  tcp_nopush on;
  client_body_temp_path {tmp}/nginx-body;
  fastcgi_temp_path {tmp}/nginx-fastcgi;
  proxy_temp_path {tmp}/nginx-proxy;
  uwsgi_temp_path {tmp}/nginx-uwsgi;
  scgi_temp_path {tmp}/nginx-scgi;
  types {{ image/svg+xml svg; text/html html; }}
  server {{
    listen 127.0.0.1:{port};
    root {PUBLIC};
    location /stickers/ {{ try_files $uri =404; }}
    location / {{
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME {PUBLIC}/index.php;
      fastcgi_pass unix:{sock};
    }}
  }}
}}
""")
    fpm = procs.start("php-fpm", ["php-fpm8.2", "-F", "-y", os.path.join(tmp, "php-fpm.conf")] + (["-R"] if root else []),
                      os.path.join(tmp, "php-fpm.out"))
    deadline = time.time() + 15
    while not os.path.exists(sock):
        if fpm.poll() is not None or time.time() > deadline:
            raise RuntimeError("php-fpm did not start; see " + os.path.join(tmp, "php-fpm.log"))
        time.sleep(0.05)
    nginx = procs.start("nginx", ["nginx", "-p", tmp, "-c", os.path.join(tmp, "nginx.conf"), "-g", "daemon off;"],
                        os.path.join(tmp, "nginx.out"))
    wait_port(port, nginx, "nginx")
    return [nginx, fpm], port


def check_page(port):
    """The system must serve the real page (stickers from Tarantool), not an error page."""
    deadline = time.time() + 15
    last = None
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as r:
                body = r.read().decode()
                cookie = r.headers.get("Set-Cookie", "")
                if r.status == 200 and body.count("data-id=") == 9 and cookie.startswith("voter="):
                    return cookie.split(";")[0]
                last = f"status {r.status}, {body.count('data-id=')} stickers"
        except (urllib.error.URLError, OSError) as e:
            last = str(e)
        time.sleep(0.2)
    raise RuntimeError(f"http://127.0.0.1:{port}/ does not serve the voting page: {last}")
