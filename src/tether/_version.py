"""The package version (one place: the package, telemetry and exports read it here)."""

__version__ = "0.1.0"
