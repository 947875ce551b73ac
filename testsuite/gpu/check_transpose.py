"""Checks y = x^T for n x n float32 matrices written by rtrun -w:
check_transpose.py X Y N.  Prints the count of wrong elements."""
import struct
import sys

n = int(sys.argv[3])
x = struct.unpack('%df' % (n * n), open(sys.argv[1], 'rb').read())
y = struct.unpack('%df' % (n * n), open(sys.argv[2], 'rb').read())
bad = sum(1 for i in range(n) for j in range(n) if y[j * n + i] != x[i * n + j])
print('%s: %d of %d elements wrong' % (sys.argv[2], bad, n * n))
sys.exit(1 if bad else 0)
