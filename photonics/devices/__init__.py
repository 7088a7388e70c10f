"""One element's physics: the MZI, heaters and their transients, microrings, drift, dispersion."""
