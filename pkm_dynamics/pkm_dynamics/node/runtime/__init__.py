"""How the node is spun: the single-threaded executor for the node's callback groups
(`lean_executor`) and the spin loop that stops on a signal (`spinning`)."""
