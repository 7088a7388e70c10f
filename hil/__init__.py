"""Hardware in the loop: instruments, transports, emulator servers, bench routines, the CLI."""
