"""The version, in one place: the package, its metadata and every record read it here."""

__version__ = "0.1.0"
