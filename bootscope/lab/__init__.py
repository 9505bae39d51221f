"""experiment stage."""
