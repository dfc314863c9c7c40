--TEST--
ferry: request_end($defaultContentType, poweredBy: false) leaves out expose_php's header only, and nothing collected is an empty array
--EXTENSIONS--
ferry
--INI--
expose_php=1
--FILE--
<?php
use function Ferry\Ext\{request_begin, request_end};

ob_start();
request_begin();
$list = headers_list();
$all = request_end(false);
request_begin();
$none = request_end(false, false);
request_begin();
header('X-Powered-By: mine', false);
header('X-Other: 1');
$kept = request_end(false, false);
request_begin();
header('X-Powered-By: PHP/' . PHP_VERSION . '-custom');
$replaced = request_end(false, false);
// The answer for "nothing collected" is shared: changing one copy leaves the next intact.
$none['headers']['X'] = ['y'];
request_begin();
$again = request_end(false, false);
ob_end_clean();

var_dump($list);
var_dump($all['headers'] === ['X-Powered-By' => ['PHP/' . PHP_VERSION]]);
var_dump($none === ['status' => 200, 'headers' => ['X' => ['y']]]);
var_dump($kept['headers']);
var_dump($replaced['headers'] === ['X-Powered-By' => ['PHP/' . PHP_VERSION . '-custom']]);
var_dump($again === ['status' => 200, 'headers' => []]);
?>
--EXPECTF--
array(1) {
  [0]=>
  string(%d) "X-Powered-By: PHP/%s"
}
bool(true)
bool(true)
array(2) {
  ["X-Powered-By"]=>
  array(1) {
    [0]=>
    string(4) "mine"
  }
  ["X-Other"]=>
  array(1) {
    [0]=>
    string(1) "1"
  }
}
bool(true)
bool(true)
