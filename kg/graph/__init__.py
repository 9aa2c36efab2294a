"""A graph file and what is derived from it: formats, atomic writes, the stamp, the one reader."""
