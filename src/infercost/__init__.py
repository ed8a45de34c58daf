"""infercost: why serving a large language model costs what it costs."""
