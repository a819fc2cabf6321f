"""Run the installed node on this machine only: for tests, the demo and benchmarks.

Every process that touches ROS must keep DDS traffic on loopback and on its own domain:
`loopback_ros_env()` gives the variables, `use_loopback_ros()` sets them for the calling
process (before `rclpy.init`), and `NodeProcess` starts the installed `pkm_dynamics_node`
as a child process with them. `call_service`, `Client` (persistent service clients),
`Collector` (a subscription that keeps what it receives) and `spin_until` talk to it from
an rclpy node of the calling process. rclpy is imported only inside them, so importing this
module costs nothing for ROS-free code.

For the core's tests of module chains: `module_chain_sources` (the chains they sweep),
`chain_states` (random states inside the strokes) and `frictionless` (a description without its
friction elements).

This module is test, demo (`scripts/demo.py`) and benchmark (`bench/`) support, not part of the
node's runtime (`pkm_dynamics.node`): the node never imports it. It stays at the package's top
level so that all of them import it from the installed package as `pkm_dynamics.testing`.
"""
import os
from pathlib import Path
import signal
import subprocess
import sys
import time

import yaml

NODE_EXECUTABLE = 'pkm_dynamics_node'


def module_chain_sources(robots_dir):
    """The module chains the core tests sweep, name -> description: the two example robots of
    `robots_dir` (heavy-duty crane, one linear 4-bar module) without their friction (the
    numpy reference route of paper 000 has none; friction: test/core/friction/) and generated
    chains of 1, 3 (untwisted) and 8 modules."""
    from pkm_dynamics.core.description.examples import module_chain_urdf
    return {'heavy_duty_4dof': frictionless(os.path.join(robots_dir, 'heavy_duty_4dof.urdf')),
            'linear_4bar_1dof': frictionless(os.path.join(robots_dir, 'linear_4bar_1dof.urdf')),
            'chain_1': module_chain_urdf(1), 'chain_3': module_chain_urdf(3, twist=0.0),
            'chain_8': module_chain_urdf(8)}


def without_hydraulics(text):
    """A robot description's text (or the file it names) without its `<hydraulics>` element: the
    actuator limits are then the URDF's alone (the cylinders tighten them otherwise)."""
    import re
    if not text.lstrip().startswith('<'):
        with open(text, encoding='utf-8') as f:
            text = f.read()
    return re.sub(r'\n?[ \t]*<hydraulics\b.*?</hydraulics>', '', text, flags=re.S)


def frictionless(text):
    """A robot description's text (or the file it names) without joint or actuator friction:
    every URDF `<dynamics .../>` and `<friction .../>` element removed (the independent routes
    that know no friction compare against this robot)."""
    import re
    if not text.lstrip().startswith('<'):
        with open(text, encoding='utf-8') as f:
            text = f.read()
    return re.sub(r'\n?[ \t]*<(?:dynamics|friction)\b[^>]*/>', '', text)


def with_friction(text, actuators=(), cylinder=None, damping=0.1, coulomb=2.0):
    """A robot description's text with `<dynamics damping coulomb>` on every revolute /
    continuous joint not in `actuators` and a `<friction>` element with the attributes
    `cylinder` (dict, default the HIAB cylinder curve: Coulomb 4000 N, viscous 3000 N s/m,
    smoothing 0.01 m/s) on each of `actuators`."""
    import re
    cylinder = dict(coulomb=4000.0, viscous=3000.0, smoothing_velocity=0.01) if cylinder is None else cylinder

    def add(m):
        if m.group(1) in actuators:
            return m.group(0)
        return m.group(0) + f'\n    <dynamics damping="{damping}" friction="{coulomb}"/>'
    text = re.sub(r'<joint name="([^"]+)" type="(?:revolute|continuous)">', add, text)
    attrs = " ".join(f'{k}="{v}"' for k, v in cylinder.items())
    rows = "".join(f'    <friction joint="{a}" {attrs}/>\n' for a in actuators)
    return re.sub(r'<pkm_dynamics>\s*\n', lambda m: m.group(0) + rows, text, count=1)


def chain_states(robot, rng, batch=None, fractions=(0.05, 0.95), rate_scale=1.0, wrench_scale=100.0):
    """Random states of a module-chain robot: positions inside the strokes (between the
    `fractions` of each, an unlimited joint taken as [-1, 1]), velocities (normal, scale
    `rate_scale`), accelerations (standard normal) and end-effector wrenches (normal, scale
    `wrench_scale`), drawn from `rng` in that order; shapes (batch, n) and (batch, 6), or (n,)
    and (6,) when `batch` is None."""
    import numpy as np
    lo = np.array([i.lower for i in robot.chain.info])
    hi = np.array([i.upper for i in robot.chain.info])
    lo, hi = np.where(np.isfinite(lo), lo, -1.0), np.where(np.isfinite(hi), hi, 1.0)
    shape = (robot.n,) if batch is None else (batch, robot.n)
    x = lo + (hi - lo) * rng.uniform(fractions[0], fractions[1], shape)
    return (x, rng.normal(scale=rate_scale, size=shape), rng.normal(size=shape),
            rng.normal(scale=wrench_scale, size=shape[:-1] + (6,)))


def loopback_ros_env(domain_id=None):
    """DDS settings that keep ROS traffic on this machine, on a domain of our own.

    The domain defaults to one derived from the process id, in 1..100 (Fast DDS's ports for
    domains up to ~101 stay below the Linux ephemeral port range).
    """
    if domain_id is None:
        domain_id = 1 + os.getpid() % 100
    return {
        'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
        'ROS_LOCALHOST_ONLY': '1',
        'ROS_DOMAIN_ID': str(domain_id),
    }


def use_loopback_ros(domain_id=None):
    """Set loopback_ros_env() in os.environ (call before rclpy.init); return the values."""
    env = loopback_ros_env(domain_id)
    os.environ.update(env)
    return env


def node_executable(name=NODE_EXECUTABLE):
    """Path of an installed console script of this package.

    Looks in the running interpreter's prefix (the venv of `make setup`: lib/pkm_dynamics/
    as colcon lays it out, where `ros2 run` looks, or bin/), then in the ament index (a
    colcon install).
    """
    prefix = Path(sys.prefix)
    for candidate in (prefix / 'lib' / 'pkm_dynamics' / name, prefix / 'bin' / name):
        if candidate.is_file():
            return candidate
    try:
        from ament_index_python.packages import get_package_prefix
        candidate = Path(get_package_prefix('pkm_dynamics')) / 'lib' / 'pkm_dynamics' / name
        if candidate.is_file():
            return candidate
    except (ImportError, LookupError, OSError, ValueError):  # no ament index here
        pass
    raise FileNotFoundError(
        f'{name} is not installed in {prefix} nor in the ament index: run `make setup` '
        f'(or `colcon build` and source install/setup.bash)')


def write_params_file(path, params, node_name='/**'):
    """Write a ROS 2 parameter file setting `params` (a dict) for `node_name`."""
    path = Path(path)
    path.write_text(yaml.safe_dump({node_name: {'ros__parameters': dict(params)}}))
    return path


class NodeProcess:
    """The installed node as a child process; stop() sends SIGINT like Ctrl-C.

    params: dict of parameters, written to a parameter file in `workdir`;
    params_files: further parameter files, loaded before `params`;
    env: extra environment (the loopback DDS variables of this process are always set);
    ros_args: further --ros-args arguments (remappings such as `-r __node:=other`).
    Output goes to `workdir/<name>.log` (see `log()`).
    """

    def __init__(self, workdir, params=None, params_files=(), env=None,
                 executable=NODE_EXECUTABLE, name='node', ros_args=()):
        workdir = Path(workdir)
        workdir.mkdir(parents=True, exist_ok=True)
        args = [str(node_executable(executable)), '--ros-args', *ros_args]
        for params_file in params_files:
            args += ['--params-file', str(params_file)]
        if params:
            args += ['--params-file',
                     str(write_params_file(workdir / f'{name}_params.yaml', params))]
        domain_id = os.environ.get('ROS_DOMAIN_ID')
        child_env = dict(os.environ)
        child_env.update(loopback_ros_env(int(domain_id) if domain_id else None))
        child_env.update(env or {})
        self.log_path = workdir / f'{name}.log'
        self._log_file = open(self.log_path, 'wb')
        self.process = subprocess.Popen(args, env=child_env, stdout=self._log_file,
                                        stderr=subprocess.STDOUT)

    def running(self):
        return self.process.poll() is None

    def log(self):
        """Everything the node has printed so far."""
        return self.log_path.read_text(errors='replace')

    def stop(self, timeout=10.0):
        """SIGINT, then wait up to `timeout` s; return the exit code (kill if it hangs)."""
        try:
            if self.running():
                self.process.send_signal(signal.SIGINT)
                try:
                    self.process.wait(timeout)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
                    raise TimeoutError(f'node did not exit within {timeout} s of SIGINT; '
                                       f'log:\n{self.log()}') from None
            return self.process.returncode
        finally:
            self._log_file.close()


#: a request unanswered this long is sent again (see `_request`)
RESEND_AFTER = 5.0


def _request(node, client, request, timeout, name):
    """Send `request` on `client` and spin `node` until an answer arrives; return it.

    A service that was just discovered may not have matched the client's reply reader yet, so
    a reply can be lost (a known DDS discovery race). The request is therefore sent again after
    `RESEND_AFTER` s without an answer (the services are idempotent), until `timeout` s have
    passed; then TimeoutError."""
    from rclpy.executors import SingleThreadedExecutor
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    futures = []
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            futures.append(client.call_async(request))
            resend = min(deadline, time.monotonic() + RESEND_AFTER)
            while time.monotonic() < resend:
                done = [f for f in futures if f.done()]
                if done:
                    return done[0].result()
                executor.spin_once(timeout_sec=0.05)
    finally:
        for future in futures:
            if not future.done():
                future.cancel()
        executor.remove_node(node)
        executor.shutdown()
    raise TimeoutError(f'service {name} did not answer within {timeout} s '
                       f'({len(futures)} request(s) sent)')


def call_service(node, srv_type, name, request=None, timeout=20.0):
    """Call service `name` from the rclpy `node` and return the response.

    Waits up to `timeout` s for the service to appear and as long again for the answer;
    raises TimeoutError otherwise.
    """
    client = node.create_client(srv_type, name)
    try:
        if not client.wait_for_service(timeout_sec=timeout):
            raise TimeoutError(f'service {name} did not appear within {timeout} s')
        return _request(node, client, request if request is not None else srv_type.Request(),
                        timeout, name)
    finally:
        node.destroy_client(client)


def spin_until(node, condition, timeout=10.0):
    """Spin `node` until `condition()` is true or `timeout` s have passed; return condition()."""
    from rclpy.executors import SingleThreadedExecutor
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    try:
        deadline = time.monotonic() + timeout
        while not condition() and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.02)
        return bool(condition())
    finally:
        executor.remove_node(node)
        executor.shutdown()


def matched_publisher(node, msg_type, topic, depth, subscribers=1, timeout=20.0):
    """A publisher of `node` on `topic`, returned once `subscribers` subscriptions match it
    (discovery done, so nothing published is lost); TimeoutError otherwise."""
    publisher = node.create_publisher(msg_type, topic, depth)
    if not spin_until(node, lambda: publisher.get_subscription_count() >= subscribers, timeout):
        raise TimeoutError(f'{topic}: {publisher.get_subscription_count()} of {subscribers} '
                           'subscriptions matched')
    return publisher


class Client:
    """Service clients of one node of the pkm_dynamics node (`prefix`, e.g. '/pkm_dynamics'),
    created once and reused: `client.call(srv_type, 'inverse_dynamics', request)`."""

    def __init__(self, node, prefix='/pkm_dynamics'):
        self.node = node
        self.prefix = prefix.rstrip('/')
        self._clients = {}

    def call(self, srv_type, name, request=None, timeout=30.0):
        key = (srv_type, name)
        client = self._clients.get(key)
        if client is None:
            client = self.node.create_client(srv_type, f'{self.prefix}/{name}')
            if not client.wait_for_service(timeout_sec=timeout):
                raise TimeoutError(f'service {self.prefix}/{name} did not appear within '
                                   f'{timeout} s')
            self._clients[key] = client
        return _request(self.node, client,
                        request if request is not None else srv_type.Request(), timeout,
                        f'{self.prefix}/{name}')


class Collector:
    """A reliable subscription of `node` that appends every message to `messages`."""

    def __init__(self, node, msg_type, topic, depth=1000):
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        self.messages = []
        self.subscription = node.create_subscription(
            msg_type, topic, self.messages.append,
            QoSProfile(depth=depth, reliability=ReliabilityPolicy.RELIABLE))

    def wait_for(self, node, count, timeout=20.0):
        """Spin until `count` messages arrived; return whether they did."""
        return spin_until(node, lambda: len(self.messages) >= count, timeout)

    def wait_for_publisher(self, node, timeout=20.0):
        """Spin until the topic has a publisher (discovery done)."""
        return spin_until(node, lambda: self.subscription.get_publisher_count() > 0, timeout)


class InProcessNode:
    """A DynamicsNode of the robot description ``text`` in this process (rclpy ``context``),
    configured and active, not spun: :meth:`call` runs a service's callback (what the executor
    runs for a request) on a request message and returns the response — the whole request
    path (conversions, core, response) without DDS, for tests that send many requests."""

    def __init__(self, context, text, namespace='/pkm_dynamics_in_process', parameters=()):
        from rclpy.parameter import Parameter

        from pkm_dynamics.node.dynamics_node import DynamicsNode
        self.node = DynamicsNode(context=context, namespace=namespace, parameter_overrides=[
            Parameter('robot_description', value=text), *parameters])
        self.node.trigger_configure()
        self.node.trigger_activate()
        self.model = self.node._model
        self._callbacks = {s.srv_name.rsplit('/', 1)[-1]: (s.srv_type, s.callback)
                           for s in self.node._dynamics_services}

    def call(self, service, request):
        """The response of ``service`` (e.g. 'inverse_dynamics') to ``request``."""
        srv_type, callback = self._callbacks[service]
        return callback(request, srv_type.Response())

    def destroy(self):
        self.node.topic_node.destroy_node()
        self.node.destroy_node()
