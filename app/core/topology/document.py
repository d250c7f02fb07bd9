"""The whole Storm topology document, :class:`Topology`: its parts (app/core/topology/components.py,
settings.py), the name resolution of hand-written files, the cross-element rules (checks.py) run on
validation, and the queries the rate check, the verifier and the GUI make."""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import Field, PrivateAttr, model_serializer, model_validator

from app.core.topology.checks import graph_problems
from app.core.topology.components import DEFAULT_STREAM, Bolt, Component, Position, Spout, Subscription
from app.core.topology.fields import StrictModel, new_id
from app.core.topology.problems import one_line
from app.core.topology.settings import StormSettings, TopologySettings, VerificationSettings, new_settings

SCHEMA_VERSION: Final = 6  # 2: declared streams, 3: asynchronous bolts, 4: windowed bolts, 5: joins, 6: mixed windows
#                             (earlier versions: app/core/topology/migrate.py)


class Topology(StrictModel):
    """The whole document. `layout` maps component ids to canvas positions and has no semantics."""

    schema_version: Literal[1, 2, 3, 4, 5, 6] = SCHEMA_VERSION  # 1 to 5 are read (and upgraded) by parse_topology
    name: str = "untitled"
    description: str = ""
    spouts: list[Spout] = Field(default_factory=list)
    bolts: list[Bolt] = Field(default_factory=list)
    subscriptions: list[Subscription] = Field(default_factory=list)
    settings: TopologySettings = Field(default_factory=TopologySettings)
    verification: VerificationSettings = Field(default_factory=VerificationSettings)
    layout: dict[str, Position] = Field(default_factory=dict)
    storm: StormSettings = Field(default_factory=StormSettings)
    _read_notes: list[str] = PrivateAttr(default_factory=list)

    @property
    def read_notes(self) -> list[str]:
        """What reading assumed of a document an earlier version wrote (one line each; none for a current one)."""
        return list(self._read_notes)

    def with_read_notes(self, notes: list[str]) -> Topology:
        """This topology carrying `notes` as its `read_notes` (set by the reader, app/core/topology/parse.py)."""
        self._read_notes = list(notes)
        return self

    @model_serializer(mode="wrap")
    def _drop_empty_storm(self, handler: Any) -> Any:
        data = handler(self)
        if isinstance(data, dict) and self.storm == StormSettings():
            data.pop("storm", None)
        return data

    @model_validator(mode="before")
    @classmethod
    def _resolve_names(cls, data: Any) -> Any:
        """Let hand-written files name components where ids are expected."""
        if not isinstance(data, dict):
            return data
        def items(key: str) -> list[Any]:
            value = data.get(key)
            return value if isinstance(value, list) else []

        comps = [c for key in ("spouts", "bolts") for c in items(key) if isinstance(c, dict)]
        ids = {c["id"] for c in comps if isinstance(c.get("id"), str) and c["id"]}  # a wrong type: pydantic names it
        by_name: dict[str, str] = {}
        for c in comps:
            if "id" not in c or not c["id"]:
                c["id"] = new_id()
                ids.add(c["id"])
            if isinstance(c.get("name"), str):
                by_name.setdefault(c["name"], c["id"])

        def resolve(ref: Any) -> Any:
            if isinstance(ref, str) and ref not in ids and ref in by_name:
                return by_name[ref]
            return ref

        for sub in items("subscriptions"):
            if isinstance(sub, dict):
                for key in ("source", "target"):
                    sub[key] = resolve(sub.get(key))
        ver = data.get("verification")
        if isinstance(ver, dict) and isinstance(ver.get("checked"), list):
            ver["checked"] = [resolve(r) for r in ver["checked"]]
        layout = data.get("layout")
        if isinstance(layout, dict):
            data["layout"] = {resolve(k): v for k, v in layout.items()}
        return data

    @model_validator(mode="after")
    def _graph_rules(self) -> Topology:
        problems = graph_problems(self)
        if problems:
            # one problem a line (parse_topology splits them again): newlines inside names are escaped
            raise ValueError("\n".join(one_line(f"{p.path}: {p.message}") for p in problems))
        return self

    # ---- queries -------------------------------------------------------
    @property
    def components(self) -> list[Component]:
        return [*self.spouts, *self.bolts]

    def component(self, ident: str) -> Component:
        """The spout or bolt with this id (or, failing that, this name)."""
        for c in self.components:
            if c.id == ident:
                return c
        for c in self.components:
            if c.name == ident:
                return c
        raise KeyError(ident)

    def name_of(self, ident: str) -> str:
        return self.component(ident).name

    def bolt_by_name(self, name: str) -> Bolt:
        for b in self.bolts:
            if b.name == name:
                return b
        raise KeyError(name)

    def subscribers(self, ident: str) -> list[Bolt]:
        """Bolts that subscribe to the component `ident`."""
        targets = [s.target for s in self.subscriptions if s.source == ident]
        return [b for b in self.bolts if b.id in targets]

    def inputs(self) -> dict[str, list[tuple[str, str]]]:
        """What each bolt receives: per bolt id, its input streams (source id, stream name), each once.

        The one definition the rate check and the network both use (section 1 of docs/model.md):
        a repeated subscription to one stream of one component counts once (Storm keeps one
        grouping per input stream); two streams of one component are two inputs. One pass over
        the subscriptions, for every bolt at once."""
        seen: dict[str, dict[tuple[str, str], None]] = {b.id: {} for b in self.bolts}
        for s in self.subscriptions:
            seen.setdefault(s.target, {}).setdefault((s.source, s.stream or DEFAULT_STREAM), None)
        return {target: list(streams) for target, streams in seen.items()}

    def senders(self) -> dict[str, set[str]]:
        """Per bolt name, the names of the components it receives from (:meth:`inputs`, by name)."""
        name_of = {c.id: c.name for c in self.components}
        return {name_of[b]: {name_of[u] for u, _ in pairs} for b, pairs in self.inputs().items()}

    def inputs_of(self, ident: str) -> list[tuple[str, str]]:
        """What bolt `ident` receives (:meth:`inputs` for one bolt)."""
        return self.inputs().get(ident, [])

    def sources_of(self, ident: str) -> list[Component]:
        """Components bolt `ident` subscribes to (subs(j))."""
        sources = [s.source for s in self.subscriptions if s.target == ident]
        return [c for c in self.components if c.id in sources]

    def windowed_bolts(self) -> list[Bolt]:
        """The bolts with a window (docs/model.md section 10). The rate check, the simulation, the solver, the
        linear program, growth by rates, the flood proofs and the certifier have a count window's rule; a duration
        window's (a timer) and a mixed window's (by its trigger), all of these and the latency bounds. The timeout
        witnesses count no wait in a windowed bolt (a bolt below one gets them)."""
        return [b for b in self.bolts if b.window is not None]

    def waiting_joins(self) -> list[Bolt]:
        """The joins that wait for a part from every branch (docs/model.md section 11). The rate check, the
        simulation, the solver, the certifier, the linear program (a join as its target too), the proofs of growth by
        rates (without a cycle), the flood proofs (never from a join) and the timeout witnesses (a part waiting in
        the cache too) have their rule."""
        return [b for b in self.bolts if b.waits_for_all]

    def checked_bolts(self) -> list[Bolt]:
        """The bolts whose queues the growth property is about (all when none chosen)."""
        if not self.verification.checked:
            return list(self.bolts)
        return [b for b in self.bolts if b.id in self.verification.checked]

    def semantics(self) -> dict[str, Any]:
        """Everything the verifier reads, keyed by names: no ids, no layout, no description.

        Two documents with equal semantics have the same verdicts; this is what round
        trips preserve and what the content hash of an exported configuration covers.
        """
        names = {c.id: c.name for c in self.components}
        # the failure fields only count when some bolt can fail (docs/model.md section 7)
        fails = self.settings.failures and any(b.min_ttf is not None for b in self.bolts)
        return {
            "spouts": sorted((s.name, s.rate, s.burst) + _stream_semantics(s) for s in self.spouts),
            "bolts": sorted((b.name, b.alpha, b.sigma, b.parallelism) + _stream_semantics(b)
                            + ((("min_ttf", b.min_ttf),) if fails and b.min_ttf is not None else ())
                            + ((("threads", b.threads),) if b.threads is not None else ())
                            + ((("window", b.window.kind, b.window.length, b.window.interval)
                                + ((b.window.trigger,) if b.window.mixed else ()),)
                               if b.window is not None else ())
                            + ((("join", b.join.kind),) if b.join is not None else ())
                            for b in self.bolts),
            "subscriptions": sorted(
                (names[s.source], names[s.target], s.grouping, tuple(s.fields))
                + ((s.stream,) if (s.stream or DEFAULT_STREAM) != DEFAULT_STREAM else ())
                for s in self.subscriptions
            ),
            "settings": self.settings.semantics(fails),
            "checked": sorted(names[r] for r in self.verification.checked),
        }

    def to_json_bytes(self) -> bytes:
        return (self.model_dump_json(indent=2) + "\n").encode("utf-8")


def _stream_semantics(c: Component) -> tuple[Any, ...]:
    """A component's declared streams and their σ / ratio, for `semantics()` (empty without streams,
    so documents without streams keep the semantics they had)."""
    streams = c.output_streams()
    del streams[DEFAULT_STREAM]
    return (tuple(sorted(streams.items(), key=lambda kv: kv[0])),) if streams else ()


def new_topology(name: str = "untitled") -> Topology:
    """An empty new document (not validated: it has no component yet)."""
    return Topology.model_construct(name=name, settings=new_settings())
