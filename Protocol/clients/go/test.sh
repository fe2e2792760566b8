#!/bin/sh
# Builds and tests the Go client, offline, from any directory. The tests start the server at
# $ENTITLED_BINARY (default: <repo>/.build/debug/entitled). RACE=1 adds the race detector.
set -eu
cd "$(dirname "$0")"
export GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local
# The build cache and module path go under /tmp when HOME cannot take them.
if [ -z "${HOME:-}" ] || ! [ -w "${HOME}" ]; then
	export GOCACHE="${GOCACHE:-/tmp/entitled-go-cache}" GOPATH="${GOPATH:-/tmp/entitled-go-path}"
fi
ENTITLED_BINARY="${ENTITLED_BINARY:-$(cd ../../.. && pwd)/.build/debug/entitled}"
export ENTITLED_BINARY

unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	echo "gofmt: not formatted: $unformatted" >&2
	exit 1
fi
go vet ./...
go build ./...
if [ "${RACE:-0}" = 1 ]; then
	go test -race -count=1 -timeout 150s ./...
else
	go test -count=1 -timeout 110s ./...
fi
