#!/bin/sh
# bench/sass_notes.sh: what the machine code of each kernel holds, from
# cuobjdump (the GPU machine's toolkit): per function, its registers,
# stack and local memory (-res-usage), and counts of the instructions that
# say whether the async machinery arrived intact: tensor-core MMA (HGMMA:
# wgmma bf16/f16, QGMMA: fp8, HMMA: mma.sync), TMA (UTMALDG, UTMASTG),
# mbarrier waits (SYNCS), register budgets (USETMAXREG with its count)
# and local-memory traffic (LDL, STL: spills).  One line a function.
#
#   sh bench/sass_notes.sh CUBIN...
set -e
command -v cuobjdump > /dev/null || { echo "sass_notes.sh: needs cuobjdump" >&2; exit 2; }
for c in "$@"; do
	name=$(basename "$c" .cubin)
	cuobjdump -res-usage "$c" | awk -v f="$name" '
		/Function/ { fn = $2; sub(/:$/, "", fn) }
		/REG:/ { for (i = 1; i <= NF; i++) if ($i ~ /^(REG|STACK|LOCAL):/) r = r " " $i
			 print "res", f, fn, r; r = "" }'
	cuobjdump -sass "$c" | awk -v f="$name" '
		function out() {
			if (fn == "") return
			printf "sass %s %s HGMMA %d QGMMA %d HMMA %d UTMALDG %d UTMASTG %d SYNCS %d LDL %d STL %d SETMAXREG%s\n",
			       f, fn, n["HGMMA"], n["QGMMA"], n["HMMA"], n["UTMALDG"], n["UTMASTG"],
			       n["SYNCS"], n["LDL"], n["STL"], (regs == "" ? " -" : regs)
			split("", n); regs = ""
		}
		/Function :/ { out(); fn = $3 }
		/\/\*[0-9a-f]+\*\// {
			for (i = 1; i <= NF; i++) {
				op = $i
				if (op ~ /^@/ || op ~ /^\/\*/) continue
				split(op, p, ".")
				n[p[1]]++
				if (p[1] == "USETMAXREG") {
					v = ""
					for (j = i + 1; j <= NF && $j != ";"; j++) v = v $j
					gsub(/;.*/, "", v)
					regs = regs " " (op ~ /DEALLOC/ ? "dec:" : "inc:") v
				}
				break
			}
		}
		END { out() }'
done | sort -k2,3 | awk '
	$1 == "res" { k = $2 " " $3; res[k] = $4 " " $5 " " $6; next }
	{ k = $2 " " $3; $1 = ""; print substr($0, 2), res[k] }'
