"""Tables that several test files share: the op table (``optable``), sample and error inputs for every public op."""
