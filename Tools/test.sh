#!/usr/bin/env bash
# The whole test suite, set-up included: the README's test command, and what .ci/run calls.
#
# On a fresh Debian machine as root it installs what the tests need and is missing (apt-get update first),
# then runs every test: the Swift test suite (unit tests, real server processes, the console in a
# pseudo-terminal, the conformance scenarios, the Python client against a real server, several nodes on a
# real PostgreSQL) and the smoke test (the README's first session against the built binary). Not root and
# something missing: it names the packages to install and stops with status 1, before building anything.
#
# Usage: bash Tools/test.sh [extra arguments for `swift test`, e.g. --filter Durability]
set -euo pipefail
cd "$(dirname "$0")/.."

# Each entry: a Debian package and the command that tells whether what it provides is here.
missing=()
need() { # need PACKAGE PROBE...
  local package=$1; shift
  "$@" >/dev/null 2>&1 || missing+=("$package")
}
need pkg-config        command -v pkg-config
need libedit-dev       pkg-config --exists libedit              # entitlectl links the system's libedit
need liburing-dev      pkg-config --exists liburing             # the event loops batch system calls with io_uring
need zlib1g-dev        pkg-config --exists zlib                 # entitled-stores reads RevenueCat's gzip exports
need gzip              command -v gzip                          # the import tests write gzip exports
# The conformance runner validates every line against Protocol/schema/ with the jsonschema module; the
# tests look for it in the python3 on PATH, then in the system's.
if ! python3 -c 'import jsonschema' >/dev/null 2>&1; then
  need python3-jsonschema /usr/bin/python3 -c 'import jsonschema'
fi
# The App Store Server API's stand-in (Tests/EntitledStoresTests/Fixtures/appstore_standin.py) verifies the
# client's ES256 token with the cryptography module; found as jsonschema is.
if ! python3 -c 'import cryptography' >/dev/null 2>&1; then
  need python3-cryptography /usr/bin/python3 -c 'import cryptography'
fi

# The cluster tests start their own PostgreSQL servers (initdb into a temporary directory, a free port) from
# Debian's binaries in /usr/lib/postgresql/N/bin (or an initdb on the PATH, elsewhere). The package's own
# cluster `main`, which it may create and start on port 5432, is neither needed nor disturbed.
need postgresql        bash -c "compgen -G '/usr/lib/postgresql/*/bin/initdb' || command -v initdb"
# A cluster test runs one node with its clock an hour ahead, as a machine whose time service failed.
need libfaketime       bash -c "compgen -G '/usr/lib/*/faketime/libfaketime.so.1' || compgen -G '/usr/lib/faketime/libfaketime.so.1'"
# The client libraries of Protocol/clients/ build and test with their own ecosystem's tools, all from Debian:
# Node 20 and TypeScript, Go, Java 17 with Jackson and JUnit 5; the TLS tests make their certificates with
# openssl.
need nodejs            command -v node
need node-typescript   command -v tsc
need golang-go         command -v go
need openjdk-17-jdk-headless command -v javac
need libjackson2-databind-java test -f /usr/share/java/jackson-databind.jar
need junit5            test -f /usr/share/java/junit-platform-console-standalone.jar
need openssl           command -v openssl
# The Python client's test installs it with pip into a virtual environment, offline (--no-build-isolation,
# with the system's setuptools).
need python3-venv      bash -c "dpkg -s python3-venv || /usr/bin/python3 -c 'import ensurepip'"
need python3-setuptools /usr/bin/python3 -c 'import setuptools'

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "Tools/test.sh: missing ${missing[*]}; install them first (as root: apt-get install -y ${missing[*]})" >&2
    exit 1
  fi
  echo "Tools/test.sh: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

command -v swift >/dev/null || { echo "Tools/test.sh: no swift on PATH; install the Swift toolchain (6.2 or later)" >&2; exit 1; }
swift --version

# The outgoing webhooks' tests verify every signature with `standardwebhooks`, the Standard Webhooks
# specification's Python library (PyPI; Debian has no package of it), in a virtual environment under .build/.
# Where PyPI cannot be reached the receiver verifies with the specification's algorithm of its own and says
# so in its answers; ENTITLED_REQUIRE_STANDARDWEBHOOKS makes the tests insist on the library when it installed.
webhook_venv="$PWD/.build/webhook-venv"
if [ ! -x "$webhook_venv/bin/python3" ] || ! "$webhook_venv/bin/python3" -c 'import standardwebhooks' 2>/dev/null; then
  /usr/bin/python3 -m venv --system-site-packages "$webhook_venv" \
    && "$webhook_venv/bin/pip" install -q --disable-pip-version-check standardwebhooks >/dev/null 2>&1 || true
fi
if "$webhook_venv/bin/python3" -c 'import standardwebhooks' 2>/dev/null; then
  export ENTITLED_WEBHOOK_PYTHON="$webhook_venv/bin/python3" ENTITLED_REQUIRE_STANDARDWEBHOOKS=1
else
  echo "Tools/test.sh: standardwebhooks could not be installed from PyPI; the webhook receiver verifies with its own reading of the specification" >&2
fi

# The README's first session, against the real binary, as a new user would run it.
bash Tools/smoke-test.sh
# Every Swift test, the conformance run against a real server among them (ConformanceTests).
# MALLOC_ARENA_MAX=1: Foundation's Process.run() in Swift 6.3 reads 256 bytes past a directory entry of
# /proc/self/fd (swiftlang/swift-corelibs-foundation#5472, fixed after 6.3.1) and crashes the test process
# when that entry ends a thread arena's mapped heap: one of about a dozen full runs here (the suite starts
# hundreds of processes). With one arena every allocation comes from the main heap, which keeps at least
# malloc's top padding mapped after it. The suite's duration is unchanged (55 s either way, measured).
export MALLOC_ARENA_MAX=1
if [ $# -gt 0 ]; then
  swift test "$@"
  exit
fi
# Two test processes, side by side. Swift Testing starts every test at once on the process's cooperative
# pool, which has one thread per core (two here), and hundreds of synchronous tests block those threads
# while a server starts or a console runs (seen in stack samples of a full run: every trivial test then
# finished after ~130 s). The client library's tests wait on real timers (loading retries, reconnects,
# watches); sharing that pool they starved past their deadlines (CI, 2026-12-04). In a process of their
# own they have a pool of their own, and the kernel shares the cores between the two.
swift build --build-tests
client_log=$(mktemp)
swift test --skip-build --filter EntitledClientTests >"$client_log" 2>&1 &
client_tests=$!
status=0
swift test --skip-build --skip EntitledClientTests || status=$?
client_status=0
wait "$client_tests" || client_status=$?
echo "---- EntitledClientTests (their own process) ----"
cat "$client_log"
rm -f "$client_log"
# Each language's client, through its own runner, against the binary this build made: unit tests, every
# conformance scenario through the client, its README's first session.
export ENTITLED_BINARY="$PWD/.build/debug/entitled"
for client in node go java python; do
  echo "---- Protocol/clients/$client ----"
  bash "Protocol/clients/$client/test.sh" || status=$?
done
[ "$status" -eq 0 ] && [ "$client_status" -eq 0 ]
