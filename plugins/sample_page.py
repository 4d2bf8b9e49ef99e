"""The sample site's own page, /-/sample: how many documents of each kind the archive holds.

A one-file Datasette plugin of the site's configuration folder, loaded by
``archivist serve --config-dir .`` and by ``datasette --plugins-dir plugins`` alike.
"""

from datasette import hookimpl
from datasette.utils.asgi import Response
from jinja2 import ChoiceLoader, DictLoader

PAGE = """{% extends "base.html" %}
{% block title %}What the sample holds{% endblock %}
{% block content %}
<h1>What the sample holds</h1>
<table class="sample-kinds">
  <thead><tr><th>kind</th><th>documents</th></tr></thead>
  <tbody>{% for row in kinds %}<tr><td>{{ row.kind }}</td><td>{{ row.documents }}</td></tr>{% endfor %}</tbody>
</table>
{% endblock %}"""

COUNTS = "select kind, count(*) as documents from documents group by kind order by kind"


async def sample_page(datasette, request):
    """The page: one row per kind, from the served archive; a 404 where no archive is served."""
    if "archive" not in datasette.databases:
        return Response.text("No archive is served.", status=404)
    rows = await datasette.get_database("archive").execute(COUNTS)
    kinds = [{"kind": row["kind"], "documents": row["documents"]} for row in rows]
    environment = datasette.jinja_env
    pages = environment.overlay(loader=ChoiceLoader([DictLoader({"sample.html": PAGE}), environment.loader]))
    template = pages.get_template("sample.html")
    return Response.html(await datasette.render_template(template, {"kinds": kinds}, request=request))


@hookimpl
def register_routes():
    return [(r"^/-/sample$", sample_page)]
