"""Renderers: terminal tables, JSON documents, HTML, mail, plots and traces of what use cases return."""
