"""Benchmark of the module-chain dynamics of paper 000 (Algorithm 1 FD and the analytic ID).

For the two HIAB XS 031 example robots and generated chains of n = 1, 2, 4, ..., 64 parallel
modules: per-call median microseconds of our FD and ID (the public ``robot.forward_dynamics`` /
``inverse_dynamics``: numba kernels with their input checks, :mod:`pkm_dynamics.core.compiled`),
per module, and side by side in the same process, timed interleaved with ours:

* Pinocchio's constrained forward dynamics of the same mechanism (the URDF spanning tree + one
  CONTACT_3D constraint per cut joint, ``pin.constraintDynamics`` with
  ``ProximalSettings(1e-10, 1e-12, 3)``: mu > 0 because planar loops give redundant constraint
  rows), its actuated accelerations compared with ours first (column ``|d| FD``);
* ``pin.rnea`` of the open spanning tree at the closed-loop motion (``tree_state``), whose joint
  torques mapped to the actuators (``H^T tau``, H = dq/dx: constraint forces do no work) are
  compared with our ID first (column ``|d| ID``);
* the kernel alone (prepared arrays, no Python layer) next to the public call, and the numpy
  reference route (``parallel_serial_forward_dynamics`` / ``chain_inverse_dynamics``); the
  public call's Python (input conversion, shape checks, output array) is their difference.

Inverse kinematics of the crane (``inverse_kinematics``): the seed IK (the multi-start search
from mid-stroke) and the warm-started IK (``search=False``, a seed 0.01 off the answer) as
public calls, and the Gauss-Newton solves of the search (every start of ``ik_starts``) with the
compiled kernel (``compiled_pose_newton``) and with the numpy reference ``pose_newton``, timed
interleaved (``--ik``: this part alone).

Cold compile time (an empty numba cache) and warm start (import, load the crane, first FD call
with the cache filled) are measured in fresh processes.

    python bench/bench_module_chain.py [--quick] [--ik]

Table on stdout, the same figures as JSON in ``bench/results/bench_module_chain.json``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "pkm_dynamics"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import machine  # noqa: E402
from pkm_dynamics.core.description.examples import module_chain_urdf  # noqa: E402
from pkm_dynamics.core.module_chain.module_chain_dynamics import (chain_inverse_dynamics,  # noqa: E402
                                                                  parallel_serial_forward_dynamics)
from pkm_dynamics.core.robot import load_robot  # noqa: E402
from pkm_dynamics.core.tree.tree_model import EXTENSION_TAGS  # noqa: E402

ROBOTS = os.path.join(ROOT, "pkm_dynamics", "robots")




def median_us(fn, reps: int, inner: int) -> float:
    return interleaved_us([fn], reps, inner)[0]


def interleaved_us(fns, reps: int, inner: int) -> list:
    """Median microseconds per call of each of ``fns``, timed in turns (one block of ``inner``
    calls of each per repeat), so that the machine's load falls on all of them alike."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(reps):
        for fn, tl in zip(fns, times):
            t = time.perf_counter()
            for _ in range(inner):
                fn()
            tl.append((time.perf_counter() - t) / inner)
    return [float(np.median(tl) * 1e6) for tl in times]


class PinocchioPeer:
    """Pinocchio model of the spanning tree with the loops closed by CONTACT_3D constraints."""

    def __init__(self, robot):
        import pinocchio as pin
        self.pin = pin
        root = ET.fromstring(robot.description.xml)
        for el in list(root):
            if el.tag in EXTENSION_TAGS:
                root.remove(el)
        self.model = pin.buildModelFromXML(ET.tostring(root, encoding="unicode"))
        m = self.model
        m.gravity.linear = robot.gravity
        self.data = m.createData()
        self.robot = robot
        cms = []
        for cut in robot.description.cut_joints:
            ends = []
            for link, origin in ((cut.parent_link, cut.parent_origin), (cut.child_link, cut.child_origin)):
                fr = m.frames[m.getFrameId(link)]
                ends.append((fr.parentJoint, fr.placement * pin.SE3(origin[:3, :3].copy(), origin[:3, 3].copy())))
            cms.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, m, ends[0][0], ends[0][1], ends[1][0],
                                                ends[1][1], pin.ReferenceFrame.LOCAL))
        self.cmodels = pin.StdVec_RigidConstraintModel()
        self.cdatas = pin.StdVec_RigidConstraintData()
        for c in cms:
            self.cmodels.append(c)
            self.cdatas.append(c.createData())
        pin.initConstraintDynamics(m, self.data, self.cmodels, self.cdatas)
        self.prox = pin.ProximalSettings(1e-10, 1e-12, 3)
        self.jids = [m.getJointId(n) for n in robot.tree_joints]

    def state(self, Q, QD, tau_act):
        m = self.model
        q = self.pin.neutral(m)
        v = np.zeros(m.nv)
        tau = np.zeros(m.nv)
        for _name, jid, qi, vi in zip(self.robot.tree_joints, self.jids, Q, QD):
            j = m.joints[jid]
            if j.nq == 2:                       # continuous joint: (cos, sin)
                q[j.idx_q], q[j.idx_q + 1] = np.cos(qi), np.sin(qi)
            else:
                q[j.idx_q] = qi
            v[j.idx_v] = vi
        for name, f in zip(self.robot.actuated_joints, tau_act):
            tau[m.joints[m.getJointId(name)].idx_v] = f
        return q, v, tau

    def forward_dynamics(self, q, v, tau):
        return self.pin.constraintDynamics(self.model, self.data, q, v, tau, self.cmodels, self.cdatas, self.prox)

    def rnea(self, q, v, a):
        return self.pin.rnea(self.model, self.data, q, v, a)

    def tree_vector(self, values):
        """A vector over the tree joints (order ``tree_joints``) in Pinocchio's velocity order."""
        out = np.zeros(self.model.nv)
        for jid, val in zip(self.jids, values):
            out[self.model.joints[jid].idx_v] = val
        return out

    def actuated(self, a):
        m = self.model
        return np.array([a[m.joints[m.getJointId(n)].idx_v] for n in self.robot.actuated_joints])


def case_state(robot, rng):
    lo = np.array([i.lower for i in robot.chain.info])
    hi = np.array([i.upper for i in robot.chain.info])
    lo = np.where(np.isfinite(lo), lo, -1.0)
    hi = np.where(np.isfinite(hi), hi, 1.0)
    x = lo + (hi - lo) * rng.uniform(0.3, 0.6, robot.n)
    if robot.name.startswith("hiab"):
        x = np.array([0.3, 0.2, 0.4, 0.5])[-robot.n:] if robot.n == 4 else np.array([0.2])
    xd = rng.normal(scale=0.2, size=robot.n)
    xdd = rng.normal(scale=0.5, size=robot.n)
    return x, xd, xdd


def paper_round_trip(robot) -> dict:
    """FD(ID(xdd_in)) along 10 s of the crane data authors' sinusoids (paper 000 eq. 53): mean absolute
    error (paper: 7.66e-16 m/s^2 for the 1-DoF mechanism) and mean of the per-sample sum of absolute
    errors (paper: 5.21e-14 for the 4-DoF manipulator), with the relative figures (paper: 1.25e-11 % and
    2.42e-11 %)."""
    with open(os.path.join(ROOT, "pkm_dynamics", "robots", "hiab_xs031", "hiab031_model.json"), encoding="utf-8") as f:
        g = json.load(f)["geometry"]
    t = np.arange(0.0, 10.0 + 1e-12, 0.01)
    r = np.pi / 180

    def cyl(th, thd, thdd, off, L, L1):
        q = th - off
        d = np.sqrt(L * L + L1 * L1 + 2 * L * L1 * np.cos(q))
        dd = -L * L1 * np.sin(q) * thd / d
        return d - 0.83, dd, (-L * L1 * (np.cos(q) * thd**2 + np.sin(q) * thdd) - dd**2) / d

    off1 = np.pi / 2 + np.arctan2(374.261, 935) + np.arctan2(45.757, 373.313)
    off2 = np.arctan2(139.50, 1132.19) + np.arctan2(88.061, 296.198)
    cols = [cyl((20 + 10 * np.sin(t)) * r, 10 * r * np.cos(t), -10 * r * np.sin(t), off1, g["L1"], g["L11"])]
    if robot.n == 4:
        cols = [(0.5 * np.sin(0.5 * t), 0.25 * np.cos(0.5 * t), -0.125 * np.sin(0.5 * t))] + cols + [
            cyl((-70 + 15 * np.sin(2 * t)) * r, 30 * r * np.cos(2 * t), -60 * r * np.sin(2 * t), off2, g["L2"],
                g["L21"]),
            (0.3 + 0.2 * np.sin(t), 0.2 * np.cos(t), -0.2 * np.sin(t))]
    X, XD, XDD = (np.column_stack([c[i] for c in cols]) for i in range(3))
    out = robot.forward_dynamics(X, XD, robot.inverse_dynamics(X, XD, XDD))
    e = np.abs(out - XDD)
    return {"samples": len(t), "mean_abs_error": float(e.mean()), "mean_sum_abs_error": float(e.sum(1).mean()),
            "mean_relative_error": float(e.sum(1).mean() / np.abs(XDD).sum(1).mean())}


def run(quick: bool = False) -> dict:
    rng = np.random.default_rng(0)
    cases = [("linear_4bar_1dof", load_robot(os.path.join(ROBOTS, "linear_4bar_1dof.urdf"))),
             ("heavy_duty_4dof", load_robot(os.path.join(ROBOTS, "heavy_duty_4dof.urdf")))]
    ns = [1, 2, 4, 8, 16, 32, 64] if not quick else [1, 4, 16]
    cases += [(f"chain_{n}", load_robot(module_chain_urdf(n))) for n in ns]
    try:
        import pinocchio  # noqa: F401
        have_pin = True
    except ImportError:
        have_pin = False
    reps = 5 if quick else 15
    rows = []
    for name, robot in cases:
        x, xd, xdd = case_state(robot, rng)
        f = robot.inverse_dynamics(x, xd, xdd)
        inner = max(1, int(400 / robot.n)) if not quick else max(1, int(40 / robot.n))
        kfd, kid = kernel_calls(robot, x, xd, xdd, f)
        chain = robot.chain
        fd, idt, fd_kernel, id_kernel = interleaved_us(
            [lambda: robot.forward_dynamics(x, xd, f), lambda: robot.inverse_dynamics(x, xd, xdd), kfd, kid],
            reps, inner)
        fd_np, id_np = interleaved_us([lambda: parallel_serial_forward_dynamics(chain, x, xd, f),
                                       lambda: chain_inverse_dynamics(chain, x, xd, xdd)],
                                      max(3, reps // 3), max(1, inner // 10))
        row = {"robot": name, "n": robot.n, "tree_joints": len(robot.tree_joints), "fd_us": fd, "id_us": idt,
               "fd_us_per_module": fd / robot.n, "id_us_per_module": idt / robot.n,
               "fd_kernel_us": fd_kernel, "id_kernel_us": id_kernel, "fd_numpy_us": fd_np, "id_numpy_us": id_np}
        if have_pin:
            peer = PinocchioPeer(robot)
            Q, QD, QDD = robot.tree_state(x, xd, xdd)
            q, v, tau = peer.state(Q, QD, f)
            a_tree = peer.tree_vector(QDD)
            a = peer.forward_dynamics(q, v, tau)
            row["max_abs_diff_xdd_vs_pin"] = float(np.abs(peer.actuated(a) - xdd).max())
            H = np.column_stack([peer.tree_vector(robot.tree_state(x, e, np.zeros(robot.n))[1])
                                 for e in np.eye(robot.n)])
            f_pin = H.T @ peer.rnea(q, v, a_tree)
            row["max_rel_diff_f_vs_pin_rnea"] = float(np.abs(f_pin - f).max() / np.abs(f).max())
            our_fd, pin_fd, our_id, pin_id = interleaved_us(
                [lambda: robot.forward_dynamics(x, xd, f), lambda: peer.forward_dynamics(q, v, tau),
                 lambda: robot.inverse_dynamics(x, xd, xdd), lambda: peer.rnea(q, v, a_tree)], reps, inner)
            row.update(pin_fd_us=pin_fd, pin_rnea_us=pin_id, fd_ratio_to_pin=our_fd / pin_fd,
                       id_ratio_to_pin_rnea=our_id / pin_id)
        rows.append(row)
    chain = [r for r in rows if r["robot"].startswith("chain_")]
    # per-module time of the largest chain against the median per-module time over all chain sizes
    flat = {f"{k}_per_module_ratio_nmax_to_median": chain[-1][f"{k}_us_per_module"]
            / float(np.median([r[f"{k}_us_per_module"] for r in chain])) for k in ("fd", "id")}
    paper = {name: paper_round_trip(robot) for name, robot in cases[:2]}
    return {"benchmark": "bench_module_chain", "machine": machine(), "rows": rows, "scaling": flat,
            "units": "microseconds per call (median)", "paper_round_trip": paper, "ik": ik_figures(quick),
            "start_up": start_up()}


def ik_figures(quick: bool = False) -> dict:
    """Milliseconds (medians) of the crane IK: public seed / warm-started calls, and the solves
    from every start of the search, compiled against the numpy reference, interleaved."""
    from pkm_dynamics.core.module_chain import chain_ik
    robot = load_robot(os.path.join(ROBOTS, "heavy_duty_4dof.urdf"))
    x = np.array([0.3, 0.2, 0.25, 0.4])
    T = robot.forward_kinematics(x)
    seed = x + 0.01
    mid = robot.inverse_kinematics(T).solutions[0]                      # and a check that it works
    assert np.abs(robot.forward_kinematics(mid) - T).max() <= 1e-10
    starts = chain_ik.ik_starts(robot.chain, np.array([0.0, 0.295, 0.295, 0.55]))
    reps = 3 if quick else 9
    seed_ik, warm_ik = interleaved_us([lambda: robot.inverse_kinematics(T),
                                       lambda: robot.inverse_kinematics(T, initial=seed, search=False)], reps, 3)
    compiled, numpy_route = interleaved_us(
        [lambda: [chain_ik.compiled_pose_newton(robot, T, s, 1e-10, 50) for s in starts],
         lambda: [chain_ik.pose_newton(robot, T, s, 1e-10, 50) for s in starts]], reps, 1)
    return {"seed_ik_ms": seed_ik / 1e3, "warm_started_ik_ms": warm_ik / 1e3, "starts": len(starts),
            "search_compiled_ms": compiled / 1e3, "search_numpy_ms": numpy_route / 1e3,
            "search_ratio_numpy_to_compiled": numpy_route / compiled}


def ik_table(ik: dict) -> str:
    return (f"crane IK: seed (search) {ik['seed_ik_ms']:.2f} ms, warm-started {ik['warm_started_ik_ms']:.3f} ms; "
            f"Gauss-Newton from the {ik['starts']} starts: compiled {ik['search_compiled_ms']:.2f} ms, numpy "
            f"{ik['search_numpy_ms']:.1f} ms ({ik['search_ratio_numpy_to_compiled']:.0f}x)")


def kernel_calls(robot, x, xd, xdd, f):
    """The FD and ID kernels called directly on prepared (n,) arrays: the entry point of
    ``chain_dynamics_one`` (no type dispatch) that the public call of one state reaches, with
    its output array made once: the cost without the Python layer (input conversion, shape
    checks, the output array, exceptions)."""
    from pkm_dynamics.core.module_chain import chain_model
    robot.forward_dynamics(x, xd, f)               # the calling thread's entry point and scratch
    run, mflat, dflat, fe, status, _, _ = chain_model._one(robot.compiled)
    X, XD, XDD, F = (np.array(a, dtype=float) for a in (x, xd, xdd, f))
    out = np.empty_like(X)

    def fd():
        run(False, mflat, dflat, X, XD, F, fe, out, status)

    def idyn():
        run(True, mflat, dflat, X, XD, XDD, fe, out, status)
    return fd, idyn


START = ("import time; t = time.perf_counter()\n"
         "import numpy as np\n"
         "from pkm_dynamics.core import load_robot\n"
         "r = load_robot({path!r})\n"
         "r.forward_dynamics(np.full(r.n, 0.2), np.zeros(r.n), np.zeros(r.n))\n"
         "print(time.perf_counter() - t)\n")


def start_up() -> dict:
    """Seconds from a fresh interpreter to the first crane FD: with an empty numba cache (cold:
    every kernel compiles), then again with the cache it filled (warm), in a temporary cache
    directory (``NUMBA_CACHE_DIR``), plus a warm start on the installed cache of ``make setup``."""
    path = os.path.join(ROBOTS, "heavy_duty_4dof.urdf")
    code = START.format(path=path)
    env = dict(os.environ)
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env["NUMBA_CACHE_DIR"] = cache
        for key in ("cold_s", "warm_s"):
            res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
            out[key] = float(res.stdout.split()[-1])
    env.pop("NUMBA_CACHE_DIR")
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    out["installed_cache_s"] = float(res.stdout.split()[-1])
    return out


def table(res: dict) -> str:
    head = (f"{'robot':<18}{'n':>4}{'FD us':>9}{'ID us':>9}{'FD/mod':>8}{'kFD us':>8}{'kID us':>8}"
            f"{'npFD us':>9}{'npID us':>9}{'pinFD us':>9}{'FD/pin':>7}{'rnea us':>8}{'ID/rnea':>8}"
            f"{'|d| FD':>9}{'|d| ID':>9}")
    lines = [head, "-" * len(head)]
    for r in res["rows"]:
        pin = ""
        if "pin_fd_us" in r:
            pin = (f"{r['pin_fd_us']:>9.1f}{r['fd_ratio_to_pin']:>7.2f}{r['pin_rnea_us']:>8.1f}"
                   f"{r['id_ratio_to_pin_rnea']:>8.2f}{r['max_abs_diff_xdd_vs_pin']:>9.1e}"
                   f"{r['max_rel_diff_f_vs_pin_rnea']:>9.1e}")
        lines.append(f"{r['robot']:<18}{r['n']:>4}{r['fd_us']:>9.1f}{r['id_us']:>9.1f}{r['fd_us_per_module']:>8.2f}"
                     f"{r['fd_kernel_us']:>8.1f}{r['id_kernel_us']:>8.1f}{r['fd_numpy_us']:>9.1f}"
                     f"{r['id_numpy_us']:>9.1f}{pin}")
    lines.append("FD, ID: public call (compiled, checks included); kFD, kID: the kernel alone; npFD, npID: the "
                 "numpy reference route; FD/pin, ID/rnea: public call / Pinocchio, timed interleaved")
    s = res["scaling"]
    for name, p in res["paper_round_trip"].items():
        lines.append(f"FD(ID) round trip {name}, 10 s sinusoids: mean |err| {p['mean_abs_error']:.3g}, mean sum |err| "
                     f"{p['mean_sum_abs_error']:.3g}, relative {p['mean_relative_error']:.3g} "
                     "(paper: 7.66e-16 / 1.25e-13 rel. 1-DoF; 5.21e-14 / 2.42e-13 rel. 4-DoF)")
    m = res["machine"]
    lines.append("per-module time, largest chain / median over chain sizes: "
                 f"FD {s['fd_per_module_ratio_nmax_to_median']:.2f}, "
                 f"ID {s['id_per_module_ratio_nmax_to_median']:.2f} (about 1 = flat = O(n))")
    lines.append(ik_table(res["ik"]))
    st = res["start_up"]
    lines.append(f"start-up to the first crane FD: cold (empty numba cache) {st['cold_s']:.1f} s, warm "
                 f"{st['warm_s']:.2f} s, installed cache {st['installed_cache_s']:.2f} s")
    lines.append(f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, numpy {m['numpy']}, "
                 f"pinocchio {m['pinocchio']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--ik" in argv:
        print(ik_table(ik_figures(quick="--quick" in argv)))
        return 0
    res = run(quick="--quick" in argv)
    print(table(res))
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "bench_module_chain.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(res, f, indent=1)
    print("wrote", os.path.relpath(path, ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
