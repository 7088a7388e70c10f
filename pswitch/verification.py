"""What a circuit measured on the command line is held to (the demo's and ``pswitch
calibrate``'s check), in a module of its own so that the help quotes the figures without
importing the numerics."""

#: A circuit counts as verified at this measured isolation (dB) ...
VERIFY_ISOLATION_DB = 20.0
#: ... and this distance of measured from predicted insertion loss (dB).
VERIFY_LOSS_DB = 1.0
