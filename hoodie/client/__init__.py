"""The clients: what orchestrates a write, and the table services after it, on the floors below."""
