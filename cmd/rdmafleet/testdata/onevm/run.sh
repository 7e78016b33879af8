#!/bin/sh
# A fleet run in ONE soft-RoCE VM with the real rdmapeer and benchmark:
# three "nodes" a, b, c on 127.0.0.1, one pair at a time on rxe0, with
# fake-srun standing in for Slurm. Checks what the host tests cannot: that
# the real programs' output is stored, renamed and reported. From the
# repository root, after building bin/rdmafleet, bin/rdmapeer,
# bin/rdmabench.test and bin/rxevm:
#
#   D=cmd/rdmafleet/testdata/onevm
#   bin/rxevm -out /tmp/onevm -env B=$PWD/bin -env D=$PWD/$D -include bin/rdmafleet \
#       -include bin/rdmapeer -include bin/rdmabench.test -include $D $D/run.sh
#
# The job directory is /tmp/onevm/job on the host.
set -e
printf '127.0.0.1 a b c\n' > /tmp/hosts
export SLURM_JOB_ID=5 SLURM_JOB_NODELIST='a,b,c' RDMABENCH_SIZES=2,64
"$B/rdmafleet" run -dir "$RXEVM_OUT/job" -srun "$D/fake-srun" -agent "$B/rdmafleet" \
	-bench "$B/rdmabench.test" -peer "$B/rdmapeer" -hosts /tmp/hosts -benchtime 2000x -timeout 3m "$@"
