"""Network elements: output ports (queue + link), RED/ECN marking, phantom queues, switches,
hosts, and the network that wires them from a topology."""
