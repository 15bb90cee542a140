"""ARM machines: whether this CPU runs 32-bit ARM code natively, and a Raspberry Pi's board facts."""
