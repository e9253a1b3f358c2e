"""The lab's grouped method list, compositions from the address and the engines preset in
headless Chromium (Playwright), driven as a person would.

Each test computes only what it shows: the default view (warmed up by the server), one
composed base (``symmetric_top_split``, whose schemes share one compiled loop) and the
engines' default settings. Skipped with a visible reason where Chromium or playwright is
missing (see conftest).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from conftest import COMPUTE_TIMEOUT_MS, open_lab, watch
from tumble import engines
from tumble.lab import api, groups

pytestmark = pytest.mark.browser

FIGURES = ("plot-time", "plot-world", "plot-body")
REFERENCE = "exact (reference)"


def drawn_groups(page, figure: str) -> set[str]:
    """Curves (not markers, not legend-only placeholders) drawn in a figure."""
    return set(
        page.evaluate(
            """(id) => document.getElementById(id).data
                .filter((t) => t.mode === "lines" && (t.visible === undefined || t.visible === true)
                               && t.y && t.y.length > 1)
                .map((t) => t.meta)""",
            figure,
        )
    )


def legend_only(page) -> set[str]:
    return set(
        page.evaluate(
            """document.getElementById("plot-time").data
                .filter((t) => t.visible === "legendonly").map((t) => t.meta)"""
        )
    )


def wait_answer(page, done: int) -> None:
    page.wait_for_function(f"tumbleLab.completed > {done}", timeout=COMPUTE_TIMEOUT_MS)


def close(page, allowed: tuple[str, ...] = ()) -> None:
    errors = [e for e in page.lab_errors if not any(a in e for a in allowed)]
    page.close()
    assert errors == [], f"the page reported errors: {errors}"


def boxes(page, selector: str) -> list[str]:
    """Values of the checkboxes under ``selector``, in page order."""
    return page.locator(f"{selector} input[type=checkbox]").evaluate_all(
        "(els) => els.map((e) => e.value)"
    )


# ------------------------------------------------------------------------ the groups


def test_the_method_list_shows_the_three_groups(context, live_server) -> None:
    pg = open_lab(context, live_server)
    titles = pg.locator("#method-list .group > summary .group-title").all_text_contents()
    assert titles == ["The article's methods", "Higher order", "Engines"]
    table = {g["id"]: g for g in api.group_table()}
    for gid, group in table.items():
        want = [m for s in group["sections"] for m in s["methods"]]
        assert boxes(pg, f"#method-list details[data-group='{gid}']") == want, gid
    # The compositions are listed, the best of each order among them.
    higher = boxes(pg, "#method-list details[data-group='higher']")
    assert "symmetric_top_split:kahanli6" in higher
    assert set(groups.FEATURED) <= set(higher)
    # Each replica under its engine, the engine's default setting marked.
    for engine, names in engines.BY_ENGINE.items():
        unit = pg.locator(f"#method-list .engine[data-engine='{engine}']")
        assert unit.locator(".engine-name").inner_text() == engine
        assert boxes(pg, f"#method-list .engine[data-engine='{engine}']") == list(names)
        for name in names:
            tagged = unit.locator("label", has=pg.locator(f"input[value='{name}']")).locator(".tag")
            assert tagged.count() == (1 if engines.ENGINES[name].default else 0), name
    # On a wide screen every group is open; the title counts what is ticked in it.
    assert pg.locator("#method-list details.group:not([open])").count() == 0
    assert pg.inner_text("#method-list details[data-group='article'] .group-count") == "5 ticked"
    # Ticked at first: the article's five; the legend greys out only their group's others.
    ticked = pg.locator("#method-list input:checked").evaluate_all("(e) => e.map((x) => x.value)")
    assert ticked == list(api.SHOWN_AT_START)
    greyed = legend_only(pg)
    assert {"midpoint", "splitting"} <= greyed
    assert not greyed & set(engines.ENGINES)
    assert not greyed & set(groups.FEATURED)
    close(pg)


# ------------------------------------------------------------------------ compositions


def test_a_composition_named_in_the_address_is_computed_and_plotted(context, live_server) -> None:
    # yoshida6 is not featured: the address alone brings it into the list. It shares its
    # compiled loop with the featured kahanli6 (one base, schemes as coefficients).
    other, featured = "symmetric_top_split:yoshida6", "symmetric_top_split:kahanli6"
    assert other not in groups.FEATURED
    query = (
        f"steps_per_rotation=16&rotations=2&methods={other},splitting:bogus4,{featured},jolt"
        f"&view={other}"
    )
    pg = open_lab(context, live_server, query)
    assert pg.evaluate("tumbleLab.request.methods") == [other, featured, "jolt"]
    for fig in FIGURES:
        assert drawn_groups(pg, fig) == {REFERENCE, other, featured, "jolt"}, fig
    # Listed under "Higher order", ticked, and in the 3-D view's menu as the address says.
    higher = "#method-list details[data-group='higher']"
    assert boxes(pg, higher)[-1] == other
    assert pg.locator(f"{higher} input[value='{other}']").is_checked()
    assert pg.input_value("#anim-method") == other
    rows = pg.locator("#scores tbody tr").all_inner_texts()
    assert any(r.startswith(other) and "\t6\t" in r for r in rows), rows
    # The unknown scheme is left out, and the line under the list says why.
    error = pg.inner_text("#method-error")
    assert "splitting:bogus4" in error
    assert "unknown composition scheme 'bogus4'" in error
    # The address keeps the names readable, without the refused one.
    methods = parse_qs(urlparse(pg.url).query)["methods"][0]
    assert methods == f"{other},{featured},jolt"
    assert f"methods={other}," in pg.url
    # Unticking the composition recomputes without it (the rest in the list's order); the
    # error line is cleared.
    done = pg.evaluate("tumbleLab.completed")
    pg.locator(f"{higher} input[value='{other}']").uncheck()
    wait_answer(pg, done)
    assert pg.evaluate("tumbleLab.request.methods") == ["jolt", featured]
    assert pg.inner_text("#method-error") == ""
    assert not pg.locator("#method-error").is_visible()
    # The browser logs the 422 of the refused name; nothing else went wrong.
    close(pg, allowed=("status of 422",))


# ------------------------------------------------------------------------ engines at 60 Hz


def test_the_engines_preset_ticks_the_replicas_and_draws_them(context, live_server) -> None:
    pg = open_lab(context, live_server)
    preset = next(p for p in api.PRESETS if p.id == "engines")
    defaults = preset.params["methods"]
    done = pg.evaluate("tumbleLab.completed")
    pg.select_option("#preset", "engines")
    wait_answer(pg, done)
    request = pg.evaluate("tumbleLab.request")
    assert request["methods"] == defaults
    for key in ("min_j", "median_j", "energy", "steps_per_rotation", "rotations"):
        assert request[key] == preset.params[key], key
    assert pg.input_value("#steps-per-rotation") == str(preset.params["steps_per_rotation"])
    assert "60 Hz" in pg.inner_text("#preset-note")
    assert pg.evaluate("tumbleLab.data.case.steps") == 1200
    # Every default replica's curves, and the exact reference, in every figure.
    for fig in FIGURES:
        assert drawn_groups(pg, fig) >= {REFERENCE, *defaults}, fig
    ticked = pg.locator("#method-list .engine input:checked").evaluate_all(
        "(e) => e.map((x) => x.value)"
    )
    assert ticked == defaults
    # The engines do different things to the same body: their energy curves differ.
    energy = pg.evaluate(
        """tumbleLab.data.methods.map((m) => m.energy_factor[m.energy_factor.length >> 1])"""
    )
    assert len({round(e, 3) for e in energy if e is not None}) >= 3, energy
    assert pg.locator("#scores tbody tr").count() == len(defaults)
    # The address is the preset: opened again, the menu names it and the run is the same.
    second = context.new_page()
    second.lab_errors = watch(second, live_server)
    second.goto(pg.url)
    second.wait_for_function(
        "window.tumbleLab && tumbleLab.completed >= 1", timeout=COMPUTE_TIMEOUT_MS
    )
    assert second.input_value("#preset") == "engines"
    assert second.evaluate("tumbleLab.request") == request
    close(second)
    close(pg)


def test_on_a_phone_the_groups_fold_until_they_hold_a_ticked_method(browser, live_server) -> None:
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    pg = open_lab(ctx, live_server)
    opened = pg.locator("#method-list details.group[open]").evaluate_all(
        "(els) => els.map((e) => e.dataset.group)"
    )
    assert opened == ["article"]
    done = pg.evaluate("tumbleLab.completed")
    pg.select_option("#preset", "engines")
    wait_answer(pg, done)
    engines_group = pg.locator("#method-list details[data-group='engines']")
    assert engines_group.get_attribute("open") is not None
    n = len(next(p for p in api.PRESETS if p.id == "engines").params["methods"])
    assert engines_group.locator(".group-count").inner_text() == f"{n} ticked"
    # A folded group opens with a tap on its title.
    higher = pg.locator("#method-list details[data-group='higher']")
    assert higher.get_attribute("open") is None
    higher.locator("summary").click()
    assert higher.locator("input[value='symmetric_top_split:kahanli6']").is_visible()
    assert pg.evaluate("document.documentElement.scrollWidth") <= 390
    close(pg)
    ctx.close()
