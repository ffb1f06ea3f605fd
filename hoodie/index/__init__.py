"""Indexes: tagging incoming records with the file group that already holds their key."""
