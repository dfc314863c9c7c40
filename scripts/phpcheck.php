<?php

declare(strict_types=1);

/*
 * Static checks over the PHP code that `php -l` cannot make; Debian ships neither PHPStan
 * nor Psalm, so this is the repository's static analysis (scripts/phpcheck.sh runs it):
 *
 *  - every PHP file starts with declare(strict_types=1) (templates, which start with
 *    HTML or `<?=`, excepted);
 *  - every composer.json under php/: "php": "^8.2", Ferry packages required at
 *    self.version, phpunit in require-dev, one shared branch alias, autoload paths that
 *    exist;
 *  - PSR-4: each class-like lives in the file its namespace and name say, one per file;
 *    every file under an `autoload` (not -dev) root declares one;
 *  - extensions: a function, constant or class of an optional extension used by the
 *    package's src/ is in require or suggest, one used only by its tests or tools in
 *    require, require-dev or suggest; every declared ext-* is really used;
 *  - no debugging output left in src/ (var_dump, print_r/var_export without `true`, ...).
 *
 * Usage: php scripts/phpcheck.php [file ...]; with no argument it checks the repository.
 * Only extensions loaded in this PHP can be recognised, which is why `make deps` installs
 * the ones the packages use.
 */

const ALWAYS_ON = ['Core', 'standard', 'date', 'pcre', 'hash', 'json', 'random', 'Reflection', 'SPL'];
const DEBUG_CALLS = ['var_dump', 'debug_zval_dump', 'debug_print_backtrace', 'phpinfo', 'dd', 'dump', 'xdebug_break'];
const RETURN_FLAG_CALLS = ['print_r', 'var_export'];

if (!class_exists(PhpToken::class)) {
    fwrite(STDERR, "phpcheck: needs ext-tokenizer\n");
    exit(2);
}

$root = dirname(__DIR__);
$errors = [];
$fail = static function (string $where, string $what) use (&$errors): void {
    $errors[] = "$where: $what";
};

$files = array_slice($argv, 1);
if ($files === []) {
    $files = phpFiles($root);
}
$parsed = [];
foreach ($files as $rel) {
    $code = (string) file_get_contents("$root/$rel");
    try {
        $parsed[$rel] = scan(PhpToken::tokenize($code, TOKEN_PARSE));
    } catch (ParseError $e) {
        $fail("$rel:{$e->getLine()}", 'parse error: ' . $e->getMessage());
        continue;
    }
    if (!$parsed[$rel]['strict'] && !$parsed[$rel]['template']) {
        $fail($rel, 'does not start with declare(strict_types=1)');
    }
    if (preg_match('{^(php/[^/]+|examples/[^/]+)/src/}', $rel)) {
        foreach ($parsed[$rel]['debug'] as [$line, $call]) {
            $fail("$rel:$line", "debugging output left in src/: $call");
        }
    }
}

$aliases = [];
foreach (glob("$root/php/*/composer.json") ?: [] as $manifest) {
    $pkgDir = dirname($manifest);
    $pkg = substr($pkgDir, strlen($root) + 1);
    $json = json_decode((string) file_get_contents($manifest), true);
    if (!is_array($json)) {
        $fail("$pkg/composer.json", 'is not valid JSON');
        continue;
    }
    $require = $json['require'] ?? [];
    $requireDev = $json['require-dev'] ?? [];
    $suggest = $json['suggest'] ?? [];
    if (($require['php'] ?? null) !== '^8.2') {
        $fail("$pkg/composer.json", 'require.php must be "^8.2"');
    }
    foreach (['require' => $require, 'require-dev' => $requireDev] as $section => $list) {
        foreach ($list as $name => $constraint) {
            if (str_starts_with($name, 'ferry/') && $constraint !== 'self.version') {
                $fail("$pkg/composer.json", "$section.$name must be \"self.version\": the packages are released together from one checkout");
            }
        }
    }
    if (!isset($requireDev['phpunit/phpunit'])) {
        $fail("$pkg/composer.json", 'require-dev.phpunit/phpunit is missing');
    }
    $aliases[$pkg] = $json['extra']['branch-alias']['dev-main'] ?? null;
    if ($aliases[$pkg] === null) {
        $fail("$pkg/composer.json", 'extra.branch-alias.dev-main is missing (the version of an untagged checkout)');
    }

    // Autoload roots exist and hold what their namespace says.
    foreach (['autoload' => true, 'autoload-dev' => false] as $section => $strict) {
        foreach ($json[$section]['psr-4'] ?? [] as $prefix => $dirs) {
            foreach ((array) $dirs as $dir) {
                if (!is_dir("$pkgDir/$dir")) {
                    $fail("$pkg/composer.json", "$section.psr-4.$prefix: directory $dir does not exist");
                    continue;
                }
                $base = rtrim("$pkg/$dir", '/') . '/';
                foreach ($parsed as $rel => $info) {
                    if (str_starts_with($rel, $base) && !inNestedProject($root, $pkg, $rel)) {
                        checkPsr4($rel, $info, $prefix, substr($rel, strlen($base)), $strict, $fail);
                    }
                }
            }
        }
        foreach (['files', 'classmap'] as $kind) {
            foreach ($json[$section][$kind] ?? [] as $path) {
                if (!file_exists("$pkgDir/$path")) {
                    $fail("$pkg/composer.json", "$section.$kind: $path does not exist");
                }
            }
        }
    }

    foreach ((array) ($json['bin'] ?? []) as $path) {
        if (!is_file("$pkgDir/$path")) {
            $fail("$pkg/composer.json", "bin: $path does not exist");
        }
    }

    // Extensions: what the code uses against what composer.json declares.
    $used = [];
    foreach ($parsed as $rel => $info) {
        if (!str_starts_with($rel, "$pkg/")) {
            continue;
        }
        $inSrc = str_starts_with($rel, "$pkg/src/");
        foreach ($info['ext'] as $ext => [$line, $symbol]) {
            $used[$ext] = true;
            $ok = isset($require[$ext]) || isset($suggest[$ext]) || (!$inSrc && isset($requireDev[$ext]));
            if (!$ok) {
                $fail("$rel:$line", "uses $symbol from $ext, which composer.json does not declare in "
                    . ($inSrc ? 'require or suggest' : 'require, require-dev or suggest'));
            }
        }
    }
    foreach ([$require, $requireDev, $suggest] as $list) {
        foreach (array_keys($list) as $name) {
            // Only an extension this PHP has, and that has symbols of its own, can be seen in
            // the code (a PDO driver is used through a DSN string): the others are not judged.
            if (str_starts_with($name, 'ext-') && !isset($used[$name]) && in_array($name, detectableExtensions(), true)) {
                $fail("$pkg/composer.json", "declares $name, which no file of the package uses");
            }
        }
    }
}
if (count(array_unique(array_filter($aliases))) > 1) {
    $fail('php/*/composer.json', 'branch aliases differ (' . json_encode($aliases) . '); self.version needs one version line');
}

foreach ($errors as $e) {
    fwrite(STDERR, "$e\n");
}
printf("phpcheck: %d files, %d packages, %d problems\n", count($files), count($aliases), count($errors));
exit($errors === [] ? 0 : 1);

/** @return list<string> repository-relative paths of the PHP files to check */
function phpFiles(string $root): array
{
    $dirs = ['php', 'examples', 'bench'];
    $out = [];
    if (is_dir("$root/.git")) {
        // Untracked files count too: a new file must pass before it is committed.
        exec('git -C ' . escapeshellarg($root) . ' ls-files -co --exclude-standard -- '
            . implode(' ', array_map(static fn ($d) => escapeshellarg($d), $dirs)), $out, $rc);
        if ($rc !== 0) {
            $out = [];
        }
    }
    if ($out === []) {
        foreach ($dirs as $d) {
            if (!is_dir("$root/$d")) {
                continue;
            }
            $it = new RecursiveIteratorIterator(new RecursiveDirectoryIterator("$root/$d", FilesystemIterator::SKIP_DOTS));
            foreach ($it as $f) {
                $out[] = substr($f->getPathname(), strlen($root) + 1);
            }
        }
    }

    return array_values(array_filter($out, static fn ($p) => !preg_match('{(^|/)(vendor|var)/}', $p)
        && is_file("$root/$p") && (str_ends_with($p, '.php') || isPhpScript("$root/$p"))));
}

/** A command without an extension (bin/ferry-worker, artisan) whose #! line runs php. */
function isPhpScript(string $path): bool
{
    if (str_contains(basename($path), '.')) {
        return false;
    }
    $head = (string) file_get_contents($path, false, null, 0, 64);

    return (bool) preg_match('{^#![^\n]*php}', $head);
}

/** @param array{namespace: ?string, classes: list<array{int, string}>} $info */
function checkPsr4(string $rel, array $info, string $prefix, string $sub, bool $strict, Closure $fail): void
{
    $expected = rtrim($prefix, '\\') . '\\' . str_replace('/', '\\', substr($sub, 0, -4));
    if ($info['classes'] === []) {
        if ($strict) {
            $fail($rel, "declares no class, interface, trait or enum but lies in an autoload root (expected $expected)");
        }

        return;
    }
    [$line, $name] = $info['classes'][0];
    $fqcn = ltrim(($info['namespace'] ?? '') . '\\' . $name, '\\');
    if (!$strict && !str_starts_with($fqcn, ltrim($prefix, '\\'))) {
        return; // a test fixture in another namespace, loaded by its test, not by the autoloader
    }
    if (count($info['classes']) > 1) {
        $fail($rel, 'declares ' . count($info['classes']) . ' class-likes; an autoloader can find only the one named after the file');
    }
    if ($fqcn !== $expected) {
        $fail("$rel:$line", "declares $fqcn; PSR-4 ($prefix) expects $expected in this file");
    }
}

/**
 * One pass over a file's tokens: the namespace, the class-likes it declares, the optional
 * extensions it uses (composer name => first [line, symbol]) and debugging calls.
 *
 * @param list<PhpToken> $t
 */
function scan(array $t): array
{
    $sig = array_values(array_filter($t, static fn (PhpToken $x) => !$x->isIgnorable()));
    $n = count($sig);
    $first = $t[0] ?? null;
    $info = [
        'template' => $first === null || $first->is(T_OPEN_TAG_WITH_ECHO)
            || ($first->is(T_INLINE_HTML) && !str_starts_with($first->text, '#!')),
        'strict' => false,
        'namespace' => null,
        'classes' => [],
        'ext' => [],
        'debug' => [],
    ];
    $head = '';
    $shebang = $first !== null && $first->is(T_INLINE_HTML) && str_starts_with($first->text, '#!') ? 1 : 0;
    for ($i = $shebang; $i < $n && $i < $shebang + 7; $i++) {
        $head .= strtolower($sig[$i]->text);
    }
    $info['strict'] = str_starts_with($head, 'declare(strict_types=1)');

    $imports = ['class' => [], 'function' => [], 'const' => []];
    $depth = 0;
    $text = static fn (int $k): string => $k >= 0 && $k < $n ? $sig[$k]->text : '';
    $is = static fn (int $k, int|array $kind): bool => $k >= 0 && $k < $n && $sig[$k]->is($kind);
    for ($i = 0; $i < $n; $i++) {
        $tok = $sig[$i];
        $prev = $text($i - 1);
        $next = $text($i + 1);
        if ($tok->text === '{' || $tok->is([T_CURLY_OPEN, T_DOLLAR_OPEN_CURLY_BRACES])) {
            $depth++;
        } elseif ($tok->text === '}') {
            $depth--;
        } elseif ($tok->is(T_NAMESPACE) && $is($i + 1, [T_STRING, T_NAME_QUALIFIED])) {
            $info['namespace'] = $next;
        } elseif ($tok->is(T_USE) && $depth === 0 && $prev !== ')') {
            $i = parseUse($sig, $i + 1, $imports);
        } elseif ($tok->is([T_CLASS, T_INTERFACE, T_TRAIT, T_ENUM]) && $prev !== 'new' && $prev !== '::'
            && $is($i + 1, T_STRING)) {
            $info['classes'][] = [$tok->line, $next];
        } elseif ($tok->is([T_STRING, T_NAME_FULLY_QUALIFIED])) {
            $name = ltrim($tok->text, '\\');
            $qualified = $tok->is(T_NAME_FULLY_QUALIFIED);
            $member = in_array($prev, ['->', '?->', '::', 'function', 'const', 'case', 'goto', 'as', 'insteadof'], true);
            if ($member) {
                continue;
            }
            $ext = null;
            if ($next === '(' && $prev !== 'new') {
                $fn = $qualified ? $name : ($imports['function'][strtolower($name)] ?? $name);
                if (in_array(strtolower($fn), DEBUG_CALLS, true)
                    || (in_array(strtolower($fn), RETURN_FLAG_CALLS, true) && !returnsFlag($sig, $i + 1))) {
                    $info['debug'][] = [$tok->line, "$fn()"];
                }
                $ext = function_exists($fn) ? (new ReflectionFunction($fn))->getExtensionName() : null;
            } elseif (!in_array($next, ['(', '::', ':'], true) && !in_array($prev, ['new', 'instanceof', 'extends', 'implements'], true)) {
                $const = $qualified ? $name : ($imports['const'][$name] ?? $name);
                $ext = constantExtension($const);
            }
            if ($ext === null && $next !== '(' || $prev === 'new') {
                // A class: fully qualified, imported, or unqualified in a file without a namespace.
                $class = $qualified ? $name : ($imports['class'][strtolower($name)] ?? ($info['namespace'] === null ? $name : null));
                if ($class !== null && (class_exists($class, false) || interface_exists($class, false))) {
                    $ext = (new ReflectionClass($class))->getExtensionName() ?: null;
                }
            }
            if ($ext !== null && !in_array(strtolower($ext), array_map('strtolower', ALWAYS_ON), true)) {
                $key = 'ext-' . strtolower(str_replace(' ', '-', $ext));
                $info['ext'][$key] ??= [$tok->line, $name];
            }
        }
    }

    return $info;
}

/** Reads a top-level `use` statement into $imports; returns the index of its `;`. */
function parseUse(array $sig, int $i, array &$imports): int
{
    $kind = 'class';
    if (in_array($sig[$i]->text, ['function', 'const'], true)) {
        $kind = $sig[$i++]->text;
    }
    $prefix = '';
    $name = null;
    for (; $i < count($sig) && $sig[$i]->text !== ';'; $i++) {
        $s = $sig[$i];
        if ($s->is([T_STRING, T_NAME_QUALIFIED, T_NAME_FULLY_QUALIFIED]) && ($sig[$i - 1]->text ?? '') !== 'as') {
            $name = $prefix . ltrim($s->text, '\\');
        } elseif ($s->text === '\\' || $s->is(T_NS_SEPARATOR)) {
            $prefix = $name . '\\';
        } elseif ($s->is(T_STRING) || $s->text === ',' || $s->text === '}') {
            if ($name !== null) {
                $alias = $s->is(T_STRING) ? $s->text : substr($name, (int) strrpos('\\' . $name, '\\'));
                $imports[$kind][$kind === 'const' ? $alias : strtolower($alias)] = $name;
                $name = null;
            }
        }
    }
    if ($name !== null) {
        $alias = substr($name, (int) strrpos('\\' . $name, '\\'));
        $imports[$kind][$kind === 'const' ? $alias : strtolower($alias)] = $name;
    }

    return $i;
}

/** True when the call whose `(` is at $open has a second argument `true` (print_r($x, true)). */
function returnsFlag(array $sig, int $open): bool
{
    $depth = 0;
    for ($i = $open; $i < count($sig); $i++) {
        $c = $sig[$i]->text;
        if (in_array($c, ['(', '[', '{'], true)) {
            $depth++;
        } elseif (in_array($c, [')', ']', '}'], true)) {
            if (--$depth === 0) {
                return false;
            }
        } elseif ($c === ',' && $depth === 1) {
            return strtolower($sig[$i + 1]->text ?? '') === 'true';
        }
    }

    return false;
}

function constantExtension(string $name): ?string
{
    static $owner = null;
    if ($owner === null) {
        $owner = [];
        foreach (get_defined_constants(true) as $ext => $list) {
            foreach (array_keys($list) as $c) {
                $owner[$c] = $ext === 'user' ? null : $ext;
            }
        }
    }

    return $owner[$name] ?? null;
}

/** @return list<string> loaded extensions with functions, classes or constants, as Composer names them */
function detectableExtensions(): array
{
    $out = [];
    foreach (get_loaded_extensions() as $name) {
        $e = new ReflectionExtension($name);
        if ($e->getFunctions() !== [] || $e->getClasses() !== [] || $e->getConstants() !== []) {
            $out[] = 'ext-' . strtolower(str_replace(' ', '-', $name));
        }
    }

    return $out;
}

/** A file below a directory of the package that has its own composer.json (a test app) is that project's. */
function inNestedProject(string $root, string $pkg, string $rel): bool
{
    for ($dir = dirname($rel); strlen($dir) > strlen($pkg); $dir = dirname($dir)) {
        if (is_file("$root/$dir/composer.json")) {
            return true;
        }
    }

    return false;
}
