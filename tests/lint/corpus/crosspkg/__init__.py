"""A package whose handlers call helpers imported from a sibling module."""
