import os
import shutil
import subprocess
import sys

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py
from setuptools.command.develop import develop

package_name = 'pkm_dynamics'


def share_tree(directory):
    """data_files entries installing every file below `directory` into share/<package>.

    Walked at build time, so files added later (launch files, configs, example robots in
    their own subfolders) are installed without editing this list.
    """
    entries = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d != '__pycache__')
        if files:
            entries.append((os.path.join('share', package_name, root),
                            [os.path.join(root, name) for name in sorted(files)]))
    return entries


#: the directories of the kernel sources (every folder of the core), whose ``__pycache__`` holds
#: numba's cache
KERNEL_DIRS = tuple(d for d, _, _ in os.walk(os.path.join(package_name, 'core'))
                    if os.path.basename(d) != '__pycache__')


def precompile(root):
    """Compile the numba kernels of the package below ``root`` into its ``__pycache__``
    (``pkm_dynamics.core.precompile`` on the example robots, in a process of its own), so
    that the first start loads them instead of compiling them: numba finds them beside their
    sources and checks them by the sources' content, wherever the package is copied (see
    ``core/numba_support/cache.py``).  Where the build's Python cannot import the package's
    dependencies, or with ``PKM_DYNAMICS_PRECOMPILE=0``, nothing is compiled: the kernels are
    then compiled when the first robot is built (the node logs it)."""
    if os.environ.get('PKM_DYNAMICS_PRECOMPILE', '1') == '0':
        return
    env = {k: v for k, v in os.environ.items() if k != 'NUMBA_CACHE_DIR'}
    env['PYTHONPATH'] = os.pathsep.join(
        [os.path.abspath(root)] + [p for p in env.get('PYTHONPATH', '').split(os.pathsep) if p])
    env['PYTHONDONTWRITEBYTECODE'] = '1'
    done = subprocess.run([sys.executable, '-m', f'{package_name}.core.precompile',
                           os.path.abspath('robots')], env=env, cwd=root)
    if done.returncode != 0:
        print(f'{package_name}: kernels not precompiled (exit {done.returncode}): they are '
              'compiled when the first robot is built', file=sys.stderr)


class build_py_with_kernels(build_py):
    """build_py, then the kernels compiled into the build tree (:func:`precompile`): the wheel
    and every install made from the build (pip, ``setup.py install``, colcon) carry the cache.
    A cache the source tree already holds (a checkout whose tests ran) is copied first: what it
    has is loaded, not compiled again (the warm-up drops it if it was compiled from other
    sources)."""

    def run(self):
        super().run()
        if self.dry_run:
            return
        for directory in KERNEL_DIRS:
            source = os.path.join(directory, '__pycache__')
            target = os.path.join(self.build_lib, directory, '__pycache__')
            names = [n for n in (os.listdir(source) if os.path.isdir(source) else ())
                     if n.endswith(('.nbi', '.nbc')) or n == 'pkm_dynamics_kernel_sources']
            os.makedirs(target, exist_ok=True)
            for name in names:
                shutil.copyfile(os.path.join(source, name), os.path.join(target, name))
        precompile(self.build_lib)


class develop_with_kernels(develop):
    """develop (``colcon build --symlink-install``), then the kernels compiled in place."""

    def run(self):
        super().run()
        if not self.dry_run and not self.uninstall:
            precompile('.')


setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        *share_tree('launch'),
        *share_tree('config'),
        *share_tree('robots'),
    ],
    install_requires=['setuptools', 'numpy', 'scipy', 'numba', 'urdfdom-py==1.2.1.*', 'PyYAML'],
    extras_require={'test': ['pytest', 'pin'],
                    'analysis': ['dask[distributed]', 'xarray', 'h5netcdf', 'h5py', 'matplotlib']},
    cmdclass={'build_py': build_py_with_kernels, 'develop': develop_with_kernels},
    # the numba cache compiled at build time (build_py_with_kernels) goes with the package
    zip_safe=False,
    maintainer='pkm_dynamics maintainers',
    maintainer_email='maintainers@pkm-dynamics.org',
    description='Dynamics of closed-loop robots (parallel-serial manipulators, PKMs) '
                'as a ROS 2 node on a ROS-free core.',
    license='BSD-3-Clause',
    entry_points={
        'console_scripts': [
            'pkm_dynamics_node = pkm_dynamics.node.dynamics_node:main',
            'pkm_dynamics_analyze = pkm_dynamics.analysis.cli:main',
        ],
    },
)
