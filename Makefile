# tailgate: the two commands a fresh machine needs are `make run` and
# `make test` (both as root). They install what they need first.

GO      ?= go
BIN     := bin/tailgate
GOFLAGS_BUILD := -trimpath
export CGO_ENABLED := 0

.PHONY: all build run test unit deps generate check-generate bench bench-summary bench-gate bench-program vet fuzz release

all: build

# The binary is static (CGO_ENABLED=0): the same file is the guest's /init.
# The checkout's commit is linked in (tailgate version), so that it is
# known even where GOFLAGS says -buildvcs=false.
BUILD_COMMIT := $(shell c=$$(git rev-parse HEAD 2>/dev/null) && { git diff --quiet HEAD 2>/dev/null && echo $$c || echo $$c-dirty; })
build:
	$(GO) build $(GOFLAGS_BUILD) $(if $(BUILD_COMMIT),-ldflags "-X github.com/tailgate-ci/tailgate/internal/version.Commit=$(BUILD_COMMIT)") -o $(BIN) ./cmd/tailgate

# Run every built-in scenario on the running kernel and write result.json.
run: build
	./$(BIN) run -o result.json

# Install the system packages the tests use (QEMU, cpio, Chromium for the
# HTML report and history page browser tests, xmllint, shellcheck), if missing.
deps:
	./scripts/install-deps.sh

vet:
	$(GO) vet ./...

# Every test, privileged and VM ones included: run as root. Packages run one
# at a time (-p 1): tests that measure latency must not compete for the CPUs.
test: deps build vet
	TAILGATE_CI_STRICT=1 $(GO) test -p 1 -count=1 -timeout 45m ./...

# Every fuzz target (func FuzzX in a _test.go file), each for FUZZTIME on
# top of its checked-in corpus in testdata/fuzz/FuzzX; go test fuzzes one
# target at a time. A failing input is written to that corpus directory.
# A target that fails without writing one ran into Go's own race at the
# end of -fuzztime (go.dev/issue/75804, "context deadline exceeded",
# fixed in Go 1.27) and is fuzzed once more; a second failure fails.
FUZZTIME ?= 10s
fuzz:
	@set -e; for f in $$(grep -rl --include='*_test.go' '^func Fuzz' . | sort); do \
		d=$$(dirname $$f); \
		for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
			echo "fuzz $$d $$t for $(FUZZTIME)"; \
			n=$$(ls $$d/testdata/fuzz/$$t 2>/dev/null | wc -l); \
			if ! $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$d/; then \
				if [ "$$(ls $$d/testdata/fuzz/$$t 2>/dev/null | wc -l)" != "$$n" ]; then exit 1; fi; \
				echo "fuzz $$d $$t failed without a failing input (go.dev/issue/75804): once more"; \
				$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$d/; \
			fi; \
		done; \
	done

# Tests that need no root, no BPF and no VM, as any user: a test of these
# packages that needs root skips, saying so (internal/testenv).
unit:
	$(GO) test -count=1 ./internal/hist/ ./internal/result/ ./report/ ./report/stats/... ./report/render/ ./scenarios/

# Regenerate the bpf2go output (needs clang): the tracers', and the
# histogram test's (bpf/tracing/bucket.bpf.c); CI fails on any diff.
BPF2GO_PACKAGES := ./bpf/...
generate:
	$(GO) generate $(BPF2GO_PACKAGES)

check-generate: generate
	git diff --exit-code -- bpf/

bench:
	$(GO) test ./bpf/syscalls/ -run '^$$' -bench TracerCost -benchtime 20x
	$(GO) test ./report/ ./report/stats/ -run '^$$' -bench . -benchtime 20x

# The quick figures of BENCHMARKS.md's summary table, measured again here
# (about five minutes; as root): one TSV line each on standard output.
bench-summary: build
	scripts/bench-summary.sh

# Real gate runs on this machine, many times over (long: an hour or more):
# A/A false alarms of same-job and stored-baseline gates, and how often a
# real slowdown is caught. Settings: TAILGATE_BENCH_* (see
# cmd/tailgate/gate_bench_test.go); results in BENCHMARKS.md.
bench-gate: build
	$(GO) test ./cmd/tailgate/ -run '^$$' -bench GateRuns -benchtime 1x -timeout 0 -v

# Two builds of testdata/program/work.c gated in one job, RUNS times
# (BASE and HEAD are their ITER; equal for an A/A): one line each in OUT.
BENCH_PROGRAM_OUT ?= program-gate-runs.tsv
bench-program:
	scripts/bench-program-gate.sh $(BENCH_PROGRAM_OUT) $(or $(BASE),200) $(or $(HEAD),240) $(or $(RUNS),8)

# A release: static binaries for each of RELEASE_PLATFORMS in dist/, named
# tailgate-OS-ARCH (the names the action downloads), and dist/SHA256SUMS.
# VERSION and COMMIT are linked in (tailgate --version); VERSION defaults to
# the tag on HEAD. The release workflow runs this for a pushed vX.Y.Z tag.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
RELEASE_PLATFORMS ?= linux/amd64 linux/arm64
VERSION_PKG := github.com/tailgate-ci/tailgate/internal/version
release:
	rm -rf dist
	mkdir -p dist
	@set -e; for p in $(RELEASE_PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; \
		echo "build dist/tailgate-$$os-$$arch ($(VERSION), $(COMMIT))"; \
		GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -buildvcs=false \
			-ldflags "-X $(VERSION_PKG).Version=$(VERSION) -X $(VERSION_PKG).Commit=$(COMMIT)" \
			-o dist/tailgate-$$os-$$arch ./cmd/tailgate; \
	done
	cd dist && sha256sum tailgate-* > SHA256SUMS
	cat dist/SHA256SUMS
