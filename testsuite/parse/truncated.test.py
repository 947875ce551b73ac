# Compiles every prefix of a file (cut at each byte, up to a bound) and
# checks that the compiler exits with 0 or 1 and says why when it fails.
import subprocess, sys, tempfile, os

tlxc, path = sys.argv[1], sys.argv[2]
data = open(path, 'rb').read()
data = data[data.index(b'kernel'):]  # skip the RUN and CHECK lines
bad = 0
with tempfile.TemporaryDirectory() as d:
    f = os.path.join(d, 'cut.tlx')
    step = max(1, len(data) // 100)
    for n in range(0, len(data) + 1, step):
        open(f, 'wb').write(data[:n])
        r = subprocess.run([tlxc, '--emit=ast', f], capture_output=True)
        if r.returncode not in (0, 1) or (r.returncode == 1 and b'error:' not in r.stderr):
            print('prefix of %d bytes: exit %d\n%s' % (n, r.returncode, r.stderr.decode(errors='replace')))
            bad += 1
sys.exit(1 if bad else 0)
