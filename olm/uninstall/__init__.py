"""`olm uninstall-operator`: remove one package from one namespace and say what stays
(docs/uninstall.md). `plan` and `render` are pure; `run` does the I/O; `cli` is the command."""
