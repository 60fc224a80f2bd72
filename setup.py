"""pip install . (not editable): the wheel carries xnf's programs, BPF objects and SDK.

The C side is built by the project's own Makefile (`make install-files`) into xnf/_prefix inside the package, the
layout `make install` gives a prefix, where xnf.build finds it. The wheel is then specific to this platform and to
the libraries it linked against (libbpf, libxdp, liburcu, libpcap, libmnl: scripts/setup.sh installs them).
`make install` installs the programs under PREFIX itself and asks for a wheel without them (XNF_WHEEL_PROGRAMS=no).
"""

import os
import subprocess
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
PACKAGED_PREFIX = "_prefix"   # python/xnf/build.py reads the same name


class BuildWithPrograms(build_py):
    def run(self):
        super().run()
        if os.environ.get("XNF_WHEEL_PROGRAMS", "yes") == "no" or self.editable_mode:
            return
        prefix = Path(self.build_lib).resolve() / "xnf" / PACKAGED_PREFIX
        subprocess.run(["make", "-s", "-C", str(ROOT), "install-files", f"PREFIX={prefix}", "DESTDIR="],
                       check=True)


class WithPrograms(Distribution):
    def has_ext_modules(self):
        # Native programs inside: a wheel for this platform, never "py3-none-any".
        return os.environ.get("XNF_WHEEL_PROGRAMS", "yes") != "no"


setup(cmdclass={"build_py": BuildWithPrograms}, distclass=WithPrograms)
