<?php

declare(strict_types=1);

namespace Ferry\Laravel\Http;

use Ferry\Worker\Http\Request as FerryRequest;
use Illuminate\Http\Request;

/**
 * Ferry's raw request to an Illuminate request, as Request::capture() would build it under
 * PHP-FPM behind nginx's try_files to public/index.php: same server parameters, input,
 * cookies and files, without going through superglobals or PSR-7.
 */
final class RequestBridge
{
    public function __construct(private readonly string $publicPath)
    {
    }

    public function toLaravel(FerryRequest $ferry): Request
    {
        $server = $ferry->server();
        // What FPM gives a front controller, so that Symfony finds an empty base URL and
        // the path info is the request path.
        $server['SCRIPT_NAME'] = '/index.php';
        $server['PHP_SELF'] = '/index.php';
        $server['SCRIPT_FILENAME'] = $this->publicPath . '/index.php';
        $server['DOCUMENT_ROOT'] = $this->publicPath;
        unset($server['PATH_INFO']);

        $bodyFile = $ferry->bodyFile();
        $content = $bodyFile !== null ? fopen($bodyFile, 'rb') : $ferry->body;

        $request = new Request(
            $ferry->query(),
            $ferry->post(),
            [],
            $ferry->cookies,
            self::files($ferry),
            $server,
            $content === false ? '' : $content,
        );
        // As Request::createFromBase() does for Request::capture(): JSON bodies are the input.
        $request->request = (fn () => $this->getInputSource())->call($request);

        return $request;
    }

    /**
     * The $_FILES shape, nested names included, as trees of UploadedFile. An empty file
     * input stays a $_FILES entry, which Symfony's FileBag turns into null as under FPM.
     *
     * @return array<string, mixed>
     */
    private static function files(FerryRequest $ferry): array
    {
        if ($ferry->uploads === []) {
            return [];
        }
        $files = [];
        foreach ($ferry->files() as $field => $info) {
            $files[$field] = self::tree($info['name'], $info['type'], $info['tmp_name'], $info['error'], $ferry);
        }

        return $files;
    }

    private static function tree(mixed $name, mixed $type, mixed $tmp, mixed $error, FerryRequest $ferry): mixed
    {
        if (!\is_array($name)) {
            if ((int) $error === \UPLOAD_ERR_NO_FILE) {
                return ['error' => \UPLOAD_ERR_NO_FILE, 'name' => '', 'size' => 0, 'tmp_name' => '', 'type' => ''];
            }

            return new UploadedFile((string) $tmp, (string) $name, $type === '' ? null : (string) $type, (int) $error, $ferry);
        }
        $tree = [];
        foreach ($name as $key => $value) {
            $tree[$key] = self::tree($value, $type[$key] ?? '', $tmp[$key] ?? '', $error[$key] ?? \UPLOAD_ERR_NO_FILE, $ferry);
        }

        return $tree;
    }
}
