"""Load balancing: one module per balancer. A balancer chooses the entropy of each data packet
and is told what came back for an entropy; switches only ever hash the entropy."""
