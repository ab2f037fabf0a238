"""The engine: argv in, a result out. `runtime` resolves the path, shows help (`help`, `topics`, `markdown`) or
parses (`parser`, `schema`) and runs the command's handler. Below it: handlers, search, the tree and its vocabulary."""
