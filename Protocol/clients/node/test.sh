#!/bin/sh
# Builds the Node.js client and runs all its tests against a real entitled, offline, from any directory.
# The server is $ENTITLED_BINARY (default <repo>/.build/debug/entitled). Needs Debian's nodejs (20) and
# node-typescript (tsc); exits non-zero when the build or a test fails.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
export ENTITLED_BINARY="${ENTITLED_BINARY:-$repo/.build/debug/entitled}"
case "$ENTITLED_BINARY" in /*) ;; *) ENTITLED_BINARY="$repo/$ENTITLED_BINARY" ;; esac
if [ ! -x "$ENTITLED_BINARY" ]; then
  echo "test.sh: no entitled binary at $ENTITLED_BINARY (build it, or set ENTITLED_BINARY)" >&2
  exit 1
fi
cd "$here"
rm -rf dist
tsc -p .
# Two files at a time: the suites start their own servers, and the machine has 2 cores. (Debian's own
# nodejs 18 predates --test-concurrency: it runs the files with its default then.)
concurrency=""
if node --help 2>/dev/null | grep -q -- '--test-concurrency'; then concurrency="--test-concurrency=2"; fi
exec node --test $concurrency test/*.test.mjs
