--TEST--
ferry: output sends the headers as under FPM; the next request starts clean (200, no headers, not sent)
--EXTENSIONS--
ferry
--INI--
expose_php=1
--FILE--
<?php
use function Ferry\Ext\{request_begin, request_end};

$log = [];
request_begin();
$log[] = ['powered' => headers_list()];
header('X-First: 1');
http_response_code(418);
header_register_callback(function () { header('X-From-Callback: first'); });
$log[] = ['sent before output' => headers_sent()];
echo "body of request 1\n";                       // unbuffered: this sends the headers
$log[] = ['sent after output' => headers_sent($file, $line), 'line' => $line, 'file' => basename($file)];
$late = @header('X-Late: 1');
$log[] = ['late header error' => error_get_last()['message'] ?? null];
error_clear_last();
// PHP 8.2 still changes the code (and returns the old one); 8.3 refuses it once the headers
// are sent (false). Either way FPM has sent 418, and request_end() reports that.
$lateStatus = [@http_response_code(500), http_response_code()];
$log[] = ['late status as this PHP does it' => $lateStatus === (PHP_VERSION_ID >= 80300 ? [false, 418] : [418, 500])];
$first = request_end();

echo "between requests\n";                          // the CLI's own behaviour again

request_begin();
$log[] = ['second: sent' => headers_sent($file2, $line2), 'file' => $file2, 'line' => $line2,
          'status' => http_response_code(), 'list' => headers_list()];
ob_start();
echo "body of request 2\n";
header('X-Second: 2');
$log[] = ['second: sent while buffered' => headers_sent()];
$second = request_end(false);
ob_end_flush();

var_export($first); echo "\n";
var_export($second); echo "\n";
var_export($log); echo "\n";
?>
--EXPECTF--
body of request 1
between requests
body of request 2
array (
  'status' => 418,
  'headers' => 
  array (
    'X-Powered-By' => 
    array (
      0 => 'PHP/%s',
    ),
    'X-First' => 
    array (
      0 => '1',
    ),
    'Content-type' => 
    array (
      0 => 'text/html; charset=UTF-8',
    ),
    'X-From-Callback' => 
    array (
      0 => 'first',
    ),
  ),
)
array (
  'status' => 200,
  'headers' => 
  array (
    'X-Powered-By' => 
    array (
      0 => 'PHP/%s',
    ),
    'X-Second' => 
    array (
      0 => '2',
    ),
  ),
)
array (
  0 => 
  array (
    'powered' => 
    array (
      0 => 'X-Powered-By: PHP/%s',
    ),
  ),
  1 => 
  array (
    'sent before output' => false,
  ),
  2 => 
  array (
    'sent after output' => true,
    'line' => 11,
    'file' => '020_headers_sent_and_reset.php',
  ),
  3 => 
  array (
    'late header error' => 'Cannot modify header information - headers already sent by (output started at %s020_headers_sent_and_reset.php:11)',
  ),
  4 => 
  array (
    'late status as this PHP does it' => true,
  ),
  5 => 
  array (
    'second: sent' => false,
    'file' => '',
    'line' => 0,
    'status' => 200,
    'list' => 
    array (
      0 => 'X-Powered-By: PHP/%s',
    ),
  ),
  6 => 
  array (
    'second: sent while buffered' => false,
  ),
)
