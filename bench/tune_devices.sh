#!/bin/sh
# tune_devices.sh: issue 21's run -- the same tlx-tune jobs (the GEMM at
# three shapes, exhaustive and LFBO) on one device and on two, then
# bench/tune_devices.py's comparison (wall times and speed-ups, winners,
# configurations lost or benchmarked twice, the devices each worker ran
# on).  From a build directory:
#
#   ../bench/tune_devices.sh OUTDIR            # cuda, GPUs 0 and 1
#
# Environment: BACKEND (cuda; sim or synthetic to try it without GPUs,
# with TLXRT_SIM_DEVICES=2), DEVICES (the several: 0,1), SIZES (the
# shapes, M = N = K: "2048 4096 8192"), SPACE (the --space flags),
# SEARCHES ("exhaustive lfbo"), MAXEVALS (LFBO's, 64), EXTRA (more flags).
set -eu
out=${1:?usage: tune_devices.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
tune=${TLX_TUNE:-tools/tlx-tune}
backend=${BACKEND:-cuda}
devices=${DEVICES:-0,1}
sizes=${SIZES:-2048 4096 8192}
searches=${SEARCHES:-exhaustive lfbo}
space=${SPACE:---space BM=64,128,256 --space BN=64,128,256 --space BK=32,64,128 \
--space GROUP=1,8 --space STAGES=2,3,4,5 --space WARPS=4,8}
mkdir -p "$out"
first=${devices%%,*}
for n in $sizes; do
	for s in $searches; do
		lim=
		[ "$s" = exhaustive ] || lim="--max-evals ${MAXEVALS:-64} --initial 24"
		for d in "$first" "$devices"; do
			tag=$n-$s-$(echo "$d" | tr , _)
			# shellcheck disable=SC2086
			"$tune" "$here/../examples/matmul.tlx" -k matmul --backend "$backend" \
				--arg sak=1 --arg sbn=1 --arg scn=1 \
				--no-cache --search "$s" $space --size "$n" \
				--elems $((n * n)) $lim --devices "$d" ${EXTRA:-} \
				--json "$out/$tag.json" > "$out/$tag.out" 2> "$out/$tag.err" ||
				echo "tune_devices.sh: $tag failed (exit $?): see $out/$tag.err" >&2
		done
	done
done
python3 "$here/tune_devices.py" "$out"
