"""Fixtures shared by the test suite.

ROS-free (core) tests need nothing from here. Node tests use:
- the session-wide loopback DDS settings (autouse): ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST,
  ROS_LOCALHOST_ONLY=1 and a ROS_DOMAIN_ID of this test session, set before any rclpy.init
  and inherited by every node process the tests start;
- `start_node(params=None, params_files=(), name=None, ros_args=())`: starts the INSTALLED
  pkm_dynamics_node as a child process (`name`: its ROS node name, default pkm_dynamics;
  `ros_args`: further --ros-args arguments, e.g. `['-p', 'name:=value']`) and returns its
  `NodeProcess`; whatever is still running is stopped at the end of the test;
- `ros_node`: an rclpy node in the pytest process (own context, no signal handlers), for
  service clients and subscriptions; see `pkm_dynamics.testing.call_service`;
- `module_node(params)` and `module_ros_node`: the same with module scope, so a test module
  starts each node process once (the processes are stopped when the module ends);
- `served_robot(example, name, **params)`: a module node serving an example robot, returned
  with the core's robot of the same description and a `Client` of it;
- `example_robot(name)`: the text of an example robot description of the source tree.
rclpy is imported lazily, so ROS-free tests never load it.
"""
import os
from pathlib import Path

import pytest

from pkm_dynamics.testing import NodeProcess, use_loopback_ros


@pytest.fixture(scope='session', autouse=True)
def loopback_ros_env():
    """Keep DDS on loopback, on a domain of this session (derived from the pytest pid)."""
    saved = dict(os.environ)
    env = use_loopback_ros()
    yield env
    os.environ.clear()
    os.environ.update(saved)


def _node_starter(workdir):
    """A ``start(params=None, params_files=(), name=None, ros_args=())`` function starting node
    processes (logs in ``workdir``; ``name`` sets the ROS node name; ``ros_args`` are further
    --ros-args arguments) and the list of those started."""
    started = []

    def start(params=None, params_files=(), name=None, ros_args=()):
        args = (['-r', f'__node:={name}'] if name else []) + list(ros_args)
        process = NodeProcess(workdir, params=params, params_files=params_files,
                              name=f'pkm_dynamics_node_{len(started)}', ros_args=args)
        started.append(process)
        return process

    return start, started


@pytest.fixture
def start_node(tmp_path):
    start, started = _node_starter(tmp_path)
    yield start
    for process in started:
        process.stop()


def _client_node():
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    context = rclpy.Context()
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node(f'pkm_dynamics_test_client_{os.getpid()}', context=context)
    try:
        yield node
    finally:
        node.destroy_node()
        context.try_shutdown()


@pytest.fixture
def ros_node():
    yield from _client_node()


@pytest.fixture(scope='module')
def module_ros_node():
    yield from _client_node()


@pytest.fixture(scope='module')
def rclpy_context():
    """An rclpy context of this test module (for nodes created in-process)."""
    import rclpy
    from rclpy.signals import SignalHandlerOptions
    context = rclpy.Context()
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    yield context
    context.try_shutdown()


@pytest.fixture(scope='module')
def module_node(tmp_path_factory):
    """`module_node(params=None, params_files=(), name=None)` starts a node process kept
    for the whole test module; `name` sets the node's ROS name (default pkm_dynamics)."""
    start, started = _node_starter(tmp_path_factory.mktemp('nodes'))
    yield start
    for process in started:
        process.stop()


ROBOTS = Path(__file__).resolve().parents[1] / 'robots'


@pytest.fixture(scope='session')
def example_robot():
    def text(name):
        return (ROBOTS / f'{name}.urdf').read_text()
    return text


@pytest.fixture(scope='module')
def served_robot(module_node, module_ros_node, example_robot):
    """`served_robot(example, name, **params)` starts a node process named `name` serving the
    example robot `example` (further parameters `params`) for the whole test module and
    returns `(robot, client, process)`: the core's robot of the same description, a
    `Client` of that node and its `NodeProcess`."""
    from pkm_dynamics.core import load_robot
    from pkm_dynamics.testing import Client

    def serve(example, name, **params):
        text = example_robot(example)
        process = module_node(params={'robot_description': text, **params}, name=name)
        return load_robot(text), Client(module_ros_node, f'/{name}'), process
    return serve
