"""How every pagebench dashboard looks, once: the frame (tags, time zone, the menu of the
other dashboards), the run variable, a table, bars, lines and stats over the results
store, and the field overrides the dashboards share. Each dashboard module composes
these with its SQL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from grafana_foundation_sdk.builders import barchart, common as common_builders, dashboard, stat, timeseries, trend
from grafana_foundation_sdk.models import common, dashboard as model, table as table_model

from boards.sdk import PAGEBENCH, Format, Sql
from boards.sql import RUNS
from pagebench.core.encodings import Encoding
from pagebench.core.modes import Mode

#: The panel builders a dashboard here is made of.
Panel = dashboard.Panel | barchart.Panel | stat.Panel | timeseries.Panel | trend.Panel
P = TypeVar("P", dashboard.Panel, barchart.Panel, stat.Panel, timeseries.Panel, trend.Panel)
L = TypeVar("L", timeseries.Panel, trend.Panel)
Step = tuple[float | None, str]  # a threshold: from this value (None: from the lowest) on, this colour


def board(uid: str, title: str, description: str, panels: Sequence[Panel], *,
          variables: Sequence[dashboard.QueryVariable] = (), since: str = "now-30d") -> dashboard.Dashboard:
    """A dashboard in UTC with the menu of the other pagebench dashboards (keeping the time
    range and the variables); its panels numbered and laid out in order, left to right."""
    built = (dashboard.Dashboard(title).uid(uid).description(description).tags(["pagebench"]).timezone("utc")
             .tooltip(model.DashboardCursorSync.CROSSHAIR).time(since, "now").annotations([])
             .link(dashboard.DashboardLink("pagebench").type(model.DashboardLinkType.DASHBOARDS)
                   .tags(["pagebench"]).as_dropdown(True).include_vars(True).keep_time(True)
                   .icon("external link"))
             .variables(list(variables)))
    for number, panel in enumerate(panels, start=1):
        built.with_panel(panel.id(number))
    return built


def variable(name: str, description: str, sql: str, *, several: bool = False,
             label: str | None = None) -> dashboard.QueryVariable:
    """A variable whose options are a query's rows (`__value`, `__text`, or the first
    column), read when the dashboard loads; with `several`, any of them, all by default."""
    return (dashboard.QueryVariable(name).id(name).label(label or name).description(description)
            .datasource(PAGEBENCH).query(sql).refresh(model.VariableRefresh.ON_DASHBOARD_LOAD)
            .sort(model.VariableSort.DISABLED).multi(several).include_all(several))


def run_variable() -> dashboard.QueryVariable:
    return variable("run", "The run to show (newest first; the newest is the default).", RUNS)


def _placed(panel: P, title: str, description: str, sql: str, height: int, span: int,
            format: Format = "table") -> P:
    return panel.title(title).description(description).datasource(PAGEBENCH).height(height).span(span) \
        .with_target(Sql(sql).format(format))


def table(title: str, description: str, sql: str, *, height: int, span: int = 24,
          header: bool = True) -> dashboard.Panel:
    """A table of the query's rows, every column filterable. (The SDK's table builder
    has no field options: the generic panel with the table's typed models.)"""
    return _placed(dashboard.Panel().type("table"), title, description, sql, height, span) \
        .options(table_model.Options(show_header=header)) \
        .custom(common.TableFieldOptions(cell_options=common.TableAutoCellOptions(), filterable=True)) \
        .color_scheme(colours(model.FieldColorModeId.THRESHOLDS)).thresholds(thresholds([(None, "text")]))


def bars(title: str, description: str, sql: str, *, x: str, height: int, span: int = 24, unit: str | None = None,
         stacked: bool = False, values: common.VisibilityMode = common.VisibilityMode.AUTO,
         horizontal: bool = True, bar_width: float = 0.9, label_length: int = 60) -> barchart.Panel:
    """A bar chart of the query's rows, a group of bars per value of column `x`."""
    panel = _placed(barchart.Panel(), title, description, sql, height, span) \
        .x_field(x).orientation(common.VizOrientation.HORIZONTAL if horizontal else common.VizOrientation.AUTO) \
        .stacking(common.StackingMode.NORMAL if stacked else common.StackingMode.NONE).show_value(values) \
        .group_width(0.7).bar_width(bar_width).x_tick_label_max_length(label_length) \
        .legend(legend()).tooltip(tooltip()).line_width(1).fill_opacity(80).axis_soft_min(0) \
        .color_scheme(colours(model.FieldColorModeId.PALETTE_CLASSIC))
    return panel.unit(unit) if unit else panel


def lines(panel: L, title: str, description: str, sql: str, *, height: int, span: int = 24,
          format: Format = "table") -> L:
    """Lines over time (a time series) or over a numeric column (a trend), points drawn."""
    return _placed(panel, title, description, sql, height, span, format) \
        .draw_style(common.GraphDrawStyle.LINE).show_points(common.VisibilityMode.ALWAYS).point_size(7) \
        .fill_opacity(0).color_scheme(colours(model.FieldColorModeId.PALETTE_CLASSIC))


def stats(title: str, description: str, sql: str, *, height: int, span: int = 24) -> stat.Panel:
    """Each column of the query's one row as a big number with its name."""
    return _placed(stat.Panel(), title, description, sql, height, span) \
        .reduce_options(common_builders.ReduceDataOptions().values(False).calcs(["lastNotNull"]).fields("")) \
        .orientation(common.VizOrientation.VERTICAL).text_mode(common.BigValueTextMode.VALUE_AND_NAME) \
        .color_mode(common.BigValueColorMode.VALUE).graph_mode(common.BigValueGraphMode.NONE) \
        .justify_mode(common.BigValueJustifyMode.AUTO)


def legend(placement: common.LegendPlacement = common.LegendPlacement.BOTTOM,
           calcs: Sequence[str] = ()) -> common_builders.VizLegendOptions:
    """A legend shown as a list, or as a table with `calcs`."""
    shown = common.LegendDisplayMode.TABLE if calcs else common.LegendDisplayMode.LIST
    return common_builders.VizLegendOptions().show_legend(True).display_mode(shown).placement(placement) \
        .calcs(list(calcs))


def tooltip(sort: common.SortOrder = common.SortOrder.NONE) -> common_builders.VizTooltipOptions:
    """A tooltip with every series at the pointer."""
    return common_builders.VizTooltipOptions().mode(common.TooltipDisplayMode.MULTI).sort(sort)


def colours(mode: model.FieldColorModeId) -> dashboard.FieldColor:
    return dashboard.FieldColor().mode(mode)


def _steps(steps: Sequence[Step]) -> list[model.Threshold]:
    return [model.Threshold(value=value, color=colour) for value, colour in steps]


def thresholds(steps: Sequence[Step]) -> dashboard.ThresholdsConfig:
    return dashboard.ThresholdsConfig().mode(model.ThresholdsMode.ABSOLUTE).steps(_steps(steps))


# -- field overrides: a column's properties ----------------------------------------------------

Properties = list[model.DynamicConfigValue]


def unit(name: str, decimals: int | None = None) -> Properties:
    shown = [model.DynamicConfigValue(id_val="unit", value=name)]
    return shown if decimals is None else [*shown, model.DynamicConfigValue(id_val="decimals", value=decimals)]


def ms(decimals: int = 1) -> Properties:
    return unit("ms", decimals)


def decimals(count: int) -> Properties:
    return [model.DynamicConfigValue(id_val="decimals", value=count)]


def coloured(steps: Sequence[Step]) -> Properties:
    """The value coloured by thresholds (e.g. orange from 1 flagged load on)."""
    return [model.DynamicConfigValue(id_val="thresholds", value=model.ThresholdsConfig(
        mode=model.ThresholdsMode.ABSOLUTE, steps=_steps(steps)))]


def coloured_text(steps: Sequence[Step]) -> Properties:
    """A table cell's text coloured by thresholds."""
    return [model.DynamicConfigValue(id_val="custom.cellOptions", value=common.TableColorTextCellOptions()),
            *coloured(steps)]


def named_colours(by_value: dict[str, str]) -> Properties:
    """The cell's text coloured by its value (e.g. 'valid' green, 'invalid' red)."""
    mapping = model.ValueMap(options={value: model.ValueMappingResult(color=colour, index=index)
                                      for index, (value, colour) in enumerate(by_value.items())})
    return [model.DynamicConfigValue(id_val="mappings", value=[mapping]),
            model.DynamicConfigValue(id_val="custom.cellOptions", value=common.TableColorTextCellOptions())]


def in_their_colours(panel: P, rows: Sequence[Mode] | Sequence[Encoding]) -> P:
    """A column per row of a catalogue (modes, encodings), each drawn in the row's colour,
    as the reports draw it."""
    for row in rows:
        panel.override_by_name(row.name, fixed(row.colour))
    return panel


def fixed(colour: str) -> Properties:
    return [model.DynamicConfigValue(id_val="color", value=model.FieldColor(mode=model.FieldColorModeId.FIXED,
                                                                             fixed_color=colour))]


def invisible() -> Properties:
    """A stacked bar's offset: drawn transparent, in neither the legend nor the tooltip."""
    return [*fixed("transparent"),
            model.DynamicConfigValue(id_val="custom.hideFrom",
                                     value=common.HideSeriesConfig(legend=True, tooltip=True, viz=False))]
