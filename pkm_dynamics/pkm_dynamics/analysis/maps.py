"""The maps a person asks for, each a function of the robot and its grid returning an
``xarray.Dataset``: :func:`load_chart` (module chains) and :func:`workspace_map` (parallel
robots).  Each splits its grid into chunks of a documented size (:data:`LOAD_CHART_CHUNK`,
:data:`WORKSPACE_CHUNK`), runs them with :func:`.execution.map_chunks` (Dask) and combines them.
"""
from __future__ import annotations

import numpy as np

from ..core.description.payload import Payload, robot_with_payload
from .execution import RobotSpec, map_chunks
from .grids import GridError, chunk_bounds, grid_points, parse_axis
from .limits import LimitError, actuator_force_limits
from .chart import chart_setup, combine_parts, load_chart_chunk, static_payload_forces
from .workspace import WORKSPACE_FIELDS, WorkspaceSetup, check_axes, combine_workspace, workspace_chunk

#: configuration samples per chunk of a load chart: one compiled call for the static forces
#: (core/sweeps) and one batched forward kinematics of this many states
LOAD_CHART_CHUNK = 65536
#: grid points per chunk of a workspace map: one continuation of this many inverse kinematics
WORKSPACE_CHUNK = 256


class UnreachableGridError(ValueError):
    """No point of the grid is reachable: the message gives the robot's span."""


def load_chart(robot, reach, height, *, samples: int = 60, limits: dict | None = None,
               dynamic_factor: float = 1.0, payload: float = 0.0, fixed: dict | None = None,
               chunk: int = LOAD_CHART_CHUNK, client=None, scheduler=None, workers=None, progress=False):
    """The load chart of a module chain (:mod:`.chart`) over the grid ``reach`` x
    ``height`` (specs of :func:`.grids.parse_axis` or arrays, m): ``samples`` values per limited
    actuator stroke, force limits from :func:`.limits.actuator_force_limits` (``limits``:
    overrides), ``dynamic_factor`` (>= 1) on the payload's load, the utilisation under
    ``payload`` (kg), actuators held at ``fixed``; ``chunk`` samples per Dask task (execution
    arguments of :func:`.execution.map_chunks`).

    Returns an ``xarray.Dataset`` on (reach, height): ``payload`` (kg, the largest static
    payload; NaN where no sampled configuration holds even the crane itself), ``payload_dynamic``
    (kg, with the dynamic factor), ``reachable`` (a configuration within the strokes puts the
    tool in the cell), ``utilisation`` (under ``payload``: the smallest over the cell's
    configurations of the largest ``|u_i| / limit_i``), ``samples`` (configurations in the cell),
    ``actuators`` (reach, height, actuator: the configuration of ``payload``), the limits
    ``force_lower`` / ``force_upper`` (actuator); ``attrs``: the robot's name, units, the
    settings.  Raises :class:`.grids.GridError`, :class:`.limits.LimitError`,
    :class:`UnreachableGridError`, :class:`.execution.ExecutionError`."""
    import xarray as xr
    if robot.kind != "module_chain":
        raise GridError(f"a load chart is a map of module chains; '{robot.name}' is a {robot.kind} robot "
                        "(use workspace_map)")
    reach, height = parse_axis("reach", reach), parse_axis("height", height)
    lower, upper = actuator_force_limits(robot, limits)
    if np.isinf(lower).all() and np.isinf(upper).all():
        raise LimitError(f"no actuator of '{robot.name}' has a force limit (URDF effort 0 or none): give "
                         f"them, e.g. {robot.actuated_joints[-1]}=20000 (N)")
    setup = chart_setup(robot, reach, height, samples, lower, upper, dynamic_factor, payload, fixed)
    args = [(setup, a, b) for a, b in chunk_bounds(setup.count, chunk)]
    part = combine_parts(map_chunks(robot, RobotSpec.of(robot), load_chart_chunk, args, client=client,
                                    scheduler=scheduler, workers=workers, progress=progress, name="load-chart"))
    shape = (len(reach), len(height))
    if not part.count.any():
        raise UnreachableGridError(chart_miss(robot, setup))
    best = np.where(part.index >= 0, part.index, 0)
    conf = setup.at(best)
    conf[part.index < 0] = np.nan
    mass = np.where(part.mass > -np.inf, part.mass, np.nan)
    mass_dyn = np.where(part.mass_dynamic > -np.inf, part.mass_dynamic, np.nan)
    util = np.where(part.count > 0, part.utilisation, np.nan)
    act = list(robot.actuated_joints)
    ds = xr.Dataset(
        {"payload": (("reach", "height"), mass.reshape(shape), {"units": "kg", "long_name": "largest static payload"}),
         "payload_dynamic": (("reach", "height"), mass_dyn.reshape(shape),
                             {"units": "kg", "long_name": f"largest payload, dynamic factor {dynamic_factor:g}"}),
         "reachable": (("reach", "height"), (part.count > 0).reshape(shape),
                       {"long_name": "a configuration within the strokes reaches the cell"}),
         "utilisation": (("reach", "height"), util.reshape(shape),
                         {"units": "1", "long_name": f"actuator utilisation under {payload:g} kg (1: at a limit)"}),
         "samples": (("reach", "height"), part.count.reshape(shape), {"long_name": "configurations in the cell"}),
         "actuators": (("reach", "height", "actuator"), conf.reshape(shape + (len(act),)),
                       {"units": "m or rad", "long_name": "configuration of the largest static payload"}),
         "force_lower": (("actuator",), lower, {"units": "N or N m"}),
         "force_upper": (("actuator",), upper, {"units": "N or N m"})},
        coords={"reach": ("reach", reach, {"units": "m", "long_name": "horizontal distance of the tool from z"}),
                "height": ("height", height, {"units": "m", "long_name": "height of the tool (root frame z)"}),
                "actuator": ("actuator", act)},
        attrs={"robot": robot.name, "map": "load chart", "dynamic_factor": float(dynamic_factor),
               "utilisation_payload_kg": float(payload), "samples_per_stroke": int(samples),
               "configuration_samples": int(setup.count), "chunk": int(chunk)})
    return ds


def chart_miss(robot, setup) -> str:
    """The message of a load-chart grid that no configuration reaches: the tool's span."""
    k = np.linspace(0, setup.count - 1, min(setup.count, 4096)).astype(int)
    x = setup.at(k)
    p = static_payload_forces(robot, x)[0][:, :3, 3]           # NaN where a loop is singular
    r, h = np.hypot(p[:, 0], p[:, 1]), p[:, 2]
    return (f"no configuration of '{robot.name}' puts its tool on the grid reach [{setup.reach[0]:g}, "
            f"{setup.reach[-1]:g}] m x height [{setup.height[0]:g}, {setup.height[-1]:g}] m; its tool spans reach "
            f"[{np.nanmin(r):.3g}, {np.nanmax(r):.3g}] m, height [{np.nanmin(h):.3g}, {np.nanmax(h):.3g}] m")


def workspace_map(robot, axes: dict, *, wrench=None, payload: float | None = None, chunk: int = WORKSPACE_CHUNK,
                  client=None, scheduler=None, workers=None, progress=False):
    """Workspace and singularity map of a parallel robot (:mod:`.workspace`) over the grid
    ``axes`` ({name: spec or array} of :data:`.workspace.POSE_AXES`, m / rad; an axis of one
    value is held there): per point reachability, ``kappa(J_IK)``, the worst loop
    ``kappa(G_y)``, ``lambda_max(M_t)`` and the static actuator forces under the platform
    ``wrench`` (6,) (moment, force; N m, N; body-fixed) and a ``payload`` (kg, a point mass at
    the platform frame's origin, added to the robot: its weight and its inertia in ``M_t``);
    ``chunk`` points per Dask task.

    Returns an ``xarray.Dataset`` on the grid's axes with the variables of
    :data:`.workspace.WORKSPACE_FIELDS` and ``forces`` (..., actuator); ``attrs``: the robot's
    name, units, the wrench and payload.  Raises :class:`.grids.GridError`,
    :class:`UnreachableGridError`, :class:`.execution.ExecutionError`."""
    import xarray as xr
    if robot.kind != "parallel":
        raise GridError(f"a workspace map is a map of parallel robots; '{robot.name}' is a {robot.kind} robot "
                        "(use load_chart)")
    if not axes:
        raise GridError("a workspace map needs at least one axis (x, y, z, roll, pitch, yaw)")
    axes = {name: parse_axis(name, spec) for name, spec in axes.items()}
    check_axes(robot, axes)
    W = np.zeros(6) if wrench is None else np.asarray(wrench, dtype=float).reshape(-1)
    if W.shape != (6,) or not np.isfinite(W).all():
        raise GridError(f"wrench must be 6 finite numbers (mx my mz fx fy fz), got {np.shape(wrench)}")
    load = None if not payload else Payload(float(payload))
    local = robot if load is None else robot_with_payload(robot, load)
    setup = WorkspaceSetup(axes, W)
    points, order = grid_points(axes)
    args = [(setup, points[a:b], order[a:b]) for a, b in chunk_bounds(len(points), chunk)]
    parts = map_chunks(local, RobotSpec.of(robot, load), workspace_chunk, args, client=client, scheduler=scheduler,
                       workers=workers, progress=progress, name="workspace")
    out = combine_workspace(parts, setup.shape, len(robot.actuated_joints))
    if not out.reachable.any():
        span = ", ".join(f"{k} [{v[0]:g}, {v[-1]:g}]" for k, v in axes.items())
        raise UnreachableGridError(f"no point of the grid {span} is reachable by '{robot.name}' (m, rad, about "
                                   "its reference pose): the inverse kinematics fails at every one")
    dims = tuple(axes)
    units = {"x": "m", "y": "m", "z": "m", "roll": "rad", "pitch": "rad", "yaw": "rad"}
    data = {name: (dims, getattr(out, name).reshape(setup.shape), {"units": u, "long_name": text})
            for name, (u, text) in WORKSPACE_FIELDS.items()}
    data["forces"] = (dims + ("actuator",), out.forces.reshape(setup.shape + (-1,)),
                      {"units": "N or N m", "long_name": "static actuator forces under the wrench and payload"})
    coords = {k: (k, v, {"units": units[k]}) for k, v in axes.items()}
    coords["actuator"] = ("actuator", list(robot.actuated_joints))
    return xr.Dataset(data, coords=coords,
                      attrs={"robot": robot.name, "map": "workspace", "wrench": W.tolist(),
                             "payload_kg": float(payload or 0.0), "task_space": " ".join(robot.task_space),
                             "ik_scheme": robot.options.ik_scheme, "chunk": int(chunk)})
