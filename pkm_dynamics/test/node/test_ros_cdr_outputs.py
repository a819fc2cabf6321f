"""The feedforward outputs written as CDR bytes (cdr_messages, feedforward_outputs) against rclpy's
deserialization: the JointState and Float64MultiArray bytes read back as the messages with the
same fields (joint names and frame ids of every length modulo 4, the commands order applied);
values of the wrong count are refused instead of written."""
from types import SimpleNamespace

from builtin_interfaces.msg import Time
import numpy as np
from numpy.testing import assert_array_equal
import pytest
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from pkm_dynamics.node.messages.cdr_messages import JointStateBytes
from pkm_dynamics.node.streaming.feedforward_outputs import FeedforwardOutputs

NAMES = ['slew', 'lift', 'tilt', 'ext\u00e9nsion', 'l1_j1', 'leg6_p']


@pytest.mark.parametrize('n', range(1, 7))
def test_joint_state_bytes_read_back_as_the_message(n):
    rng = np.random.default_rng(n)
    names = NAMES[:n]
    writer = JointStateBytes(names)
    for k, frame_id in enumerate(['', 'w', 'wo', 'wor', 'world', 'base_link']):
        stamp = Time(sec=1700000000 + k, nanosec=999999999 - k)
        x, xd, f = rng.normal(size=(3, n))
        read = deserialize_message(writer.write(stamp, frame_id, x, xd, f), JointState)
        assert read.header.stamp == stamp and read.header.frame_id == frame_id
        assert list(read.name) == names
        assert_array_equal(read.position, x)
        assert_array_equal(read.velocity, xd)
        assert_array_equal(read.effort, f)


#: a robot without hydraulic cylinders (the outputs' pressure and valve orders are then empty)
NO_CYLINDERS = SimpleNamespace(hydraulic_model=SimpleNamespace(joints=()))


def test_commands_bytes_read_back_in_the_commands_order():
    actuated = NAMES[:4]
    model = SimpleNamespace(actuated=actuated, command_order=[2, 0, 3, 1], robot=NO_CYLINDERS)
    outputs = FeedforwardOutputs(model)
    f = np.array([10.0, -20.5, 30.25, 4e-300])
    read = deserialize_message(outputs.commands(f), Float64MultiArray)
    assert_array_equal(read.data, f[[2, 0, 3, 1]])
    assert not read.layout.dim and read.layout.data_offset == 0
    state = deserialize_message(outputs.joint_state(Time(sec=3), 'base', f, 2 * f, 3 * f),
                                JointState)
    assert list(state.name) == actuated and state.header.frame_id == 'base'
    assert_array_equal(state.effort, 3 * f)


def test_values_of_the_wrong_count_are_refused():
    writer = JointStateBytes(NAMES[:3])
    with pytest.raises(ValueError, match='4 values for the 3 joints'):
        writer.write(Time(), '', np.zeros(3), np.zeros(4), np.zeros(3))
