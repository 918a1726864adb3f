"""Property tests (hypothesis): every differentiable op's analytical gradient against central finite differences
and against PyTorch's, on random shapes. The tests are written in tests/_support/properties.py (test_engine.py runs
the same functions under both engines); pytest collects them here.
"""
import pytest

pytest.importorskip("torch")

from _support.properties import (
    test_binary,
    test_div,
    test_pow_tensor_exponent,
    test_maximum_minimum,
    test_unary,
    test_reduce_dim,
    test_shape_ops,
    test_matmul,
    test_composite_graph,
    test_gradgradcheck,
    test_gradcheck_catches_a_wrong_backward,
    test_check_op_detects_a_mutated_input,
    test_second_derivative_of_every_op,
)

__all__ = [
    "test_binary",
    "test_div",
    "test_pow_tensor_exponent",
    "test_maximum_minimum",
    "test_unary",
    "test_reduce_dim",
    "test_shape_ops",
    "test_matmul",
    "test_composite_graph",
    "test_gradgradcheck",
    "test_gradcheck_catches_a_wrong_backward",
    "test_check_op_detects_a_mutated_input",
    "test_second_derivative_of_every_op",
]
