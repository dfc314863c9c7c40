--TEST--
ferry: the extension loads and exposes its API
--EXTENSIONS--
ferry
--FILE--
<?php
foreach (['request_begin', 'request_end', 'in_request', 'register_uploaded_file', 'catch_exit',
          'frames_parse', 'frame_decode', 'frame_encode', 'answer_frame', 'job_answer', 'request_context', 'frames_read', 'request_read'] as $name) {
    $f = new ReflectionFunction("Ferry\\Ext\\$name");
    echo $name, '(', implode(', ', array_map(fn ($p) => $p->getType() . ' $' . $p->getName(), $f->getParameters())), '): ', $f->getReturnType(), "\n";
}
var_dump(get_parent_class(Ferry\Ext\FrameException::class), Ferry\Ext\DEFAULT_MAX_PAYLOAD);
var_dump(Ferry\Ext\in_request());
?>
--EXPECT--
request_begin(): void
request_end(bool $defaultContentType, bool $poweredBy): array
in_request(): bool
register_uploaded_file(string $path): void
catch_exit(callable $callback): ?int
frames_parse(string $buffer, int $offset, int $maxPayload): array
frame_decode(string $bytes, int $maxPayload): array
frame_encode(int $flags, array $options, string $payload, int $streamFlags): string
answer_frame(int $contextLength, int $id, string $payload): string
job_answer(int $id, string $context, string $body): string
request_context(string $context): ?array
frames_read(string $buffer, int $offset, int $maxPayload): array
request_read(string $context, string $body): ?object
string(16) "RuntimeException"
int(67108864)
bool(false)
