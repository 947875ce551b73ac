#!/bin/sh
# gpu-smoke.sh: on a machine with a GPU and gcc but no LLVM or autotools,
# builds libtlxrt's sources and the vadd host program directly, embeds the
# vadd IR into the hand-written PTX, and runs the same host program on the
# cuda and sim backends.  Usage (from the repository root):
#   sh testsuite/runtime/gpu-smoke.sh [N]
set -e
n=${1:-1000003}
out=${OUT:-/tmp/tlx-gpu-smoke}
mkdir -p "$out"
cc="gcc -std=c11 -D_GNU_SOURCE -O2 -I. -Iinclude"
$cc -o "$out/vadd_host" testsuite/runtime/vadd_host.c runtime/*.c sim/*.c \
	ir/*.c support/*.c -ldl -lm
$cc -o "$out/embed" testsuite/runtime/embed.c
"$out/embed" ptx testsuite/runtime/Inputs/vadd.tir \
	testsuite/runtime/Inputs/vadd_body.ptx "$out/vadd.ptx"
"$out/vadd_host" "$out/vadd.ptx" cuda "$n" 20 || echo "cuda: exit $?"
"$out/vadd_host" "$out/vadd.ptx" sim "$n"
"$out/vadd_host" "$out/vadd.ptx" "" 1000
