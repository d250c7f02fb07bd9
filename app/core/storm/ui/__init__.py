"""A running topology read from the Storm UI's REST API.

- client.py: the HTTP client (StormUIClient: credentials, TLS, same-origin redirects, one deadline per request;
  every failure a StormUIError line);
- fetch.py: `fetch_storm_ui`, the replies one import reads, for the topology with an id or name;
- replies.py: those replies (StormUISnapshot) and the figures read from them, checked (`check_figures`);
- reader.py: `from_storm_ui`, the replies mapped onto a Topology with each derived value's source, `read_storm_ui`
  (fetch and map in one call), and `annotate`, a document with the cluster's measured values.
"""
