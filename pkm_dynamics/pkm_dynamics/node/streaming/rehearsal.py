"""The feedforward's rehearsal: every core call of the streams made once when the stream is
prepared (:meth:`~pkm_dynamics.node.streaming.streaming.Streaming.prepare_stream`), so that the
first reference finds the kernels' per-thread scratch and entry points ready."""
import numpy as np

from pkm_dynamics.core.forward_state import forward_state
from pkm_dynamics.core.hydraulics.hydraulic_feedforward import force_rate
from pkm_dynamics.core.hydraulics.valve_cylinder import hydraulic_state


def rehearse(robot, completion, hydraulics=False):
    """The core calls of the feedforward stream (and of the joint-state completion when
    ``completion``, of the pressure / valve outputs when ``hydraulics``), made once at the
    robot's reference state: the actuators where inverse kinematics starts
    (``robot.seed_reference``; a module chain mid-stroke, a parallel robot its reference
    configuration), at rest. Results are dropped."""
    start = dict(zip(robot.seed_joints, robot.seed_reference))
    x = np.array([start[joint] for joint in robot.actuated_joints])
    rest = np.zeros_like(x)
    if robot.passive_joints:            # the passive joints at zero, at rest
        x, rest = np.concatenate([x, np.zeros(len(robot.passive_joints))]), np.zeros(robot.n)
    if robot.state_space == 'task':
        task = np.zeros(len(robot.task_space))
        pose = robot.forward_kinematics(x)
        robot.reference_motion(pose, task, task, None)
        motion = (pose, task, task, task)
    else:
        acc = np.zeros(len(robot.actuated_joints))
        robot.inverse_dynamics(x, rest, acc)
        motion = (x, rest, acc, acc)
    if hydraulics:
        u, du = force_rate(robot, *motion, exact=False)        # the stream's rate (streaming._hydraulics)
        hydraulic_state(robot.hydraulic_model, x, rest, u, du, check=False)
    if completion:
        forward_state(robot, x, rest, joints_only=True)
