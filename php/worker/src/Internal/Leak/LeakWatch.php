<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Leak;

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;
use Ferry\Worker\Internal\Environment;
use Ferry\Worker\Internal\Output\OutputCapture;
use Ferry\Worker\Internal\WorkerSession;
use Ferry\Worker\Job;
use Ferry\Worker\Worker;

/**
 * @internal Leak watch (FERRY_LEAK_WATCH=1): finds the state one request leaves to the next.
 *
 * After the warm-up requests it takes a baseline snapshot (LeakSnapshot), then a snapshot
 * after every Nth request and, when that one saw something not yet reported grow or change,
 * after the one that follows it: that pair shows exactly what one request changed, so most
 * findings name their request; the other checks compare with the baseline and name the
 * requests since the previous check. A clean app thus pays for one check per N requests.
 * Each finding is sent once to the server as a CONTROL frame {"leak": {...}} (docs/protocol.md).
 *
 * What counts as a finding, per kind of subject:
 *  - process settings (ini, timezone, locale, cwd, umask, output buffers) differ from
 *    the baseline: nothing a request does to them should outlive it;
 *  - an error or exception handler differs from the baseline at two checks (a different
 *    one each time: the handler stack grows);
 *  - a size (array elements, string bytes, descriptors, memory, declared classes) rose at
 *    three checks without ever going down (memory: at five checks in a row);
 *  - a static property or a global changed at two checks other than by growing, or an
 *    object named with Worker::watch() (a long-lived, shared one) changed at two checks and
 *    differs from the baseline: a one-time lazy initialisation changes it once, a value that
 *    keeps the last user's data changes with every user.
 *
 * Over 400 lines: the checks share the rules above and the report's state (findings
 * already sent, the requests since the last check); LeakSnapshot, LeakStatics,
 * LeakWatched, LeakReport and LeakReplay already hold everything that stands alone.
 */
final class LeakWatch
{
    public const DEFAULT_EVERY = 250;
    /** contexts kept to name the requests since the previous check */
    private const WINDOW = 16;
    public const DEFAULT_WARMUP = 10;
    private const RISES = 3;
    private const MEMORY_RISES = 5;
    private const CHANGES = 2;
    /** Code is loaded as routes are first used, long after warm-up: only steady growth counts. */
    private const LOADED = ['classes|declared classes' => 1, 'functions|declared functions' => 1];
    private const LOADED_RISES = 20;
    /**
     * Declared classes and functions are listed when a file was included since the last
     * listing, and otherwise at one check in this many: only eval() declares without one.
     */
    private const CODE_EVERY = 16;
    private const MAX_FINDINGS = 100;
    /** Fewest requests between two replays (pool.leak_watch_every may be as low as 1). */
    private const REPLAY_GAP = 100;
    private const STRICT = ['ini' => 1, 'timezone' => 1, 'locale' => 1, 'cwd' => 1, 'umask' => 1, 'output_buffer' => 1];
    private const HANDLERS = ['error_handler' => 1, 'exception_handler' => 1];

    private int $requests = 0;
    /** @var array<int, string> the contexts of the requests since the previous check: a ring of WINDOW slots */
    private array $window = [];
    /** requests since the previous check; the window keeps the last WINDOW of them */
    private int $since = 0;
    private ?LeakSnapshot $base = null;
    private LeakSnapshot $prev;
    private readonly LeakStatics $statics;
    /** @var array<string, string> the open descriptors at the baseline, and their targets */
    private array $baseFds = [];
    /** @var array<string, int> checks at which a size rose since it last went down */
    private array $rises = [];
    /** @var array<string, array{int, int}> size and request count where the current rise started */
    private array $origin = [];
    /** @var array<string, int> checks at which a value changed (or differed, for handlers) */
    private array $changes = [];
    /** @var array<string, string> a handler's value at the first check that saw it changed */
    private array $firstSeen = [];
    /** @var array<string, array{label: string, method: ?string, path: ?string, exact: bool}> */
    private array $culprits = [];
    /** @var array<string, true> */
    private array $reported = [];
    private int $findings = 0;
    private int $checks = 0;
    /** whether the last check saw a subject not yet reported grow or change */
    private bool $stirred = true;
    /** the most memory seen at a check */
    private int $memoryHigh = 0;
    /** files included at the last listing of declared code */
    private int $included = -1;
    /** @var resource|null /proc/self/fd, kept open from the baseline on */
    private $fdDir = null;
    private int $replayedAt = 0;

    public function __construct(
        private readonly WorkerSession $session,
        public readonly int $every = self::DEFAULT_EVERY,
        public readonly int $warmup = self::DEFAULT_WARMUP,
        private readonly ?LeakReplay $replay = null,
    ) {
        if ($every < 1 || $warmup < 1) {
            throw new \InvalidArgumentException("leak watch: every ($every) and warmup ($warmup) must be at least 1");
        }
        $this->statics = new LeakStatics();
    }

    /**
     * The watch the server asked for (FERRY_LEAK_WATCH=1, FERRY_LEAK_WATCH_EVERY,
     * FERRY_LEAK_WATCH_WARMUP), or null.
     */
    public static function fromEnvironment(WorkerSession $session): ?self
    {
        if (getenv('FERRY_LEAK_WATCH') !== '1') {
            return null;
        }
        if ($session->fibers) {
            // Requests interleave: no snapshot could say which one changed what.
            Worker::log('leak watch is off in Fiber mode: requests run interleaved, so state cannot be tied to one of them');

            return null;
        }

        return new self(
            $session,
            max(1, Environment::int('FERRY_LEAK_WATCH_EVERY', self::DEFAULT_EVERY)),
            max(1, Environment::int('FERRY_LEAK_WATCH_WARMUP', self::DEFAULT_WARMUP)),
            LeakReplay::fromEnvironment($session),
        );
    }

    /** @param object|array<mixed> $value see Worker::watch() */
    public static function watch(string $name, object|array $value): void
    {
        LeakWatched::add($name, $value);
    }

    /** Worker::run() hands its handler over, for the replay check. */
    public function serve(callable $handler, OutputCapture $capture): void
    {
        $this->replay?->serve($handler, $capture);
    }

    /** Called once a job is answered and its terminate hooks have run. */
    public function finished(Job $job): void
    {
        if ($this->replay?->running()) {
            // A replayed request's own end: not one of the application's requests.
            return;
        }
        $n = ++$this->requests;
        if ($n <= $this->warmup) {
            if ($n === $this->warmup) {
                // Before the baseline, so that its own descriptor is in every count alike.
                $this->fdDir = @opendir('/proc/self/fd') ?: null;
                $this->base = $this->snapshot();
                $this->prev = clone $this->base;
                // Every counter exists from here on: filling them in later would show up as
                // memory growth.
                foreach ($this->base->sizes as $key => $size) {
                    $this->origin[$key] = [$size, $n];
                    $this->rises[$key] = 0;
                }
                // Loaded now rather than at the first finding, where it would look like growth.
                $this->baseFds = LeakReport::fds();
            }

            return;
        }
        // A ring, bounded: every context kept would be memory that grows between two checks.
        $this->window[$this->since++ % self::WINDOW] = $job->payload->context;
        $phase = ($n - $this->warmup) % $this->every;
        if ($this->replay !== null) {
            $this->replays($job, $phase === 0 && $n - $this->replayedAt >= self::REPLAY_GAP, $n);
        }
        if ($phase === 0 || ($phase === 1 && $this->stirred)) {
            $this->check($n);
        }
    }

    /**
     * Records $job for the replay check if it is the first to a listed path, and when $due,
     * replays the recorded ones. Before a check, never between the two of a pair: a replay
     * is one more request, put in the window as one, so that what it changes itself is
     * blamed on it.
     */
    private function replays(Job $job, bool $due, int $n): void
    {
        if ($this->replay->record($job)) {
            $this->window[$this->since++ % self::WINDOW] = $job->payload->context;
            $this->window[$this->since++ % self::WINDOW] = $job->payload->context;
        }
        if (!$due) {
            return;
        }
        $this->replayedAt = $n;
        // The requests that ran since the previous check, before this replay adds itself.
        $suspects = LeakReport::suspects($this->ordered(), $this->since);
        foreach ($this->replay->contexts() as $context) {
            $this->window[$this->since++ % self::WINDOW] = $context;
        }
        foreach ($this->replay->replay() as $path => $difference) {
            $this->report("replay|GET $path", "GET $path answers differently when replayed after other requests: $difference; first seen after {who}", $suspects);
        }
    }

    /** @return list<string> the window's contexts, oldest first */
    private function ordered(): array
    {
        $window = $this->window;
        if ($this->since > self::WINDOW) {
            // The ring's next slot holds its oldest entry.
            $at = $this->since % self::WINDOW;
            $window = [...\array_slice($window, $at), ...\array_slice($window, 0, $at)];
        }

        return array_values($window);
    }

    private function snapshot(): LeakSnapshot
    {
        $included = \count(get_included_files());
        $code = $this->checks++ % self::CODE_EVERY === 0 || $included !== $this->included;
        if ($code) {
            $this->included = $included;
        }

        return LeakSnapshot::take($this->statics, LeakWatched::resolve(), $code, $this->fdDir);
    }

    private function check(int $n): void
    {
        $now = $this->snapshot();
        $since = $this->since;
        $window = $this->ordered();
        $this->window = [];
        $this->since = 0;
        $suspects = null;
        $this->stirred = false;
        $blame = function (string $key) use (&$suspects, $window, $since): void {
            $known = $this->culprits[$key] ?? null;
            if ($known === null || (!$known['exact'] && $since === 1)) {
                $this->culprits[$key] = $suspects ??= LeakReport::suspects($window, $since);
            }
        };
        $now->sizes['functions|declared functions'] ??= $this->prev->sizes['functions|declared functions'];
        $memory = $now->sizes['memory|memory'];
        unset($now->sizes['memory|memory']);
        $this->iniValues($now);
        $grown = $this->sizes($now, $n, $blame);
        $changed = $this->values($now, $grown, $blame, $window, $since);
        // Memory is a leak of its own only while nothing else grew or changed: otherwise
        // that is where it went, and that finding says more.
        $now->sizes['memory|memory'] = $memory;
        if (!isset($this->reported['memory|memory'])) {
            $before = $this->prev->sizes['memory|memory'];
            if ($memory > $before && $grown === [] && !$changed) {
                if ($memory > $this->memoryHigh) {
                    // Memory wanders within a band from check to check: only a new high
                    // asks for the next request's check.
                    $this->memoryHigh = $memory;
                    $this->stirred = true;
                }
                $blame('memory|memory');
                if (++$this->rises['memory|memory'] >= self::MEMORY_RISES) {
                    [$from, $since] = $this->origin['memory|memory'];
                    $this->report('memory|memory', LeakReport::growth('memory|memory', $memory, ($memory - $from) / max(1, $n - $since), [], null), $this->culprits['memory|memory']);
                }
            } else {
                $this->rises['memory|memory'] = 0;
                $this->origin['memory|memory'] = [$memory, $n];
                unset($this->culprits['memory|memory']);
            }
        }
        $this->prev = $now;
    }

    /** The ini keys that differ from the baseline or the previous check become subjects. */
    private function iniValues(LeakSnapshot $now): void
    {
        $base = $this->base->ini;
        $prev = $this->prev->ini;
        if ($now->ini === $base && $now->ini === $prev) {
            return;
        }
        foreach ($now->ini as $name => $value) {
            $was = $base[$name] ?? $value;
            $before = $prev[$name] ?? $value;
            if ($value !== $was || $value !== $before) {
                $now->values["ini|$name"] = (string) $value;
                $this->base->values["ini|$name"] ??= (string) $was;
                $this->prev->values["ini|$name"] ??= (string) $before;
            }
        }
    }

    /**
     * Sizes that rose at RISES checks without going down are reported.
     *
     * @return array<string, true> the subjects that grew at this check
     */
    private function sizes(LeakSnapshot $now, int $n, \Closure $blame): array
    {
        $base = $this->base;
        $prev = $this->prev;
        $grown = [];
        foreach ($now->sizes as $key => $size) {
            $before = $prev->sizes[$key] ?? null;
            if ($before === null) {
                // First seen now (a class declared lazily, a new global): start from here.
                $base->sizes[$key] ??= $size;
                $this->origin[$key] = [$size, $n];
                $this->rises[$key] = 0;
                continue;
            }
            if ($size > $before) {
                $grown[$key] = true;
            }
            if (isset($this->reported[$key])) {
                continue;
            }
            if ($size > $before) {
                $this->stirred = true;
                $blame($key);
                if (++$this->rises[$key] >= (isset(self::LOADED[$key]) ? self::LOADED_RISES : self::RISES)) {
                    [$from, $since] = $this->origin[$key];
                    $this->report($key, LeakReport::growth($key, $size, ($size - $from) / max(1, $n - $since), $this->baseFds, $now->values[$key] ?? null), $this->culprits[$key]);
                }
            } elseif ($size < $before || $this->rises[$key] === 0) {
                // The rate is measured from the last reading before the rise.
                $this->rises[$key] = 0;
                $this->origin[$key] = [$size, $n];
                unset($this->culprits[$key]);
            }
        }

        return $grown;
    }

    /**
     * @param array<string, true> $grown
     * @param list<string> $window
     * @return bool whether any value changed at this check
     */
    private function values(LeakSnapshot $now, array $grown, \Closure $blame, array $window, int $since): bool
    {
        $base = $this->base;
        $prev = $this->prev;
        $changed = false;
        $objects = $touched = [];
        foreach ($now->values as $key => $value) {
            $kind = strstr($key, '|', true);
            // A global that was not there at the baseline is one a request set.
            $was = $base->values[$key] ??= $kind === 'global' ? '(unset)' : $value;
            $before = $prev->values[$key] ?? $was;
            if ($value !== $before) {
                $changed = true;
            }
            if (isset($this->reported[$key])) {
                continue;
            }
            if ($value !== $before && !isset($grown[$key])) {
                $this->stirred = true;
                $blame($key);
            }
            if ($kind === 'shared' && ($at = strrpos($key, '->')) !== false) {
                // A watched object's properties make one finding, reported with the object.
                $object = substr($key, 0, $at);
                if (!isset($this->reported[$object])) {
                    if ($value !== $was) {
                        $objects[$object][substr($key, $at + 2)] = [$was, $value, $key];
                    }
                    if ($value !== $before) {
                        $touched[$object] = true;
                    }
                }
                continue;
            }
            if (isset(self::STRICT[$kind]) || ($kind === 'global' && $was === '(unset)')) {
                if ($value !== $was) {
                    $this->report($key, LeakReport::changed($key, $was, $value, $now->values), $this->culprits[$key] ?? LeakReport::suspects($window, $since));
                }
            } elseif (isset(self::HANDLERS[$kind])) {
                if ($value === $was) {
                    $this->changes[$key] = 0;
                } elseif (($this->changes[$key] = ($this->changes[$key] ?? 0) + 1) === 1) {
                    $this->firstSeen[$key] = $value;
                } else {
                    $grows = $this->firstSeen[$key] !== $value;
                    $this->report($key, LeakReport::handler($key, $was, $value, $grows), $this->culprits[$key] ?? LeakReport::suspects($window, $since));
                }
            } elseif ($value !== $before && !isset($grown[$key])) {
                if (($this->changes[$key] = ($this->changes[$key] ?? 0) + 1) >= self::CHANGES) {
                    $this->report($key, LeakReport::changedBetween($key, $value), $this->culprits[$key]);
                }
            }
        }

        foreach ($touched as $object => $_) {
            $this->changes[$object] = ($this->changes[$object] ?? 0) + 1;
        }
        foreach ($objects as $object => $properties) {
            if (($this->changes[$object] ?? 0) < self::CHANGES) {
                continue;
            }
            $culprit = null;
            foreach ($properties as [, , $key]) {
                $known = $this->culprits[$key] ?? null;
                if ($known !== null && ($culprit === null || (!$culprit['exact'] && $known['exact']))) {
                    $culprit = $known;
                }
            }
            $this->report($object, LeakReport::sharedObject($object, $properties, $now->values), $culprit ?? LeakReport::suspects($window, $since));
        }

        return $changed;
    }

    /**
     * @param array{label: string, method: ?string, path: ?string, exact: bool} $culprit
     */
    private function report(string $key, string $message, array $culprit): void
    {
        $this->reported[$key] = true;
        if ($this->findings === self::MAX_FINDINGS) {
            return;
        }
        $kind = strstr($key, '|', true);
        $finding = [
            'kind' => $kind,
            'subject' => substr($key, \strlen($kind) + 1),
            'message' => str_replace('{who}', $culprit['label'], $message),
            'request' => $culprit['label'],
            'method' => $culprit['method'],
            'path' => $culprit['path'],
            'pid' => getmypid(),
            'requests' => $this->requests,
        ];
        if (++$this->findings === self::MAX_FINDINGS) {
            $finding['message'] .= ' (this worker\'s last report: ' . self::MAX_FINDINGS . ' findings)';
        }
        $json = json_encode(['leak' => $finding], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE);
        $this->session->queue(FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], (string) $json));
        $this->session->flush();
    }
}
