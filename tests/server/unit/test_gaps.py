"""Gaps: the first None of a per-line list, known without searching it, through edits."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from glassllm_server.gaps import KNOWN_LIMIT, Gaps

# One step on a per-line list: fill a line, empty one, or replace a run of lines by new
# ones without values (an edit). Positions are fractions of the list's length.
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("fill"), st.floats(0, 1)),
        st.tuples(st.just("empty"), st.floats(0, 1)),
        st.tuples(st.just("edit"), st.floats(0, 1), st.integers(1, 4), st.integers(0, 6)),
        st.tuples(st.just("first")),
    ),
    max_size=60,
)


def at(fraction: float, length: int) -> int:
    return min(int(fraction * length), length - 1)


def check(values: list[int | None], gaps: Gaps) -> None:
    expected = values.index(None) if None in values else len(values)
    assert gaps.first(values) == expected
    assert gaps.count == values.count(None)
    assert gaps.last(values) == max((line for line, value in enumerate(values) if value is None), default=-1)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 40), st.integers(0, 40), STEPS)
def test_the_first_gap_is_the_lists_first_none_through_any_edits(length, filled, steps):
    values: list[int | None] = [None] * length
    gaps = Gaps.everywhere(length)
    for line in range(min(filled, length)):
        values[line] = line
        gaps.filled()
    check(values, gaps)
    for step in steps:
        if step[0] == "first":
            check(values, gaps)
        elif step[0] == "fill":
            line = at(step[1], len(values))
            if values[line] is None:
                values[line] = 1
                gaps.filled()
        elif step[0] == "empty":
            line = at(step[1], len(values))
            if values[line] is not None:
                values[line] = None
                gaps.emptied(line)
        else:
            _, where, replaced, new_count = step
            first = at(where, len(values))
            stop = min(first + replaced, len(values))
            gaps = gaps.replaced(values[first:stop].count(None), first, stop, new_count)
            values[first:stop] = [None] * new_count
            if not values:
                values.append(None)
                gaps = gaps.replaced(0, 0, 0, 1)
    check(values, gaps)


def test_gaps_after_an_edit_are_known_and_found_without_searching_the_list():
    values: list[int | None] = list(range(10_000))
    gaps = Gaps(0, [])
    gaps = gaps.replaced(0, 7_000, 7_001, 2)
    values[7_000:7_001] = [None, None]
    assert gaps.known == [7_000, 7_001]
    assert gaps.first(values) == 7_000
    values[7_000] = 0
    gaps.filled()
    assert gaps.first(values) == 7_001


def test_too_many_gaps_to_keep_are_searched_for():
    values: list[int | None] = [None] * (KNOWN_LIMIT + 10)
    gaps = Gaps.everywhere(len(values))
    assert gaps.known is None
    for line in range(5):
        values[line] = line
        gaps.filled()
    assert gaps.first(values) == 5
    values = list(range(KNOWN_LIMIT + 10))
    gaps = Gaps(0, [])
    for line in range(KNOWN_LIMIT + 1):
        values[line] = None
        gaps.emptied(line)
    assert gaps.known is None
    assert gaps.first(values) == 0
