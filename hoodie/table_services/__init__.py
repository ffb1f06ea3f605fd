"""Table services: work that reorganizes a table's files without changing its rows."""
