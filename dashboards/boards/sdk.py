"""What grafana-foundation-sdk (10.1) has no type for, written against its protocols: the
PostgreSQL datasource's query (a `Dataquery` with its builder, as the SDK's own datasource
packages write theirs), the same query as an annotation's target, and a field's data link.
Each serializes through `to_json`, as every SDK object does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Self

from grafana_foundation_sdk.cog import builder as cogbuilder
from grafana_foundation_sdk.cog import variants as cogvariants
from grafana_foundation_sdk.models import dashboard

#: The one datasource: the results store (provisioning/datasources/pagebench.yaml).
PAGEBENCH = dashboard.DataSourceRef(type_val="grafana-postgresql-datasource", uid="pagebench")

Format = Literal["table", "time_series"]


@dataclass
class SqlQuery(cogvariants.Dataquery):
    """A query of Grafana's PostgreSQL datasource in code mode (the SDK has builders for
    other datasources' queries, not this one): raw SQL, run as written after Grafana
    expands its variables and macros."""

    raw_sql: str
    format: Format = "table"
    ref_id: str = "A"

    def to_json(self) -> dict[str, object]:
        return {"datasource": PAGEBENCH, "editorMode": "code", "format": self.format, "rawQuery": True,
                "rawSql": self.raw_sql, "refId": self.ref_id}


class Sql(cogbuilder.Builder[cogvariants.Dataquery]):
    """Builds a `SqlQuery` for a panel's `with_target`."""

    def __init__(self, raw_sql: str) -> None:
        self._query = SqlQuery(raw_sql)

    def build(self) -> SqlQuery:
        return self._query

    def format(self, format: Format) -> Self:
        self._query.format = format
        return self


class SqlAnnotationTarget(dashboard.AnnotationTarget):
    """An annotation whose events are rows of SQL (time, text, tags): the SDK's target has
    only the fields of Grafana's built-in annotations."""

    def __init__(self, raw_sql: str) -> None:
        super().__init__()
        self.query = SqlQuery(raw_sql, ref_id="Anno")

    def to_json(self) -> dict[str, object]:
        return self.query.to_json()


class SqlAnnotation(cogbuilder.Builder[dashboard.AnnotationTarget]):
    """Builds an `SqlAnnotationTarget` for `AnnotationQuery.target`."""

    def __init__(self, raw_sql: str) -> None:
        self._target = SqlAnnotationTarget(raw_sql)

    def build(self) -> SqlAnnotationTarget:
        return self._target


@dataclass(frozen=True)
class DataLink:
    """A link on a field's values (the `links` property of an override): the SDK's
    `DashboardLink` is the dashboard's link menu, with fields a data link has not."""

    title: str
    url: str

    def to_json(self) -> dict[str, object]:
        return {"title": self.title, "targetBlank": False, "url": self.url}
