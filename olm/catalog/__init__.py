"""Operator catalogs: formats, the model, validation and upgrade graphs (pure logic)."""
