"""Benchmark of the analysis maps (pkm_dynamics.analysis), the full-size examples of issue 29.

* Crane load chart (``robots/heavy_duty_4dof.urdf``, illustrative force limits lift 80 kN, tilt
  60 kN, extension 15 kN): configuration states per CPU-second of this process and per wall
  second (one chunk of ``LOAD_CHART_CHUNK`` states: one compiled call, core/sweeps, for the
  static forces ``u_0``, ``u_1`` and the tool position of every state, the closed-form payload
  and the cell reduction), and the wall time of a 10^6-state
  chart (100 samples per stroke of lift, tilt and extension) over reach 0:6:0.05 x height
  -2:5:0.05 in this process.  The scaling: the wall time of a chart of ``SCALING_SAMPLES`` per
  stroke (8 x 10^6 states, ~6 s of CPU; the 10^6-state chart is ~0.8 s of CPU, where the cluster's
  cost per map and per task weighs as much as the second core) on a LocalCluster of 1 and of 2
  worker processes: clusters of 1, 2, 1, 2 workers in turns, two charts on each, the median wall
  time per count; the cluster's start reported apart.  ``--scaling-samples N`` (0: none).
* Workspace + kappa maps of the Gough-Stewart platform (x, y grid) and the IRSBot-2 (x, z grid):
  poses per CPU-second of this process (the machine is shared: wall time counts the others' load)
  with the grid continuation (``workspace_chunk``: one compiled sweep of the inverse kinematics
  started from the predictor along the grid's lines or the last solution, J_IK, forces, M_t,
  kappa(J_IK), worst loop kappa(G_y), lambda_max(M_t)), the IK iterations per pose (median,
  mean), timed in turns
  with a plain Python loop over the one-pose API doing the same from a cold start at every pose
  (``inverse_kinematics(pose)``, ``np.linalg.cond``, the loop condition numbers,
  ``inverse_dynamics``, ``mass_matrix``) and with Pinocchio in a loop (``test/pinocchio_loops.py``:
  Newton on the loop closure and the platform pose warm-started from the previous pose, and the
  KKT static forces; no condition numbers).
* The cost of a worker process: start to a built robot (kernels from the numba cache).
* The load average next to every figure (``os.getloadavg``).

    python bench/bench_analysis.py [--quick] [--scaling-samples N]

Table on stdout, the same figures as JSON in ``bench/results/bench_analysis.json``.
"""
from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "pkm_dynamics"))
sys.path.insert(0, os.path.join(HERE, "..", "pkm_dynamics", "test"))        # pinocchio_loops: the peer

from common import machine  # noqa: E402
from pkm_dynamics.analysis import load_chart  # noqa: E402
from pkm_dynamics.analysis.execution import RobotPlugin, RobotSpec  # noqa: E402
from pkm_dynamics.analysis.grids import grid_points, parse_axis  # noqa: E402
from pkm_dynamics.analysis.limits import actuator_force_limits  # noqa: E402
from pkm_dynamics.analysis.chart import chart_setup, load_chart_chunk  # noqa: E402
from pkm_dynamics.analysis.maps import LOAD_CHART_CHUNK  # noqa: E402
from pkm_dynamics.analysis.workspace import WorkspaceSetup, grid_pose, workspace_chunk  # noqa: E402
from pkm_dynamics.core.sweeps.pkm_workspace import worst_loop_condition  # noqa: E402
from pkm_dynamics.core import load_robot  # noqa: E402

ROBOTS = os.path.join(HERE, "..", "pkm_dynamics", "robots")
LIMITS = {"lift": 80e3, "tilt": 60e3, "extension": 15e3}
SCALING_SAMPLES = 200


def crane_figures(quick: bool, scaling_samples: int = SCALING_SAMPLES) -> dict:
    robot = load_robot(os.path.join(ROBOTS, "heavy_duty_4dof.urdf"))
    lower, upper = actuator_force_limits(robot, LIMITS)
    samples = 40 if quick else 100
    reach, height = parse_axis("reach", "0:6:0.05"), parse_axis("height", "-2:5:0.05")
    setup = chart_setup(robot, reach, height, samples, lower, upper, 1.3, 200.0)
    chunk = min(LOAD_CHART_CHUNK, setup.count)
    load_chart_chunk(robot, setup, 0, 1024)
    times, cpu = [], []
    for k in range(5):
        t, c = time.perf_counter(), time.process_time()
        load_chart_chunk(robot, setup, k * chunk % setup.count, k * chunk % setup.count + chunk)
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    out = {"states": setup.count, "chunk": chunk, "chunk_s": float(np.median(times)),
           "chunk_cpu_s": float(np.median(cpu)), "states_per_s_per_core": chunk / float(np.median(times)),
           "states_per_cpu_s": chunk / float(np.median(cpu)), "load_chunks": load()}
    kw = dict(samples=samples, limits=LIMITS, dynamic_factor=1.3, payload=200.0)
    t, c = time.perf_counter(), time.process_time()
    load_chart(robot, reach, height, workers=0, **kw)
    out["wall_in_process_s"] = time.perf_counter() - t
    out["cpu_in_process_s"] = time.process_time() - c
    out["load_in_process"] = load()
    if scaling_samples > 0:
        out.update(scaling(robot, reach, height, dict(kw, samples=scaling_samples)))
    return out


def scaling(robot, reach, height, kw) -> dict:
    """Wall time of the load chart ``kw`` on a LocalCluster of 1 and of 2 worker processes
    (clusters of 1, 2, 1, 2 workers in turns, two charts on each) and their ratio."""
    from distributed import Client, LocalCluster
    out = {"scaling_states": int(kw["samples"]) ** 3}
    walls = {1: [], 2: []}
    for n in (1, 2, 1, 2):                               # in turns: the machine's load falls on both
        t0 = time.perf_counter()
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        client.register_plugin(RobotPlugin(RobotSpec.of(robot)), name=RobotSpec.of(robot).key)
        out[f"cluster_{n}_start_s"] = time.perf_counter() - t0
        before = load()
        for _ in range(2):
            t = time.perf_counter()
            load_chart(robot, reach, height, client=client, **kw)
            walls[n].append(time.perf_counter() - t)
        out[f"load_{n}_workers"] = [before, load()]
        client.close()
        cluster.close()
    for n in (1, 2):
        out[f"wall_{n}_workers_s"] = float(np.median(walls[n]))
        out[f"walls_{n}_workers_s"] = walls[n]
    out["scaling_2_over_1"] = out["wall_1_workers_s"] / out["wall_2_workers_s"]
    return out


def load() -> list:
    """The machine's load average (1, 5, 15 min): the figures are shared-machine figures."""
    return [round(v, 2) for v in os.getloadavg()]


def plain_loop(robot, poses, W):
    z = np.zeros(robot.dof)
    for pose in poses:
        try:
            sol = robot.inverse_kinematics(pose)
        except Exception:
            continue
        np.linalg.cond(sol.J_IK)
        worst_loop_condition(robot, sol.limb_states)
        robot.inverse_dynamics(sol, z, z, W)
        np.linalg.eigvalsh(robot.mass_matrix(sol))


def pinocchio_loop(peer, poses, W, dof):
    """The same map in Pinocchio (test/pinocchio_loops.py: the spanning tree, the loop rows, Newton
    on the loop closure and the platform pose, the KKT inverse dynamics), warm-started from the
    previous pose's configuration: per pose the IK and the static actuator forces."""
    z = np.zeros(dof)
    start = None
    for pose in poses:
        try:
            q, qd, qdd = peer.close(pose, z, z, start=start, steps=1)
        except (RuntimeError, np.linalg.LinAlgError, ValueError):
            start = None
            continue
        start = q
        peer.inverse_dynamics(q, qd, qdd, W)


def workspace_figures(name: str, axes: dict, reps: int) -> dict:
    robot = load_robot(os.path.join(ROBOTS, name))
    axes = {k: parse_axis(k, v) for k, v in axes.items()}
    points, order = grid_points(axes)
    W = np.zeros(6)
    setup = WorkspaceSetup(axes, W)
    poses = [grid_pose(robot, dict(zip(axes, p))) for p in points]
    from pinocchio_loops import PinocchioLoops
    peer = PinocchioLoops(robot.description.xml, robot.tree_joints, robot.description.tree.gravity)
    workspace_chunk(robot, setup, points[:8], order[:8])
    plain_loop(robot, poses[:8], W)
    pinocchio_loop(peer, poses[:8], W, robot.dof)
    t_map, t_loop, t_pin = [], [], []
    for _ in range(reps):                                  # in turns: the load falls on all
        c = time.process_time()
        part = workspace_chunk(robot, setup, points, order)
        t_map.append(time.process_time() - c)
        c = time.process_time()
        plain_loop(robot, poses, W)
        t_loop.append(time.process_time() - c)
        c = time.process_time()
        pinocchio_loop(peer, poses, W, robot.dof)
        t_pin.append(time.process_time() - c)
    n = len(points)
    return {"poses": n, "reachable": int(part.reachable.sum()),
            "map_poses_per_s_per_core": n / float(np.median(t_map)),
            "plain_loop_poses_per_s": n / float(np.median(t_loop)),
            "map_us_per_pose": float(np.median(t_map)) / n * 1e6,
            "plain_loop_us_per_pose": float(np.median(t_loop)) / n * 1e6,
            "pinocchio_loop_poses_per_s": n / float(np.median(t_pin)),
            "iterations_mean": float(np.nanmean(part.iterations)),
            "iterations_median": float(np.nanmedian(part.iterations)), "load": load()}


def timed_build(spec) -> float:
    """Seconds to build the robot of ``spec`` (in a worker: its first robot)."""
    t = time.perf_counter()
    spec.build()
    return time.perf_counter() - t


def worker_start() -> dict:
    from distributed import Client, LocalCluster
    spec = RobotSpec.of(load_robot(os.path.join(ROBOTS, "irsbot2.urdf")))
    t = time.perf_counter()
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    up = time.perf_counter() - t
    t = time.perf_counter()
    build = client.run(timed_build, spec)
    total = time.perf_counter() - t
    client.close()
    cluster.close()
    return {"cluster_up_s": up, "robot_build_in_worker_s": float(list(build.values())[0]), "build_call_s": total}


def main(argv) -> int:
    quick = "--quick" in argv
    samples = int(argv[argv.index("--scaling-samples") + 1]) if "--scaling-samples" in argv else SCALING_SAMPLES
    reps = 3 if quick else 5
    res = {"machine": machine(), "worker": worker_start()}
    res["gough_stewart"] = workspace_figures("gough_stewart_6ups.urdf", {"x": "-0.04:0.04:0.004",
                                                                          "y": "-0.04:0.04:0.004"}, reps)
    res["irsbot2"] = workspace_figures("irsbot2.urdf", {"x": "-0.1:0.1:0.01", "z": "-0.1:0.1:0.01"}, reps)
    res["crane"] = crane_figures(quick, samples)
    c = res["crane"]
    print(f"crane load chart: {c['states_per_cpu_s']:.3g} states per CPU-second, "
          f"{c['states_per_s_per_core']:.3g} per wall second (chunk {c['chunk']}: {c['chunk_cpu_s'] * 1e3:.0f} ms "
          f"CPU, {c['chunk_s'] * 1e3:.0f} ms wall, load {c['load_chunks'][0]}); {c['states']} states: "
          f"{c['wall_in_process_s']:.1f} s in process")
    if samples > 0:
        print(f"scaling, a {c['scaling_states']}-state chart: {c['wall_1_workers_s']:.1f} s on 1 worker, "
              f"{c['wall_2_workers_s']:.1f} s on 2 (x{c['scaling_2_over_1']:.2f}; load {c['load_1_workers'][0]} / "
              f"{c['load_2_workers'][0]}); cluster start {c['cluster_1_start_s']:.1f} / {c['cluster_2_start_s']:.1f} s")
    for key in ("gough_stewart", "irsbot2"):
        r = res[key]
        print(f"{key}: map {r['map_poses_per_s_per_core']:.0f} poses/s/core ({r['map_us_per_pose']:.0f} us), "
              f"plain one-pose loop {r['plain_loop_poses_per_s']:.0f} poses/s ({r['plain_loop_us_per_pose']:.0f} us), "
              f"Pinocchio loop (IK + static forces) {r['pinocchio_loop_poses_per_s']:.0f} poses/s; "
              f"{r['reachable']}/{r['poses']} reachable, IK iterations per pose {r['iterations_median']:.0f} median, "
              f"{r['iterations_mean']:.1f} mean; "
              f"per CPU-second of this process, load {r['load'][0]}")
    w = res["worker"]
    print(f"worker: cluster of 1 up in {w['cluster_up_s']:.1f} s, robot built in the worker in "
          f"{w['robot_build_in_worker_s']:.2f} s")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "bench_analysis.json"), "w", encoding="utf-8") as f:
        json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
