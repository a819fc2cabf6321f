import os

from setuptools import find_packages, setup

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
    extras_require={'test': ['pytest', 'pin']},
    zip_safe=True,
    maintainer='pkm_dynamics maintainers',
    maintainer_email='maintainers@pkm-dynamics.org',
    description='Dynamics of closed-loop robots (parallel-serial manipulators, PKMs) '
                'as a ROS 2 node on a ROS-free core.',
    license='BSD-3-Clause',
    entry_points={
        'console_scripts': [
            'pkm_dynamics_node = pkm_dynamics.dynamics_node:main',
        ],
    },
)
