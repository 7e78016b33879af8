# rdmabench: make test runs every test, on the host and inside the
# soft-RoCE VM; make bench runs the latency benchmarks (on a local RDMA
# device when there is one, else in the VM) and summarises them.
#
# Variables: BENCH (benchmark regexp), OUT (results directory), VMFLAGS
# (extra rxevm flags), VM=1 (make bench: run in the VM even with a local
# device); for make bench FULL=1 (the full run), COUNT, BENCHTIME, SIZES:
# see the bench target.

SHELL     := /bin/bash
GO        ?= go
BENCH     ?= RDMA
OUT       ?= out
VMFLAGS   ?=
VM        ?=
RXEVM     := $(CURDIR)/bin/rxevm
# chromium: the index page's render test (RDMABENCH_CHROMIUM=1 in CI); gcc-12 and
# xz-utils: rxevm -siw builds siw.ko with the guest kernel's compiler.
APT_PKGS  := qemu-system-x86 busybox-static libibverbs-dev librdmacm-dev chromium gcc-12 xz-utils
export GOTOOLCHAIN ?= local
# The packages with at least one benchmark, for test-vm's smoke run.
BENCH_PKGS = $(sort $(patsubst %/,./%,$(dir $(shell grep -rl --include='*_test.go' --exclude-dir=.git --exclude-dir=out --exclude-dir=bin --exclude-dir=testdata '^func Benchmark' . | sed 's|^\./||'))))

.PHONY: all deps build vet test test-host test-vm test-own bench compare fuzz clean

all: build

# Install what the host lacks from Debian's packages (needs root or sudo).
deps:
	@missing=""; \
	for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends$$missing; \
	fi

build: deps
	$(GO) build ./...
	$(GO) build -o bin/rxevm ./cmd/rxevm
	$(GO) build -o bin/rdmainfo ./cmd/rdmainfo

# Off Linux and without cgo the module builds too (the Linux- and
# libibverbs-only parts fail at run time with a clear "not supported").
vet: deps
	$(GO) vet ./...
	CGO_ENABLED=0 $(GO) vet ./...
	CGO_ENABLED=0 $(GO) build ./...
	GOOS=darwin $(GO) vet ./...

# Host tests: pure logic everywhere; RDMA tests skip here unless a device
# is present or RDMABENCH_REQUIRE=1 promises one.
test-host: deps
	$(GO) test -count=1 ./...
	CGO_ENABLED=0 $(GO) test -count=1 ./latency ./internal/spec ./internal/oob ./internal/loops ./internal/rdmacm ./rdmalat ./env ./testenv ./internal/hostinfo ./internal/nicstats ./internal/cpuprobe ./internal/tune ./internal/pmqos ./artifacts ./internal/latplot ./internal/fleet ./internal/fleet/heatmap ./internal/summary ./internal/progress ./internal/report

# Every package's tests again inside the VM, on rxe0/rxe1, where nothing may
# skip for want of a device (RDMABENCH_REQUIRE=1 there), then a smoke run of
# every benchmark.
test-vm: build
	set -o pipefail; $(GO) test -p 1 -count=1 -timeout=30m -v -exec '$(RXEVM) $(VMFLAGS)' ./... 2>&1 | tee $(OUT)/test-vm.log
	@# In the VM a device is promised: a skipped test there is a failure,
	@# except the runner tests that need the host's own tools (TestVM and
	@# the fleet bed's, which boot VMs themselves: make test-fleet), and
	@# those of host programs: the index page's render in Chromium, make
	@# bench's plan (make), the summary against benchstat (go tool), building benchstat (go), the user's path and the CI action's script (go, git, bash; make test-own), and
	@# those that read the source tree or need git (env's docs, the
	@# manual's resolution table and import rules, rdmaab's builds, the fleet
	@# report's -max on jobreport's recorded job), and
	@# those that need the host's C compiler (the counter's plugin, its cache key, its held parts and preload library, the
	@# symbolizer's test objects), the iWARP ones (rxevm -siw, below)
	@# the isolcpus one and the NUMA one (their own boots, below).
	@if grep -E -- '--- SKIP' $(OUT)/test-vm.log | grep -vE 'TestLddHost|TestVM |TestTwoKernels |TestFleetOnSlurm |TestBuildFromGit|TestIndexRendersInChromium|TestMakeBench|TestAgreesWithBenchstat|TestBenchstatPinned|TestBenchstatOffline|TestOwnProject|TestActionlint|TestAction|TestVariablesDoc|TestVariablesComplete|TestSideAmbiguousPathAndRevision|TestSweepStale|TestNoInternalTypes|TestExportUsers|TestResolutionTable|TestArchitectureRules|TestBuildCaches|TestBuildPreload|TestBuildHashCoversHeaders|TestHeldParts|TestSymbolizer|TestSymbolizerStripped|TestAttribute|TestIWARPOnSIW|TestIWARPReadReturnsPeerBytes|TestIWARPRefusals|TestIsolatedCPUsInVM|TestNUMAPlacement|TestRailsNUMA|TestReportCommandMax'; then \
		echo "FAIL: tests skipped inside the VM (see above)"; exit 1; fi
	@# NIC-local placement, in a guest of two NUMA nodes with rxe2 on node 1
	@# (above, in the one-node guest, it skips).
	@# rdmapeer's rails, each answering on its own device's node, likewise.
	set -o pipefail; $(GO) test -p 1 -count=1 -v -run='^(TestNUMAPlacement|TestRailsNUMA)$$' -exec '$(RXEVM) -numa2 $(VMFLAGS)' ./rdmalat ./cmd/rdmapeer 2>&1 | tee $(OUT)/test-vm-numa.log
	@if grep -E -- '--- SKIP' $(OUT)/test-vm-numa.log; then echo "FAIL: a NUMA test skipped in the -numa2 VM"; exit 1; fi
	@grep -q -- '--- PASS: TestRailsNUMA' $(OUT)/test-vm-numa.log || { echo "FAIL: TestRailsNUMA did not run in the -numa2 VM"; exit 1; }
	@# The work metrics' test again, with the instruction counter loaded
	@# (without it, above, it checks that the metrics are absent), and
	@# the method make compare measures perftest by, on perftest.
	set -o pipefail; $(GO) test -p 1 -count=1 -v -run='^(TestWorkFindsExtraWork|TestWorkSameWhetherWaitsSpin|TestWorkMethodOnPerftest)$$' -exec '$(RXEVM) -insns $(VMFLAGS)' ./rdmalat ./internal/perftestcmp 2>&1 | tee $(OUT)/test-vm-insns.log
	@if grep -E -- '--- SKIP' $(OUT)/test-vm-insns.log; then echo "FAIL: the work test skipped inside the VM"; exit 1; fi
	@# iWARP on soft-iWARP: rxevm -siw adds siw0 and siw1 (siw.ko built
	@# once from Debian's kernel source and cached, about 3 minutes the
	@# first time); only the iWARP tests, which skip without it above.
	set -o pipefail; $(GO) test -p 1 -count=1 -v -run='^TestIWARP' -exec '$(RXEVM) -siw $(VMFLAGS)' ./rdmalat 2>&1 | tee $(OUT)/test-vm-siw.log
	@if grep -E -- '--- SKIP' $(OUT)/test-vm-siw.log; then echo "FAIL: the iWARP tests skipped inside the VM"; exit 1; fi
	@# A guest booted with isolcpus=1 accepts that CPU for RDMABENCH_CPUS
	@# although no inherited mask has it (env's TestIsolatedCPUsInVM).
	set -o pipefail; $(GO) test -p 1 -count=1 -v -run='^TestIsolatedCPUsInVM$$' -exec '$(RXEVM) -append isolcpus=1 $(VMFLAGS)' ./env 2>&1 | tee $(OUT)/test-vm-isolcpus.log
	@if grep -E -- '--- SKIP' $(OUT)/test-vm-isolcpus.log; then echo "FAIL: the isolcpus test skipped inside the VM"; exit 1; fi
	@# The smoke boots the VM only for the packages that have benchmarks
	@# (a boot per package: over ./... it cost CI about 9 minutes).
	set -o pipefail; $(GO) test -p 1 -count=1 -run='^$$' -bench=. -benchtime=100x -exec '$(RXEVM) $(VMFLAGS)' $(BENCH_PKGS) 2>&1 | tee $(OUT)/bench-smoke.txt

test: vet test-host fuzz $(OUT)
	$(MAKE) test-vm
	$(MAKE) test-own

# The user's path: an outside module (cmd/rdmaab/testdata/ownproject, a
# replace to this tree) gated in the VM by rdmaab and rxevm built from this
# tree, a change and the same commit (cmd/rdmaab's TestOwnProject; it boots
# the VM twice).
test-own: build
	RDMABENCH_VM_TEST=1 $(GO) test -count=1 -timeout=30m -run='^TestOwnProject$$' -v ./cmd/rdmaab

# Every parser of outside input, each fuzzed briefly from its seed corpus
# (go test -fuzz takes one target at a time): the out-of-band protocol and
# its handshake, the duet's turn lines, the instruction counter's report,
# results as benchfile, the summary and a fleet's pair files read them,
# plans, perftest's output, rdmatune's state, rdmaab's verdict file. FUZZTIME=1000000x for a long run.
# A count, not a duration: go1.26's fuzz coordinator can fail a target with
# "context deadline exceeded" at the end of a -fuzztime duration, with no
# failing input (golang/go#75804, fixed in go1.27); a count has no deadline.
# 10000 inputs take 1-10 s per target on the 2-CPU development host.
FUZZTIME ?= 10000x
FUZZ = ./internal/oob:FuzzDecode ./internal/oob:FuzzAcceptHandshake ./internal/turn:FuzzParse \
	./internal/work:FuzzParseReport ./internal/benchfile:FuzzRead ./internal/summary:FuzzRead \
	./internal/fleet:FuzzReadPair ./internal/fleet:FuzzSplitPairName ./internal/fleet:FuzzParsePlan ./internal/fleet:FuzzReadPlan \
	./internal/perftest:FuzzParseLatency ./internal/tune:FuzzParseState \
	./internal/abrun:FuzzReadVerdict ./artifacts:FuzzReadHlog
fuzz:
	set -e; for t in $(FUZZ); do \
		$(GO) test -run='^$$' -fuzz="^$${t#*:}$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=200x -parallel 1 "$${t%%:*}"; \
	done

$(OUT):
	mkdir -p $(OUT)

# The main job: benchmark results in $(OUT)/bench.txt and their summary.
# By default a quick run, sized for about 3 minutes in the VM on a quiet
# 2-CPU host (docs/results.md): sizes 2, 64 and
# 4096 bytes (atomics 8), 6 runs of 2000 round trips each, the fewest for
# which benchstat gives a 95% interval. FULL=1 is the full
# run: every default size (2, 64, 4096, 65536), -benchtime=1s, -count=10
# (about 15 minutes). COUNT=, BENCHTIME= and SIZES= (RDMABENCH_SIZES)
# override either; an RDMABENCH_SIZES in the environment wins over both.
# rdmainfo -place decides where (and says why): on a usable local RDMA
# device, else in the soft-RoCE VM; it fails when an RDMABENCH_ variable
# names a device, port or peer that cannot be used here. VM=1: the VM.
# -cpu=1: every round trip runs at GOMAXPROCS 1 (rdmalat), and then the
# names say so (no -N suffix).
# rdmaprogress shows on stderr which benchmark runs, n of m and the time
# left; bench.txt gets go test's output unchanged. -rdmabench.noplots
# leaves the per-run plots to rdmasummary on the host: in the emulated VM
# drawing them took longer than the measurement. Then rdmasummary prints
# the one-screen summary (also $(OUT)/summary.txt) and leaves
# $(OUT)/overview.png and $(OUT)/index.html, which links every run's
# plots, raw samples and HDR log (under $(OUT)/artifacts/_artifacts/; in
# the VM written to rxevm's 9p share, /rxevm/out in the guest); all of
# benchstat goes to $(OUT)/benchstat.txt.
FULL ?=
ifneq ($(filter-out 0,$(FULL)),)
COUNT     ?= 10
BENCHTIME ?= 1s
SIZES     ?=
else
COUNT     ?= 6
BENCHTIME ?= 2000x
SIZES     ?= 2,64,4096
endif
ifdef RDMABENCH_SIZES
SIZES := $(RDMABENCH_SIZES)
endif
comma := ,
# How many sizes each benchmark runs, for the progress count (4: the
# default sizes).
NSIZES := $(if $(SIZES),$(words $(subst $(comma), ,$(SIZES))),4)

bench: build $(OUT)
	$(GO) build -o bin/rdmaprogress ./cmd/rdmaprogress
	$(GO) build -o bin/rdmasummary ./cmd/rdmasummary
	@place=$$(bin/rdmainfo -place $(if $(filter-out 0,$(VM)),-vm)) || exit 1; \
	rm -rf $(OUT)/artifacts; mkdir -p $(OUT)/artifacts; \
	exec="-artifacts -outputdir $(abspath $(OUT))/artifacts"; \
	[ "$$place" = vm ] && exec="-artifacts -outputdir /rxevm/out -exec '$(RXEVM) -out $(abspath $(OUT))/artifacts $(VMFLAGS)'"; \
	list=$$($(GO) test -list '$(firstword $(subst /, ,$(BENCH)))' . | grep '^Benchmark'); \
	echo "running" $$list "at sizes $(or $(SIZES),2$(comma)64$(comma)4096$(comma)65536) (atomics 8), $(COUNT) runs of $(BENCHTIME) each ($(if $(filter-out 0,$(FULL)),FULL=1,quick; make bench FULL=1 for the full run)); output in $(OUT)/bench.txt"; \
	set -o pipefail; \
	eval $(if $(SIZES),RDMABENCH_SIZES=$(SIZES)) $(GO) test -run="'^\$$'" -bench="'$(BENCH)'" -benchtime=$(BENCHTIME) -count=$(COUNT) -cpu=1 -timeout=60m $$exec . -args -rdmabench.noplots \
		| bin/rdmaprogress -count $(COUNT) -sizes $(NSIZES) -benchmarks "$$list" > $(OUT)/bench.txt
	$(GO) tool benchstat $(OUT)/bench.txt > $(OUT)/benchstat.txt
	@echo
	@bin/rdmasummary -out $(OUT) -artifacts $(OUT)/artifacts $(OUT)/bench.txt
	@echo "all of benchstat (every unit and config line): $(OUT)/benchstat.txt, or go tool benchstat $(OUT)/bench.txt"

# perftest's ib_write_lat and BenchmarkRDMAWrite side by side, interleaved,
# in one VM boot: the table in $(OUT)/compare.txt, every raw output under
# $(OUT)/compare/. COMPAREFLAGS: extra rdmacompare flags (-rounds, -sizes,
# -iters, -strict; -peer $(CURDIR)/bin/rdmapeer runs our responder as a
# process of its own, as perftest's server is). COMPAREVMFLAGS: rxevm's
# flags for it; -insns adds the work runs (docs/comparing.md), empty
# leaves them out.
COMPAREFLAGS ?=
COMPAREVMFLAGS ?= -insns
compare: build $(OUT)
	$(GO) test -c -o bin/rdmabench.test .
	$(GO) build -o bin/rdmacompare ./cmd/rdmacompare
	$(GO) build -o bin/rdmapeer ./cmd/rdmapeer
	CGO_CFLAGS="$$($(GO) env CGO_CFLAGS) -DRB_NO_MARKERS" $(GO) test -c -o bin/rdmabench-nomarkers.test .
	set -o pipefail; $(RXEVM) $(VMFLAGS) $(COMPAREVMFLAGS) -out $(OUT)/compare -include bin/rdmabench.test -include bin/rdmabench-nomarkers.test -include bin/rdmapeer \
		bin/rdmacompare -bench $(CURDIR)/bin/rdmabench.test -work-bench $(CURDIR)/bin/rdmabench-nomarkers.test $(COMPAREFLAGS) | tee $(OUT)/compare.txt

clean:
	rm -rf bin $(OUT)

# Fleet mode on a real Slurm over several soft-RoCE VMs, each with its own
# kernel and NIC (rxevm -nodes, internal/fleettest): the two-node benchmark
# across two kernels, then a 4-node matrix with one node delayed by netem
# and an agent killed mid-round, then one pair under RDMABENCH_LOAD=64K.
# Log in $(OUT)/test-fleet.log, job
# directories (matrix, outliers, heat map) under $(OUT)/fleet/
.PHONY: test-fleet
test-fleet: build $(OUT)
	set -o pipefail; RDMABENCH_FLEET_TEST=1 RDMABENCH_FLEET_OUT=$(abspath $(OUT))/fleet $(GO) test -p 1 -count=1 -v -timeout 60m ./internal/fleettest 2>&1 | tee $(OUT)/test-fleet.log

# --- Comparing two commits (cmd/rdmaab) ---
# make compare-commits OLD=main NEW=HEAD builds the test binary of each side
# (a git revision from a temporary worktree, a directory, or a test binary),
# runs them as a duet in one VM boot (both processes alive at once, taking
# turns; interleaved runs where a binary predates turn-taking; on the local
# RDMA device when there is one) and prints benchstat old.txt new.txt, the
# paired verdict and the gate's (docs/comparing.md). Results in
# $(OUT)/compare-commits/. AB_FLAGS: more rdmaab flags, e.g. "-gate",
# "-ci 2% -count 30", "-pkg ./rdmalat". make validate-ab runs the
# validation (A/A, A/B, drift across boots; STEPS="duet-aa duet-ab" NOISE=1 for the duet) into
# $(OUT)/validate-ab/figures.txt (about 35 minutes on a quiet 2-CPU host).
# The defaults, 80 duet pairs of 2000 round trips, stopping when decided:
# in the soft-RoCE VM each process carries a latency offset of its own
# (sd ~3%), so the number of processes decides, not the round trips (about
# 1.5 s a pair on a quiet 2-CPU host).
OLD          ?= main
NEW          ?= HEAD
AB_COUNT     ?= 80
AB_BENCHTIME ?= 2000x
AB_FLAGS     ?=
# WORK=1: compare the work instead (rdmaab -work: rxevm -insns, AB_WORK_COUNT
# interleaved runs a side of AB_WORK_BENCHTIME, judged by the work rule
# beside time; where the work went in $(OUT)/compare-commits/work-diff.txt).
WORK              ?= 0
AB_WORK_COUNT     ?= 3
AB_WORK_BENCHTIME ?= 500x
.PHONY: compare-commits validate-ab validate-work validate-kernel
compare-commits: build $(OUT)
	$(GO) build -o bin/rdmaab ./cmd/rdmaab
	set -o pipefail; bin/rdmaab -bench '$(BENCH)' $(if $(filter-out 0,$(WORK)),-work -benchtime $(AB_WORK_BENCHTIME) -count $(AB_WORK_COUNT),-benchtime $(AB_BENCHTIME) -count $(AB_COUNT)) -vmflags '$(VMFLAGS)' \
		-out $(OUT)/compare-commits $(AB_FLAGS) $(OLD) $(NEW) | tee $(OUT)/compare-commits.txt

validate-ab: build $(OUT)
	OUT=$(OUT) VMFLAGS='$(VMFLAGS)' bash cmd/rdmaab/validate-ab.sh

# make validate-work: the gate on work (rdmaab -work under rxevm -insns),
# TRIALS A/A and TRIALS A/B comparisons (+2 x EXTRA_INSNS instructions per
# round trip), 3 runs a side of 2 B writes each, with the seeded co-tenant
# on (NOISE=0 for the host as it comes); pass counts, the spread of
# user and kernel insns/op, and each trial's work diff into
# $(OUT)/validate-ab/figures.txt.
TRIALS ?= 10
validate-work: build $(OUT)
	OUT=$(OUT) VMFLAGS='$(VMFLAGS)' STEPS="work-aa work-ab" TRIALS=$(TRIALS) NOISE=$(or $(NOISE),1) bash cmd/rdmaab/validate-ab.sh

# make validate-kernel: the gate on kernel work across boots (rdmaab -work,
# each side in a boot of its own), TRIALS A/A comparisons (stock rdma_rxe
# both sides) and TRIALS A/B (against rdma_rxe rebuilt with RXE_EXTRA_COST
# loop turns in rxe_rcv, rxevm -rxe-extra-cost): each trial's gate status,
# wall time and the work diff's top line into $(OUT)/validate-ab/figures.txt
# (two boots of 3 runs a trial: 37-94 s at host load 4-10, 148-474 s at 9-23).
validate-kernel: build $(OUT)
	OUT=$(OUT) VMFLAGS='$(VMFLAGS)' STEPS="work-kaa work-kab" TRIALS=$(TRIALS) bash cmd/rdmaab/validate-ab.sh
