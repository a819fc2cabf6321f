# Embedded environment for pkm_dynamics: a virtualenv with the ROS 2 PyPI wheels, the
# interfaces package built with CMake into it, and pkm_dynamics installed into it.
#   make setup   build or update .venv (idempotent; redoes only what changed)
#   make demo    start the node on a small robot and query it
#   make test    the whole pytest suite against the installed package (TESTS=... for a subset)
#   make docs    the documentation pages (pkm_dynamics/doc, Sphinx) into build/docs; warnings fail
#   make bench   every bench/bench_*.py
#   make clean   remove .venv and build/

PYTHON ?= python3.11
VENV   := $(CURDIR)/.venv
BUILD  := $(CURDIR)/build
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check
STAMPS := $(VENV)/.stamps
TESTS  ?= pkm_dynamics/test

# The embedded environment must not mix with a sourced ROS install or another venv.
# LD_LIBRARY_PATH is set by the venv's ros_wheels_bootstrapper when Python starts.
unexport PYTHONPATH AMENT_PREFIX_PATH CMAKE_PREFIX_PATH COLCON_PREFIX_PATH LD_LIBRARY_PATH \
	_ROS_WHEELS_BOOTSTRAP_COMPLETE

INTERFACE_SOURCES := pkm_dynamics_interfaces/CMakeLists.txt pkm_dynamics_interfaces/package.xml \
	$(wildcard pkm_dynamics_interfaces/srv/*.srv pkm_dynamics_interfaces/msg/*.msg) \
	cmake/wheel_python_includes.cmake
# Everything that goes into the pkm_dynamics wheel (directories too, so deletions count).
PACKAGE_SOURCES := pkm_dynamics/setup.py pkm_dynamics/setup.cfg pkm_dynamics/pyproject.toml \
	pkm_dynamics/package.xml \
	$(shell find pkm_dynamics/pkm_dynamics pkm_dynamics/resource pkm_dynamics/launch \
		pkm_dynamics/config pkm_dynamics/robots -name __pycache__ -prune -o -print 2>/dev/null)

.PHONY: setup test docs demo bench clean

setup: $(STAMPS)/pkm_dynamics

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMPS)/requirements: requirements-ros.txt requirements.txt | $(PY)
	$(PIP) install --quiet -r requirements-ros.txt -r requirements.txt
	mkdir -p $(STAMPS) && touch $@

# CMAKE_PROJECT_INCLUDE: see cmake/wheel_python_includes.cmake (the wheels' exported
# Python include paths point at the machine that built them).
$(STAMPS)/interfaces: $(INTERFACE_SOURCES) $(STAMPS)/requirements
	cmake -S pkm_dynamics_interfaces -B $(BUILD)/pkm_dynamics_interfaces \
		-DCMAKE_PREFIX_PATH=$(VENV) -DCMAKE_INSTALL_PREFIX=$(VENV) \
		-DPython3_EXECUTABLE=$(PY) \
		-DCMAKE_PROJECT_INCLUDE=$(CURDIR)/cmake/wheel_python_includes.cmake
	cmake --build $(BUILD)/pkm_dynamics_interfaces --parallel 2
	cmake --install $(BUILD)/pkm_dynamics_interfaces
	$(PY) -c 'from pkm_dynamics_interfaces.srv import GetModelInfo'
	touch $@

# A regular (non-editable) install: tests and demo run what a user gets. pip puts the node in
# bin/; colcon (setup.cfg) in lib/pkm_dynamics/, where `ros2 run` and launch look for it.
# The numba kernels are compiled once into the installed package's cache (by the build, see
# setup.py; the warm-up after it checks they load), so tests, demo and node start warm (the
# caches of the previous install go first: pip does not know them).
$(STAMPS)/pkm_dynamics: $(PACKAGE_SOURCES) | $(STAMPS)/interfaces
	rm -rf pkm_dynamics/build pkm_dynamics/*.egg-info
	rm -rf $(VENV)/lib/python*/site-packages/pkm_dynamics/core/*/__pycache__
	$(PIP) install --quiet --no-deps --no-build-isolation --force-reinstall ./pkm_dynamics
	rm -rf pkm_dynamics/build pkm_dynamics/*.egg-info
	mkdir -p $(VENV)/lib/pkm_dynamics
	ln -sf ../../bin/pkm_dynamics_node $(VENV)/lib/pkm_dynamics/pkm_dynamics_node
	$(PY) -m pkm_dynamics.core.precompile
	touch $@

test: setup
	$(PY) -m pytest $(TESTS)

# The pages need Sphinx and what autodoc imports (the core's requirements), not the installed
# package: conf.py puts the package source beside it on sys.path. rosdoc2 builds the same
# directory (pkm_dynamics/rosdoc2.yaml).
docs: $(STAMPS)/requirements
	$(PY) -m sphinx -W --keep-going -q -b html -d $(BUILD)/docs-doctrees pkm_dynamics/doc $(BUILD)/docs
	@echo "documentation: $(BUILD)/docs/index.html"

demo: setup
	$(PY) scripts/demo.py

bench: setup
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) $(BUILD) pkm_dynamics/build pkm_dynamics/*.egg-info
