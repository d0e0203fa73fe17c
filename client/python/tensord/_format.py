"""repr() and print() of tensors, with the text torch 1.13 gives for the same tensor.

Works on a numpy array of the values (all of them, or for a large tensor only the edge items
each dim shows, fetched from the server as one small tensor) plus the tensor's real shape.
"""
import math

import numpy as np


class _PrinterOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _PrinterOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """torch.set_printoptions."""
    if profile is not None:
        presets = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
                   "full": (4, math.inf, 3, 80)}
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = presets[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


class _Formatter:
    def __init__(self, values, floating):
        # values: a flat float64 (floating) or integer/bool numpy array of what is shown.
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not floating:
            for v in values.tolist():
                self.max_width = max(self.max_width, len(str(v)))
        else:
            finite = values[np.isfinite(values) & (values != 0)]
            if finite.size:
                absv = np.abs(finite)
                lo, hi = float(absv.min()), float(absv.max())
                self.int_mode = bool(np.all(finite == np.ceil(finite)))
                p = PRINT_OPTS.precision
                if self.int_mode:
                    if hi / lo > 1000.0 or hi > 1.0e8:
                        self.sci_mode = True
                        for v in finite.tolist():
                            self.max_width = max(self.max_width, len(f"{v:.{p}e}"))
                    else:
                        for v in finite.tolist():
                            self.max_width = max(self.max_width, len(f"{v:.0f}") + 1)
                else:
                    if hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4:
                        self.sci_mode = True
                        for v in finite.tolist():
                            self.max_width = max(self.max_width, len(f"{v:.{p}e}"))
                    else:
                        for v in finite.tolist():
                            self.max_width = max(self.max_width, len(f"{v:.{p}f}"))
                # torch's: sci_mode is set only where a finite nonzero value is shown.
                if PRINT_OPTS.sci_mode is not None:
                    self.sci_mode = PRINT_OPTS.sci_mode

    def format(self, value):
        p = PRINT_OPTS.precision
        if self.floating:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = str(value)
        return (self.max_width - len(ret)) * " " + ret


def _str_rec(arr, shape, indent, summarize, fmt):
    """arr holds the shown values: along a summarized dim only its 2*edgeitems edge rows."""
    dim = len(shape)
    if dim == 0:
        return fmt.format(arr.item())
    e = PRINT_OPTS.edgeitems
    # Row j of arr holds original row `positions[j]` (None: the elided middle).
    if summarize and shape[0] > 2 * e:
        # edgeitems=0: torch's self[-0:] is every row, so all of them follow the " ...".
        rows = list(range(e)) + [None] + list(range(e, 2 * e) if e else range(shape[0]))
    else:
        rows = list(range(shape[0]))
    if dim == 1:
        element_length = fmt.max_width + 2
        per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
        values = arr.tolist()
        data = [" ..." if r is None else fmt.format(values[r]) for r in rows]
        lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
        return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"
    slices = ["..." if r is None else _str_rec(arr[r], shape[1:], indent + 1, summarize, fmt)
              for r in rows]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def tensor_str(values, shape, floating, indent, summarize):
    """The bracketed contents. `values`: numpy array (float64 for floating dtypes) of the shown
    values, shaped like the tensor except along summarized dims."""
    if values.size == 0:
        return "[]"
    fmt = _Formatter(values.reshape(-1), floating)
    return _str_rec(values, tuple(shape), indent, summarize, fmt)


def add_suffixes(text, suffixes, indent):
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)
