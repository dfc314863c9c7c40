"""legacy: examples/legacy's unchanged front controller on Ferry with ext/ferry
(HttpWorker::runFrontController) against nginx + php-fpm (issue 16's last figure)."""

import os

from lib import phpapp, report
from lib.systems import Ferry, NginxFpm, ext_so

NAME = "legacy"
TITLE = "legacy front controller (header(), cookies, exit): Ferry + ext/ferry vs nginx + php-fpm"
# header() with a custom status line, a repeated and a removed header, setcookie,
# setrawcookie and headers_list(): the SAPI work ext/ferry does in a worker. No session,
# so each request costs the same on every system (a session page would write a file each).
PATH = "/headers"
PAGES = [(PATH, 299, "text/plain", None),
         ("/form", 200, "text/html", None),
         ("/redirect", 302, "", None),
         ("/no-such-page", 404, "text/html", None)]
# As examples/legacy/ferry.yaml: php-fpm's php.ini says expose_php Off, the CLI's On.
INI = {"expose_php": "0"}


def run(ctx):
    sec = report.Section(NAME, TITLE)
    app = os.path.join(ctx.root, "examples", "legacy")
    ext = ext_so(ctx.root)
    if not os.path.exists(ext):
        return sec.not_run(f"ext/ferry is not built ({ext}): `make build` builds it where php8.2-dev is installed")
    sec.add("`examples/legacy/index.php`, written for nginx + php-fpm, runs unchanged: Ferry starts "
            "`examples/legacy/worker.php` (`HttpWorker::runFrontController()`, `pool.php.extension: on`), which "
            "runs the script once per request with PHP's own `header()`, cookies and `exit`; php-fpm runs "
            f"`index.php` directly. wrk loads `GET {PATH}` (a 299 status line, three headers set and one removed, "
            "two cookies, `headers_list()` echoed). Before the load both systems must give the same status and "
            "body for " + ", ".join(f"`{p}`" for p, *_ in PAGES) + f". JIT off, {ctx.workers} PHP processes per "
            "system.", "")
    systems = [
        Ferry(ctx, "ferry", "Ferry + ext/ferry (front controller)", os.path.join(app, "worker.php"),
              php=dict(phpapp.FERRY_PHP, extension="on", ini=dict(phpapp.FERRY_PHP["ini"], **INI))),
        NginxFpm(ctx, "fpm", "nginx + php-fpm", os.path.join(app, "index.php")),
    ]
    sec.data = {"app": app, "path": PATH, "ext": ext}
    return phpapp.measure(ctx, sec, NAME, systems, phpapp.SameAnswers(PAGES), PATH,
                          ratios=[("Ferry + ext / nginx+php-fpm", "ferry", "fpm")])
