#!/bin/sh
# testsuite/python/h200.sh: the Python package's tests and its launch
# benchmark on a machine with a GPU and torch but no LLVM, run in the
# folder testsuite/gpu/build.sh fills (lib/libtlxrt.so, tlxc, python/,
# examples/, python_launch.py):
#
#   sh h200.sh [OUT_DIR]
#
# The package compiles through ./tlxc there (no libtlx).  Runs
# test_sim.py (the simulator with numpy), test_torch.py (CUDA tensors,
# torch's current stream, tlx.torch_op under torch.compile(fullgraph=True),
# the layer norm -> matmul -> softmax block against eager torch) and
# python_launch.py (the host time of a launch: tlx against Triton and the
# driver) and an A/B of the bench scripts' tlx driver (tlxbench.py, through
# the package) against bench_kernels (C), each with its log in OUT_DIR
# (default ./python-results), and python_launch.json; exits non-zero when
# a test failed.
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/python-results}
mkdir -p "$out"
export TLX_LIBDIR="$here/lib" TLX_TLXC="$here/tlxc" TLX_CACHE_DIR="$out/cache"
export PYTHONPATH="$here/python${PYTHONPATH:+:$PYTHONPATH}"
py=${PYTHON:-python3}
rc=0
run() {
	name=$1
	shift
	echo "== $name"
	"$@" >"$out/$name.log" 2>&1
	r=$?
	cat "$out/$name.log"
	[ $r -eq 0 ] || { echo "== $name failed ($r)"; rc=1; }
}
run test_sim $py "$here/python/tests/test_sim.py" "$here/examples" "$here/tlxc"
run test_torch $py "$here/python/tests/test_torch.py" "$here/examples"
run python_launch $py "$here/python_launch.py" 2000 "$out/python_launch.json"
# the bench scripts' tlx figures through the package (tlxbench.py) against
# the C driver they used before (bench_kernels), on the same cubins
ab() (
	cd "$here" || exit 1
	for c in "vadd cubin/vadd.cubin 16777216" "softmax cubin/softmax4k.cubin 4096 4096" \
		 "layernorm cubin/layernorm4k.cubin 4096 4096" "matmul cubin/matmul.cubin 4096 4096 4096" \
		 "gemm cubin/ws-128x256x64-s3.cubin gemm_ws 4096 4096 4096"; do
		# shellcheck disable=SC2086
		"$here/bench_kernels" $c && $py "$here/tlxbench.py" $c || exit 1
	done
)
run tlxbench_vs_bench_kernels ab
exit $rc
