#!/bin/sh
# Runs on the GPU machine (from the carried folder): every example against
# its double-precision reference at several sizes, ragged ones included,
# on the cuda backend.  Prints one line per run and "N passed, N failed".
# GPU_TEST_JOBS=N runs the examples_test runs N at a time, after the rest.
cd "$(dirname "$0")"
export TLXRT_DEVICE=${TLXRT_DEVICE:-cuda}
pass=0
fail=0
list=
[ "${GPU_TEST_JOBS:-1}" -gt 1 ] && list=$(mktemp)
t() {
	if [ -n "$list" ]; then
		echo "$*" >> "$list"
		return
	fi
	if ./examples_test "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}
# the same with TLXRT_STAGE=0: operands whose rows are not 16-byte aligned
# stay where they are, and the generic entry copies them itself
t0() {
	if [ -n "$list" ]; then
		echo "STAGE0 $*" >> "$list"
		return
	fi
	if TLXRT_STAGE=0 ./examples_test "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}
# the same with every buffer O bytes past an aligned address
# (TLX_TEST_OFFSET): to O ARGS...
to() {
	o=$1
	shift
	if [ -n "$list" ]; then
		echo "OFF$o $*" >> "$list"
		return
	fi
	if TLX_TEST_OFFSET=$o ./examples_test "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}
for n in 1 1000 4096 1000003 16777216 100000007; do t vadd cubin/vadd.cubin $n; done
t vadd cubin/vadd128.cubin 1000
for n in 2047 65536 50000001; do t copy cubin/copy.cubin $n; done
for rc in "7 1000" "3 1024" "33 1" "4096 1000"; do t softmax cubin/softmax1k.cubin $rc; done
for rc in "2 4096" "1000 3000" "32768 4096"; do t softmax cubin/softmax4k.cubin $rc; done
for rc in "5 777" "2 1024" "4096 1000"; do t layernorm cubin/layernorm1k.cubin $rc; done
for rc in "1000 3000" "32768 4096" "33 4001" "7 4095"; do t layernorm cubin/layernorm4k.cubin $rc; done
# the rule's builds (examples/softmax.tlx, layernorm.tlx): every BLOCK
# at a width it takes, aligned and not, with row counts that are not a
# multiple of ROWS, and with a stride wider than the row
for k in softmax layernorm; do
	b=1
	while [ $b -le 32768 ]; do
		w=$(( b > 2 ? b * 3 / 4 + 1 : b ))
		r=$(( 300000 / b + 3 ))
		t $k cubin/$k-B$b.cubin $r $b
		t $k cubin/$k-B$b.cubin $r $w
		t $k cubin/$k-B$b.cubin 5 $w $((b + 8))
		b=$((b * 2))
	done
done
t layernorm cubin/layernorm-B65536.cubin 7 50257
for rc in "7 50257" "3 65536" "5 1" "4 4096" "3 30001 30016"; do
	t layernorm_loop cubin/layernorm_loop.cubin $rc
done
# the benchmark's sweep: the fast copy with full and partly masked rows
# (zeros in softmax: the division's slow path), the generic copy (cols not
# a multiple of 16)
for k in softmax layernorm; do
	for w in 4 8 16 32; do
		for rc in "256 4096" "64 2048" "100 3000"; do
			t $k cubin/$k-B4096-W$w.cubin $rc
		done
	done
	for w in 16 32; do
		for rc in "16 32768" "8 16384" "8 30001" "300 32768" "1000 30001"; do
			t $k cubin/$k-B32768-W$w.cubin $rc
		done
	done
done
for w in 4 8; do
	for rc in "256 4096" "100 3000"; do t softmax cubin/softmax-B4096-W$w-fast.cubin $rc; done
done
for w in 16 32; do
	for rc in "16 32768" "8 30001"; do t softmax cubin/softmax-B32768-W$w-fast.cubin $rc; done
done
for b in 4096 8192; do
	for rc in "16 32768" "8 30001" "3 1"; do t softmax_loop cubin/softmax_loop-B$b.cubin $rc; done
done
for s in "128 128 64" "100 72 40" "1 1 1" "1000 1000 1000"; do t matmul cubin/matmul64.cubin $s; done
# matmul's fast entry on TMA (strides multiples of 16; ragged edges), its
# generic entry on cp.async (odd strides, or TLXRT_GENERIC=1)
for s in "128 128 32" "300 200 100" "2048 2048 2048" "200 144 80" "1000 1008 1024" "64 16 16"; do t matmul cubin/matmul.cubin $s; done
for c in BK64-S3-W4 BK32-S4-W4 BK32-S3-W8 BK64-S3-W8; do for s in "300 200 100" "1024 1024 1000" "1024 512 2048"; do t matmul cubin/matmul-$c.cubin $s; done; done
# bench/gemm.py's configurations (wgmma), ragged shapes included
for c in cubin/gemm-*.cubin; do for s in "300 200 100" "1024 1024 1000" "2048 512 4096" "129 257 72"; do t matmul $c $s; done; done
# the TMA GEMM's configurations: full tiles, ragged edges (TMA zero-fills
# and clips), a problem smaller than a tile, a long K
for c in cubin/tma-*.cubin; do
	for s in "256 512 256" "200 296 104" "8 8 8" "1000 1000 1000" "2048 512 4096" "136 264 8"; do
		t gemm $c gemm_tma $s
	done
done
# the warp-specialized GEMM's configurations, the same shapes
for c in cubin/ws-*.cubin; do
	for s in "256 512 256" "200 296 104" "8 8 8" "1000 1000 1000" "2048 512 4096" "136 264 8"; do
		t gemm $c gemm_ws $s
	done
done
# the same in clusters of two (B multicast): the shapes, and an odd
# number of rows of tiles (the cluster's second tile all outside C)
for c in cubin/cluster-*.cubin; do
	for s in "256 512 256" "200 296 104" "8 8 8" "1000 1000 1000" "2048 512 4096" "136 264 8" "300 296 520"; do
		t gemm $c gemm_cluster $s
	done
done
# the persistent GEMM (static schedule)
for c in cubin/static-*.cubin; do
	for s in "256 512 256" "200 296 104" "1000 1000 1000" "4096 4096 512"; do
		t gemm $c gemm_static $s
	done
done
# the persistent GEMM over a dynamic schedule (clc on sm_90a)
for c in cubin/dyn-*.cubin; do
	for s in "256 512 256" "200 296 104" "1000 1000 1000" "4096 4096 512" "8 8 8"; do
		t gemm $c gemm_persistent $s
	done
done
# the ping-pong GEMM (static schedule; consumers on alternate tiles): a
# problem smaller than a tile, K of one step, ragged edges, and more tiles
# than programs (2100 x 1100: some programs take 2 tiles, most 1; 3000 and
# 4096: several each, both consumers in turn)
for c in cubin/pp-*.cubin; do
	for s in "256 512 256" "200 296 104" "8 8 8" "136 264 8" "1000 1000 1000" "2100 1104 72" \
		 "3000 3000 200" "4096 4096 512" "2048 512 4096"; do
		t gemm $c gemm_pingpong $s
	done
done
# the grouped GEMM, dynamic and static (G N K MMAX; 128x128 tiles: BM BN)
for c in cubin/grouped-*-128x256x*.cubin; do
	for s in "64 256 64 300" "8 200 128 1000" "3 256 64 0" "16 512 256 2000"; do
		t grouped $c gemm_grouped $s
	done
done
for c in cubin/grouped-*-128x128x*.cubin; do
	t grouped $c gemm_grouped 64 256 64 300 128 128
	t grouped $c gemm_grouped 16 200 128 1000 128 128
done
# the grouped GEMM over K, dynamic and static (G M N KMAX)
for c in cubin/grouped-*.cubin; do
	for s in "9 200 296 256" "32 1024 1024 2048" "3 130 256 0" "5 1000 520 4096"; do
		t grouped_k $c gemm_grouped_k $s
	done
done
# the fused epilogue (bias + GELU)
for c in cubin/ep-*.cubin; do
	for s in "256 512 256" "200 296 104" "1000 1000 1000"; do
		t gemm_bias $c gemm_epilogue $s
	done
done
# the fp8 GEMM's configurations (K a multiple of 16: TMA row strides)
for c in cubin/fp8-*.cubin; do
	for s in "256 512 384" "200 296 144" "1000 1000 1008" "2048 512 4096"; do
		t gemm_fp8 $c gemm_fp8 $s
	done
done
# attention forward (Z H HKV SQ SK, then D and CAUSAL): one block, ragged
# sequence ends, grouped-query heads, more queries than keys and fewer, a
# long sequence; O and the log-sum-exp against the double reference; the
# persistent kernel over the dynamic schedule too; OVERLAP = 1 (two key
# blocks in flight, attention_fwd's default at D 64 and 128; o0 without)
# where shared memory allows two stages (D 64, 128),
# and the persistent kernel with two slots for Q
for d in 64 128 256; do
	for c in 0 1; do
		for s in "1 1 1 128 128" "2 4 2 1000 1000" "1 8 2 333 777" \
			 "1 4 4 777 333" "1 2 1 2048 2048"; do
			t attention cubin/attn-d$d-c$c.cubin $s $d $c
			t attention cubin/attn-d$d-c$c.cubin $s $d $c attention_fwd_dyn
			[ $d = 256 ] && continue
			t attention cubin/attn-d$d-c$c-o1.cubin $s $d $c
			t attention cubin/attn-d$d-c$c-o1.cubin $s $d $c attention_fwd_dyn
			t attention cubin/attn-d$d-c$c-o1p.cubin $s $d $c
			t attention cubin/attn-d$d-c$c-o0.cubin $s $d $c
			t attention cubin/attn-d$d-c$c-q1.cubin $s $d $c attention_fwd_dyn
			t attention cubin/attn-d$d-c$c-o1q1.cubin $s $d $c attention_fwd_dyn
		done
	done
done
# The generic entries (kernel.c, "Specialized entries") on shapes the
# fast ones would take, and which entry a launch ran.
g() {
	if TLXRT_GENERIC=1 ./examples_test "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}
g vadd cubin/vadd.cubin 16777216
g softmax cubin/softmax4k.cubin 32768 4096
g layernorm cubin/layernorm32k.cubin 64 32768
g softmax cubin/softmax32k.cubin 300 32768
g matmul cubin/matmul.cubin 2048 2048 2048
g matmul cubin/matmul.cubin 200 144 80
# every buffer off a 16-byte boundary: the generic entries (on the GPU,
# loaded from the cubin's PTX at the first such launch)
# a K whose row pitch is 8, 4 or 2 bytes aligned: the generic entry's
# cp.async of 8 and 4 bytes behind their checks, and its realigned copies
# (odd K for A's rows, odd N for B's, both, ragged tiles)
for c in cubin/matmul.cubin cubin/gemm-128x256x64-s4-w8.cubin cubin/gemm-128x128x64-s3-w4.cubin; do
	for s in "257 129 4100" "129 257 4098" "64 64 4097" "300 200 102" \
		 "1000 1000 4097" "257 1001 512" "129 257 1001" "1 1 1" "130 7 9" "2047 131 333"; do
		t matmul $c $s
	done
done
for c in cubin/ra-gemm-*.cubin cubin/gemm-128x256x64-s4-w8.cubin; do
	for s in "257 129 4100" "129 257 4098" "64 64 4097" "300 200 102" "1000 1000 4097"; do
		t0 matmul $c $s
	done
done
for o in 2 6 10 14; do
	to $o matmul cubin/gemm-128x256x64-s4-w8.cubin 300 136 1001
	if TLXRT_STAGE=0 TLX_TEST_OFFSET=$o ./examples_test matmul cubin/gemm-128x256x64-s4-w8.cubin 300 136 1001; then
		pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
for o in 2 4 6 8 10 12 14; do to $o matmul cubin/matmul.cubin 300 200 104; done
for o in 4 8 12; do to $o vadd cubin/vadd.cubin 1000003; done
# the row kernels with TLX_CG_WARP_STORE=1, TLX_CG_EDGE=auto and =pred,
# and TLX_GENERIC_LAYOUTS=0 (build.sh's cubin-warp/, cubin-edge/,
# cubin-pred/, cubin-ngl/): odd widths, rows wider than the width, buffers
# 0 and 6 bytes off
for d in cubin-warp cubin-edge cubin-pred cubin-ngl; do
	for b in 128 2048 8192 32768; do
		for k in softmax layernorm; do
			for rc in "33 $((b * 3 / 4 + 1))" "5 $((b - 1)) $((b + 8))" "7 $b" \
				  "3 $((b / 2 + 1)) $((b + 3))"; do
				for o in 0 6; do to $o $k $d/$k-B$b.cubin $rc; done
			done
		done
	done
	for rc in "8 30001" "3 50257 50260" "16 32768"; do
		to 6 softmax_loop $d/softmax_loop-B8192.cubin $rc
	done
done
# entry KERNEL ARGS...: the launch took entry KERNEL; STAGE=0 in the
# environment runs it with TLXRT_STAGE=0
entry() {
	want=$1
	shift
	if TLXRT_STAGE=${STAGE-1} TLXRT_TRACE=1 ./examples_test "$@" 2>&1 | grep -q "launch $want grid"; then
		pass=$((pass + 1))
	else
		echo "FAIL: $* did not launch $want"
		fail=$((fail + 1))
	fi
}
entry 'matmul\$fast' matmul cubin/matmul.cubin 2048 2048 2048
# ragged M, N and K with strides that are multiples of 8 elements: the
# fast entry (TMA); a K of 100 (the stride of A's rows) is not, so the
# launch stages A (docs/runtime.md) and still takes the fast entry, or
# without staging the generic one
entry 'matmul\$fast' matmul cubin/matmul.cubin 200 144 80
entry 'matmul\$fast' matmul cubin/matmul.cubin 1001 1000 1000
entry 'matmul\$fast' matmul cubin/matmul.cubin 300 200 100
STAGE=0 entry matmul matmul cubin/matmul.cubin 300 200 100
entry 'matmul\$fast' matmul cubin/matmul64.cubin 128 128 64
entry 'matmul\$fast' matmul cubin/matmul-BK64-S3-W4.cubin 1024 512 2048
entry vadd vadd cubin/vadd.cubin 1000003
# Kernels written from the docs (testsuite/gpu/kernels): the GPU's result
# and the simulator's (on the same inputs), each checked to be x^T.
tr() {
	k=$1
	n=$2
	ok=1
	for d in cuda sim; do
		./rtrun -d $d -w 1:/tmp/$k.$d.x -w 2:/tmp/$k.$d.y cubin/$k.cubin transpose \
			buf:f32:$((n * n)):rand buf:f32:$((n * n)):poison i32:$n >/dev/null &&
			python3 check_transpose.py /tmp/$k.$d.x /tmp/$k.$d.y $n || ok=0
	done
	cmp -s /tmp/$k.cuda.y /tmp/$k.sim.y || { echo "FAIL: $k: GPU and simulator differ"; ok=0; }
	if [ $ok = 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}
for n in 1000 1024 33; do tr transpose_smem $n; tr transpose_pad $n; tr transpose_tasks $n; done
# aligned blocks of tiles (t[a .. b, c .. d]): on the GPU, each block
# stored from a slice equals the elements loaded directly, and the four
# column blocks of a wgmma accumulator equal the accumulator
ok=1
./rtrun -d cuda -w 2:/tmp/xs.y -w 3:/tmp/xs.z cubin/extract_slice.cubin blocks \
	buf:f32:8192:rand buf:f32:4096:poison buf:f32:4096:poison >/dev/null &&
	cmp -s /tmp/xs.y /tmp/xs.z || ok=0
./rtrun -d cuda -w 3:/tmp/xs.acc -w 4:/tmp/xs.cols cubin/extract_slice.cubin cols \
	tensor:bf16:64x64:rand tensor:bf16:64x256:rand buf:f32:16384:poison \
	buf:f32:16384:poison >/dev/null && cmp -s /tmp/xs.acc /tmp/xs.cols || ok=0
if [ $ok = 1 ]; then pass=$((pass + 1)); else echo "FAIL: extract_slice"; fail=$((fail + 1)); fi
# sin and cos of tiles (the small reduction inline, the large one in a
# loop of its own): the GPU's values within 2 ulp of the simulator's
for sc in 1 10000 1000000 1e30 3e4; do
	ok=1
	for d in cuda sim; do
		./rtrun -d $d -w 2:/tmp/trig.$d cubin/trig.cubin trig buf:f32:10007:rand \
			buf:f32:20014:poison i32:10007 f32:$sc >/dev/null || ok=0
	done
	python3 check_ulp.py /tmp/trig.cuda /tmp/trig.sim 2 || ok=0
	if [ $ok = 1 ]; then pass=$((pass + 1)); else echo "FAIL: trig at scale $sc"; fail=$((fail + 1)); fi
done
# erf (two fitted pieces) within 2 ulp of the simulator's values, exp2
# with approx (ex2.approx.ftz) within 3, sigmoid within 3 (subnormal
# results below -87)
for ks in "erf1 2 2" "erf1 8 2" "erf1 40 2" "exp2a 60 3" "sig1 40 3" "sig1 250 3"; do
	set -- $ks
	ok=1
	for d in cuda sim; do
		./rtrun -d $d -w 2:/tmp/math.$d cubin/math.cubin $1 buf:f32:100003:rand \
			buf:f32:100003:poison i32:100003 f32:$2 >/dev/null || ok=0
	done
	python3 check_ulp.py /tmp/math.cuda /tmp/math.sim $3 || ok=0
	if [ $ok = 1 ]; then pass=$((pass + 1)); else echo "FAIL: $1 at scale $2"; fail=$((fail + 1)); fi
done
# a division by the rows' divisors (reciprocal path; zeros of both signs,
# divisors of both signs): the GPU's quotients are the simulator's, bit
# for bit
ok=1
for d in cuda sim; do
	./rtrun -d $d -w 3:/tmp/divz.$d cubin/math.cubin divz buf:f32:100003:rand \
		buf:f32:100:rand buf:f32:100003:poison i32:100003 >/dev/null || ok=0
done
cmp -s /tmp/divz.cuda /tmp/divz.sim || ok=0
if [ $ok = 1 ]; then pass=$((pass + 1)); else echo "FAIL: divz"; fail=$((fail + 1)); fi
# clusters of 2 (rank 0 multicasts a box to both CTAs, rank 1 arrives on
# rank 0's barrier): the GPU's output is the simulator's, byte for byte
ok=1
for d in cuda sim; do
	./rtrun -d $d -g 4 -c 2 -w 2:/tmp/cluster.$d cubin/cluster.cubin mcast \
		tensor:f32:32x16:rand buf:f32:1024:poison >/dev/null || ok=0
done
cmp -s /tmp/cluster.cuda /tmp/cluster.sim || ok=0
if [ $ok = 1 ]; then pass=$((pass + 1)); else echo "FAIL: clusters"; fail=$((fail + 1)); fi
# --debug-barriers: the wait of a producer whose consumer never releases
# gives up after 2 s with its report and a failed device assertion,
# instead of hanging the GPU
out=$(timeout 60 ./rtrun -d cuda -g 1 cubin/no_release.cubin no_release \
	buf:f32:1024:zero i32:5 2>&1)
if [ $? -ne 124 ] && printf '%s\n' "$out" | grep -q "tlx: .*no_release.tlx:10:25: kernel 'no_release', program (0, 0, 0), task 'produce' (replica 0): mbar_wait on barrier 'p.empty'\[0\] for the phase of parity 0 has waited 2000 ms: a deadlock"; then
	pass=$((pass + 1))
else
	echo "FAIL: --debug-barriers: $out"
	fail=$((fail + 1))
fi
if [ -n "$list" ]; then
	res=$(xargs -P "$GPU_TEST_JOBS" -L 1 sh -c '[ "$1" = STAGE0 ] && shift && export TLXRT_STAGE=0
		case $1 in OFF*) export TLX_TEST_OFFSET=${1#OFF}; shift;; esac
		if out=$(./examples_test "$@" 2>&1); then
		echo "$out" | tail -1; echo PASS; else echo "$out"; echo "FAIL: $*"; fi' _ < "$list")
	printf '%s\n' "$res" | grep -v '^PASS$'
	pass=$((pass + $(printf '%s\n' "$res" | grep -c '^PASS$')))
	fail=$((fail + $(printf '%s\n' "$res" | grep -c '^FAIL: ')))
	rm -f "$list"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
