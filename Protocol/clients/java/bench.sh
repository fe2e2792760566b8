#!/usr/bin/env bash
# Runs the benchmark (src/bench/java): checks through the client's pool at a fixed number in flight; prints
# one JSON line. Builds the client first when build/ is missing. Options: --host --port --in-flight
# --duration --warmup --users (see Bench.java).
#
#   bash Protocol/clients/java/bench.sh --port 7117 --in-flight 50 --duration 5 --warmup 1 --users 10000
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
jars="${JAVA_LIBS:-/usr/share/java}"
if [ ! -f "$here/build/entitled-client.jar" ] || [ ! -d "$here/build/bench" ]; then
  bash "$here/build.sh" >&2
fi
exec java -cp "$here/build/bench:$here/build/entitled-client.jar:$jars/jackson-databind.jar:$jars/jackson-core.jar:$jars/jackson-annotations.jar" \
  dev.entitled.client.bench.Bench "$@"
