"""Compare: tables of Measurements, torch.utils.benchmark's layout.

Measurements are pooled by TaskSpec (Measurement.merge), grouped into one table per label;
a table's rows are (num_threads, env, sub_label or stmt), sorted by thread count then env with
a "N threads: ----" line where the count changes, and its columns are the descriptions. A
cell is the median in the table's unit (the unit of its smallest median).
"""
import enum
import math
from typing import Dict, List, Optional

from . import common

__all__ = ["Colorize", "Compare"]

_BEST = "\033[92m"
_GOOD = "\033[34m"
_BAD = "\033[2m\033[91m"
_VERY_BAD = "\033[31m"
_BOLD = "\033[1m"
_RESET = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _leading_digits(value: float) -> int:
    return int(math.ceil(common._log10_f32(value)))


class _Column:
    """How one column formats its numbers: enough integer digits for its largest median, and
    (trimming) the fewest decimals any of its cells' significant figures allow, else one."""

    def __init__(self, groups, scale: float, trim: bool, highlight_warnings: bool):
        self.groups = groups  # per thread group, this column's cells of the group's rows
        cells = [m for group in groups for m in group if m is not None]
        self.trim = trim
        self.highlight = highlight_warnings and any(m.has_warnings for m in cells)
        digits = [_leading_digits(m.median / scale) for m in cells]
        decimals = min(max(m.significant_figures - d, 0) for m, d in zip(cells, digits)) \
            if trim else 1
        width = max(digits) + decimals + (1 if decimals else 0)
        self.template = f"{{:>{width}.{decimals}f}}{{:>{7 if self.highlight else 0}}}"

    def cell(self, value: Optional[float], sigfigs: int, spread: Optional[float]) -> str:
        if value is None:
            return " " * len(self.cell(1, sigfigs, None))
        if self.trim:
            value = common.trim_sigfig(value, sigfigs)
        note = f" (! {spread * 100:.0f}%)" if self.highlight and spread is not None else ""
        return self.template.format(value, note)


def _colored(text: str, value: float, best: float) -> str:
    if value <= best * 1.01 or value <= best + 100e-9:
        return _BEST + _BOLD + text + _RESET * 2
    if value <= best * 1.1:
        return _GOOD + _BOLD + text + _RESET * 2
    if value >= best * 5:
        return _VERY_BAD + _BOLD + text + _RESET * 2
    if value >= best * 2:
        return _BAD + text + _RESET * 2
    return text


def _env_key(env):
    # None (no env given) before any named env; named envs in their order.
    return (env is not None, env or "")


class _Table:
    def __init__(self, results: List[common.Measurement], colorize: Colorize, trim: bool,
                 highlight_warnings: bool):
        self.results = results
        self.colorize = colorize
        self.highlight_warnings = highlight_warnings
        self.label = results[0].label
        self.unit, self.scale = common.select_unit(min(m.median for m in results))

        row_keys = common.ordered_unique((m.num_threads, m.env, m.as_row_name) for m in results)
        row_keys.sort(key=lambda k: (k[0], _env_key(k[1])))  # stable: statements keep order
        self.row_keys = row_keys
        self.column_keys = common.ordered_unique(m.description for m in results)
        grid = [[None] * len(self.column_keys) for _ in row_keys]
        row_at = {k: i for i, k in enumerate(row_keys)}
        column_at = {k: j for j, k in enumerate(self.column_keys)}
        for m in results:
            grid[row_at[(m.num_threads, m.env, m.as_row_name)]][column_at[m.description]] = m
        self.grid = grid

        # Thread groups: consecutive rows of one thread count.
        self.group_of: List[int] = []
        for i, (threads, _, _) in enumerate(row_keys):
            new_group = i == 0 or threads != row_keys[i - 1][0]
            self.group_of.append((self.group_of[-1] + 1 if i else 0) if new_group
                                 else self.group_of[-1])
        group_count = self.group_of[-1] + 1 if self.group_of else 0
        self.columns = []
        for j in range(len(self.column_keys)):
            groups = [tuple(grid[i][j] for i in range(len(row_keys)) if self.group_of[i] == g)
                      for g in range(group_count)]
            self.columns.append(_Column(groups, self.scale, trim, highlight_warnings))

        envs = {m.env for m in results}
        self.show_env = len(envs) > 1
        self.env_width = max(len(str(e)) for e in envs) if self.show_env else 0

    def _row_cells(self, i: int) -> List[str]:
        row = self.grid[i]
        first = next(m for m in row if m is not None)
        threads, env, _ = self.row_keys[i]
        # The env is shown where it changes within a thread group (and on a group's first
        # row, unless it is the empty string).
        same_group = i > 0 and self.group_of[i] == self.group_of[i - 1]
        previous = self.row_keys[i - 1][1] if same_group else ""
        env_text = f"({first.env})" if self.show_env and env != previous else ""
        cells = ["  " + env_text.ljust(self.env_width + 4) + first.as_row_name]
        for m, column in zip(row, self.columns):
            if m is None:
                cells.append(column.cell(None, 1, None))
            else:
                cells.append(column.cell(m.median / self.scale, m.significant_figures,
                                         m.iqr / m.median if m.has_warnings else None))
        return cells

    def _best(self, i: int) -> List[Optional[float]]:
        row = self.grid[i]
        if self.colorize == Colorize.ROWWISE:
            best = min(m.median for m in row if m is not None)
            return [best] * len(row)
        if self.colorize == Colorize.COLUMNWISE:
            best = []
            for column in self.columns:
                medians = [m.median for m in column.groups[self.group_of[i]] if m is not None]
                best.append(min(medians) if medians else None)
            return best
        return [None] * len(row)

    def render(self) -> str:
        header = [""] + ["" if k is None else k for k in self.column_keys]
        rows = [self._row_cells(i) for i in range(len(self.row_keys))]
        count = max(len(r) for r in [header] + rows)
        for r in [header] + rows:
            r.extend([""] * (count - len(r)))
        widths = [max(len(r[j]) for r in [header] + rows) for j in range(count)]

        lines = ["  |  ".join(text.center(w) for text, w in zip(header, widths))]
        full_width = len(lines[0])
        for i, cells in enumerate(rows):
            threads = self.row_keys[i][0]
            if i == 0 or self.group_of[i] != self.group_of[i - 1]:
                lines.append(f"{threads} threads: ".ljust(full_width, "-"))
            out = [cells[0].ljust(widths[0])]
            for text, width, m, best in zip(cells[1:], widths[1:], self.grid[i], self._best(i)):
                text = text.center(width)
                if self.colorize != Colorize.NONE and m is not None and best is not None:
                    text = _colored(text, m.median, best)
                out.append(text)
            lines.append("  |  ".join(out))

        title = f" {self.label or ''} ".center(full_width - 2, "-")
        text = (f"[{title}]\n" + "\n".join(lines) + "\n\n"
                f"Times are in {common.unit_to_english(self.unit)}s ({self.unit}).\n")
        if self.highlight_warnings and any(m.has_warnings for m in self.results):
            text += ("(! XX%) Measurement has high variance, where XX is the IQR / median * "
                     "100.\n")
        return text


class Compare:
    """Tables of Measurements: one per label, a row per sub_label (else statement) and
    thread count and env, a column per description; replicates (equal TaskSpecs) are pooled.

        results = [Timer(stmt, globals=g, label="add", sub_label=k, description=str(n))
                   .blocked_autorange() for ...]
        compare = Compare(results)
        compare.trim_significant_figures()
        compare.colorize()
        compare.print()
    """

    def __init__(self, results: List[common.Measurement]):
        self._results: List[common.Measurement] = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self) -> str:
        return "\n".join(self._render())

    def extend_results(self, results) -> None:
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(
                    f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Shows each column with the digits its measurements' significant figures allow."""
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        """Colors each cell by how it compares with the best of its column (within its thread
        group), or of its row with rowwise=True."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Marks cells whose measurement has a warning with "(! XX%)", XX the IQR / median."""
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

    def _render(self) -> List[str]:
        by_label: Dict[Optional[str], List[common.Measurement]] = {}
        for m in common.Measurement.merge(self._results):
            by_label.setdefault(m.label, []).append(m)
        return [_Table(group, self._colorize, self._trim_significant_figures,
                       self._highlight_warnings).render() for group in by_label.values()]
