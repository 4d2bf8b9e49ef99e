"""A site's plugin may render a page from a template made of a string: the package's hooks serve it."""

from __future__ import annotations


async def test_a_page_rendered_from_a_string_template_gets_the_packages_hooks(sample_datasette):
    template = sample_datasette.jinja_env.from_string("<p>{{ 6 * 7 }} {{ archivist_building is defined }}</p>")
    assert template.name is None
    page = await sample_datasette.render_template(template, {})
    assert page == "<p>42 False</p>"  # (its own pages' variables are the package's pages' alone)
