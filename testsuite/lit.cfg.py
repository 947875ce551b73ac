# lit configuration for tlx's text tests.  Substitutions:
#   %tlxc, %tlx-opt, %tlx-sim, %tlx-run   the tools of this build
#   FileCheck, not                        from llvm-22-tools
#   %examples                             the examples/ directory
#   %cc                                   the C compiler configure chose
#   %hostclang                            clang 22 (feature host-clang)
import os
import lit.formats

config.name = "tlx"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".tlx", ".tir", ".test", ".c.test"]
config.excludes = ["Inputs", "slow", "gpu", "Makefile.inc", "lit.cfg.py",
                   "lit.site.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tlx_obj_root, "testsuite")

tools = os.path.join(config.tlx_obj_root, "tools")
config.environment["PATH"] = os.pathsep.join(
    [tools, config.llvm_bindir, config.environment.get("PATH", "")])
for var in ["ASAN_OPTIONS", "UBSAN_OPTIONS", "TLX_CACHE_DIR", "HOME",
            "TLXRT_DEVICE"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.environment.setdefault(
    "UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")

def tool(name):
    return os.path.join(tools, name)

config.substitutions.append(("%tlxc", tool("tlxc")))
config.substitutions.append(("%tlx-opt", tool("tlx-opt")))
config.substitutions.append(("%tlx-sim", tool("tlx-sim")))
config.substitutions.append(("%tlx-run", tool("tlx-run")))
config.substitutions.append(("%unit", os.path.join(config.tlx_obj_root, "testsuite", "unit")))
config.substitutions.append(("%jit_test", os.path.join(config.tlx_obj_root, "testsuite", "jit", "jit_test")))
config.substitutions.append(("%fuzz_test", os.path.join(config.tlx_obj_root, "testsuite", "jit", "fuzz_test")))
config.substitutions.append(("%e2e", os.path.join(config.tlx_obj_root, "testsuite", "e2e", "examples_test")))
config.substitutions.append(("%rtbin", os.path.join(config.tlx_obj_root, "testsuite", "runtime")))
config.substitutions.append(("%examples", os.path.join(config.tlx_src_root, "examples")))
config.substitutions.append(("%srcroot", config.tlx_src_root))
config.substitutions.append(("%cc", config.cc))
config.substitutions.append(("%objroot", config.tlx_obj_root))

# The Python package's tests: Debian's python3 with numpy; with ASan the
# interpreter must load its runtime first (and Python's own allocations
# are not leaks to report)
import subprocess
if subprocess.run(["/usr/bin/python3", "-c", "import numpy"],
                  capture_output=True).returncode == 0:
    config.available_features.add("numpy")
pyenv = "env TLX_LIBDIR=" + os.path.join(config.tlx_obj_root, ".libs")
def cc_file(name):
    return subprocess.run(config.cc.split() + ["-print-file-name=" + name],
                          capture_output=True, text=True).stdout.strip()
if config.sanitizers:
    # clang's ASan runtime holds its UBSan; gcc has one library for each
    import platform
    rt = cc_file("libclang_rt.asan-%s.so" % platform.machine())
    libs = [rt] if os.path.isabs(rt) else [cc_file("lib%s.so" % n)
                                           for n in ("asan", "ubsan")]
    pyenv += " LD_PRELOAD=%s ASAN_OPTIONS=detect_leaks=0" % ":".join(libs)
config.substitutions.append(("%python", pyenv + " /usr/bin/python3"))
import shutil
if shutil.which("man"):
    config.available_features.add("man")
# a vim with syntax highlighting (vim.tiny has none) for syntax-vim.test
if shutil.which("vim") and subprocess.run(
        ["vim", "-Nu", "NONE", "-i", "NONE", "-Es", "-c",
         "if has('syntax') | qa! | else | cq | endif"],
        stdin=subprocess.DEVNULL, capture_output=True).returncode == 0:
    config.available_features.add("vim")

# clang 22 and llvm-extract: codegen's math functions compiled for the host
hostcc = os.path.join(config.llvm_bindir, "clang")
if os.path.exists(hostcc) and os.path.exists(
        os.path.join(config.llvm_bindir, "llvm-extract")):
    config.available_features.add("host-clang")
    config.substitutions.append(("%hostclang", hostcc))

if config.ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))
if config.sanitizers:
    config.available_features.add("asan")
