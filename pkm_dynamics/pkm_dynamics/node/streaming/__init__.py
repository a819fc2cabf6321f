"""The node's reference streams: the ``<name>_topics`` subscriptions answered with feedforward
outputs (`streaming`, a mixin of the node) and the output messages written as CDR bytes from
templates (`feedforward_outputs`)."""
