"""What every benchmark records about the machine it ran on, and the property suite the fuzz
scripts share."""
import os
from pathlib import Path
import platform
import time

import numpy as np


def machine() -> dict:
    """CPU model, core count, Python/numpy (and Pinocchio, if installed) versions, and the
    time of one numpy 3x3 matrix product (a calibration of per-call numpy overhead)."""
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    a = np.eye(3)
    t0 = time.perf_counter()
    for _ in range(20000):
        a @ a
    matmul_us = (time.perf_counter() - t0) / 20000 * 1e6
    info = {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "platform": platform.platform(), "numpy_3x3_matmul_us": matmul_us}
    try:
        import pinocchio
        info["pinocchio"] = pinocchio.__version__
    except ImportError:
        info["pinocchio"] = None
    return info


def load_suite():
    """The property suite ``pkm_dynamics/test/test_fuzz_requests.py`` as a module: its
    generators and checks, which the fuzz scripts run longer than CI does."""
    import importlib.util
    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location(
        'test_fuzz_requests', root / 'pkm_dynamics' / 'test' / 'test_fuzz_requests.py')
    suite = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(suite)
    return suite


def per_call_us(fn, block: int, rounds: int = 5) -> tuple:
    """``(median, min)`` over ``rounds`` of the thread CPU time per call, in µs, of ``fn(block)``
    (a compiled loop running ``block`` calls; one ``fn(1)`` first, to load it)."""
    fn(1)
    per = []
    for _ in range(rounds):
        t0 = time.thread_time()
        fn(block)
        per.append((time.thread_time() - t0) / block * 1e6)
    return float(np.median(per)), min(per)
