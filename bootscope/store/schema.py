"""The database schema (SQLAlchemy Core), identical on SQLite and PostgreSQL.

``bootscope_meta`` marks a database as bootscope's and holds the schema version, so that opening
some other application's database fails with a clear message instead of writing into it.
"""

from __future__ import annotations

import sqlalchemy as sa

SCHEMA_VERSION = "5"
# Schema 2 added the owner process of an experiment (so that a SIGKILLed run does not stay "running").
# A schema 1 database is upgraded in place when opened: the new columns are nullable, old rows keep
# no owner. Each step takes the database from the version in its key to the next.
MIGRATIONS: dict[str, tuple[str, ...]] = {
    "1": (
        "ALTER TABLE experiments ADD COLUMN owner_pid INTEGER",
        "ALTER TABLE experiments ADD COLUMN owner_host VARCHAR(255)",
        "ALTER TABLE experiments ADD COLUMN owner_started VARCHAR(64)",
    ),
    # Schema 3 added where each boot was measured (host, CPU model, cores, load; the Dask worker) and
    # the fleet tables (NEW_TABLES).
    "2": ("ALTER TABLE boots ADD COLUMN placement JSON",),
    # Schema 4 added a run's labels and the watch tables; schema 5 a watched series' component: both
    # in COLUMN_ADDITIONS and NEW_TABLES.
    "3": (),
    "4": (),
}
# Columns a step adds where its table exists without them (checked, not assumed): schema 4 added a
# run's labels (``--meta revision=SHA``: what a watched series orders its points by), schema 5 a
# watched series' component (watch --by phase; a schema 3 store gets watch_series whole at that step).
COLUMN_ADDITIONS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "3": (("experiments", "meta", "JSON"),),
    "4": (("watch_series", "component", "VARCHAR(255) NOT NULL DEFAULT 'total'"),),
}
# Schema 3 added the fleet tables (``bootscope fleet import``): the step from 2 creates them (from
# the table definitions below, so SQLite and PostgreSQL each get their own column types).
NEW_TABLES: dict[str, tuple[str, ...]] = {
    "2": ("fleet_files", "fleet_boots"),
    "3": ("watch_alerts", "watch_items", "watch_events"),
    "4": ("watch_series",),
}

metadata = sa.MetaData()

meta = sa.Table(
    "bootscope_meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.String(256), nullable=False),
)

experiments = sa.Table(
    "experiments",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("created", sa.String(40), nullable=False),
    sa.Column("plan", sa.JSON, nullable=False),
    sa.Column("seed", sa.BigInteger, nullable=False),
    sa.Column("accel", sa.String(16), nullable=False),
    sa.Column("accel_reason", sa.Text, nullable=False),
    sa.Column("host", sa.JSON, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("owner_pid", sa.Integer),
    sa.Column("owner_host", sa.String(255)),
    sa.Column("owner_started", sa.String(64)),
    sa.Column("meta", sa.JSON),  # --meta KEY=VALUE labels (schema 4); None: none given
)

variants = sa.Table(
    "variants",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("experiment", sa.Integer, sa.ForeignKey("experiments.id"), nullable=False, index=True),
    sa.Column("name", sa.String(128), nullable=False),
    sa.Column("config", sa.JSON, nullable=False),
    sa.UniqueConstraint("experiment", "name"),
)

boots = sa.Table(
    "boots",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("experiment", sa.Integer, sa.ForeignKey("experiments.id"), nullable=False, index=True),
    sa.Column("variant", sa.Integer, sa.ForeignKey("variants.id"), nullable=False),
    sa.Column("index", sa.Integer, nullable=False),
    sa.Column("attempt", sa.Integer, nullable=False, default=0),
    sa.Column("warmup", sa.Boolean, nullable=False),
    sa.Column("outcome", sa.String(16), nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("accel", sa.String(16), nullable=False),
    sa.Column("qemu_command", sa.JSON, nullable=False),
    sa.Column("kernel_release", sa.String(128)),
    sa.Column("host_start_ns", sa.BigInteger),
    sa.Column("disturbed", sa.Boolean, nullable=False),
    sa.Column("superseded", sa.Boolean, nullable=False, default=False),
    sa.Column("other_cpu_s", sa.Float),
    sa.Column("steal_s", sa.Float),
    sa.Column("started_at", sa.String(40)),
    sa.Column("placement", sa.JSON),
    sa.UniqueConstraint("experiment", "index", "attempt"),
)

samples = sa.Table(
    "samples",
    metadata,
    sa.Column("boot", sa.Integer, sa.ForeignKey("boots.id"), primary_key=True),
    sa.Column("metric", sa.String(64), primary_key=True),
    sa.Column("value", sa.Float, nullable=False),
)

logs = sa.Table(
    "logs",
    metadata,
    sa.Column("boot", sa.Integer, sa.ForeignKey("boots.id"), primary_key=True),
    # zstd-compressed UTF-8 JSON of [[host_ns, text], ...]: a boot log of ~100 kB shrinks ~10x.
    sa.Column("data", sa.LargeBinary, nullable=False),
)

# ---- fleet imports (schema 3): logs of many hosts, one row per file and one per boot -------------

fleet_files = sa.Table(
    "fleet_files",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    # sha256 of the file's bytes as read: the same file imported twice is stored once.
    sa.Column("sha256", sa.String(64), nullable=False, unique=True),
    sa.Column("path", sa.Text, nullable=False),
    sa.Column("format", sa.String(32), nullable=False),
    sa.Column("imported", sa.String(40), nullable=False),
    sa.Column("meta", sa.JSON, nullable=False),
)

fleet_boots = sa.Table(
    "fleet_boots",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("file", sa.Integer, sa.ForeignKey("fleet_files.id"), nullable=False, index=True),
    sa.Column("number", sa.Integer, nullable=False),
    sa.Column("outcome", sa.String(16), nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("kernel_release", sa.String(128)),
    # the file's metadata (the --meta CSV row) merged with what the boot itself says (a KCIDB platform)
    sa.Column("meta", sa.JSON, nullable=False),
    # metric name -> value in the metric's unit (seconds for every boot metric); absent: not reached
    sa.Column("metrics", sa.JSON, nullable=False),
    sa.UniqueConstraint("file", "number"),
)

# ---- watched series (schema 4): alerts, the series steps each groups, and their triage ----------

# One row per watched series: its points packed (``store/watch_series.py``), rewritten by a full
# ``bootscope watch`` and merged into by one run's (``watch --run``): a series is judged without
# reading its boots again.
watch_series = sa.Table(
    "watch_series",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("metric", sa.String(64), nullable=False),
    # "total": the metric itself; "phase initcalls" and kin: one component of it (watch --by phase)
    sa.Column("component", sa.String(255), nullable=False),
    sa.Column("fingerprint", sa.JSON, nullable=False),
    sa.Column("revisions", sa.JSON, nullable=False),
    sa.Column("points", sa.LargeBinary, nullable=False),
    # the stored runs whose boots are in it (a run merged twice would count its boots twice)
    sa.Column("runs", sa.JSON, nullable=False),
    sa.Column("updated", sa.String(40), nullable=False),
)

watch_alerts = sa.Table(
    "watch_alerts",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("created", sa.String(40), nullable=False),
    sa.Column("updated", sa.String(40), nullable=False),
    # regression | improvement | missing
    sa.Column("kind", sa.String(16), nullable=False),
    # untriaged | acknowledged | invalid | confirmed | fixed | wontfix
    sa.Column("state", sa.String(16), nullable=False),
    # the revisions that may hold the change (first..last) and the last one before it (a bisect's good)
    sa.Column("first_revision", sa.String(255), nullable=False),
    sa.Column("last_revision", sa.String(255), nullable=False),
    sa.Column("good_revision", sa.String(255)),
    sa.Column("rule", sa.JSON, nullable=False),
)

watch_items = sa.Table(
    "watch_items",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("alert", sa.Integer, sa.ForeignKey("watch_alerts.id"), nullable=False, index=True),
    # the series: a hash of its fingerprint and metric, the fingerprint's fields, the metric, component
    sa.Column("series", sa.String(64), nullable=False, index=True),
    sa.Column("fingerprint", sa.JSON, nullable=False),
    sa.Column("metric", sa.String(64), nullable=False),
    sa.Column("component", sa.String(255), nullable=False),
    # the first point after the step, the plausible range, the last point before it
    sa.Column("revision", sa.String(255), nullable=False),
    sa.Column("first_revision", sa.String(255), nullable=False),
    sa.Column("last_revision", sa.String(255), nullable=False),
    sa.Column("good_revision", sa.String(255)),
    # metric's unit; NULL where not computed (a missing-data item)
    sa.Column("shift", sa.Float),
    sa.Column("ci_low", sa.Float),
    sa.Column("ci_high", sa.Float),
    sa.Column("p", sa.Float),
    sa.Column("jitter", sa.Float),
    sa.Column("jitter_ratio", sa.Float),
    sa.Column("before", sa.Float),
    sa.Column("detail", sa.JSON, nullable=False),
)

watch_events = sa.Table(
    "watch_events",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("alert", sa.Integer, sa.ForeignKey("watch_alerts.id"), nullable=False, index=True),
    sa.Column("at", sa.String(40), nullable=False),
    sa.Column("by", sa.String(128), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("note", sa.Text, nullable=False),
)
