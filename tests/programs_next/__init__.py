"""Programs of the course a learner takes next (issue 25), each ``prog(T)`` printing what it learns; run on PyTorch and
on autogradviz by ``tests/test_next_programs.py``. Written for this project."""
