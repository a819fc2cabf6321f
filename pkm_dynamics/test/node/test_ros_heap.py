"""The node's heap after a model is put in use (dynamics_node.freeze_heap): the objects alive
are exempt from the collector's full collections, and a replaced model is still freed; the
collection comes after the node's state is all of the new model (the info service, in
another thread, never sees the new model with the previous description's rejection note)."""
import gc
import weakref

from pkm_dynamics.core.description.examples import module_chain_urdf


def test_a_replaced_model_is_freed_and_the_heap_frozen(rclpy_context):
    from rclpy.parameter import Parameter
    from pkm_dynamics.node.dynamics_node import DynamicsNode
    node = DynamicsNode(context=rclpy_context, namespace='/heap_test', parameter_overrides=[
        Parameter('robot_description', value=module_chain_urdf(2)),
        Parameter('completion.enabled', value=False)])
    try:
        node.trigger_configure()
        first = weakref.ref(node._model)
        assert gc.get_freeze_count() > 10000      # the libraries and the model, frozen
        assert node._load(module_chain_urdf(3), 'test')  # a new description, as the topic's
        assert first() is None                       # the replaced model is gone at once
    finally:
        node.destroy_node()
        gc.unfreeze()


def test_the_heap_is_frozen_after_the_state_is_of_the_new_model(rclpy_context, monkeypatch):
    from rclpy.parameter import Parameter
    from pkm_dynamics.node import dynamics_node
    seen = []
    node = dynamics_node.DynamicsNode(
        context=rclpy_context, namespace='/heap_order_test', parameter_overrides=[
            Parameter('robot_description', value=module_chain_urdf(2)),
            Parameter('completion.enabled', value=False)])
    try:
        node.trigger_configure()
        assert not node._load('<robot name="broken"><link name="a">', 'test')
        assert 'rejected' in node._description_note
        monkeypatch.setattr(dynamics_node, 'freeze_heap',
                            lambda: seen.append((node._model.name, node._description_note)))
        assert node._load(module_chain_urdf(3), 'test')
        assert seen == [(node._model.name, '')]
    finally:
        node.destroy_node()
        gc.unfreeze()
