"""Reference streams of the ROS benchmarks: for each robot kind, a periodic motion as ready
reference messages (built once, so that sending one costs only its stamp and the publish).

- ``crane``: ``heavy_duty_4dof`` (module chain), JointTrajectory on ``~/reference``: the four
  actuators on sines about mid-stroke;
- ``excavator``: ``excavator`` (a chain of loops: the bucket through its rocker and coupler),
  JointTrajectory on ``~/reference``: the swing and the three cylinders on sines about
  mid-stroke, a quarter of each stroke in amplitude;
- ``irsbot2``: ``irsbot2_paths`` (paper 001), MultiDOFJointTrajectory on ``~/task_reference``:
  the parabolic path of paper 001 Sec. 6.4 (``parabolic_trajectory``), one cycle;
- ``gough_stewart``: ``gough_stewart_6ups`` (6-UPS), MultiDOFJointTrajectory: the platform
  on small sines in all six task coordinates.

One period is ``count`` references; a stream repeats it (the motion is periodic, so the IK
warm start of each reference stays the previous one's neighbour)."""
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
ROBOTS = {'crane': 'heavy_duty_4dof', 'excavator': 'excavator', 'irsbot2': 'irsbot2_paths',
          'gough_stewart': 'gough_stewart_6ups', 'grapple': 'grapple_crane'}
#: the robots whose references are actuator states (JointTrajectory on ``~/reference``)
ACTUATOR_SPACE = ('crane', 'excavator', 'grapple')
#: the robots with passive joints: their measured state (actuators and passive joints) is
#: published on ``actuator_states`` (the node's namespace) alongside every reference (:func:`measured_messages`)
PASSIVE = ('grapple',)


def description(robot):
    return (REPO / 'pkm_dynamics' / 'robots' / f'{ROBOTS[robot]}.urdf').read_text()


def topic(robot):
    """The node's input topic (relative to its ``~``) for ``robot``'s references."""
    return 'reference' if robot in ACTUATOR_SPACE else 'task_reference'


def crane_states(count):
    """(x, xd, xdd) (count, 4) each: the crane's actuators on sines about mid-stroke."""
    t = np.arange(count) / count
    w = 2 * np.pi
    amp, mid = np.array([0.3, 0.1, 0.1, 0.3]), np.array([0.0, 0.25, 0.25, 0.5])
    phase = np.arange(4)[None]
    x = mid + amp * np.sin(w * t[:, None] + phase)
    xd = amp * w * np.cos(w * t[:, None] + phase)
    xdd = -amp * w**2 * np.sin(w * t[:, None] + phase)
    return x, xd, xdd


def actuator_states(robot, count):
    """``(names, (x, xd, xdd) (count, n) each)`` of an actuator-space ``robot``: the crane's
    :func:`crane_states`; else every actuator on a sine about mid-stroke, a quarter of its
    stroke in amplitude (an unbounded joint about zero, 0.5 rad: as if its stroke were ±1), one
    period over ``count``."""
    if robot == 'crane':
        return ['slew', 'lift', 'tilt', 'extension'], crane_states(count)
    from pkm_dynamics.core import load_robot
    core = load_robot(description(robot))
    t = np.arange(count) / count
    w = 2 * np.pi
    lower, upper = core.lower[:core.n_act], core.upper[:core.n_act]     # the actuators'
    bounded = np.isfinite(lower) & np.isfinite(upper)      # else (a swing): 0 +- 0.5 rad
    lo, hi = np.where(bounded, lower, -1.0), np.where(bounded, upper, 1.0)
    mid, amp = (lo + hi) / 2, (hi - lo) / 4
    phase = np.arange(len(mid))[None]
    return list(core.actuated_joints), (mid + amp * np.sin(w * t[:, None] + phase),
                                        amp * w * np.cos(w * t[:, None] + phase),
                                        -amp * w**2 * np.sin(w * t[:, None] + phase))


def measured_messages(robot, count=1000):
    '''``count`` measured joint states (JointState) of one period of a robot with passive joints:
    the actuators at the references' positions and rates (:func:`actuator_states`), the passive
    joints swinging on sines of 0.2 rad about zero.'''
    from pkm_dynamics.core import load_robot
    from sensor_msgs.msg import JointState
    names, (x, xd, _) = actuator_states(robot, count)
    passive = list(load_robot(description(robot)).passive_joints)
    t = np.arange(count) / count
    w = 2 * np.pi
    phase = np.arange(len(passive))[None]
    p, pd = 0.2 * np.sin(w * t[:, None] + phase), 0.2 * w * np.cos(w * t[:, None] + phase)
    return [JointState(name=names + passive, position=list(np.concatenate([a, b])),
                       velocity=list(np.concatenate([ad, bd]))) for a, ad, b, bd in zip(x, xd, p, pd)]


def task_states(robot, parallel, count):
    """(poses (count, 4, 4), V_t, Vdot_t (count, dof)) of a PKM ``parallel`` (core object)."""
    from pkm_dynamics.core.pkm.parallel_robot import parabolic_trajectory
    t = np.arange(count) / count
    if robot == 'irsbot2':
        return parabolic_trajectory(t, parallel.reference_pose, 0.25, 0.45, cycles=1.0)
    w = 2 * np.pi
    amp = np.array([0.02, 0.02, 0.02, 0.01, 0.01, 0.01])[:parallel.dof]
    phase = np.arange(parallel.dof)[None]
    x = amp * np.sin(w * t[:, None] + phase)
    return (parallel.task_pose(x), amp * w * np.cos(w * t[:, None] + phase),
            -amp * w**2 * np.sin(w * t[:, None] + phase))


def reference_messages(robot, count=1000):
    """``count`` reference messages of one period of ``robot``'s motion (see module doc)."""
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    if robot in ACTUATOR_SPACE:
        names, states = actuator_states(robot, count)
        return [JointTrajectory(joint_names=names, points=[JointTrajectoryPoint(
            positions=list(x), velocities=list(xd), accelerations=list(xdd))])
            for x, xd, xdd in zip(*states)]
    from geometry_msgs.msg import Accel, Transform, Twist
    from trajectory_msgs.msg import MultiDOFJointTrajectory, MultiDOFJointTrajectoryPoint
    from pkm_dynamics.node.messages.conversions import matrix_pose, task_message
    from pkm_dynamics.core.pkm.parallel_robot import ParallelRobot
    parallel = ParallelRobot(description(robot))
    msgs = []
    for P, V, A in zip(*task_states(robot, parallel, count)):
        pose = matrix_pose(P)
        tf = Transform()
        tf.translation.x, tf.translation.y, tf.translation.z = (
            pose.position.x, pose.position.y, pose.position.z)
        tf.rotation = pose.orientation
        msgs.append(MultiDOFJointTrajectory(joint_names=['platform'], points=[
            MultiDOFJointTrajectoryPoint(
                transforms=[tf], velocities=[task_message(V, parallel.task_space, Twist)],
                accelerations=[task_message(A, parallel.task_space, Accel)])]))
    return msgs
