"""Input bounds of the core (``core.bounds``): extreme but finite input is refused with a
StateError naming the field before it can overflow, the loop-closure continuation of the
higher-order inverse dynamics is bounded, and a state beyond a stroke is refused alike by
inverse dynamics and higher-order inverse dynamics. Within the bounds the results stay
finite and consistent (FD(ID) round trip at the largest admissible velocity)."""
from pathlib import Path

import numpy as np
from numpy.testing import assert_allclose
import pytest

from pkm_dynamics.core import load_robot
from pkm_dynamics.core.bounds import MAX_EFFORT, MAX_RATE
from pkm_dynamics.core.errors import ConvergenceError, StateError
from pkm_dynamics.core.hoid.higher_order import higher_order_inverse_dynamics

ROBOTS = Path(__file__).resolve().parents[2] / 'robots'
X0 = np.array([0.3, 0.2, 0.25, 0.4])
Z4 = np.zeros(4)


@pytest.fixture(scope='module')
def crane():
    return load_robot((ROBOTS / 'heavy_duty_4dof.urdf').read_text())


@pytest.fixture(scope='module')
def stewart():
    return load_robot((ROBOTS / 'gough_stewart_6ups.urdf').read_text())


def test_forward_dynamics_of_huge_values_is_refused_naming_the_field(crane):
    # every field 1e308 used to answer inf/NaN accelerations
    with pytest.raises(StateError, match=r"x\[0\] = 1e\+308 is beyond the bound"):
        crane.forward_dynamics(np.full(4, 1e308), np.full(4, 1e308), np.full(4, 1e308))
    with pytest.raises(StateError, match=r"xd\[0\] = 1e\+308 is beyond the bound"):
        crane.forward_dynamics(X0, np.full(4, 1e308), np.full(4, 1e308))
    with pytest.raises(StateError, match=r"x\[1\] = 1e\+308 is beyond the bound"):
        crane.forward_dynamics([0.3, 1e308, 0.25, 0.4], Z4, Z4)
    with pytest.raises(StateError, match=r"x = 5 m is beyond the limits .* of joint 'lift'"):
        crane.forward_dynamics([0.3, 5.0, 0.25, 0.4], Z4, Z4)
    with pytest.raises(StateError, match=r'xd\[1\] = 1e\+06 is beyond the bound'):
        crane.forward_dynamics(X0, [0.0, 1e6, 0.0, 0.0], Z4)
    with pytest.raises(StateError, match=r'f\[0\] = -1e\+155 is beyond the bound'):
        crane.forward_dynamics(X0, Z4, [-1e155, 0.0, 0.0, 0.0])
    with pytest.raises(StateError, match=r'xdd\[3\] = 1e\+300'):
        crane.inverse_dynamics(X0, Z4, [0.0, 0.0, 0.0, 1e300])
    with pytest.raises(StateError, match=r'wrench\[5\]'):
        crane.inverse_dynamics(X0, Z4, Z4, wrench=[0, 0, 0, 0, 0, 1e200])


def test_at_the_bounds_the_dynamics_is_finite_and_consistent(crane):
    """The largest admissible velocity: FD(ID(x)) = x, an independent path through the
    articulated-body recursion."""
    xd = np.full(4, MAX_RATE[1]) * np.array([1, -1, 1, -1])
    xdd = np.full(4, MAX_RATE[2]) * np.array([-1, 1, 1, -1])
    f = crane.inverse_dynamics(X0, xd, xdd)
    assert np.isfinite(f).all()
    assert_allclose(crane.forward_dynamics(X0, xd, f), xdd, rtol=1e-9)


def test_pkm_inputs_beyond_the_bounds_are_refused(stewart):
    pose = stewart.reference_pose
    with pytest.raises(StateError, match=r'u\[2\] = 1e\+308 is beyond the bound'):
        stewart.forward_dynamics(pose, np.zeros(6), [0, 0, 1e308, 0, 0, 0])
    with pytest.raises(StateError, match=r'twist\[0\] = 1e\+06'):
        stewart.inverse_dynamics(pose, [1e6, 0, 0, 0, 0, 0], np.zeros(6))
    with pytest.raises(StateError, match=r'wrench\[3\]'):
        stewart.inverse_dynamics(pose, np.zeros(6), np.zeros(6),
                                 wrench=[0, 0, 0, 2 * MAX_EFFORT, 0, 0])


def test_hoid_beyond_a_stroke_is_invalid_state_as_inverse_dynamics(crane):
    """HOID refused a state beyond a stroke as NO_IK_SOLUTION (a loop closure that did not
    converge) where ID refuses it as a state error naming the joint: both now name it."""
    beyond = np.array([0.3, 0.7, 0.25, 0.4])
    with pytest.raises(StateError) as by_id:
        crane.inverse_dynamics(beyond, Z4, Z4)
    with pytest.raises(StateError) as by_hoid:
        higher_order_inverse_dynamics(crane, beyond, Z4, Z4, Z4, Z4)
    assert not isinstance(by_hoid.value, ConvergenceError)
    for message in (str(by_id.value), str(by_hoid.value)):
        assert "'lift'" in message and 'stroke' in message and '0.7' in message


def test_hoid_of_huge_values_is_refused_at_once(crane, stewart):
    # 1e308 raised OverflowError (an int of inf continuation steps); 1e10 walked 2e11 steps
    for value in (1e308, 1e10):
        with pytest.raises(StateError, match="'lift'"):
            higher_order_inverse_dynamics(crane, np.full(4, value), Z4, Z4, Z4, Z4)
    with pytest.raises(StateError, match=r'xddd\[0\] = 1e\+100'):
        higher_order_inverse_dynamics(crane, X0, Z4, Z4, [1e100, 0, 0, 0], Z4)
    far = stewart.reference_pose.copy()
    far[0, 3] = 1e9
    with pytest.raises(StateError, match='platform position'):
        higher_order_inverse_dynamics(stewart, far, *[np.zeros(6)] * 4)
    far[0, 3] = 500.0                 # within the position bound, far beyond the joint limits
    with pytest.raises(StateError, match=r"out of reach|joint 'leg\d_\w+' \(limb\d\) would be"):
        higher_order_inverse_dynamics(stewart, far, *[np.zeros(6)] * 4)


def test_hoid_of_a_pkm_pose_beyond_a_stroke_is_refused(stewart):
    """A platform pose whose legs must extend beyond their strokes (±0.08 m) was answered with
    forces; it is a state error naming the leg."""
    pose = stewart.reference_pose.copy()
    pose[0, 3] += 2.0
    with pytest.raises(StateError, match=r"joint 'leg\d_\w+' \((its stroke|limb\d)\)"):
        higher_order_inverse_dynamics(stewart, pose, *[np.zeros(6)] * 4)


def test_an_unlimited_joint_beyond_the_position_bound_is_refused(crane):
    """The slew joint is continuous (no stroke): 1e308 rad reached math.sin(inf) inside the
    forward kinematics (an unnamed ValueError); every service refuses it naming the entry."""
    from pkm_dynamics.core.bounds import MAX_POSITION
    from pkm_dynamics.core.forward_state import forward_state
    huge = np.array([1e308, 0.3, 0.25, 0.4])
    calls = (lambda: forward_state(crane, huge), lambda: crane.forward_kinematics(huge),
             lambda: crane.inverse_dynamics(huge, Z4, Z4),
             lambda: crane.forward_dynamics(huge, Z4, Z4),
             lambda: higher_order_inverse_dynamics(crane, huge, Z4, Z4, Z4, Z4))
    for call in calls:
        with pytest.raises(StateError, match=r'\[0\] = 1e\+308 is beyond the bound'):
            call()
    at_bound = np.array([MAX_POSITION, 0.3, 0.25, 0.4])
    assert_allclose(forward_state(crane, at_bound).pose[:3, :3],
                    forward_state(crane, at_bound - 2 * np.pi * 159 * np.eye(4)[0]).pose[:3, :3],
                    atol=1e-9)


def test_a_huge_ik_seed_of_an_unlimited_joint_is_refused_naming_it(crane):
    """An IK seed (``initial``) of 1e155 rad or more for the continuous slew joint reached
    math.sin(inf) in the search's start configurations (an unnamed ValueError, FAILURE at the
    node); it is refused as the state's positions are, naming the entry and the bound. A seed
    at the bound is taken: the solution nearest it, at the seed's pose."""
    from pkm_dynamics.core.bounds import MAX_POSITION
    pose = crane.forward_kinematics(X0)
    for huge in (1e308, 1e155, 1e154):
        with pytest.raises(StateError, match=r'initial\[0\] = 1e\+\d+ is beyond the bound '
                           rf'\+-{MAX_POSITION:g} m or rad'):
            crane.inverse_kinematics(pose, initial=[huge, 0.2, 0.25, 0.4])
    sol = crane.inverse_kinematics(pose, initial=[MAX_POSITION, 0.2, 0.25, 0.4])
    assert_allclose(crane.forward_kinematics(sol.actuators), pose, atol=1e-9)
    assert abs(sol.actuators[0] - MAX_POSITION) <= np.pi


def test_pkm_ik_continuation_to_a_far_pose_is_bounded(stewart):
    """A platform pose 1000 m away (within the position bound) made the IK's working-mode
    continuation walk 20000 steps per limb (34 s) before a joint limit refused it; beyond
    MAX_CONTINUATION_STEPS steps from the start the pose is out of reach (NO_IK_SOLUTION),
    naming the limb. A pose just within that distance is still refused by the joint limits."""
    from pkm_dynamics.core.bounds import MAX_CONTINUATION_STEPS
    from pkm_dynamics.core.status import CONTINUATION_STEP
    reach = MAX_CONTINUATION_STEPS * CONTINUATION_STEP
    far = stewart.reference_pose.copy()
    for distance in (1.5 * reach, 1000.0):
        far[1, 3] = stewart.reference_pose[1, 3] + distance
        with pytest.raises(ConvergenceError, match=r'limb\d: the platform pose .* out of reach'):
            stewart.inverse_kinematics(far)
    far[1, 3] = stewart.reference_pose[1, 3] + 0.9 * reach
    with pytest.raises(StateError, match="outside its limits"):
        stewart.inverse_kinematics(far)


def test_pkm_ik_continuation_stops_where_the_path_leaves_the_joint_limits(stewart):
    """A pose 5 m above the platform (within the continuation's reach) was followed for all of
    its 100 steps before the joint limits refused the result; the path is refused at its first
    step beyond a limit, naming the joint and the step."""
    far = stewart.reference_pose.copy()
    far[2, 3] += 5.0
    with pytest.raises(StateError, match=r"joint 'leg\d_\w+' .*outside its limits.*\(at step \d+ of 100 "):
        stewart.inverse_kinematics(far)
