"""Spanning-tree model of a robot, built from a URDF (``urdf_parser_py``).

The tree model holds, for every moving body ``i`` (one per non-fixed URDF joint, parents
before children), the data of the product-of-exponentials description of papers 001/002:

* ``parent[i]``: index of the predecessor body (``-1``: the fixed base, the URDF root),
* ``B[i]``: reference configuration of body ``i`` relative to its predecessor (4x4),
* ``X[i]``: screw coordinates of joint ``i`` in the frame of body ``i`` (``(e, 0)`` revolute,
  ``(0, e)`` prismatic),
* ``M[i]``: spatial inertia of body ``i`` about its frame (:mod:`.spatial` conventions),

so that the pose of body ``i`` relative to its predecessor is ``B[i] exp(X[i] q_i)``.  The
frame of body ``i`` is the URDF child link frame of joint ``i``.  Links attached by fixed
joints are merged into the body they hang from: their inertia is added, and their frame is
kept in ``frames`` (link name -> (body index, pose of the link in the body frame)).
"""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..errors import DescriptionError
from ..spatial.se3 import pose, rpy_matrix, spatial_inertia, transform_inertia
from ..description.validation import (MAX_COORDINATE, MAX_DESCRIPTION_CHARS, check_element_counts, check_numbers,
                                      check_text_size, check_urdf, unit_axis)

STANDARD_GRAVITY = np.array([0.0, 0.0, -9.80665])

#: Top-level elements of the robot description that are not URDF (see doc/description_format.rst).
EXTENSION_TAGS = ("constraint", "pkm_dynamics")


@dataclass(frozen=True)
class TreeModel:
    """Spanning tree of a robot (model data only; algorithms live in :mod:`.tree_dynamics`)."""

    name: str
    root_link: str
    joint_names: tuple
    joint_types: tuple
    body_names: tuple
    parent: np.ndarray
    B: np.ndarray
    X: np.ndarray
    M: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    velocity_limit: np.ndarray
    effort_limit: np.ndarray
    frames: dict
    base_mass: float
    gravity: np.ndarray = field(default_factory=lambda: STANDARD_GRAVITY.copy())

    @property
    def nq(self) -> int:
        return len(self.joint_names)

    @property
    def masses(self) -> np.ndarray:
        return self.M[:, 3, 3].copy()

    @property
    def total_mass(self) -> float:
        """Mass of every link of the description, the fixed base included."""
        return float(self.masses.sum() + self.base_mass)

    def joint_index(self, name: str) -> int:
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise DescriptionError(
                f"joint '{name}' is not a moving joint of robot '{self.name}' "
                f"(moving joints: {', '.join(self.joint_names)})") from None

    def frame(self, link: str) -> tuple:
        """``(body index, pose of the link frame in that body's frame)``; index -1 = base."""
        try:
            return self.frames[link]
        except KeyError:
            raise DescriptionError(f"link '{link}' does not exist in robot '{self.name}'") from None

    def support(self, body: int) -> list:
        """Indices of the joints between the base and ``body`` (base first)."""
        out = []
        while body >= 0:
            out.append(body)
            body = int(self.parent[body])
        return out[::-1]

    @cached_property
    def compiled(self):
        """This tree as the flat arrays of the compiled tree kernels
        (:class:`~pkm_dynamics.core.tree.compiled_tree.CompiledTree`), built on first use."""
        from .compiled_tree import CompiledTree
        return CompiledTree.build(self)

    def with_gravity(self, gravity) -> "TreeModel":
        from dataclasses import replace
        return replace(self, gravity=np.asarray(gravity, dtype=float).reshape(3))


def description_text(description, files: bool = True) -> str:
    """The XML text of a robot description: ``description`` itself when it is XML text (it
    begins with ``<``), else -- only with ``files`` -- the contents of the file it names.

    The ROS node passes ``files=False``: a description is XML text there, and the error for
    anything else neither reads the node's disk nor repeats the input."""
    if not isinstance(description, str) or not description.strip():
        raise DescriptionError("robot description is empty")
    if description.lstrip().startswith("<"):
        return description
    if not files:
        raise DescriptionError("robot description is not URDF XML text (it must begin with '<'; "
                               "file paths are not read)")
    if not os.path.isfile(description):
        raise DescriptionError(f"robot description '{description:.200}' is neither URDF XML nor a file")
    with open(description, encoding="utf-8") as f:
        return f.read(MAX_DESCRIPTION_CHARS + 1)        # more is refused by check_text_size


def read_description(description: str, files: bool = True) -> tuple:
    """Read a robot description (URDF XML text, or with ``files`` a path to a file: see
    :func:`description_text`).

    Returns ``(xml_root, urdf_robot)``: the parsed XML (extension elements included) and the
    ``urdf_parser_py`` model of the URDF part (extension elements removed before parsing, so
    the URDF parser sees plain URDF).  The size bounds of :mod:`.validation` are checked before
    and right after XML parsing.  A link with two parents is rejected here, because
    ``urdf_parser_py`` would silently keep only the last one.
    """
    from urdf_parser_py.urdf import URDF

    text = description_text(description, files)
    check_text_size(text)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise DescriptionError(f"robot description is not well-formed XML: {exc}") from None
    if root.tag != "robot":
        raise DescriptionError(f"robot description root element is <{root.tag:.40}>, expected <robot>")
    check_element_counts(root)
    parents = {}
    for j in root.findall("joint"):
        child = j.find("child")
        parent = j.find("parent")
        if child is None or parent is None:
            raise DescriptionError(f"joint '{j.get('name')}' lacks a <parent> or <child> element")
        c = child.get("link")
        if c in parents:
            raise DescriptionError(
                f"link '{c}' has two parents (joints '{parents[c]}' and '{j.get('name')}'): "
                "a URDF must be a tree; close loops with a <constraint> element instead")
        parents[c] = j.get("name")
    plain = ET.Element(root.tag, root.attrib)
    for el in root:
        if el.tag not in EXTENSION_TAGS:
            plain.append(el)
    try:
        robot = URDF.from_xml_string(ET.tostring(plain, encoding="unicode"))
    except Exception as exc:  # urdf_parser_py raises assorted exception types
        raise DescriptionError(f"URDF could not be parsed: {exc}") from None
    return root, robot


def _origin(o) -> np.ndarray:
    if o is None:
        return np.eye(4)
    xyz = o.xyz if o.xyz is not None else [0.0, 0.0, 0.0]
    rpy = o.rpy if o.rpy is not None else [0.0, 0.0, 0.0]
    return pose(rpy_matrix(rpy), xyz)


def _link_inertia(link) -> np.ndarray:
    """Spatial inertia of a URDF link about its own frame (zero when it has no <inertial>);
    its numbers were checked by :func:`.validation.check_urdf`."""
    inertial = link.inertial
    if inertial is None:
        return np.zeros((6, 6))
    m = float(inertial.mass)
    i = inertial.inertia
    I = np.array([[i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]], dtype=float)
    O = _origin(inertial.origin)
    # inertia about the COM, axes of the link frame
    R = O[:3, :3]
    return spatial_inertia(m, O[:3, 3], R @ I @ R.T)


def build_tree(robot, gravity=None) -> TreeModel:
    """Build the :class:`TreeModel` of a ``urdf_parser_py`` robot (see module docstring); its
    numbers are checked first (:func:`.validation.check_urdf`)."""
    check_urdf(robot)
    links = {l.name: l for l in robot.links}
    children = {}
    has_parent = set()
    for j in robot.joints:
        if j.type in ("floating", "planar"):
            raise DescriptionError(f"joint '{j.name}' is of type '{j.type}': only revolute, continuous, "
                                   "prismatic and fixed joints are supported")
        if j.type not in ("revolute", "continuous", "prismatic", "fixed"):
            raise DescriptionError(f"joint '{j.name}' has unknown type '{j.type}'")
        if j.mimic is not None:
            raise DescriptionError(f"joint '{j.name}' has a <mimic> element: mimic joints are not supported "
                                   "(describe the coupling as a loop closure instead)")
        for end in (j.parent, j.child):
            if end not in links:
                raise DescriptionError(f"joint '{j.name}' refers to link '{end}', which does not exist")
        children.setdefault(j.parent, []).append(j)
        has_parent.add(j.child)
    roots = [l.name for l in robot.links if l.name not in has_parent]
    if len(roots) != 1:
        raise DescriptionError(f"the URDF must have exactly one root link, found {len(roots)}: {roots}")
    root = roots[0]

    names, types, bodies, parent, Bs, Xs, Ms = [], [], [], [], [], [], []
    lower, upper, vel, eff = [], [], [], []
    frames = {root: (-1, np.eye(4))}
    base_M = _link_inertia(links[root])

    def add_inertia(body, offset, link):
        Ml = _link_inertia(link)
        if body < 0:
            nonlocal base_M
            base_M = base_M + transform_inertia(Ml, offset)
        else:
            Ms[body] = Ms[body] + transform_inertia(Ml, offset)

    # depth-first, children in the order their joints appear in the URDF
    stack = [(root, -1, np.eye(4))]
    visited = set()
    while stack:
        link_name, body, offset = stack.pop()
        if link_name in visited:
            raise DescriptionError(f"link '{link_name}' is reached twice: the URDF is not a tree")
        visited.add(link_name)
        pending = []
        for j in children.get(link_name, []):
            T = offset @ _origin(j.origin)
            if j.type == "fixed":
                frames[j.child] = (body, T)
                add_inertia(body, T, links[j.child])
                pending.append((j.child, body, T))
                continue
            axis = unit_axis(j.axis if j.axis is not None else [1.0, 0.0, 0.0], f"joint '{j.name}'")
            X = np.concatenate([axis, np.zeros(3)]) if j.type != "prismatic" else np.concatenate([np.zeros(3), axis])
            i = len(names)
            names.append(j.name)
            types.append("prismatic" if j.type == "prismatic" else "revolute")
            bodies.append(j.child)
            parent.append(body)
            Bs.append(T)
            Xs.append(X)
            Ms.append(np.zeros((6, 6)))
            lim = j.limit
            if j.type == "continuous" or lim is None:
                lower.append(-np.inf), upper.append(np.inf)
            else:
                lower.append(float(lim.lower) if lim.lower is not None else -np.inf)
                upper.append(float(lim.upper) if lim.upper is not None else np.inf)
            vel.append(float(lim.velocity) if lim is not None and lim.velocity else np.inf)
            eff.append(float(lim.effort) if lim is not None and lim.effort else np.inf)
            frames[j.child] = (i, np.eye(4))
            add_inertia(i, np.eye(4), links[j.child])
            pending.append((j.child, i, np.eye(4)))
        stack.extend(reversed(pending))
    unreached = [l.name for l in robot.links if l.name not in visited]
    if unreached:
        raise DescriptionError(f"links {unreached} are not connected to the root link '{root}'")

    n = len(names)
    M = np.array(Ms).reshape(n, 6, 6)
    # a moving joint whose whole subtree carries no mass makes the mass matrix singular
    sub = M[:, 3, 3].copy()
    for i in range(n - 1, -1, -1):
        if parent[i] >= 0:
            sub[parent[i]] += sub[i]
    for i in range(n):
        if sub[i] <= 0.0:
            raise DescriptionError(f"joint '{names[i]}' moves no mass (link '{bodies[i]}' and everything "
                                   "beyond it have zero mass): give its links <inertial> elements")
    g = STANDARD_GRAVITY.copy() if gravity is None else check_numbers(gravity, "gravity", MAX_COORDINATE)
    if g.shape != (3,):
        raise DescriptionError(f"gravity must hold 3 numbers, got {g.size}")
    return TreeModel(
        name=robot.name, root_link=root, joint_names=tuple(names), joint_types=tuple(types),
        body_names=tuple(bodies), parent=np.array(parent, dtype=int),
        B=np.array(Bs).reshape(n, 4, 4), X=np.array(Xs).reshape(n, 6), M=M,
        lower=np.array(lower), upper=np.array(upper), velocity_limit=np.array(vel),
        effort_limit=np.array(eff), frames=frames, base_mass=float(base_M[3, 3]), gravity=g)


def load_tree(description: str, gravity=None) -> TreeModel:
    """Tree model of a URDF (XML text or file path: see :func:`description_text`).  Loop-closure extension elements are
    ignored here; :func:`pkm_dynamics.core.load_robot` reads them."""
    _, robot = read_description(description)
    return build_tree(robot, gravity)
