"""The pre-tokenizer stage: the byte-level scanners (GPT-2 / cl100k / o200k families) and the tokenizer.json pre-tokenizer components."""
