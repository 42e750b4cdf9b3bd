"""Flow-level engines: the vectorized fluid engine, the max-min baseline and the hybrid."""
