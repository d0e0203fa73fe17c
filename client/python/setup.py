"""Builds the planning extension (tensord._planner) with the project's CMake build when the
package is installed (`pip install --no-build-isolation client/python`); the rest of the
package is declared in pyproject.toml.

The extension links the planning library (tensord_plan), so it is built from this checkout's sources: `make build` has
usually built it already (into tensord/), and then nothing is compiled here.
"""
import glob
import os
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class BuildWithPlanner(build_py):
    def run(self):
        if not glob.glob(os.path.join(HERE, "tensord", "_planner*.so")):
            build_dir = os.environ.get("TENSORD_BUILD_DIR", os.path.join(ROOT, "build"))
            subprocess.check_call(["cmake", "-S", ROOT, "-B", build_dir,
                                   "-DCMAKE_BUILD_TYPE=Release",
                                   f"-DPython3_EXECUTABLE={sys.executable}"])
            subprocess.check_call(["cmake", "--build", build_dir, "-j", str(os.cpu_count() or 2),
                                   "--target", "tensord_planner_ext", "tensord_python_proto"])
        super().run()


setup(cmdclass={"build_py": BuildWithPlanner},
      package_data={"tensord": ["_planner*.so"]})
