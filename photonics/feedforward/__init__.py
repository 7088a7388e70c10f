"""Feed-forward MZI meshes (Clements, Reck): transfer, decomposition, routing, heater places."""
