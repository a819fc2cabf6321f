"""Sphinx configuration of the pkm_dynamics pages.

Built two ways from this one directory: ``make docs`` at the repository root (``sphinx-build -W``
on ``pkm_dynamics/doc``, see the Makefile) and rosdoc2 on the package (``rosdoc2.yaml`` beside
``package.xml``: ``sphinx_sourcedir: doc``).  rosdoc2 copies this directory into a build
directory of its own, executes this file from its own ``conf.py`` and puts the package on
``sys.path`` itself; a plain build puts the package source beside this directory first, so
autodoc documents the source it sits in, not an installed copy.
"""
import os
import sys

_package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.path.isfile(os.path.join(_package, 'package.xml')):
    sys.path.insert(0, _package)

project = 'pkm_dynamics'
copyright = 'pkm_dynamics maintainers, BSD-3-Clause'
author = 'pkm_dynamics maintainers'

extensions = ['sphinx.ext.autodoc']
# the public face first, members in the order of their source
autodoc_member_order = 'bysource'
autodoc_typehints = 'signature'
# rosdoc2 writes the package README and its own standard pages (``__*.rst``) beside these pages;
# with ``sphinx_sourcedir`` they are in no toctree, and the README's links name doc/ paths
exclude_patterns = ['_build', 'README.md', '__*.rst']
html_theme = 'alabaster'
html_title = 'pkm_dynamics'
