<?php

declare(strict_types=1);

namespace Voting;

/**
 * The voting service, independent of the server that runs it: Ferry's worker and the FPM
 * front controller both turn their request into an AppRequest and send back the AppResponse.
 */
final class App
{
    public const COOKIE = 'voter';
    private const COOKIE_MAX_AGE = 31536000;
    private const SHOWN = 9;

    public function __construct(private readonly Store $store, private readonly View $view = new View())
    {
    }

    public function handle(AppRequest $r): AppResponse
    {
        try {
            return match ($r->path) {
                '/', '/good' => $this->page('good', $r),
                '/bad' => $this->page('bad', $r),
                '/vote' => $this->vote($r),
                default => $this->error($r, 404, 'not_found', 'No such page.'),
            };
        } catch (Unavailable $e) {
            // PSR-3's "[warning] " head: Ferry logs the line at warn, so a 503's cause is seen.
            error_log('[warning] voting: ' . $e->getMessage());
            $response = $this->error($r, 503, 'unavailable', 'The rating database is not reachable right now. Please try again in a few seconds.');
            $response->headers['Retry-After'] = '5';
            return $response;
        }
    }

    /**
     * A page view: find the visitor's session (a new uuid from Tarantool when the
     * cookie is missing, malformed or unknown), record uuid/time/ip/user agent, read 9 stickers
     * through the rating index.
     */
    private function page(string $kind, AppRequest $r): AppResponse
    {
        if ($r->method !== 'GET' && $r->method !== 'HEAD') {
            return $this->notAllowed($r, 'GET, HEAD');
        }
        $cookie = $r->voterCookie !== null && Uuid::isValid($r->voterCookie) ? $r->voterCookie : null;
        [$stickers, $newSession, $readFrom] = $this->store->visit(
            $cookie,
            $kind === 'good' ? 'voting_top' : 'voting_bottom',
            self::SHOWN,
            time(),
            $r->ip,
            $r->userAgent,
        );
        $servedBy = $this->store->replicaSet && $readFrom !== null ? $readFrom : null;
        $response = AppResponse::html($this->view->page($kind, $stickers, $servedBy));
        $response->headers['Cache-Control'] = 'no-store';
        if ($servedBy !== null) {
            $response->headers['X-Voting-Read-From'] = (string) $servedBy;
        }
        if ($newSession !== null) {
            $response->withCookie(\sprintf('%s=%s; Max-Age=%d; Path=/; HttpOnly; SameSite=Lax', self::COOKIE, $newSession, self::COOKIE_MAX_AGE));
        }
        return $response;
    }

    /** POST /vote winner=<id>&loser=<id>[&from=/bad]; JSON answers when the client accepts JSON. */
    private function vote(AppRequest $r): AppResponse
    {
        if ($r->method !== 'POST') {
            return $this->notAllowed($r, 'POST');
        }
        $winner = self::stickerId($r->form['winner'] ?? null);
        $loser = self::stickerId($r->form['loser'] ?? null);
        $session = $r->voterCookie !== null && Uuid::isValid($r->voterCookie) ? $r->voterCookie : null;
        $voteId = null;
        if ($winner === null || $loser === null) {
            $outcome = VoteOutcome::BadRequest;
        } elseif ($session === null) {
            $outcome = VoteOutcome::NoSession;
        } else {
            [$outcome, $voteId] = $this->store->vote($session, $winner, $loser, time());
        }
        if ($r->wantsJson) {
            return AppResponse::json([
                'ok' => $outcome === VoteOutcome::Ok,
                'outcome' => $outcome->value,
                'message' => $outcome->message(),
                'vote' => $voteId,
                'winner' => $winner,
                'loser' => $loser,
            ], $outcome->status());
        }
        if ($outcome === VoteOutcome::Ok) {
            return AppResponse::redirect(($r->form['from'] ?? '') === '/bad' ? '/bad' : '/');
        }
        return AppResponse::html($this->view->message('Vote not counted', $outcome->message()), $outcome->status());
    }

    private static function stickerId(mixed $value): ?int
    {
        // Ten digits at most: bigger numbers are no sticker and would not fit Tarantool's check.
        return \is_string($value) && preg_match('/^[0-9]{1,10}$/D', $value) === 1 ? (int) $value : null;
    }

    private function notAllowed(AppRequest $r, string $allow): AppResponse
    {
        $response = $this->error($r, 405, 'method_not_allowed', "Use $allow.");
        $response->headers['Allow'] = $allow;
        return $response;
    }

    private function error(AppRequest $r, int $status, string $code, string $message): AppResponse
    {
        if ($r->wantsJson) {
            return AppResponse::json(['ok' => false, 'outcome' => $code, 'message' => $message], $status);
        }
        $titles = [404 => 'Not found', 405 => 'Method not allowed', 503 => 'Temporarily unavailable'];
        return AppResponse::html($this->view->message($titles[$status] ?? 'Error', $message), $status);
    }
}
