"""The results store's tables as SQLAlchemy Core: the schema every reader relies on (the
report, Grafana's SQL, exports). It is a public, versioned interface: its history is the
Alembic revisions in `migrations/`, and these tables mirror the newest one (a test keeps
them equal). Times are float epoch seconds (UTC).
"""

from __future__ import annotations

import sqlalchemy as sa

from pagebench.core import encodings
from pagebench.core.devices import DEFAULT_DEVICE
from pagebench.core.records import VISUAL_METRICS

#: A run is running, or ended complete, interrupted (a signal) or failed (an error); the
#: last two carry the reason and resume.
STATUSES = ("running", "complete", "interrupted", "failed")
#: `meta` keys that also get a column of their own (all of `meta` is kept as JSON).
META_COLUMNS = ("seed", "backend", "git_commit", "host", "kernel", "chromium_version",
                "nginx_version", "pagebench_version")

metadata = sa.MetaData()


def _experiment_fk(table: str) -> sa.ForeignKey:
    """A row's run: deleting the experiment deletes its rows."""
    return sa.ForeignKey("experiments.id", name=f"fk_{table}_experiment", ondelete="CASCADE")


experiments = sa.Table(
    "experiments", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("run_id", sa.Text, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("planned", sa.Integer, nullable=False),
    sa.Column("seed", sa.BigInteger),
    sa.Column("backend", sa.Text),
    sa.Column("git_commit", sa.Text),
    sa.Column("host", sa.Text),
    sa.Column("kernel", sa.Text),
    sa.Column("chromium_version", sa.Text),
    sa.Column("nginx_version", sa.Text),
    sa.Column("pagebench_version", sa.Text),
    sa.Column("spec", sa.JSON, nullable=False),
    sa.Column("meta", sa.JSON, nullable=False),
    sa.UniqueConstraint("run_id", name="uq_experiments_run_id"),
)

run_status = sa.Table(
    "run_status", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("experiment_id", sa.Integer, _experiment_fk("run_status"), nullable=False),
    sa.Column("at", sa.Float, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("reason", sa.Text),  # interrupted: the signal; failed: the one-line error
    sa.Column("host", sa.Text),  # running: the process running it (host, pid, its kernel start time)
    sa.Column("pid", sa.Integer),
    sa.Column("pid_start", sa.Text),
    sa.CheckConstraint("status IN ('running', 'complete', 'interrupted', 'failed')", name="ck_run_status_status"),
    sa.Index("ix_run_status_experiment_id", "experiment_id"),
)

conditions = sa.Table(
    "conditions", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("experiment_id", sa.Integer, _experiment_fk("conditions"), nullable=False),
    sa.Column("key", sa.Text, nullable=False),
    sa.Column("site", sa.Text, nullable=False),
    sa.Column("mode", sa.Text, nullable=False),
    sa.Column("topology", sa.Text, nullable=False),
    sa.Column("profile", sa.Text, nullable=False),
    sa.Column("profile_fields", sa.JSON, nullable=False),
    sa.Column("cache", sa.Text, nullable=False),
    sa.Column("tls", sa.Text, nullable=False),
    sa.Column("encoding", sa.Text, nullable=False, server_default=encodings.IDENTITY.name),
    sa.Column("version", sa.Integer, nullable=False, server_default="1"),  # the site's version loaded
    sa.Column("device", sa.Text, nullable=False, server_default=DEFAULT_DEVICE),  # what the browser emulated
    sa.UniqueConstraint("experiment_id", "key", name="uq_conditions_experiment_key"),
)

planned_loads = sa.Table(
    "planned_loads", metadata,
    sa.Column("experiment_id", sa.Integer, _experiment_fk("planned_loads"), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("condition_id", sa.Integer,
              sa.ForeignKey("conditions.id", name="fk_planned_loads_condition", ondelete="CASCADE"),
              nullable=False),
    sa.Column("repetition", sa.Integer, nullable=False),
    sa.Column("warmup", sa.Boolean, nullable=False),
    # not needed: a sequential stopping rule (`repetitions: auto`) was decisive before it
    sa.Column("stopped", sa.Boolean, nullable=False, server_default=sa.false()),
)

loads = sa.Table(
    "loads", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("experiment_id", sa.Integer, _experiment_fk("loads"), nullable=False),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("condition_id", sa.Integer,
              sa.ForeignKey("conditions.id", name="fk_loads_condition", ondelete="CASCADE"),
              nullable=False),
    sa.Column("repetition", sa.Integer, nullable=False),
    sa.Column("warmup", sa.Boolean, nullable=False),
    sa.Column("started_at", sa.Float, nullable=False),
    sa.Column("recorded_at", sa.Float, nullable=False),
    sa.Column("ok", sa.Boolean, nullable=False),
    sa.Column("flagged", sa.Boolean, nullable=False),
    sa.Column("url", sa.Text, nullable=False),
    sa.Column("ttfb_ms", sa.Float),
    sa.Column("dcl_ms", sa.Float),
    sa.Column("load_ms", sa.Float),
    sa.Column("fcp_ms", sa.Float),
    sa.Column("lcp_ms", sa.Float),
    sa.Column("requests", sa.Integer, nullable=False),
    sa.Column("bytes", sa.BigInteger, nullable=False),
    sa.Column("cache_hits", sa.Integer, nullable=False),
    sa.Column("connections_browser", sa.Integer, nullable=False),
    sa.Column("connections_link", sa.Integer, nullable=False),
    sa.Column("connections_server", sa.Integer, nullable=False),
    sa.Column("flags", sa.JSON, nullable=False),
    sa.Column("errors", sa.JSON, nullable=False),
    sa.Column("notes", sa.JSON, nullable=False),
    sa.Column("link", sa.JSON, nullable=False),
    sa.Column("bound_ms", sa.Float),
    sa.Column("client", sa.Integer, nullable=False, server_default="0"),
    sa.Column("connections_proxy", sa.Integer),
    sa.Column("connections_proxy_reused", sa.Integer),  # a warm pool's, opened by an earlier load
    sa.Column("unrecorded", sa.Integer),  # requests a replayed site's recording lacked; null: not replayed
    # The load's evidence, relative to the store's artifact directory (results.artifacts); null: none kept
    sa.Column("har", sa.Text),
    sa.Column("trace", sa.Text),
    # What a person sees (core.measure.visual); null: no frames (failed, or stored before them)
    *[sa.Column(name, sa.Integer if name == "long_tasks" else sa.Float) for name in VISUAL_METRICS],
    sa.Column("frames", sa.Text),  # the load's frames, like har and trace
    sa.Column("machine", sa.Text),  # the lab machine that measured it (a shard's); null: the run's host
    sa.UniqueConstraint("experiment_id", "seq", "client", name="uq_loads_experiment_seq_client"),
    sa.ForeignKeyConstraint(["experiment_id", "seq"], ["planned_loads.experiment_id", "planned_loads.seq"],
                            name="fk_loads_planned", ondelete="CASCADE"),
    sa.Index("ix_loads_condition_id", "condition_id"),
)

resources = sa.Table(
    "resources", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("load_id", sa.Integer,
              sa.ForeignKey("loads.id", name="fk_resources_load", ondelete="CASCADE"), nullable=False),
    sa.Column("position", sa.Integer, nullable=False),  # index within the load, 0-based
    sa.Column("url", sa.Text, nullable=False),
    sa.Column("origin", sa.Text, nullable=False),
    sa.Column("protocol", sa.Text, nullable=False),
    sa.Column("connection_id", sa.BigInteger),
    sa.Column("from_cache", sa.Boolean, nullable=False),
    sa.Column("revalidated", sa.Boolean, nullable=False),
    sa.Column("status", sa.Integer, nullable=False),
    sa.Column("resource_type", sa.Text, nullable=False),
    sa.Column("start_ms", sa.Float, nullable=False),
    sa.Column("response_start_ms", sa.Float),
    sa.Column("end_ms", sa.Float),
    sa.Column("transfer_bytes", sa.BigInteger, nullable=False),
    sa.Column("body_bytes", sa.BigInteger, nullable=False),
    sa.Column("timing", sa.JSON, nullable=False),
    sa.Column("encoded_bytes", sa.BigInteger),  # body as sent (encodedBodySize); null: not said
    sa.Column("content_encoding", sa.Text, nullable=False, server_default=""),
    sa.Column("dictionary_offered", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("dictionary_used", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.UniqueConstraint("load_id", "position", name="uq_resources_load_position"),
)

visual_progress = sa.Table(
    "visual_progress", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("load_id", sa.Integer,
              sa.ForeignKey("loads.id", name="fk_visual_progress_load", ondelete="CASCADE"), nullable=False),
    sa.Column("position", sa.Integer, nullable=False),  # the frame's index within the load, 0-based
    sa.Column("ms", sa.Float, nullable=False),  # since navigation start
    sa.Column("progress", sa.Float, nullable=False),  # visual completeness, 0..1 (core.measure.visual)
    sa.UniqueConstraint("load_id", "position", name="uq_visual_progress_load_position"),
)

proxy_overheads = sa.Table(
    "proxy_overheads", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("experiment_id", sa.Integer, _experiment_fk("proxy_overheads"), nullable=False),
    sa.Column("measured_at", sa.Float, nullable=False),
    sa.Column("site", sa.Text, nullable=False),
    sa.Column("mode", sa.Text, nullable=False),
    sa.Column("tls", sa.Text, nullable=False),
    sa.Column("requests", sa.Integer, nullable=False),
    sa.Column("per_request_ms", sa.Float),  # (median proxied - median direct load) / requests
    sa.Column("direct_ms", sa.JSON, nullable=False),  # load times, direct
    sa.Column("proxy_ms", sa.JSON, nullable=False),  # load times, through the edge proxy
    sa.Column("scheduling", sa.Text),  # the proxy's: "SCHED_FIFO 20" or "normal (...)"
)

link_checks = sa.Table(
    "link_checks", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("experiment_id", sa.Integer, _experiment_fk("link_checks"), nullable=False),
    sa.Column("profile", sa.Text, nullable=False),
    sa.Column("checked_at", sa.Float, nullable=False),
    sa.Column("backend", sa.Text),
    sa.Column("valid", sa.Boolean, nullable=False),
    sa.Column("rtt_median_ms", sa.Float),
    sa.Column("down_mbit", sa.Float),
    sa.Column("up_mbit", sa.Float),
    sa.Column("loss_pct", sa.Float),
    sa.Column("lateness_p99_us", sa.Float),
    sa.Column("result", sa.JSON, nullable=False),
    sa.Index("ix_link_checks_experiment_id", "experiment_id"),
)
