"""laravel: php/laravel's test app (a minimal Laravel 8 skeleton on Debian's framework) on
Ferry through bin/ferry-laravel, and on nginx + php-fpm without and with the production
caches and preload."""

import os

from lib import phpapp, report
from lib.systems import Ferry, NginxFpm

NAME = "laravel"
TITLE = "Laravel 8 test app: ferry-laravel vs nginx + php-fpm (+ config/route caches and preload)"
# The measured page: a routed controller behind the `web` middleware group (cookie
# encryption, the session read and written back, shared errors, route bindings).
PATH = "/hello/bench"
BODY = b"Hello, bench"
SESSION_COOKIE = "ferry_session"
NEEDS = ["/usr/share/php/Illuminate/autoload.php"]
PAGES = [(PATH, 200, "text/html", None),
         ("/view", 200, "text/html", None),
         ("/no-such-page", 404, "text/html", None)]
CACHES = ("SERVICES", "PACKAGES", "CONFIG", "ROUTES", "EVENTS")


def app_dir(ctx):
    return os.path.join(ctx.root, "php", "laravel", "tests", "app")


def environments(work):
    """(plain, cached): the app's environment without and with `artisan config:cache` and
    `route:cache`. One storage directory (sessions, compiled views) for every system, so
    one session cookie is valid on all; Laravel's cache files are kept out of the
    checkout, and the plain side's config and route caches point at files that never exist."""
    base = {"APP_ENV": "production", "APP_DEBUG": "false", "APP_STORAGE": os.path.join(work, "storage")}
    cached = dict(base, **{f"APP_{c}_CACHE": os.path.join(work, "cache", f"{c.lower()}.php") for c in CACHES})
    plain = dict(cached, APP_CONFIG_CACHE=os.path.join(work, "cache", "none", "config.php"),
                 APP_ROUTES_CACHE=os.path.join(work, "cache", "none", "routes.php"))
    return plain, cached


def run(ctx):
    sec = report.Section(NAME, TITLE)
    app = app_dir(ctx)
    worker = os.path.join(ctx.root, "php", "laravel", "bin", "ferry-laravel")
    missing = [p for p in NEEDS + [os.path.join(app, "artisan"), worker] if not os.path.exists(p)]
    if missing:
        return sec.not_run("missing " + ", ".join(missing) + " (scripts/deps.sh installs Debian's Laravel)")
    front = os.path.join(app, "public", "index.php")
    work = ctx.dir(NAME, "app")
    for d in ("storage", "cache"):
        os.makedirs(os.path.join(work, d), exist_ok=True)
    plain, cached = environments(work)
    for command in ("config:cache", "route:cache"):
        phpapp.php_cli(app, ["artisan", command], cached)
    # Recorded as the preload side serves it: with the caches, runningInConsole() false.
    listing, classes, body = phpapp.record_preload(app, front, PATH, dict(cached, APP_RUNNING_IN_CONSOLE="false"),
                                                   os.path.join(app, "vendor", "autoload.php"), work)
    if body.encode() != BODY:
        return sec.failed(f"the front controller on the CLI answered {body[:200]!r}, want {BODY!r}")
    ctx.progress(f"config and routes cached in {work}/cache; {classes} classes recorded for preload")

    sec.add(f"`php/laravel/tests/app` (Debian's Laravel 8.83, `APP_ENV=production`, `APP_DEBUG=false`). wrk loads "
            f"`GET {PATH}`: a controller route behind the `web` middleware group (cookie encryption, the session "
            f"started, read and written back to its file, shared errors, bindings), a {len(BODY)}-byte HTML body. "
            "Every request carries the same session cookie, taken from a first visit (one storage directory for "
            "all systems), so each request reads and writes one session file instead of creating a new one. "
            "Ferry runs `php/laravel/bin/ferry-laravel <app>`: the app boots once per worker and each request runs in "
            "a clone of it that is reset afterwards. php-fpm runs the app's unchanged `public/index.php`, which "
            "boots the app on every request. The preload variant adds what a production deploy does: "
            "`php artisan config:cache` and `route:cache`, and, since Composer's optimized class map does not exist "
            f"without Composer (Debian's autoloaders), an opcache preload of the {classes} classes one cached "
            f"`GET {PATH}` declares (`bench/apps/symfony/record.php`, then `preload.php` through the app's "
            "`vendor/autoload.php`). Ferry gets neither cache (they change only its boot), so Ferry / php-fpm compares "
            "the same app as is. JIT off everywhere (`opcache.jit=off`, `jit_buffer_size=0`), opcache on with "
            f"`validate_timestamps=0`, {ctx.workers} PHP processes per system. Before the load every system must give "
            "the same status and body for " + ", ".join(f"`{p}`" for p, *_ in PAGES) + ".", "")

    systems = [
        Ferry(ctx, "ferry", "Ferry (ferry-laravel)", None, command=["php", worker, app], env=plain,
              php=phpapp.FERRY_PHP),
        Ferry(ctx, "ferry-direct", "Ferry (ferry-laravel, server.mode: direct)", None, command=["php", worker, app],
              env=plain, php=phpapp.FERRY_PHP, server=["  mode: direct"]),
        NginxFpm(ctx, "fpm", "nginx + php-fpm", front, env=plain),
        NginxFpm(ctx, "fpm-preload", "nginx + php-fpm + caches + preload", front, preload=phpapp.PRELOADER,
                 env=dict(cached, FERRY_BENCH_PRELOAD=listing)),
    ]
    # --ferry-rev: that revision's runner and test app, on the same uncached configuration.
    systems += [Ferry(ctx, r.key, f"{r.label} (ferry-laravel)", None, revision=r, php=phpapp.FERRY_PHP, env=plain,
                      command=["php", r.path("php", "laravel", "bin", "ferry-laravel"),
                               r.path("php", "laravel", "tests", "app")])
                for r in ctx.revisions.ready()]
    script = os.path.join(work, "session-cookie.lua")
    cookie = {}
    checker = phpapp.SameAnswers(PAGES, lambda: {"Cookie": cookie["pair"]})

    def check(s):
        if not cookie:
            # The first system to start opens the session that every request then reuses.
            cookie["pair"] = phpapp.session_cookie(s.port, PATH, SESSION_COOKIE)
            with open(script, "w") as f:
                f.write(phpapp.cookie_script(cookie["pair"]))
        checker(s)

    sec.data = {"app": app, "path": PATH, "env_plain": plain, "env_cached": cached, "preloaded_classes": classes,
                "preload_list": listing}
    return phpapp.measure(ctx, sec, NAME, systems, check, PATH, script=script,
                          ratios=phpapp.RATIOS + phpapp.revision_ratios(ctx))
