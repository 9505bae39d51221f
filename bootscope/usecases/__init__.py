"""What the front ends call: one module per verb family. A use case takes typed
arguments, returns result dataclasses, never prints and never reads options."""
