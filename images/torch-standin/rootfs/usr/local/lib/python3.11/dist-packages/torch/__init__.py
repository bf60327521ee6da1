"""TEST STAND-IN for PyTorch, shipped only in codeplane-torch-standin:dev.

It is not PyTorch: it lets codeplane's tests prove that a run used the torch its
image provides (a GPU image holds CUDA and PyTorch) and installed nothing big,
without a 900 MB wheel. It offers `__version__`, a list-backed `tensor` with
`shape`, `sum`, `tolist`, elementwise `+` and `*`, and `cuda.is_available()`
(always False). Its dist-info makes pip see `torch` as installed, so a
requirement on torch is "already satisfied" in a venv made with
--system-site-packages.
"""

__version__ = "2.15.0+codeplane.standin"
STANDIN = True


class Tensor:
    """A flat or nested list of numbers with the few operations tests use."""

    def __init__(self, data):
        self._data = data

    @property
    def shape(self):
        dims, d = [], self._data
        while isinstance(d, list):
            dims.append(len(d))
            d = d[0] if d else None
        return tuple(dims)

    def tolist(self):
        return self._data

    def sum(self):
        def total(d):
            return sum(total(x) for x in d) if isinstance(d, list) else d

        return Tensor(total(self._data))

    def item(self):
        return self._data

    def _zip(self, other, op):
        def go(a, b):
            if isinstance(a, list):
                bs = b if isinstance(b, list) else [b] * len(a)
                return [go(x, y) for x, y in zip(a, bs)]
            return op(a, b)

        return Tensor(go(self._data, other._data if isinstance(other, Tensor) else other))

    def __add__(self, other):
        return self._zip(other, lambda a, b: a + b)

    def __mul__(self, other):
        return self._zip(other, lambda a, b: a * b)

    def __repr__(self):
        return f"tensor({self._data!r})"


def tensor(data):
    return Tensor(data)


class cuda:  # noqa: N801 (torch.cuda is a module in PyTorch)
    @staticmethod
    def is_available():
        return False
