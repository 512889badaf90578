"""olm-py: the Operator Lifecycle Manager (OLM v0) rebuilt in Python."""

__version__ = "0.1.0"
