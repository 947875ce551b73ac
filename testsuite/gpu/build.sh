#!/bin/sh
# Builds, on this machine, what the GPU tests run on a machine with a GPU
# but no LLVM: the examples compiled to cubins by tlxc, and the host test
# programs linked statically with libtlxrt's sources.  Everything lands in
# DIR (default .device-carry/), which the device tool carries.
#   testsuite/gpu/build.sh BUILDDIR [DIR]
set -e
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:?usage: build.sh BUILDDIR [DIR]}
out=${2:-$top/.device-carry}
tlxc="$build/tools/tlxc"
mkdir -p "$out/cubin"
cc="gcc -std=c11 -D_GNU_SOURCE -O2 -I$top -I$build -I$top/include"
rt="$top/runtime/*.c $top/sim/*.c $top/ir/*.c $top/support/*.c -ldl -lm -lpthread"
# shellcheck disable=SC2086
$cc -o "$out/examples_test" "$top/testsuite/e2e/examples_test.c" $rt
# shellcheck disable=SC2086
$cc -o "$out/bench_kernels" "$top/bench/bench_kernels.c" $rt
# shellcheck disable=SC2086
$cc -o "$out/rtrun" "$top/testsuite/runtime/rtrun.c" $rt
# shellcheck disable=SC2086
$cc -o "$out/launch_cost" "$top/bench/launch_cost.c" $rt
# generated programs on the GPU against the simulator (gen_gpu.sh runs it
# with the tlxc below)
fz="$top/testsuite/fuzz"
# shellcheck disable=SC2086
$cc -o "$out/gen_gpu" "$fz/gen_gpu.c" "$fz/gen.c" "$fz/stmt.c" "$fz/async.c" "$fz/oracle.c" "$fz/reduce.c" \
	"$fz/compare.c" $rt
t="--target=sm_90a $TLXC_FLAGS"  # TLXC_FLAGS: extra options for every cubin
"$tlxc" $t "$top/examples/vadd.tlx" -o "$out/cubin/vadd.cubin"
"$tlxc" $t -D BLOCK=128 "$top/examples/vadd.tlx" -o "$out/cubin/vadd128.cubin"
"$tlxc" $t "$top/examples/copy.tlx" -o "$out/cubin/copy.cubin"
# the row kernels' rule (examples/softmax.tlx and layernorm.tlx): a build
# per power-of-two BLOCK from 1 to 32768, ROWS and WARPS by default, which
# bench/sweep.py picks by width; layernorm also at 65536 (right, but it
# spills: the rule's build there is examples/layernorm_loop.tlx, below).
# softmax1k/4k/32k and
# layernorm1k/4k/32k (run.sh, sanitize.sh, bench/run.py, ab.py) are the
# same builds under the names those use.
b=1
while [ $b -le 32768 ]; do
	for k in softmax layernorm; do
		"$tlxc" $t -D BLOCK=$b "$top/examples/$k.tlx" -o "$out/cubin/$k-B$b.cubin"
	done
	b=$((b * 2))
done
"$tlxc" $t -D BLOCK=65536 "$top/examples/layernorm.tlx" -o "$out/cubin/layernorm-B65536.cubin"
"$tlxc" $t "$top/examples/layernorm_loop.tlx" -o "$out/cubin/layernorm_loop.cubin"
for k in softmax layernorm; do
	cp "$out/cubin/$k-B1024.cubin" "$out/cubin/${k}1k.cubin"
	cp "$out/cubin/$k-B4096.cubin" "$out/cubin/${k}4k.cubin"
	cp "$out/cubin/$k-B32768.cubin" "$out/cubin/${k}32k.cubin"
done
# the sweep bench/run.py times (best of, like an autotuner): warps per
# program for each row width of the benchmark, file names carry the values
for k in softmax layernorm; do
	for w in 4 8 16 32; do
		"$tlxc" $t -D BLOCK=4096 -D WARPS=$w "$top/examples/$k.tlx" \
			-o "$out/cubin/$k-B4096-W$w.cubin"
	done
	for w in 16 32; do
		"$tlxc" $t -D BLOCK=32768 -D WARPS=$w "$top/examples/$k.tlx" \
			-o "$out/cubin/$k-B32768-W$w.cubin"
	done
done
# softmax with --fast-math too (exp as ex2.approx, division by the
# reciprocal: what Triton's tl.exp and torch's --use_fast_math builds do)
for w in 4 8; do
	"$tlxc" $t --fast-math -D BLOCK=4096 -D WARPS=$w "$top/examples/softmax.tlx" \
		-o "$out/cubin/softmax-B4096-W$w-fast.cubin"
done
for w in 16 32; do
	"$tlxc" $t --fast-math -D BLOCK=32768 -D WARPS=$w "$top/examples/softmax.tlx" \
		-o "$out/cubin/softmax-B32768-W$w-fast.cubin"
done
"$tlxc" $t -D BM=64 -D BN=64 "$top/examples/matmul.tlx" -o "$out/cubin/matmul64.cubin"
"$tlxc" $t "$top/examples/matmul.tlx" -o "$out/cubin/matmul.cubin"
# softmax in chunks (examples/softmax_loop.tlx), in the softmax sweep;
# BLOCK=8192 is the rule's build for rows wider than 32768
for b in 4096 8192; do
	"$tlxc" $t -D BLOCK=$b "$top/examples/softmax_loop.tlx" \
		-o "$out/cubin/softmax_loop-B$b.cubin"
done
# the GEMM's sweep (bench/run.py): k-step, pipeline depth and warps
for c in "64 3 4" "32 4 4" "32 3 8" "64 3 8"; do
	set -- $c
	"$tlxc" $t -D BK=$1 -D STAGES=$2 -D WARPS=$3 "$top/examples/matmul.tlx" \
		-o "$out/cubin/matmul-BK$1-S$2-W$3.cubin"
done
# bench/gemm.py's configurations of the same source (BM BN BK STAGES
# WARPS), and beside them its mma.sync build: the same compiler's sm_80
# code (ldmatrix, mma.sync, cp.async) assembled for sm_90a
for c in "128 128 64 3 4" "128 128 64 4 4" "128 256 64 3 8" "128 256 64 4 8" \
	 "256 128 64 3 8" "128 128 32 4 4" "64 256 64 4 4" "128 256 32 5 8"; do
	set -- $c
	d="-D BM=$1 -D BN=$2 -D BK=$3 -D STAGES=$4 -D WARPS=$5"
	"$tlxc" $t $d "$top/examples/matmul.tlx" -o "$out/cubin/gemm-$1x$2x$3-s$4-w$5.cubin"
	# (configurations whose stages exceed sm_80's shared memory have none)
	"$tlxc" $d --target=sm_80 --emit=ptx "$top/examples/matmul.tlx" -o "$out/mma.ptx" \
		2>/dev/null || continue
	ptxas -arch=sm_90a "$out/mma.ptx" -o "$out/cubin/mma-gemm-$1x$2x$3-s$4-w$5.cubin"
done
rm -f "$out/mma.ptx"
"$tlxc" $t "$top/examples/matmul.tlx" -o "$out/cubin/gemm-default.cubin"
# two of them with TLX_CG_REALIGN=all (the realigned copy for every row
# that is not 16-byte aligned): run.sh checks them (TLXRT_STAGE=0 there
# keeps the generic entry on its copies)
for c in "128 256 64 4 8" "128 128 64 3 4"; do
	set -- $c
	TLX_CG_REALIGN=all "$tlxc" $t -D BM=$1 -D BN=$2 -D BK=$3 -D STAGES=$4 -D WARPS=$5 \
		"$top/examples/matmul.tlx" -o "$out/cubin/ra-gemm-$1x$2x$3-s$4-w$5.cubin"
done
# the row kernels at the odd widths' builds with an A/B knob of code
# generation set (docs/internals.md), under the same names: in cubin-warp/
# TLX_CG_WARP_STORE=1 (realigned stores across the warp), in cubin-edge/
# TLX_CG_EDGE=auto (no branch at a row's end where warps hold several
# rows), in cubin-pred/ TLX_CG_EDGE=pred (nor anywhere), in cubin-ngl/
# TLX_GENERIC_LAYOUTS=0 (row kernels' generic entries without layouts of
# their own: realigned vectors);
# run.sh checks them, `python3 ab.py --only odd OUT cubin DIR...` times them against the
# default
variant() {
	mkdir -p "$out/$1"
	for b in 128 2048 8192 32768; do
		for k in softmax layernorm; do
			env "$2" "$tlxc" $t -D BLOCK=$b "$top/examples/$k.tlx" \
				-o "$out/$1/$k-B$b.cubin"
		done
	done
	env "$2" "$tlxc" $t -D BLOCK=8192 "$top/examples/softmax_loop.tlx" \
		-o "$out/$1/softmax_loop-B8192.cubin"
	env "$2" "$tlxc" $t -D BM=128 -D BN=256 -D BK=64 -D STAGES=4 -D WARPS=8 \
		"$top/examples/matmul.tlx" -o "$out/$1/gemm-128x256x64-s4-w8.cubin"
}
variant cubin-warp TLX_CG_WARP_STORE=1
variant cubin-edge TLX_CG_EDGE=auto
variant cubin-pred TLX_CG_EDGE=pred
variant cubin-ngl TLX_GENERIC_LAYOUTS=0
# examples/gemm_tma.tlx (TMA + wgmma, no tasks) in bench/gemm.py's
# configurations (BM BN BK STAGES WARPS)
for c in "128 256 64 3 8" "128 256 64 4 8" "128 128 64 4 4" "128 128 64 5 4" \
	 "256 128 64 3 8" "128 128 32 4 4"; do
	set -- $c
	"$tlxc" $t -D BM=$1 -D BN=$2 -D BK=$3 -D STAGES=$4 -D WARPS=$5 \
		"$top/examples/gemm_tma.tlx" -o "$out/cubin/tma-$1x$2x$3-s$4-w$5.cubin"
done
# examples/gemm_ws.tlx (warp-specialized: a TMA producer task, two wgmma
# consumer warpgroups, a pipe) in bench/gemm.py's configurations
# (BM BN BK STAGES)
for c in "128 256 64 3" "128 256 64 4" "128 256 32 6" "128 128 64 4" "128 128 64 5"; do
	set -- $c
	"$tlxc" $t -D BM=$1 -D BN=$2 -D BK=$3 -D STAGES=$4 \
		"$top/examples/gemm_ws.tlx" -o "$out/cubin/ws-$1x$2x$3-s$4.cubin"
done
# examples/gemm_cluster.tlx (gemm_ws in clusters of two along M, B
# multicast) in gemm_ws's configurations, for bench/gemm.py's side by
# side
for c in "128 256 64 3" "128 256 64 4" "128 256 32 6" "128 128 64 4" "128 128 64 5"; do
	set -- $c
	"$tlxc" $t -D BM=$1 -D BN=$2 -D BK=$3 -D STAGES=$4 \
		"$top/examples/gemm_cluster.tlx" -o "$out/cubin/cluster-$1x$2x$3-s$4.cubin"
done
# examples/gemm_static.tlx (gemm_ws over a persistent grid) in gemm_ws's
# configurations, and the 128x256x64 ones with other GROUPs (-gN)
for c in "128 256 64 3" "128 256 64 4" "128 256 32 6" "128 128 64 4"; do
	set -- $c
	"$tlxc" $t -D BM=$1 -D BN=$2 -D BK=$3 -D STAGES=$4 \
		"$top/examples/gemm_static.tlx" -o "$out/cubin/static-$1x$2x$3-s$4.cubin"
done
for c in "3 4" "3 16" "4 4" "4 16" "4 32"; do
	set -- $c
	"$tlxc" $t -D STAGES=$1 -D GROUP=$2 \
		"$top/examples/gemm_static.tlx" -o "$out/cubin/static-128x256x64-s$1-g$2.cubin"
done
# examples/gemm_persistent.tlx (gemm_ws over a clc schedule: on sm_90a a
# dynamic one, tiles claimed from a counter) in the same configurations
for c in "128 256 64 3" "128 256 64 4" "128 256 32 6" "128 128 64 4"; do
	set -- $c
	"$tlxc" $t -D BM=$1 -D BN=$2 -D BK=$3 -D STAGES=$4 \
		"$top/examples/gemm_persistent.tlx" -o "$out/cubin/dyn-$1x$2x$3-s$4.cubin"
done
# examples/gemm_pingpong.tlx (two consumers, each a whole tile, taking
# alternate tiles in turn) in bench/gemm.py's configurations (BM BN BK
# STAGES; a pipe per consumer, STAGES slots each)
for c in "128 128 64 2" "128 128 32 4" "64 256 64 2"; do
	set -- $c
	"$tlxc" $t -D BM=$1 -D BN=$2 -D BK=$3 -D STAGES=$4 \
		"$top/examples/gemm_pingpong.tlx" -o "$out/cubin/pp-$1x$2x$3-s$4.cubin"
done
# examples/gemm_grouped.tlx (a mixture-of-experts grouped GEMM) with its
# dynamic schedule and with the schedule made static, for
# bench/gemm_grouped.py's comparison (BM BN BK STAGES)
sed 's/schedule: dynamic/schedule: static/' "$top/examples/gemm_grouped.tlx" \
	> "$out/gemm_grouped_static.tlx"
for c in "128 256 64 3" "128 128 64 4"; do
	set -- $c
	"$tlxc" $t -D BM=$1 -D BN=$2 -D BK=$3 -D STAGES=$4 \
		"$top/examples/gemm_grouped.tlx" -o "$out/cubin/grouped-dyn-$1x$2x$3-s$4.cubin"
	"$tlxc" $t -D BM=$1 -D BN=$2 -D BK=$3 -D STAGES=$4 \
		"$out/gemm_grouped_static.tlx" -o "$out/cubin/grouped-static-$1x$2x$3-s$4.cubin"
done
# examples/gemm_epilogue.tlx (gemm_static + bias + GELU) in gemm_static's
# configurations, for bench/gemm_epilogue.py's side-by-side comparison
for c in "128 256 64 3" "128 256 64 4" "128 128 64 4"; do
	set -- $c
	"$tlxc" $t -D BM=$1 -D BN=$2 -D BK=$3 -D STAGES=$4 \
		"$top/examples/gemm_epilogue.tlx" -o "$out/cubin/ep-$1x$2x$3-s$4.cubin"
done
# examples/gemm_fp8.tlx (e4m3, warp-specialized) in bench/gemm_fp8.py's
# configurations (BM BN BK STAGES)
for c in "128 256 128 3" "128 128 128 4" "128 256 64 6"; do
	set -- $c
	"$tlxc" $t -D BM=$1 -D BN=$2 -D BK=$3 -D STAGES=$4 \
		"$top/examples/gemm_fp8.tlx" -o "$out/cubin/fp8-$1x$2x$3-s$4.cubin"
done
# examples/attention_fwd.tlx (a TMA producer, two consumer warpgroups, P
# in registers for the second wgmma) at head dims 64, 128 and 256, causal
# or not; with OVERLAP = 1 (two key blocks in flight; attention_fwd's
# default at 64 and 128, o0 builds it without), and that with PINGPONG =
# 1 (the consumers take turns), at 64 and 128; and attention_fwd_dyn with
# QSTAGES = 2, without and with OVERLAP
for c in "64 0" "64 1" "128 0" "128 1" "256 0" "256 1"; do
	set -- $c
	"$tlxc" $t -D D=$1 -D CAUSAL=$2 "$top/examples/attention_fwd.tlx" \
		-o "$out/cubin/attn-d$1-c$2.cubin"
	if [ "$1" = 256 ]; then
		# D 256 with 32 keys a block, which leaves room for three stages
		# (and OVERLAP's second block); s1: 64 keys and one stage
		# (NAME BN STAGES OVERLAP)
		causal=$2
		for v in "b32 32 2 0" "b32s3 32 3 0" "b32o1 32 2 1" "s1 64 1 0"; do
			set -- $v
			"$tlxc" $t -D D=256 -D CAUSAL=$causal -D BN=$2 -D STAGES=$3 -D OVERLAP=$4 \
				"$top/examples/attention_fwd.tlx" \
				-o "$out/cubin/attn-d256-c$causal-$1.cubin"
		done
		continue
	fi
	"$tlxc" $t -D D=$1 -D CAUSAL=$2 -D OVERLAP=1 "$top/examples/attention_fwd.tlx" \
		-o "$out/cubin/attn-d$1-c$2-o1.cubin"
	"$tlxc" $t -D D=$1 -D CAUSAL=$2 -D OVERLAP=0 "$top/examples/attention_fwd.tlx" \
		-o "$out/cubin/attn-d$1-c$2-o0.cubin"
	"$tlxc" $t -D D=$1 -D CAUSAL=$2 -D OVERLAP=1 -D PINGPONG=1 \
		"$top/examples/attention_fwd.tlx" -o "$out/cubin/attn-d$1-c$2-o1p.cubin"
	# q1: attention_fwd_dyn with one slot for Q (QSTAGES = 1; the
	# default at D <= 128 is two)
	"$tlxc" $t -D D=$1 -D CAUSAL=$2 -D QSTAGES=1 "$top/examples/attention_fwd.tlx" \
		-o "$out/cubin/attn-d$1-c$2-q1.cubin"
	"$tlxc" $t -D D=$1 -D CAUSAL=$2 -D OVERLAP=1 -D QSTAGES=1 \
		"$top/examples/attention_fwd.tlx" -o "$out/cubin/attn-d$1-c$2-o1q1.cubin"
done
# a deliberately wrong pipe protocol, built with --debug-barriers (run.sh
# expects its report and a trap, not a hang)
"$tlxc" $t --debug-barriers "$top/testsuite/gpu/deadlock/no_release.tlx" \
	-o "$out/cubin/no_release.cubin"
# clusters: rank, cluster_sync, TMA multicast, a remote arrive
# (testsuite/runtime/Inputs/cluster.tir; run.sh compares with the simulator)
"$tlxc" $t "$top/testsuite/runtime/Inputs/cluster.tir" -o "$out/cubin/cluster.cubin"
# kernels written from the docs that found codegen bugs (testsuite/gpu/kernels)
for k in "$top"/testsuite/gpu/kernels/*.tlx; do
	"$tlxc" $t "$k" -o "$out/cubin/$(basename "$k" .tlx).cubin"
done
cp "$top/testsuite/gpu/run.sh" "$top/testsuite/gpu/sanitize.sh" "$top/testsuite/gpu/gen_gpu.sh" \
   "$top"/testsuite/gpu/run*-seeds.txt \
   "$top/testsuite/gpu/check_transpose.py" "$top/testsuite/gpu/check_ulp.py" "$top/bench/run.py" "$top/bench/ab.py" "$top/bench/gemm.py" "$top/bench/gemm_fp8.py" "$top/bench/gemm_epilogue.py" "$top/bench/gemm_grouped.py" "$top/bench/tri_matmul.py" "$top/bench/attention.py" \
   "$top/bench/gemm_k.py" "$top/bench/compile_time.py" "$top/bench/compile_attention.py" "$top/bench/sass_notes.sh" \
   "$top/bench/sweep.py" "$out/"
rm -rf "$out/gen" "$out/open"
cp -r "$top/testsuite/gpu/gen" "$out/gen"
# GPU findings not fixed yet, reduced (gen_gpu.sh files open/*.tlx)
cp -r "$top/testsuite/gpu/open" "$out/open"
mkdir -p "$out/examples"
cp "$top"/examples/*.tlx "$out/examples/"
# the Python package over libtlxrt built as a shared library (it compiles
# through ./tlxc there), its tests and bench/python_launch.py:
# testsuite/python/h200.sh runs them
mkdir -p "$out/lib" "$out/python"
# shellcheck disable=SC2086
$cc -shared -fPIC -fvisibility=hidden -o "$out/lib/libtlxrt.so" $rt
rm -rf "$out/python/tlx" "$out/python/tests"
cp -r "$top/python/tlx" "$top/python/tests" "$out/python/"
find "$out/python" -name __pycache__ -exec rm -rf {} +
cp "$top/bench/python_launch.py" "$top/bench/tlxbench.py" "$top/testsuite/python/h200.sh" "$out/"
# a tlxc linked statically with LLVM, when one was built (--enable-static-llvm)
static=${TLXC_STATIC:-$top/build-static/tools/tlxc}
[ -x "$static" ] && strip -o "$out/tlxc" "$static"
ls -la "$out" "$out/cubin"
