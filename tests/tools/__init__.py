"""Tests of the kit's tools, by audience, as tools/ is laid out."""
