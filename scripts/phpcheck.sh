#!/usr/bin/env bash
# Static analysis for the PHP code, run by `make test-packages`. Debian ships neither PHPStan
# nor Psalm, so: `php -l` (a full compile, which catches more than a parse) over every PHP
# file of the repository, then scripts/phpcheck.php for what a compile does not see.
set -euo pipefail
cd "$(dirname "$0")/.."
PHP=${PHP:-php}

# Every *.php file, and the PHP scripts without an extension (bin/ commands, artisan).
list_files() {
  local all
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    # Untracked files too: a new file must pass before it is committed.
    all=(git ls-files -co --exclude-standard -z)
  else
    all=(find . -type f -not -path './.git/*' -not -path './.cache/*' -printf '%P\0')
  fi
  "${all[@]}" | while IFS= read -r -d '' f; do
    case $f in
      *.php) printf '%s\0' "$f" ;;
      */*.*|*.*) ;;
      *) [ -f "$f" ] && head -c 64 "$f" | head -n 1 | grep -q '^#!.*php' && printf '%s\0' "$f" ;;
    esac
  done
}

files=$(mktemp)
trap 'rm -f "$files"' EXIT
list_files | grep -zv -E '(^|/)(vendor|var)/' > "$files"

# PHP 8.2's -l compiles only its first argument, hence one process per file.
lint_out=$(xargs -0 -r -n 16 -P "$(nproc)" sh -c \
    'for f; do "$0" -d display_errors=1 -d log_errors=0 -l "$f" 2>&1 | grep -v "^No syntax errors detected"; done; true' \
    "$PHP" < "$files")
if [ -n "$lint_out" ]; then
  printf '%s\n' "$lint_out" >&2
  echo "phpcheck: php -l failed" >&2
  exit 1
fi
echo "phpcheck: php -l: $(tr -cd '\0' < "$files" | wc -c) files compile"
"$PHP" scripts/phpcheck.php
