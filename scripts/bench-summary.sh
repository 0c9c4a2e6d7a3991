#!/usr/bin/env bash
# The quick figures of BENCHMARKS.md's summary, measured again on this
# machine: one TSV line each (figure, value, command, date, machine). As
# root, with bin/tailgate built (make bench-summary builds it). About five
# minutes; a cached Debian 6.1 cloud kernel makes the VM lines (else they
# say so and are skipped). Long figures (A/A campaigns, power) are not
# here: their scripts are named in BENCHMARKS.md.
#   scripts/bench-summary.sh [KERNEL]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${TAILGATE:-$here/bin/tailgate}
kernel=${1:-debian:6.1.0-57-cloud-amd64}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
day=$(date -u +%F)
machine="$(nproc) vCPUs, $(uname -r), load $(cut -d' ' -f1 /proc/loadavg)"

line() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$day" "$machine"; }

# wall CMD... prints the seconds CMD took and keeps its exit code in $code.
wall() {
	local start end
	start=$(date +%s.%N)
	code=0
	"$@" >"$out/stdout" 2>"$out/stderr" || code=$?
	end=$(date +%s.%N)
	python3 -c "print(f'{$end - $start:.1f}')"
}

printf 'figure\tvalue\tcommand\tdate\tmachine\n'

s=$(wall "$bin" run syscall-read --trials 3 -o "$out/r.json")
line "run syscall-read, 3 trials of 0.5 s" "${s} s (exit $code)" "tailgate run syscall-read --trials 3"

s=$(wall "$bin" gate syscall-read --variant a --variant b --format "json=$out/g.json")
verdict=$(python3 - "$out/g.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    v = [v for s in r["scenarios"] for v in s["verdicts"] if v.get("gated")]
    print(f'{v[0]["verdict"]} after {r.get("run", {}).get("rounds", "?")} rounds' if v else "no gated verdict")
except Exception as e:
    print("no report:", str(e)[:60])
PY
)
line "A/A gate, syscall-read on the host" "${s} s, ${verdict} (exit $code)" "tailgate gate syscall-read --variant a --variant b"

"$bin" doctor --format json >"$out/doctor.json" 2>/dev/null || true
python3 - "$out/doctor.json" "$day" "$machine" <<'PY'
import json, sys
path, day, machine = sys.argv[1:]
try:
    d = json.load(open(path))
except Exception:
    sys.exit(0)
import re
loads = []
for c in d.get("checks", []):
    m = re.search(r"loads in (\d+) ms", c.get("detail", ""))
    if m:
        loads.append((c["name"], int(m.group(1))))
if loads:
    name, ms = max(loads, key=lambda t: t[1])
    print(f"slowest tracer load\t{name}, {ms} ms\ttailgate doctor\t{day}\t{machine}")
PY

if "$bin" kernels list 2>/dev/null | grep -q "${kernel#debian:}"; then
	s=$(wall "$bin" run syscall-read --kernel "$kernel" --trials 2 -o "$out/v.json")
	same=$(python3 - "$out/v.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = r["scenarios"][0]["metrics"]["syscall.read"]["trials"]
print("the same histogram in both boots" if t[0]["histogram"] == t[1]["histogram"] else "boots differ")
PY
)
	line "two boots in virtual time, syscall-read" "${s} s, ${same} (exit $code)" "tailgate run syscall-read --kernel $kernel --trials 2"
else
	line "two boots in virtual time, syscall-read" "skipped: $kernel not cached" "tailgate kernels fetch $kernel"
fi
