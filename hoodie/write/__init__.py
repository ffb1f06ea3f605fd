"""Write path: preparing records, planning file groups, write handles and committing."""
