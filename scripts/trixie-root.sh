#!/usr/bin/env bash
# Makes the Debian 13 (trixie) root the PHP 8.4 test set runs in (`make test-matrix`):
# PHP 8.4, its headers for ext/ferry, PHPUnit, Symfony 6.4 and Laravel 10, all from
# Debian's own packages, so no container runtime and no Composer download is needed.
#
#   scripts/trixie-root.sh          make the root if missing or stale; prints its path
#
# The root lives in $FERRY_TRIXIE_ROOT (default .cache/trixie-root, git-ignored). It is
# made once and reused: a stamp file holds a hash of everything that decides its content
# (suite, mirror, package list), and only a different hash rebuilds it. A rebuild goes
# to a sibling directory first and replaces the old root only when complete, so an
# interrupted run never leaves a half-made root that looks finished.
# Needs root (debootstrap and chroot do); debootstrap is installed by scripts/deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
ROOT=${FERRY_TRIXIE_ROOT:-$REPO/.cache/trixie-root}
SUITE=trixie
# The mirror the host's apt already uses, so the root comes from the same registry.
MIRROR=${FERRY_TRIXIE_MIRROR:-$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}

# What the 8.4 set needs; compare with the 8.2 list in scripts/deps.sh.
PKGS=(php8.4-cli php8.4-dev php8.4-opcache php8.4-mbstring php8.4-gmp php8.4-sqlite3 php8.4-msgpack
      gcc make libc6-dev phpunit composer
      php-psr-http-message php-psr-http-factory php-nyholm-psr7 php-nikic-fast-route
      php-symfony-runtime php-symfony-framework-bundle php-symfony-http-kernel php-symfony-http-foundation
      php-symfony-routing php-symfony-dependency-injection php-symfony-config php-symfony-event-dispatcher
      php-symfony-mime php-laravel-framework)

mkdir -p "$(dirname "$ROOT")"
# Two runs at once (two make test-matrix) wait for each other instead of building twice.
exec 9>"$ROOT.lock"
flock 9

stamp_of() { printf '%s\n' "v1 $SUITE $MIRROR" "${PKGS[@]}" | sha256sum | cut -c1-16; }
want=$(stamp_of)
if [ -f "$ROOT/.ferry-stamp" ] && [ "$(cat "$ROOT/.ferry-stamp")" = "$want" ]; then
  echo "$ROOT"
  exit 0
fi

[ "$(id -u)" -eq 0 ] || { echo "trixie-root.sh: needs root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null 2>&1 || { echo "trixie-root.sh: debootstrap missing: run scripts/deps.sh" >&2; exit 2; }

new="$ROOT.new"
# A leftover from an interrupted run may still have a mount inside (the namespace below
# makes that unlikely); refuse rather than rm -rf through it into the host.
if [ -d "$new" ]; then
  if grep -q " $new/" /proc/self/mountinfo; then
    echo "trixie-root.sh: $new has mounts; unmount them first" >&2; exit 1
  fi
  rm -rf "$new"
fi
mkdir -p "$new"
start=$(date +%s)
echo "trixie-root.sh: [1/2] debootstrap $SUITE from $MIRROR into $new" >&2
# minbase: apt and dpkg only; the rest comes from the list below with apt's resolver.
# debootstrap mounts /proc in the target itself: in a namespace of its own, an interrupted
# run cannot leave that mount on the host.
unshare -m --propagation private debootstrap --variant=minbase "$SUITE" "$new" "$MIRROR" 2>&1 \
  | { grep --line-buffered -E '^I: (Retrieving Release|Validating Packages|Resolving|Extracting base-files|Installing core|Configuring apt|Base system installed)' >&2 || true; } \
  || { echo "trixie-root.sh: debootstrap failed (see $new/debootstrap/debootstrap.log)" >&2; exit 1; }

echo "trixie-root.sh: [2/2] apt-get install ${#PKGS[@]} packages" >&2
cp /etc/hosts "$new/etc/hosts"
# Packages must not start services in the root; /proc only lives in this namespace.
printf '#!/bin/sh\nexit 101\n' >"$new/usr/sbin/policy-rc.d"
chmod 755 "$new/usr/sbin/policy-rc.d"
unshare -m --propagation private sh -ec '
  mount -t proc proc "$1/proc"
  shift
  root=$1; shift
  chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    -o Dpkg::Progress-Fancy=0 "$@" </dev/null
  chroot "$root" apt-get clean
' sh "$new" "$new" "${PKGS[@]}" 2>&1 \
  | { grep --line-buffered -E '^(Get:[0-9]*0 |Setting up php8\.4-cli|Setting up php-laravel|Setting up phpunit |E: [^C]|[0-9]+ upgraded)' >&2 || true; } \
  || { echo "trixie-root.sh: apt-get install failed in $new" >&2; exit 1; }
chroot "$new" php8.4 -v >/dev/null && chroot "$new" phpize8.4 -v >/dev/null \
  || { echo "trixie-root.sh: php8.4 is not usable in $new" >&2; exit 1; }
echo "$want" >"$new/.ferry-stamp"

if [ -d "$ROOT" ]; then
  grep -q " $ROOT/" /proc/self/mountinfo && { echo "trixie-root.sh: $ROOT has mounts; not replacing it" >&2; exit 1; }
  rm -rf "$ROOT"
fi
mv "$new" "$ROOT"
echo "trixie-root.sh: made $ROOT in $(( $(date +%s) - start ))s" >&2
echo "$ROOT"
