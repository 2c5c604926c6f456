"""Commands and processes on this machine: the I/O primitives that `link`, `edge` and
`lab` share (commands and the bed they run in, child processes, signals, owners)."""
