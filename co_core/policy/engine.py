"""The policy engine: turns one tool call into allow / deny / ask / ask_once, with its source.

UI-free: the chat loop calls :meth:`PolicyEngine.decide`, shows a prompt when the answer
is ``ask`` or ``ask_once``, and reports the user's answer back with
:meth:`PolicyEngine.record_answer`. Precedence, shell splitting and grants are described
in docs/policy.md; the short version is "the strongest level with a matching rule
decides; inside a level the most specific pattern wins, then the most restrictive".
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from co_core.kernel import trust
from co_core.kernel.tools import Risk, ToolCall, ToolSpec
from co_core.kernel.visible import key_text, key_value
from co_core.policy import grants as grant_store
from co_core.policy.globs import DEFAULT_SHELL_PREFIXES, escape, is_exact, matches, shell_prefix
from co_core.policy.rules import (
    EFFECTS,
    LEVELS,
    Effect,
    Level,
    Rule,
    restrictiveness,
)
from co_core.policy.shell import Part, canonical_shell_command, read_script

if TYPE_CHECKING:
    from co_core.kernel.app import App
    from co_core.kernel.deps import CoDeps
    from co_core.kernel.host import PluginHost
    from co_core.kernel.settings import Settings
    from co_core.policy.audit import AuditLog

Scope = Literal["once", "session", "project"]
DEFAULT_BY_RISK: dict[str | None, Effect] = {
    "read": "allow",
    "write": "ask",
    "send": "ask",
    "exec": "ask",
    None: "ask",
}
# Levels that hold the user's answers to prompts: they never outrank a deny below them.
ANSWER_LEVELS: tuple[Level, ...] = ("grant", "session")
# Built-in rules besides the risk default (weakest level, so any other rule overrides them).
BUILTIN_RULES: tuple[tuple[str, Effect, str], ...] = (
    ("shell:write:/dev/null", "allow", "discarding output writes nothing"),
    ("shell:write:/dev/stdout", "allow", "writing to the command's own output"),
    ("shell:write:/dev/stderr", "allow", "writing to the command's own output"),
)


@dataclass(frozen=True)
class KeyDecision:
    """How one permission key (one part of a shell command) was decided."""

    key: str
    effect: Effect
    level: Level
    rule: Rule


@dataclass(frozen=True)
class Decision:
    """The engine's answer for one call. ``source`` is the level that decided (or
    ``shell-parser`` / ``headless``); ``pending`` are the keys a "yes" would approve."""

    effect: Effect
    source: str
    rule: str | None
    reason: str
    key: str
    tool: str
    plugin: str
    parts: tuple[KeyDecision, ...] = ()
    pending: tuple[str, ...] = ()
    asked_by: str | None = None  # headless: the source that wanted to ask

    @property
    def allowed(self) -> bool:
        return self.effect == "allow"

    @property
    def needs_approval(self) -> bool:
        return self.effect in ("ask", "ask_once")

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "effect": self.effect,
            "source": self.source,
            "rule": self.rule,
            "reason": self.reason,
            "permission": self.key,
        }
        if self.asked_by:
            data["asked_by"] = self.asked_by
        if len(self.parts) > 1 or (self.parts and self.parts[0].key != self.key):
            data["parts"] = [
                {"permission": p.key, "effect": p.effect, "source": p.level, "rule": p.rule.match}
                for p in self.parts
            ]
        return data


@dataclass
class PolicyEngine:
    """Decides tool calls for one session. Build it with :meth:`from_app` in Co."""

    settings: Settings | None = None
    tools: Iterable[ToolSpec] = ()
    host: PluginHost | None = None
    workspace: Path = field(default_factory=Path.cwd)
    session_id: str = "session"
    approve: Sequence[str] = ()
    yolo: bool = False
    headless: bool = False
    audit: AuditLog | None = None
    notices: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self.specs = {spec.name: spec for spec in self.tools}
        section = self._section()
        self.prefixes: tuple[str, ...] = (
            tuple(section.shell_prefixes) if section is not None else DEFAULT_SHELL_PREFIXES
        )
        self.project_root = trust.project_root(self.workspace)
        self.grant_scope = (self.project_root or self.workspace).resolve()
        self._levels: dict[Level, list[Rule]] = {level: [] for level in LEVELS}
        self._levels["default"] = [
            Rule(m, e, "default", "built-in", reason=why) for m, e, why in BUILTIN_RULES
        ]
        self._levels["default"] += self._preset_rules(section)
        from_settings = self._settings_rules()
        self._levels["user"] = [r for r in from_settings if r.level == "user"]
        self._levels["project"] = [r for r in from_settings if r.level == "project"]
        self._levels["project"] += self._project_file_rules()
        self._levels["grant"] = grant_store.load_grants(self.grant_scope)
        flags = [Rule(p, "allow", "flag", f"--approve {p}") for p in self.approve if p]
        if self.yolo:
            flags.append(Rule("**", "allow", "flag", "--yolo", reason="--yolo allows everything"))
        self._levels["flag"] = flags
        self.version = 0  # goes up whenever a rule is added (see CoDeps.policy_version)

    @classmethod
    def from_app(
        cls,
        app: App,
        *,
        workspace: Path | None = None,
        session_id: str = "session",
        approve: Sequence[str] = (),
        yolo: bool = False,
        headless: bool = False,
        audit: bool = True,
    ) -> PolicyEngine:
        """The engine for a run of Co: the app's settings, tools and plugin opinions."""
        log = None
        if audit:
            from co_core.kernel.redact import Redactor, settings_secrets
            from co_core.policy.audit import AuditLog
            from co_core.policy.settings import PolicySettings

            section = app.settings.find(PolicySettings)
            days = section.audit_days if section is not None else 30
            log = AuditLog(session_id, Redactor(settings_secrets(app.settings)), days=days)
        return cls(
            app.settings,
            app.host.tools(),
            app.host,
            (workspace or app.cwd),
            session_id,
            tuple(approve),
            yolo,
            headless,
            log,
        )

    # -- where rules come from ---------------------------------------------------------

    def _section(self) -> Any:
        if self.settings is None:
            return None
        return self.settings.sections.get("policy")

    @staticmethod
    def _preset_rules(section: Any) -> list[Rule]:
        """The rules of the presets turned on (policy.presets): as weak as built-in rules,
        so any rule of the user's overrides them."""
        from co_core.policy.presets import PRESETS

        names = section.presets if section is not None else []
        return [
            Rule(match, effect, "default", f"preset {name}", reason=f"the {name} preset")  # type: ignore[arg-type]
            for name in names
            for match, effect in PRESETS[name].rules
        ]

    def _settings_rules(self) -> list[Rule]:
        """``policy.rules`` from each settings file: the user's, and a trusted project's."""
        from co_core.kernel.settings import load_layers

        if self.settings is None:
            return []
        layers, _, _ = load_layers(self.workspace)
        rules: list[Rule] = []
        for layer in layers:
            raw = layer.section("policy").get("rules")
            if raw is not None:
                level: Level = "project" if layer.label == "project" else "user"
                rules += _parse_rules(raw, level, str(layer.path))
        if not any(layer.section("policy").get("rules") is not None for layer in layers):
            section = self._section()  # CO_POLICY_RULES, when no file sets rules
            if section is not None:
                rules += [
                    Rule(r.match, r.effect, "user", "env:CO_POLICY_RULES", r.reason)
                    for r in section.rules
                ]
        return rules

    def _project_file_rules(self) -> list[Rule]:
        """``.co/policy.json`` of the project, if the folder is trusted."""
        if self.project_root is None:
            return []
        path = self.project_root / ".co" / "policy.json"
        if not path.is_file():
            return []
        if not trust.is_trusted(self.project_root):
            self.notices.append(
                f"ignoring {path}: folder not trusted (run `co trust {self.project_root}` to use it)"
            )
            return []
        from co_core.kernel.settings import read_json

        return _parse_rules(read_json(path).get("rules", []), "project", str(path))

    def rules(self) -> dict[Level, list[Rule]]:
        """Every rule by level, weakest first (plugin opinions are per call, not listed)."""
        out = {level: list(self._levels[level]) for level in LEVELS}
        out["default"] = [
            *(
                Rule(f"<{risk or 'no'} risk>", e, "default", "built-in")
                for risk, e in DEFAULT_BY_RISK.items()
            ),
            *out["default"],
        ]
        return out

    def opinion_plugins(self) -> list[str]:
        if self.host is None:
            return []
        return sorted(i.plugin_name for i in self.host.pm.hook.approval_policy.get_hookimpls())

    # -- deciding ----------------------------------------------------------------------

    def make_call(self, tool: str, args: Mapping[str, Any], deps: CoDeps | None = None) -> ToolCall:
        """The ToolCall for a model's request, resolved to what it will really touch when
        ``deps`` are given (an unknown tool gets risk None: asked). A resolver may raise
        CallRefused: the call cannot be made as asked."""
        spec = self.specs.get(tool)
        if spec is None:
            return ToolCall(tool, "?", dict(args), f"unknown:{tool}", None)
        return spec.make_call(args, deps)

    def allows(self, key: str, risk: Risk = "read") -> bool:
        """Would a call with this key be allowed without asking? (A search leaves out what
        the user's rules keep from being read.) ``key`` holds its value as it is, a file
        name with a newline included: it is written out as every key is."""
        key = key_text(key)
        call = ToolCall("?", "?", {}, key, risk)
        extra = {"default": [self._risk_default(call)]}
        return self.decide_key(key, extra).effect == "allow"

    def decide(self, call: ToolCall) -> Decision:
        """Decide one call. Nothing is written: the caller records the decision."""
        decision = self._decide(call)
        if self.headless and decision.needs_approval:
            return self._headless(decision)
        return decision

    def _decide(self, call: ToolCall) -> Decision:
        extra = {"plugin": self._plugin_rules(call), "default": [self._risk_default(call)]}
        if len(call.all_keys) > 1:  # one key per target (recipients): each is decided
            return self._combine(call, [self.decide_key(k, extra) for k in call.all_keys])
        key = call.permission_key
        prefix = shell_prefix(key, self.prefixes)
        if prefix is None:
            part = self.decide_key(key, extra)
            return self._combine(call, [part])
        whole = self.decide_key(key, extra)
        command = self._raw_command(call, prefix)
        script = read_script(command)
        decided = [self._decide_part(prefix, part, extra) for part in script.parts]
        problem = script.problem
        if problem is None and script.canonical != command:
            problem = f"Co would run it as {script.canonical!r}, but this tool runs it as written"
        if problem is not None:
            return self._not_fixed(call, whole, decided, problem)
        if whole.effect == "deny":
            decided.append(whole)  # a deny on the whole command line still counts
        return self._combine(call, decided)

    def _decide_part(self, prefix: str, part: Part, extra: Mapping[str, list[Rule]]) -> KeyDecision:
        """One part of a shell command. An allow rule covers an argument that writes or
        runs something (``find -delete``, ``git -c``) only if the rule names it: a rule
        still matching with that argument blanked out did not name it."""
        if part.kind == "exec":
            key = prefix + key_text(part.text)
        else:
            key = f"{prefix.split(':', 1)[0]}:{part.kind}:{key_text(part.text)}"
        decided = self.decide_key(key, extra)
        if decided.effect != "allow" or decided.rule.origin == "--yolo":
            return decided
        for finding in part.findings:
            without = prefix + key_text(part.text_without(finding.word))
            if matches(decided.rule.match, without, self.prefixes):
                why = (
                    f"{part.words[0]}: {finding.why}, and the rule {decided.rule.match!r} "
                    "does not name it"
                )
                rule = Rule(decided.rule.match, "ask", decided.level, decided.rule.origin, why)
                return KeyDecision(key, "ask", decided.level, rule)
        return decided

    @staticmethod
    def _risk_default(call: ToolCall) -> Rule:
        return _risk_rule(call.risk)

    def decide_key(self, key: str, extra: Mapping[str, list[Rule]] | None = None) -> KeyDecision:
        """The strongest level with a matching rule decides, except that an answer (a
        grant) never outranks a deny of the levels below it; see docs/policy.md."""
        decided = self._strongest(key, extra, LEVELS)
        if decided.level in ANSWER_LEVELS and decided.effect != "deny":
            below = self._strongest(key, extra, LEVELS[: LEVELS.index("grant")])
            if below.effect == "deny":
                return below
        return decided

    def _strongest(
        self, key: str, extra: Mapping[str, list[Rule]] | None, levels: Sequence[Level]
    ) -> KeyDecision:
        for level in reversed(levels):
            rules = self._levels[level]
            more = extra.get(level) if extra else None
            if more:
                rules = [*rules, *more]
            elif not rules:
                continue
            found = [r for r in rules if matches(r.match, key, self.prefixes)]
            if found:
                best = max(found, key=Rule.rank)
                return KeyDecision(key, best.effect, level, best)
        rule = Rule("**", "ask", "default", "built-in", reason="no rule matched")
        return KeyDecision(key, "ask", "default", rule)

    def _plugin_rules(self, call: ToolCall) -> list[Rule]:
        if self.host is None or self.settings is None:
            return []
        rules = []
        for plugin, answer in self.host.call_each(
            "approval_policy", call=call, settings=self.settings
        ):
            if answer is None:
                continue
            if answer not in EFFECTS:
                rules.append(
                    Rule("**", "ask", "plugin", plugin, reason=f"plugin {plugin!r} gave {answer!r}")
                )
            elif answer == "allow" and plugin != call.plugin:
                continue  # a plugin may only loosen the rules for its own tools
            else:
                rules.append(
                    Rule("**", answer, "plugin", plugin, reason=f"plugin {plugin!r} says {answer}")
                )
        return rules

    @staticmethod
    def _raw_command(call: ToolCall, prefix: str) -> str:
        """The command a shell key names, exactly (the key writes unseen characters out)."""
        return key_value(call.permission_key[len(prefix) :])

    def _not_fixed(
        self, call: ToolCall, whole: KeyDecision, parts: list[KeyDecision], why: str
    ) -> Decision:
        """A command whose meaning is not fixed when it is read: no rule can allow it (only
        an exact approval of this very text, or --yolo); a deny anywhere in it holds."""
        denied = [p for p in (*parts, whole) if p.effect == "deny"]
        if denied:
            return self._combine(call, [*parts, whole])
        exact_allow = whole.effect == "allow" and (
            is_exact(whole.rule.match) or whole.rule.origin == "--yolo"
        )
        if exact_allow:
            return self._combine(call, [whole])
        return Decision(
            "ask",
            "shell-parser",
            None,
            f"its meaning is not fixed until it runs: {why}",
            call.permission_key,
            call.tool,
            call.plugin,
            (whole,),
            (call.permission_key,),
        )

    def _combine(self, call: ToolCall, parts: list[KeyDecision]) -> Decision:
        worst = max(parts, key=lambda p: restrictiveness(p.effect))
        pending = tuple(dict.fromkeys(p.key for p in parts if p.effect in ("ask", "ask_once")))
        rule = worst.rule
        reason = rule.reason or f"rule {rule.match!r} from {rule.origin}"
        if len(parts) > 1 and worst.key != call.permission_key:
            reason = f"{worst.key}: {reason}"
        return Decision(
            worst.effect,
            worst.level,
            rule.match,
            reason,
            call.permission_key,
            call.tool,
            call.plugin,
            tuple(parts),
            pending,
        )

    def _headless(self, decision: Decision) -> Decision:
        flags = " ".join(approve_flag(k) for k in decision.pending)
        message = (
            f"{decision.tool} was not run: {decision.key} needs approval ({decision.reason}) "
            "and there is no terminal to ask. To allow it, add a rule "
            '{"match": ..., "effect": "allow"} to policy.rules in settings.json, use --yolo, '
            f"or rerun with: {flags}"  # last, so nothing sticks to the flags when copied
        )
        return Decision(
            "deny",
            "headless",
            decision.rule,
            message,
            decision.key,
            decision.tool,
            decision.plugin,
            decision.parts,
            decision.pending,
            asked_by=decision.source,
        )

    # -- answers and grants ------------------------------------------------------------

    def record_answer(self, decision: Decision, approved: bool, *, scope: Scope = "once") -> None:
        """Remember the user's answer to a prompt for ``decision``.

        ``scope`` "session" grants the pending keys for this session, "project" keeps them
        for this project. An ``ask_once`` decision is remembered even when answered "once":
        a yes for the project, a no for the session.
        """
        keys = decision.pending or (decision.key,)
        if approved and (scope == "project" or decision.effect == "ask_once"):
            for key in keys:
                self.grant_project(key, tool=decision.tool)
        elif approved and scope == "session":
            for key in keys:
                self.grant_session(key, tool=decision.tool)
        elif not approved and decision.effect == "ask_once":
            for key in keys:
                self.grant_session(key, effect="deny", tool=decision.tool)

    def grant_session(self, key: str, *, effect: Effect = "allow", tool: str | None = None) -> Rule:
        """Remember an answer about exactly ``key`` for this session (never a pattern)."""
        why = (
            "you approved this for the session"
            if effect == "allow"
            else "you said no to this earlier in the session"
        )
        rule = Rule(escape(key), effect, "session", f"session {self.session_id}", why, tool)
        with self._lock:
            kept = [r for r in self._levels["session"] if r.match != rule.match]
            self._levels["session"] = [*kept, rule]
            self.version += 1
        return rule

    def grant_project(self, key: str, *, effect: Effect = "allow", tool: str | None = None) -> None:
        """Keep an answer about exactly ``key`` for this project (see grants)."""
        with self._lock:
            grant_store.add_grant(self.grant_scope, key, effect, tool)
            self._levels["grant"] = grant_store.load_grants(self.grant_scope)
            self.version += 1

    def check_upgrades(self) -> list[str]:
        """Call once at start: notices about upgraded plugins (their grants are dropped)."""
        from co_core.policy.fingerprints import check_upgrades

        found = check_upgrades(self.specs.values())
        if found:
            self._levels["grant"] = grant_store.load_grants(self.grant_scope)
            self.version += 1
        return found

    # -- explaining --------------------------------------------------------------------

    def tool_for_key(self, key: str) -> tuple[ToolSpec, dict[str, str]] | None:
        """The tool whose permission template produces ``key``, and the arguments it implies."""
        from co_core.policy.templates import tool_for_key

        return tool_for_key(self.specs.values(), key)

    def call_for_key(self, key: str) -> ToolCall:
        """The call a permission key describes (the tool whose template produces it); a
        shell command is spelled as Co would run it."""
        prefix = shell_prefix(key, self.prefixes)
        if prefix is not None:
            key = prefix + key_text(canonical_shell_command(key_value(key[len(prefix) :])))
        found = self.tool_for_key(key)
        spec, args = found if found else (None, {})
        return ToolCall(
            spec.name if spec else "?",
            spec.plugin if spec else "?",
            args,
            key,
            spec.risk if spec else None,
        )

    def explain(self, call: ToolCall) -> tuple[Decision, list[tuple[str, list[Rule]]]]:
        """How ``call`` would be decided, plus every rule matching each of its parts."""
        decision = self.decide(call)
        extra = {"plugin": self._plugin_rules(call), "default": [self._risk_default(call)]}
        rows = []
        for part in decision.parts:
            matching = [
                rule
                for level in LEVELS
                for rule in [*self._levels[level], *extra.get(level, [])]
                if matches(rule.match, part.key, self.prefixes)
            ]
            rows.append((part.key, matching))
        return decision, rows


def _parse_rules(raw: Any, level: Level, origin: str) -> list[Rule]:
    from pydantic import TypeAdapter, ValidationError

    from co_core.kernel.errors import SettingsError
    from co_core.policy.rules import RuleModel

    try:
        models = TypeAdapter(list[RuleModel]).validate_python(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise SettingsError(f"{origin}: policy rules[{where}]: {error['msg']}") from None
    return [Rule(m.match, m.effect, level, origin, m.reason) for m in models]


@functools.cache
def _risk_rule(risk: str | None) -> Rule:
    """The built-in rule for a risk level (one per level, made once)."""
    effect = DEFAULT_BY_RISK.get(risk, "ask")
    return Rule(
        "**", effect, "default", "built-in", reason=f"default for {risk or 'undeclared'}-risk tools"
    )


def approve_flag(key: str) -> str:
    """``--approve 'KEY'``, allowing exactly ``key`` (its wildcards escaped, quoted for a
    shell): what Co suggests when a call was denied for want of an approval."""
    import shlex

    return f"--approve {shlex.quote(escape(key))}"
