#!/bin/sh
# Gates a base build of a testdata/server server against a head build in
# one job, RUNS times: HEAD is "head" (the handler spends 40 µs on every
# 40th request), head:US (US µs, the C server's), every:US (the C
# server spends US µs on every request), "base" (a second
# build of the base: an A/A) or "layout" (the base laid out otherwise:
# an A/A of layout alone). SERVER is tcp or http, testdata/server's
# scenario, gating both views at p99 10%; SERVER:client=PCT (tcp:client=5%)
# is that scenario with the client's p99 alone gated at PCT. The gates are
# BenchmarkGateRuns's (cmd/tailgate/gate_bench_test.go) with the two
# builds as dir= variants; it appends one tab-separated line per gate to
# OUT: time, scenario, label, run, exit, rounds, wall seconds, mode,
# CONDITION, and each gated metric:percentile=ratio[lo,hi]:verdict.
# Needs cc and go. BENCHMARKS.md ("A server's requests") records what it
# measured.
#
#   scripts/bench-server-gate.sh OUT SERVER HEAD [RUNS] [CONDITION]
set -eu
out=${1:?usage: bench-server-gate.sh OUT SERVER HEAD [RUNS] [CONDITION]}
server=${2:?server: tcp, http, tcp:client=PCT or http:client=PCT}
head=${3:?head build: head, head:US, every:US, base or layout}
runs=${4:-1}
condition=${5:-quiet}
case $out in /*) ;; *) out=$PWD/$out ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
scripts/build-servers.sh "$work/base" base
scripts/build-servers.sh "$work/head" "$head"
before=0
if [ -f "$out" ]; then before=$(wc -l <"$out"); fi
recipe=${server%%:*}
case $recipe in
tcp | http) ;;
*) echo "bench-server-gate.sh: server must be tcp or http, got $recipe" >&2; exit 2 ;;
esac
scenario=$PWD/testdata/server/$recipe.yaml
case $server in
*:client=*)
	scenario=$work/$recipe-client.yaml
	cat "$PWD/testdata/server/$recipe.yaml" >"$scenario"
	printf 'gate:\n  request.client:\n    p99: %s\n' "${server#*:client=}" >>"$scenario"
	;;
*:*) echo "bench-server-gate.sh: after the server, only :client=PCT, got $server" >&2; exit 2 ;;
esac
TAILGATE_BENCH_SCENARIOS="$scenario" \
	TAILGATE_BENCH_BASE_VARIANT="base:dir=$work/base" TAILGATE_BENCH_HEAD_VARIANT="head:dir=$work/head" \
	TAILGATE_BENCH_RUNS="$runs" TAILGATE_BENCH_LABEL="base/$head" TAILGATE_BENCH_CONDITION="$condition" \
	TAILGATE_BENCH_OUT="$out" \
	go test ./cmd/tailgate/ -run '^$' -bench '^BenchmarkGateRuns$' -benchtime 1x -timeout 0 >"$work/log" 2>&1 ||
	{ cat "$work/log" >&2; exit 1; }
tail -n +"$((before + 1))" "$out"
