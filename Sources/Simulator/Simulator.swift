// The `Simulator` stage: see docs/DESIGN.md. Replaced by its first real type.
