"""Compile cost and start-up: what the numba kernels cost a fresh process.

* cold compile: ``python -m pkm_dynamics.core.precompile`` (every kernel: module-chain FD,
  ID, tree state, FK, IK solve, and the tree kernels) with an empty cache directory
  (``NUMBA_CACHE_DIR``), the whole process;
* warm start: the same command again on the cache it filled (loading every kernel);
* node start (warm cache of ``make setup``): from starting ``pkm_dynamics_node`` with the crane
  (``heavy_duty_4dof``) as its ``robot_description`` to the first answer of
  ``~/get_model_info`` that names the robot, seen from a client process started before it (DDS
  discovery included; requests sent again every 0.1 s until one is answered).

    .venv/bin/python bench/bench_start.py [--runs N] [--node-only]

(``--node-only``: the node start alone, not the compile and warm-start processes.)

Wall and CPU seconds (user + system of that process) per run and their medians on stdout (on a
shared machine the CPU seconds are the figure that does not depend on the others' load), the
same as JSON in ``bench/results/bench_start.json``.
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRANE = os.path.join(ROOT, "pkm_dynamics", "robots", "heavy_duty_4dof.urdf")


def warmup_seconds(cache: str) -> tuple:
    """Wall and CPU (user + system) seconds of one warmup process with ``NUMBA_CACHE_DIR=cache``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pkm_dynamics.core.precompile"], env=env, check=True,
                   capture_output=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) a running process has used so far (``/proc/<pid>/stat``)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def node_start_seconds(node, workdir: str, k: int) -> tuple:
    """Wall seconds from starting the node process to its first answer naming the robot, and the
    CPU seconds the node process has used by then."""
    from pkm_dynamics.testing import NodeProcess
    from pkm_dynamics_interfaces.srv import GetModelInfo
    from rclpy.executors import SingleThreadedExecutor
    with open(CRANE, encoding="utf-8") as f:
        text = f.read()
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    client = node.create_client(GetModelInfo, "/pkm_dynamics/get_model_info")
    t = time.perf_counter()
    process = NodeProcess(workdir, name=f"node_{k}", params={"robot_description": text})
    try:
        while time.perf_counter() - t < 60.0:
            if not client.service_is_ready():
                executor.spin_once(timeout_sec=0.01)
                continue
            future = client.call_async(GetModelInfo.Request())
            resend = time.perf_counter() + 0.1
            while not future.done() and time.perf_counter() < resend:
                executor.spin_once(timeout_sec=0.01)
            if future.done() and future.result().success and future.result().robot_name:
                return time.perf_counter() - t, cpu_seconds(process.process.pid)
        raise TimeoutError(f"no answer within 60 s; log:\n{process.log()}")
    finally:
        node.destroy_client(client)
        executor.remove_node(node)
        executor.shutdown()
        process.stop()


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 3
    from pkm_dynamics.testing import use_loopback_ros
    use_loopback_ros()
    res = {"cold_compile_s": [], "warm_start_s": [], "node_start_s": []}
    for _ in range(0 if "--node-only" in argv else runs):
        with tempfile.TemporaryDirectory() as cache:
            for key in ("cold_compile_s", "warm_start_s"):
                res[key].append(warmup_seconds(cache))
    import rclpy
    with tempfile.TemporaryDirectory(prefix="pkm_dynamics_bench_") as workdir, rclpy.init():
        node = rclpy.create_node("bench_start_client")
        for k in range(runs):
            res["node_start_s"].append(node_start_seconds(node, workdir, k))
        node.destroy_node()
    res["load_average"] = os.getloadavg()
    for key in [k for k in ("cold_compile_s", "warm_start_s", "node_start_s") if res[k]]:
        wall, cpu = np.array(res[key]).T
        print(f"{key}: wall {', '.join(f'{v:.2f}' for v in wall)} (median {np.median(wall):.2f}); "
              f"CPU {', '.join(f'{v:.2f}' for v in cpu)} (median {np.median(cpu):.2f})")
    print(f"load average at the end: {', '.join(f'{v:.1f}' for v in res['load_average'])}")
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    os.makedirs(out, exist_ok=True)
    name = "bench_start_node.json" if "--node-only" in argv else "bench_start.json"
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
