"""``torch.utils.data`` as beginner material uses it: Dataset, TensorDataset, DataLoader (batching, shuffling with
PyTorch's random stream, the default collate) and random_split's simple form.

Each pass over a DataLoader draws as PyTorch's does: one int64 ``random_()`` (its workers' base seed), then, when
shuffling without a generator, another that seeds a private generator, which makes ``randperm(n)``; so after
``manual_seed`` the batches are PyTorch's.
"""
import numbers

import numpy as np

from .. import _random
from .._tensor import Tensor, _wrap

__all__ = ["Dataset", "TensorDataset", "DataLoader", "default_collate", "default_convert", "random_split", "Subset"]


class Dataset:
    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        raise NotImplementedError("autogradviz: ConcatDataset is not implemented")


class TensorDataset(Dataset):
    """Samples are the ``index``-th rows of each tensor."""

    def __init__(self, *tensors):
        if not all(tensors[0].size(0) == t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class Subset(Dataset):
    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


def _sampler_seed(g=None):
    """``int(torch.empty((), dtype=torch.int64).random_().item())``: random64() % 2**63."""
    g = g or _random.default_generator
    with g._lock:
        v = int(g._random64(1)[0])
    return v & ((1 << 63) - 1)


def _permutation(n, generator):
    if generator is None:
        generator = _random.Generator()
        generator.manual_seed(_sampler_seed())
    return _random.randperm(n, generator=generator).tolist()


def random_split(dataset, lengths, generator=None):
    n = len(dataset)
    if all(isinstance(x, float) for x in lengths) and abs(sum(lengths) - 1) < 1e-9 and sum(lengths) <= 1:
        counts = [int(np.floor(n * f)) for f in lengths]
        rest = n - sum(counts)
        for i in range(rest):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = _random.randperm(n, generator=generator or _random.default_generator).tolist()
    out, off = [], 0
    for k in lengths:
        out.append(Subset(dataset, perm[off:off + k]))
        off += k
    return out


def default_convert(data):
    """numpy arrays become tensors, sequences lists and mappings dicts of converted items; the rest stays."""
    if isinstance(data, np.ndarray) and data.dtype.kind in "biuf":
        return _wrap(data)
    if isinstance(data, dict):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (list, tuple)):
        return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Stack a list of samples: tensors are stacked, numbers become a tensor, tuples/lists/dicts are collated
    field by field (as PyTorch's default_collate)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        from ..ops.shape import stack
        return stack(list(batch), 0)
    if isinstance(elem, bool):
        return _wrap(np.array(batch, dtype=np.bool_))
    if isinstance(elem, numbers.Integral):
        return _wrap(np.array(batch, dtype=np.int64))
    if isinstance(elem, float):
        return _wrap(np.array(batch, dtype=np.float64))
    if isinstance(elem, np.ndarray):
        return _wrap(np.stack(batch))
    if isinstance(elem, str):
        return list(batch)
    if isinstance(elem, dict):
        return {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, (tuple, list)):
        it = iter(batch)
        n = len(elem)
        if not all(len(e) == n for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(s)) for s in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
                    f"{type(elem)}")


class DataLoader:
    """Batches of a map-style dataset, in order or shuffled (``num_workers`` is accepted and ignored: one
    process)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 generator=None, **kwargs):
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = bool(shuffle)
        self.sampler = sampler
        self.num_workers = num_workers
        self.collate_fn = collate_fn or default_collate
        self.drop_last = drop_last
        self.generator = generator

    def _indices(self):
        if self.sampler is not None:
            return list(iter(self.sampler))
        n = len(self.dataset)
        return _permutation(n, self.generator) if self.shuffle else list(range(n))

    def __iter__(self):
        _sampler_seed(self.generator)  # PyTorch's iterator draws its workers' base seed first
        idx = self._indices()
        bs = self.batch_size
        if bs is None:  # no batching: each sample through default_convert, as PyTorch
            for i in idx:
                yield default_convert(self.dataset[i])
            return
        for i in range(0, len(idx), bs):
            chunk = idx[i:i + bs]
            if len(chunk) < bs and self.drop_last:
                return
            yield self.collate_fn([self.dataset[j] for j in chunk])

    def __len__(self):
        n = len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
