#!/usr/bin/env bash
# validate-ab.sh: the validation of the A/B comparison, as one command (make
# validate-ab). It writes every figure, with the host's load next to it, to
# $OUT/validate-ab/figures.txt, and keeps every raw file beside it.
#
#   aa     A/A: the same build against itself, TRIALS comparisons of PAIRS
#          interleaved pairs in one VM boot; how many time-metric
#          comparisons benchstat flags, how many trials the gate fails.
#   ab     A/B: the same build against one with DELAY_NS of busy-waiting
#          added to each measured round trip (+DELAY_NS/2 one-way, ~3% at
#          2 B); in how many trials benchstat flags each time metric at 2 B
#          as slower.
#   boots  Drift across boots: BOOTS boots per rxevm setting (BOOT_MODES),
#          alternated so that both see the same host load; the spread of
#          p50 over boots, and A/A across boots (boot 1 vs 2, 3 vs 4).
#
#   duet-aa, duet-ab
#          The same A/A and A/B run as duets (both processes alive at once,
#          taking turns of BURST round trips), at 2 B, judged by the paired
#          verdict (rdmaab gate reads bursts.txt): in how many trials the gate
#          fails (exit 1), passes (0) or cannot decide (4). With NOISE=1 a
#          seeded co-tenant (./cmd/rdmanoise: a busy loop on host
#          CPU NOISE_CPU, on and off every 100-500 ms) runs throughout.
#
#   work-aa, work-ab
#          The gate on work (rxevm -insns, rdmaab run -work): TRIALS
#          comparisons in one boot of WORK_RUNS interleaved runs a side of
#          one benchmark (WORK_BENCH) at 2 B; A/A the same build, A/B one
#          built with -DRB_EXTRA_INSNS=EXTRA_INSNS (2 x EXTRA_INSNS more
#          instructions per round trip, ~0.5% of a 2 B write's ~28k).
#          Each trial's gate status on the work metrics, the spread of
#          user and kernel insns/op over every run, and the work diff's
#          top line. NOISE=1 runs the co-tenant as for the duet.
#
#   work-kaa, work-kab
#          The gate on kernel work across boots: TRIALS runs of rdmaab
#          -work with each side in a boot of its own (WORK_RUNS runs a
#          boot, one boot a side); kaa stock against stock (-boots), kab
#          stock against rdma_rxe rebuilt with RXE_EXTRA_COST loop turns in
#          rxe_rcv (-new-vmflags -rxe-extra-cost, 8 instructions a turn per
#          2 B round trip; 100: about +2.8%, above kernel-work-insns/op's 2%
#          threshold). Each trial's gate status, wall time and the work
#          diff's top line.
#
# Environment: OUT (out), STEPS ("aa ab boots", run in that order), TRIALS (10), PAIRS (10),
# BENCHTIME (5000x), SIZES (2,4096), DELAY_NS (800), BOOTS (5), BOOTCOUNT
# (6 repetitions a boot), BOOT_MODES ("before after"), VMFLAGS,
# BOOT_TIMEOUT (180s: boots take over a minute on a loaded host).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-out}
D=$OUT/validate-ab
F=$D/figures.txt
STEPS=${STEPS:-aa ab boots}
TRIALS=${TRIALS:-10}
PAIRS=${PAIRS:-10}
BENCHTIME=${BENCHTIME:-5000x}
SIZES=${SIZES:-2,4096}
DELAY_NS=${DELAY_NS:-800}
BOOTS=${BOOTS:-5}
BOOTCOUNT=${BOOTCOUNT:-6}
BOOT_MODES=${BOOT_MODES:-before after}
VMFLAGS=${VMFLAGS:-}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-180s}
# The duet steps: DUET_PAIRS (at most, per trial), DUET_BENCHTIME, DUET_METRICS (gated), BURST, NOISE, NOISE_SEED, NOISE_CPU,
# THRESHOLD of the gate.
DUET_PAIRS=${DUET_PAIRS:-80}
DUET_BENCHTIME=${DUET_BENCHTIME:-2000x}
DUET_METRICS=${DUET_METRICS:-p50-ns}
BURST=${BURST:-200}
NOISE=${NOISE:-0}
NOISE_SEED=${NOISE_SEED:-1}
NOISE_CPU=${NOISE_CPU:-1}
THRESHOLD=${THRESHOLD:-1%}
# The work steps: WORK_RUNS a side, WORK_BENCHTIME, WORK_BENCH, EXTRA_INSNS.
WORK_RUNS=${WORK_RUNS:-3}
WORK_BENCHTIME=${WORK_BENCHTIME:-500x}
WORK_BENCH=${WORK_BENCH:-RDMAWrite}
EXTRA_INSNS=${EXTRA_INSNS:-70}
RXE_EXTRA_COST=${RXE_EXTRA_COST:-100}
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}

# rxevm flags of each boot mode: before the drift work and after it.
mode_flags() {
	case $1 in
	before) echo "-pin none -isolate=false" ;;
	after) echo "-pin auto -isolate" ;;
	pin) echo "-pin auto -isolate=false" ;;
	isolate) echo "-pin none -isolate" ;;
	smp2) echo "-smp 2 -pin auto -isolate=false" ;;
	*) echo "unknown boot mode $1" >&2; exit 2 ;;
	esac
}

mkdir -p "$D"
: >"$F"
say() { echo "$*" | tee -a "$F"; }
load() { echo "load $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"; }
# loadlog FILE: sample the host's 1-minute load every 15 s until stopped.
loadlog() { while :; do echo "$(date +%T) $(cut -d' ' -f1 /proc/loadavg)" >>"$1"; sleep 15; done; }
loadrange() { awk '{print $2}' "$1" | sort -n | awk 'NR==1{lo=$1} {hi=$1; s+=$1; n++} END{if(n) printf "host load %.1f-%.1f (mean %.1f) on '"$(nproc)"' CPUs", lo, hi, s/n}'; }
# The time metrics judged, as benchstat names their tables.
UNITS="sec/op min-sec p50-sec p90-sec p99-sec max-sec"
# flags_by_unit OLD NEW: a "unit flagged compared" line per time metric.
flags_by_unit() {
	go tool benchstat "$1" "$2" | awk -v units="$UNITS" '
		BEGIN { n = split(units, us, " ") }
		/vs base/ { u = ""; for (k = 1; k <= n; k++) if (index($0, " " us[k] " ")) u = us[k]; next }
		u != "" && /\(p=/ { tot[u]++; if ($0 !~ /~ +\(p=/) f[u]++ }
		END { for (k = 1; k <= n; k++) if (tot[us[k]]) printf "%s %d %d\n", us[k], f[us[k]], tot[us[k]] }'
}
# flagged_2b OLD NEW UNIT: "up", "down" or "no" for UNIT at 2 B.
flagged_2b() {
	go tool benchstat "$1" "$2" | awk -v u="$3" '
		/vs base/ { t = index($0, " " u " ") > 0; next }
		t && /size=2-/ { if ($0 ~ /~ +\(p=/) r = "no"; else if ($0 ~ /\+[0-9.]+%/) r = "up"; else r = "down" }
		END { print (r == "" ? "missing" : r) }'
}

say "rdmaab validation, $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (dirty)'), $(load)"
go build -o bin/rxevm ./cmd/rxevm && go build -o bin/rdmaab ./cmd/rdmaab && go build -o bin/rdmanoise ./cmd/rdmanoise || exit 1

# Both builds from one temporary worktree of HEAD: a.test as it is, b.test
# with the delay patched into rb_write_ping's loop.
WT=$(mktemp -d)/wt
# NOISE_PID, LOAD_PID: the co-tenant and the load sampler running now,
# ended with the script however it ends (killed included), as the
# worktree is removed.
NOISE_PID="" LOAD_PID=""
trap 'kill $NOISE_PID $LOAD_PID 2>/dev/null; git worktree remove --force "$WT" >/dev/null 2>&1; git worktree prune' EXIT
trap 'exit 130' INT TERM
git worktree add --detach --quiet "$WT" HEAD || exit 1
(cd "$WT" && go test -c -o "$PWD/../a.test" .) && cp "$WT/../a.test" "$D/a.test" || exit 1
# b.test: the same source with RB_EXTRA_DELAY_NS defined, which adds the
# busy-wait to rb_write_ping's loop (internal/loops/write.c).
# Only the time steps run it.
case " $STEPS " in *" ab "* | *" aa "* | *" duet-"*)
	(cd "$WT" && CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -DRB_EXTRA_DELAY_NS=$DELAY_NS" go test -c -o "$PWD/../b.test" .) && cp "$WT/../b.test" "$D/b.test" || exit 1
	cmp -s "$D/a.test" "$D/b.test" && { say "b.test came out identical to a.test: the delay was not compiled in"; exit 1; } ;;
esac
# w.test: RB_EXTRA_INSNS adds 2 x EXTRA_INSNS instructions to each round
# trip of the measured loops (internal/loops/loops.h), for the work steps.
case " $STEPS " in *" work-ab "*)
	(cd "$WT" && CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -DRB_EXTRA_INSNS=$EXTRA_INSNS" go test -c -o "$PWD/../w.test" .) && cp "$WT/../w.test" "$D/w.test" || exit 1
	cmp -s "$D/a.test" "$D/w.test" && { say "w.test came out identical to a.test: the extra work was not compiled in"; exit 1; } ;;
esac
A=$(realpath "$D/a.test")
B=$([ -f "$D/b.test" ] && realpath "$D/b.test")
W=$([ -f "$D/w.test" ] && realpath "$D/w.test")
RDMAAB=$(realpath bin/rdmaab)

# trials NAME OLD NEW: TRIALS comparisons in one boot into $D/NAME/NAMEi.
trials() {
	local name=$1 old=$2 new=$3 dir=$D/$1
	rm -rf "$dir"
	mkdir -p "$dir"
	cat >"$dir/trials.sh" <<EOS
#!/bin/sh
i=1
while [ \$i -le $TRIALS ]; do
	$RDMAAB run -old $old -new $new -out "\$RXEVM_OUT/$name\$i" -bench '^BenchmarkRDMAWrite\$' -benchtime $BENCHTIME -count $PAIRS >/dev/null || echo "trial $name\$i failed"
	echo "trial $name\$i done"
	i=\$((i + 1))
done
EOS
	chmod +x "$dir/trials.sh"
	loadlog "$dir/load.log" &
	local lp=$!
	LOAD_PID=$lp
	local start=$SECONDS
	RDMABENCH_SIZES=$SIZES bin/rxevm $VMFLAGS -boot-timeout "$BOOT_TIMEOUT" -timeout 6h -out "$dir" \
		-include "$RDMAAB" -include "$A" -include "$B" "$dir/trials.sh" | tee "$dir/guest.log"
	kill $lp
	echo "$((SECONDS - start)) s, $(loadrange "$dir/load.log")" >"$dir/took.txt"
}

step_aa() {
	trials aa "$A" "$A"
	gfail=0 lines=""
	: >"$D/aa/flags.txt"
	for i in $(seq 1 "$TRIALS"); do
		t=$D/aa/aa$i
		[ -s "$t/old.txt" ] || continue
		flags_by_unit "$t/old.txt" "$t/new.txt" | tee -a "$D/aa/flags.txt" >"$t/flags.txt"
		bin/rdmaab gate "$t/old.txt" "$t/new.txt" >"$t/gate.txt"
		g=$?
		[ $g = 1 ] && gfail=$((gfail + 1))
		lines+="  trial $i: benchstat flagged $(awk '{f += $2; n += $3} END {printf "%d of %d", f, n}' "$t/flags.txt"); gate status $g"$'\n'
	done
	say ""
	say "A/A, one boot, $TRIALS trials x $PAIRS interleaved pairs, sizes $SIZES, $BENCHTIME ($(cat "$D/aa/took.txt")):"
	say "  benchstat flagged $(awk '{f += $2; n += $3} END {printf "%d of %d time-metric comparisons (%.1f%%; goal <= 5%%)", f, n, n ? 100 * f / n : 0}' "$D/aa/flags.txt")"
	say "  by metric: $(awk '{f[$1] += $2; n[$1] += $3; if (!($1 in o)) { o[$1] = ++k; u[k] = $1 } } END {for (i = 1; i <= k; i++) printf "%s %d/%d  ", u[i], f[u[i]], n[u[i]]}' "$D/aa/flags.txt")"
	say "  the gate (p50, p99; worse by > 5% at p < 0.05) failed $gfail of $TRIALS trials"
	printf "%s" "$lines" | tee -a "$F"
}

step_ab() {
	trials ab "$A" "$B"
	lines="" det=""
	for i in $(seq 1 "$TRIALS"); do
		t=$D/ab/ab$i
		[ -s "$t/old.txt" ] || continue
		line="  trial $i:"
		for u in $UNITS; do
			r=$(flagged_2b "$t/old.txt" "$t/new.txt" "$u")
			line+=" $u $r"
			det+="$u $r"$'\n'
		done
		bin/rdmaab gate -metrics p50-ns,min-ns -threshold 1% "$t/old.txt" "$t/new.txt" >"$t/gate.txt"
		lines+="$line; $(grep -o 'widest.*' "$t/stop.txt")"$'\n'
		lines+="    $(grep 'size=2-[0-9]* p50-ns:' "$t/gate.txt" | sed 's/^ *//')"$'\n'
		lines+="    $(grep 'size=2-[0-9]* min-ns:' "$t/gate.txt" | sed 's/^ *//')"$'\n'
	done
	say ""
	say "A/B, one boot, +$DELAY_NS ns per round trip (+$((DELAY_NS / 2)) ns one-way), $TRIALS trials x $PAIRS pairs ($(cat "$D/ab/took.txt")):"
	say "  trials in which benchstat flagged the metric at 2 B as slower (goal: 9 in 10):"
	say "   $(printf "%s" "$det" | awk '{n[$1]++; if ($2 == "up") d[$1]++; if (!($1 in o)) { o[$1] = ++k; u[k] = $1 } } END {for (i = 1; i <= k; i++) printf " %s %d/%d", u[i], d[u[i]], n[u[i]]}')"
	printf "%s" "$lines" | tee -a "$F"
}

# vm_trials NAME OLD NEW BENCH "RXEVM FLAGS" "RDMAAB RUN FLAGS": TRIALS
# comparisons of benchmark BENCH at 2 B in one boot into $D/NAME/NAMEi,
# with the co-tenant on the host when NOISE=1. guest.log has each trial's
# guest seconds and host clock (the guest's clock is set from the host's
# at boot), which trial_load matches to load.log.
vm_trials() {
	local name=$1 old=$2 new=$3 bench=$4 vmflags=$5 runflags=$6 dir=$D/$1
	rm -rf "$dir"
	mkdir -p "$dir"
	cat >"$dir/trials.sh" <<EOS
#!/bin/sh
i=1
while [ \$i -le $TRIALS ]; do
	s=\$(cut -d' ' -f1 /proc/uptime) c=\$(date +%T)
	$RDMAAB run $runflags -old $old -new $new -out "\$RXEVM_OUT/$name\$i" -bench '^Benchmark$bench\$' >/dev/null || echo "trial $name\$i failed"
	echo "trial $name\$i done, guest seconds \$s-\$(cut -d' ' -f1 /proc/uptime), clock \$c-\$(date +%T)"
	i=\$((i + 1))
done
EOS
	chmod +x "$dir/trials.sh"
	local np=""
	if [ "$NOISE" = 1 ]; then
		bin/rdmanoise -seed "$NOISE_SEED" -cpu "$NOISE_CPU" >"$dir/noise.txt" &
		np=$!
		NOISE_PID=$np
	fi
	loadlog "$dir/load.log" &
	local lp=$!
	LOAD_PID=$lp
	local start=$SECONDS
	RDMABENCH_SIZES=2 bin/rxevm $vmflags $VMFLAGS -boot-timeout "$BOOT_TIMEOUT" -timeout 6h -out "$dir" \
		-include "$RDMAAB" -include "$old" -include "$new" "$dir/trials.sh" | tee "$dir/guest.log"
	kill $lp
	[ -n "$np" ] && kill "$np" && wait "$np"
	echo "$((SECONDS - start)) s, $(loadrange "$dir/load.log")" >"$dir/took.txt"
}

# trial_load NAME I: trial I's guest time and the host's 1-minute load
# over it (load.log's samples between its clock times).
trial_load() {
	local l
	l=$(grep "trial $1$2 done" "$D/$1/guest.log") || { echo "no time"; return; }
	echo "$l" | awk '{split($(NF-2), g, "-"); sub(",", "", $(NF-2)); split($NF, c, "-"); printf "%.0f %s %s\n", g[2] - g[1], c[1], c[2]}' |
		{ read -r secs from to; awk -v s="$secs" -v from="$from" -v to="$to" '$1 >= from && $1 <= to {l = l sep $2; sep = " "} END {printf "%s s (load %s)", s, l == "" ? "not sampled" : l}' "$D/$1/load.log"; }
}

# judge_trials NAME DETAIL GATE FLAGS...: each trial's gate status
# (rdmaab gate FLAGS), counted into JUDGED, and its lines into
# JUDGE_LINES: status, guest time and load, then DETAIL TRIALDIR's output
# (its first line continues the trial's).
judge_trials() {
	local name=$1 detail=$2 fails=0 passes=0 undecided=0 broken=0 lines="" i t g
	shift 2
	for i in $(seq 1 "$TRIALS"); do
		t=$D/$name/$name$i
		[ -s "$t/old.txt" ] || { lines+="  trial $i: no results"$'\n'; continue; }
		bin/rdmaab gate "$@" "$t/old.txt" "$t/new.txt" >"$t/gate.txt"
		g=$?
		case $g in 1) fails=$((fails + 1)) ;; 0) passes=$((passes + 1)) ;; 4) undecided=$((undecided + 1)) ;; *) broken=$((broken + 1)) ;; esac
		lines+="  trial $i: gate status $g; guest time $(trial_load "$name" "$i"); $("$detail" "$t")"$'\n'
	done
	JUDGED="failed $fails, passed $passes, undecided $undecided, could not judge $broken of $TRIALS"
	JUDGE_LINES=$lines
}

# duet_detail TRIALDIR: why the duet stopped, and its p50 and min lines.
duet_detail() {
	cat "$1/stop.txt"
	grep -E 'p50-ns: |min-ns: ' "$1/gate.txt" | sed 's/^/    /'
}

duet_step() {
	local name=$1 new=$2 what=$3
	vm_trials "$name" "$A" "$new" RDMAWrite "" "-benchtime $DUET_BENCHTIME -count $DUET_PAIRS -burst $BURST -metrics $DUET_METRICS -threshold $THRESHOLD"
	say ""
	say "Duet $what, one boot, $TRIALS trials of at most $DUET_PAIRS duet pairs, 2 B, $DUET_BENCHTIME, turns of $BURST, noise $NOISE (seed $NOISE_SEED) ($(cat "$D/$name/took.txt")):"
	judge_trials "$name" duet_detail -count "$DUET_PAIRS" -metrics "$DUET_METRICS" -threshold "$THRESHOLD"
	say "  the gate (paired verdict, $DUET_METRICS, threshold $THRESHOLD): $JUDGED"
	printf "%s" "$JUDGE_LINES" | tee -a "$F"
}
step_duet_aa() { duet_step duet-aa "$A" "A/A"; }
step_duet_ab() { duet_step duet-ab "$B" "A/B, +$DELAY_NS ns per round trip"; }

# work_spread NAME SIDE UNIT: the spread of UNIT over every run of SIDE of
# every trial: "min-max (max/min - 1 %)".
work_spread() {
	cat "$D/$1"/"$1"*/"$2.txt" 2>/dev/null | grep -o "[0-9.]* $3" | awk '{print $1}' | sort -n |
		awk '{a[NR] = $1} END {if (NR) printf "%s-%s (%.3f%%, %d runs)", a[1], a[NR], 100 * (a[NR] / a[1] - 1), NR; else printf "none"}'
}

# work_detail TRIALDIR: the work diff's top line and the work rule's lines.
work_detail() {
	echo "top of the diff: $(grep -A1 '^  Benchmark' "$1/gate.txt" | sed -n 2p | sed 's/^ *//;s/  */ /g')"
	grep -E 'insns/op: ' "$1/gate.txt" | sed 's/^/    /'
}

work_step() {
	local name=$1 new=$2 what=$3
	vm_trials "$name" "$A" "$new" "$WORK_BENCH" -insns "-work -benchtime $WORK_BENCHTIME -count $WORK_RUNS"
	say ""
	say "Work $what, one boot of rxevm -insns, $TRIALS trials of $WORK_RUNS interleaved runs a side, $WORK_BENCH 2 B, $WORK_BENCHTIME, noise $NOISE (seed $NOISE_SEED) ($(cat "$D/$name/took.txt")):"
	judge_trials "$name" work_detail -metrics user-insns/op,kernel-insns/op,kernel-work-insns/op
	say "  the gate on work (user-insns/op, kernel-insns/op, kernel-work-insns/op; abtest.DefaultThresholds): $JUDGED"
	for side in old new; do
		say "  $side side, every run: user-insns/op $(work_spread "$name" $side user-insns/op); kernel-insns/op $(work_spread "$name" $side kernel-insns/op); kernel-work-insns/op $(work_spread "$name" $side kernel-work-insns/op)"
	done
	printf "%s" "$JUDGE_LINES" | tee -a "$F"
}
step_work_aa() { work_step work-aa "$A" "A/A"; }
step_work_ab() { work_step work-ab "$W" "A/B, +$((2 * EXTRA_INSNS)) instructions per round trip (-DRB_EXTRA_INSNS=$EXTRA_INSNS)"; }

# kernel_trials NAME RDMAAB-FLAGS...: TRIALS kernel comparisons in boots
# into $D/NAME/NAMEi, each trial's gate status, wall time and diff top line.
kernel_trials() {
	local name=$1 dir=$D/$1 fails=0 passes=0 undecided=0 broken=0
	shift
	rm -rf "$dir"
	mkdir -p "$dir"
	for i in $(seq 1 "$TRIALS"); do
		local start=$SECONDS l0
		l0=$(cut -d' ' -f1 /proc/loadavg)
		bin/rdmaab -work -gate -metrics user-insns/op,kernel-work-insns/op \
			-vmflags "$VMFLAGS -boot-timeout $BOOT_TIMEOUT -env RDMABENCH_SIZES=2" "$@" \
			-bench "^Benchmark$WORK_BENCH\$" -benchtime "$WORK_BENCHTIME" -boot-runs "$WORK_RUNS" -count 1 \
			-out "$dir/$name$i" "$A" "$A" -- -rdmabench.noplots >"$dir/$name$i.txt" 2>"$dir/$name$i.log"
		g=$?
		case $g in 1) fails=$((fails + 1)) ;; 0) passes=$((passes + 1)) ;; 4) undecided=$((undecided + 1)) ;; *) broken=$((broken + 1)) ;; esac
		echo "  trial $i: gate status $g; $((SECONDS - start)) s wall, load $l0-$(cut -d' ' -f1 /proc/loadavg); top of the diff: $(grep -A1 '^  Benchmark' "$dir/$name$i.txt" | sed -n 2p | sed 's/^ *//;s/  */ /g')" >>"$dir/trials.txt"
		grep -E 'insns/op: ' "$dir/$name$i.txt" | sed 's/^/    /' >>"$dir/trials.txt"
	done
	say "  the gate on work (user-insns/op, kernel-work-insns/op): failed $fails, passed $passes, undecided $undecided, could not judge $broken of $TRIALS"
	tee -a "$F" <"$dir/trials.txt"
}

step_work_kaa() {
	say ""
	say "Kernel work A/A, stock rdma_rxe in two boots (-boots), $TRIALS trials of one boot a side, $WORK_RUNS runs a boot, $WORK_BENCH 2 B, $WORK_BENCHTIME:"
	kernel_trials work-kaa -boots
}

step_work_kab() {
	say ""
	say "Kernel work A/B, stock rdma_rxe against -rxe-extra-cost $RXE_EXTRA_COST (about $((8 * RXE_EXTRA_COST)) kernel instructions per 2 B round trip, in rxe_rcv), $TRIALS trials of one boot a side, $WORK_RUNS runs a boot, $WORK_BENCH 2 B, $WORK_BENCHTIME:"
	kernel_trials work-kab -new-vmflags "-rxe-extra-cost $RXE_EXTRA_COST"
}

step_boots() {
	mkdir -p "$D/boots"
	for b in $(seq 1 "$BOOTS"); do
		for m in $BOOT_MODES; do
			o=$D/boots/$m-$b.txt
			l0=$(cut -d' ' -f1 /proc/loadavg)
			RDMABENCH_SIZES=2 bin/rxevm $VMFLAGS $(mode_flags "$m") -boot-timeout "$BOOT_TIMEOUT" -log "$D/boots/rxevm.log" \
				"$A" -test.run='^$' -test.bench='^BenchmarkRDMAWrite$' -test.benchtime="$BENCHTIME" -test.count="$BOOTCOUNT" >"$o" 2>&1
			echo "$m-$b: load $l0-$(cut -d' ' -f1 /proc/loadavg)" >>"$D/boots/load.txt"
		done
	done
	say ""
	say "Drift across boots: $BOOTS boots per setting, $BOOTCOUNT runs of 2 B x $BENCHTIME each, settings alternated:"
	for m in $BOOT_MODES; do
		loads=$(grep "^$m-" "$D/boots/load.txt" | awk '{print $3}' | tr '\n' ' ')
		say "  $m ($(mode_flags "$m")), host load per boot (start-end): $loads"
		# p50 and min: min is the steadier figure within a boot, but a
		# boot that sits at the slow level is slow at min too.
		for u in p50-ns min-ns; do
			meds=""
			for b in $(seq 1 "$BOOTS"); do
				v=$(grep -o "[0-9.]* $u" "$D/boots/$m-$b.txt" | awk '{print $1}' | sort -n | awk '{a[NR]=$1} END{if(NR) print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')
				meds+="${v:-?} "
			done
			sp=$(echo "$meds" | tr ' ' '\n' | grep -v '^?*$' | sort -n | awk '{a[NR]=$1} END{if(NR>1) printf "%.1f%% (max/min - 1), median %.0f ns", 100*(a[NR]/a[1]-1), (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')
			say "    ${u%-ns} per boot (median of $BOOTCOUNT runs, ns): $meds-> spread $sp"
		done
		for p in "1 2" "3 4"; do
			set -- $p
			[ -s "$D/boots/$m-$1.txt" ] && [ -s "$D/boots/$m-$2.txt" ] || continue
			say "    A/A across boots $1 vs $2: benchstat flagged $(flags_by_unit "$D/boots/$m-$1.txt" "$D/boots/$m-$2.txt" | awk '{f += $2; n += $3; if ($2) l = l " " $1} END {printf "%d of %d time metrics%s", f, n, l}')"
		done
	done
}

# The steps in the order given.
for s in $STEPS; do
	case $s in
	aa | ab | boots) "step_$s" ;;
	duet-aa | duet-ab | work-aa | work-ab | work-kaa | work-kab) "step_${s/-/_}" ;;
	*) say "unknown step $s (want aa, ab, boots, duet-aa, duet-ab, work-aa, work-ab, work-kaa, work-kab)"; exit 2 ;;
	esac
done
say ""
say "done $(date -u +%FT%TZ), $(load)"
