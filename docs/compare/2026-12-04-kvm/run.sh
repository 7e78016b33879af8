#!/bin/bash
# On the lent machine (16 cores, /dev/kvm, no QEMU, no network), from the
# module root with out-kvm/bundle.tar.xz (bundle.sh) beside it: `make
# compare COMPAREFLAGS="-tools all"` as rdmacompare runs it, but under KVM
# with the vCPUs pinned to host CPUs 4-7, then the one-sided arms of
# docs/compare/2026-12-03-cloop (perftest, ours, our loop in a C process).
# Results go to $OUT (compare.txt, cloop.log, raw.tar.xz, host.txt).
# CMP_S and ARMS_S bound each part (seconds); KVM=0 runs under TCG (to
# check the script where there is no /dev/kvm).
set -u
OUT=${OUT:?}
R=$(pwd)
mkdir -p /work
[ "$R" = /work/main ] || { [ -e /work/main ] || ln -s "$R" /work/main; }
cd /work/main   # arms.sh reads its binaries from /work/main/bin
K=$(mktemp -d)
tar -C $K -xJf out-kvm/bundle.tar.xz || exit 1
mkdir -p bin && cp -a $K/bin/. bin/
export PATH=$K/shim:$K/bb:$PATH RDMABENCH_VM_CACHE=$K/cache
A="-accel kvm"; [ "${KVM:-1}" = 0 ] && A="-accel tcg"
V="$A -qemu $K/qemu/qemu -pin ${PIN:-4,5,6,7} -timeout 9m"
{ date -u; id; uname -r; nproc; cat /proc/loadavg; grep -m1 'model name' /proc/cpuinfo
  ls -la /dev/kvm; ldd bin/rdmabench.test | grep -i 'not found'; } > $OUT/host.txt 2>&1
(while sleep 15; do echo "$(date -u +%T) $(cat /proc/loadavg)"; done) >> $OUT/host.txt &
LP=$!
timeout ${CMP_S:-300} bin/rxevm $V -out $OUT/raw/compare -include bin/rdmabench.test -include bin/rdmapeer \
	bin/rdmacompare -bench $PWD/bin/rdmabench.test -tools all -rounds ${ROUNDS:-40} -time-limit ${CMP_LIMIT:-4m} \
	> $OUT/compare.txt 2>&1
echo "compare rc $? at $(date -u +%T)" >> $OUT/host.txt
if [ -x bin/cloop ]; then
	timeout ${ARMS_S:-180} bin/rxevm $V -env ROUNDS=${ARMS_ROUNDS:-30} -out $OUT/raw/cloop -include bin \
		docs/compare/2026-12-03-cloop/arms.sh > $OUT/cloop.log 2>&1
	echo "arms rc $? at $(date -u +%T)" >> $OUT/host.txt
fi
kill $LP
tar -C $OUT -cJf $OUT/raw.tar.xz raw && rm -rf $OUT/raw
ls -la $OUT; tail -40 $OUT/compare.txt
