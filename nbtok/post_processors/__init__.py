"""The post-processor stage: the tokenizer.json templates and ByteLevel offset trimming."""
