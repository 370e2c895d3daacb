"""The package's version, in a module of its own so that every stage can name it without a cycle."""

__version__ = "0.1.0"
