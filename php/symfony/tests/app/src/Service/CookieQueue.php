<?php

declare(strict_types=1);

namespace App\Service;

use Symfony\Component\EventDispatcher\EventSubscriberInterface;
use Symfony\Component\HttpFoundation\Cookie;
use Symfony\Component\HttpKernel\Event\ResponseEvent;
use Symfony\Component\HttpKernel\KernelEvents;
use Symfony\Contracts\Service\ResetInterface;

/**
 * Cookies queued by any code during a request and added to its response: the pattern
 * behind Laravel's Cookie::queue(). It relies on being reset between requests (it is
 * tagged kernel.reset through autoconfiguration); without that, a long-lived process
 * would hand one user's cookies to every later response.
 */
final class CookieQueue implements EventSubscriberInterface, ResetInterface
{
    /** @var list<Cookie> */
    private array $queued = [];
    /** How often reset() ran: kept across resets so tests can count them. */
    public int $resets = 0;
    /** APP_LOG_RESETS=1 logs each reset, so a test can see when it happens without asking the app. */
    private readonly bool $logResets;

    public function __construct()
    {
        $this->logResets = getenv('APP_LOG_RESETS') === '1';
    }

    public static function getSubscribedEvents(): array
    {
        return [KernelEvents::RESPONSE => 'onResponse'];
    }

    public function queue(Cookie $cookie): void
    {
        $this->queued[] = $cookie;
    }

    public function count(): int
    {
        return \count($this->queued);
    }

    public function onResponse(ResponseEvent $event): void
    {
        if ($event->isMainRequest()) {
            foreach ($this->queued as $cookie) {
                $event->getResponse()->headers->setCookie($cookie);
            }
        }
    }

    public function reset(): void
    {
        $this->queued = [];
        ++$this->resets;
        if ($this->logResets) {
            file_put_contents('php://stderr', sprintf("[app] cookie queue reset #%d pid=%d\n", $this->resets, getmypid()));
        }
    }
}
