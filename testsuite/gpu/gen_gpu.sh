#!/bin/sh
# Runs on the GPU machine, from the carried folder (testsuite/gpu/build.sh
# puts gen_gpu, tlxc and this script there): generated programs on the
# GPU against the simulator (testsuite/fuzz/gen_gpu.c; docs/internals.md,
# "Random programs").  Logs and findings go to $OUT (default .).
#
#   ./gen_gpu.sh run [COUNT [SEED]]
#       a campaign on every core: COUNT programs (default 5000) from SEED
#       (default 1), taking no new program after GEN_GPU_TIME seconds
#       (default 480) and giving each at most 60 (so that a run ends within
#       the device's 600 s); the log is
#       $OUT/gen_gpu-SEED.log, findings $OUT/gen_gpu-findings/seed-S.tlx
#   ./gen_gpu.sh seeds FILE
#       the programs of the seeds listed in FILE (one a line; run2-seeds.txt
#       is the findings of session 17's second run,
#       run3-seeds.txt those of session 22), each in a gen_gpu of
#       its own, as many at once as there are cores; the log is
#       $OUT/gen_gpu-seeds.log (one line a finding), findings in
#       $OUT/gen_gpu-findings/
#   ./gen_gpu.sh files [FILE...]
#       the given finding files, or the reduced programs of earlier GPU
#       findings (testsuite/gpu/gen, carried as gen/); the log is
#       $OUT/gen_gpu-files.log
#   ./gen_gpu.sh reduce FILE...
#       each finding file's program reduced on the GPU (gen_gpu --reduce:
#       the smallest program that still fails the same way), each in a
#       gen_gpu of its own, as many at once as there are cores; logs and
#       NAME.min.tlx in $OUT/gen_gpu-reduced/
#   ./gen_gpu.sh sanitize TOOL [COUNT [SEED]]
#       compute-sanitizer's TOOL (memcheck, racecheck, synccheck,
#       initcheck) on COUNT programs (default 200 for memcheck, else 50),
#       each in a process of its own (gen_gpu -j 0), as many at once as
#       there are cores; per-program logs in $OUT/gen_gpu-TOOL/
#
# Each ends with a summary line; the exit status is 0 when nothing was
# found.  Extra gen_gpu options go in GEN_GPU_FLAGS (--flags "...", -v).
# Each also packs its logs and findings into $OUT/gen_gpu-MODE.tgz (the
# device tool brings back only a few files of a call).
cd "$(dirname "$0")" || exit 2
out=${OUT:-.}
jobs=$(nproc)
# pack NAME PATH...: the paths (relative to $out) that exist, in one archive
pack() {
	name=$1
	shift
	set -- $(cd "$out" && for p in "$@"; do [ -e "$p" ] && echo "$p"; done)
	[ $# -gt 0 ] && tar czf "$out/gen_gpu-$name.tgz" -C "$out" "$@"
}
cs=${COMPUTE_SANITIZER:-compute-sanitizer}
command -v "$cs" >/dev/null 2>&1 || cs=/usr/local/cuda/bin/compute-sanitizer

case ${1:-run} in
run)
	n=${2:-5000}
	seed=${3:-1}
	log="$out/gen_gpu-$seed.log"
	# shellcheck disable=SC2086
	./gen_gpu --seed "$seed" --count "$n" -j "$jobs" --time "${GEN_GPU_TIME:-480}" --timeout 60 \
		--keep "$out/gen_gpu-findings" $GEN_GPU_FLAGS > "$log"
	rc=$?
	grep -v '^seed ' "$log"
	echo "findings: $(grep -c '^seed ' "$log") (lines in $log)"
	grep '^seed ' "$log" | head -20
	pack run "gen_gpu-$seed.log" gen_gpu-findings
	exit $rc
	;;
seeds)
	list=${2:?usage: gen_gpu.sh seeds FILE}
	dir="$out/gen_gpu-seeds"
	log="$out/gen_gpu-seeds.log"
	mkdir -p "$dir"
	# shellcheck disable=SC2016
	grep -E '^[0-9]+$' "$list" | xargs -P "$jobs" -I{} sh -c \
		'./gen_gpu --seed "$1" --count 1 -j 1 --timeout 120 \
		 --keep "$2/gen_gpu-findings" $GEN_GPU_FLAGS > "$3/seed-$1.log" 2>&1' \
		sh {} "$out" "$dir"
	cat "$dir"/seed-*.log | grep '^seed ' | sort -t' ' -k2,2n > "$log"
	echo "programs: $(grep -cE '^[0-9]+$' "$list"), findings: $(wc -l < "$log") (lines in $log)"
	head -20 "$log"
	pack seeds gen_gpu-seeds.log gen_gpu-seeds gen_gpu-findings
	[ -s "$log" ] && exit 1
	exit 0
	;;
files)	# the reduced programs of earlier findings (testsuite/gpu/gen), or FILE...
	shift
	[ $# -eq 0 ] && set -- gen/*.tlx
	log="$out/gen_gpu-files.log"
	# shellcheck disable=SC2086
	./gen_gpu -j "$jobs" --timeout 120 --keep "$out/gen_gpu-findings" \
		$GEN_GPU_FLAGS "$@" > "$log"
	rc=$?
	cat "$log"
	pack files gen_gpu-files.log gen_gpu-findings
	exit $rc
	;;
reduce)
	shift
	[ $# -gt 0 ] || { echo "usage: gen_gpu.sh reduce FILE..." >&2; exit 2; }
	dir="$out/gen_gpu-reduced"
	mkdir -p "$dir"
	# shellcheck disable=SC2016
	printf '%s\n' "$@" | xargs -P "$jobs" -I{} sh -c \
		'./gen_gpu -j 1 --timeout 60 --keep "$2" --reduce $GEN_GPU_FLAGS "$1" \
		 > "$2/$(basename "$1" .tlx).log" 2>&1' sh {} "$dir"
	cat "$dir"/*.log | grep -E 'reduced|programs in'
	pack reduce gen_gpu-reduced
	exit 0
	;;
one)	# one program under the tool (xargs runs these)
	tool=$2
	seed=$3
	dir=$4
	# shellcheck disable=SC2086
	timeout 600 "$cs" --tool "$tool" --error-exitcode 99 \
		--target-processes application-only \
		./gen_gpu -j 0 --seed "$seed" --count 1 --timeout 300 \
		--keep "$dir/findings" $GEN_GPU_FLAGS > "$dir/seed-$seed.log" 2>&1
	rc=$?
	# a clean run: exit 0 and "SUMMARY: 0 ..." (memcheck: ERROR SUMMARY,
	# racecheck: RACECHECK SUMMARY: 0 hazards)
	if [ $rc -eq 0 ] && grep -q 'SUMMARY: 0 ' "$dir/seed-$seed.log" &&
	   ! grep -Eq 'SUMMARY: [1-9]' "$dir/seed-$seed.log"; then
		echo "$seed clean" >> "$dir/status"
	elif [ $rc -eq 99 ] || grep -Eq 'SUMMARY: [1-9]' "$dir/seed-$seed.log"; then
		echo "$seed sanitizer" >> "$dir/status"
	elif [ $rc -eq 1 ]; then
		echo "$seed finding" >> "$dir/status"
	else
		echo "$seed other($rc)" >> "$dir/status"
	fi
	exit 0
	;;
sanitize)
	tool=${2:?usage: gen_gpu.sh sanitize TOOL [COUNT [SEED]]}
	[ "$tool" = memcheck ] && d=200 || d=50
	n=${3:-$d}
	seed=${4:-1}
	dir="$out/gen_gpu-$tool"
	rm -rf "$dir"
	mkdir -p "$dir"
	start=$(date +%s)
	seq "$seed" $((seed + n - 1)) |
		xargs -P "$jobs" -I{} "$0" one "$tool" {} "$dir"
	clean=$(grep -c ' clean$' "$dir/status")
	san=$(grep -c ' sanitizer$' "$dir/status")
	fnd=$(grep -c ' finding$' "$dir/status")
	other=$(grep -c ' other' "$dir/status")
	for s in $(grep -v ' clean$' "$dir/status" | sort -n | head -10 | cut -d' ' -f1); do
		echo "seed $s: $(grep "^$s " "$dir/status" | cut -d' ' -f2)"
		grep -E '^=========  ?[A-Z]|^seed ' "$dir/seed-$s.log" | head -4
	done
	echo "$tool: $n programs in $(( $(date +%s) - start )) s: $clean clean," \
	     "$san with sanitizer errors, $fnd gen_gpu findings, $other other"
	pack "$tool" "gen_gpu-$tool"
	[ "$clean" -eq "$n" ]
	exit $?
	;;
*)
	sed -n '2,20p' "$0"
	exit 2
	;;
esac
