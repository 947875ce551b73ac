#!/bin/sh
# Runs on the GPU machine (from the carried folder): every example against
# its double-precision reference at several sizes, ragged ones included,
# on the cuda backend.  Prints one line per run and "N passed, N failed".
cd "$(dirname "$0")"
export TLXRT_DEVICE=${TLXRT_DEVICE:-cuda}
pass=0
fail=0
t() {
	if ./examples_test "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}
for n in 1 1000 4096 1000003 16777216 100000007; do t vadd cubin/vadd.cubin $n; done
t vadd cubin/vadd128.cubin 1000
for n in 2047 65536 50000001; do t copy cubin/copy.cubin $n; done
for rc in "7 1000" "3 1024" "33 1" "4096 1000"; do t softmax cubin/softmax1k.cubin $rc; done
for rc in "2 4096" "1000 3000" "32768 4096"; do t softmax cubin/softmax4k.cubin $rc; done
for rc in "5 777" "2 1024" "4096 1000"; do t layernorm cubin/layernorm1k.cubin $rc; done
for rc in "1000 3000" "32768 4096"; do t layernorm cubin/layernorm4k.cubin $rc; done
for s in "128 128 64" "100 72 40" "1 1 1" "1000 1000 1000"; do t matmul cubin/matmul64.cubin $s; done
for s in "128 128 32" "300 200 100" "2048 2048 2048"; do t matmul cubin/matmul.cubin $s; done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
