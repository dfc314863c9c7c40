<?php

declare(strict_types=1);

namespace Ferry\Tarantool;

use Ferry\Tarantool\Async\Future;
use Ferry\Tarantool\Codec\Codec;
use Ferry\Tarantool\Connection\Connection;
use Ferry\Tarantool\Exception\ConnectionException;
use Ferry\Tarantool\Exception\ServerException;
use Ferry\Tarantool\Protocol\Iproto;
use Ferry\Tarantool\Protocol\Request;
use Ferry\Tarantool\Protocol\Response;
use Ferry\Tarantool\Protocol\RequestFactory;

/**
 * Several instances of one replica set behind a single Handler.
 *
 * Writes (anything not provably read-only) go to the read-write instance: roles are learned
 * from box.info.ro when the user may eval, and in any case from ER_READONLY replies, which
 * move the write to the next instance. Reads go to the current instance, or with
 * read_from_replicas to read-only instances in turn (falling back to the master).
 * An unreachable instance is skipped for down_for seconds; a request fails over to the next
 * instance unless it is a write that may already have been sent (the outcome is unknown) and
 * was not declared idempotent: replaying it elsewhere could apply it twice.
 */
final class ReplicaSet implements Handler
{
    private const RW = 1;
    private const RO = 2;

    /** @var list<Connection> */
    private array $nodes = [];
    /** @var array<int, int> index => RW|RO (absent: unknown) */
    private array $roles = [];
    /** @var array<int, float> index => skip until (microtime) */
    private array $downUntil = [];
    private int $current = 0;
    private int $nextReplica = 0;
    private bool $discovered = false;
    /** Set while discover() runs: Fibers arriving meanwhile wait for its roles. */
    private ?Future $discovering = null;
    private readonly bool $readFromReplicas;
    private readonly float $downFor;
    /** @var array<string, true> */
    private readonly array $readOnlyCalls;

    /**
     * @param list<string|Connection> $instances URIs (see Connection\Options) or connections
     * @param array<string, mixed> $options 'read_from_replicas' => bool, 'down_for' => seconds,
     *   'read_only_calls' => list of function names whose CALL may go to a replica,
     *   plus connection options applied to every URI
     */
    public function __construct(array $instances, array $options = [], ?Codec $codec = null)
    {
        if ($instances === []) {
            throw new \InvalidArgumentException('ReplicaSet needs at least one instance URI');
        }
        $this->readFromReplicas = (bool) ($options['read_from_replicas'] ?? false);
        $this->downFor = (float) ($options['down_for'] ?? 1.0);
        $this->readOnlyCalls = \array_fill_keys($options['read_only_calls'] ?? [], true);
        unset($options['read_from_replicas'], $options['down_for'], $options['read_only_calls']);
        foreach (\array_values($instances) as $i) {
            $this->nodes[] = $i instanceof Connection ? $i : new Connection($i, $options, $codec);
        }
    }

    /** @return list<Connection> */
    public function connections(): array
    {
        return $this->nodes;
    }

    /** The instance writes currently go to, if known. */
    public function master(): ?Connection
    {
        $i = \array_search(self::RW, $this->roles, true);
        return $i === false ? null : $this->nodes[$i];
    }

    /** Asks every reachable instance for box.info.ro (needs eval rights; silently skipped without). */
    public function discover(): void
    {
        if ($this->discovering !== null) {
            $this->discovering->await();
            return;
        }
        $this->discovered = true;
        $this->discovering = $done = new Future();
        try {
            $this->askRoles();
        } finally {
            $this->discovering = null;
            $done->resolve(null);
        }
    }

    private function askRoles(): void
    {
        foreach ($this->nodes as $i => $node) {
            if ($this->isDown($i)) {
                continue;
            }
            try {
                $ro = $node->handle(RequestFactory::evaluate('return box.info.ro', [], null))->data()[0] ?? null;
                if (\is_bool($ro)) {
                    $this->roles[$i] = $ro ? self::RO : self::RW;
                }
            } catch (ConnectionException) {
                $this->markDown($i);
            } catch (ServerException) {
                // No eval rights: roles will be learned from ER_READONLY.
            }
        }
    }

    public function handle(Request $request): Response
    {
        $write = !$request->isReadOnly()
            && !($request->type === Iproto::CALL && isset($this->readOnlyCalls[$request->body[Iproto::FUNCTION_NAME]]));
        if ((!$this->discovered || $this->discovering !== null) && ($write || $this->readFromReplicas)) {
            $this->discover();
        }
        $errors = [];
        foreach ([false, true] as $rediscovered) {
            foreach ($this->order($write) as $i) {
                try {
                    $response = $this->nodes[$i]->handle($request);
                    unset($this->downUntil[$i]);
                    if ($write) {
                        $this->roles[$i] = self::RW;
                    }
                    if ($write || !$this->readFromReplicas) {
                        $this->current = $i;
                    }
                    return $response;
                } catch (ConnectionException $e) {
                    $this->markDown($i);
                    $errors[] = $this->nodes[$i]->options->display . ': ' . $e->getMessage();
                    if ($write && $e->requestSent && !$request->isIdempotent()) {
                        throw $e;
                    }
                } catch (ServerException $e) {
                    if (!$write || $e->getCode() !== Iproto::ER_READONLY) {
                        throw $e;
                    }
                    $this->roles[$i] = self::RO;
                    $errors[] = $this->nodes[$i]->options->display . ': read-only';
                }
            }
            if ($rediscovered) {
                break;
            }
            // Roles may have changed (a replica promoted): ask again, then one more pass.
            $this->roles = [];
            $this->downUntil = [];
            $this->discover();
        }
        throw new ConnectionException(\sprintf(
            'No %s instance available for %s (%s)',
            $write ? 'writable' : 'reachable',
            $request->describe(),
            \implode('; ', $errors),
        ));
    }

    public function close(): void
    {
        foreach ($this->nodes as $node) {
            $node->close();
        }
    }

    /** @return list<int> instance indexes to try, best first; down ones last */
    private function order(bool $write): array
    {
        $n = \count($this->nodes);
        $all = \range(0, $n - 1);
        if ($write) {
            $rank = fn (int $i) => match ($this->roles[$i] ?? 0) { self::RW => 0, 0 => 1, default => 2 };
            $start = $this->current;
        } elseif ($this->readFromReplicas) {
            // Known replicas first, then instances of unknown role (no eval rights: roles are
            // only learned from writes), the known master last.
            $rank = fn (int $i) => match ($this->roles[$i] ?? 0) { self::RO => 0, 0 => 1, default => 2 };
            // In turn among the best-ranked instances that are up: rotating over all instances
            // would give the one listed after the master the master's turns too.
            $up = \array_values(\array_filter($all, fn (int $i) => !$this->isDown($i)));
            $min = $up === [] ? 0 : \min(\array_map($rank, $up));
            $best = \array_values(\array_filter($up, fn (int $i) => $rank($i) === $min));
            $start = $best === [] ? $this->nextReplica++ % $n : $best[$this->nextReplica++ % \count($best)];
        } else {
            $rank = static fn (int $i) => 0;
            $start = $this->current;
        }
        // Rotate so ties are broken starting from $start (sticky master / round-robin replicas).
        $all = \array_merge(\array_slice($all, $start), \array_slice($all, 0, $start));
        $now = \microtime(true);
        \usort($all, fn (int $a, int $b) => [($this->downUntil[$a] ?? 0) > $now, $rank($a)] <=> [($this->downUntil[$b] ?? 0) > $now, $rank($b)]);
        return $all;
    }

    private function isDown(int $i): bool
    {
        return ($this->downUntil[$i] ?? 0) > \microtime(true);
    }

    private function markDown(int $i): void
    {
        $this->downUntil[$i] = \microtime(true) + $this->downFor;
        unset($this->roles[$i]);
    }
}
