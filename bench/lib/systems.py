"""The systems under test, each started on 127.0.0.1 with a free port and its own
generated configuration in the run's temp dir, and stopped afterwards."""

import http.client
import json
import os
import re
import shutil
import signal
import subprocess

from .proc import (Proc, StartError, admin_get, children, descendants, free_port, http_get, rss_kib, stat_fields, wait_file,
                   wait_http)

IS_ROOT = os.geteuid() == 0
FPM_BIN = shutil.which("php-fpm8.2") or "/usr/sbin/php-fpm8.2"
NGINX_BIN = shutil.which("nginx") or "/usr/sbin/nginx"


def ext_so(root):
    """Where `make build` (ext/ferry/build.sh) leaves the C extension."""
    return os.path.join(root, "ext", "ferry", ".build", "modules", "ferry.so")


def q(s):
    # A JSON string is a valid double-quoted YAML scalar.
    return json.dumps(str(s))


class System:
    """Base: a name, a port, processes to stop, and the PHP processes to weigh."""

    kind = "?"
    eof_delimited = False  # see wrk.parse

    def __init__(self, ctx, key, label):
        self.ctx = ctx
        self.key = key
        self.label = label
        self.port = None
        self.procs = []
        # Per scenario, so that one scenario's logs do not overwrite another's.
        self.dir = ctx.dir(ctx.scenario, key)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        raise NotImplementedError

    def stop(self):
        for p in reversed(self.procs):
            p.stop()
        self.procs = []

    def php_pids(self):
        return []

    def worker_pids(self):
        """The PHP processes that serve requests (php_pids without a zygote)."""
        return self.php_pids()

    def cpu_pids(self):
        """(front, php): the system's processes split into the HTTP front (Ferry, nginx,
        a Go server) and the PHP processes, for CPU time per request."""
        php = set(self.php_pids())
        every = []
        for p in self.procs:
            every += [p.pid] + descendants(p.pid)
        return [p for p in every if p not in php], sorted(php)

    def health(self):
        """None while every process of the system runs, else why it stopped."""
        for p in self.procs:
            if not p.alive():
                rc = p.popen.returncode
                how = f"was killed by signal {-rc}" if rc < 0 else f"exited with code {rc}"
                return f"{p.name} {how} (log {p.log_path})"
        return None

    def idle_rss(self):
        """RSS (KiB) of each PHP process serving this system, right now."""
        return [r for r in (rss_kib(p) for p in self.worker_pids()) if r]

    def _log(self, name):
        return os.path.join(self.dir, f"{name}.log")


class Ferry(System):
    kind = "ferry"
    pool_extra = {}  # more `pool:` keys (the burst scenario's boot and elastic sizes), set on an instance

    def __init__(self, ctx, key, label, worker, pipeline=None, admin=False, env=None, workers=None, fibers=False,
                 revision=None, command=None, dir=None, php=None, server=None, boot=None):
        super().__init__(ctx, key, label)
        # boot: pool.boot (fork, exec); None leaves Ferry's default.
        self.boot = boot
        # server: extra `server:` yaml lines (already indented), e.g. the h2 scenario's tls block.
        self.server_lines = server or []
        # revision: a lib.revision.Revision (--ferry-rev) whose binary runs from its worktree.
        self.revision = revision
        self.fibers = fibers
        self.worker = worker
        # command: the whole pool.command (a list) instead of [php, worker]; dir: pool.dir;
        # php: the pool.php map (jit, ini, ...), for apps started as their docs say.
        self.command = command
        self.pool_dir = dir
        self.php = php or {}
        self.pipeline = pipeline
        self.admin = admin
        self.env = env or {}
        self.workers = workers or ctx.workers
        self.config = None

    def start(self):
        self.port = free_port()
        self.config = os.path.join(self.dir, "ferry.yaml")
        sock = self.ctx.sock(f"{self.ctx.scenario[:8]}-{self.key}-admin.sock") if self.admin else ""
        self.admin_socket = sock
        lines = ["server:", f"  address: {q(f'127.0.0.1:{self.port}')}", *self.server_lines,
                 "pool:", f"  command: [{', '.join(q(w) for w in (self.command or ['php', self.worker]))}]",
                 f"  num_workers: {self.workers}"]
        if self.boot:
            lines.append(f"  boot: {self.boot}")
        if self.pool_dir:
            lines.append(f"  dir: {q(self.pool_dir)}")
        if self.php:
            lines.append("  php:")
            for k, v in self.php.items():
                if isinstance(v, dict):
                    lines.append(f"    {k}:")
                    lines += [f"      {kk}: {q(vv)}" for kk, vv in v.items()]
                else:
                    lines.append(f"    {k}: {q(v)}")
        if self.pipeline:
            lines.append(f"  pipeline: {self.pipeline}")
        lines += [f"  {k}: {v}" for k, v in self.pool_extra.items()]
        if self.fibers:
            lines += ["  fibers: true", "  max_concurrency: 64"]
        if self.env:
            lines.append("  env:")
            lines += [f"    {k}: {q(v)}" for k, v in self.env.items()]
        lines += ["admin:", f"  socket: {q(sock)}", "log:", "  level: info"]
        with open(self.config, "w") as f:
            f.write("\n".join(lines) + "\n")
        binary = self.revision.bin if self.revision else self.ctx.ensure_ferry()
        cwd = self.revision.root if self.revision else self.ctx.root
        proc = Proc(self.label, [binary, "serve", "-c", self.config], self._log("ferry"), cwd=cwd).start()
        self.procs.append(proc)
        wait_http(proc, self.port)

    def php_pids(self):
        # Every PHP process: with pool.boot: fork the workers are the zygote's children,
        # not Ferry's, and the zygote is PHP too. After a refork the workers and their
        # mold are outside Ferry's tree: the admin socket names them.
        if not self.procs:
            return []
        pids = set(descendants(self.procs[0].pid))
        if self.admin:
            try:
                workers = {w["PID"] for w in admin_get(self.admin_socket, "/workers") if w.get("PID")}
            except (OSError, ValueError, http.client.HTTPException):
                workers = set()
            pids |= workers
            for w in workers:
                f = stat_fields(w)
                if f and int(f[1]) > 1 and int(f[1]) != self.procs[0].pid:
                    pids.add(int(f[1]))
        return sorted(pids)

    def worker_pids(self):
        """The workers alone, without the zygote: the admin socket's /workers when it is
        on; otherwise the PHP processes that have no child (a zygote has its workers)."""
        if not self.procs:
            return []
        if self.admin:
            try:
                return sorted(w["PID"] for w in admin_get(self.admin_socket, "/workers") if w.get("PID"))
            except (OSError, ValueError, http.client.HTTPException):
                pass
        php = self.php_pids()
        return [p for p in php if not children(p)]

    def workers_table(self):
        """`ferry workers` output (needs the admin socket), or None."""
        if not self.admin or not self.procs:
            return None
        try:
            binary = self.revision.bin if self.revision else self.ctx.ferry_bin
            res = subprocess.run([binary, "workers", "-c", self.config], capture_output=True,
                                 text=True, timeout=10, cwd=self.ctx.root)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return res.stdout if res.returncode == 0 else None

    @staticmethod
    def parse_workers_rss(table):
        """RSS column of `ferry workers` in KiB (it prints e.g. '26.4 MiB')."""
        out = []
        for m in re.finditer(r"([0-9.]+)\s*(KiB|MiB|GiB)", table or ""):
            out.append(float(m.group(1)) * {"KiB": 1, "MiB": 1024, "GiB": 1024 * 1024}[m.group(2)])
        return out


class NginxFpm(System):
    """nginx in front of php-fpm (pm=static) over a unix socket, every request to one script."""

    kind = "fpm"
    pm = None  # the pool's pm lines instead of pm = static (the burst scenario's dynamic and ondemand), per instance

    def __init__(self, ctx, key, label, script, preload=None, workers=None, env=None):
        super().__init__(ctx, key, label)
        self.script = script
        self.preload = preload
        self.workers = workers or ctx.workers
        # env: added to php-fpm's environment; clear_env=no hands it to the children, as
        # env[...] in a pool would (the preload script, run by the master, sees it too).
        self.env = env or {}

    def start(self):
        d = self.dir
        sock = self.ctx.sock(f"{self.ctx.scenario[:8]}-{self.key}-fpm.sock")
        self.port = free_port()
        fpm_conf = os.path.join(d, "php-fpm.conf")
        user = "user = root\ngroup = root\n" if IS_ROOT else ""
        pm = self.pm or f"pm = static\npm.max_children = {self.workers}"
        with open(fpm_conf, "w") as f:
            f.write(f"""[global]
pid = {d}/php-fpm.pid
error_log = {d}/php-fpm-error.log
daemonize = no

[bench]
{user}listen = {sock}
listen.mode = 0666
listen.backlog = 4096
{pm}
pm.max_requests = 0
clear_env = no
""")
        # Production-style opcache: no timestamp checks; the same settings the Ferry CLI
        # workers get, so only the execution model differs.
        flags = ["-d", "opcache.enable=1", "-d", "opcache.validate_timestamps=0", "-d", "opcache.jit=off"]
        if self.preload:
            flags += ["-d", f"opcache.preload={self.preload}"]
            if IS_ROOT:
                flags += ["-d", "opcache.preload_user=root"]
        argv = [FPM_BIN, "-F", "-y", fpm_conf] + (["-R"] if IS_ROOT else []) + flags
        env = dict(os.environ, **self.env) if self.env else None
        fpm = Proc(f"{self.label} php-fpm", argv, self._log("php-fpm"), env=env, stop_signal=signal.SIGQUIT).start()
        self.procs.append(fpm)
        wait_file(sock, fpm)

        nginx_conf = os.path.join(d, "nginx.conf")
        for t in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            os.makedirs(os.path.join(d, f"{t}_temp"), exist_ok=True)
        root_dir = os.path.dirname(self.script)
        with open(nginx_conf, "w") as f:
            f.write(f"""{'user root root;' if IS_ROOT else ''}
daemon off;
worker_processes auto;
worker_rlimit_nofile 16384;
pid {d}/nginx.pid;
error_log {d}/nginx-error.log warn;
events {{ worker_connections 8192; }}
http {{
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path {d}/body_temp;
  proxy_temp_path {d}/proxy_temp;
  fastcgi_temp_path {d}/fastcgi_temp;
  uwsgi_temp_path {d}/uwsgi_temp;
  scgi_temp_path {d}/scgi_temp;
  server {{
    listen 127.0.0.1:{self.port} backlog=4096;
    root {root_dir};
    location / {{
      fastcgi_pass unix:{sock};
      fastcgi_param SCRIPT_FILENAME {self.script};
      fastcgi_param SCRIPT_NAME /{os.path.basename(self.script)};
      fastcgi_param DOCUMENT_ROOT $document_root;
      fastcgi_param DOCUMENT_URI $document_uri;
      fastcgi_param REQUEST_METHOD $request_method;
      fastcgi_param REQUEST_URI $request_uri;
      fastcgi_param QUERY_STRING $query_string;
      fastcgi_param CONTENT_TYPE $content_type;
      fastcgi_param CONTENT_LENGTH $content_length;
      fastcgi_param SERVER_PROTOCOL $server_protocol;
      fastcgi_param GATEWAY_INTERFACE CGI/1.1;
      fastcgi_param REMOTE_ADDR $remote_addr;
      fastcgi_param REMOTE_PORT $remote_port;
      fastcgi_param SERVER_ADDR $server_addr;
      fastcgi_param SERVER_PORT $server_port;
      fastcgi_param SERVER_NAME $server_name;
    }}
  }}
}}
""")
        nginx = Proc(f"{self.label} nginx", [NGINX_BIN, "-p", d, "-c", nginx_conf, "-e", f"{d}/nginx-error.log"],
                     self._log("nginx"), stop_signal=signal.SIGQUIT).start()
        self.procs.append(nginx)
        wait_http(nginx, self.port)

    def php_pids(self):
        return children(self.procs[0].pid) if self.procs else []


class PhpServer(System):
    """PHP's built-in server (php -S) as the floor; PHP_CLI_SERVER_WORKERS forks the same
    number of PHP processes the other systems get."""

    kind = "php-s"
    eof_delimited = True  # php -S sends no Content-Length and closes after each response

    def __init__(self, ctx, key, label, router, workers=None):
        super().__init__(ctx, key, label)
        self.router = router
        self.workers = workers or ctx.workers

    def start(self):
        self.port = free_port()
        env = dict(os.environ)
        if self.workers > 1:
            env["PHP_CLI_SERVER_WORKERS"] = str(self.workers)
        argv = ["php", "-d", "opcache.enable=1", "-d", "opcache.enable_cli=1", "-d", "opcache.validate_timestamps=0",
                "-S", f"127.0.0.1:{self.port}", "-t", os.path.dirname(self.router), self.router]
        proc = Proc(self.label, argv, self._log("php-s"), env=env).start()
        self.procs.append(proc)
        wait_http(proc, self.port)

    def php_pids(self):
        if not self.procs:
            return []
        return children(self.procs[0].pid) or [self.procs[0].pid]


class GoHello(System):
    kind = "go"

    def __init__(self, ctx, key, label, stack="fasthttp"):
        super().__init__(ctx, key, label)
        self.stack = stack

    def start(self):
        binary = self.ctx.go_build("./bench/apps/gohello", "gohello")
        self.port = free_port()
        proc = Proc(self.label, [binary, "-addr", f"127.0.0.1:{self.port}", "-stack", self.stack],
                    self._log("gohello-" + self.stack)).start()
        self.procs.append(proc)
        wait_http(proc, self.port)


def check(system, path, want_status=200, want_body=None, want_type=None, headers=None):
    """One request before the load: the right status, body and content type, or StartError."""
    try:
        status, hdrs, body = http_get(system.port, path, headers=headers)
    except OSError as e:
        raise StartError(f"{system.label}: GET {path} failed: {e}") from e
    if status != want_status:
        raise StartError(f"{system.label}: GET {path} answered {status}, want {want_status}: {body[:300]!r}")
    if want_body is not None and body != want_body:
        raise StartError(f"{system.label}: GET {path} body {body[:200]!r}, want {want_body[:200]!r}")
    if want_type is not None and not hdrs.get("content-type", "").startswith(want_type):
        raise StartError(f"{system.label}: GET {path} content-type {hdrs.get('content-type')!r}, want {want_type}")
    return body
