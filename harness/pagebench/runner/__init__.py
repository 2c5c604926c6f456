"""The one sequencer of I/O: a run's loads, in order, through the lab into the store."""
