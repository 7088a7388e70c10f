"""Hardware in the loop: instruments and transports, the emulator servers, bench routines, the CLI."""
