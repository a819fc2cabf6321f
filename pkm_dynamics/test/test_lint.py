"""The repository passes its lint rules (`ruff.toml` at the repository root: pyflakes,
pycodestyle, bugbear; the README's *Development* section says which and why). ruff is pinned in
requirements.txt, so a missing ruff fails here rather than skipping the check."""
from pathlib import Path
import subprocess
import sys

REPOSITORY = Path(__file__).resolve().parents[2]
#: the trees the rules apply to
LINTED = ('pkm_dynamics', 'bench', 'scripts')


def ruff(*args, stdin=None):
    return subprocess.run([sys.executable, '-m', 'ruff', *args], cwd=REPOSITORY, input=stdin,
                          capture_output=True, text=True, timeout=120)


def test_the_tree_passes_ruff_check():
    result = ruff('check', '--no-cache', *LINTED)
    assert result.returncode == 0, f'ruff check found violations:\n{result.stdout}{result.stderr}'


def test_the_configuration_is_the_one_checked():
    """The repository's ruff.toml is in force: an unused import, a line beyond 120 characters
    and a mutable default argument in a file of the package are each reported."""
    source = ('import os\n\n\ndef f(a=[]):\n    return a  # ' + 'x' * 120 + '\n')
    result = ruff('check', '--no-cache', '--stdin-filename', 'pkm_dynamics/pkm_dynamics/x.py',
                  '-', stdin=source)
    assert result.returncode == 1, result.stdout + result.stderr
    for rule in ('F401', 'E501', 'B006'):
        assert rule in result.stdout, (rule, result.stdout)
