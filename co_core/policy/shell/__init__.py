"""Every part a shell command would run, and the one spelling of it that Co runs.

An allow rule for ``ls *`` must never let ``ls; rm -rf ~`` through, so the policy engine
asks about each part on its own. A part is one of:

- ``exec``: a simple command (its assignments included), found anywhere: lists,
  pipelines, ``( )``, ``{ }``, the script given to ``bash -c`` / ``sh -c`` / ``eval`` /
  ``trap``, the command run by ``sudo``, ``env``, ``xargs``, ``timeout``, ``find -exec``…;
- ``write``: the target of an output redirection (``>``, ``>>``, ``&>``, ``>|``, ``<>``);
- ``read``: the source of an input redirection (``<``).

A command whose meaning is fixed when it is read (every word literal; see ``syntax``)
gets a canonical spelling, :attr:`Script.canonical`, in which Co quotes every word itself.
That text is the permission key, the decision and what runs, so a difference between how
Co and bash read the original spelling cannot change what runs. Any other command
(variables, substitutions, loops, assignments to ``PATH``…) has ``canonical`` None and a
``problem`` saying why; its parts are still found (best effort, with tree-sitter-bash) so
that a deny rule holds inside it, but no allow rule applies: it is asked, and runs as
written if the user says yes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from co_core.policy.shell import syntax
from co_core.policy.shell.inner import inner_commands
from co_core.policy.shell.parts import Part, Script
from co_core.policy.shell.programs import findings, folder_findings, has_findings
from co_core.policy.shell.state import check_builtin, check_variable
from co_core.policy.shell.syntax import Group, NotLiteral, Program, Simple, Word

__all__ = ["Part", "Script", "canonical_shell_command", "read_script"]

MAX_DEPTH = 8


@functools.lru_cache(maxsize=1024)
def read_script(command: str) -> Script:
    """Read ``command``: fixed (canonical text and exact parts) or not (rough parts)."""
    try:
        analysis = _Analysis()
        program = analysis.program(syntax.read(command))
        parts = folder_findings(list(_unique(analysis.parts)))
        return Script(tuple(parts), syntax.render(program))
    except NotLiteral as why:
        problem = str(why)
    except RecursionError:
        problem = "it is nested too deeply to read"
    from co_core.policy.shell.rough import rough_parts

    try:
        parts = rough_parts(command)
    except RecursionError:
        parts = []  # only a deny on the whole command line can decide it
    return Script(_unique(parts), None, problem)


def canonical_shell_command(command: str) -> str:
    """The command as Co runs it: its canonical spelling when its meaning is fixed when
    it is read, else the command unchanged (such a command is always asked about, and a
    *yes* runs it as written). Plugins whose tools run shell commands use this in their
    resolver, so that the permission key, the decision and what runs are one text."""
    script = read_script(command)
    return command if script.canonical is None else script.canonical


def _unique(parts: list[Part]) -> tuple[Part, ...]:
    return tuple(dict.fromkeys(parts))


@dataclass
class _Analysis:
    depth: int = 0
    parts: list[Part] = field(default_factory=list)

    def program(self, program: Program) -> Program:
        items = []
        for and_or, background in program.items:
            first = self.pipeline(and_or.first)
            rest = tuple((op, self.pipeline(p)) for op, p in and_or.rest)
            items.append((syntax.AndOr(first, rest), background))
        return Program(tuple(items))

    def pipeline(self, pipeline: syntax.Pipeline) -> syntax.Pipeline:
        commands = tuple(self.command(c) for c in pipeline.commands)
        return syntax.Pipeline(commands, pipeline.stderr_too, pipeline.negated)

    def command(self, command: syntax.Command) -> syntax.Command:
        if isinstance(command, Group):
            body = self.program(command.body)
            self.redirects(command.redirects)
            return Group(body, command.subshell, command.redirects)
        for name, _ in command.assignments:
            check_variable(name)
        words = command.words
        if words:
            words = self.words(command.assignments, words, builtins=True)
        elif command.assignments:
            self.parts.append(self.exec_part(command.assignments, ()))
        self.redirects(command.redirects)
        return Simple(command.assignments, words, command.redirects)

    def redirects(self, redirects: tuple[syntax.Redirect, ...]) -> None:
        for r in redirects:
            if r.op not in ("<<", "<<<") and not r.duplicates:
                self.parts.append(Part("read" if r.op == "<" else "write", r.target.text))

    def words(
        self,
        assignments: tuple[tuple[str, Word], ...],
        words: tuple[Word, ...],
        *,
        builtins: bool,
        runtime_args: bool = False,
    ) -> tuple[Word, ...]:
        """Check one simple command's words, find the commands inside them, add its part
        (then theirs); returns the words as Co writes them (inner scripts canonical)."""
        if words[0].globs:
            raise NotLiteral(f"the command name {words[0].render()} is a file pattern")
        for word in words[1:]:
            if word.globs and (word.globs[0] == 0 or word.text.startswith("-")):
                raise NotLiteral(
                    f"{word.render()} can expand to file names that act as options (./*.py cannot)"
                )
        values = tuple(w.text for w in words)
        if runtime_args and has_findings(values[0]):
            raise NotLiteral(
                f"xargs adds arguments it reads when it runs to {values[0]}, whose "
                "options can run commands or write files"
            )
        if builtins:
            check_builtin(values)
        later: list[Part] = []
        new = list(words)
        for inner in sorted(inner_commands(values), key=lambda x: x.start, reverse=True):
            if self.depth >= MAX_DEPTH:
                raise NotLiteral("commands are nested too deeply")
            sub = _Analysis(self.depth + 1)
            if inner.shell is not None:
                text = " ".join(values[inner.start : inner.end])
                if not text.strip():
                    continue  # trap '' SIGNAL: ignore the signal
                program = sub.program(syntax.read(text))
                rendered = syntax.render(program, posix=inner.shell == "sh")
                new[inner.start : inner.end] = [Word(rendered)]
            else:
                inside = words[inner.start : inner.end]
                found = sub.words(
                    (), inside, builtins=inner.builtins, runtime_args=inner.runtime_args
                )
                new[inner.start : inner.end] = found
            later = sub.parts + later
        self.parts.append(self.exec_part(assignments, tuple(new)))
        self.parts += later
        return tuple(new)

    @staticmethod
    def exec_part(assignments: tuple[tuple[str, Word], ...], words: tuple[Word, ...]) -> Part:
        shown = syntax.render_words(assignments, words)
        prefix = " ".join(shown[: len(assignments)])
        rendered = tuple(shown[len(assignments) :])
        values = tuple(w.text for w in words)
        globbed = frozenset(i for i, w in enumerate(words) if w.globs)
        found = tuple(findings(values, globbed)) if values else ()
        return Part("exec", " ".join(shown), values, rendered, prefix, found, globbed)
