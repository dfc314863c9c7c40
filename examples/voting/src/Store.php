<?php

declare(strict_types=1);

namespace Voting;

use Ferry\Tarantool\Async\Future;
use Ferry\Tarantool\Client;
use Ferry\Tarantool\Codec\ExtCodec;
use Ferry\Tarantool\Connection\Connection;
use Ferry\Tarantool\Exception\ConnectionException;
use Ferry\Tarantool\Exception\ServerException;
use Ferry\Tarantool\Exception\TimeoutException;

/**
 * The app's data access: one method per Tarantool round trip, so the cost of a page view
 * stays visible (uuid sessions, upsert, top-9).
 */
final class Store
{
    // Fixed in tarantool/init.lua, so no schema has to be fetched after connecting.
    private const SESSIONS = 513;
    private const MAX_USER_AGENT = 256;
    /**
     * A synchronous write (replica-set mode) that collected no quorum in time, and the writes
     * queued behind it, are rolled back: ER_SYNC_QUORUM_TIMEOUT, ER_SYNC_ROLLBACK, and
     * ER_WAL_IO, the code 2.6.0 gives the queued ones. Nothing was stored: a 503 to retry.
     */
    private const SYNC_FAILURES = [216, 217, 40];
    /** ER_READONLY: a write reached an instance that is not (yet) the master. */
    private const ER_READONLY = 7;

    /** @param bool $replicaSet whether $client spans a replica set (pages then say who served them) */
    public function __construct(private readonly Client $client, public readonly bool $replicaSet = false)
    {
    }

    /**
     * A client configured from the environment:
     *   VOTING_TARANTOOL         URI, default tcp://voting:voting@127.0.0.1:3301; several
     *                            comma-separated URIs make a replica set: writes go to the
     *                            master, the listings (voting_top/bottom) to the replicas
     *   VOTING_CONNECT_TIMEOUT   seconds, default 0.5 (Tarantool down must not hang pages)
     *   VOTING_READ_TIMEOUT      seconds, default 2
     */
    public static function fromEnv(bool $persistent): self
    {
        $env = static fn (string $name, string $default): string => (string) ($_SERVER[$name] ?? (getenv($name) ?: $default));
        $options = [
            'connect_timeout' => (float) $env('VOTING_CONNECT_TIMEOUT', '0.5'),
            'read_timeout' => (float) $env('VOTING_READ_TIMEOUT', '2'),
            'write_timeout' => (float) $env('VOTING_READ_TIMEOUT', '2'),
            'persistent' => $persistent,
        ];
        if (\function_exists('msgpack_pack')) {
            $options['codec'] = new ExtCodec();
        }
        $uris = array_values(array_filter(array_map(trim(...), explode(',', $env('VOTING_TARANTOOL', 'tcp://voting:voting@127.0.0.1:3301')))));
        if (\count($uris) > 1) {
            return new self(Client::replicaSet($uris, $options + [
                'read_from_replicas' => true,
                // Read-only procedures a replica may serve; voting_vote and writes go to the master.
                'read_only_calls' => ['voting_top', 'voting_bottom', 'voting_uuid'],
                'down_for' => 1.0,
            ]), true);
        }
        return new self(Client::connect($uris[0], $options));
    }

    /**
     * A page view in as few round trips as the data dependencies allow: refresh the
     * session named by $cookie (null when absent or malformed), and when that finds nothing,
     * get a new uuid from Tarantool and upsert the session row; meanwhile read the 9 stickers
     * through the rating index. Requests travel pipelined (several per write), so a returning
     * visitor costs one exchange and a new one two.
     *
     * @param 'voting_top'|'voting_bottom' $listing
     * @return array{list<Sticker>, ?string, ?int} the stickers, the new session id if one was
     *   made, and the box.info.id of the instance that read the stickers
     */
    public function visit(?string $cookie, string $listing, int $count, int $now, string $ip, string $userAgent): array
    {
        $userAgent = substr($userAgent, 0, self::MAX_USER_AGENT);
        $ops = [['=', 2, $now], ['=', 3, $ip], ['=', 4, $userAgent]];
        return $this->guard(function () use ($cookie, $listing, $count, $now, $ip, $userAgent, $ops): array {
            $async = $this->client->async();
            $listed = $async->call($listing, [$count]);
            $newId = null;
            if ($cookie === null || !$this->refreshSession($async->update(self::SESSIONS, [$cookie], $ops))) {
                $newId = $async->call('voting_uuid')->await()[0] ?? null;
                if (!\is_string($newId) || !Uuid::isValid($newId)) {
                    throw new \UnexpectedValueException('voting_uuid() returned ' . var_export($newId, true));
                }
                $saved = $async->upsert(self::SESSIONS, [$newId, $now, $ip, $userAgent], $ops);
            }
            $reply = $listed->await();
            $tuples = $reply[0] ?? null;
            if (!\is_array($tuples)) {
                throw new \UnexpectedValueException("$listing() returned no list");
            }
            if (isset($saved)) {
                $saved->await(); // the cookie is only handed out once its session is stored
            }
            return [array_map(Sticker::fromTuple(...), $tuples), $newId, \is_int($reply[1] ?? null) ? $reply[1] : null];
        });
    }

    /**
     * Whether the visitor's session exists (and got its time, ip and user agent refreshed).
     * In a replica set with no reachable master the refresh is skipped and the page is still
     * served from a replica: the visitor keeps the cookie, unchecked until the next vote.
     */
    private function refreshSession(Future $update): bool
    {
        try {
            return $update->await() !== null;
        } catch (ConnectionException | TimeoutException | ServerException $e) {
            // During a failover the write may also reach a replica not yet promoted
            // (ER_READONLY) or be rolled back by the synchronous queue.
            $failover = $e instanceof ServerException
                ? $e->getCode() === self::ER_READONLY || \in_array($e->getCode(), self::SYNC_FAILURES, true)
                : true;
            if (!$this->replicaSet || !$failover) {
                throw $e;
            }
            error_log('[warning] voting: session not refreshed, no writable Tarantool: ' . $e->getMessage());
            return true;
        }
    }

    /** @return array{VoteOutcome, ?int} the outcome and, when counted, the vote's id */
    public function vote(string $session, int $winner, int $loser, int $now): array
    {
        $reply = $this->guard(fn () => $this->client->call('voting_vote', [$session, $winner, $loser, $now]));
        $outcome = \is_string($reply[0] ?? null) ? VoteOutcome::tryFrom($reply[0]) : null;
        if ($outcome === null || ($outcome === VoteOutcome::Ok && !\is_int($reply[1] ?? null))) {
            throw new \UnexpectedValueException('voting_vote() returned ' . json_encode($reply, JSON_PARTIAL_OUTPUT_ON_ERROR));
        }
        return [$outcome, $reply[1] ?? null];
    }

    /**
     * Runs one request; transport failures become Unavailable. A socket kept from earlier
     * requests may have died unnoticed (Tarantool restarted), so that case gets one retry on
     * a fresh connection: replaying is safe here, a vote cannot count twice.
     */
    private function guard(\Closure $op): mixed
    {
        $handler = $this->client->handler();
        $reused = $handler instanceof Connection && $handler->isConnected();
        try {
            return $op();
        } catch (TimeoutException $e) {
            throw new Unavailable('Tarantool did not answer in time: ' . $e->getMessage(), 0, $e);
        } catch (ServerException $e) {
            if (!\in_array($e->getCode(), self::SYNC_FAILURES, true)) {
                throw $e;
            }
            throw new Unavailable('Tarantool rolled the write back: ' . $e->getMessage(), 0, $e);
        } catch (ConnectionException $e) {
            if (!$reused) {
                throw new Unavailable('Tarantool is unreachable: ' . $e->getMessage(), 0, $e);
            }
        }
        try {
            return $op();
        } catch (ConnectionException $e) {
            throw new Unavailable('Tarantool is unreachable: ' . $e->getMessage(), 0, $e);
        }
    }
}
