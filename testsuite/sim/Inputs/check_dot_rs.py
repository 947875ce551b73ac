"""Checks what rtrun -w wrote for testsuite/sim/Inputs/dot_rs.tlx against a
double-precision reference: check_dot_rs.py load|chain M K N A B [B2] C.
bf16 inputs; chain rounds a @ b1 to bf16 (to nearest even) as the kernel
does.  Prints the count of wrong elements."""
import struct
import sys


def bf16s(path, n):
    raw = struct.unpack('%dH' % n, open(path, 'rb').read(2 * n))
    return [struct.unpack('f', struct.pack('I', h << 16))[0] for h in raw]


def to_bf16(x):
    u = struct.unpack('I', struct.pack('f', x))[0]
    u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000
    return struct.unpack('f', struct.pack('I', u))[0]


def matmul(a, b, m, k, n):
    return [sum(a[i * k + t] * b[t * n + j] for t in range(k))
            for i in range(m) for j in range(n)]


what, m, k, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
a = bf16s(sys.argv[5], m * k)
b = bf16s(sys.argv[6], k * n)
ref = matmul(a, b, m, k, n)
if what == 'chain':
    b2 = bf16s(sys.argv[7], n * n)
    ref = matmul([to_bf16(x) for x in ref], b2, m, n, n)
out = sys.argv[-1]
got = struct.unpack('%df' % (m * n), open(out, 'rb').read(4 * m * n))
tol = 1e-3 if what == 'load' else 0.05
bad = sum(1 for x, y in zip(got, ref) if not abs(x - y) <= tol * (1 + abs(y)))
print('%s %dx%dx%d: %d of %d elements wrong' % (what, m, k, n, bad, m * n))
sys.exit(1 if bad else 0)
