// replaced by the tokenizer implementation
