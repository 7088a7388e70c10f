"""Rack-scale studies: accelerators joined by emulated photonic switch chips against electrical
racks as built (:mod:`.model`), jobs and failures over time on a discrete-event engine
(:mod:`.engine`), and the studies of ``pswitch rack`` (:mod:`.studies`)."""
