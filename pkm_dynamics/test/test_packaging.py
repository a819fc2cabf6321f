"""The package as ROS tools see it: package.xml declares what the code imports (rosdep installs
from it), and the node is installed where `ros2 run` and launch_ros look for it
(<prefix>/lib/pkm_dynamics/, as colcon installs it; `make setup` gives the venv that layout)."""
import ast
import os
from pathlib import Path
import sys
import xml.etree.ElementTree as ET

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
