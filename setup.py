"""Only the optional C part of the block scan; everything else is in pyproject.toml.

``optional=True``: where no C compiler or Python headers are installed the package still installs,
and the scan runs its numpy code (bootscope/parse/native.py says which one runs).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "bootscope.parse._scan",
            ["bootscope/parse/_scan.c"],
            extra_compile_args=["-O2", "-std=c99", "-Wall", "-Wextra"],
            optional=True,
        )
    ]
)
