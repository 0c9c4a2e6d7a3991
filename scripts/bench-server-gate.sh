#!/bin/sh
# Gates a base build of a testdata/server server against a head build in
# one job, RUNS times: HEAD is "head" (the handler spends 40 µs on every
# 40th request), head:US (US µs, the C server's), or "base" (a second
# build of the base: an A/A). SERVER is tcp or http (testdata/server's
# scenario) or a scenario file. The gates are
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
server=${2:?server: tcp, http or a scenario file}
head=${3:?head build: head or base}
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
case $server in
tcp | http) scenario=$PWD/testdata/server/$server.yaml ;;
/*) scenario=$server ;;
*) scenario=$PWD/$server ;;
esac
TAILGATE_BENCH_SCENARIOS="$scenario" \
	TAILGATE_BENCH_BASE_VARIANT="base:dir=$work/base" TAILGATE_BENCH_HEAD_VARIANT="head:dir=$work/head" \
	TAILGATE_BENCH_RUNS="$runs" TAILGATE_BENCH_LABEL="base/$head" TAILGATE_BENCH_CONDITION="$condition" \
	TAILGATE_BENCH_OUT="$out" \
	go test ./cmd/tailgate/ -run '^$' -bench '^BenchmarkGateRuns$' -benchtime 1x -timeout 0 >"$work/log" 2>&1 ||
	{ cat "$work/log" >&2; exit 1; }
tail -n +"$((before + 1))" "$out"
