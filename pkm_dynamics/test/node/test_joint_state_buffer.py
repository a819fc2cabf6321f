"""The node's buffer of measured joint states (node/joint_state_buffer.py, issue 30 item 4): a
window is the samples of the last seconds before the newest, oldest first; the buffer is bounded
(the oldest overwritten), a duplicate stamp is dropped, a stamp back in time starts it again."""
import numpy as np

from pkm_dynamics.node.joint_state_buffer import MAX_RATE, JointStateBuffer


def sample(k):
    return np.full(2, k, dtype=float), np.full(2, -k, dtype=float), np.full(2, 10.0 * k)


def test_window_of_the_last_seconds_oldest_first():
    buffer = JointStateBuffer(('a', 'b'), 1.0)
    for k in range(50):
        buffer.record(0.01 * k, *sample(k))
    buffer.record(0.49, *sample(99))                    # the same stamp again: dropped
    t, x, xd, u, span = buffer.window(0.1)
    assert np.allclose(t, 0.01 * np.arange(39, 50)) and span == 0.49
    assert (x[:, 0] == np.arange(39, 50)).all() and (xd[:, 1] == -np.arange(39, 50)).all()
    assert (u[:, 0] == 10.0 * np.arange(39, 50)).all()


def test_bounded_and_restarted_when_the_clock_goes_back():
    buffer = JointStateBuffer(('a', 'b'), 0.01)
    assert buffer.capacity == int(np.ceil(0.01 * MAX_RATE)) + 1
    for k in range(3 * buffer.capacity):
        buffer.record(1e-4 * k, *sample(k))
    t, x, _, _, _ = buffer.window(1.0)
    assert len(t) == buffer.capacity and (np.diff(t) > 0).all()
    assert x[-1, 0] == 3 * buffer.capacity - 1                       # the newest kept
    buffer.record(0.0, *sample(7))                                    # a replayed stream
    t, x, _, _, span = buffer.window(1.0)
    assert list(t) == [0.0] and x[0, 0] == 7 and span == 0.0
