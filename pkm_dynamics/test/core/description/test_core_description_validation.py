"""Every number of a robot description is checked (finite, physically plausible) and a
description's size is bounded; each refusal is a DescriptionError naming the link, joint or
extension element (core/description/validation.py).  A refused description would otherwise load and serve
non-finite or meaningless numbers, or cost unbounded memory and time."""
from pathlib import Path

import numpy as np
import pytest

from pkm_dynamics.core import DescriptionError, load_robot
from pkm_dynamics.core.description.robot_description import parse_description
from pkm_dynamics.core.tree.tree_model import load_tree
from pkm_dynamics.core.description import validation

ROBOTS = Path(__file__).resolve().parents[3] / "robots"


def text(name):
    return (ROBOTS / f"{name}.urdf").read_text()


def edit(name, old, new):
    s = text(name)
    assert s.count(old) == 1, old
    return s.replace(old, new)


B11_COM = '<origin xyz="0.23805608 0.13201777 0.0" rpy="0 0 0"/>'
B11_INERTIA = 'ixx="0.28426" ixy="-0.06487287" ixz="0.0" iyy="0.54237481" iyz="0.0" izz="0.6789102"'
LIFT = '<origin xyz="0.085 0.0 0.0" rpy="0.0 0.0 0.0"/>\n    <axis xyz="1.0 0.0 0.0"/>'
Q_LIMIT = '<limit lower="-1e-09" upper="2.234767457908072"'
ROD_END = '<child_origin xyz="0.37610632101293 0.0 0.0"'

# (robot, text replaced, replacement, words the error must contain)
BAD = {
    "com_nan": ("linear_4bar_1dof", B11_COM, B11_COM.replace("0.23805608", "nan"),
                ["link 'B11'", "non-finite"]),
    "com_far": ("linear_4bar_1dof", B11_COM, B11_COM.replace("0.23805608", "1e300"),
                ["link 'B11'", "bound"]),
    "joint_origin_nan": ("linear_4bar_1dof", LIFT, LIFT.replace('xyz="0.085', 'xyz="nan'),
                         ["joint 'lift'", "non-finite"]),
    "joint_rpy_inf": ("linear_4bar_1dof", LIFT, LIFT.replace('rpy="0.0', 'rpy="inf'),
                      ["joint 'lift'", "rpy"]),
    "axis_inf": ("linear_4bar_1dof", LIFT, LIFT.replace('<axis xyz="1.0', '<axis xyz="inf'),
                 ["joint 'lift'", "axis"]),
    "axis_zero": ("linear_4bar_1dof", LIFT, LIFT.replace('<axis xyz="1.0', '<axis xyz="0.0'),
                  ["joint 'lift'", "axis"]),
    "inertia_inf": ("linear_4bar_1dof", B11_INERTIA, B11_INERTIA.replace('"0.28426"', '"inf"'),
                    ["link 'B11'", "inertia"]),
    "inertia_nan": ("linear_4bar_1dof", B11_INERTIA, B11_INERTIA.replace('"0.28426"', '"nan"'),
                    ["link 'B11'", "inertia"]),
    "inertia_indefinite": ("linear_4bar_1dof", B11_INERTIA,
                           B11_INERTIA.replace('"0.28426"', '"-0.28426"'),
                           ["link 'B11'", "positive definite"]),
    "inertia_triangle": ("linear_4bar_1dof", B11_INERTIA,
                         B11_INERTIA.replace('"0.6789102"', '"5.0"'),
                         ["link 'B11'", "triangle inequality"]),
    "mass_huge": ("linear_4bar_1dof", '<mass value="25.52660174"/>', '<mass value="1e308"/>',
                  ["link 'B11'", "mass"]),
    "mass_negative": ("linear_4bar_1dof", '<mass value="25.52660174"/>',
                      '<mass value="-25.5"/>', ["link 'B11'", "mass"]),
    "limit_nan": ("linear_4bar_1dof", Q_LIMIT, Q_LIMIT.replace('"-1e-09"', '"nan"'),
                  ["joint 'lift_link_joint'", "lower"]),
    "limit_crossed": ("linear_4bar_1dof", Q_LIMIT, Q_LIMIT.replace('"-1e-09"', '"3.0"'),
                      ["joint 'lift_link_joint'", "exceeds upper"]),
    "cut_origin_nan": ("linear_4bar_1dof", ROD_END, ROD_END.replace("0.37610632101293", "nan"),
                       ["loop closure 'lift_rod_end'", "non-finite"]),
    "cut_axis_inf": ("linear_4bar_1dof", '<child_axis xyz="0 0 1"/>',
                     '<child_axis xyz="0 0 inf"/>', ["loop closure 'lift_rod_end'", "non-finite"]),
    "sea_stiffness_huge": ("gough_stewart_6ups",
                           '<actuator joint="leg1_p"><series_elastic stiffness="100000"',
                           '<actuator joint="leg1_p"><series_elastic stiffness="1e308"',
                           ["actuator 'leg1_p'", "stiffness"]),
    "sea_motor_inertia_nan": ("gough_stewart_6ups",
                              '<actuator joint="leg2_p"><series_elastic stiffness="100000" '
                              'motor_inertia="10"',
                              '<actuator joint="leg2_p"><series_elastic stiffness="100000" '
                              'motor_inertia="nan"', ["actuator 'leg2_p'", "motor_inertia"]),
    "pkm_joint_origin_nan": ("planar_3rrr", '<origin xyz="1.83697019872e-17 0.3 0"',
                             '<origin xyz="nan 0.3 0"', ["joint 'limb1_a'", "non-finite"]),
    "platform_origin_nan": ("planar_3rrr", '<platform link="platform"><origin xyz="0 0 0"',
                            '<platform link="platform"><origin xyz="0 nan 0"',
                            ["platform 'platform'", "non-finite"]),
}


#: one attribute of each extension element read by the one reader of numeric attributes
#: (validation.attribute_number): the cylinder, the friction and the series-elastic actuator
BAD_ATTRIBUTES = {
    "cylinder_bore_words": ("heavy_duty_4dof", '<cylinder joint="lift" bore="0.08"',
                            '<cylinder joint="lift" bore="8 cm"',
                            ['<cylinder joint="lift">', 'bore="8 cm" is not a number']),
    "cylinder_retracted_far": ("heavy_duty_4dof", '"lift" bore="0.08" rod="0.045" stroke="0.59" retracted="0.0"',
                               '"lift" bore="0.08" rod="0.045" stroke="0.59" retracted="-1e9"',
                               ['<cylinder joint="lift">', 'retracted="-1e9" must be in [-100, 100]']),
    "friction_coulomb_words": ("linear_4bar_1dof", "<pkm_dynamics>",
                               '<pkm_dynamics><friction joint="lift" coulomb="much"/>',
                               ['<friction joint="lift">', 'coulomb="much" is not a number']),
    "sea_stiffness_words": ("gough_stewart_6ups", '<actuator joint="leg1_p"><series_elastic stiffness="100000"',
                            '<actuator joint="leg1_p"><series_elastic stiffness="stiff"',
                            ["actuator 'leg1_p'", 'stiffness="stiff" is not a number']),
    "sea_motor_inertia_zero": ("gough_stewart_6ups",
                               '<actuator joint="leg2_p"><series_elastic stiffness="100000" motor_inertia="10"',
                               '<actuator joint="leg2_p"><series_elastic stiffness="100000" motor_inertia="0"',
                               ["actuator 'leg2_p'", 'motor_inertia="0" must be in (0, 1e+06]']),
}


@pytest.mark.parametrize("case", sorted(BAD_ATTRIBUTES))
def test_a_bad_attribute_is_refused_alike_by_every_element(case):
    """The same words for the same fault whichever extension element holds the attribute: the
    element (and its joint), the attribute and its text as written, the range."""
    name, old, new, words = BAD_ATTRIBUTES[case]
    with pytest.raises(DescriptionError) as info:
        load_robot(edit(name, old, new))
    for word in words:
        assert word in str(info.value), str(info.value)


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_number_is_refused_naming_its_element(case):
    name, old, new, words = BAD[case]
    with pytest.raises(DescriptionError) as info:
        load_robot(edit(name, old, new))
    for word in words:
        assert word in str(info.value), str(info.value)


def test_the_checks_keep_what_is_physical():
    """A thin disc (I1 + I2 = I3 exactly) loads; an axis of any length is the unit axis: the
    model equals the one with the axis written as a unit vector."""
    disc = edit("linear_4bar_1dof", B11_INERTIA,
                'ixx="0.25" ixy="0" ixz="0" iyy="0.25" iyz="0" izz="0.5"')
    assert load_robot(disc).tree.total_mass == load_robot(text("linear_4bar_1dof")).tree.total_mass
    long_axis = edit("linear_4bar_1dof", LIFT, LIFT.replace('<axis xyz="1.0', '<axis xyz="7.5'))
    a, b = load_tree(long_axis), load_tree(text("linear_4bar_1dof"))
    np.testing.assert_array_equal(a.X, b.X)


def chain(n_joints):
    """A serial chain of ``n_joints`` revolute joints (valid numbers throughout)."""
    link = ('<link name="l{i}"><inertial><mass value="1"/>'
            '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>')
    parts = ['<robot name="long"><link name="l0"/>']
    for i in range(1, n_joints + 1):
        parts.append(link.format(i=i))
        parts.append(f'<joint name="j{i}" type="revolute"><parent link="l{i - 1}"/>'
                     f'<child link="l{i}"/><origin xyz="0 0 0.1"/><axis xyz="0 1 0"/></joint>')
    parts.append('<pkm_dynamics><actuator joint="j1"/></pkm_dynamics></robot>')
    return "".join(parts)


def test_size_bounds():
    ok = load_tree(chain(20))
    assert ok.nq == 20
    with pytest.raises(DescriptionError, match=f"more than the limit of {validation.MAX_JOINTS}"):
        load_tree(chain(validation.MAX_JOINTS + 1))
    with pytest.raises(DescriptionError, match="characters, more than the limit"):
        load_tree(chain(20).replace('<link name="l0"/>',
                                    '<link name="l0"/>' + " " * validation.MAX_DESCRIPTION_CHARS))
    deep = "<a>" * (validation.MAX_DEPTH + 1) + "</a>" * (validation.MAX_DEPTH + 1)
    with pytest.raises(DescriptionError, match="nested"):
        load_tree(chain(2).replace('<link name="l0"/>', '<link name="l0"/>' + deep))


def test_entities_are_refused():
    """An entity-amplified description (each entity ten of the previous) is refused before any
    expansion: URDF has no use for a document type declaration."""
    lol = ['<!ENTITY e0 "0.1">'] + [f'<!ENTITY e{k} "{f"&e{k - 1};" * 10}">' for k in range(1, 8)]
    amplified = (f'<?xml version="1.0"?><!DOCTYPE robot [{"".join(lol)}]>'
                 + chain(2).replace('<robot name="long">', '<robot name="&e7;">'))
    with pytest.raises(DescriptionError, match="document type declaration"):
        load_tree(amplified)


def test_file_paths_are_read_only_where_allowed(tmp_path):
    """The core reads a file path for Python users; with files=False (the node) a description
    is XML text, and the refusal neither reads the file nor repeats the input."""
    secret = tmp_path / "secret.xml"
    secret.write_text('<secret_root_tag/>')
    urdf = ROBOTS / "linear_4bar_1dof.urdf"
    assert parse_description(str(urdf)).name == parse_description(urdf.read_text()).name
    for given in (str(urdf), str(secret), str(tmp_path / "missing.urdf"), "just words"):
        with pytest.raises(DescriptionError) as info:
            parse_description(given, files=False)
        message = str(info.value)
        assert "not URDF XML text" in message
        assert given not in message and "secret_root_tag" not in message
