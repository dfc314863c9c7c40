#!/usr/bin/env bash
# Installs the Debian packages Ferry needs (clang, libclang-rt-14-dev and valgrind for
# ext/ferry's fuzzer and memory checks; nghttp2-client for the bench's h2load; debootstrap
# for the PHP 8.4 root of `make test-matrix`; MariaDB, Redis (phpredis, predis) and Tarantool
# for pool.fiber_io's tests, which start their own on free ports; libssl-dev, which
# php8.2-dev pulls in anyway, for ext/ferry's TLS hooks), only those missing, with one
# apt-get update
# before the first install. Safe to run again.
set -euo pipefail
pkgs=(php8.2-cli php8.2-fpm php8.2-opcache php8.2-dev php8.2-msgpack php8.2-gmp php8.2-mbstring
      tarantool nginx-light wrk phpunit composer
      php-psr-http-message php-psr-http-factory php-nyholm-psr7
      php-symfony-runtime php-symfony-framework-bundle php-symfony-http-kernel php-symfony-http-foundation
      php-symfony-routing php-symfony-dependency-injection php-symfony-config php-symfony-event-dispatcher
      php-symfony-mime php-laravel-framework php-nikic-fast-route php8.2-sqlite3
      clang libclang-rt-14-dev valgrind nghttp2-client openssl curl debootstrap
      mariadb-server php8.2-mysql redis-server php8.2-redis php-nrk-predis libssl-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# Packages must not start system services (nginx, php-fpm) on this box: Ferry's
# scripts start their own copies on free ports.
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
