#!/bin/sh
# Runs on the GPU machine (from the carried folder): a small-size pass of
# the GPU tests under compute-sanitizer's memcheck, racecheck and
# synccheck.  Prints one line per run and "N passed, N failed"; a run
# passes when the test passes and the tool reports no error.
# SANITIZE_JOBS=N runs N at a time.
cd "$(dirname "$0")"
export TLXRT_DEVICE=cuda
cs=${COMPUTE_SANITIZER:-compute-sanitizer}
pass=0
fail=0
list=
[ "${SANITIZE_JOBS:-1}" -gt 1 ] && [ "${1:-}" != --one ] && list=$(mktemp)
s() {
	if [ -n "$list" ]; then
		echo "${TLXRT_GENERIC:-0} $*" >> "$list"
		return
	fi
	tool=$1
	shift
	log=$("$cs" --tool "$tool" --error-exitcode 3 "$@" 2>&1)
	rc=$?
	# ERROR SUMMARY: 0 errors / RACECHECK SUMMARY: 0 hazards displayed
	# (0 errors, 0 warnings) are clean; any other count is not
	if [ $rc -eq 0 ] && printf '%s\n' "$log" | grep -q 'SUMMARY: 0 ' &&
	   ! printf '%s\n' "$log" | grep -Eq 'SUMMARY: [1-9]|[(, ][1-9][0-9]* (errors|warnings)'; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL ($tool, exit $rc): $*"
		printf '%s\n' "$log" | grep '=========' | head -20
		# the test's own last words (a wrong result, a launch error)
		printf '%s\n' "$log" | grep -v '=========' | tail -5
	fi
}
# sanitize.sh --one GENERIC TOOL ARGS...: one run (SANITIZE_JOBS=N runs
# the runs N at a time through this)
if [ "${1:-}" = --one ]; then
	[ "$2" = 1 ] && export TLXRT_GENERIC=1
	shift 2
	s "$@"
	[ "$fail" -eq 0 ] && echo PASS
	exit 0
fi
for tool in memcheck racecheck synccheck; do
	s $tool ./examples_test vadd cubin/vadd.cubin 1000
	s $tool ./examples_test vadd cubin/vadd128.cubin 1000
	s $tool ./examples_test copy cubin/copy.cubin 2047
	s $tool ./examples_test softmax cubin/softmax1k.cubin 7 1000
	s $tool ./examples_test softmax cubin/softmax4k.cubin 3 3000
	s $tool ./examples_test softmax cubin/softmax32k.cubin 2 30001
	s $tool ./examples_test layernorm cubin/layernorm1k.cubin 5 777
	s $tool ./examples_test layernorm cubin/layernorm4k.cubin 3 4001
	s $tool ./examples_test layernorm cubin/layernorm32k.cubin 2 30001
	s $tool ./examples_test softmax cubin/softmax-B128.cubin 37 100
	s $tool ./examples_test layernorm cubin/layernorm-B128.cubin 37 100
	s $tool ./examples_test layernorm cubin/layernorm-B8.cubin 300 8
	s $tool ./examples_test softmax_loop cubin/softmax_loop-B4096.cubin 3 30001
	s $tool ./examples_test layernorm_loop cubin/layernorm_loop.cubin 3 30001
	s $tool ./examples_test matmul cubin/matmul64.cubin 100 72 40
	s $tool ./examples_test matmul cubin/matmul.cubin 300 200 100
	s $tool ./examples_test matmul cubin/matmul.cubin 200 144 80
	s $tool ./examples_test matmul cubin/matmul-BK32-S3-W8.cubin 300 200 100
	s $tool ./examples_test gemm cubin/tma-128x256x64-s3-w8.cubin gemm_tma 200 296 104
	s $tool ./examples_test gemm cubin/tma-128x128x32-s4-w4.cubin gemm_tma 136 264 200
	s $tool ./examples_test gemm cubin/ws-128x256x64-s3.cubin gemm_ws 200 296 264
	s $tool ./examples_test gemm cubin/ws-128x256x64-s4.cubin gemm_ws 136 520 392
	s $tool ./examples_test gemm cubin/ws-128x128x64-s5.cubin gemm_ws 136 264 392
	s $tool ./examples_test gemm cubin/cluster-128x256x64-s3.cubin gemm_cluster 200 296 264
	s $tool ./examples_test gemm cubin/cluster-128x128x64-s5.cubin gemm_cluster 136 264 392
	s $tool ./examples_test gemm_fp8 cubin/fp8-128x256x128-s3.cubin gemm_fp8 200 296 400
	s $tool ./examples_test gemm cubin/static-128x256x64-s3.cubin gemm_static 600 1000 200
	s $tool ./examples_test gemm cubin/dyn-128x256x64-s3.cubin gemm_persistent 600 1000 200
	s $tool ./examples_test gemm cubin/pp-128x128x64-s2.cubin gemm_pingpong 1100 2104 72
	s $tool ./examples_test gemm cubin/pp-64x256x64-s2.cubin gemm_pingpong 2100 1104 8
	s $tool ./examples_test grouped cubin/grouped-dyn-128x256x64-s3.cubin gemm_grouped 8 256 128 300
	s $tool ./examples_test grouped_k cubin/grouped-dyn-128x256x64-s3.cubin gemm_grouped_k 5 200 296 256
	s $tool ./examples_test matmul cubin/gemm-128x256x64-s4-w8.cubin 300 136 1001
	s $tool ./examples_test attention cubin/attn-d128-c1.cubin 1 2 1 200 300 128 1
	s $tool ./examples_test attention cubin/attn-d64-c1-o1.cubin 1 2 1 200 300 64 1
	s $tool ./examples_test gemm_bias cubin/ep-128x256x64-s3.cubin gemm_epilogue 200 296 264
	export TLXRT_GENERIC=1
	s $tool ./examples_test matmul cubin/matmul.cubin 256 256 256
	unset TLXRT_GENERIC
	for k in transpose_smem transpose_pad transpose_tasks; do
		s $tool ./rtrun -d cuda cubin/$k.cubin transpose buf:f32:10000:rand \
			buf:f32:10000:poison i32:100
	done
done
if [ -n "$list" ]; then
	res=$(xargs -P "$SANITIZE_JOBS" -L 1 sh "$0" --one < "$list")
	printf '%s\n' "$res" | grep -v '^PASS$'
	pass=$((pass + $(printf '%s\n' "$res" | grep -c '^PASS$')))
	fail=$((fail + $(printf '%s\n' "$res" | grep -c '^FAIL ')))
	rm -f "$list"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
