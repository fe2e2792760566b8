#!/usr/bin/env bash
# Smoke test of a built `entitled`: starts it on a free port in a temporary directory, plays the README's
# first session (define, grant, check, claim, revoke) over one TCP connection, checks each response, then
# stops it with SIGTERM and expects exit status 0.
#
# Usage: Tools/smoke-test.sh [path/to/entitled]     (default: builds and uses .build/debug/entitled)
set -euo pipefail

binary=${1:-}
if [ -z "$binary" ]; then
  swift build --product entitled >/dev/null
  binary="$(swift build --show-bin-path)/entitled"
fi
binary=$(realpath "$binary")

workdir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$workdir"' EXIT
cd "$workdir"
"$binary" --port 0 >ready.txt 2>log.txt &
pid=$!

for _ in $(seq 100); do grep -q "listening on" ready.txt 2>/dev/null && break; sleep 0.1; done
port=$(grep -o 'tcp 127\.0\.0\.1:[0-9]*' ready.txt | head -1 | cut -d: -f2)
[ -n "$port" ] || { echo "FAIL: no ready line"; cat log.txt; exit 1; }

exec 3<>"/dev/tcp/127.0.0.1/$port"
passed=0
failed=0
# Sends one request line and checks that its response contains the expected fragment.
expect() {
  local request=$1 fragment=$2 response
  printf '%s\n' "$request" >&3
  IFS= read -r -t 5 response <&3 || response="(no response)"
  if [[ "$response" == *"$fragment"* ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL: $request"
    echo "  expected to contain: $fragment"
    echo "  got: $response"
  fi
  last_response=$response
}

expect '{"op":"define","entitlement":"pro","products":["prod_pro_monthly","prod_pro_yearly"]}' '"ok":true'
expect '{"op":"grant","device":"iphone-7f3a","product":"prod_pro_monthly","duration":"30d","source":"app_store"}' '"status":"active"'
membership=$(grep -o 'mem_[0-9a-z]*' <<<"$last_response" | head -1)
expect '{"op":"check","device":"iphone-7f3a","entitlement":"pro"}' '"active":true'
expect '{"op":"claim","device":"iphone-7f3a","user":"alice"}' '"claimed":1'
expect '{"op":"check","user":"alice","entitlement":"pro"}' '"active":true'
expect '{"op":"check","device":"iphone-7f3a","entitlement":"pro"}' '"active":false'
expect "{\"op\":\"revoke\",\"membership\":\"$membership\",\"reason\":\"refund\"}" '"status":"revoked"'
expect '{"op":"check","user":"alice","entitlement":"pro"}' '"active":false'
expect '{"op":"chek","user":"alice"}' '"code":"unknown_op"'
# The README's "Subscriptions over time": a trial, a webhook's cancellation (applied once), the trail.
expect '{"op":"grant","user":"bob","product":"prod_pro_yearly","duration":"365d","willRenew":true,"periodType":"trial","idempotencyKey":"checkout-8812"}' '"status":"trialing"'
trial=$(grep -o 'mem_[0-9a-z]*' <<<"$last_response" | head -1)
expect "{\"op\":\"event\",\"membership\":\"$trial\",\"type\":\"cancellation\",\"eventId\":\"evt_31\",\"eventTime\":\"2026-01-01T00:00:00Z\"}" '"applied":true'
expect "{\"op\":\"event\",\"membership\":\"$trial\",\"type\":\"cancellation\",\"eventId\":\"evt_31\",\"eventTime\":\"2026-01-01T00:00:00Z\"}" '"reason":"duplicate"'
expect '{"op":"history","user":"alice"}' '"action":"revoke","reason":"refund"'
exec 3>&-

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
if [ "$status" -ne 0 ]; then
  failed=$((failed + 1))
  echo "FAIL: entitled exited with status $status after SIGTERM"
else
  passed=$((passed + 1))
fi
echo "smoke: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
