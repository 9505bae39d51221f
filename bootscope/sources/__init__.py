"""Logs in: files (plain or compressed) and stdin, read in blocks of whole lines."""
