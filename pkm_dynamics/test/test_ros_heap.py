"""The node's heap after a model is put in use (dynamics_node.freeze_heap): the objects alive
are exempt from the collector's full collections, and a replaced model is still freed."""
import gc
import weakref

from pkm_dynamics.core.examples import module_chain_urdf


def test_a_replaced_model_is_freed_and_the_heap_frozen(rclpy_context):
    from rclpy.parameter import Parameter
    from pkm_dynamics.dynamics_node import DynamicsNode
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
