<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;
use Ferry\Worker\Internal\WorkerSession;
use Ferry\Worker\Tests\Support\ExtIni;
use Ferry\Worker\Tests\Support\Http;
use Ferry\Worker\Tests\Support\WorkerProcess;
use PHPUnit\Framework\TestCase;

/**
 * A worker whose ext/ferry speaks another worker contract version than its php/worker
 * (an extension built from another release): ext/ferry's loop stays off, PHP serves every
 * request, and the log says why, naming both versions. ext/ferry/contract_test.sh builds
 * such an extension and runs this test with it.
 */
final class ContractMismatchTest extends TestCase
{
    public function testTheWorkerServesInPhpAndLogsBothVersions(): void
    {
        if (getenv('FERRY_TEST_OTHER_CONTRACT') !== '1') {
            self::markTestSkipped('needs ext/ferry built for another contract version: run ext/ferry/contract_test.sh');
        }
        $timeout = (float) (getenv('FERRY_TEST_TIMEOUT') ?: 10);
        $worker = new WorkerProcess(__DIR__ . '/fixtures/native-worker.php', [
            'PHP_INI_SCAN_DIR' => ExtIni::scanDir(),
            'FERRY_EXT_LOOP' => '1',
        ], 'fds');
        $worker->send(FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], json_encode(['pid' => getmypid()])));
        self::assertSame(Frame::CONTROL | Frame::JSON, $worker->readFrames(1, $timeout)[0]->flags);

        $worker->send(Http::job(1, '/via') . Http::job(2, '/'));
        $answers = $worker->readFrames(2, $timeout);
        self::assertStringEndsWith('php', $answers[0]->payload, 'the PHP loop serves the usual request');
        self::assertStringEndsWith("Hello, example.com:8080\n", $answers[1]->payload);
        $worker->closeRelay();
        self::assertSame(0, $worker->wait($timeout));
        self::assertStringContainsString(
            'warning: ext/ferry speaks worker contract version 0, php/worker version ' . WorkerSession::CONTRACT_VERSION
                . ": ext/ferry's worker loop is off and PHP serves every request",
            $worker->stderr(),
        );
    }
}
