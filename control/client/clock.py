"""The spokes' clock is the project's one clock (`control.clock`); this name stays for old imports.

Guarantees: the names here are the very objects of `control.clock`, so a `FakeClock` imported from
either place is the same class.
"""

from control.clock import REAL, Clock, FakeClock, RealClock, settle

__all__ = ["REAL", "Clock", "FakeClock", "RealClock", "settle"]
