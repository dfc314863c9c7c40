"""symfony: php/symfony's test app (a Symfony 5.4 MicroKernel app on Debian's packages) on
Ferry through Ferry\\Symfony\\Runtime, and on nginx + php-fpm without and with preload."""

import os

from lib import phpapp, report
from lib.systems import Ferry, NginxFpm

NAME = "symfony"
TITLE = "Symfony 5.4 test app: Ferry's Symfony Runtime vs nginx + php-fpm (+ preload)"
# The measured page: a routed controller answering a small text body.
PATH = "/"
BODY = b"Symfony on Ferry\n"
NEEDS = ["/usr/share/php/Symfony/Bundle/FrameworkBundle/autoload.php",
         "/usr/share/php/Symfony/Component/Runtime/autoload.php"]
# Checked on every system before the load. /hello echoes the server parameters Symfony
# derives (base URL, path info, script name, scheme, client IP); only the pid and what
# holds the port differ between systems.
PAGES = [(PATH, 200, "text/plain", None),
         ("/hello/bench?page=2", 200, "application/json", phpapp.json_without("pid", "uri", "host")),
         ("/no-such-page", 404, "text/html", None)]


def app_dir(ctx):
    return os.path.join(ctx.root, "php", "symfony", "tests", "app")


def run(ctx):
    sec = report.Section(NAME, TITLE)
    app = app_dir(ctx)
    missing = [p for p in NEEDS + [os.path.join(app, "public", "index.php")] if not os.path.exists(p)]
    if missing:
        return sec.not_run("missing " + ", ".join(missing) + " (scripts/deps.sh installs Debian's Symfony)")
    front = os.path.join(app, "public", "index.php")
    work = ctx.dir(NAME, "app")
    # One cache directory for every system, built before any of them starts: the compiled
    # container and routes are the same files everywhere, as after a deploy's cache:warmup.
    env = {"APP_ENV": "prod", "APP_DEBUG": "0", "APP_RUNTIME": "Ferry\\Symfony\\Runtime",
           "APP_VAR_DIR": os.path.join(work, "var")}
    listing, classes, body = phpapp.record_preload(app, front, PATH, env, os.path.join(app, "autoload.php"),
                                                   work)
    if body.encode() != BODY:
        return sec.failed(f"the front controller on the CLI answered {body[:200]!r}, want {BODY!r}")
    ctx.progress(f"container built in {env['APP_VAR_DIR']}; {classes} classes recorded for preload")

    sec.add(f"`php/symfony/tests/app` (Debian's Symfony 5.4, FrameworkBundle, `APP_ENV=prod`, `APP_DEBUG=0`). "
            f"wrk loads `GET {PATH}`: the router, the `kernel.*` events, a controller service, a {len(BODY)}-byte "
            "text `Response`. Every system runs the app's own unchanged `public/index.php` with "
            "`APP_RUNTIME=Ferry\\Symfony\\Runtime`: Ferry starts it as a worker (`pool.command: php public/index.php`, "
            "`pool.dir` the app), so the kernel boots once per worker; under php-fpm the same runtime is Symfony's "
            "`SymfonyRuntime` and the kernel boots on every request. One `APP_VAR_DIR` for all, its container "
            "compiled before the start. The preload variant loads, at php-fpm's start, the "
            f"{classes} classes one `GET {PATH}` declares (recorded on the CLI by `bench/apps/symfony/record.php`, "
            "loaded by `bench/apps/symfony/preload.php` through the app's autoloader, container classes included): "
            "Symfony writes its own `var/cache/prod/App_KernelProdContainer.preload.php` only when a Composer "
            "`ClassLoader` is registered, which Debian's autoloaders are not. JIT off everywhere "
            f"(`opcache.jit=off`, `jit_buffer_size=0`), opcache on with `validate_timestamps=0`, {ctx.workers} PHP "
            "processes per system. Before the load every system must give the same status and body for "
            + ", ".join(f"`{p}`" for p, *_ in PAGES) + " (`/hello` without its pid, URL and host).", "")

    systems = [
        Ferry(ctx, "ferry", "Ferry (Symfony Runtime)", None, command=["php", "public/index.php"], dir=app, env=env,
              php=phpapp.FERRY_PHP),
        Ferry(ctx, "ferry-direct", "Ferry (Symfony Runtime, server.mode: direct)", None, command=["php", "public/index.php"],
              dir=app, env=env, php=phpapp.FERRY_PHP, server=["  mode: direct"]),
        NginxFpm(ctx, "fpm", "nginx + php-fpm", front, env=env),
        NginxFpm(ctx, "fpm-preload", "nginx + php-fpm + preload", front, preload=phpapp.PRELOADER,
                 env=dict(env, FERRY_BENCH_PRELOAD=listing)),
    ]
    # --ferry-rev: that revision's runner and test app, its container compiled on first boot
    # into a cache of its own (the code differs).
    revs = ctx.revisions.ready()
    systems += [Ferry(ctx, r.key, f"{r.label} (Symfony Runtime)", None, command=["php", "public/index.php"],
                      dir=r.path("php", "symfony", "tests", "app"), revision=r, php=phpapp.FERRY_PHP,
                      env=dict(env, APP_VAR_DIR=ctx.dir(NAME, r.key + "-var")))
                for r in revs]
    sec.data = {"app": app, "path": PATH, "env": env, "preloaded_classes": classes, "preload_list": listing}
    return phpapp.measure(ctx, sec, NAME, systems, phpapp.SameAnswers(PAGES), PATH,
                          ratios=phpapp.RATIOS + phpapp.revision_ratios(ctx))
