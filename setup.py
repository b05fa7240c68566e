"""Builds fissure's optional compiled helpers (Cython): ``fissure.size._parts``, ``fissure.size._pieces``,
``fissure.split._split``, ``fissure._chunks``, ``fissure.parse._mdwalk`` and
``fissure.parse._pdfwords``.

Everything else is configured in pyproject.toml. Without a C compiler the build goes on
without them and fissure uses its pure Python code, which gives the same results, only
slower.
"""

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """Build extensions when possible; warn and go on when not."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # no compiler, no headers: the pure Python path remains
            print(f"warning: fissure's compiled helper was not built ({exc}); using pure Python")

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:
            print(f"warning: {ext.name} was not built ({exc}); using pure Python")


def extensions() -> list[Extension]:
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("warning: Cython is not available; fissure's compiled helper is not built")
        return []
    return cythonize(
        [
            Extension("fissure.size._parts", ["src/fissure/size/_parts.pyx"]),
            Extension("fissure.size._pieces", ["src/fissure/size/_pieces.pyx"]),
            Extension("fissure.split._split", ["src/fissure/split/_split.pyx"]),
            Extension("fissure._chunks", ["src/fissure/_chunks.pyx"]),
            Extension("fissure.parse._mdwalk", ["src/fissure/parse/_mdwalk.pyx"]),
            Extension("fissure.parse._pdfwords", ["src/fissure/parse/_pdfwords.pyx"]),
        ],
        compiler_directives={"language_level": "3"},
        quiet=True,
    )


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
