--TEST--
ferry: forwarded_client() gives what the Go front gives (peers, netip's families, escapes, Unicode)
--EXTENSIONS--
ferry
--FILE--
<?php
// Expected values are the front's (internal/gateway's forwarded() on the same input).
$cases = json_decode(<<<'JSON'
[
 {
  "name": "an IPv4-mapped peer is its IPv4 address",
  "trusted": [
   "10.0.0.0/8"
  ],
  "peer": "[::ffff:10.0.0.5]:80",
  "fields": [
   [
    "X-Forwarded-For",
    "192.0.2.1"
   ]
  ],
  "remote": "192.0.2.1:0",
  "host": "h.example",
  "https": false
 },
 {
  "name": "an IPv6 prefix inside ::ffff:0:0/96 holds no IPv4 peer",
  "trusted": [
   "::ffff:10.0.0.0/104"
  ],
  "peer": "10.0.0.5:80",
  "fields": [
   [
    "X-Forwarded-For",
    "192.0.2.1"
   ]
  ],
  "remote": "10.0.0.5:80",
  "host": "h.example",
  "https": false
 },
 {
  "name": "nor an IPv4-mapped one",
  "trusted": [
   "::ffff:10.0.0.0/104"
  ],
  "peer": "[::ffff:10.0.0.5]:80",
  "fields": [
   [
    "X-Forwarded-For",
    "192.0.2.1"
   ]
  ],
  "remote": "[::ffff:10.0.0.5]:80",
  "host": "h.example",
  "https": false
 },
 {
  "name": "::/0 holds no IPv4 address",
  "trusted": [
   "::/0"
  ],
  "peer": "10.0.0.5:80",
  "fields": [
   [
    "X-Forwarded-For",
    "192.0.2.1"
   ]
  ],
  "remote": "10.0.0.5:80",
  "host": "h.example",
  "https": false
 },
 {
  "name": "::/0 holds every IPv6 one",
  "trusted": [
   "::/0"
  ],
  "peer": "[2001:db8::5]:80",
  "fields": [
   [
    "X-Forwarded-For",
    "192.0.2.1, 2001:db8::9"
   ]
  ],
  "remote": "192.0.2.1:0",
  "host": "h.example",
  "https": false
 },
 {
  "name": "a zoned entry is its address, the zone dropped",
  "trusted": [
   "fe80::1%eth0/64"
  ],
  "peer": "[fe80::1]:80",
  "fields": [
   [
    "X-Forwarded-For",
    "192.0.2.1"
   ]
  ],
  "remote": "192.0.2.1:0",
  "host": "h.example",
  "https": false
 },
 {
  "name": "a zoned peer is never trusted",
  "trusted": [
   "fe80::/64"
  ],
  "peer": "[fe80::1%eth0]:80",
  "fields": [
   [
    "X-Forwarded-For",
    "192.0.2.1"
   ]
  ],
  "remote": "[fe80::1%eth0]:80",
  "host": "h.example",
  "https": false
 },
 {
  "name": "a peer without a port is not an address",
  "trusted": [
   "10.0.0.0/8"
  ],
  "peer": "10.0.0.5",
  "fields": [
   [
    "X-Forwarded-For",
    "192.0.2.1"
   ]
  ],
  "remote": "10.0.0.5",
  "host": "h.example",
  "https": false
 },
 {
  "name": "nor one with a port past 65535",
  "trusted": [
   "10.0.0.0/8"
  ],
  "peer": "10.0.0.5:99999",
  "fields": [
   [
    "X-Forwarded-For",
    "192.0.2.1"
   ]
  ],
  "remote": "10.0.0.5:99999",
  "host": "h.example",
  "https": false
 },
 {
  "name": "names in any case; the port's leading zeros; a mapped client unmapped",
  "trusted": [
   "10.0.0.0/8"
  ],
  "peer": "10.0.0.5:0080",
  "fields": [
   [
    "x-FORWARDED-for",
    "::ffff:192.0.2.1"
   ],
   [
    "X-FORWARDED-PROTO",
    "HTTPS"
   ],
   [
    "x-forwarded-host",
    "Shop.Example:443"
   ]
  ],
  "remote": "192.0.2.1:0",
  "host": "Shop.Example:443",
  "https": true
 },
 {
  "name": "RFC 5952: the longest zero run, the first of two",
  "trusted": [
   "10.0.0.0/8"
  ],
  "peer": "10.0.0.5:1",
  "fields": [
   [
    "X-Forwarded-For",
    "2001:db8:0:0:1:0:0:1"
   ]
  ],
  "remote": "[2001:db8::1:0:0:1]:0",
  "host": "h.example",
  "https": false
 },
 {
  "name": "a zoned client keeps its zone",
  "trusted": [
   "10.0.0.0/8"
  ],
  "peer": "10.0.0.5:1",
  "fields": [
   [
    "X-Forwarded-For",
    "fe80::1%eth0, 10.1.1.1"
   ]
  ],
  "remote": "[fe80::1%eth0]:0",
  "host": "h.example",
  "https": false
 },
 {
  "name": "escapes in a quoted node, proto and host",
  "trusted": [
   "10.0.0.0/8"
  ],
  "peer": "10.0.0.5:1",
  "fields": [
   [
    "Forwarded",
    "for=\"[fe80::1%25eth0]:80\";proto=\"h\\ttps\";host=\"ex\\ample.com\""
   ]
  ],
  "remote": "[fe80::1%25eth0]:0",
  "host": "example.com",
  "https": true
 },
 {
  "name": "a bracketed mapped node",
  "trusted": [
   "10.0.0.0/8"
  ],
  "peer": "10.0.0.5:1",
  "fields": [
   [
    "Forwarded",
    "for=\"[::ffff:192.0.2.9]\""
   ]
  ],
  "remote": "192.0.2.9:0",
  "host": "h.example",
  "https": false
 },
 {
  "name": "a bracketed IPv4 node",
  "trusted": [
   "10.0.0.0/8"
  ],
  "peer": "10.0.0.5:1",
  "fields": [
   [
    "Forwarded",
    "for=[1.2.3.4]"
   ]
  ],
  "remote": "1.2.3.4:0",
  "host": "h.example",
  "https": false
 },
 {
  "name": "a bracketed IPv4 node with a port is none",
  "trusted": [
   "10.0.0.0/8"
  ],
  "peer": "10.0.0.5:1",
  "fields": [
   [
    "Forwarded",
    "for=\"[1.2.3.4]:80\""
   ]
  ],
  "remote": "10.0.0.5:1",
  "host": "h.example",
  "https": false
 },
 {
  "name": "U+00A0 trimmed, U+017F folded as Go does",
  "trusted": [
   "10.0.0.0/8"
  ],
  "peer": "10.0.0.5:1",
  "fields": [
   [
    "X-Forwarded-For",
    "192.0.2.7 "
   ],
   [
    "X-Forwarded-Proto",
    "httpſ"
   ]
  ],
  "remote": "192.0.2.7:0",
  "host": "h.example",
  "https": true
 },
 {
  "name": "an IPvFuture host",
  "trusted": [
   "10.0.0.0/8"
  ],
  "peer": "10.0.0.5:1",
  "fields": [
   [
    "Forwarded",
    "for=192.0.2.1;host=\"[v1.x]:8080\""
   ]
  ],
  "remote": "192.0.2.1:0",
  "host": "[v1.x]:8080",
  "https": false
 },
 {
  "name": "Forwarded and X-Forwarded-For agreeing",
  "trusted": [
   "0.0.0.0/0"
  ],
  "peer": "10.0.0.5:1",
  "fields": [
   [
    "Forwarded",
    "for=192.0.2.1"
   ],
   [
    "X-Forwarded-For",
    "192.0.2.1"
   ]
  ],
  "remote": "192.0.2.1:0",
  "host": "h.example",
  "https": false
 }
]
JSON, true, 16, JSON_THROW_ON_ERROR);
foreach ($cases as $c) {
    $r = Ferry\Ext\forwarded_client($c['trusted'], $c['peer'], $c['fields'], 'h.example');
    $want = ['remote' => $c['remote'], 'host' => $c['host'], 'https' => $c['https']];
    echo $r === $want ? 'ok' : 'FAIL ' . json_encode($r) . ' want ' . json_encode($want), ': ', $c['name'], "\n";
}
?>
--EXPECT--
ok: an IPv4-mapped peer is its IPv4 address
ok: an IPv6 prefix inside ::ffff:0:0/96 holds no IPv4 peer
ok: nor an IPv4-mapped one
ok: ::/0 holds no IPv4 address
ok: ::/0 holds every IPv6 one
ok: a zoned entry is its address, the zone dropped
ok: a zoned peer is never trusted
ok: a peer without a port is not an address
ok: nor one with a port past 65535
ok: names in any case; the port's leading zeros; a mapped client unmapped
ok: RFC 5952: the longest zero run, the first of two
ok: a zoned client keeps its zone
ok: escapes in a quoted node, proto and host
ok: a bracketed mapped node
ok: a bracketed IPv4 node
ok: a bracketed IPv4 node with a port is none
ok: U+00A0 trimmed, U+017F folded as Go does
ok: an IPvFuture host
ok: Forwarded and X-Forwarded-For agreeing
