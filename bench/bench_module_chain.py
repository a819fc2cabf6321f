"""Benchmark of the module-chain dynamics of paper 000 (Algorithm 1 FD and the analytic ID).

For the two HIAB XS 031 example robots and generated chains of n = 1, 2, 4, ..., 64 parallel
modules: per-call median microseconds of our FD and ID, per module, and side by side in the
same process Pinocchio's constrained forward dynamics of the same mechanism (the URDF spanning
tree + one CONTACT_3D constraint per cut joint, ``pin.constraintDynamics`` with proximal
settings, mu > 0 because planar loops give redundant constraint rows), reported as a ratio.
Pinocchio's actuated accelerations are compared with ours as a sanity check (column ``|d|``).

    python bench/bench_module_chain.py [--quick]

Table on stdout, the same figures as JSON in ``bench/results/bench_module_chain.json``.
"""
from __future__ import annotations

import json
import os
import sys
import time
import xml.etree.ElementTree as ET

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "pkm_dynamics"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import machine  # noqa: E402
from pkm_dynamics.core.examples import module_chain_urdf  # noqa: E402
from pkm_dynamics.core.robot import load_robot  # noqa: E402
from pkm_dynamics.core.tree import EXTENSION_TAGS  # noqa: E402

ROBOTS = os.path.join(ROOT, "pkm_dynamics", "robots")




def median_us(fn, reps: int, inner: int) -> float:
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t) / inner)
    return float(np.median(times) * 1e6)


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
        self.prox = pin.ProximalSettings(1e-12, 1e-10, 20)
        self.jids = [m.getJointId(n) for n in robot.tree_joints]

    def state(self, Q, QD, tau_act):
        m = self.model
        q = self.pin.neutral(m)
        v = np.zeros(m.nv)
        tau = np.zeros(m.nv)
        for name, jid, qi, vi in zip(self.robot.tree_joints, self.jids, Q, QD):
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
    with open(os.path.join(ROOT, "..", "shared", "models", "hiab_xs031", "hiab031_model.json"), encoding="utf-8") as f:
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
            cyl((-70 + 15 * np.sin(2 * t)) * r, 30 * r * np.cos(2 * t), -60 * r * np.sin(2 * t), off2, g["L2"], g["L21"]),
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
        inner = max(1, int(200 / robot.n)) if not quick else max(1, int(40 / robot.n))
        fd = median_us(lambda: robot.forward_dynamics(x, xd, f), reps, inner)
        idt = median_us(lambda: robot.inverse_dynamics(x, xd, xdd), reps, inner)
        row = {"robot": name, "n": robot.n, "tree_joints": len(robot.tree_joints), "fd_us": fd, "id_us": idt,
               "fd_us_per_module": fd / robot.n, "id_us_per_module": idt / robot.n}
        if have_pin:
            peer = PinocchioPeer(robot)
            Q, QD, _ = robot.tree_state(x, xd, xdd)
            q, v, tau = peer.state(Q, QD, f)
            a = peer.forward_dynamics(q, v, tau)
            row["pin_fd_us"] = median_us(lambda: peer.forward_dynamics(q, v, tau), reps, inner * 20)
            row["fd_ratio_to_pin"] = fd / row["pin_fd_us"]
            row["max_abs_diff_xdd_vs_pin"] = float(np.abs(peer.actuated(a) - xdd).max())
        rows.append(row)
    chain = [r for r in rows if r["robot"].startswith("chain_")]
    # per-module time of the largest chain against the median per-module time over all chain sizes
    flat = {f"{k}_per_module_ratio_nmax_to_median": chain[-1][f"{k}_us_per_module"]
            / float(np.median([r[f"{k}_us_per_module"] for r in chain])) for k in ("fd", "id")}
    paper = {name: paper_round_trip(robot) for name, robot in cases[:2]}
    return {"benchmark": "bench_module_chain", "machine": machine(), "rows": rows, "scaling": flat,
            "units": "microseconds per call (median)", "paper_round_trip": paper}


def table(res: dict) -> str:
    head = (f"{'robot':<18}{'n':>4}{'FD us':>11}{'ID us':>11}{'FD/mod':>9}{'ID/mod':>9}"
            f"{'pin FD us':>11}{'FD/pin':>8}{'|d| vs pin':>12}")
    lines = [head, "-" * len(head)]
    for r in res["rows"]:
        pin_us = f"{r['pin_fd_us']:>11.1f}" if "pin_fd_us" in r else f"{'-':>11}"
        ratio = f"{r['fd_ratio_to_pin']:>8.1f}" if "pin_fd_us" in r else f"{'-':>8}"
        diff = f"{r['max_abs_diff_xdd_vs_pin']:>12.1e}" if "pin_fd_us" in r else f"{'-':>12}"
        lines.append(f"{r['robot']:<18}{r['n']:>4}{r['fd_us']:>11.1f}{r['id_us']:>11.1f}"
                     f"{r['fd_us_per_module']:>9.1f}{r['id_us_per_module']:>9.1f}{pin_us}{ratio}{diff}")
    s = res["scaling"]
    for name, p in res["paper_round_trip"].items():
        lines.append(f"FD(ID) round trip {name}, 10 s sinusoids: mean |err| {p['mean_abs_error']:.3g}, mean sum |err| "
                     f"{p['mean_sum_abs_error']:.3g}, relative {p['mean_relative_error']:.3g} "
                     "(paper: 7.66e-16 / 1.25e-13 rel. 1-DoF; 5.21e-14 / 2.42e-13 rel. 4-DoF)")
    m = res["machine"]
    lines.append(f"per-module time, largest chain / median over chain sizes: FD {s['fd_per_module_ratio_nmax_to_median']:.2f}, "
                 f"ID {s['id_per_module_ratio_nmax_to_median']:.2f} (about 1 = flat = O(n))")
    lines.append(f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, numpy {m['numpy']}, "
                 f"pinocchio {m['pinocchio']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
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
