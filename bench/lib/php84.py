"""--php 8.4: Ferry with its workers on PHP 8.4, JIT off and on, beside the 8.2 Ferry of the
hello and framework scenarios, in the same alternated rounds.

The 8.4 workers run in the Debian trixie root of scripts/trixie-root.sh through
scripts/php84 (a chroot in a mount namespace of its own; the worker keeps its pid, so its
CPU is counted under the ferry process like any worker's). Ferry itself is the same host
binary on both sides: only the PHP under it changes. ext/ferry is compiled for 8.4 with
phpize8.4 into ext/ferry/.build-php84, as `make test-matrix` does, so both PHPs run the
same worker loop (both pure PHP when the 8.2 build is missing)."""

import os

from . import httpbench, report
from .proc import StartError
from .systems import Ferry, ext_so

VERSIONS = ("8.4",)
# docs/config.md pool.php.jit: any mode but off/disable also sets a 64M JIT buffer.
JIT_ON = "tracing"
JIT_PROBE = "echo json_encode((opcache_get_status(false) ?: [])['jit'] ?? null);"


def trixie_root(repo):
    return os.environ.get("FERRY_TRIXIE_ROOT") or os.path.join(repo, ".cache", "trixie-root")


class Php84:
    """Prepared on first use by a scenario that asks for it; one failure is reported once."""

    def __init__(self, ctx, versions):
        self.ctx = ctx
        self.enabled = "8.4" in (versions or ())
        self.root = trixie_root(ctx.root)
        self.php84 = os.path.join(ctx.root, "scripts", "php84")
        self.ext = "off"
        self.error = None
        self.facts = {}
        self._checked = False

    def __bool__(self):
        return self.enabled

    def env(self):
        """What a worker under scripts/php84 needs: the root, and the run's temp dir when it
        is outside the paths trixie-run always binds (the repository and /tmp)."""
        env = {"FERRY_TRIXIE_ROOT": self.root}
        tmp = os.path.realpath(self.ctx.tmp)
        if not any(tmp == p or tmp.startswith(p + os.sep) for p in (os.path.realpath(self.ctx.root), "/tmp")):
            env["FERRY_TRIXIE_BINDS"] = tmp
        return env

    def ready(self):
        if not self.enabled:
            return False
        if not self._checked:
            self._checked = True
            try:
                self._prepare()
            except StartError as e:
                self.error = str(e)
                self.ctx.fail(f"--php 8.4: {e}")
        return self.error is None

    def _prepare(self):
        if not os.path.isfile(os.path.join(self.root, ".ferry-stamp")):
            raise StartError(f"no trixie root at {self.root}: make it with scripts/trixie-root.sh "
                             "(or point FERRY_TRIXIE_ROOT at one)")
        env = dict(os.environ, **self.env())
        if os.path.isfile(ext_so(self.ctx.root)):
            build = os.path.join(self.ctx.root, "ext", "ferry", ".build-php84")
            self.ctx.progress("--php 8.4: ext/ferry/build.sh with phpize8.4 into ext/ferry/.build-php84")
            out = self.ctx.run([os.path.join(self.ctx.root, "scripts", "trixie-run"), "env", "PHPIZE=phpize8.4",
                                "PHP_CONFIG=php-config8.4", f"FERRY_EXT_BUILD_DIR={build}",
                                os.path.join(self.ctx.root, "ext", "ferry", "build.sh")], env=env)
            self.ext = out.strip().splitlines()[-1]
        # The JIT really on where it is asked for, and really off elsewhere: PHP says so itself.
        jit_on = ["-d", "opcache.enable_cli=1", "-d", f"opcache.jit={JIT_ON}", "-d", "opcache.jit_buffer_size=64M"]
        jit_off = ["-d", "opcache.enable_cli=1", "-d", "opcache.jit=off"]
        for key, argv in (("8.2", ["php"]), ("8.4", [self.php84])):
            self.facts[key] = self.ctx.run(argv + ["-r", "echo PHP_VERSION;"], env=env).strip()
            for mode, flags in (("on", jit_on), ("off", jit_off)):
                self.facts[f"{key} jit {mode}"] = self.ctx.run(argv + flags + ["-r", JIT_PROBE], env=env).strip()
        for key in ("8.2", "8.4"):
            if '"on":true' not in self.facts[f"{key} jit on"].replace(" ", ""):
                raise StartError(f"PHP {key} did not turn the JIT on: {self.facts[key + ' jit on']}")
            if '"on":true' in self.facts[f"{key} jit off"].replace(" ", ""):
                raise StartError(f"PHP {key} has the JIT on with opcache.jit=off")

    def systems(self, worker, label):
        """Ferry on 8.2 with the JIT, and on 8.4 without and with it; the scenario's own
        `ferry` is the 8.2 one without (PHP 8.2's default opcache.jit_buffer_size is 0)."""
        if not self.ready():
            return []
        ext84 = {"extension": self.ext}
        return [
            Ferry(self.ctx, "ferry-jit", f"{label}, PHP 8.2 JIT", worker, php={"jit": JIT_ON}),
            Ferry(self.ctx, "ferry-php84", f"{label}, PHP 8.4", worker, command=[self.php84, worker],
                  php={"jit": "off", **ext84}, env=self.env()),
            Ferry(self.ctx, "ferry-php84-jit", f"{label}, PHP 8.4 JIT", worker, command=[self.php84, worker],
                  php={"jit": JIT_ON, **ext84}, env=self.env()),
        ]

    PAIRS = [("PHP 8.4 / PHP 8.2, JIT off", "ferry-php84", "ferry"),
             ("PHP 8.4 / PHP 8.2, JIT on", "ferry-php84-jit", "ferry-jit"),
             ("JIT on / off, PHP 8.2", "ferry-jit", "ferry"),
             ("JIT on / off, PHP 8.4", "ferry-php84-jit", "ferry-php84")]
    KEYS = ("ferry", "ferry-jit", "ferry-php84", "ferry-php84-jit")

    def section(self, sec, results, scenario):
        """The 8.2 / 8.4 and JIT ratios (req/s and CPU per request, paired per round) and a
        chart of CPU per request; returns what the scenario's results.json data gets."""
        if not self.enabled or not self.facts or "ferry-php84" not in results:
            return None
        settings = self.ctx.settings
        rps = httpbench.ratios(results, [(f"req/s, {label}", a, b) for label, a, b in self.PAIRS], settings)
        cpu = httpbench.ratios(results, [(f"CPU per request, {label}", a, b) for label, a, b in self.PAIRS],
                               settings, metric="cpu_us")
        sec.add("### PHP 8.2 and PHP 8.4, JIT off and on", "",
                f"The same host `bin/ferry`; workers on PHP {self.facts['8.2']} (host) and PHP {self.facts['8.4']} "
                "(trixie root, `scripts/php84`), `pool.php.jit: off` or `" + JIT_ON + "` (64M buffer), ext/ferry "
                + ("built for each PHP" if self.ext != "off" else "off on both (not built)") + ". Each PHP confirmed "
                "its JIT state through `opcache_get_status()`. A CPU ratio under 1 means the first side spends "
                "less per request.", "")
        report.ratio_table(sec, rps)
        report.ratio_table(sec, cpu)
        bars = []
        for key in self.KEYS:
            r = results.get(key)
            c = r and r.get("cpu_us")
            if c:
                bars.append({"label": r["label"], "value": c["median"], "lo": c["min"], "hi": c["max"]})
        sec.chart(self.ctx, f"{scenario}_php84_cpu.svg", f"{scenario}: CPU per request, PHP 8.2 / 8.4, JIT off / on",
                  "us per request (front + PHP)", bars)
        sec.summarize(rps)
        sec.summarize(cpu)
        return {"root": self.root, "extension": self.ext, "php": self.facts, "ratios": rps, "cpu_ratios": cpu}

    def report_lines(self):
        if not self.enabled:
            return []
        if self.error:
            return [f"- **PHP 8.4**: not measured: {self.error}"]
        if not self.facts:
            return []
        return [f"- **PHP 8.4**: {self.facts['8.4']} in the trixie root {self.root} (`scripts/php84`), "
                f"ext/ferry {self.ext}; JIT on = `opcache.jit={JIT_ON}`, 64M buffer"]
