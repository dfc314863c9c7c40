--TEST--
ferry: session_start()'s cookie is collected; each request starts from its own cookie, not the last visitor's
--EXTENSIONS--
ferry
session
--INI--
expose_php=0
session.save_handler=files
session.use_cookies=1
session.use_only_cookies=1
session.use_strict_mode=0
session.cache_limiter=nocache
--FILE--
<?php
use function Ferry\Ext\{request_begin, request_end};

$dir = sys_get_temp_dir() . '/ferry-phpt-session-' . getmypid();
@mkdir($dir);
ini_set('session.save_path', $dir);
ob_start();

function visit(?string $cookie): array {
    request_begin();
    $_COOKIE = $cookie === null ? [] : ['PHPSESSID' => $cookie];
    $before = isset($_SESSION) ? 'leaked' : 'none';
    session_start();
    $_SESSION['n'] = ($_SESSION['n'] ?? 0) + 1;
    $id = session_id();
    $n = $_SESSION['n'];
    // left open on purpose: request_end() writes it, as FPM's request shutdown does
    $r = request_end();
    return [$id, $n, $before, $r['headers']];
}

[$alice, $n, $before, $h] = visit(null);
$log[] = "alice 1: n=$n before=$before cookie=" . ($h['Set-Cookie'][0] === "PHPSESSID=$alice; path=/" ? 'new id' : 'WRONG')
    . ' cache=' . implode(',', array_keys(array_diff_key($h, ['Set-Cookie' => 1, 'Content-type' => 1])))
    . ' status=' . session_status();
[$id, $n, $before, $h] = visit($alice);
$log[] = "alice 2: n=$n before=$before same id=" . var_export($id === $alice, true) . ' cookie sent=' . var_export(isset($h['Set-Cookie']), true);
[$bob, $n, $before, $h] = visit(null);
$log[] = "bob 1: n=$n before=$before new id=" . var_export($bob !== $alice && $h['Set-Cookie'][0] === "PHPSESSID=$bob; path=/", true);
[$id, $n] = visit($alice);
$log[] = "alice 3: n=$n";
ob_end_clean();
echo implode("\n", $log), "\n";
array_map('unlink', glob("$dir/*"));
rmdir($dir);
?>
--EXPECT--
alice 1: n=1 before=none cookie=new id cache=Expires,Cache-Control,Pragma status=1
alice 2: n=2 before=none same id=true cookie sent=false
bob 1: n=1 before=none new id=true
alice 3: n=3
