"""Demo: start the installed pkm_dynamics node on a small robot and ask it about the model.

    make demo                        # the two-link arm of the test data
    .venv/bin/python scripts/demo.py path/to/robot.urdf

DDS stays on this machine (loopback, a domain of this process); the node runs as a child
process and is stopped with SIGINT at the end.
"""
import argparse
from pathlib import Path
import sys
import tempfile

from pkm_dynamics.testing import NodeProcess, call_service, use_loopback_ros

REPO = Path(__file__).resolve().parents[1]
DEFAULT_URDF = REPO / 'pkm_dynamics' / 'test' / 'data' / 'two_link_arm.urdf'


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('urdf', nargs='?', type=Path, default=DEFAULT_URDF,
                        help=f'URDF file (default: {DEFAULT_URDF.relative_to(REPO)})')
    args = parser.parse_args()

    env = use_loopback_ros()  # before rclpy.init, inherited by the node process
    import rclpy
    from pkm_dynamics_interfaces.srv import GetModelInfo

    print(f'robot description: {args.urdf}')
    print(f'DDS: loopback only, ROS_DOMAIN_ID={env["ROS_DOMAIN_ID"]}')
    with tempfile.TemporaryDirectory(prefix='pkm_dynamics_demo_') as workdir:
        node = NodeProcess(workdir, params={'robot_description': args.urdf.read_text()})
        try:
            with rclpy.init():
                client = rclpy.create_node('pkm_dynamics_demo')
                info = call_service(client, GetModelInfo, '/pkm_dynamics/get_model_info')
        finally:
            code = node.stop()
        if not info.success:
            print(f'the node could not load the description: {info.message}')
            return 1
        print(f'\nmodel "{info.robot_name}"')
        print(f'  links (bodies)   : {info.num_bodies}')
        print(f'  tree joints      : {", ".join(info.tree_joints) or "-"}')
        print(f'  actuated joints  : {", ".join(info.actuated_joints) or "-"}')
        print(f'  total mass       : {info.total_mass:.6g} kg')
        print(f'\nnode stopped with SIGINT, exit code {code}')
        return 0 if code == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
