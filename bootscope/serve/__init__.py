"""``bootscope serve``: the store as a web dashboard (Starlette, run by uvicorn), over the same use
cases the CLI calls. ``app.make_app`` builds the application; ``guard`` bounds every request and
sets the security headers; ``pages`` and ``api`` answer; ``listen`` binds and runs it."""
