"""A long fuzz run of the request path: the generators and checks of
``pkm_dynamics/test/test_fuzz_requests.py`` (which CI runs with a few examples each), many more
examples per robot and service, in-process on the node's service handlers.

Reports per robot and service: the requests sent, the outcomes by error code, the violations
(FAILURE, success with NaN/Inf or beyond a stroke, a wrong answer to the next good request) and
the answer times (median, max; and how many took more than 1 s) with ik.max_iterations at
its range end, and the answers only the safety net of ``conversions.core_error`` named (a
linear-algebra failure or an overflow that the input bounds did not prevent). Exits non-zero
on any violation. Figures as a table and as JSON in ``bench/results/fuzz_requests.json``.

    .venv/bin/python bench/fuzz_requests.py [--examples N] [--seed S] [--robots a,b]
"""
import argparse
import json
from pathlib import Path
import sys
import time
import warnings

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'bench'))
from common import load_suite, machine  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--examples', type=int, default=500, help='requests per robot and service')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--robots', default='', help='comma-separated subset of the examples')
    parser.add_argument('--ik-max-iterations', type=int, default=200,
                        help='the node parameter ik.max_iterations (default: its range end, the '
                             'slowest refusal of an unreachable pose)')
    args = parser.parse_args()
    warnings.simplefilter('ignore', RuntimeWarning)    # overflow inside refused requests

    from pkm_dynamics.testing import use_loopback_ros
    use_loopback_ros()
    import rclpy
    from rclpy.parameter import Parameter
    from rclpy.signals import SignalHandlerOptions
    from hypothesis import Phase, given, seed, settings
    from pkm_dynamics_interfaces.msg import ErrorCodes
    suite = load_suite()
    code_names = {getattr(ErrorCodes, n): n for n in dir(ErrorCodes)
                  if n.isupper() and isinstance(getattr(ErrorCodes, n), int)}

    context = rclpy.Context()
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    robots = [r for r in args.robots.split(',') if r] or list(suite.ROBOTS)
    rows = []
    try:
        for robot in robots:
            node = suite.in_process_node(context, robot)
            node.node.set_parameters([Parameter('ik.max_iterations',
                                                value=args.ik_max_iterations)])
            for service in suite.SERVICES:
                codes, times, violations, net = {}, [], [], []

                @seed(args.seed)
                @settings(max_examples=args.examples, deadline=None, database=None,
                          phases=[Phase.generate], suppress_health_check=list(
                              suite.HealthCheck))
                @given(request=suite.requests(node.model, service))
                def run(request):
                    t0 = time.perf_counter()
                    response = node.call(service, request)
                    times.append(time.perf_counter() - t0)
                    try:
                        code = suite.check_answer(node.model, service, response)
                        suite.good_request_is_right(node)
                    except AssertionError as exc:
                        violations.append(str(exc)[:300])
                        code = response.error_code.val
                    if response.message.startswith(('the computation is numerically singular',
                                                    'the computation overflowed')):
                        net.append(response.message[:200])     # core_error's safety net
                    name = code_names.get(code, str(code))
                    codes[name] = codes.get(name, 0) + 1
                run()
                t = np.array(times)
                rows.append({'robot': robot, 'service': service, 'requests': len(t),
                             'outcomes': dict(sorted(codes.items())),
                             'violations': violations[:20], 'violation_count': len(violations),
                             'safety_net': net[:20], 'safety_net_count': len(net),
                             'median_ms': float(np.median(t) * 1e3), 'max_ms': float(t.max() * 1e3),
                             'over_1s': int((t > 1.0).sum())})
                r = rows[-1]
                print(f"{robot:20s} {service:30s} {r['requests']:5d} req  "
                      f"median {r['median_ms']:7.2f} ms  max {r['max_ms']:8.1f} ms  "
                      f">1s {r['over_1s']}  violations {r['violation_count']}  "
                      f"net {r['safety_net_count']}  {r['outcomes']}",
                      flush=True)
            node.destroy()
    finally:
        context.try_shutdown()
    total = sum(r['requests'] for r in rows)
    bad = sum(r['violation_count'] for r in rows)
    slow = sum(r['over_1s'] for r in rows)
    print(f'{total} requests: {bad} violations, {slow} answers over 1 s, '
          f"max {max(r['max_ms'] for r in rows):.1f} ms")
    out = ROOT / 'bench' / 'results' / 'fuzz_requests.json'
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({'machine': machine(), 'examples': args.examples,
                               'seed': args.seed, 'rows': rows}, indent=1))
    for r in rows:
        for v in r['violations']:
            print(f"VIOLATION {r['robot']} {r['service']}: {v}")
        for v in r['safety_net']:
            print(f"SAFETY NET {r['robot']} {r['service']}: {v}")
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
