"""tumble's lab: an interactive integrator explorer in the browser (``tumble lab``).

:mod:`tumble.lab.api` computes the JSON answers, :mod:`tumble.lab.server` serves them
with the page in ``static/``. Needs the ``lab`` extra (FastAPI, uvicorn, plotly).
"""
