#!/bin/sh
# Time to a verdict of same-job gates in virtual time (issue 42's goal:
# median 90 s quiet): for each TOKEN on stdin, an A/A gate of syscall-read
# against "KERNEL TOKEN" and a gate of syscall-write against "KERNEL
# audit=1 TOKEN" (the audit hooks on every syscall), each at its own
# thresholds. Appends one tab-separated line per gate to OUT: time, kind,
# scenario, head kernel, wall seconds, exit code, rounds, and each gated
# test as metric:percentile:verdict. BENCHMARKS.md ("Seeds compared as two
# samples") records what it measured.
#
#   printf '%s\n' tailgate.r1=1 tailgate.r2=1 | scripts/bench-vt-ttv.sh OUT [KERNEL]
set -eu
out=${1:?usage: bench-vt-ttv.sh OUT [KERNEL] <tokens}
kernel=${2:-debian:6.1-cloud}
case $out in /*) ;; *) out=$PWD/$out ;; esac
tg=${TAILGATE:-tailgate}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
while IFS= read -r tok; do
	[ -n "$tok" ] || continue
	for kind in aa audit; do
		if [ "$kind" = aa ]; then sc=syscall-read head="$kernel $tok"; else sc=syscall-write head="$kernel audit=1 $tok"; fi
		s=$(date +%s.%N)
		code=0
		"$tg" gate "$sc" --kernel "$kernel" --kernel "$head" --clock virtual \
			--format json="$work/rep.json" --format text >"$work/log" 2>&1 || code=$?
		e=$(date +%s.%N)
		rounds=$(grep -oE '^run: +[0-9]+ rounds' "$work/log" | grep -oE '[0-9]+' || echo -)
		v=$(jq -r '[.scenarios[].verdicts[] | select(.gated) | "\(.metric):\(.percentile):\(.verdict)"] | join(" ")' "$work/rep.json")
		printf '%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$kind" "$sc" "$head" \
			"$(echo "$e - $s" | bc)" "$code" "$rounds" "$v" | tee -a "$out"
	done
done
