"""What a chain of loops must be to be served in actuator space, each refusal naming the joint:
every loop group (loops sharing joints, paper 001 Sec. 3.3) driven by as many actuators as it
has degrees of freedom, every joint outside the loops actuated (no passive joint), and the
actuators together a set of independent coordinates (eq. 16: ``G_y`` of each loop regular)."""
from __future__ import annotations

from ..description.robot_description import RobotDescription
from ..errors import DescriptionError


def check_loop_chain(desc: RobotDescription, limb) -> None:
    """Refuse (:class:`DescriptionError`, naming the joint or loop) a description whose limb
    ``limb`` (:func:`~..limb.limb_model.build_limbs` without forced coordinates: actuated joints
    preferred as independent ones) is not driven one actuator per degree of freedom:

    * a loop group whose joints hold no actuator (``loop (a, b) has no actuator``);
    * an actuator in a loop group that already has one actuator per degree of freedom, or a
      second actuator where the loop leaves nothing to drive (``has nothing to drive``);
    * a joint outside every loop that is neither actuated nor declared passive, or a declared
      passive joint inside a loop."""
    if desc.end_effector is None:
        raise DescriptionError(f"robot '{desc.name}': a chain of loops needs its end effector "
                               "(<end_effector link=\"...\"/> in <pkm_dynamics>)")
    tree = limb.tree
    names = tree.joint_names
    whole = {desc.tree.joint_index(a) for a in desc.actuated_joints}
    actuated = {j for j in range(tree.nq) if int(limb.whole_index[j]) in whole}
    passive_whole = {desc.tree.joint_index(a) for a in desc.passive}
    passive = {j for j in range(tree.nq) if int(limb.whole_index[j]) in passive_whole}
    in_loop = set()
    for lp in limb.loops:
        joints = [int(j) for j in lp.joints]
        in_loop |= set(joints)
        driven = [j for j in joints if j in actuated]
        loop = f"loop ({', '.join(lp.names)})"
        inside = [names[j] for j in joints if j in passive]
        if inside:
            raise DescriptionError(f"passive joint '{inside[0]}' is a joint of {loop}: declare as passive only "
                                   "joints outside the loops (a loop's passive joints follow from its actuators)")
        if not driven:
            raise DescriptionError(f"{loop} has no actuator: its joints {[names[j] for j in joints]} are all "
                                   f"passive, and it has {lp.dof} degree(s) of freedom to drive")
        if len(driven) > lp.dof:
            extra = names[driven[lp.dof]]
            raise DescriptionError(f"actuator '{extra}' has nothing to drive: {loop} has {lp.dof} degree(s) "
                                   f"of freedom, already driven by {[names[j] for j in driven[:lp.dof]]}")
        if len(driven) < lp.dof:
            raise DescriptionError(f"{loop} has {lp.dof} degrees of freedom but only the actuator(s) "
                                   f"{[names[j] for j in driven]}: its joints "
                                   f"{[names[j] for j in joints if j not in driven]} are passive")
        if sorted(int(j) for j in lp.independent) != sorted(driven):
            raise DescriptionError(f"{loop}: the actuator(s) {[names[j] for j in driven]} do not drive it "
                                   "(the loop's other joints are not determined by them at the reference "
                                   "configuration)")
    for j in range(tree.nq):
        if j not in in_loop and j not in actuated and j not in passive:
            raise DescriptionError(f"joint '{names[j]}' belongs to no loop and is neither actuated nor declared "
                                   "passive (<passive joint=\"...\"/>)")
