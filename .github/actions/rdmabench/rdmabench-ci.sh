#!/usr/bin/env bash
# rdmabench-ci.sh: the steps of the rdmabench GitHub Action (action.yml),
# one subcommand each, so that a test can run them on any host with the
# parts that need a runner stubbed (internal/ghaction).
#
#   setup  install what rxevm and a cgo build need (Debian/Ubuntu
#          packages) and let the job's user open /dev/kvm where it exists
#   tools  build rdmaab and rxevm from this action's own tree and put them
#          on the job's PATH
#   run    gate (rdmaab -gate BASE HEAD) or bench (go test -exec rxevm),
#          write the verdict to $GITHUB_STEP_SUMMARY and the status to
#          $GITHUB_OUTPUT, and exit with rdmaab's status (0 pass,
#          1 regression, 3 failure, 4 undecided)
#
# Inputs come as INPUT_* (action.yml). ACTION_KVM,
# ACTION_UDEV_RULES and ACTION_OS_RELEASE name /dev/kvm, the
# udev rules directory and /etc/os-release (tests point them elsewhere).
set -u -o pipefail

say() { echo "rdmabench: $*" >&2; }

PKGS="qemu-system-x86 busybox-static libibverbs-dev librdmacm-dev git"
KVM=${ACTION_KVM:-/dev/kvm}
UDEV_RULES=${ACTION_UDEV_RULES:-/etc/udev/rules.d}

sudo_() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

setup() {
	local missing="" id=""
	id=$(. "${ACTION_OS_RELEASE:-/etc/os-release}" 2>/dev/null && echo "${ID:-}")
	if [ "$id" != debian ]; then
		say "this runner is ${id:-not Debian}: rxevm builds its guest from Debian bookworm's packages, so run the job in a debian:bookworm container (docs/own-project.md)"
	fi
	for p in $PKGS; do
		dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		say "installing:$missing"
		sudo_ apt-get update -qq || return 3
		# shellcheck disable=SC2086 # one word per package
		DEBIAN_FRONTEND=noninteractive sudo_ apt-get install -y -qq --no-install-recommends $missing || return 3
	fi
	if [ -e "$KVM" ]; then
		# GitHub's hosted runners have KVM but give the runner's user no
		# access to it; a udev rule opens it to all.
		echo 'KERNEL=="kvm", GROUP="kvm", MODE="0666", OPTIONS+="static_node=kvm"' |
			sudo_ tee "$UDEV_RULES/99-rdmabench-kvm.rules" >/dev/null || return 3
		sudo_ udevadm control --reload-rules && sudo_ udevadm trigger --name-match=kvm || say "udevadm failed: the VM may run without KVM"
		say "KVM: $KVM opened to the job's user"
	else
		say "no $KVM on this runner: the VM runs under emulation (TCG), slower"
	fi
}

tools() {
	local tree bin
	tree=$(cd "$(dirname "$0")/../../.." && pwd) || return 3
	bin=${RUNNER_TEMP:-/tmp}/rdmabench-bin
	mkdir -p "$bin"
	(cd "$tree" && go build -o "$bin/" ./cmd/rdmaab ./cmd/rxevm) || return 3
	echo "$bin" >>"$GITHUB_PATH"
	say "rdmaab and rxevm from $tree in $bin"
}

# base is the gate's old revision: the input, else the pull request's base
# branch, fetched when the checkout lacks it.
base() {
	local b=${INPUT_BASE:-}
	if [ -z "$b" ]; then
		[ -n "${GITHUB_BASE_REF:-}" ] || {
			say "no base revision: set the input base (e.g. origin/main) or run on a pull request"
			return 1
		}
		b=origin/$GITHUB_BASE_REF
	fi
	if ! git rev-parse --verify -q "$b^{commit}" >/dev/null; then
		say "$b is not in the checkout: fetching it (actions/checkout with fetch-depth: 0 avoids this)"
		git fetch -q --no-tags origin "${b#origin/}:refs/remotes/origin/${b#origin/}" >&2 || return 1
	fi
	echo "$b"
}

outcome_of() {
	case $1 in
	0) echo pass ;; 1) echo regressed ;; 4) echo undecided ;; *) echo failed ;;
	esac
}

# summary TITLE STATUS REPORT: the job summary, the report in a block.
summary() {
	local title=$1 status=$2 report=$3 outcome
	outcome=$(outcome_of "$status")
	{
		echo "### rdmabench $title: $outcome (exit status $status)"
		echo
		grep -E '^(paired|gate): |^judged ' "$report" | sed 's/^/- /'
		echo
		echo '```'
		cat "$report"
		echo '```'
	} >>"${GITHUB_STEP_SUMMARY:-/dev/null}"
}

run() {
	local mode=${INPUT_MODE:-gate} out status b
	out=${RUNNER_TEMP:-/tmp}/rdmabench-results
	mkdir -p "$out"
	# shellcheck disable=SC2206 # flags are space-separated words
	local flags=(${INPUT_FLAGS:-})
	case $mode in
	gate)
		if ! b=$(base); then
			echo "no base revision to compare with (see the log)" >"$out/report.txt"
			status=3
			summary "gate" "$status" "$out/report.txt"
		else
			rdmaab -gate -pkg "${INPUT_PACKAGE:-.}" -bench "${INPUT_BENCH:-.}" -benchtime "${INPUT_BENCHTIME:-2000x}" \
				-count "${INPUT_COUNT:-10}" -metrics "${INPUT_METRICS:-p50-ns}" -threshold "${INPUT_THRESHOLD:-5%}" \
				-out "$out" "${flags[@]}" "$b" "${INPUT_HEAD:-HEAD}" 2>&1 | tee "$out/report.txt"
			status=${PIPESTATUS[0]}
			summary "gate ($b vs ${INPUT_HEAD:-HEAD})" "$status" "$out/report.txt"
		fi
		;;
	bench)
		go test -run '^$' -bench "${INPUT_BENCH:-.}" -benchtime "${INPUT_BENCHTIME:-2000x}" -count "${INPUT_COUNT:-10}" \
			-exec rxevm "${flags[@]}" "${INPUT_PACKAGE:-.}" 2>&1 | tee "$out/bench.txt"
		status=${PIPESTATUS[0]}
		[ "$status" = 0 ] || status=3
		rdmaab benchstat "$out/bench.txt" >"$out/report.txt" 2>&1 || status=3
		summary "benchmarks" "$status" "$out/report.txt"
		;;
	*)
		say "mode $mode: want gate or bench"
		status=2
		;;
	esac
	{
		echo "status=$status"
		echo "outcome=$(outcome_of "$status")"
		echo "results=$out"
	} >>"$GITHUB_OUTPUT"
	return "$status"
}

case ${1:-} in
setup | tools | run) "$1" ;;
*)
	say "usage: rdmabench-ci.sh setup|tools|run"
	exit 2
	;;
esac
