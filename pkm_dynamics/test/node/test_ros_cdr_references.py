"""The references read from their serialized bytes (cdr_messages) against rclpy's own
serialization: every field of JointTrajectory and MultiDOFJointTrajectory messages of several
shapes (strings of each length modulo 4 before the doubles, empty and filled sequences, several
points, non-ASCII names) comes back equal, and a task point's values read at once equal those
of its fields; another encapsulation goes to rclpy's
deserialization; a payload cut short is refused naming its length."""
from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import Quaternion, Transform, Twist, Vector3
import numpy as np
from numpy.testing import assert_array_equal
import pytest
from rclpy.serialization import serialize_message
from std_msgs.msg import Header
from trajectory_msgs.msg import (JointTrajectory, JointTrajectoryPoint, MultiDOFJointTrajectory,
                                 MultiDOFJointTrajectoryPoint)

from pkm_dynamics.node.messages.cdr_messages import read_reference
from pkm_dynamics.node.messages.conversions import RequestError
from pkm_dynamics.node.messages.state_messages import task_point_values


def header(k):
    return Header(stamp=Time(sec=1700000000 + k, nanosec=123456789 - k),
                  frame_id='base_link'[:k % 9])       # lengths 0..8: every alignment


def joint_trajectory(k, rng):
    names = ['slew', 'lift', 'tilt', 'ext\u00e9nsion'][:1 + k % 4]
    n = len(names)
    points = []
    for p in range(1 + k % 3):
        full = (k + p) % 2 == 0
        points.append(JointTrajectoryPoint(
            positions=rng.normal(size=n).tolist(),
            velocities=rng.normal(size=n).tolist() if full else [],
            accelerations=rng.normal(size=n).tolist() if k % 3 else [],
            effort=rng.normal(size=n).tolist() if k % 5 == 0 else [],
            time_from_start=Duration(sec=p, nanosec=1000 * k)))
    return JointTrajectory(header=header(k), joint_names=names, points=points)


def vector(rng):
    return Vector3(x=rng.normal(), y=rng.normal(), z=rng.normal())


def multi_dof_trajectory(k, rng):
    points = []
    for p in range(1 + k % 3):
        q = rng.normal(size=4)
        transforms = [Transform(translation=vector(rng), rotation=Quaternion(
            x=q[0], y=q[1], z=q[2], w=q[3])) for _ in range(1 + (k + p) % 2)]
        points.append(MultiDOFJointTrajectoryPoint(
            transforms=transforms,
            velocities=[Twist(linear=vector(rng), angular=vector(rng))
                        for _ in range((k + p) % 3)],
            accelerations=[Twist(linear=vector(rng), angular=vector(rng))
                           for _ in range(k % 2)],
            time_from_start=Duration(sec=p, nanosec=7 * k)))
    return MultiDOFJointTrajectory(header=header(k), joint_names=['platform'][:k % 2],
                                   points=points)


def xyz(v):
    return [v.x, v.y, v.z]


def assert_same_header(read, msg):
    assert isinstance(read.header.stamp, Time)      # it goes into the outputs as it is
    assert read.header.stamp == msg.header.stamp
    assert read.header.frame_id == msg.header.frame_id
    assert list(read.joint_names) == list(msg.joint_names)
    assert len(read.points) == len(msg.points)


@pytest.mark.parametrize('k', range(12))
def test_joint_trajectory_reads_as_rclpy_serialized_it(k):
    msg = joint_trajectory(k, np.random.default_rng(k))
    read = read_reference(serialize_message(msg), JointTrajectory)
    assert_same_header(read, msg)
    for r, p in zip(read.points, msg.points):
        for field in ('positions', 'velocities', 'accelerations', 'effort'):
            assert_array_equal(getattr(r, field), np.array(getattr(p, field), dtype=float))
        assert (r.time_from_start.sec, r.time_from_start.nanosec) == (
            p.time_from_start.sec, p.time_from_start.nanosec)


@pytest.mark.parametrize('k', range(12))
def test_multi_dof_trajectory_reads_as_rclpy_serialized_it(k):
    msg = multi_dof_trajectory(k, np.random.default_rng(100 + k))
    read = read_reference(serialize_message(msg), MultiDOFJointTrajectory)
    assert_same_header(read, msg)
    for r, p in zip(read.points, msg.points):
        assert len(r.transforms) == len(p.transforms)
        for a, b in zip(r.transforms, p.transforms):
            assert xyz(a.translation) == xyz(b.translation)
            assert [a.rotation.x, a.rotation.y, a.rotation.z, a.rotation.w] == [
                b.rotation.x, b.rotation.y, b.rotation.z, b.rotation.w]
        for field in ('velocities', 'accelerations'):
            assert len(getattr(r, field)) == len(getattr(p, field))
            for a, b in zip(getattr(r, field), getattr(p, field)):
                assert xyz(a.linear) == xyz(b.linear) and xyz(a.angular) == xyz(b.angular)
        assert (r.time_from_start.sec, r.time_from_start.nanosec) == (
            p.time_from_start.sec, p.time_from_start.nanosec)
        ours, theirs = task_point_values(r), task_point_values(p)   # read at once, or None
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert_array_equal(ours, theirs)


def big_endian_joint_trajectory(sec, nanosec, frame_id):
    """A JointTrajectory without names or points in big-endian CDR (encapsulation 00 00),
    written by hand: stamp, frame_id (length with its NUL), two empty sequences."""
    text = frame_id.encode() + b'\0'
    body = (sec.to_bytes(4, 'big', signed=True) + nanosec.to_bytes(4, 'big')
            + len(text).to_bytes(4, 'big') + text)
    body += b'\0' * (-len(body) % 4)
    return b'\x00\x00\x00\x00' + body + (0).to_bytes(4, 'big') * 2


def test_another_encapsulation_goes_to_rclpy():
    read = read_reference(big_endian_joint_trajectory(42, 7, 'base'), JointTrajectory)
    assert isinstance(read, JointTrajectory)
    assert (read.header.stamp.sec, read.header.stamp.nanosec, read.header.frame_id) == (
        42, 7, 'base')
    assert not read.joint_names and not read.points


def test_a_payload_cut_short_is_refused_naming_its_length():
    raw = serialize_message(joint_trajectory(3, np.random.default_rng(3)))
    read_reference(raw, JointTrajectory)
    for cut in (30, 60, 90):              # in the names, in the names, in the positions
        with pytest.raises(RequestError) as refused:
            read_reference(raw[:cut], JointTrajectory)
        assert f'ends at byte {cut}' in str(refused.value)
