#!/bin/sh
# tune.sh OUTDIR: issue 17's run on one GPU -- tlx-tune's exhaustive,
# LFBO and random searches of examples/matmul.tlx's space at M = N = K in
# SIZES, and of softmax's and layer norm's ROWS x WARPS at a few widths,
# then bench/tune.py's comparison (LFBO's best against the exhaustive
# search's, the evaluations it took to come within 2%, wall times, the
# winners against the default configurations).  From the folder
# testsuite/gpu/build.sh fills (or a build directory with
# TLX_TUNE=tools/tlx-tune):
#
#   sh tune.sh OUTDIR
#
# Environment: BACKEND (cuda; sim or synthetic to try it without a GPU),
# SIZES ("2048 4096"), ROWS_CASES ("softmax:4096:8192 ..."), MAXEVALS
# (LFBO's and random search's evaluations: 15% of the space's valid
# configurations when empty), EXTRA (more flags for every run), TRITON (0:
# not Triton's autotuner; tune_triton.py N runs it alone).
set -u
out=${1:?usage: tune.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
ex=${EXAMPLES:-$here/examples}
[ -d "$ex" ] || ex=$here/../examples
tune=${TLX_TUNE:-$here/tlx-tune}
backend=${BACKEND:-cuda}
mkdir -p "$out"
# the run of one search: NAME, then tlx-tune's arguments
run() {
	tag=$1
	shift
	s=$(date +%s.%N)
	# shellcheck disable=SC2086
	"$tune" "$@" --backend "$backend" --no-cache ${EXTRA:-} --json "$out/$tag.json" \
		> "$out/$tag.out" 2> "$out/$tag.err" ||
		echo "tune.sh: $tag failed (exit $?): $(tail -1 "$out/$tag.err")" >&2
	echo "$tag: $(cat "$out/$tag.out") ($(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $s }") s)"
}
# matmul: row-major A, B, C of n x n (unit inner strides; the others n)
mm="--space BM=64,128,256 --space BN=64,128,256 --space BK=32,64,128 \
--space GROUP=1,8 --space STAGES=2,3,4,5 --space WARPS=4,8"
for n in ${SIZES:-2048 4096}; do
	a="$ex/matmul.tlx -k matmul $mm --size $n --elems $((n * n)) --arg sak=1 --arg sbn=1 --arg scn=1"
	# shellcheck disable=SC2086
	run mm$n-exhaustive $a --search exhaustive
	lim=${MAXEVALS:-$(python3 -c "import json; print(max(8, int(0.15 * len(json.load(open('$out/mm$n-exhaustive.json'))['evaluations']))))" 2>/dev/null || echo 60)}
	# shellcheck disable=SC2086
	run mm$n-lfbo $a --search lfbo --max-evals "$lim" --initial $((lim / 3))
	# shellcheck disable=SC2086
	run mm$n-random $a --search random --max-evals "$lim"
done
# the row kernels: rows x cols, ROWS and WARPS for a BLOCK (and for rows
# past 8192 the programs of the persistent loop)
for c in ${ROWS_CASES:-softmax:4096:8192 softmax:1024:32768 layernorm:4096:8192 layernorm:1024:32768}; do
	k=${c%%:*}
	rc=${c#*:}
	r=${rc%%:*}
	w=${rc#*:}
	b=1
	while [ $b -lt "$w" ]; do b=$((b * 2)); done
	sp="--space ROWS=1,2,4,8,16"
	[ "$b" -gt 8192 ] && sp="-D ROWS=1"
	[ "$b" -gt 8192 ] && [ "$k" = softmax ] && sp="$sp --space PROGRAMS=132,264,528"
	a="$ex/$k.tlx -k $k -D BLOCK=$b $sp --space WARPS=1,2,4,8,16,32 \
--size $w --elems $((r * w)) --arg rows=$r --arg cols=$w --arg stride=$w"
	# shellcheck disable=SC2086
	run $k$r-$w-exhaustive $a --search exhaustive
	# shellcheck disable=SC2086
	run $k$r-$w-lfbo $a --search lfbo --max-evals 8 --initial 4
done
python3 "$here/tune.py" "$out"
# Triton's autotuner over the same matmul space (TRITON_LIMIT: its first
# configurations only), where Triton is installed and TRITON is not 0
if [ "$backend" = cuda ] && [ "${TRITON:-1}" != 0 ] && python3 -c "import triton" 2>/dev/null; then
	for n in ${SIZES:-2048 4096}; do
		timeout "${TRITON_TIMEOUT:-500}" python3 "$here/tune_triton.py" "$n" ${TRITON_LIMIT:-} |
			tee "$out/triton-$n.txt"
	done
fi
