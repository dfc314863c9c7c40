"""The four apps of the memory and respawn scenarios (issue 33), set up as the hello,
framework, laravel and symfony scenarios set them up, so that one spec starts the same app
on Ferry (either pool.boot) and on nginx + php-fpm: the worker command, the front
controller, the environment, the page wrk loads and the check made before the load."""

import os

from . import phpapp
from .proc import StartError
from .systems import Ferry, NginxFpm, check

NAMES = ("hello", "framework", "laravel", "symfony")


class App:
    """name, title; ferry: Ferry's keyword arguments (worker or command, dir, env, php);
    fpm_script and fpm_env; path and script (a wrk Lua script or None) for the load;
    check(system) before it."""

    def __init__(self, name, title, ferry, fpm_script, fpm_env=None, path="/", script=None, check=None):
        self.name, self.title, self.ferry = name, title, ferry
        self.fpm_script, self.fpm_env = fpm_script, fpm_env or {}
        self.path, self.script, self.check = path, script, check

    def ferry_system(self, ctx, boot, label, workers, admin=True, suffix=None, pool=None):
        kw = dict(self.ferry)
        s = Ferry(ctx, f"{self.name}-{suffix or boot}", label, kw.pop("worker", None), workers=workers, admin=admin,
                  boot=boot, php=phpapp.FERRY_PHP, **kw)
        if pool:
            s.pool_extra = dict(pool)
        return s

    def fpm_system(self, ctx, label, workers):
        return NginxFpm(ctx, f"{self.name}-fpm", label, self.fpm_script, workers=workers, env=self.fpm_env)


def build(ctx, name):
    """The App called name, or a string saying why it cannot run here."""
    return {"hello": hello, "framework": framework, "laravel": laravel, "symfony": symfony}[name](ctx)


def hello(ctx):
    worker = os.path.join(ctx.root, "examples", "hello", "worker.php")
    return App("hello", "hello (`examples/hello/worker.php`, FPM `bench/apps/hello/index.php`)", {"worker": worker},
               os.path.join(ctx.root, "bench", "apps", "hello", "index.php"),
               check=lambda s: check(s, "/", want_body=b"Hello, world\n", want_type="text/plain"))


def framework(ctx):
    from scenarios.framework import CHECK_PATHS, generate
    app = generate(ctx, f"{ctx.scenario}-framework-app")

    def check_page(s):
        for path in CHECK_PATHS:
            body = check(s, path, want_type="text/html", headers={"Cookie": "theme=dark; sid=abc"})
            if b"</html>" not in body:
                raise StartError(f"{s.label}: GET {path} is not a full page: {body[:200]!r}")
    return App("framework", f"framework-like app ({app['classes']} classes, `bench/apps/framework/gen.py`)",
               {"worker": app["worker"]}, app["fpm_script"], script=app["lua"], check=check_page)


def laravel(ctx):
    from scenarios import laravel as lv
    app = lv.app_dir(ctx)
    worker = os.path.join(ctx.root, "php", "laravel", "bin", "ferry-laravel")
    missing = [p for p in lv.NEEDS + [os.path.join(app, "artisan"), worker] if not os.path.exists(p)]
    if missing:
        return "missing " + ", ".join(missing) + " (scripts/deps.sh installs Debian's Laravel)"
    work = ctx.dir(ctx.scenario, "laravel-app")
    for d in ("storage", "cache"):
        os.makedirs(os.path.join(work, d), exist_ok=True)
    plain, _ = lv.environments(work)
    script = os.path.join(work, "session-cookie.lua")
    cookie = {}

    def check_session(s):
        if not cookie:
            # One session for every system (one storage directory, one APP_KEY), as in the laravel scenario.
            cookie["pair"] = phpapp.session_cookie(s.port, lv.PATH, lv.SESSION_COOKIE)
            with open(script, "w") as f:
                f.write(phpapp.cookie_script(cookie["pair"]))
        check(s, lv.PATH, want_body=lv.BODY, want_type="text/html", headers={"Cookie": cookie["pair"]})
    return App("laravel", f"Laravel 8 test app (`ferry-laravel`, `GET {lv.PATH}`, no config or route cache)",
               {"command": ["php", worker, app], "env": plain}, os.path.join(app, "public", "index.php"), plain,
               path=lv.PATH, script=script, check=check_session)


def symfony(ctx):
    from scenarios import symfony as sf
    app = sf.app_dir(ctx)
    front = os.path.join(app, "public", "index.php")
    missing = [p for p in sf.NEEDS + [front] if not os.path.exists(p)]
    if missing:
        return "missing " + ", ".join(missing) + " (scripts/deps.sh installs Debian's Symfony)"
    work = ctx.dir(ctx.scenario, "symfony-app")
    env = {"APP_ENV": "prod", "APP_DEBUG": "0", "APP_RUNTIME": "Ferry\\Symfony\\Runtime",
           "APP_VAR_DIR": os.path.join(work, "var")}
    # The container is compiled once before anything starts, as the symfony scenario does
    # (its preload list is written too, and not used here).
    _, _, body = phpapp.record_preload(app, front, sf.PATH, env, os.path.join(app, "autoload.php"), work)
    if body.encode() != sf.BODY:
        raise StartError(f"the Symfony front controller on the CLI answered {body[:200]!r}, want {sf.BODY!r}")
    return App("symfony", f"Symfony 5.4 test app (`Ferry\\Symfony\\Runtime`, `GET {sf.PATH}`)",
               {"command": ["php", "public/index.php"], "dir": app, "env": env}, front, env, path=sf.PATH,
               check=lambda s: check(s, sf.PATH, want_body=sf.BODY, want_type="text/plain"))
