"""Compile every kernel of the core once into numba's cache, so that tests, demo and node start
warm: ``python -m pkm_dynamics.core.precompile [ROBOTS]`` (``ROBOTS``: a directory of robot
descriptions, default the installed example robots).  The package build runs it on the build
tree (``setup.py``: the wheel and every install carry the cache, see
:mod:`.numba_support.cache`); ``make setup`` after installing the package.  Prints the cache
location and the time taken."""
import os
import sys
import time

from .robot import load_robot
from .robot_warmup import cache_location, installed_robots, warm


def warm_robots(robots: str) -> None:
    """Build every robot description of the directory ``robots`` (``*.urdf``): whatever a
    robot kind compiles when it is built (its family's kernels,
    :func:`.robot_warmup.load_kernels`, and the kernels of its construction) is then in the
    cache too."""
    for name in sorted(os.listdir(robots)) if os.path.isdir(robots) else ():
        if name.endswith(".urdf"):
            load_robot(os.path.join(robots, name))


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    robots = args[0] if args else installed_robots()
    t = time.perf_counter()
    warm(robots=robots)
    warm_robots(robots)
    seconds = time.perf_counter() - t
    print(f"pkm_dynamics: compiled kernels ready in {seconds:.1f} s, cache: {cache_location()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
