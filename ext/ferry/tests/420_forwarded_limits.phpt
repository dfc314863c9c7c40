--TEST--
ferry: forwarded_client() refuses a bad trusted entry, and keeps remote within its 64 bytes
--EXTENSIONS--
ferry
--FILE--
<?php
use function Ferry\Ext\forwarded_client;

foreach ([['10.0.0.0/33'], ['10.0.0.0/08'], ['::1/+8'], ['fe80::1%eth0/'], ['10.0.0.1', 'example.com'], [''], [7]] as $trusted) {
    try {
        forwarded_client($trusted, '10.0.0.5:1', [], 'h');
        echo "accepted ", json_encode($trusted), "\n";
    } catch (ValueError $e) {
        echo $e->getMessage(), "\n";
    }
}
// What netip accepts: a zone after the prefix is part of the zone, so this is one address.
var_dump(forwarded_client(['fe80::1%eth0/64'], '[fe80::1]:1', [['X-Forwarded-For', '192.0.2.1']], 'h')['remote']);
// A client the 64-byte remote cannot hold (a long IPv6 zone) is no address here; the
// front would print it (documented in ferry_forwarded.c). The walk stops before it.
$zone = str_repeat('z', 200);
$r = forwarded_client(['10.0.0.0/8'], '10.0.0.5:1', [['X-Forwarded-For', "192.0.2.1, fe80::1%$zone, 10.1.1.1"]], 'h');
var_dump($r['remote']);
$r = forwarded_client(['10.0.0.0/8'], '10.0.0.5:1', [['X-Forwarded-For', 'fe80::1%' . str_repeat('z', 17)]], 'h');
var_dump($r['remote'], strlen($r['remote']));
// remote is a C string: a zone with a NUL (which no parsed field holds) is no address.
var_dump(forwarded_client(['10.0.0.0/8'], '10.0.0.5:1', [['X-Forwarded-For', "fe80::1%a\0b"]], 'h')['remote']);
// A peer longer than remote holds is cut, never left unterminated.
var_dump(strlen(forwarded_client([], str_repeat('9', 100), [], 'h')['remote']));
// Values reach the walk trimmed of SP and HTAB, as ferry_http.c leaves them.
var_dump(forwarded_client(['10.0.0.0/8'], '10.0.0.5:1', [['x-forwarded-for', " \t192.0.2.1\t "], ['X-Forwarded-Host', '  a.example ']], 'h'));
?>
--EXPECT--
Ferry\Ext\forwarded_client(): Argument #1 ($trusted) entry 0 must be a CIDR (10.0.0.0/8) or an address
Ferry\Ext\forwarded_client(): Argument #1 ($trusted) entry 0 must be a CIDR (10.0.0.0/8) or an address
Ferry\Ext\forwarded_client(): Argument #1 ($trusted) entry 0 must be a CIDR (10.0.0.0/8) or an address
accepted ["fe80::1%eth0\/"]
Ferry\Ext\forwarded_client(): Argument #1 ($trusted) entry 1 must be a CIDR (10.0.0.0/8) or an address
Ferry\Ext\forwarded_client(): Argument #1 ($trusted) entry 0 must be a CIDR (10.0.0.0/8) or an address
Ferry\Ext\forwarded_client(): Argument #1 ($trusted) entry 0 must be a CIDR (10.0.0.0/8) or an address
string(11) "192.0.2.1:0"
string(10) "10.1.1.1:0"
string(29) "[fe80::1%zzzzzzzzzzzzzzzzz]:0"
int(29)
string(10) "10.0.0.5:1"
int(63)
array(3) {
  ["remote"]=>
  string(11) "192.0.2.1:0"
  ["host"]=>
  string(9) "a.example"
  ["https"]=>
  bool(false)
}
