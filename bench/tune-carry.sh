#!/bin/sh
# tune-carry.sh BUILDDIR [DIR]: what bench/tune.sh runs on a machine with
# a GPU and no LLVM, in DIR (default .device-tune/; the device tool
# carries it): tlx-tune linked statically with LLVM 22 (BUILDDIR is a
# build configured with --enable-static-llvm, whose convenience archives
# hold the compiler), the examples it tunes, tune.sh and tune.py.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: tune-carry.sh BUILDDIR [DIR]}
out=${2:-$top/.device-tune}
llvm=${LLVM_CONFIG:-llvm-config-22}
command -v "$llvm" >/dev/null 2>&1 || llvm=/usr/lib/llvm-22/bin/llvm-config
b=$build/.libs
mkdir -p "$out/examples"
# shellcheck disable=SC2046
gcc -std=c11 -D_GNU_SOURCE -O2 -no-pie -I"$top" -I"$top/include" -I"$build" \
	-o "$out/tlx-tune.full" "$top/tools/tlx-tune.c" "$top"/tune/*.c "$top/jit/tlx.c" \
	"$top"/runtime/*.c "$top"/sim/*.c "$b/libtlxjit.a" "$b/libtlxfront.a" \
	"$b/libtlxpasses.a" "$b/libtlxcodegen.a" "$b/libtlxir.a" "$b/libtlxsupport.a" \
	$("$llvm" --link-static --ldflags) \
	$("$llvm" --link-static --libs nvptx passes analysis core support) \
	$("$llvm" --link-static --system-libs) -lstdc++ -lm -lpthread -ldl
strip -o "$out/tlx-tune" "$out/tlx-tune.full"
rm -f "$out/tlx-tune.full"
cp "$top/examples/matmul.tlx" "$top/examples/softmax.tlx" "$top/examples/layernorm.tlx" \
	"$out/examples/"
cp "$top/bench/tune.sh" "$top/bench/tune.py" "$top/bench/tune_triton.py" "$top/bench/tri_matmul.py" \
	"$out/"
