"""A run directory's results as typed records: the one reader (reader.py) every consumer uses,
the records (records.py), format versions (formats.py), the registry of metrics and run fields
(registry.py) and the walker of the cells several runs share (cells.py).

Nothing is imported here, so that importing one module loads only what it needs.
"""
