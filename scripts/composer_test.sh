#!/usr/bin/env bash
# Installs the PHP packages with Debian's real `composer`, offline, the way their READMEs say,
# and loads classes from each through Composer's autoloader. Run by `make test-packages`.
#
#  1. `composer validate --strict` for every php/*/composer.json.
#  2. For each package README (php/<pkg>/README.md, or INSTALL.snippet.md where the README
#     is not merged yet), the first ```json block after "## Installation", with its path
#     repository pointed at this checkout and Packagist disabled, is installed into an empty
#     project; a PHP process that has only vendor/autoload.php then uses the package.
#     ferry/tarantool is installed alone, so it also proves ferry/msgpack comes with it.
#     Then the same without `versions`, from a copy without git, at minimum-stability dev.
#  3. ferry/httpfoundation, ferry/symfony-runtime and ferry/laravel require symfony/* and
#     laravel/framework, which
#     only Packagist could download. Here they come from Debian (/usr/share/php), so each
#     such requirement is met by a stub package in a second path repository: its version is
#     the one of the installed Debian package (dpkg), its autoload `files` entry requires
#     that package's own autoload.php. The constraints in our composer.json are therefore
#     checked against the framework versions really installed, and the classes loaded are
#     the real framework's.
#
# No network: COMPOSER_HOME and the cache are temporary, COMPOSER_DISABLE_NETWORK=1, and
# every project disables packagist.org. Dependencies' require-dev (phpunit) is never
# resolved by Composer, so a plain `composer install` is what is tested.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
COMPOSER_CMD=${COMPOSER_BIN:-composer}
PHP=${PHP:-php}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ferry-composer.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export COMPOSER_HOME="$TMP/home" COMPOSER_CACHE_DIR="$TMP/cache" COMPOSER_DISABLE_NETWORK=1 \
  COMPOSER_NO_INTERACTION=1 COMPOSER_NO_AUDIT=1 COMPOSER_ALLOW_SUPERUSER=1
unset COMPOSER_ROOT_VERSION COMPOSER

fail() { echo "composer_test: FAIL: $*" >&2; exit 1; }

# --- 1. validate
for manifest in "$ROOT"/php/*/composer.json; do
  out=$("$COMPOSER_CMD" validate --strict --no-interaction "$manifest" 2>&1) \
    || fail "composer validate --strict ${manifest#"$ROOT"/}:"$'\n'"$out"
done
echo "composer_test: validate --strict: $(ls "$ROOT"/php/*/composer.json | wc -l) packages"

# Writes $2/composer.json from the Installation JSON of $1, aimed at this checkout, offline.
# Extra path repositories (the framework stubs) come as further arguments.
make_project() {
  local doc=$1 dir=$2; shift 2
  mkdir -p "$dir"
  "$PHP" -r '
    [$_, $doc, $root] = $argv; $extra = array_slice($argv, 3);
    $md = (string) file_get_contents($doc);
    $at = strpos($md, "## Installation");
    if ($at === false || !preg_match("/```json\n(.*?)\n```/s", $md, $m, 0, $at)) {
        fwrite(STDERR, "$doc: no ```json block under ## Installation\n"); exit(1);
    }
    $json = json_decode($m[1], true, 512, JSON_THROW_ON_ERROR);
    $paths = 0;
    foreach ($json["repositories"] as &$repo) {
        if (($repo["type"] ?? "") === "path" && ($repo["url"] ?? "") === "../ferry/php/*") {
            $repo["url"] = "$root/php/*";
            $paths++;
        }
    }
    unset($repo);
    if ($paths !== 1) { fwrite(STDERR, "$doc: expected one path repository \"../ferry/php/*\"\n"); exit(1); }
    foreach ($extra as $url) { $json["repositories"][] = ["type" => "path", "url" => $url]; }
    array_unshift($json["repositories"], ["packagist.org" => false]);
    echo json_encode($json, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES), "\n";
  ' "$doc" "$ROOT" "$@" > "$dir/composer.json"
}

install_project() {
  local dir=$1 out
  out=$(cd "$dir" && "$COMPOSER_CMD" install --no-progress 2>&1) \
    || fail "composer install in a project made from ${2#"$ROOT"/}:"$'\n'"$out"$'\n'"composer.json:"$'\n'"$(cat "$dir/composer.json")"
}

# Runs PHP code with nothing but the project's vendor/autoload.php; the code must print "ok".
smoke() {
  local dir=$1 code=$2 out
  out=$(cd "$dir" && "$PHP" -d include_path=.:/usr/share/php -r '
    declare(strict_types=1);
    $loader = require "vendor/autoload.php";
    function fromVendor(string $class): void {
        global $loader;
        $file = $loader->findFile($class);
        if ($file === false || !str_contains($file, "/vendor/")) { throw new LogicException("$class is not autoloaded from vendor/: " . var_export($file, true)); }
        if (!class_exists($class) && !interface_exists($class)) { throw new LogicException("$class not loadable"); }
    }
    function same(mixed $want, mixed $got, string $what): void {
        if ($want !== $got) { throw new LogicException("$what: want " . var_export($want, true) . ", got " . var_export($got, true)); }
    }
    '"$code"'
    echo "ok";' 2>&1) || true
  [ "$out" = ok ] || fail "in $dir: $out"
}

installed() { "$PHP" -r '$j = json_decode(file_get_contents($argv[1]), true); $n = array_column($j["packages"] ?? $j, "version", "name"); ksort($n); echo implode(" ", array_map(fn ($k, $v) => "$k:$v", array_keys($n), $n)); ' "$1/vendor/composer/installed.json"; }

# --- 2. worker, msgpack, tarantool: everything they need is in this checkout
declare -A SMOKE=(
  [worker]='fromVendor(Ferry\Worker\Http\Response::class);
    $r = Ferry\Worker\Http\Response::text("hi", 201);
    same(201, $r->getStatus(), "status"); same("hi", $r->body, "body");
    fromVendor(Ferry\Worker\FrameCodec::class);
    same(true, strlen(Ferry\Worker\FrameCodec::encode(0, [], "x")) > 1, "frame");'
  [msgpack]='fromVendor(Ferry\MsgPack\Packer::class);
    $bytes = (new Ferry\MsgPack\Packer())->pack(["a" => [1, -2, 2.5, "x"]]);
    same(["a" => [1, -2, 2.5, "x"]], (new Ferry\MsgPack\BufferUnpacker($bytes))->unpack(), "round trip");'
  [tarantool]='fromVendor(Ferry\Tarantool\Client::class);
    fromVendor(Ferry\MsgPack\Packer::class);
    $codec = new Ferry\Tarantool\Codec\PureCodec();
    same([1, "two", [3]], $codec->unpack($codec->pack([1, "two", [3]])), "codec round trip");'
)
declare -A EXPECT=(
  [worker]='ferry/worker:0.1.0'
  [msgpack]='ferry/msgpack:0.1.0'
  [tarantool]='ferry/msgpack:0.1.0 ferry/tarantool:0.1.0'
)
for pkg in worker msgpack tarantool; do
  dir="$TMP/project-$pkg"
  make_project "$ROOT/php/$pkg/README.md" "$dir"
  install_project "$dir" "$ROOT/php/$pkg/README.md"
  got=$(installed "$dir")
  [ "$got" = "${EXPECT[$pkg]}" ] || fail "php/$pkg/README.md installs '$got', want '${EXPECT[$pkg]}'"
  smoke "$dir" "${SMOKE[$pkg]}"
  echo "composer_test: php/$pkg/README.md installs: $got"
done

# --- 2b. an unpacked tree (no git) and a project that accepts dev versions: no `versions`
# option, so this resolves through each package's branch alias (dev-main = 0.1.x-dev) and
# the self.version requirements between them.
mkdir -p "$TMP/unpacked"
cp -R "$ROOT/php/msgpack" "$ROOT/php/tarantool" "$TMP/unpacked/"
dir="$TMP/project-dev"
mkdir -p "$dir"
cat > "$dir/composer.json" <<JSON
{
    "repositories": [{"packagist.org": false}, {"type": "path", "url": "$TMP/unpacked/*"}],
    "require": {"ferry/tarantool": "0.1.x-dev"},
    "minimum-stability": "dev",
    "prefer-stable": true
}
JSON
GIT_CEILING_DIRECTORIES=$TMP install_project "$dir" "an unpacked tree"
got=$(installed "$dir")
[ "$got" = 'ferry/msgpack:dev-main ferry/tarantool:dev-main' ] || fail "unpacked tree installs '$got'"
smoke "$dir" "${SMOKE[tarantool]}"
echo "composer_test: an unpacked tree at minimum-stability dev installs: $got"

# --- 3. httpfoundation, symfony, laravel: the framework from Debian, through stub packages
# Prints the stub's directory for a Composer package that Debian provides as php-<vendor>-<name>.
debian_stub() {
  local name=$1 deb version autoload dir
  deb="php-${name//\//-}"
  version=$(dpkg-query -W -f '${Version}' "$deb" 2>/dev/null) \
    || fail "$name: no Debian package $deb installed to stand for it (see the header of $0)"
  version=${version#*:}; version=${version%%[+~-]*}
  autoload=$(dpkg -L "$deb" | grep '/autoload\.php$' | awk '{ print length, $0 }' | sort -n | head -1 | cut -d' ' -f2-)
  [ -n "$autoload" ] || fail "$deb ships no autoload.php"
  dir="$TMP/stubs/${name//\//-}"
  mkdir -p "$dir"
  printf '<?php\n\ndeclare(strict_types=1);\n\nrequire_once %s;\n' "$("$PHP" -r 'var_export($argv[1]);' "$autoload")" > "$dir/autoload.php"
  "$PHP" -r 'echo json_encode(["name" => $argv[1], "version" => $argv[2], "description" => "Debian $argv[3]",
      "autoload" => ["files" => ["autoload.php"]]], JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES), "\n";' \
    "$name" "$version" "$deb" > "$dir/composer.json"
  echo "$dir"
}

declare -A FRAMEWORK_SMOKE=(
  [httpfoundation]='fromVendor(Ferry\HttpFoundation\Bridge::class);
    fromVendor(Ferry\Worker\Http\Response::class);
    $answer = Ferry\HttpFoundation\Bridge::response(new Symfony\Component\HttpFoundation\Response("hi", 201));
    same([201, "hi"], [$answer->getStatus(), $answer->body], "response");'
  [symfony]='fromVendor(Ferry\Symfony\Runtime::class);
    same(true, is_subclass_of(Ferry\Symfony\Runtime::class, Symfony\Component\Runtime\RuntimeInterface::class), "Runtime is a Symfony runtime");'
  [laravel]='fromVendor(Ferry\Laravel\Worker::class);
    fromVendor(Ferry\Laravel\Http\UploadedFile::class);
    same(true, is_subclass_of(Ferry\Laravel\Http\UploadedFile::class, Illuminate\Http\UploadedFile::class), "UploadedFile is Laravel'"'"'s");'
)
for pkg in httpfoundation symfony laravel; do
  manifest="$ROOT/php/$pkg/composer.json"
  [ -f "$manifest" ] || fail "php/$pkg/composer.json is missing"
  doc="$ROOT/php/$pkg/README.md"
  grep -q '^## Installation' "$doc" 2>/dev/null || doc="$ROOT/php/$pkg/INSTALL.snippet.md"
  stubs=()
  for req in $("$PHP" -r 'foreach (json_decode(file_get_contents($argv[1]), true)["require"] ?? [] as $n => $_) { if (!preg_match("{^(php|ext-.*|lib-.*|ferry/.*)$}", $n)) echo "$n\n"; }' "$manifest"); do
    stubs+=("$(debian_stub "$req")")
  done
  dir="$TMP/project-$pkg"
  make_project "$doc" "$dir" "${stubs[@]}"
  install_project "$dir" "$doc"
  smoke "$dir" "${FRAMEWORK_SMOKE[$pkg]}"
  echo "composer_test: ${doc#"$ROOT"/} installs: $(installed "$dir")"
done
echo "composer_test: ok"
