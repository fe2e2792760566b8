#!/usr/bin/env bash
# Builds the client offline with javac against Debian's Jackson jars (libjackson2-*-java):
#   build/entitled-client.jar   the library
#   build/bench/                the benchmark program (src/bench/java)
# With --tests, also compiles src/test/java into build/test-classes (test.sh runs them).
# Works from any directory. Maven users build with pom.xml instead (`mvn package`).
# Run with sh too (sh test.sh): it needs bash (pipefail, BASH_SOURCE), so it runs itself again under bash.
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
jars="${JAVA_LIBS:-/usr/share/java}"
classpath="$jars/jackson-databind.jar:$jars/jackson-core.jar:$jars/jackson-annotations.jar"
build="$here/build"

rm -rf "$build/classes" "$build/bench" "$build/test-classes"
mkdir -p "$build/classes" "$build/bench"
javac --release 17 -Xlint:all -Werror -encoding UTF-8 -cp "$classpath" -d "$build/classes" \
  $(find "$here/src/main/java" -name '*.java')
jar --create --file "$build/entitled-client.jar" -C "$build/classes" .
javac --release 17 -Xlint:all -Werror -encoding UTF-8 -cp "$build/classes:$classpath" -d "$build/bench" \
  $(find "$here/src/bench/java" -name '*.java')

if [ "${1:-}" = "--tests" ]; then
  mkdir -p "$build/test-classes"
  javac --release 17 -Xlint:all -encoding UTF-8 \
    -cp "$build/classes:$classpath:$jars/junit-platform-console-standalone.jar" -d "$build/test-classes" \
    $(find "$here/src/test/java" -name '*.java')
fi
echo "built $build/entitled-client.jar"
