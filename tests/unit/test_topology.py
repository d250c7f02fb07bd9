"""Validation rules of the topology document: one clear message per problem."""

from __future__ import annotations

import copy

import pytest

from app.core.topology import TopologyError, parse_topology, topology_json_schema

BASE = {
    "name": "t",
    "spouts": [{"name": "S", "rate": 1.0, "burst": 2}],
    "bolts": [
        {"name": "B1", "alpha": 1.0, "sigma": 1.0, "parallelism": 2},
        {"name": "B2", "alpha": 0.5, "sigma": 0.0, "parallelism": 1},
    ],
    "subscriptions": [{"source": "S", "target": "B1"}, {"source": "B1", "target": "B2"}],
}


def problems_of(doc: dict) -> list[str]:
    with pytest.raises(TopologyError) as info:
        parse_topology(doc)
    return [str(p) for p in info.value.problems]


def edited(**changes) -> dict:
    doc = copy.deepcopy(BASE)
    for path, value in changes.items():
        node = doc
        keys = path.split("__")
        for key in keys[:-1]:
            node = node[int(key)] if key.isdigit() else node[key]
        last = keys[-1]
        if value is KeyError:
            del node[last]
        else:
            node[last] = value
    return doc


def test_valid_document_resolves_names_to_ids() -> None:
    topo = parse_topology(copy.deepcopy(BASE))
    b1 = topo.bolt_by_name("B1")
    assert topo.subscriptions[0].target == b1.id
    assert [c.name for c in topo.sources_of(b1.id)] == ["S"]
    assert [b.name for b in topo.subscribers(b1.id)] == ["B2"]
    assert [b.name for b in topo.checked_bolts()] == ["B1", "B2"]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"subscriptions__0__target": "nowhere"}, "subscriptions[0].target: unknown component 'nowhere'"),
        ({"subscriptions__0__source": "ghost"}, "subscriptions[0].source: unknown component 'ghost'"),
        ({"bolts__1__name": "B1"}, "bolts.B1.name: duplicate name 'B1'"),
        ({"bolts__0__alpha": 0}, "bolts.B1.alpha: input should be greater than 0"),
        ({"bolts__0__alpha": -1.5}, "bolts.B1.alpha: input should be greater than 0"),
        ({"spouts__0__rate": 0}, "spouts.S.rate: input should be greater than 0"),
        ({"bolts__0__sigma": -0.5}, "bolts.B1.sigma: input should be greater than or equal to 0"),
        ({"bolts__0__parallelism": 0}, "bolts.B1.parallelism: input should be greater than or equal to 1"),
        ({"bolts__0__parallelism": 2.5}, "bolts.B1.parallelism: input should be a valid integer"),
        ({"spouts__0__burst": 0}, "spouts.S.burst: input should be greater than or equal to 1"),
        ({"settings": {"tolerance": 1.0}}, "settings.tolerance: input should be less than 1"),
        ({"settings": {"tolerance": -0.1}}, "settings.tolerance: input should be greater than or equal to 0"),
        ({"bolts__0__alpha": "fast"}, "bolts.B1.alpha: input should be a valid number"),
        ({"bolts__0__colour": "red"}, "bolts.B1.colour: unknown field"),
    ],
)
def test_each_rule_names_element_and_field(changes: dict, expected: str) -> None:
    found = problems_of(edited(**changes))
    assert any(p.startswith(expected) for p in found), found


def test_subscription_into_a_spout_is_refused() -> None:
    doc = edited()
    doc["subscriptions"].append({"source": "B1", "target": "S"})
    assert any("'S' is a spout" in p for p in problems_of(doc))


def test_duplicate_subscription_is_refused() -> None:
    doc = edited()
    doc["subscriptions"].append({"source": "S", "target": "B1"})
    assert "subscriptions.S->B1: duplicate subscription" in problems_of(doc)


def test_empty_topology_and_no_spout() -> None:
    assert problems_of({"name": "x"}) == ["topology: is empty: add at least one spout and one bolt"]
    doc = edited()
    doc["spouts"] = []
    doc["subscriptions"] = [{"source": "B1", "target": "B2"}]
    assert any(p.startswith("spouts: the topology has no spout") for p in problems_of(doc))


def test_several_problems_reported_together() -> None:
    found = problems_of(edited(bolts__0__alpha=0, bolts__1__sigma=-1))
    assert len(found) == 2


def test_cycles_are_allowed() -> None:
    doc = edited()
    doc["subscriptions"].append({"source": "B2", "target": "B1"})
    topo = parse_topology(doc)
    assert len(topo.subscriptions) == 3


def test_fields_grouping_needs_fields() -> None:
    doc = edited()
    doc["subscriptions"][1]["grouping"] = "fields"
    assert any(p.startswith("subscriptions.B1->B2.fields") for p in problems_of(doc))
    doc["subscriptions"][1]["fields"] = ["word"]
    assert parse_topology(doc).subscriptions[1].fields == ["word"]


def test_unknown_grouping_is_refused() -> None:
    doc = edited()
    doc["subscriptions"][0]["grouping"] = "random"
    assert any(p.startswith("subscriptions[0].grouping") for p in problems_of(doc))


def test_checked_bolts_must_be_bolts() -> None:
    doc = edited()
    doc["verification"] = {"checked": ["S"]}
    assert any("only bolts have queues" in p for p in problems_of(doc))
    doc["verification"] = {"checked": ["B2"]}
    assert [b.name for b in parse_topology(doc).checked_bolts()] == ["B2"]


def test_k_range_must_be_ordered() -> None:
    doc = edited()
    doc["verification"] = {"k_min": 10, "k_max": 5}
    assert any("k_min (10) is larger than k_max (5)" in p for p in problems_of(doc))


def test_not_an_object() -> None:
    assert problems_of([]) == ["document: expected a JSON object, got list"]


def test_schema_describes_the_document() -> None:
    schema = topology_json_schema()
    assert schema["title"] == "Topology"
    assert {"spouts", "bolts", "subscriptions", "settings", "verification", "layout"} <= set(schema["properties"])
