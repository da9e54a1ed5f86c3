"""Model objects: flat arrays plus the kernels that read them (see Tokenizer's model protocol)."""
