#!/usr/bin/env bash
# Builds the client and runs every test (JUnit 5 console launcher, offline): unit tests, behaviour tests
# against real servers and fake line servers, every conformance scenario of Protocol/conformance through
# the client, the schema check and the README's first session. Works from any directory.
#
#   ENTITLED_BINARY=/abs/path/to/entitled bash Protocol/clients/java/test.sh
#
# ENTITLED_BINARY defaults to <repo>/.build/debug/entitled. Exits non-zero when a test fails.
# Run with sh too (sh test.sh): it needs bash (pipefail, BASH_SOURCE), so it runs itself again under bash.
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
jars="${JAVA_LIBS:-/usr/share/java}"
export ENTITLED_BINARY="${ENTITLED_BINARY:-$repo/.build/debug/entitled}"
if [ ! -x "$ENTITLED_BINARY" ]; then
  echo "no entitled binary at $ENTITLED_BINARY: build it (swift build --product entitled) or set ENTITLED_BINARY" >&2
  exit 1
fi

bash "$here/build.sh" --tests >/dev/null
classpath="$here/build/test-classes:$here/build/classes:$jars/jackson-databind.jar:$jars/jackson-core.jar:$jars/jackson-annotations.jar"
java -Dentitled.repo="$repo" -jar "$jars/junit-platform-console-standalone.jar" \
  --disable-banner --disable-ansi-colors --details=tree --fail-if-no-tests \
  --class-path "$classpath" --select-package dev.entitled.client
