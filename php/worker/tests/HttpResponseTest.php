<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Http\Response;
use PHPUnit\Framework\TestCase;

final class HttpResponseTest extends TestCase
{
    public function testContextIsTheDocumentedJson(): void
    {
        $r = new Response(201, ['X-A' => ['1', '2'], 'Content-Type' => 'text/plain'], 'body');
        self::assertSame('{"status":201,"headers":{"X-A":["1","2"],"Content-Type":["text/plain"]}}', $r->context());
        self::assertSame('body', $r->body);
    }

    public function testEmptyHeadersEncodeAsAnObject(): void
    {
        self::assertSame('{"status":204,"headers":{}}', (new Response(204))->context());
    }

    public function testHeaderReplacesAnyCaseAndAddHeaderAppends(): void
    {
        $r = (new Response())->header('X-Thing', 'a')->addHeader('x-thing', 'b');
        self::assertSame(['a', 'b'], $r->getHeader('X-THING'));
        $r->header('x-THING', 'c');
        self::assertSame(['x-THING' => ['c']], $r->getHeaders());
        $r->removeHeader('X-Thing');
        self::assertSame([], $r->getHeaders());
    }

    public function testHelpers(): void
    {
        self::assertSame(['text/plain; charset=utf-8'], Response::text('x')->getHeader('content-type'));
        self::assertSame(['text/html; charset=utf-8'], Response::html('x')->getHeader('content-type'));
        $json = Response::json(['a' => 'é/'], 422);
        self::assertSame('{"a":"é/"}', $json->body);
        self::assertSame(422, $json->getStatus());
        $redirect = Response::redirect('/login');
        self::assertSame(302, $redirect->getStatus());
        self::assertSame(['/login'], $redirect->getHeader('Location'));
        self::assertSame('ab', (new Response())->write('a')->write('b')->body);
    }

    public function testAHelpersContextFollowsLaterChanges(): void
    {
        // Helpers' contexts are reused across responses: every change must still show.
        $plain = '{"status":200,"headers":{"Content-Type":["text/plain; charset=utf-8"]}}';
        self::assertSame($plain, Response::text('a')->context());
        self::assertSame($plain, Response::text('b')->context());
        self::assertSame(
            '{"status":404,"headers":{"Content-Type":["text/plain; charset=utf-8"]}}',
            Response::text('a')->status(404)->context()
        );
        self::assertSame(
            '{"status":200,"headers":{"Content-Type":["text/plain; charset=utf-8"],"X-A":["1"]}}',
            Response::text('a')->header('X-A', '1')->context()
        );
        self::assertSame('{"status":200,"headers":{"content-type":["text/csv"]}}', Response::text('a')->header('content-type', 'text/csv')->context());
        self::assertSame('{"status":200,"headers":{}}', Response::html('a')->removeHeader('Content-Type')->context());
        self::assertStringContainsString('"Set-Cookie":["k=v"]', Response::json([])->cookie('k', 'v')->context());
        self::assertSame($plain, Response::text('c')->context());
        self::assertSame(
            '{"status":500,"headers":{"Content-Type":["application/json"]}}',
            Response::json(['e' => 1], 500)->context()
        );
    }

    public function testCookiesBecomeSetCookieHeaders(): void
    {
        $r = (new Response())
            ->cookie('sid', 'a b;c', 0, '/', '', true, true, 'Lax')
            ->cookie('theme', 'dark', 2000000000, '/app', 'example.com');
        $lines = $r->getHeader('Set-Cookie');
        self::assertSame('sid=a%20b%3Bc; path=/; secure; HttpOnly; SameSite=Lax', $lines[0]);
        self::assertStringStartsWith('theme=dark; expires=Wed, 18 May 2033 03:33:20 GMT; Max-Age=', $lines[1]);
        self::assertStringEndsWith('; path=/app; domain=example.com', $lines[1]);
        self::assertStringContainsString('"Set-Cookie":["sid=', $r->context());
    }

    public function testACustomReasonPhraseTravelsOnlyWhenItIsNotTheStandardOne(): void
    {
        self::assertSame('{"status":404,"reason":"No Such Page","headers":{}}', (new Response(404))->reason('No Such Page')->context());
        self::assertSame('{"status":404,"headers":{}}', (new Response(404))->reason('Not Found')->context());
        self::assertSame('{"status":599,"reason":"Custom","headers":{}}', (new Response())->status(599, 'Custom')->context());
        $text = Response::text('x', 418)->reason('Short and stout');
        self::assertSame('{"status":418,"reason":"Short and stout","headers":{"Content-Type":["text/plain; charset=utf-8"]}}', $text->context());
        self::assertSame(
            '{"status":418,"headers":{"Content-Type":["text/plain; charset=utf-8"]}}',
            Response::text('x', 418)->context(),
            'a reason does not stick to the shared context of a helper'
        );
        self::assertSame('Short and stout', $text->getReason());
        self::assertSame('Created', (new Response(201))->getReason());
    }

    public function testHeaderValuesThatAreNotUtf8AreSentAsBytes(): void
    {
        $latin1 = "attachment; filename=\"caf\xE9.txt\"";
        $r = (new Response(200, ['X-Plain' => 'ok']))
            ->header('Content-Disposition', $latin1)
            ->addHeader('X-Mixed', 'fine')
            ->addHeader('X-Mixed', "\xFF\xFE")
            ->addHeader('X-Mixed', 'caf\u{e9}');
        $context = json_decode($r->context(), true, 8, JSON_THROW_ON_ERROR);

        self::assertSame(['X-Plain' => ['ok'], 'X-Mixed' => ['fine', 'caf\u{e9}']], $context['headers']);
        self::assertSame(['Content-Disposition' => [base64_encode($latin1)], 'X-Mixed' => [base64_encode("\xFF\xFE")]], $context['raw_headers']);
        self::assertSame($latin1, base64_decode($context['raw_headers']['Content-Disposition'][0], true));
        self::assertStringNotContainsString('\ufffd', $r->context());
        self::assertArrayNotHasKey('raw_headers', json_decode((new Response(200, ['X' => 'caf\u{e9}']))->context(), true));
    }

    /**
     * @return iterable<string, array{callable(): mixed, string}>
     */
    public static function invalid(): iterable
    {
        yield 'status too low' => [static fn () => new Response(99), 'within 100..599'];
        yield 'status too high' => [static fn () => (new Response())->status(600), 'within 100..599'];
        yield 'header name with space' => [static fn () => (new Response())->header('Bad Name', 'x'), 'invalid HTTP header name'];
        yield 'header injection' => [static fn () => (new Response())->header('X', "a\r\nSet-Cookie: x=1"), 'CR, LF or NUL'];
        yield 'cookie name' => [static fn () => (new Response())->cookie('a=b', 'x'), 'invalid cookie name'];
        yield 'cookie path' => [static fn () => (new Response())->cookie('a', 'x', 0, '/;x'), 'invalid path'];
        yield 'reason with CR LF' => [static fn () => (new Response())->reason("OK\r\nX: y"), 'control character'];
        yield 'samesite' => [static fn () => (new Response())->cookie('a', 'x', 0, '', '', false, false, 'Sometimes'), 'SameSite'];
    }

    /**
     * @dataProvider invalid
     */
    public function testInvalidValuesAreRefused(callable $build, string $message): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->expectExceptionMessage($message);
        $build();
    }
}
