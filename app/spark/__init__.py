"""Everything that talks to Spark: session, host process and client, the run job and its task side, Connect server, frames."""
