"""An independent route to the dynamics of a closed-loop robot, for the tests: it shares no code
with ``pkm_dynamics``.

It reads the robot description's XML itself (the URDF spanning tree, the ``<constraint>`` cut
joints, the ``<pkm_dynamics>`` actuators, end effector and platform), builds the tree in
Pinocchio (``pin.buildModelFromXML``) and

* writes the cut-joint constraints itself from Pinocchio frame placements, Jacobians and
  classical accelerations (:meth:`PinocchioLoops.loop_rows`): coincident points (R, U, S; P: the
  two directions normal to its axis), and orientation rows as scalar products of unit vectors
  fixed in the two cut frames: revolute and cylindrical = the child axis normal to two normals
  of the parent axis (cylindrical: the points only normal to the axis), universal = the two
  axes perpendicular, prismatic = the three cut-frame axes of each
  side pairwise perpendicular as at the closed pose (no rotation), spherical = none;
* closes the loops itself from the actuator motion ``(x, xd, xdd)`` (module chains: the actuated
  tree joints) or the task motion ``(pose, V_t, Vdot_t)`` (PKM: the platform frame's body-fixed
  twist components of its task space): Newton's method on position level from the zero
  configuration (an assembled pose) with a continuation in the target, then the velocity and
  acceleration levels (:meth:`PinocchioLoops.close`);
* solves the KKT system ``[[M, G^T], [G, 0]]`` with ``M`` = ``pin.crba`` and the bias from
  ``pin.rnea`` (:meth:`PinocchioLoops.forward_dynamics`, :meth:`PinocchioLoops.inverse_dynamics`),
  the loop rows reduced to an orthonormal basis of their row space first (redundant rows of
  planar loops closed by spatial cut joints), so the multipliers are the minimum-norm ones;
* the wrench every joint transmits (:meth:`PinocchioLoops.reactions`): ``pin.rnea`` with the cut
  forces as external forces on the two cut links, ``data.f``.

Conventions at the interface (the package's, so results compare directly): tree vectors in the
order of the names given to the constructor; twists and wrenches (angular, linear) / (moment,
force); the external wrench on the end effector / platform frame, in that frame.  Only 1-DoF
tree joints (revolute, continuous, prismatic), as in every example robot.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin     # a test dependency (package.xml, requirements.txt): never skipped

LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
LOCAL = pin.ReferenceFrame.LOCAL
#: task coordinate -> index in Pinocchio's (linear, angular) motion vectors
TASK_INDEX = {"vx": 0, "vy": 1, "vz": 2, "wx": 3, "wy": 4, "wz": 5}


def _numbers(el, attr, default):
    if el is None or el.get(attr) is None:
        return np.array(default, dtype=float)
    return np.array([float(t) for t in el.get(attr).split()])


def _placement(el) -> pin.SE3:
    """``<... xyz rpy>`` as a pose (URDF: R = Rz(yaw) Ry(pitch) Rx(roll))."""
    return pin.SE3(pin.rpy.rpyToMatrix(*_numbers(el, "rpy", [0, 0, 0])), _numbers(el, "xyz", [0, 0, 0]))


def _unit(v):
    return None if v is None else np.asarray(v, dtype=float) / np.linalg.norm(v)


def _normals(e):
    """Two unit vectors with ``(e, n1, n2)`` orthonormal."""
    a = np.eye(3)[int(np.argmin(np.abs(e)))]
    n1 = np.cross(e, a)
    n1 /= np.linalg.norm(n1)
    return n1, np.cross(e, n1)


class PinocchioLoops:
    """The robot of description ``urdf`` (text) in Pinocchio with its loops; ``joint_names``: the
    order of tree vectors at the interface; ``gravity`` (3,) of the root frame."""

    def __init__(self, urdf: str, joint_names, gravity):
        root = ET.fromstring(urdf)
        self.cuts = []
        for el in root.findall("constraint"):
            axes = [_unit(_numbers(el.find(f"{s}_axis"), "xyz", [np.nan] * 3)) if el.find(f"{s}_axis") is not None
                    else None for s in ("parent", "child")]
            self.cuts.append(dict(name=el.get("name"), type=el.get("type"),
                                  links=(el.find("parent").get("link"), el.find("child").get("link")),
                                  origins=(_placement(el.find("parent_origin")), _placement(el.find("child_origin"))),
                                  axes=axes))
        block = root.find("pkm_dynamics")
        self.actuators = [a.get("joint") for a in block.findall("actuator")]
        plat = block.find("platform")
        ee = block.find("end_effector")
        if plat is not None:
            self.wrench_link, self.wrench_origin = plat.get("link"), _placement(plat.find("origin"))
            ts = plat.find("task_space")
            coords = ts.get("coordinates").split() if ts is not None else list(TASK_INDEX)
            self.task = [TASK_INDEX[c] for c in coords]
        else:
            self.wrench_link = ee.get("link") if ee is not None else None
            self.wrench_origin, self.task = pin.SE3.Identity(), None
        for el in list(root):
            if el.tag in ("constraint", "pkm_dynamics"):
                root.remove(el)
        m = self.model = pin.buildModelFromXML(ET.tostring(root, encoding="unicode"))
        m.gravity.linear = np.asarray(gravity, dtype=float)
        if m.nv != m.njoints - 1:
            raise ValueError("only 1-DoF tree joints")
        self.n = m.nv
        # interface order -> Pinocchio v index
        self.perm = np.array([m.joints[m.getJointId(nm)].idx_v for nm in joint_names])
        self.act = np.array([self.perm[list(joint_names).index(a)] for a in self.actuators])
        for c in self.cuts:                          # the two cut frames as frames of the model
            ids = []
            for side, (link, origin) in enumerate(zip(c["links"], c["origins"])):
                fr = m.frames[m.getFrameId(link)]
                ids.append(m.addFrame(pin.Frame(f"{c['name']}_{side}", fr.parentJoint, fr.parentFrame,
                                                fr.placement * origin, pin.FrameType.OP_FRAME)))
            c["frames"] = ids
        self.wrench_frame = None
        if self.wrench_link is not None:
            fr = m.frames[m.getFrameId(self.wrench_link)]
            self.wrench_frame = m.addFrame(pin.Frame("wrench_frame", fr.parentJoint, fr.parentFrame,
                                                     fr.placement * self.wrench_origin, pin.FrameType.OP_FRAME))
        self.data = m.createData()

    # ------------------------------------------------------------------ vectors

    def q_pin(self, theta):
        """Pinocchio configuration of the joint values ``theta`` (n,) in Pinocchio v order."""
        return pin.integrate(self.model, pin.neutral(self.model), np.asarray(theta, dtype=float))

    def to_pin(self, v):
        out = np.zeros(self.n)
        out[self.perm] = v
        return out

    def from_pin(self, v):
        return np.asarray(v)[self.perm]

    def kinematics(self, theta, thd=None):
        """Placements, Jacobians and (for ``thd``) velocities and the accelerations at zero joint
        accelerations (the drift), of every frame."""
        m, d = self.model, self.data
        q = self.q_pin(theta)
        v = np.zeros(self.n) if thd is None else thd
        pin.forwardKinematics(m, d, q, v, np.zeros(self.n))
        pin.computeJointJacobians(m, d, q)
        pin.updateFramePlacements(m, d)

    # ------------------------------------------------------------------ loop rows

    def loop_rows(self, theta, thd=None):
        """``(r, G, gamma)`` of every cut joint, stacked: residuals, Jacobian (m, n) with
        ``rdot = G thd`` (Pinocchio v order) and the drift ``gamma = rddot - G thdd`` (zeros without
        ``thd``).  Call with the kinematics of ``theta`` (and ``thd``) computed."""
        parts = [self._cut_rows(c, thd) for c in self.cuts]
        if not parts:
            return np.zeros(0), np.zeros((0, self.n)), np.zeros(0)
        return tuple(np.concatenate([p[k] for p in parts]) for k in range(3))

    def _cut_rows(self, c, thd):
        """``(r, G, gamma, D)`` of one cut joint; ``D`` (m, 6): the wrench (moment, force) in world
        axes about the child cut origin that a unit multiplier of each row exerts on the child
        (``G^T lambda`` is that wrench carried to the tree: rows ``D`` times the child's Jacobian
        minus the parent's)."""
        m, d = self.model, self.data
        fp, fc = c["frames"]
        Mp, Mc = d.oMf[fp], d.oMf[fc]
        Rp, Rc, D = Mp.rotation, Mc.rotation, Mc.translation - Mp.translation
        Jp = pin.getFrameJacobian(m, d, fp, LWA)
        Jc = pin.getFrameJacobian(m, d, fc, LWA)
        if thd is not None:
            vp, vc = Jp @ thd, Jc @ thd
            ap = pin.getFrameClassicalAcceleration(m, d, fp, LWA).vector
            ac = pin.getFrameClassicalAcceleration(m, d, fc, LWA).vector
            wp, wc, Dd = vp[3:], vc[3:], vc[:3] - vp[:3]
        # position: p = Rp^T D, the child cut origin in the parent cut frame (P: normal to the axis)
        pa = c["axes"][0]
        N = np.array(_normals(pa)) if c["type"] in ("prismatic", "cylindrical") else np.eye(3)
        r = [N @ Rp.T @ D]
        G = [N @ Rp.T @ (Jc[:3] - Jp[:3] + pin.skew(D) @ Jp[3:])]
        g = [np.zeros(len(N))]
        if thd is not None:
            g = [N @ Rp.T @ (ac[:3] - ap[:3] - np.cross(ap[3:], D) - np.cross(wp, Dd)
                             - np.cross(wp, Dd - np.cross(wp, D)))]
        dirs = [np.hstack([np.zeros((len(N), 3)), N @ Rp.T])]
        # orientation: s = (Rp a) . (Rc b) for pairs (a in the parent cut frame, b in the child's)
        if c["type"] in ("revolute", "cylindrical"):
            b = c["axes"][1] if c["axes"][1] is not None else pa
            pairs = [(n, b) for n in _normals(pa)]
        elif c["type"] == "universal":
            pairs = [(pa, c["axes"][1])]
        elif c["type"] == "prismatic":
            E = np.eye(3)
            pairs = [(E[0], E[1]), (E[1], E[2]), (E[2], E[0])]
        else:
            pairs = []
        for a, b in pairs:
            A, B = Rp @ a, Rc @ b
            axis = np.cross(B, A)                    # sdot = axis . (omega_c - omega_p)
            r.append(np.array([A @ B]))
            G.append((axis @ (Jc[3:] - Jp[3:]))[None])
            gg = 0.0
            if thd is not None:
                gg = ((ac[3:] - ap[3:]) @ axis
                      + (wc - wp) @ (np.cross(np.cross(wc, B), A) + np.cross(B, np.cross(wp, A))))
            g.append(np.array([gg]))
            dirs.append(np.concatenate([axis, np.zeros(3)])[None])
        return np.concatenate(r), np.vstack(G), np.concatenate(g), np.vstack(dirs)

    def _target_rows(self, theta, target):
        """Residual and Jacobian of the motion rows: module chains ``theta[act] - x``; PKM the task
        components of ``log6(pose^-1 F)`` of the platform frame ``F`` (Pinocchio order)."""
        if self.task is None:
            return theta[self.act] - target, self._actuator_rows()
        E = target.actInv(self.data.oMf[self.wrench_frame])
        J = pin.Jlog6(E) @ pin.getFrameJacobian(self.model, self.data, self.wrench_frame, LOCAL)
        return pin.log6(E).vector[self.task], J[self.task]

    def _actuator_rows(self):
        """``S`` (n_act, n): the actuated joints' rows of the identity."""
        S = np.zeros((len(self.act), self.n))
        S[np.arange(len(self.act)), self.act] = 1.0
        return S

    def _motion_jacobian(self):
        """Rates of the motion rows: ``S`` (module chains), the platform's task rows (PKM)."""
        if self.task is None:
            return self._actuator_rows()
        return pin.getFrameJacobian(self.model, self.data, self.wrench_frame, LOCAL)[self.task]

    # ------------------------------------------------------------------ closure

    def _newton(self, theta, target, tol=1e-13, iterations=60):
        for _ in range(iterations):
            self.kinematics(theta)
            r, G, _ = self.loop_rows(theta)
            t, T = self._target_rows(theta, target)
            res = np.concatenate([r, t])
            if np.abs(res).max() < tol:
                return theta
            theta = theta - np.linalg.lstsq(np.vstack([G, T]), res, rcond=None)[0]
        raise RuntimeError(f"loop closure did not converge (residual {np.abs(res).max():.3g})")

    def close(self, x, xd, xdd, start=None, steps=8):
        """Tree motion ``(q, qd, qdd)`` (interface order) of the actuator motion (module chains:
        ``x``, ``xd``, ``xdd`` (n_act,)) or task motion (PKM: ``x`` the platform pose (4, 4),
        ``xd`` = V_t, ``xdd`` = Vdot_t): Newton from ``start`` (a closed configuration, interface
        order; default the zero configuration), the target moved from there in ``steps`` steps;
        then ``[G; S] qd = (0, xd)`` and ``[G; S] qdd = (-gamma, xdd - S' qd)`` (S' qd: the drift
        of the motion rows), each checked to have one solution that satisfies every row."""
        theta = np.zeros(self.n) if start is None else self.to_pin(start)
        self.kinematics(theta)
        if self.task is None:
            x0, goal = theta[self.act], np.asarray(x, dtype=float)
            targets = [x0 + (goal - x0) * k / steps for k in range(1, steps + 1)]
        else:
            X0, goal = self.data.oMf[self.wrench_frame].copy(), pin.SE3(np.asarray(x, dtype=float))
            step = pin.log6(X0.actInv(goal)).vector
            targets = [X0 * pin.exp6(step * k / steps) for k in range(1, steps + 1)]
        for target in targets:
            theta = self._newton(theta, target)
        self.kinematics(theta)
        _, G, _ = self.loop_rows(theta)
        A = np.vstack([G, self._motion_jacobian()])
        thd = self._solve(A, np.concatenate([np.zeros(len(G)), xd]), "velocity")
        self.kinematics(theta, thd)
        _, _, gamma = self.loop_rows(theta, thd)
        if self.task is None:
            drift = np.zeros(len(self.act))
        else:
            drift = pin.getFrameAcceleration(self.model, self.data, self.wrench_frame, LOCAL).vector[self.task]
        thdd = self._solve(A, np.concatenate([-gamma, np.asarray(xdd, dtype=float) - drift]), "acceleration")
        return self.from_pin(theta), self.from_pin(thd), self.from_pin(thdd)

    @staticmethod
    def _solve(A, b, what):
        s = np.linalg.svd(A, compute_uv=False)
        if s[-1] < 1e-9 * s[0] or A.shape[1] > A.shape[0]:
            raise RuntimeError(f"{what} level: the loops and the motion do not determine the tree motion")
        sol = np.linalg.lstsq(A, b, rcond=None)[0]
        if np.abs(A @ sol - b).max() > 1e-9 * max(1.0, np.abs(b).max()):
            raise RuntimeError(f"{what} level: the rows are inconsistent")
        return sol

    # ------------------------------------------------------------------ dynamics

    def _fext(self, wrench):
        """Pinocchio's external forces (per joint, LOCAL) of a wrench (moment, force) (6,) on the
        end-effector / platform frame, in that frame."""
        f = pin.StdVec_Force()
        for _ in range(self.model.njoints):
            f.append(pin.Force.Zero())
        if wrench is not None:
            fr = self.model.frames[self.wrench_frame]
            w = np.asarray(wrench, dtype=float)
            f[fr.parentJoint] = fr.placement.act(pin.Force(w[3:], w[:3]))
        return f

    def _constraint_basis(self, G):
        """Orthonormal basis (m, r) of the column space of ``G`` (redundant rows dropped)."""
        if len(G) == 0:
            return np.zeros((0, 0))
        U, s, _ = np.linalg.svd(G, full_matrices=False)
        return U[:, :int(np.sum(s > 1e-9 * s[0]))]

    def forward_dynamics(self, q, qd, u, wrench=None):
        """``(qdd, lambda)`` (interface order; lambda the minimum-norm multipliers of the rows of
        :meth:`loop_rows`) for actuator efforts ``u``: ``M qdd + b = S^T u + G^T lambda``,
        ``G qdd = -gamma``."""
        m, d = self.model, self.data
        th, thd = self.to_pin(q), self.to_pin(qd)
        self.kinematics(th, thd)
        _, G, gamma = self.loop_rows(th, thd)
        qp = self.q_pin(th)
        M = pin.crba(m, d, qp)
        M = np.triu(M) + np.triu(M, 1).T
        b = pin.rnea(m, d, qp, thd, np.zeros(self.n), self._fext(wrench))
        tau = np.zeros(self.n)
        tau[self.act] = u
        U = self._constraint_basis(G)
        Gr, n, r = U.T @ G, self.n, U.shape[1]
        K = np.zeros((n + r, n + r))
        K[:n, :n], K[:n, n:], K[n:, :n] = M, -Gr.T, Gr
        sol = np.linalg.solve(K, np.concatenate([tau - b, -U.T @ gamma]))
        return self.from_pin(sol[:n]), U @ sol[n:]

    def inverse_dynamics(self, q, qd, qdd, wrench=None):
        """Actuator efforts ``u`` with ``rnea(q, qd, qdd) = S^T u + G^T lambda``, the system
        checked to have one solution for ``u``, and ``lambda``."""
        m, d = self.model, self.data
        th, thd, thdd = self.to_pin(q), self.to_pin(qd), self.to_pin(qdd)
        self.kinematics(th)
        _, G, _ = self.loop_rows(th)
        tau = pin.rnea(m, d, self.q_pin(th), thd, thdd, self._fext(wrench))
        U = self._constraint_basis(G)
        A = np.hstack([self._actuator_rows().T, G.T @ U])
        sol = self._solve(A, tau, "force")
        return sol[:len(self.act)], U @ sol[len(self.act):]

    def task_acceleration(self, q, qd, qdd):
        """Vdot_t: the task components of the platform frame's body-fixed acceleration."""
        th, thd, thdd = self.to_pin(q), self.to_pin(qd), self.to_pin(qdd)
        pin.forwardKinematics(self.model, self.data, self.q_pin(th), thd, thdd)
        pin.updateFramePlacements(self.model, self.data)
        return pin.getFrameAcceleration(self.model, self.data, self.wrench_frame, LOCAL).vector[self.task]

    def cut_forces(self, q, lam):
        """The wrench (moment, force) that each cut joint's parent side exerts on its child side
        for multipliers ``lam`` of :meth:`loop_rows`: in world axes about the child cut origin,
        shape (c, 6), and in the child cut frame, shape (c, 6)."""
        self.kinematics(self.to_pin(q))
        out_w, out_c, start = [], [], 0
        for c in self.cuts:
            dirs = self._cut_rows(c, None)[3]
            w = dirs.T @ lam[start:start + len(dirs)]
            start += len(dirs)
            Rc = self.data.oMf[c["frames"][1]].rotation
            out_w.append(w)
            out_c.append(np.concatenate([Rc.T @ w[:3], Rc.T @ w[3:]]))
        return np.array(out_w).reshape(-1, 6), np.array(out_c).reshape(-1, 6)

    def reactions(self, q, qd, qdd, lam, wrench=None):
        """Wrench (moment, force) every tree joint transmits, parent side on child side, in the
        joint's (= its child link's) frame (interface order, (n, 6)), from ``pin.rnea`` with the
        cut forces of ``lam`` on the two cut links as external forces; and the joint torques
        ``tau`` (interface order) of that call (the actuator efforts, zero at passive joints)."""
        m, d = self.model, self.data
        th, thd, thdd = self.to_pin(q), self.to_pin(qd), self.to_pin(qdd)
        W, _ = self.cut_forces(q, lam)
        f = self._fext(wrench)
        for c, w in zip(self.cuts, W):
            fc = c["frames"][1]
            at = pin.SE3(np.eye(3), self.data.oMf[fc].translation)      # world axes, child cut origin
            F = at.act(pin.Force(w[3:], w[:3]))                          # about the world origin
            for side, sign in ((1, 1.0), (0, -1.0)):
                j = m.frames[c["frames"][side]].parentJoint
                if j > 0:
                    f[j] = f[j] + d.oMi[j].actInv(pin.Force(sign * F.linear, sign * F.angular))
        tau = pin.rnea(m, d, self.q_pin(th), thd, thdd, f)
        out = np.zeros((self.n, 6))
        for j in range(1, m.njoints):
            out[m.joints[j].idx_v] = np.concatenate([d.f[j].angular, d.f[j].linear])
        return out[self.perm], self.from_pin(tau)
