#!/bin/sh
# Gates a base build of a testdata/server server against its head (the
# handler spends 40 µs in user space on every 40th request) RUNS times and
# records, per gate, which frame the report names as grown most in the
# requests above p99 (docs/tracers.md, "What grew"), and whether it is the
# handler or a callee of it (handle, spin, clock_gettime, the vDSO's
# __vdso_clock_gettime; for the Go server main.work, time.Now,
# runtime.nanotime1 too). Appends one tab-separated line per gate to OUT:
# time, server, run, exit, top frame, its shares baseline → candidate,
# right (1 or 0), where the frame was read, CONDITION. The report names
# grown frames for a regression only; for a gate that found none the
# frame is the first that grew in go tool pprof -normalize -diff_base of
# the gate's --pprof files ("pprof"; shares "-"). Needs cc and go; run from the root of the
# tree. BENCHMARKS.md ("What grew") records what it measured.
#
#   scripts/bench-grown.sh OUT SERVER [RUNS] [CONDITION]
set -eu
out=${1:?usage: bench-grown.sh OUT SERVER [RUNS] [CONDITION]}
server=${2:?server: tcp or http}
runs=${3:-10}
condition=${4:-quiet}
case $out in /*) ;; *) out=$PWD/$out ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
scripts/build-servers.sh "$work/base" base
scripts/build-servers.sh "$work/head" head
go build -o "$work/tailgate" ./cmd/tailgate
right='^(handle(\..*)?|spin(\..*)?|clock_gettime|__vdso_clock_gettime|main\.work|time\.Now|time\.Since|runtime\.nanotime1(\.abi0)?)$'
i=1
while [ "$i" -le "$runs" ]; do
	code=0
	"$work/tailgate" gate "testdata/server/$server.yaml" \
		--variant "base:dir=$work/base" --variant "head:dir=$work/head" \
		--pprof "$work/pprof" >"$work/report" 2>"$work/log" || code=$?
	# The first grown frame's line: "  NAME[ [kernel]]: B% → C% (+P points)".
	line=$(grep -m1 -E '^  [^ ].*: [0-9]+% → [0-9]+% \(\+[0-9]+ points\)$' "$work/report" || true)
	frame=$(printf '%s' "$line" | sed -E 's/^  ([^ :]+).*/\1/')
	shares=$(printf '%s' "$line" | sed -E 's/.*: ([0-9]+% → [0-9]+%).*/\1/')
	from=report
	if [ -z "$frame" ]; then
		from=pprof
		d=$work/pprof/$(sed -n 's/^name: //p' "testdata/server/$server.yaml").request.server
		frame=$(go tool pprof -top -normalize -diff_base "$d/base.pb.gz" "$d/head.pb.gz" 2>/dev/null |
			awk 'f && $1 !~ /^-/ { print $NF; exit } /flat%/ { f = 1 }')
	fi
	ok=0
	if printf '%s\n' "$frame" | grep -qE "$right"; then ok=1; fi
	printf '%s\t%s\t%d\t%d\t%s\t%s\t%d\t%s\t%s\n' "$(date -u +%FT%TZ)" "$server" "$i" "$code" \
		"${frame:--}" "${shares:--}" "$ok" "$from" "$condition" | tee -a "$out"
	rm -rf "$work/pprof"
	i=$((i + 1))
done
