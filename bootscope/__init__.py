"""bootscope: measure where Linux boot time goes, and whether a change made it faster."""

__version__ = "0.1.0"
