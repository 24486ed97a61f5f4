"""Loaders for public datasets that cannot be downloaded here; each reads a local copy."""
