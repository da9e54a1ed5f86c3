"""Readers and writers for tokenizer file formats (pure Python, no protobuf or JSON schema libraries)."""
