"""Search as you type in a real browser: the results follow the words as they are typed, without Enter."""

from __future__ import annotations

from test_browser import Visit, browser, server  # noqa: F401  (the fixtures)


def test_results_follow_the_words_typed_and_the_address_bar_keeps_them(browser, server):  # noqa: F811
    visit = Visit(browser, server)
    page = visit.page
    page.goto(server + "/search?entities=memory")
    newest = visit.hits(".archivist-hit h3")
    page.click("#query")
    page.keyboard.type("authen", delay=60)
    page.wait_for_url("**/search?query=authen**")
    page.wait_for_function("() => document.querySelector('.archivist-summary q')?.textContent === 'authen'")
    assert "entities=memory" in page.url  # the filters chosen are kept
    typed = visit.hits(".archivist-hit")
    assert typed and typed != newest
    assert "authentication" in page.locator(".archivist-hits").inner_text().lower()
    assert set(visit.hits(".archivist-hit .badge.kind")) == {"memory"}
    assert "live=" not in page.url  # the address bar holds the page, not the keystroke
    visit.shot("10-typed-authen")

    page.goto(server + "/search")
    page.click("#query")
    page.keyboard.type("proxy", delay=60)
    page.wait_for_function("() => document.querySelector('.archivist-summary q')?.textContent === 'proxy'")
    first = visit.hits(".archivist-hit h3")
    page.keyboard.type(" timeout", delay=60)
    page.wait_for_url("**query=proxy+timeout**")
    page.wait_for_function("() => document.querySelector('.archivist-summary q')?.textContent === 'proxy timeout'")
    assert visit.hits(".archivist-hit h3") != first
    assert page.title().startswith("proxy timeout · Search")
    visit.shot("11-typed-proxy-timeout")

    page.press("#query", "Enter")  # Enter still submits the form: the full page in the chosen mode
    page.wait_for_load_state()
    assert page.locator(".archivist-mode-links strong").first.inner_text() == "hybrid"
    assert page.locator("#query").input_value() == "proxy timeout"
    visit.close()
