"""What a robot description may contain: its size and every number in it.

A description is checked before any model is built from it, so that a model never holds a
non-finite or physically meaningless number and a description never costs more than a
bounded amount of memory and time.  Every check raises :class:`DescriptionError` naming the
link, joint or extension element at fault.  The bounds (documented in doc/description_format.rst):

* size: at most :data:`MAX_DESCRIPTION_CHARS` characters, XML nesting at most
  :data:`MAX_DEPTH` deep, no document type declaration (so no entities: URDF uses none),
  at most :data:`MAX_LINKS` links, :data:`MAX_JOINTS` joints and :data:`MAX_CONSTRAINTS`
  loop closures;
* numbers: finite; lengths (origins, centres of mass) and joint limits at most
  :data:`MAX_COORDINATE` (m or rad) in magnitude, angles (rpy) at most
  :data:`MAX_COORDINATE` rad; masses in [:data:`MIN_MASS`, :data:`MAX_MASS`] kg; an inertia
  tensor positive definite, satisfying the triangle inequality of its principal moments
  (I1 + I2 >= I3, equality allowed: a thin disc) and its moments at most
  :data:`MAX_INERTIA` kg m^2; axes non-zero (they are normalised); lower <= upper; velocity
  and effort limits non-negative and at most :data:`MAX_VELOCITY` / :data:`MAX_EFFORT`;
  series-elastic stiffness in (0, :data:`MAX_STIFFNESS`], motor inertia in
  (0, :data:`MAX_MASS`];
* a run-time payload (:func:`check_payload`): mass in [0, :data:`MAX_MASS`] kg, centre of
  mass within :data:`MAX_COORDINATE`, inertia positive semi-definite (a point mass has none)
  with the triangle inequality.
"""
from __future__ import annotations

import numpy as np

from ..errors import DescriptionError

#: characters of one description (a large robot's URDF is a few hundred kB)
MAX_DESCRIPTION_CHARS = 2_000_000
#: nesting depth of XML elements (URDF needs about 6)
MAX_DEPTH = 32
MAX_LINKS = 2000
MAX_JOINTS = 2000
MAX_CONSTRAINTS = 1000
#: m (lengths) or rad (angles, revolute limits)
MAX_COORDINATE = 1e3
#: kg
MIN_MASS, MAX_MASS = 1e-9, 1e6
#: kg m^2 (a principal moment)
MAX_INERTIA = 1e9
#: m/s or rad/s, N or N m
MAX_VELOCITY, MAX_EFFORT = 1e4, 1e9
#: N/m or N m/rad
MAX_STIFFNESS = 1e12
#: relative slack of the triangle inequality (the rounding of printed moments)
TRIANGLE_SLACK = 1e-9


def check_text_size(text: str) -> None:
    """Refuse a description too long to be a robot, or one with a document type declaration
    (the only place XML entities can be declared: refusing it refuses entity expansion)."""
    if len(text) > MAX_DESCRIPTION_CHARS:
        raise DescriptionError(f"robot description has {len(text)} characters, more than the "
                               f"limit of {MAX_DESCRIPTION_CHARS}")
    if "<!DOCTYPE" in text:            # XML spells it so; expat refuses any other case
        raise DescriptionError("robot description has a document type declaration (<!DOCTYPE>): "
                               "DTDs and entities are not accepted in a URDF")


def check_element_counts(root) -> None:
    """Refuse an XML tree nested deeper than :data:`MAX_DEPTH` or with more links, joints or
    loop closures than allowed (``root``: the ``<robot>`` element)."""
    stack = [(root, 1)]
    while stack:
        el, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise DescriptionError(f"robot description is nested {depth} elements deep "
                                   f"(<{el.tag[:40]}>), more than the limit of {MAX_DEPTH}")
        stack.extend((child, depth + 1) for child in el)
    for tag, limit in (("link", MAX_LINKS), ("joint", MAX_JOINTS),
                       ("constraint", MAX_CONSTRAINTS)):
        n = len(root.findall(tag))
        if n > limit:
            raise DescriptionError(f"robot description has {n} <{tag}> elements, more than the "
                                   f"limit of {limit}")


def check_numbers(values, what: str, bound: float) -> np.ndarray:
    """``values`` as a float array, each finite and at most ``bound`` in magnitude."""
    try:
        v = np.array(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise DescriptionError(f"{what}: {values!r:.80} is not a list of numbers") from None
    if not np.all(np.isfinite(v)):
        raise DescriptionError(f"{what}: {v.tolist()} holds a non-finite number")
    if np.any(np.abs(v) > bound):
        raise DescriptionError(f"{what}: {v.tolist()} exceeds the bound of {bound:g} in magnitude")
    return v


def check_origin(xyz, rpy, what: str) -> None:
    """An origin: position (m) and roll-pitch-yaw angles (rad), finite and bounded."""
    if xyz is not None:
        check_numbers(xyz, f"{what} xyz", MAX_COORDINATE)
    if rpy is not None:
        check_numbers(rpy, f"{what} rpy", MAX_COORDINATE)


def unit_axis(axis, what: str) -> np.ndarray:
    """The unit vector along a finite, non-zero ``axis`` (3 numbers)."""
    a = check_numbers(axis, f"{what} axis", np.inf)
    scale = np.abs(a).max() if a.size else 0.0
    if a.shape != (3,) or scale < 1e-12:
        raise DescriptionError(f"{what}: the axis {a.tolist()} is not a non-zero 3-vector")
    a = a / scale
    return a / np.linalg.norm(a)


def check_inertial(mass, inertia: np.ndarray, what: str) -> None:
    """A rigid body's mass (kg) and its 3x3 rotational inertia about the centre of mass:
    mass in [MIN_MASS, MAX_MASS]; the inertia symmetric positive definite with principal
    moments I1 <= I2 <= I3 satisfying I1 + I2 >= I3 and I3 <= MAX_INERTIA."""
    m = check_numbers([mass], f"{what}: mass", np.inf)[0]
    if not MIN_MASS <= m <= MAX_MASS:
        raise DescriptionError(f"{what}: mass {m:g} kg is outside [{MIN_MASS:g}, {MAX_MASS:g}] kg")
    check_principal_moments(inertia, what, definite=True)


def check_principal_moments(inertia, what: str, definite: bool) -> np.ndarray:
    """A 3x3 rotational inertia about the centre of mass: finite, symmetric, principal moments
    I1 <= I2 <= I3 positive (``definite``) or non-negative (a point mass has none), with
    I1 + I2 >= I3 and I3 <= MAX_INERTIA.  Returns the inertia (3, 3)."""
    I = check_numbers(inertia, f"{what}: inertia", MAX_INERTIA).reshape(3, 3)
    if not np.allclose(I, I.T, rtol=0.0, atol=TRIANGLE_SLACK * max(1.0, np.abs(I).max())):
        raise DescriptionError(f"{what}: the inertia tensor {I.tolist()} is not symmetric")
    moments = np.linalg.eigvalsh(I)
    if definite and moments[0] <= 0.0:
        raise DescriptionError(f"{what}: the inertia tensor is not positive definite "
                               f"(principal moments {moments.tolist()})")
    if moments[0] < -TRIANGLE_SLACK * max(1.0, moments[2]):
        raise DescriptionError(f"{what}: the inertia tensor is not positive semi-definite "
                               f"(principal moments {moments.tolist()})")
    if moments[0] + moments[1] < moments[2] * (1.0 - TRIANGLE_SLACK):
        raise DescriptionError(f"{what}: the principal moments of inertia {moments.tolist()} "
                               "violate the triangle inequality I1 + I2 >= I3 (no rigid body "
                               "has them)")
    return I


def check_payload(mass, com, inertia, what: str = "payload") -> tuple:
    """A load carried by the end effector or platform: mass (kg) in [0, MAX_MASS], centre of
    mass (3,) (m) at most MAX_COORDINATE from the link frame, inertia (3, 3) about the centre of
    mass positive semi-definite (zero for a point mass) with the triangle inequality.  Returns
    ``(mass, com (3,), inertia (3, 3))`` as floats."""
    m = check_numbers([mass], f"{what}: mass", np.inf)[0]
    if not 0.0 <= m <= MAX_MASS:
        raise DescriptionError(f"{what}: mass {m:g} kg is outside [0, {MAX_MASS:g}] kg")
    c = check_numbers(com, f"{what}: centre of mass", MAX_COORDINATE)
    if c.shape != (3,):
        raise DescriptionError(f"{what}: the centre of mass must hold 3 numbers, got {c.size}")
    I = check_numbers(inertia, f"{what}: inertia", MAX_INERTIA)
    if I.size != 9:
        raise DescriptionError(f"{what}: the inertia must be a 3x3 matrix, got {I.size} numbers")
    return float(m), c, check_principal_moments(I, what, definite=False)


def check_limit(lower, upper, velocity, effort, what: str) -> None:
    """A joint's ``<limit>``: finite bounds with lower <= upper, non-negative velocity and
    effort limits (``None``: not given)."""
    for name, value, bound in (("lower", lower, MAX_COORDINATE), ("upper", upper, MAX_COORDINATE),
                               ("velocity", velocity, MAX_VELOCITY),
                               ("effort", effort, MAX_EFFORT)):
        if value is not None:
            check_numbers([value], f"{what} limit {name}", bound)
    for name, value in (("velocity", velocity), ("effort", effort)):
        if value is not None and value < 0:
            raise DescriptionError(f"{what}: limit {name} {value:g} is negative")
    if lower is not None and upper is not None and lower > upper:
        raise DescriptionError(f"{what}: limit lower {lower:g} exceeds upper {upper:g}")


def attribute_number(el, attr: str, what: str, bound: float, sign: str = "positive", default=None) -> float:
    """The attribute ``attr`` of the XML element ``el`` (``what`` names it: its tag and joint) as
    a finite float in the range ``sign``: ``"positive"`` (0, bound], ``"non-negative"``
    [0, bound], ``"signed"`` at most ``bound`` in magnitude; ``default``
    when the attribute is absent (None: it is required).  Raises :class:`DescriptionError`
    naming the element, the attribute and its text."""
    text = el.get(attr)
    if text is None:
        if default is None:
            raise DescriptionError(f"{what}: missing attribute '{attr}'")
        return default
    try:
        v = float(text)
    except ValueError:
        raise DescriptionError(f"{what}: {attr}=\"{text:.80}\" is not a number") from None
    if sign == "positive":
        inside, words = 0.0 < v <= bound, f"(0, {bound:g}]"
    elif sign == "non-negative":
        inside, words = 0.0 <= v <= bound, f"[0, {bound:g}]"
    else:
        inside, words = abs(v) <= bound, f"[-{bound:g}, {bound:g}]"
    if not (np.isfinite(v) and inside):
        raise DescriptionError(f"{what}: {attr}=\"{text:.80}\" must be in {words}")
    return v


def check_urdf(robot) -> None:
    """Every number of a ``urdf_parser_py`` robot: link inertials and joint origins, axes and
    limits (see the module docstring for the bounds)."""
    for link in robot.links:
        inertial = link.inertial
        if inertial is None:
            continue
        what = f"link '{link.name}' <inertial>"
        if inertial.origin is not None:
            check_origin(inertial.origin.xyz, inertial.origin.rpy, f"{what} origin")
        i = inertial.inertia
        I = np.zeros((3, 3)) if i is None else [
            [i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]]
        check_inertial(inertial.mass if inertial.mass is not None else 0.0, I, what)
    for joint in robot.joints:
        what = f"joint '{joint.name}'"
        if joint.origin is not None:
            check_origin(joint.origin.xyz, joint.origin.rpy, f"{what} origin")
        if joint.type in ("revolute", "continuous", "prismatic") and joint.axis is not None:
            unit_axis(joint.axis, what)
        lim = joint.limit
        if lim is not None:
            check_limit(lim.lower, lim.upper, lim.velocity, lim.effort, what)
