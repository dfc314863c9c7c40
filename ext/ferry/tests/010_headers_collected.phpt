--TEST--
ferry: header(), setcookie(), setrawcookie(), header_remove() and http_response_code() are collected
--EXTENSIONS--
ferry
--INI--
expose_php=0
--FILE--
<?php
use function Ferry\Ext\{request_begin, request_end};

// As the SDK does: output is captured, so it sends no headers before request_end().
ob_start();

request_begin();
var_dump(Ferry\Ext\in_request(), headers_list(), http_response_code());
header('X-One: 1');
header('x-one: 2', false);           // same header in another case: one group, first spelling
header('X-Replaced: old');
header('X-Replaced: new');           // replace = true drops the old value
header('X-Gone: soon');
header_remove('x-gone');
header('X-Spaces:    padded value   ');
header('no colon here');             // FPM would send a broken line; it is not a header
setcookie('plain', 'a b;c', ['path' => '/', 'httponly' => true, 'samesite' => 'Lax']);
setrawcookie('raw', 'a%20b');
setcookie('second', 'x');
http_response_code(201);
print_r(headers_list());
var_dump(headers_sent(), http_response_code());
print_r(request_end());
var_dump(Ferry\Ext\in_request());

echo "-- header_remove() without a name empties the list\n";
request_begin();
header('X-A: 1');
setcookie('c', 'd');
header_remove();
header('X-B: 2');
print_r(request_end(false));

echo "-- an explicit Content-Type replaces the default\n";
request_begin();
header('Content-Type: application/json');
print_r(request_end());
?>
--EXPECT--
bool(true)
array(0) {
}
int(200)
Array
(
    [0] => X-One: 1
    [1] => x-one: 2
    [2] => X-Replaced: new
    [3] => X-Spaces:    padded value
    [4] => no colon here
    [5] => Set-Cookie: plain=a%20b%3Bc; path=/; HttpOnly; SameSite=Lax
    [6] => Set-Cookie: raw=a%20b
    [7] => Set-Cookie: second=x
)
bool(false)
int(201)
Array
(
    [status] => 201
    [headers] => Array
        (
            [X-One] => Array
                (
                    [0] => 1
                    [1] => 2
                )

            [X-Replaced] => Array
                (
                    [0] => new
                )

            [X-Spaces] => Array
                (
                    [0] => padded value
                )

            [Set-Cookie] => Array
                (
                    [0] => plain=a%20b%3Bc; path=/; HttpOnly; SameSite=Lax
                    [1] => raw=a%20b
                    [2] => second=x
                )

            [Content-type] => Array
                (
                    [0] => text/html; charset=UTF-8
                )

        )

)
bool(false)
-- header_remove() without a name empties the list
Array
(
    [status] => 200
    [headers] => Array
        (
            [X-B] => Array
                (
                    [0] => 2
                )

        )

)
-- an explicit Content-Type replaces the default
Array
(
    [status] => 200
    [headers] => Array
        (
            [Content-Type] => Array
                (
                    [0] => application/json
                )

        )

)
