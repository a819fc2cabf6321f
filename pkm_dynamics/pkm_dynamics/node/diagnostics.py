"""Diagnostics of the pkm_dynamics node: what it serves and how the feedforward stream fares,
as ``diagnostic_msgs/DiagnosticStatus`` the node publishes on ``/diagnostics`` (1 Hz): one
``<node>: dynamics`` status, and one ``<node>: actuator limits`` status with the worst
utilisation of each actuator's effort and velocity limit over the feedforward references of
the last second (:mod:`pkm_dynamics.core.limits`; WARN above 100 %, naming the joints).

:class:`Diagnostics` counts while the node runs — the streaming thread per reference (an
integer increment and a deque append: cheap enough for a 1 kHz stream), the services on a
failure or an IK answer — and :meth:`Diagnostics.array` turns the counts into the message
once a second. No ROS entity is created here; the node owns the publisher and the timer.
"""
from collections import deque
import statistics
import threading
import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

#: per-reference costs kept for the median: the last second of a stream up to 10 kHz
COST_SAMPLES = 10000
#: WARN when the worst condition number of the last window exceeds this share of
#: ``ik.singularity_threshold`` (beyond the threshold itself IK answers SINGULAR)
KAPPA_WARN_SHARE = 0.1


class Diagnostics:
    """Counters of one node (see module doc). ``reference``, ``refusal``, ``error`` and
    ``condition`` may be called from any thread; ``array`` from one (the node's timer)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._costs = deque(maxlen=COST_SAMPLES)    # (end [s, perf_counter], cost [s])
        self.published = 0                          # references answered with outputs
        self.refused = 0                            # references refused (no output)
        self.last_error = ''
        self._kappa_window = 0.0
        self._kappa_worst = 0.0
        self._last = (time.perf_counter(), 0, 0)    # (time, published, refused) of the last report
        self._limits = None                         # the actuator limits the worst values are of
        self._worst = None                          # (2, n): worst effort, velocity utilisation

    # -- counting (hot path: reference) -------------------------------------------------------
    def reference(self, start):
        """A reference answered; its handling started at ``start`` (``time.perf_counter()``)."""
        end = time.perf_counter()
        self.published += 1
        self._costs.append((end, end - start))

    def refusal(self, what, message):
        """A reference (``what``) refused with ``message``: no output."""
        self.refused += 1
        self.error(what, message)

    def error(self, what, message):
        """The last error the node met: a refused reference or a failed service call."""
        self.last_error = f'{what}: {message}'

    def condition(self, kappa):
        """A condition number an inverse kinematics reported (PKM: kappa(F) per limb; module
        chain: of the end-effector Jacobian)."""
        kappa = float(kappa)
        with self._lock:
            self._kappa_window = max(self._kappa_window, kappa)
            self._kappa_worst = max(self._kappa_worst, kappa)

    def utilisation(self, limits, u, xd):
        """The efforts ``u`` and actuator velocities ``xd`` (B, n) of a feedforward reference,
        to be reported against the actuators' ``limits``
        (:class:`~pkm_dynamics.core.limits.ActuatorLimits`): the largest ``|u|`` and ``|xd|``
        per actuator are kept until the next report, which turns them into utilisations
        (``limits.utilisation``) -- four array operations per one-point reference."""
        u, xd = np.abs(u), np.abs(xd)
        if len(u) > 1:
            u, xd = u.max(axis=0, keepdims=True), xd.max(axis=0, keepdims=True)
        with self._lock:
            if limits is not self._limits or self._worst is None:
                self._limits, self._worst = limits, np.zeros((2, len(limits.joints)))
            worst = self._worst
            np.maximum(worst[0], u[0], out=worst[0])
            np.maximum(worst[1], xd[0], out=worst[1])

    def new_model(self):
        """A new model is served: the worst condition number starts afresh."""
        with self._lock:
            self._kappa_window = self._kappa_worst = 0.0

    # -- report -------------------------------------------------------------------------------
    def array(self, stamp, name, model, state, model_error, singularity_threshold):
        """``DiagnosticArray`` (header stamp ``stamp``) with one status ``name`` of the node:
        ERROR without a model (``model_error`` says why), WARN when not active, when
        references were refused since the last report or when the worst condition number
        since then comes within ``KAPPA_WARN_SHARE`` of ``singularity_threshold``, else OK.
        Rate, refusals, median cost and that condition number cover the time since the last
        report (the last second, at the node's 1 Hz)."""
        now = time.perf_counter()
        then, published, refused = self._last
        self._last = (now, self.published, self.refused)
        elapsed = max(now - then, 1e-9)
        new_refused = self.refused - refused
        rate = (self.published - published + new_refused) / elapsed
        costs = [c for t, c in list(self._costs) if t > then]     # since the last report
        with self._lock:
            kappa_window, kappa_worst = self._kappa_window, self._kappa_worst
            self._kappa_window = 0.0

        warnings = []
        if state != 'active':
            warnings.append(f'not serving: lifecycle state {state}')
        if new_refused:
            warnings.append(f'{new_refused} reference(s) refused in the last {elapsed:.1f} s')
        if kappa_window > KAPPA_WARN_SHARE * singularity_threshold:
            warnings.append(f'condition number {kappa_window:.3g} near the singularity '
                            f'threshold {singularity_threshold:.3g}')
        if model is None:
            level, message = DiagnosticStatus.ERROR, f'no model: {model_error}'
        elif warnings:
            level, message = DiagnosticStatus.WARN, '; '.join(warnings)
        else:
            level, message = DiagnosticStatus.OK, f'serving "{model.name}"'

        values = {
            'model loaded': 'true' if model is not None else 'false',
            'robot': model.name if model is not None else '',
            'kind': model.kind if model is not None else '',
            'lifecycle state': state,
            'reference rate [Hz]': f'{rate:.1f}',
            'outputs published': str(self.published),
            'references refused': str(self.refused),
            'last error': self.last_error,
            'worst condition number (last second)': f'{kappa_window:.6g}',
            'worst condition number (since model load)': f'{kappa_worst:.6g}',
            'singularity threshold': f'{singularity_threshold:.6g}',
            'gravity [m/s^2]': str(model.gravity) if model is not None else '',
            'cost per reference, median of the last second [ms]':
                f'{statistics.median(costs) * 1e3:.3f}' if costs else '',
        }
        status = DiagnosticStatus(level=level, name=name, message=message,
                                  hardware_id=model.name if model is not None else '',
                                  values=[KeyValue(key=k, value=v) for k, v in values.items()])
        out = DiagnosticArray(status=[status, self._limits_status(name.split(':')[0], model)])
        out.header.stamp = stamp
        return out

    def _limits_status(self, node, model):
        """The ``<node>: actuator limits`` status: per actuator the worst effort and velocity
        utilisation [%] of the feedforward references since the last report (empty without a
        limit); WARN naming each actuator above 100 %, OK otherwise."""
        with self._lock:
            limits, worst = self._limits, self._worst
            self._worst = None if worst is None else np.zeros_like(worst)
        if model is not None and limits is not model.robot.limits:
            limits, worst = model.robot.limits, None            # nothing streamed for this model yet
        if worst is not None:                                   # (2, n) utilisations
            worst = np.array(limits.utilisation(worst[0], worst[1]))
        values, beyond = [], []
        if limits is not None:
            for k, joint in enumerate(limits.joints):
                for q, (quantity, bound) in enumerate((('effort', limits.force_max[k]),
                                                       ('velocity', limits.velocity_max[k]))):
                    share = 0.0 if worst is None else 100.0 * worst[q, k]
                    values.append(KeyValue(key=f'{joint} {quantity} [%]',
                                           value=f'{share:.1f}' if np.isfinite(bound) else ''))
                    if share > 100.0:
                        beyond.append(f'{joint} {quantity} {share:.0f} % of {bound:.6g}')
        if beyond:
            level, message = DiagnosticStatus.WARN, 'beyond actuator limits: ' + ', '.join(beyond)
        else:
            level, message = DiagnosticStatus.OK, 'every actuator within its limits'
        return DiagnosticStatus(level=level, name=f'{node}: actuator limits', message=message,
                                hardware_id=model.name if model is not None else '', values=values)
