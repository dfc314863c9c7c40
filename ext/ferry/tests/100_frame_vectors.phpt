--TEST--
ferry: frame codec agrees with the shared vectors (testdata/frames.json, written by the Go side)
--EXTENSIONS--
ferry
--FILE--
<?php
use Ferry\Ext\FrameException;
use function Ferry\Ext\{frame_decode, frame_encode, frames_parse, answer_frame};

$vectors = json_decode(file_get_contents(__DIR__ . '/frames.json'), true, 16, JSON_THROW_ON_ERROR);
$reasons = [];
foreach ($vectors as $v) {
    $bytes = hex2bin($v['frame_hex']);
    if (!isset($v['error'])) {
        [$flags, $options, $payload, $stream] = frame_decode($bytes);
        $ok = $flags === $v['flags'] && $options === ($v['options'] ?? []) && bin2hex($payload) === $v['payload_hex']
            && $stream === $v['stream_flags'];
        $encoded = frame_encode($v['flags'], $v['options'] ?? [], hex2bin($v['payload_hex']), $v['stream_flags']);
        [$frames, $offset] = frames_parse($bytes . $bytes, 0);
        $parsed = count($frames) === 2 && $frames[0] === [$flags, $options, $payload, $stream] && $offset === 2 * strlen($bytes);
        $answer = '';
        if ($v['flags'] === 4 && count($v['options'] ?? []) === 2 && $v['stream_flags'] === 0) {
            $answer = answer_frame($v['options'][0], $v['options'][1], hex2bin($v['payload_hex'])) === $bytes ? ' answer_frame ok' : ' answer_frame WRONG';
        }
        printf("%-22s decode %s, encode %s, parse %s%s\n", $v['name'], $ok ? 'ok' : 'WRONG',
            bin2hex($encoded) === $v['frame_hex'] ? 'ok' : 'WRONG', $parsed ? 'ok' : 'WRONG', $answer);
        continue;
    }
    try {
        frame_decode($bytes);
        $decode = 'accepted';
    } catch (FrameException $e) {
        $decode = $e->reason;
    }
    // A stream only waits for more bytes where a whole buffer is "truncated".
    try {
        [$frames, $offset] = frames_parse($bytes);
        $parse = $frames === [] && $offset === 0 ? 'waits' : 'accepted';
    } catch (FrameException $e) {
        $parse = $e->reason;
    }
    $reasons[$v['error']] = true;
    printf("%-22s expected %-9s decode %-9s parse %s\n", $v['name'], $v['error'], $decode, $parse);
}
ksort($reasons);
echo implode(',', array_keys($reasons)), "\n";
?>
--EXPECT--
empty                  decode ok, encode ok, parse ok
handshake              decode ok, encode ok, parse ok
stop                   decode ok, encode ok, parse ok
job                    decode ok, encode ok, parse ok answer_frame ok
error                  decode ok, encode ok, parse ok
ten_options            decode ok, encode ok, parse ok
all_flags              decode ok, encode ok, parse ok
binary_5000            decode ok, encode ok, parse ok
bad_version            expected version   decode version   parse version
bad_crc                expected crc       decode crc       parse crc
length_tampered        expected crc       decode crc       parse crc
eleven_options         expected options   decode options   parse options
header_too_short       expected options   decode options   parse options
payload_2GiB           expected too_large decode too_large parse too_large
truncated_payload      expected truncated decode truncated parse waits
truncated_header       expected truncated decode truncated parse waits
text_instead_of_frame  expected version   decode version   parse version
crc,options,too_large,truncated,version
