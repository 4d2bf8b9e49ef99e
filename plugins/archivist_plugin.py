"""Datasette hooks for Archivist: wiring only, the logic lives in the archivist package."""

from datasette import hookimpl

from archivist import sqlfunctions, web


@hookimpl
def prepare_connection(conn, datasette):
    """Register the SQL functions the canned queries call."""
    sqlfunctions.register(conn, datasette.plugin_config("archivist") or {})


@hookimpl
def asgi_wrapper(datasette):
    """Check canned-query parameters before Datasette runs the SQL."""
    return web.check_parameters(datasette)


@hookimpl
def render_cell(value, column):
    """Show search highlights in excerpts."""
    if column == "excerpt":
        return web.highlighted(value)
    return None
