"""Sample operators shipped with olm-py, run as local processes on the local cluster."""
