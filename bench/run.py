"""Run every bench/bench_*.py in turn (what `make bench` does); stop at the first failure.

Each benchmark is a standalone script run with this interpreter, in the repository root,
with DDS kept on loopback on a domain of this run (for benchmarks that start the node).
"""
from pathlib import Path
import subprocess
import sys

from pkm_dynamics.testing import use_loopback_ros

BENCH = Path(__file__).resolve().parent


def main():
    scripts = sorted(BENCH.glob('bench_*.py'))
    if not scripts:
        print('no benchmarks yet (bench/bench_*.py)')
        return 0
    use_loopback_ros()
    for script in scripts:
        print(f'== {script.relative_to(BENCH.parent)}', flush=True)
        result = subprocess.run([sys.executable, str(script)], cwd=BENCH.parent)
        if result.returncode != 0:
            print(f'{script.name} failed with exit code {result.returncode}')
            return result.returncode
    return 0


if __name__ == '__main__':
    sys.exit(main())
