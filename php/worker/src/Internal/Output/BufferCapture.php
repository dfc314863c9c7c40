<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Output;

use Ferry\Worker\Worker;

/**
 * @internal What both captures share: one output buffer for the whole life of the worker.
 *
 * The buffer is installed without PHP_OUTPUT_HANDLER_REMOVABLE, so application code that
 * closes every buffer it sees (ob_end_clean() loops, error pages, frameworks resetting
 * output) cannot make later output bypass it: echo keeps landing in the job's response
 * instead of leaking to STDOUT. PHP refuses such a removal with an E_NOTICE; the handler
 * installed here does what the application asked for instead (discard the job's output
 * so far, or keep it for ob_end_flush()) and keeps the notice out of the response.
 */
abstract class BufferCapture implements OutputCapture
{
    /**
     * A loop like `while (ob_get_level()) ob_end_clean();` never ends against our buffer.
     * With ext/ferry, sequential workers use SapiCapture instead, where it ends as under FPM.
     */
    private const MAX_REFUSALS = 100;

    /** level of our buffer; 0 while it is not installed (public for ext/ferry: the worker contract) */
    public int $level = 0;
    /** refusals since the running job began; each capture clears it in begin() (ext/ferry's loops too) */
    public int $refusals = 0;
    private static bool $refusalLogged = false;

    /**
     * @param resource $sink where output made outside any job goes (the worker's log)
     */
    public function __construct(protected readonly mixed $sink = STDERR)
    {
    }

    /**
     * Installs the buffer for good (it cannot be removed afterwards, not even by us) and the
     * error handler that answers PHP's refusals to remove it.
     */
    public function install(): void
    {
        if ($this->level !== 0) {
            return;
        }
        ob_start($this->collect(...), static::chunkSize(), PHP_OUTPUT_HANDLER_CLEANABLE | PHP_OUTPUT_HANDLER_FLUSHABLE);
        $this->level = ob_get_level();
        $previous = null;
        $previous = set_error_handler(function (int $type, string $message, string $file = '', int $line = 0) use (&$previous): bool {
            if ($type === E_NOTICE && $this->refused($message)) {
                return true;
            }
            // Every type must come through here: PHP only consults the handler on top.
            if ($previous === null) {
                return false;
            }

            return $previous($type, $message, $file, $line) !== false;
        });
    }

    /** Forwards output made outside any job to the log. */
    public function release(): void
    {
    }

    /** 0: one buffer filled until we take it; 1: every write reaches collect() at once. */
    abstract protected static function chunkSize(): int;

    abstract protected function collect(string $buffer, int $phase): string;

    /**
     * The application asked to discard our buffer ($function: ob_end_clean or ob_get_clean):
     * drop the running job's output so far, as far as PHP did not do it.
     */
    abstract protected function discard(string $function): void;

    protected function sink(string $output): void
    {
        if ($output !== '') {
            fwrite($this->sink, $output);
        }
    }

    /** Folds buffers the application left open above ours into ours; false if one would not close. */
    protected function settle(): bool
    {
        while (ob_get_level() > $this->level) {
            if (!@ob_end_flush()) {
                return false;
            }
        }

        return true;
    }

    private function refused(string $message): bool
    {
        if (preg_match('/^(ob_\w+)\(\): Failed to (discard|send|delete) buffer of .* \((\d+)\)$/', $message, $m) !== 1) {
            return false;
        }
        [, $function, $refused, $index] = $m;
        // PHP numbers buffers from 0 in this message; ob_get_level() counts from 1.
        if ((int) $index + 1 !== $this->level) {
            return false;
        }
        if ($refused === 'delete') {
            return true; // the second half of an ob_get_*() refusal already handled
        }
        if (!self::$refusalLogged) {
            self::$refusalLogged = true;
            Worker::log("the application tried to close the worker's output buffer ($function()); "
                . 'it stays open so that later output still reaches the response');
        }
        if (++$this->refusals > self::MAX_REFUSALS) {
            $this->refusals = 0;
            throw new \LogicException(sprintf(
                "output buffer loop: %s() was refused more than %d times because the worker's output buffer cannot be closed; "
                . 'stop at the level your code started with (ob_get_level() > $level) or when ob_end_clean() returns false, '
                . 'or load ext/ferry (pool.php.extension), with which a request starts with one removable buffer as under FPM',
                $function,
                self::MAX_REFUSALS
            ));
        }
        if ($refused === 'discard') {
            $this->discard($function);
        }

        return true;
    }
}
