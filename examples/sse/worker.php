<?php

declare(strict_types=1);

// Server-Sent Events from a Ferry worker: GET /events streams one event every `every_ms`
// milliseconds (default 1000), `count` of them (default 10). Each event reaches the
// browser as soon as it is yielded; when the browser goes away, the generator gets a
// StreamStoppedException at its yield and the worker takes the next request.
require __DIR__ . '/../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;
use Ferry\Worker\Http\StreamStoppedException;

$page = <<<'HTML'
<!doctype html>
<title>Ferry SSE</title>
<ul id="log"></ul>
<script>
const log = document.getElementById('log');
new EventSource('/events').onmessage = (e) => {
    const li = document.createElement('li');
    li.textContent = e.data;
    log.append(li);
};
</script>
HTML;

HttpWorker::create()->run(static function (Request $request) use ($page): Response {
    if ($request->path !== '/events') {
        return Response::html($page);
    }
    $query = $request->query();
    $count = max(1, (int) ($query['count'] ?? 10));
    $every = max(0, (int) ($query['every_ms'] ?? 1000));

    $events = static function () use ($count, $every): Generator {
        try {
            for ($i = 1; $i <= $count; $i++) {
                if ($i > 1) {
                    usleep($every * 1000);
                }
                // The time the event was made lets a reader check it was not held back.
                $data = json_encode(['n' => $i, 'sent' => microtime(true), 'pid' => getmypid()]);
                yield "id: $i\nevent: tick\ndata: $data\n\n";
            }
        } catch (StreamStoppedException) {
            // The browser left: nothing to clean up here, but this is where it would go.
        }
    };

    return Response::stream($events(), 200, [
        'Content-Type' => 'text/event-stream',
        'Cache-Control' => 'no-cache',
        // Tells a proxy in front (nginx) not to buffer the stream either.
        'X-Accel-Buffering' => 'no',
    ]);
});
