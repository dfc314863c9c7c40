<?php

declare(strict_types=1);

namespace App\EventListener;

use App\Controller\PageController;
use Symfony\Component\EventDispatcher\EventSubscriberInterface;
use Symfony\Component\HttpKernel\Event\TerminateEvent;
use Symfony\Component\HttpKernel\KernelEvents;

/**
 * Slow work after the response (mail, webhooks): lingers for the milliseconds a request
 * asked for in its `_linger` attribute, then logs when it finished; or waits for a line on
 * the FIFO named by its `_wait` attribute.
 */
final class TerminateListener implements EventSubscriberInterface
{
    public static function getSubscribedEvents(): array
    {
        return [KernelEvents::TERMINATE => 'onTerminate'];
    }

    public function onTerminate(TerminateEvent $event): void
    {
        $fifo = $event->getRequest()->attributes->get('_wait');
        if (\is_string($fifo) && $fifo !== '') {
            // The answer is out already: the test writes to the FIFO once it has it.
            $go = fopen($fifo, 'r');
            fgets($go);
            fclose($go);
            file_put_contents('php://stderr', '[app] terminate listener released, called from the ' . PageController::loop() . " loop\n");
        }
        $ms = (int) $event->getRequest()->attributes->get('_linger', 0);
        if ($ms <= 0) {
            return;
        }
        usleep($ms * 1000);
        file_put_contents('php://stderr', sprintf("[app] terminate listener done: id=%s status=%d at=%.6f\n",
            $event->getRequest()->query->get('id', ''), $event->getResponse()->getStatusCode(), microtime(true)));
    }
}
