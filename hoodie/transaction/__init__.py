"""Transactions between writers: the table lock, heartbeats and conflict detection."""
