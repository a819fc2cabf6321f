"""The package as ROS tools see it: package.xml declares what the code imports (rosdep installs
from it), and the node is installed where `ros2 run` and launch_ros look for it
(<prefix>/lib/pkm_dynamics/, as colcon installs it; `make setup` gives the venv that layout);
the numba kernels compiled at build time travel with the package (a copy elsewhere, a wheel
installed elsewhere: its robots are built without compiling a kernel)."""
import ast
import os
from pathlib import Path
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
import zipfile

import pytest

PACKAGE = Path(__file__).resolve().parents[1]
#: Python modules whose rosdep key is neither the module name nor python3-<module>
ROSDEP_KEYS = {'urdf_parser_py': 'urdfdom_py'}


def imported_modules(paths):
    """Top-level modules imported by the Python files `paths`, without the standard library,
    this package and the modules `paths` are (a test importing a helper of another test)."""
    paths = list(paths)
    modules = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules.update(alias.name.split('.')[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules.add(node.module.split('.')[0])
    return modules - set(sys.stdlib_module_names) - {'pkm_dynamics'} - {p.stem for p in paths}


def declared(*tags):
    """The rosdep keys of package.xml's elements `tags`."""
    root = ET.parse(PACKAGE / 'package.xml').getroot()
    return {element.text.strip() for tag in tags for element in root.findall(tag)}


def rosdep_key(module, keys):
    """The key of `keys` naming `module` (module name, python3-<module> or ROSDEP_KEYS)."""
    for key in (ROSDEP_KEYS.get(module), module, f'python3-{module}'):
        if key in keys:
            return key
    return None


def test_package_xml_declares_every_import():
    run = declared('depend', 'exec_depend')
    sources = {
        'package': (list((PACKAGE / 'pkm_dynamics').rglob('*.py')), run),
        'launch files': (list((PACKAGE / 'launch').glob('*.py')), run),
        'tests': (list((PACKAGE / 'test').rglob('*.py')), run | declared('test_depend')),
    }
    for what, (paths, keys) in sources.items():
        missing = sorted(m for m in imported_modules(paths) if rosdep_key(m, keys) is None)
        assert not missing, f'{what} import {missing}, not declared in package.xml'


def test_every_test_dependency_is_used():
    imported = imported_modules((PACKAGE / 'test').rglob('*.py'))
    keys = declared('test_depend')
    unused = sorted(keys - {rosdep_key(m, keys) for m in imported})
    assert not unused, f'package.xml test_depend {unused}: no test imports them'


def test_node_is_installed_where_ros2_run_looks(monkeypatch):
    """ros2 run / launch_ros: <package prefix from the ament index>/lib/<package>/<executable>.
    The embedded environment's ament prefix is the venv (AMENT_PREFIX_PATH unset there)."""
    from ament_index_python.packages import get_package_prefix, get_package_share_directory
    if not os.environ.get('AMENT_PREFIX_PATH'):
        monkeypatch.setenv('AMENT_PREFIX_PATH', sys.prefix)
    prefix = Path(get_package_prefix('pkm_dynamics'))
    node = prefix / 'lib' / 'pkm_dynamics' / 'pkm_dynamics_node'
    assert node.is_file() and os.access(node, os.X_OK), f'{node} is not an executable'
    share = Path(get_package_share_directory('pkm_dynamics'))
    assert (share / 'launch' / 'pkm_dynamics.launch.py').is_file()


# -- the numba kernel cache travels with the package ------------------------------------------

#: builds the robots of the paths argv[1:] in a fresh process and prints where the package came
#: from and how many kernel signatures numba had to compile meanwhile (not load from its cache)
KERNEL_PROBE = textwrap.dedent('''
    import sys
    from numba.core import event
    with event.install_recorder('numba:compile') as compiles:
        import pkm_dynamics
        from pkm_dynamics.core import load_robot
        for path in sys.argv[1:]:
            load_robot(path)
    print(pkm_dynamics.__file__, sum(1 for _, e in compiles.buffer if e.is_start))
''')
#: a module chain and a parallel robot: the kernel families of both kinds
PROBE_ROBOTS = [str(PACKAGE / 'robots' / f'{name}.urdf') for name in ('heavy_duty_4dof', 'planar_3rrr')]


def kernel_probe(site):
    """(package file, kernel signatures compiled) of :data:`KERNEL_PROBE` run in ``site`` with
    ``site`` first on the path."""
    env = {k: v for k, v in os.environ.items() if k != 'NUMBA_CACHE_DIR'}
    env['PYTHONPATH'] = str(site)
    out = subprocess.run([sys.executable, '-c', KERNEL_PROBE, *PROBE_ROBOTS], env=env, cwd=site,
                         capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stderr
    where, compiled = out.stdout.split()
    return Path(where), int(compiled)


@pytest.fixture(scope='module')
def warm_package():
    """The directory of the package the tests import, its kernels of both robot kinds in its
    own cache (compiled now if they are not: a fresh checkout)."""
    import pkm_dynamics
    from pkm_dynamics.core.numba_support import cache
    if cache.CACHE_DIR != cache.in_package():
        pytest.skip(f'the kernels are not cached in the package here ({cache.CACHE_DIR})')
    package = Path(pkm_dynamics.__file__).parent
    where, _ = kernel_probe(package.parent)
    assert where.parent == package
    return package


def copy_package(package, destination):
    """``package`` copied to ``destination`` with new file times, as pip writes a wheel's
    files, numba's cache (``__pycache__``) included."""
    shutil.copytree(package, destination, copy_function=shutil.copy)


def test_the_kernel_cache_is_valid_in_a_copy_of_the_package(warm_package, tmp_path):
    """numba finds a cached kernel beside its source and checks it by the source's content:
    the package copied elsewhere (another path, other file times) builds its robots without
    compiling a kernel."""
    copy_package(warm_package, tmp_path / 'site' / 'pkm_dynamics')
    where, compiled = kernel_probe(tmp_path / 'site')
    assert where.is_relative_to(tmp_path / 'site')
    assert compiled == 0, f'{compiled} kernel signatures compiled in the copy'


def test_a_wheel_carries_a_valid_kernel_cache(warm_package, tmp_path):
    """``pip wheel``: the build compiles (here: loads what the source tree has) every kernel
    of the example robots into the build tree and the wheel holds that cache; installed
    elsewhere from the wheel, the package builds its robots without compiling a kernel."""
    src = tmp_path / 'src'
    src.mkdir()
    for name in ('setup.py', 'setup.cfg', 'package.xml'):
        shutil.copy(PACKAGE / name, src / name)
    for name in ('resource', 'launch', 'config', 'robots'):
        shutil.copytree(PACKAGE / name, src / name)
    copy_package(warm_package, src / 'pkm_dynamics')
    pip = [sys.executable, '-m', 'pip', '--disable-pip-version-check']
    env = {k: v for k, v in os.environ.items() if k != 'NUMBA_CACHE_DIR'}
    built = subprocess.run([*pip, 'wheel', '--no-deps', '--no-build-isolation', '-w',
                            str(tmp_path / 'dist'), str(src)], env=env, capture_output=True,
                           text=True, timeout=1800)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = (tmp_path / 'dist').glob('pkm_dynamics-*.whl')
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    cached = {Path(n).name.split('.')[0] for n in names if n.endswith('.nbi')}
    expected = {'chain_kernels', 'limb_ik_kernels', 'robot_dynamics', 'hoid_kernels', 'scalar_forms',
                'simulation_kernels'}
    assert expected <= cached, sorted(cached)
    assert 'pkm_dynamics/core/numba_support/__pycache__/pkm_dynamics_kernel_sources' in names
    installed = subprocess.run([*pip, 'install', '--no-deps', '--no-compile', '--target',
                                str(tmp_path / 'site'), str(wheel)], env=env,
                               capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    where, compiled = kernel_probe(tmp_path / 'site')
    assert where.is_relative_to(tmp_path / 'site')
    assert compiled == 0, f'{compiled} kernel signatures compiled in the installed wheel'
