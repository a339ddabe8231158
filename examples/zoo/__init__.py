"""A tiny model zoo: the bundled pt2bot example project."""
