"""A run's app catalogue: what each site's configuration says of each app.

Why one place: the multi-site scheduler and the single local site both fill a task in from
its site's app definition before they hand it to the provider (the program, the app's
environment and walltime, its job options as profiles), and memoization fingerprints an
app by the program the catalogue gives it.  Filling a task in makes a copy: the engine's
Task stays what the script said, and every attempt (on whatever site) starts from it.
"""

from __future__ import annotations

from dataclasses import replace

from swiftnb.config.model import AppConfig, Config
from swiftnb.config.types import flatten_options
from swiftnb.engine.task import AppEntry, Task, later_commands

__all__ = ["AppCatalogue"]


class AppCatalogue:
    """The app definitions of a configuration by site, looked up once per (site, app)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._apps: dict[tuple[str, str], AppConfig | None] = {}

    def app(self, site: str, tr: str) -> AppConfig | None:
        """App ``tr``'s definition on ``site`` (Config.app_for), None where none lists it."""
        key = (site, tr)
        try:
            return self._apps[key]
        except KeyError:
            app = self._apps[key] = self.config.app_for(site, tr)
            return app

    def entry(self, site: str, tr: str) -> AppEntry | None:
        """What ``site``'s catalogue says of app ``tr`` (program, env, walltime), or None."""
        app = self.app(site, tr)
        if app is None:
            return None
        walltime = float(app.max_wall_time) if app.max_wall_time else None
        return AppEntry(app.executable_for(tr), dict(app.env), walltime)

    def executable(self, site: str, tr: str) -> str | None:
        """The program ``site`` runs for app ``tr`` (``"*"`` read as the app's own name),
        None where its catalogue does not list the app."""
        app = self.app(site, tr)
        return app.executable_for(tr) if app is not None else None

    def missing(self, site: str, task: Task) -> str | None:
        """The first app of ``task`` that ``site``'s catalogue lacks, or None."""
        return next((tr for tr in task.apps if self.app(site, tr) is None), None)

    def resolve(self, site: str, task: Task) -> Task:
        """A copy of ``task`` filled in from the app definitions on ``site``: its program,
        the apps' environment under the task's own, the apps' walltime where the script set
        none, and the app's job attributes and ``options`` (``count``, ``jobType``,
        ``jobQueue``...) under the script's own ``profile`` lines, for the providers that
        read them (batch sites: their job's resources).  ``task`` itself is not changed."""
        app = self.app(site, task.tr)
        executable = task.executable
        profiles = task.profiles
        commands = task.more_commands
        env = dict(task.env)
        walltime = task.maxwalltime  # the script's own profile wins
        if app is not None:
            program = app.executable_for(task.tr)
            if executable is None and program != task.tr:
                executable = program
            env = {**app.env, **env}
            if walltime is None and app.max_wall_time:
                walltime = float(app.max_wall_time)
            if app.options or app.attributes:
                profiles = {**flatten_options(app.attributes),
                            **flatten_options(app.options), **task.profiles}
        if commands:
            commands, more_env, more_walltime = later_commands(
                commands, lambda tr: self.entry(site, tr))
            env = {**more_env, **env}
            if task.maxwalltime is None and more_walltime is not None:
                walltime = (walltime or 0.0) + more_walltime
        if env == task.env:
            env = task.env
        if (executable is task.executable and profiles is task.profiles and env is task.env
                and commands is task.more_commands and walltime == task.maxwalltime):
            return task
        return replace(task, executable=executable, profiles=profiles, env=env,
                       more_commands=commands, maxwalltime=walltime)
