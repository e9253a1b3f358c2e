"""tumble's lab: an interactive integrator explorer in the browser (``tumble lab``).

:mod:`tumble.lab.api` computes the JSON answers (the request and its limits are
:mod:`tumble.lab.request`, the preset menu :mod:`tumble.lab.presets`, the method list's
groups :mod:`tumble.lab.groups`), :mod:`tumble.lab.server`
serves them with the page in ``static/``. Needs the ``lab`` extra (FastAPI, uvicorn, plotly).
"""
