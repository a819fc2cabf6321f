"""``pkm_dynamics_analyze``: the maps of :mod:`pkm_dynamics.analysis` from the command line.

Examples (from ``pkm_dynamics/``)::

    pkm_dynamics_analyze load-chart robots/heavy_duty_4dof.urdf --reach 0:6:0.05 --height -2:5:0.05 \\
        --force-limit lift=80000 --force-limit tilt=60000 --force-limit extension=15000 \\
        --dynamic-factor 1.3 --payload 200 --out chart.nc --plot chart.png
    pkm_dynamics_analyze workspace robots/irsbot2.urdf --x -0.1:0.1:0.005 --z -0.1:0.1:0.005 \\
        --payload 0.5 --out irsbot2.nc --plot irsbot2.png
    pkm_dynamics_analyze workspace robots/gough_stewart_6ups.urdf --x -0.05:0.05:0.0025 \\
        --y -0.05:0.05:0.0025 --scheduler tcp://host:8786 --out gs.nc --plot gs.png

``--workers N`` (default: one process per core; 0: this process), ``--scheduler ADDRESS``: an
existing Dask cluster.  Exit status 0 on success, 2 for a bad argument or an unreachable grid,
3 when the chunks could not run; the message names the culprit, and no output file is written.
"""
from __future__ import annotations

import argparse
import sys

from ..core.errors import PkmDynamicsError
from .datasets import OutputError, output_format, save_dataset
from .execution import ExecutionError
from .grids import GridError
from .limits import LimitError, parse_force_limits
from .maps import LOAD_CHART_CHUNK, WORKSPACE_CHUNK, UnreachableGridError, load_chart, workspace_map
from .plots import PlotError, plot_load_chart, plot_workspace
from .workspace import POSE_AXES


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pkm_dynamics_analyze", description="Maps of a robot over a grid, on Dask.")
    sub = p.add_subparsers(dest="command", required=True)

    def common(s, chunk):
        s.add_argument("robot", help="robot description (URDF file with the pkm_dynamics extension)")
        s.add_argument("--out", help="result file: .nc (NetCDF) or .zarr (Zarr)")
        s.add_argument("--plot", help="figure file (.png, .pdf, .svg)")
        s.add_argument("--chunk", type=int, default=chunk, help=f"grid items per Dask task (default {chunk})")
        s.add_argument("--workers", type=int, help="local worker processes (default: one per core; 0: this process)")
        s.add_argument("--scheduler", help="address of a running Dask scheduler, e.g. tcp://host:8786")
        s.add_argument("--no-progress", action="store_true", help="no progress bar")

    lc = sub.add_parser("load-chart", help="largest payload over reach x height (module chains)")
    common(lc, LOAD_CHART_CHUNK)
    lc.add_argument("--reach", required=True, help="reach grid start:stop:step (m)")
    lc.add_argument("--height", required=True, help="height grid start:stop:step (m)")
    lc.add_argument("--samples", type=int, default=60, help="configurations per actuator stroke (default 60)")
    lc.add_argument("--force-limit", action="append", metavar="NAME=N|NAME=LOWER:UPPER",
                    help="force limit of an actuator (N or N m), replacing the URDF effort; repeatable")
    lc.add_argument("--fixed", action="append", metavar="NAME=VALUE", help="hold an actuator at a value")
    lc.add_argument("--dynamic-factor", type=float, default=1.0, help="factor on the payload's load (default 1)")
    lc.add_argument("--payload", type=float, default=0.0, help="payload of the utilisation map (kg)")

    ws = sub.add_parser("workspace", help="reachability, kappa(J_IK), kappa(G_y), forces, M_t (parallel robots)")
    common(ws, WORKSPACE_CHUNK)
    for name in POSE_AXES:
        ws.add_argument(f"--{name}", help=f"{name} grid start:stop:step or a value (m or rad; default 0)")
    ws.add_argument("--wrench", help="platform wrench mx,my,mz,fx,fy,fz (N m, N; platform frame)")
    ws.add_argument("--payload", type=float, help="point mass at the platform frame's origin (kg)")
    return p


def _fixed(items) -> dict:
    out = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        try:
            if not sep:
                raise ValueError
            out[name] = float(value)
        except ValueError:
            raise GridError(f"--fixed '{item}' is not NAME=VALUE") from None
    return out


def run(args) -> None:
    """Build the robot, make the map, write the outputs (checked before the map runs)."""
    from ..core import load_robot
    if args.out:
        output_format(args.out)
    robot = load_robot(args.robot)
    run_kw = dict(chunk=args.chunk, workers=args.workers, scheduler=args.scheduler, progress=not args.no_progress)
    if args.command == "load-chart":
        ds = load_chart(robot, args.reach, args.height, samples=args.samples,
                        limits=parse_force_limits(args.force_limit), dynamic_factor=args.dynamic_factor,
                        payload=args.payload, fixed=_fixed(args.fixed), **run_kw)
        draw = plot_load_chart
    else:
        axes = {n: getattr(args, n) for n in POSE_AXES if getattr(args, n) is not None}
        wrench = None if args.wrench is None else _numbers(args.wrench, "--wrench")
        ds = workspace_map(robot, axes, wrench=wrench, payload=args.payload, **run_kw)
        draw = plot_workspace
    if args.out:
        save_dataset(ds, args.out)
        print(f"wrote {args.out}")
    if args.plot:
        draw(ds, args.plot)
        print(f"wrote {args.plot}")
    if not args.out and not args.plot:
        print(ds)


def _numbers(text: str, what: str) -> list:
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise GridError(f"{what} '{text}' is not a comma list of numbers") from None


def negative_values(argv: list) -> list:
    """``--height -2:5:0.05`` as ``--height=-2:5:0.05``: a grid value that starts with a minus sign
    is the option's value, not an option (argparse would read it as one)."""
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else ""
        value = len(nxt) > 1 and nxt[0] == "-" and (nxt[1].isdigit() or nxt[1] == ".")
        if a.startswith("--") and "=" not in a and value:
            out.append(f"{a}={nxt}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def main(argv=None) -> int:
    args = parser().parse_args(negative_values(list(sys.argv[1:] if argv is None else argv)))
    try:
        run(args)
    except (GridError, LimitError, UnreachableGridError, OutputError, PlotError, PkmDynamicsError) as exc:
        print(f"pkm_dynamics_analyze: error: {exc}", file=sys.stderr)
        return 2
    except ExecutionError as exc:
        print(f"pkm_dynamics_analyze: error: {exc}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
