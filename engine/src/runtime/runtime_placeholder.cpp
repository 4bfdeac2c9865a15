// replaced by the runtime implementation
