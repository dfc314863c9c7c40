<?php

declare(strict_types=1);

namespace App\Http\Controllers;

use Illuminate\Http\JsonResponse;
use Illuminate\Http\Request;
use Illuminate\Http\Response;
use Illuminate\Routing\Controller;
use Illuminate\Support\Facades\Auth;
use Illuminate\Support\Facades\Cookie;

/** The pages every framework test app has: routes, forms, uploads, cookies, sessions, errors. */
final class PageController extends Controller
{
    public function home(): string
    {
        return 'home';
    }

    public function hello(string $name): string
    {
        return 'Hello, ' . $name;
    }

    public function form(Request $request): JsonResponse
    {
        return response()->json(['name' => $request->input('name'), 'all' => $request->all(), 'method' => $request->method()]);
    }

    public function upload(Request $request): JsonResponse
    {
        $stored = $request->file('doc');
        $moved = $request->file('other');
        $out = ['valid' => $stored?->isValid(), 'client_name' => $stored?->getClientOriginalName(), 'field' => $request->input('note')];
        if ($stored !== null) {
            $path = $stored->store('uploads');
            $out['stored'] = $path;
            $out['stored_content'] = file_get_contents(storage_path('app/' . $path));
        }
        if ($moved !== null) {
            $target = $moved->move(storage_path('app/moved'), 'moved.txt');
            $out['moved_content'] = file_get_contents($target->getPathname());
            $out['moved_twice'] = $moved->isValid();
        }

        return response()->json($out);
    }

    public function setCookie(): Response
    {
        return response('set')->cookie('flavor', 'mint', 10, '/', null, false, true, false, 'strict');
    }

    public function getCookie(Request $request): string
    {
        return 'flavor=' . $request->cookie('flavor', 'none');
    }

    public function queueCookie(Request $request): string
    {
        Cookie::queue((string) $request->query('name', 'queued'), (string) $request->query('value', 'yes'), 10);

        return 'queued';
    }

    public function counter(Request $request): string
    {
        $count = $request->session()->get('count', 0) + 1;
        $request->session()->put('count', $count);

        return 'count=' . $count;
    }

    public function boom(): never
    {
        throw new \RuntimeException('boom from the test app');
    }

    public function login(int $id): string
    {
        Auth::loginUsingId($id);

        return 'logged in as ' . Auth::user()->name;
    }

    public function logout(): string
    {
        Auth::logout();

        return 'logged out';
    }

    public function whoami(): string
    {
        return Auth::user()->name ?? 'guest';
    }

    public function config(Request $request): string
    {
        if ($request->has('set')) {
            config(['app.probe' => $request->query('set')]);
        }

        return 'probe=' . config('app.probe');
    }

    public function slowTerminate(Request $request): string
    {
        $marker = storage_path('terminated-' . $request->query('tag', 'x') . '.txt');
        app()->terminating(static function () use ($marker): void {
            usleep(300_000);
            file_put_contents($marker, (string) microtime(true));
        });

        return 'answered';
    }

    /**
     * Which worker loop called the controller: ext/ferry's (ext) or the SDK's (php). With
     * ?wait=FIFO a terminating callback then waits for a line on that FIFO.
     */
    public function via(Request $request): Response
    {
        $fifo = (string) $request->query('wait', '');
        if ($fifo !== '') {
            app()->terminating(static function () use ($fifo): void {
                $go = fopen($fifo, 'r');
                fgets($go);
                fclose($go);
                file_put_contents('php://stderr', '[app] terminating callback released, called from the ' . self::loop() . " loop\n");
            });
        }

        return response(self::loop(), 200, ['Content-Type' => 'text/plain; charset=UTF-8']);
    }

    private static function loop(): string
    {
        return \in_array('Ferry\\Ext\\http_serve', array_column(debug_backtrace(), 'function'), true) ? 'ext' : 'php';
    }

    public function runtime(): JsonResponse
    {
        return response()->json(['console' => app()->runningInConsole(), 'sapi' => \PHP_SAPI, 'pid' => getmypid()]);
    }

    public function view(): \Illuminate\Contracts\View\View
    {
        return view('page');
    }
}
