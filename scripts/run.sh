#!/usr/bin/env bash
# Starts the default app: ferry with ./ferry.yaml when present, else the hello example.
set -euo pipefail
cd "$(dirname "$0")/.."
exec bin/ferry serve "$@"
