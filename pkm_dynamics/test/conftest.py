"""Fixtures shared by the test suite.

ROS-free (core) tests need nothing from here. Node tests use:
- the session-wide loopback DDS settings (autouse): ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST,
  ROS_LOCALHOST_ONLY=1 and a ROS_DOMAIN_ID of this test session, set before any rclpy.init
  and inherited by every node process the tests start;
- `start_node(params=None, params_files=())`: starts the INSTALLED pkm_dynamics_node as a
  child process and returns its `NodeProcess`; whatever is still running is stopped at the
  end of the test;
- `ros_node`: an rclpy node in the pytest process (own context, no signal handlers), for
  service clients and subscriptions; see `pkm_dynamics.testing.call_service`.
rclpy is imported lazily, so ROS-free tests never load it.
"""
import os

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


@pytest.fixture
def start_node(tmp_path):
    started = []

    def start(params=None, params_files=()):
        process = NodeProcess(tmp_path, params=params, params_files=params_files,
                              name=f'pkm_dynamics_node_{len(started)}')
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()


@pytest.fixture
def ros_node():
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
