#!/usr/bin/env bash
# Runs the Python client's tests, offline, from any directory:
#  - every test module under the Debian python3 (/usr/bin/python3), the conformance scenarios included;
#  - every module but the conformance scenarios (covered above, and interpreter-neutral) under each of
#    Python 3.9, 3.10, 3.12 and 3.13 found in pyenv (a missing one is named and skipped);
#  - `pip install --no-build-isolation` of this folder into a virtual environment, then an import of it.
# ENTITLED_BINARY names the server (default <repo>/.build/debug/entitled). Exits non-zero on any failure.
# Written for bash; `sh test.sh` (dash on Debian, which has neither arrays nor pipefail) runs it under bash.
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
export ENTITLED_BINARY="${ENTITLED_BINARY:-$repo/.build/debug/entitled}"
export PYTHONDONTWRITEBYTECODE=1
cd "$here"
started=$SECONDS

echo "== $(/usr/bin/python3 --version) (/usr/bin/python3): every test"
/usr/bin/python3 -m unittest discover -s "$here" -t "$here"

modules=(tests.test_client tests.test_behaviour tests.test_reconnect tests.test_nodes tests.test_feed tests.test_schema
         tests.test_readme)
pyenv_root="${PYENV_ROOT:-$HOME/.pyenv}"
for minor in 3.9 3.10 3.12 3.13; do
    python=""
    for candidate in "$pyenv_root"/versions/"$minor".*/bin/python3; do
        [ -x "$candidate" ] && python="$candidate"
    done
    if [ -z "$python" ]; then
        echo "== Python $minor: not installed (looked in $pyenv_root/versions), skipped"
        continue
    fi
    echo "== $("$python" --version) ($python): ${modules[*]}"
    "$python" -m unittest "${modules[@]}"
done

echo "== pip install --no-build-isolation (offline) into a virtual environment"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Built from a copy: setuptools writes build/ and *.egg-info/ beside the sources.
mkdir "$work/source"
cp -r "$here/pyproject.toml" "$here/README.md" "$here/entitled" "$work/source/"
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install --quiet --no-index --no-build-isolation "$work/source"
(cd "$work" && "$work/venv/bin/python" -c '
import entitled, sys
assert "site-packages" in entitled.__file__, entitled.__file__
print("installed", entitled.__version__, "at", entitled.__file__)')

echo "== all passed in $((SECONDS - started)) s"
