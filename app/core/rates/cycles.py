"""One strongly connected component of the rate check, solved exactly (docs/boundedness.md, "Cycles").

A cycle's flows are the fixpoint of y_m = min(e_m + Σ_u W_mu · y_u, c_m): a float iteration
guesses which members are capped, an exact sparse elimination solves the rest, and the
elimination's positive pivots certify that the solution is the limit of the iteration (and,
for the every-run bounds, that the bursts around the cycle settle too).
"""

from __future__ import annotations

from fractions import Fraction

import networkx as nx

GUESS_SWEEPS = 400  # float sweeps that guess which bolts of a cycle are capped (checked exactly after)
FILL_PER_MEMBER = 64  # elimination entries per cycle member before the exact solve gives up (dense cycles)

Weights = dict[str, dict[str, Fraction]]  # member -> sender in the component -> Σ of the ratios it receives


def cycle_fixpoint(graph: nx.DiGraph, members: list[str], weights: Weights, ext: dict[str, Fraction],
                   cap: dict[str, Fraction], from_above: bool, pinned: frozenset[str] = frozenset()
                   ) -> dict[str, Fraction] | None:
    """The exact limit of the iteration of one strongly connected component, or None: per member, the
    tuples it processes per second.

    They are the fixpoint of y_m = min(e_m + Σ_u W_mu · y_u, c_m) (`RateFigures._cycle_system`). A float
    iteration guesses which members are capped; the uncapped ones then solve a linear system exactly
    by elimination. The result is used only when it is a fixpoint (checked exactly) and the
    elimination's pivots are all positive, which proves that the fixpoint is the limit the iteration
    from above (`from_above`) or from zero would reach (docs/boundedness.md, "Cycles"). None: the
    caller iterates instead. `pinned` members process their capacity whatever they receive (the
    every-run bounds: a member not proven bounded may drain a backlog at full speed).
    """
    order = _sweep_order(graph, members, set(members))
    if not from_above and solve_linear(order, weights, {m: Fraction(0) for m in order}, set(), cap) is None:
        return None  # the fixpoint may not be unique: only the iteration from zero is known to be sound
    capped = _guess_capped(order, weights, ext, cap, from_above, pinned)
    if capped is None:
        return None
    for _ in range(4):  # a wrong guess (a float tie) is corrected from the exact solution
        y = solve_linear(order, weights, ext, capped, cap)
        if y is None:
            return None
        lin = {m: ext[m] + sum((w * y[u] for u, w in weights[m].items()), Fraction(0)) for m in order}
        over = {m for m in order if lin[m] > cap[m]}
        under = {m for m in capped - pinned if lin[m] < cap[m]}
        if not over - capped and not under:
            return y
        capped = (capped | over) - under
    return None


def _sweep_order(graph: nx.DiGraph, members: list[str], inside: set[str]) -> list[str]:
    """The members in depth-first order from one fed from outside, so one sweep follows the edges."""
    entry = next((m for m in members if any(p not in inside for p in graph.predecessors(m))), members[0])
    # depth-first preorder inside the component, successors in the graph's order (nx.dfs_preorder_nodes on the
    # subgraph gives the same order, through a slower filtered view)
    order, seen = [entry], {entry}
    stack = [iter(graph.successors(entry))]
    while stack:
        for child in stack[-1]:
            if child in inside and child not in seen:
                seen.add(child)
                order.append(child)
                stack.append(iter(graph.successors(child)))
                break
        else:
            stack.pop()
    return order + [m for m in members if m not in seen]


def _guess_capped(order: list[str], weights: Weights, ext: dict[str, Fraction], cap: dict[str, Fraction],
                  from_above: bool, pinned: frozenset[str]) -> set[str] | None:
    """The members whose inflow reaches their capacity at the limit, guessed with float sweeps (None: no guess);
    the pinned ones always."""
    index = {m: i for i, m in enumerate(order)}
    try:
        rows = [([(index[u], float(w)) for u, w in weights[m].items()], float(ext[m]), float(cap[m])) for m in order]
    except OverflowError:
        return None
    fixed = {index[m] for m in pinned}
    y = [row[2] if from_above or i in fixed else 0.0 for i, row in enumerate(rows)]
    scale = max([*y, *(row[1] for row in rows), 1e-300])
    for _ in range(GUESS_SWEEPS):
        delta = 0.0
        for i, (into, ei, ci) in enumerate(rows):
            if i in fixed:
                continue
            total = ei
            for j, w in into:
                total += w * y[j]
            new = total if total < ci else ci
            if abs(new - y[i]) > delta:
                delta = abs(new - y[i])
            y[i] = new
        if delta <= 1e-13 * scale:
            break
    return set(pinned) | {m for m, (into, ei, ci) in zip(order, rows, strict=True)
                          if ei + sum(w * y[j] for j, w in into) >= ci * (1 - 1e-12)}


def amplifies(order: list[str], weights: Weights) -> bool | None:
    """Whether the component's gain is 1 or more: the spectral radius of W (irreducible, nonnegative) is at
    least 1, exactly when the elimination of I − W meets a pivot that is not positive (None: the elimination
    would fill in too much to tell). Fed from outside, such a component has a member whose inflow reaches
    its capacity at every fixpoint, whatever the capacities and the rate fed (docs/boundedness.md, "Cycles
    that amplify"): no iteration is needed to know it."""
    zero = {m: Fraction(0) for m in order}
    failed: list[str] = []
    solved = solve_linear(order, weights, zero, set(), zero, failed)
    return None if solved is None and failed == ["fill"] else solved is None


def solve_linear(order: list[str], weights: Weights, const: dict[str, Fraction], capped: set[str],
                 cap: dict[str, Fraction], why: list[str] | None = None) -> dict[str, Fraction] | None:
    """y_m = c_m for capped m, y_m = const_m + Σ_u W_mu · y_u for the others, exactly.

    Gaussian elimination in `order` on the sparse system; None when a pivot 1 − (self weight) is
    not positive (then I − W is not a nonsingular M-matrix: the uncapped part does not shrink
    around its cycles) or the elimination would fill in too much (then "fill" is appended to `why`)."""
    fixed = {m: cap[m] for m in capped}
    rows: dict[str, dict[str, Fraction]] = {}
    rhs: dict[str, Fraction] = {}
    users: dict[str, set[str]] = {m: set() for m in order}
    for m in order:
        if m in fixed:
            continue
        row: dict[str, Fraction] = {}
        rhs[m] = const[m]
        for u, w in weights[m].items():
            if u in fixed:
                rhs[m] += w * fixed[u]
            elif w:
                row[u] = row.get(u, Fraction(0)) + w
                users[u].add(m)
        rows[m] = row
    budget = FILL_PER_MEMBER * len(order) + 1000
    done: set[str] = set()
    eliminated: list[str] = []
    for v in order:
        if v in fixed:
            continue
        row = rows[v]
        pivot = 1 - row.pop(v, Fraction(0))
        if pivot <= 0:
            return None
        if pivot != 1:
            row = rows[v] = {p: w / pivot for p, w in row.items()}
            rhs[v] /= pivot
        done.add(v)
        eliminated.append(v)
        for u in users[v] - done:
            urow = rows[u]
            w = urow.pop(v)
            for p, wp in row.items():
                urow[p] = urow.get(p, Fraction(0)) + w * wp
                users[p].add(u)
                budget -= 1
            rhs[u] += w * rhs[v]
        if budget < 0:
            if why is not None:
                why.append("fill")
            return None
    y = dict(fixed)
    for v in reversed(eliminated):
        y[v] = rhs[v] + sum((w * y[p] for p, w in rows[v].items()), Fraction(0))
    return y
