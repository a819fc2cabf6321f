"""Demo: the installed pkm_dynamics node on the HIAB crane (heavy_duty_4dof), from a client.

    make demo
    .venv/bin/python scripts/demo.py [--plot PATH]

Starts the node on `heavy_duty_4dof` (a chain of two hydraulic-cylinder 4-bar loops, a slew
joint and a telescopic extension), calls each service (model info, inverse dynamics of one
point and of a trajectory, forward dynamics, higher-order inverse dynamics, forward and
inverse kinematics of the crane's tool pose), streams a 2 s trajectory through the
feedforward topic (efforts, and the cylinders' chamber pressures and valve spool commands),
simulates the crane driven by the feedforward it received (the core's `robot.simulate`),
prints a summary and writes a plot of the feedforward efforts, pressures and spool commands and
of the simulated tracking error (default build/demo/feedforward_efforts.png). A second node
serves the 3-RRR planar PKM to show inverse kinematics in task space.

DDS stays on this machine (loopback, a domain of this process); the nodes run as child
processes and are stopped with SIGINT at the end. The demo stops by itself.
"""
import argparse
from pathlib import Path
import sys
import tempfile
import time

import numpy as np

from pkm_dynamics.testing import Client, Collector, NodeProcess, spin_until, use_loopback_ros

REPO = Path(__file__).resolve().parents[1]
ROBOTS = REPO / 'pkm_dynamics' / 'robots'
DEFAULT_PLOT = REPO / 'build' / 'demo' / 'feedforward_efforts.png'
DURATION, RATE = 2.0, 200.0           # feedforward stream: 2 s at 200 Hz


def crane_motion(t):
    """Actuator positions, velocities, accelerations (slew [rad], lift, tilt, extension [m])
    of a smooth rest-to-rest move (quintic time law) over DURATION."""
    start = np.array([0.0, 0.10, 0.10, 0.20])
    goal = np.array([0.8, 0.45, 0.35, 0.90])
    s = np.clip(t / DURATION, 0.0, 1.0)
    p = 10 * s**3 - 15 * s**4 + 6 * s**5
    dp = (30 * s**2 - 60 * s**3 + 30 * s**4) / DURATION
    ddp = (60 * s - 180 * s**2 + 120 * s**3) / DURATION**2
    d = goal - start
    return start + d * p, d * dp, d * ddp


def simulate_feedforward(t, efforts, units):
    """The crane (the core's model of the same description) simulated with RK4 at 1 ms, driven
    by the node's feedforward efforts (linearly interpolated between the references): it
    follows the reference motion; the error is that of the interpolation of the 200 Hz stream
    (evaluating the inverse dynamics at every integration step instead, it is at round-off)."""
    from pkm_dynamics.core import load_robot
    robot = load_robot(str(ROBOTS / 'heavy_duty_4dof.urdf'))
    x0, xd0, _ = crane_motion(0.0)
    start = time.monotonic()
    sim = robot.simulate(x0, xd0, t[-1], dt=1e-3, efforts=lambda s: np.array(
        [np.interp(s, t, efforts[:, j]) for j in range(efforts.shape[1])]))
    wall = time.monotonic() - start
    error = sim.x - np.array([crane_motion(s)[0] for s in sim.t])
    exact = robot.simulate(x0, xd0, t[-1], dt=1e-3,
                           efforts=lambda s: robot.inverse_dynamics(*crane_motion(s)))
    exact_error = np.abs(exact.x - np.array([crane_motion(s)[0] for s in exact.t])).max()
    print(f'\n== simulation (core, RK4 at 1 ms): the crane driven by that feedforward, '
          f'{sim.t[-1]:.1f} s in {wall:.2f} s ({sim.t[-1] / wall:.1f}x real time)')
    worst = np.abs(error).max(axis=0)
    print('  max |x - x_ref| per actuator: ' + ', '.join(
        f'{v:.3g} {"rad" if u == "N m" else "m"}' for v, u in zip(worst, units)))
    print(f'  (the feedforward evaluated at every step instead: max error {exact_error:.2g})')
    return sim, error


def fmt(values, unit=''):
    return '[' + ', '.join(f'{v:10.4g}' for v in values) + ']' + (f' {unit}' if unit else '')


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--plot', type=Path, default=DEFAULT_PLOT,
                        help=f'PNG to write (default: {DEFAULT_PLOT.relative_to(REPO)})')
    args = parser.parse_args()

    env = use_loopback_ros()  # before rclpy.init, inherited by the node processes
    import rclpy
    from geometry_msgs.msg import PoseStamped
    from pkm_dynamics_interfaces.srv import (ForwardDynamics, ForwardKinematics, GetModelInfo,
                                             HigherOrderInverseDynamics, InverseDynamics,
                                             InverseKinematics)
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    print(f'DDS: loopback only, ROS_DOMAIN_ID={env["ROS_DOMAIN_ID"]}')
    with tempfile.TemporaryDirectory(prefix='pkm_dynamics_demo_') as workdir:
        crane = NodeProcess(workdir, name='crane', params={
            'robot_description': (ROBOTS / 'heavy_duty_4dof.urdf').read_text(),
            'feedforward.outputs': ['commands', 'joint_state', 'pressure', 'valve']})
        pkm = NodeProcess(workdir, name='pkm', ros_args=['-r', '__node:=pkm_dynamics_3rrr'],
                          params={'robot_description': (ROBOTS / 'planar_3rrr.urdf').read_text(),
                                  'completion.enabled': False})
        try:
            with rclpy.init():
                node = rclpy.create_node('pkm_dynamics_demo')
                result = run(node, Client(node), Client(node, '/pkm_dynamics_3rrr'), args.plot,
                             (ForwardDynamics, ForwardKinematics, GetModelInfo,
                              HigherOrderInverseDynamics, InverseDynamics, InverseKinematics,
                              JointState, JointTrajectory, JointTrajectoryPoint, PoseStamped,
                              Float64MultiArray))
        finally:
            codes = [crane.stop(), pkm.stop()]
        print(f'\nnodes stopped with SIGINT, exit codes {codes}')
        return 0 if result and codes == [0, 0] else 1


def run(node, client, pkm_client, plot, types):
    (ForwardDynamics, ForwardKinematics, GetModelInfo, HigherOrderInverseDynamics,
     InverseDynamics, InverseKinematics, JointState, JointTrajectory, JointTrajectoryPoint,
     PoseStamped, Float64MultiArray) = types

    info = client.call(GetModelInfo, 'get_model_info')
    if not info.success:
        print(f'the node could not load the description: {info.message}')
        return False
    names = list(info.actuated_joints)
    units = ['N m' if n == 'slew' else 'N' for n in names]
    print(f'\n== /pkm_dynamics/get_model_info\nmodel "{info.robot_name}" ({info.kind}, '
          f'{info.num_bodies} links, {info.total_mass:.1f} kg)')
    print(f'  actuated joints : {", ".join(names)}')
    print(f'  tree joints     : {", ".join(info.tree_joints)}')

    x, xd, xdd = crane_motion(0.6)
    request = InverseDynamics.Request()
    request.trajectory.joint_names = names
    request.trajectory.points = [JointTrajectoryPoint(positions=list(x), velocities=list(xd),
                                                      accelerations=list(xdd))]
    response = client.call(InverseDynamics, 'inverse_dynamics', request)
    print('\n== /pkm_dynamics/inverse_dynamics (one point)')
    print(f'  x   = {fmt(x)}  (slew rad, cylinders and extension m)')
    print(f'  u   = {fmt(response.feedforward.points[0].effort)}  '
          f'(slew N m, cylinders and extension N)' if response.success else
          f'  failed: {response.message}')
    f = np.array(response.feedforward.points[0].effort)

    times = np.linspace(0.0, DURATION, 101)
    request.trajectory.points = []
    for t in times:
        p, v, a = crane_motion(t)
        point = JointTrajectoryPoint(positions=list(p), velocities=list(v),
                                     accelerations=list(a))
        point.time_from_start.sec, point.time_from_start.nanosec = int(t), int(t % 1 * 1e9)
        request.trajectory.points.append(point)
    start = time.perf_counter()
    response = client.call(InverseDynamics, 'inverse_dynamics', request)
    elapsed = time.perf_counter() - start
    print(f'\n== /pkm_dynamics/inverse_dynamics (trajectory of {len(times)} points in one call)')
    print(f'  {response.message} in {elapsed * 1e3:.0f} ms; peak |u| per actuator: '
          f'{fmt(np.abs([p.effort for p in response.feedforward.points]).max(axis=0))}')

    fd = ForwardDynamics.Request()
    fd.joint_state.name = names[::-1]              # any order: matched by name
    fd.joint_state.position = list(x[::-1])
    fd.joint_state.velocity = list(xd[::-1])
    fd.joint_state.effort = list(f[::-1])
    response = client.call(ForwardDynamics, 'forward_dynamics', fd)
    print('\n== /pkm_dynamics/forward_dynamics (with the efforts above)')
    print(f'  xdd = {fmt(response.acceleration)}  (= the requested {fmt(xdd)})')

    hoid = HigherOrderInverseDynamics.Request()
    hoid.motion.name = names
    hoid.motion.position, hoid.motion.velocity, hoid.motion.acceleration = (
        list(x), list(xd), list(xdd))
    response = client.call(HigherOrderInverseDynamics, 'higher_order_inverse_dynamics', hoid)
    print(f'\n== /pkm_dynamics/higher_order_inverse_dynamics (method: {response.method})')
    print(f'  u   = {fmt(response.effort.effort)}')
    print(f'  du  = {fmt(response.effort.effort_rate)}  per s')
    print(f'  ddu = {fmt(response.effort.effort_acceleration)}  per s^2')
    h = response.hydraulics
    cylinders = list(h.name)
    print(f'  cylinders {", ".join(cylinders)}: p_A {fmt(np.array(h.pressure_a) / 1e5, "bar")}, '
          f'p_B {fmt(np.array(h.pressure_b) / 1e5, "bar")}')
    print(f'  spool {fmt(h.spool)}, flow into A {fmt(np.array(h.flow_a) * 6e4, "L/min")}, '
          f'hydraulic power {fmt(np.array(h.hydraulic_power) / 1e3, "kW")}')

    # the tool pose of x (forward kinematics, in the root link frame), and back to actuator
    # values, seeded with x (of several solutions within the strokes, the nearest the seed)
    fk = ForwardKinematics.Request()
    fk.actuator_state.name, fk.actuator_state.position = names, list(x)
    ik = InverseKinematics.Request()
    ik.pose = client.call(ForwardKinematics, 'forward_kinematics', fk).pose
    ik.seed = fk.actuator_state
    response = client.call(InverseKinematics, 'inverse_kinematics', ik)
    print('\n== /pkm_dynamics/forward_kinematics, then /pkm_dynamics/inverse_kinematics')
    p = ik.pose.pose.position
    if response.success:
        print(f'  crane: tool at ({p.x:.3f}, {p.y:.3f}, {p.z:.3f}) m -> actuators '
              f'{fmt(response.actuator_state.position)} (requested x: {fmt(x)}); '
              f'{response.iterations[0]} iterations, pose error {response.residual:.1e}')
    else:
        print(f'  crane: error code {response.error_code.val}: {response.message}')
    pkm_info = pkm_client.call(GetModelInfo, 'get_model_info')
    ik = InverseKinematics.Request(pose=PoseStamped())    # frame_id empty: the root link
    ik.pose.pose.position.x, ik.pose.pose.position.y = 0.01, -0.01
    response = pkm_client.call(InverseKinematics, 'inverse_kinematics', ik)
    if response.success:
        print(f'  {pkm_info.robot_name} (task space {" ".join(pkm_info.task_space)}), platform '
              f'moved by (0.01, -0.01) m: actuators {fmt(response.actuator_state.position, "rad")}'
              f'; {len(response.joint_state.name)} tree joints; iterations per limb '
              f'{list(response.iterations)}; loop residual {response.residual:.1e}')
    else:
        print(f'  {pkm_info.robot_name}: {response.message}')

    # feedforward: stream references, one JointState with effort comes back for each
    states = Collector(node, JointState, '/pkm_dynamics/feedforward/joint_states')
    pressures = Collector(node, Float64MultiArray, '/pkm_dynamics/feedforward/pressure')
    valves = Collector(node, Float64MultiArray, '/pkm_dynamics/feedforward/valve_commands')
    publisher = node.create_publisher(JointTrajectory, '/pkm_dynamics/reference', 100)
    spin_until(node, lambda: publisher.get_subscription_count() > 0
               and states.subscription.get_publisher_count() > 0)
    stream_t = np.arange(0.0, DURATION + 1e-9, 1.0 / RATE)
    print(f'\n== feedforward: {len(stream_t)} references on /pkm_dynamics/reference at '
          f'{RATE:.0f} Hz')
    start = time.monotonic()
    # stamped on one time base, the stream's start + t: the node's estimate of the jerk (for the
    # compressibility term of the pressures and spool commands) differentiates over the stamps
    origin = node.get_clock().now().nanoseconds
    for k, t in enumerate(stream_t):
        p, v, a = crane_motion(t)
        msg = JointTrajectory(joint_names=names, points=[JointTrajectoryPoint(
            positions=list(p), velocities=list(v), accelerations=list(a))])
        stamp = origin + int(round(t * 1e9))
        msg.header.stamp.sec, msg.header.stamp.nanosec = stamp // 10**9, stamp % 10**9
        publisher.publish(msg)
        spin_until(node, lambda: False, timeout=max(0.0, start + (k + 1) / RATE
                                                   - time.monotonic()))
    states.wait_for(node, len(stream_t), timeout=10.0)
    pressures.wait_for(node, len(stream_t), timeout=10.0)
    valves.wait_for(node, len(stream_t), timeout=10.0)
    got = states.messages
    efforts = np.array([m.effort for m in got])
    pressure = np.array([m.data for m in pressures.messages]).reshape(len(pressures.messages), -1, 2)
    spool = np.array([m.data for m in valves.messages])
    print(f'  {len(got)} feedforward outputs on /pkm_dynamics/feedforward/joint_states '
          f'(and commands), {len(pressure)} on pressure, {len(spool)} on valve_commands')
    for j, name in enumerate(names):
        line = (f'  {name:10s}: effort from {efforts[:, j].min():10.1f} to '
                f'{efforts[:, j].max():10.1f} {units[j]}')
        if name in cylinders and len(spool):
            c = cylinders.index(name)
            line += (f'; p_A, p_B up to {pressure[:, c, 0].max() / 1e5:5.0f}, '
                     f'{pressure[:, c, 1].max() / 1e5:5.0f} bar; spool {spool[:, c].min():+.2f} .. '
                     f'{spool[:, c].max():+.2f}')
        print(line)
    if len(spool) and np.abs(spool).max() > 1:
        print('  (a spool beyond 1: the move is faster than that valve delivers at full opening; '
              'the node warns naming it and publishes all the same)')

    t_out = stream_t[:len(got)]
    sim, error = simulate_feedforward(t_out, efforts, units)

    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(names), 4, sharex=True, figsize=(19, 8))
    for j, (ax, name) in enumerate(zip(axes[:, 0], names)):
        ax.plot(t_out, efforts[:, j])
        ax.set_ylabel(f'{name} [{units[j]}]')
        ax.grid(True)
    for j, name in enumerate(names):          # pressures and spool next to the force
        ax_p, ax_s = axes[j, 1], axes[j, 2]
        if name in cylinders and len(spool):
            c = cylinders.index(name)
            ax_p.plot(stream_t[:len(pressure)], pressure[:, c, 0] / 1e5, label='p_A')
            ax_p.plot(stream_t[:len(pressure)], pressure[:, c, 1] / 1e5, label='p_B')
            ax_p.legend(fontsize=8, loc='upper right')
            ax_s.plot(stream_t[:len(spool)], spool[:, c])
        else:
            for ax in (ax_p, ax_s):
                ax.text(0.5, 0.5, 'no cylinder', ha='center', va='center', transform=ax.transAxes)
        ax_p.set_ylabel(f'{name} [bar]')
        ax_s.set_ylabel(f'{name} spool [-]')
        ax_p.grid(True)
        ax_s.grid(True)
    for j, (ax, name) in enumerate(zip(axes[:, 3], names)):
        ax.plot(sim.t, error[:, j] * 1e3)
        ax.set_ylabel(f'{name} error [{"mrad" if units[j] == "N m" else "mm"}]')
        ax.grid(True)
    axes[0, 0].set_title(f'{info.robot_name}: feedforward efforts from pkm_dynamics '
                         f'({len(got)} references, {RATE:.0f} Hz)', fontsize=10)
    axes[0, 1].set_title('chamber pressures (feedforward/pressure)', fontsize=10)
    axes[0, 2].set_title('valve spool commands (feedforward/valve_commands)', fontsize=10)
    axes[0, 3].set_title('simulated crane driven by the efforts: x - x_ref', fontsize=10)
    for ax in axes[-1]:
        ax.set_xlabel('time [s]')
    fig.tight_layout()
    plot.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(plot, dpi=100)
    print(f'\nplot of the feedforward efforts: {plot}')
    return len(got) == len(stream_t)


if __name__ == '__main__':
    sys.exit(main())
