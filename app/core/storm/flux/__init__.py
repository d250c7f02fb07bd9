"""Flux YAML, Apache Storm's topology files: read as Flux reads them and mapped to a Topology, in the shape of
Storm Flux's own parser -> model -> builder.

- yaml_text.py: the file as text: properties (`--filter`), `${...}` substitution, the safe YAML and the checks of a
  parsed tree; FluxError (one line `FILE: line N: field: problem`) and FluxOptions (how to read a file);
- parser.py: `read_flux`, the file and its includes merged with Flux's rules (Flux's FluxParser);
- model.py: the definition it reads, FluxDocument with its Vertex and Stream entries (Flux's TopologyDef);
- builder.py: `import_flux` / `to_topology`, the definition as our Topology (Flux's FluxBuilder);
- ticks.py: tick tuples (a stream from `__system` on `__tick`) as a timer source of the bolt;
- origin.py: the Flux file a document was imported from (its paths, the options to read it again, the
  `stormbound import flux` command a file needs);
- export.py: the skeleton export of a document without a Flux file of its own;
- repair.py: the export that rewrites the document's own Flux file, changing only parallelism.

What is read (docs/storm.md has the whole mapping): `name`, `config` (the four Storm settings Stormbound uses are
taken out, the rest is kept), `spouts` and `bolts` (`id`, `className`, `parallelism`, `numTasks`), `streams`
(`from`, `to`, `grouping` with `type`, `args`, `streamId`, `customClass`; every `streamId` becomes a declared stream
of its source, tick tuples from `__system` a timer source); `includes`, merged with Flux's rules. An unresolved
`${...}` is left as it is and noted, as Flux does.

Flux has no timing: rates, bursts, α and each stream's σ are placeholders listed as not annotated (a bolt nobody
subscribes to gets σ = 0). A problem is one FluxError line.
"""
