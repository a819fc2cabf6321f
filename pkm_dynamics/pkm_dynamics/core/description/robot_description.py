"""The robot description: a URDF of the spanning tree plus the extension elements that say
what URDF cannot — loop closures (cut joints), actuated joints, series-elastic parameters,
the end effector, and the platform / task space of a parallel manipulator.

Format (documented with a complete example in doc/description_format.rst)::

    <robot name="...">
      ... URDF links and joints of the spanning tree; the zero configuration of the tree
          is an assembled pose of every loop ...
      <constraint name="lift_loop" type="revolute">    <!-- revolute|prismatic|universal|spherical -->
        <parent link="lift_piston"/>
        <parent_origin xyz="..." rpy="..."/>            <!-- cut frame on the parent link -->
        <parent_axis xyz="0 0 1"/>                      <!-- R/P axis; U: first axis -->
        <child link="lift_link"/>
        <child_origin xyz="..." rpy="..."/>             <!-- cut frame on the child link -->
        <child_axis xyz="0 0 1"/>                       <!-- R/P: optional; U: second axis -->
      </constraint>
      <!-- optional attribute independent="joint names": the loop's independent coordinates
           (paper 001 Remark 3); chosen automatically for conditioning when absent -->
      <pkm_dynamics>
        <actuator joint="lift_cylinder">               <!-- actuated tree joints, in order -->
          <series_elastic stiffness="2.0e6" motor_inertia="0.5"/>   <!-- optional -->
        </actuator>
        <friction joint="lift_cylinder" coulomb="4000" viscous="3000"    <!-- optional, any -->
                  stribeck="0" stribeck_velocity="0.1" smoothing_velocity="0.01"/>  <!-- joint -->
        <end_effector link="tcp"/>
        <hydraulics supply_pressure="190e5" return_pressure="10e5" bulk_modulus="800e6">
          <cylinder joint="lift_cylinder" bore="0.08" rod="0.045" stroke="0.59"/>
          <valve joint="lift_cylinder" nominal_flow="1.6667e-3" nominal_pressure_drop="70e5"/>
        </hydraulics>                                   <!-- optional: :mod:`.hydraulic_description` -->
        <platform link="platform">                      <!-- parallel manipulators only -->
          <origin xyz="0 0 0" rpy="0 0 0"/>
          <task_space coordinates="vx vz"/>
        </platform>
      </pkm_dynamics>
    </robot>

The ``<constraint>`` element follows the shape proposed for urdfdom (ros/urdfdom#264): a cut
joint is given by one frame on each of the two links it joins; at the zero configuration the
two frames coincide up to the cut joint's own freedom.  Axes are given in their cut frame.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace

import numpy as np

from ..errors import DescriptionError
from ..spatial.se3 import pose, pose_inv, rpy_matrix
from ..tree.tree_model import TreeModel, build_tree, read_description
from .hydraulic_description import HydraulicsSpec, parse_hydraulics
from .validation import MAX_COORDINATE, MAX_MASS, MAX_STIFFNESS, attribute_number, check_numbers, unit_axis
from ..tree.tree_dynamics import forward_kinematics
from ..friction.friction_model import JointFriction, parse_friction

CUT_JOINT_TYPES = ("revolute", "prismatic", "cylindrical", "universal", "spherical")
TASK_COORDINATES = ("wx", "wy", "wz", "vx", "vy", "vz")
#: tolerance (m, rad) for a loop to count as closed at the zero configuration
CLOSURE_TOLERANCE = 1e-6


@dataclass(frozen=True)
class CutJoint:
    """A loop-closing joint between two tree links (paper 001 App. A)."""

    name: str
    type: str
    parent_link: str
    parent_origin: np.ndarray
    parent_axis: np.ndarray | None
    child_link: str
    child_origin: np.ndarray
    child_axis: np.ndarray | None
    independent: tuple = ()


@dataclass(frozen=True)
class ActuatorSpec:
    """An actuated tree joint, with optional series-elastic parameters (paper 002 eqs. 1-2)."""

    joint: str
    stiffness: float | None = None
    motor_inertia: float | None = None

    @property
    def series_elastic(self) -> bool:
        return self.stiffness is not None


@dataclass(frozen=True)
class PlatformSpec:
    """The moving platform of a parallel manipulator and its task-space coordinates."""

    link: str
    origin: np.ndarray
    task_space: tuple


@dataclass(frozen=True)
class RobotDescription:
    name: str
    tree: TreeModel
    cut_joints: tuple
    actuators: tuple
    end_effector: str | None
    platform: PlatformSpec | None
    xml: str
    passive: tuple = ()            # names of the declared passive joints (<passive joint="..."/>)
    friction: JointFriction | None = None     # joint / actuator friction (None: none anywhere)
    hydraulics: HydraulicsSpec | None = None    # <hydraulics> (:mod:`.hydraulic_description`)

    @property
    def actuated_joints(self) -> tuple:
        return tuple(a.joint for a in self.actuators)

    def cut_joint(self, name: str) -> CutJoint:
        for c in self.cut_joints:
            if c.name == name:
                return c
        raise DescriptionError(f"no loop closure named '{name}' in robot '{self.name}'")


def _floats(el, attr, n, what, bound=MAX_COORDINATE):
    text = el.get(attr)
    if text is None:
        raise DescriptionError(f"{what}: missing attribute '{attr}'")
    try:
        v = np.array([float(t) for t in text.split()])
    except ValueError:
        raise DescriptionError(f"{what}: attribute {attr}=\"{text:.80}\" is not a list of numbers") from None
    if v.shape != (n,):
        raise DescriptionError(f"{what}: attribute {attr}=\"{text:.80}\" must hold {n} numbers")
    return check_numbers(v, f"{what} {attr}", bound)


def _origin(el, what) -> np.ndarray:
    if el is None:
        return np.eye(4)
    xyz = _floats(el, "xyz", 3, what) if el.get("xyz") is not None else np.zeros(3)
    rpy = _floats(el, "rpy", 3, what) if el.get("rpy") is not None else np.zeros(3)
    return pose(rpy_matrix(rpy), xyz)


def _axis(el, what):
    if el is None:
        return None
    return unit_axis(_floats(el, "xyz", 3, what, bound=np.inf), what)


def _parse_cut_joint(el, tree: TreeModel) -> CutJoint:
    name = el.get("name")
    if not name:
        raise DescriptionError("a <constraint> element has no name")
    what = f"loop closure '{name}'"
    typ = el.get("type")
    if typ not in CUT_JOINT_TYPES:
        raise DescriptionError(f"{what}: type '{typ}' is not one of {', '.join(CUT_JOINT_TYPES)}")
    ends = {}
    for side in ("parent", "child"):
        link_el = el.find(side)
        if link_el is None or not link_el.get("link"):
            raise DescriptionError(f"{what}: missing <{side} link=\"...\"/>")
        link = link_el.get("link")
        if link not in tree.frames:
            raise DescriptionError(f"{what}: {side} link '{link}' does not exist")
        ends[side] = (link, _origin(el.find(f"{side}_origin"), f"{what} <{side}_origin>"),
                      _axis(el.find(f"{side}_axis"), f"{what} <{side}_axis>"))
    (pl, po, pa), (cl, co, ca) = ends["parent"], ends["child"]
    if pl == cl:
        raise DescriptionError(f"{what}: parent and child are the same link '{pl}'")
    if typ in ("revolute", "prismatic", "cylindrical", "universal") and pa is None:
        raise DescriptionError(f"{what}: a {typ} cut joint needs <parent_axis xyz=\"...\"/>")
    if typ == "universal" and ca is None:
        raise DescriptionError(f"{what}: a universal cut joint needs <child_axis xyz=\"...\"/> (its second axis)")
    independent = tuple((el.get("independent") or "").split())
    for nm in independent:
        if nm not in tree.joint_names:
            raise DescriptionError(f"{what}: independent coordinate '{nm}' is not a moving joint of the tree")
    return CutJoint(name, typ, pl, po, pa, cl, co, ca, independent)


def cut_frames(tree: TreeModel, cut: CutJoint, C: np.ndarray) -> tuple:
    """World poses ``(F_parent, F_child)`` of the two cut frames for absolute body poses ``C``."""
    out = []
    for link, origin in ((cut.parent_link, cut.parent_origin), (cut.child_link, cut.child_origin)):
        body, offset = tree.frame(link)
        base = np.eye(4) if body < 0 else C[body]
        out.append(base @ offset @ origin)
    return tuple(out)


def check_closure(tree: TreeModel, cut: CutJoint, C: np.ndarray,
                  tol: float = CLOSURE_TOLERANCE) -> None:
    """Raise :class:`DescriptionError` unless the cut frames of ``cut`` coincide, for the
    absolute body poses ``C`` (nq, 4, 4) of a configuration (the zero configuration when the
    description is read), up to the cut joint's own freedom."""
    Fp, Fc = cut_frames(tree, cut, C)
    T = pose_inv(Fp) @ Fc
    R, p = T[:3, :3], T[:3, 3]
    problems = []
    if cut.type in ("prismatic", "cylindrical"):
        off = p - (p @ cut.parent_axis) * cut.parent_axis
        if np.linalg.norm(off) > tol:
            problems.append(f"its frames are {np.linalg.norm(off):.3g} m apart across the sliding axis")
        if cut.type == "prismatic" and np.linalg.norm(R - np.eye(3)) > tol:
            problems.append("its frames are rotated against each other")
    elif np.linalg.norm(p) > tol:
        problems.append(f"its frames are {np.linalg.norm(p):.3g} m apart")
    if cut.type in ("revolute", "cylindrical"):
        ca = cut.child_axis if cut.child_axis is not None else cut.parent_axis
        if np.linalg.norm(R @ ca - cut.parent_axis) > tol:
            problems.append("its parent and child axes are not aligned")
        if np.linalg.norm(R @ cut.parent_axis - cut.parent_axis) > tol:
            problems.append("its frames are rotated about an axis other than the joint axis")
    if cut.type == "universal" and abs(cut.parent_axis @ (R @ cut.child_axis)) > tol:
        problems.append("its two axes are not perpendicular")
    if problems:
        raise DescriptionError(f"loop closure '{cut.name}' ({cut.type}) does not close at the zero "
                               f"configuration: {'; '.join(problems)}")


def parse_description(description: str, gravity=None, files: bool = True) -> RobotDescription:
    """Parse a robot description (URDF text, or with ``files`` a file path: see
    :func:`.tree.description_text`) with its extension elements; every number is checked
    (:mod:`.validation`).

    Raises :class:`DescriptionError` naming the element for anything invalid: unknown links or
    joints, a fixed joint declared actuated, a loop that does not close at the zero
    configuration, duplicate names."""
    root, robot = read_description(description, files)
    tree = build_tree(robot, gravity)
    cuts = []
    C0 = forward_kinematics(tree, np.zeros(tree.nq))    # body poses at the zero configuration
    for el in root.findall("constraint"):
        cut = _parse_cut_joint(el, tree)
        if any(c.name == cut.name for c in cuts) or cut.name in tree.joint_names:
            raise DescriptionError(f"loop closure '{cut.name}': the name is used twice")
        check_closure(tree, cut, C0)
        cuts.append(cut)
    blocks = root.findall("pkm_dynamics")
    if len(blocks) > 1:
        raise DescriptionError("the description has more than one <pkm_dynamics> element")
    actuators, end_effector, platform, passive, frictions, hydraulics = [], None, None, [], [], []
    if blocks:
        block = blocks[0]
        for el in block:
            if el.tag == "actuator":
                joint = el.get("joint")
                what = f"actuator '{joint}'"
                if not joint:
                    raise DescriptionError("an <actuator> element has no joint attribute")
                if joint not in tree.joint_names:
                    raise DescriptionError(f"{what}: '{joint}' is not a moving joint of the tree "
                                           f"(moving joints: {', '.join(tree.joint_names)})")
                if any(a.joint == joint for a in actuators):
                    raise DescriptionError(f"{what} is declared twice")
                sea = el.find("series_elastic")
                if sea is None:
                    actuators.append(ActuatorSpec(joint))
                else:
                    actuators.append(ActuatorSpec(
                        joint, attribute_number(sea, "stiffness", f"{what} <series_elastic>", MAX_STIFFNESS),
                        attribute_number(sea, "motor_inertia", f"{what} <series_elastic>", MAX_MASS)))
            elif el.tag == "passive":
                joint = el.get("joint")
                if joint not in tree.joint_names:
                    raise DescriptionError(f"passive joint '{joint}' is not a moving joint of the tree")
                if joint in passive:
                    raise DescriptionError(f"passive joint '{joint}' is declared twice")
                passive.append(joint)
            elif el.tag == "end_effector":
                end_effector = el.get("link")
                if end_effector not in tree.frames:
                    raise DescriptionError(f"end effector link '{end_effector}' does not exist")
            elif el.tag == "platform":
                link = el.get("link")
                if link not in tree.frames:
                    raise DescriptionError(f"platform link '{link}' does not exist")
                ts = el.find("task_space")
                coords = tuple(ts.get("coordinates", "").split()) if ts is not None else TASK_COORDINATES
                bad = [c for c in coords if c not in TASK_COORDINATES]
                if bad or not coords or len(set(coords)) != len(coords):
                    raise DescriptionError(f"platform '{link}': task_space coordinates {coords} must be "
                                           f"distinct names from {' '.join(TASK_COORDINATES)}")
                platform = PlatformSpec(link, _origin(el.find("origin"), f"platform '{link}' <origin>"), coords)
            elif el.tag == "friction":
                frictions.append(el)            # read with the URDF <dynamics> below
            elif el.tag == "hydraulics":
                hydraulics.append(el)
            else:
                raise DescriptionError(f"unknown element <{el.tag}> in <pkm_dynamics>")
    if not actuators:
        raise DescriptionError(f"robot '{tree.name}' declares no actuated joint "
                               "(<pkm_dynamics><actuator joint=\"...\"/></pkm_dynamics>)")
    both = sorted(set(passive) & {a.joint for a in actuators})
    if both:
        raise DescriptionError(f"joint '{both[0]}' is declared both actuated and passive")
    if passive and platform is not None:
        raise DescriptionError(f"passive joint '{passive[0]}': passive joints are served for chains without "
                               "<platform> only")
    if len(hydraulics) > 1:
        raise DescriptionError("<pkm_dynamics> has more than one <hydraulics> element")
    hyd = parse_hydraulics(hydraulics[0], tree, tuple(a.joint for a in actuators)) if hydraulics else None
    return RobotDescription(tree.name, tree, tuple(cuts), tuple(actuators), end_effector, platform,
                            ET.tostring(root, encoding="unicode"), tuple(passive),
                            parse_friction(robot, frictions, tree), hyd)


def as_description(description, gravity=None) -> RobotDescription:
    """``description`` as a :class:`RobotDescription`: parsed (:func:`parse_description`) when it
    is URDF text or a file path; an already parsed one is taken as it is, with its gravity
    replaced by ``gravity`` when given (the robot constructors' argument)."""
    if not isinstance(description, RobotDescription):
        return parse_description(description, gravity)
    if gravity is None:
        return description
    return replace(description, tree=description.tree.with_gravity(gravity))
