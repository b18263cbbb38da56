"""Settings: one JSON file, environment variables, defaults, and trusted project files.

Precedence per key, strongest first: the project's ``.co/settings.json`` (trusted folders
only), the user's ``settings.json``, the key's environment variable, the default. Every
key records where its value came from so errors and ``co config show`` can say so.
"""

from __future__ import annotations

import json
import os
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, Union, get_args, get_origin, overload

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    SecretStr,
    ValidationError,
    field_validator,
)
from pydantic.fields import FieldInfo

from co_core.kernel import modelspec, paths, trust
from co_core.kernel.errors import SettingsError

CORE = "core"


def setting(default: Any = None, *, env: str | None = None, help: str = "", **kw: Any) -> Any:
    """A settings field with its environment variable and a one-line help text."""
    extra: dict[str, JsonValue] | None = {"env": env} if env else None
    return Field(default, description=help, json_schema_extra=extra, **kw)


class SectionModel(BaseModel):
    """Base for settings sections: unknown keys are errors (they are usually typos)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


S = TypeVar("S", bound=SectionModel)


class CoreSettings(SectionModel):
    model: str | None = setting(
        None,
        env="CO_MODEL",
        help="provider:name, e.g. ollama:qwen3:4b, gemini:gemini-2.5-flash, local, "
        "local:NAME (`co models list`); empty or auto: Co chooses",
    )
    base_url: str | None = setting(
        None,
        env="CO_BASE_URL",
        help="base URL for openai-compatible: models (llama.cpp, vLLM, LM Studio)",
    )
    api_key: SecretStr | None = setting(
        None, env="CO_API_KEY", help="API key for openai-compatible: models"
    )
    ollama_host: str = setting("http://localhost:11434", env="OLLAMA_HOST", help="Ollama server")
    ollama_model: str = setting(
        "qwen3:4b", env="OLLAMA_MODEL", help="model used for ollama when none is named"
    )
    gemini_api_key: SecretStr | None = setting(None, env="GEMINI_API_KEY", help="Gemini API key")
    gemini_model: str = setting(
        "gemini-2.5-flash", env="GEMINI_MODEL", help="model used for gemini"
    )
    retries: int = setting(
        3, env="CO_RETRIES", ge=0, le=10, help="times a tool may be retried per turn"
    )
    request_limit: int = setting(
        25, env="CO_REQUEST_LIMIT", ge=1, help="model requests allowed per turn"
    )
    request_timeout: float = setting(
        300.0,
        env="CO_REQUEST_TIMEOUT",
        gt=0,
        help="seconds one model request may take, streamed answer included",
    )
    tool_budget: int | None = setting(
        None,
        env="CO_TOOL_BUDGET",
        ge=0,
        help="tokens of tool descriptions sent with each request; default: 1/8 of the "
        "model's context window (600 for local)",
    )
    text_tool_calls: bool = setting(
        True, env="CO_TEXT_TOOL_CALLS", help="run tool calls that small models write as JSON text"
    )
    disabled_plugins: list[str] = setting(
        [], env="CO_DISABLED_PLUGINS", help="plugins never loaded"
    )

    @field_validator("model")
    @classmethod
    def _model_form(cls, value: str | None) -> str | None:
        """A model string of a known form: a typo is refused where it is written."""
        if value is None or not value.strip():
            return None
        return modelspec.check(value, modelspec.known())


def env_name(section: str, key: str, info: FieldInfo) -> str:
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    if extra.get("env"):
        return str(extra["env"])
    prefix = "CO_" if section == CORE else f"CO_{section.upper()}_"
    return (prefix + key).upper()


def is_secret(info: FieldInfo) -> bool:
    return _mentions(info.annotation, SecretStr)


def _mentions(annotation: object, target: type) -> bool:
    if annotation is target:
        return True
    return any(_mentions(arg, target) for arg in get_args(annotation))


def _is_list(annotation: object) -> bool:
    if get_origin(annotation) in (Union, types.UnionType):
        return any(_is_list(a) for a in get_args(annotation))
    return get_origin(annotation) in (list, tuple, set) or annotation in (list, tuple, set)


def _env_value(raw: str, info: FieldInfo) -> JsonValue:
    text = raw.strip()
    if _is_list(info.annotation) and not text.startswith("["):
        return [part.strip() for part in text.split(",") if part.strip()]
    if text[:1] in "[{":
        try:
            parsed: JsonValue = json.loads(text)
            return parsed
        except ValueError:
            pass
    return raw


def read_json(path: Path) -> dict[str, JsonValue]:
    """A settings file as a dict; missing is empty, anything else wrong is a SettingsError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read: {exc.strerror}") from exc
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"{path}: line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}"
        ) from exc
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: must hold a JSON object, not {type(data).__name__}")
    return data


@dataclass
class Layer:
    """One place settings come from: a file, or the environment."""

    label: str
    data: dict[str, JsonValue]
    path: Path | None = None
    section_names: frozenset[str] = frozenset()

    def section(self, name: str) -> dict[str, JsonValue]:
        if name == CORE:
            # Top-level keys are core settings, except objects that are not core fields:
            # those are plugin sections (maybe of a plugin that is not installed now).
            core_fields = CoreSettings.model_fields
            return {
                k: v
                for k, v in self.data.items()
                if k in core_fields or (k not in self.section_names and not isinstance(v, dict))
            }
        value = self.data.get(name, {})
        if not isinstance(value, dict):
            where = self.path or self.label
            raise SettingsError(f"{where}: {name}: must be an object of settings, not {value!r}")
        return value


@dataclass
class Settings:
    """Validated settings: the core section plus one section per plugin."""

    core: CoreSettings
    sections: dict[str, SectionModel]
    sources: dict[str, str] = field(default_factory=dict)
    user_file: Path = field(default_factory=paths.settings_file)
    project_file: Path | None = None
    notices: list[str] = field(default_factory=list)

    def find(self, model: type[S]) -> S | None:
        """The section whose model is ``model``, or None when no plugin registered it."""
        for section in self.sections.values():
            if type(section) is model:
                return section
        return None

    @overload
    def section(self, name: type[S]) -> S: ...
    @overload
    def section(self, name: str) -> Any: ...
    def section(self, name: type[S] | str) -> Any:
        """A section by name, or by its model class (typed: ``section(ShellSettings)``)."""
        if isinstance(name, type):
            if name is CoreSettings:
                return self.core
            found = self.find(name)
            if found is None:
                raise KeyError(f"no settings section of type {name.__name__}")
            return found
        if name == CORE:
            return self.core
        return self.sections[name]

    def all_sections(self) -> dict[str, SectionModel]:
        return {CORE: self.core, **self.sections}

    def get(self, dotted: str) -> object:
        section, key = split_key(dotted, self.all_sections())
        return getattr(self.section(section), key)

    def rows(self) -> list[tuple[str, object, str, bool]]:
        """(key, value, source, secret) for every setting, for ``co config show``."""
        out = []
        for name, model in self.all_sections().items():
            for key, info in type(model).model_fields.items():
                dotted = key if name == CORE else f"{name}.{key}"
                out.append(
                    (
                        dotted,
                        getattr(model, key),
                        self.sources.get(dotted, "default"),
                        is_secret(info),
                    )
                )
        return out


def split_key(
    dotted: str, sections: Mapping[str, SectionModel | type[SectionModel]]
) -> tuple[str, str]:
    """``"obsidian.vault_path"`` -> ``("obsidian", "vault_path")``; core keys have no dot."""
    section, dot, key = dotted.partition(".")
    if not dot:
        section, key = CORE, dotted
    model = sections.get(section)
    kind = model if isinstance(model, type) else type(model)
    fields = kind.model_fields if model is not None and issubclass(kind, SectionModel) else {}
    if key not in fields:
        raise SettingsError(f"unknown setting {dotted!r}; `co config show` lists them all")
    return section, key


def _validate(
    name: str, model: type[SectionModel], layers: list[Layer], sources: dict[str, str]
) -> SectionModel:
    raw: dict[str, JsonValue] = {}
    origin: dict[str, Layer] = {}
    env_names: dict[str, str] = {}
    for key, info in model.model_fields.items():
        dotted = key if name == CORE else f"{name}.{key}"
        env_names[key] = env_name(name, key, info)
        for layer in layers:
            values = layer.section(name)
            if key in values:
                raw[key], origin[key] = values[key], layer
                sources[dotted] = layer.label
                break
        else:
            env_value = os.environ.get(env_names[key])
            if env_value is not None and env_value != "":
                raw[key] = _env_value(env_value, info)
                sources[dotted] = f"env:{env_names[key]}"
    for layer in layers:
        for key in layer.section(name):
            if key not in model.model_fields:
                raw.setdefault(key, layer.section(name)[key])
                origin.setdefault(key, layer)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = str(error["loc"][0]) if error["loc"] else ""
        dotted = key if name == CORE else f"{name}.{key}"
        if key in origin:
            where = str(origin[key].path)
        elif key in env_names:
            where = f"environment variable {env_names[key]}"
        else:
            where = "settings"
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown setting (a typo? `co config show` lists them)"
        elif (
            "input" in error
            and not isinstance(error["input"], dict)
            and not is_secret_key(model, key)
        ):
            message += f" (got {error['input']!r})"
        raise SettingsError(f"{where}: {dotted}: {message}") from None


def is_secret_key(model: type[SectionModel], key: str) -> bool:
    info = model.model_fields.get(key)
    return info is not None and is_secret(info)


def load_layers(cwd: Path | None = None) -> tuple[list[Layer], Path | None, list[str]]:
    """The file layers, strongest first, plus notices about ignored project files."""
    notices: list[str] = []
    layers: list[Layer] = []
    project_file = None
    root = trust.project_root(cwd)
    if root is not None and (root / ".co" / "settings.json").is_file():
        candidate = root / ".co" / "settings.json"
        if trust.is_trusted(root):
            layers.append(Layer("project", read_json(candidate), candidate))
            project_file = candidate
        else:
            notices.append(
                f"ignoring {candidate}: folder not trusted (run `co trust {root}` to use it)"
            )
    user = paths.settings_file()
    layers.append(Layer("file", read_json(user), user))
    return layers, project_file, notices


def load_core(cwd: Path | None = None) -> CoreSettings:
    """Just the core section: enough to know which plugins to load."""
    layers, _, _ = load_layers(cwd)
    return _validate(CORE, CoreSettings, layers, {})  # type: ignore[return-value]


def load_settings(
    section_models: Mapping[str, type[SectionModel]], cwd: Path | None = None
) -> Settings:
    layers, project_file, notices = load_layers(cwd)
    for layer in layers:
        layer.section_names = frozenset(section_models)
    sources: dict[str, str] = {}
    core = _validate(CORE, CoreSettings, layers, sources)
    sections = {
        name: _validate(name, model, layers, sources) for name, model in section_models.items()
    }
    return Settings(core, sections, sources, paths.settings_file(), project_file, notices)  # type: ignore[arg-type]


def set_value(
    dotted: str, value: str | None, section_models: Mapping[str, type[SectionModel]]
) -> JsonValue:
    """Write one key to the user's settings file (None removes it); returns the stored value."""
    models: dict[str, type[SectionModel]] = {CORE: CoreSettings, **section_models}
    section, key = split_key(dotted, models)
    path = paths.settings_file()
    data = read_json(path)
    target = data
    if section != CORE:
        found = data.get(section)
        target = found if isinstance(found, dict) else {}
        data[section] = target
    if value is None:
        target.pop(key, None)
    else:
        target[key] = _coerce(models[section], key, value, path, dotted)
    if section != CORE and not target:
        data.pop(section, None)
    paths.write_private(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
    return target.get(key)


def _coerce(model: type[SectionModel], key: str, text: str, path: Path, dotted: str) -> JsonValue:
    """Store the text as a string if the field takes it, else as JSON (numbers, lists, booleans)."""
    candidates: list[JsonValue] = []
    try:
        candidates.append(json.loads(text))
    except ValueError:
        if _is_list(model.model_fields[key].annotation):
            candidates.append([p.strip() for p in text.split(",") if p.strip()])
    candidates.append(text)
    error = ""
    for candidate in candidates:
        try:
            model.__pydantic_validator__.validate_assignment(
                model.model_construct(), key, candidate
            )
        except ValidationError as exc:
            error = error or exc.errors()[0]["msg"].removeprefix(
                "Value error, "
            )  # the first reading says most
            continue
        return candidate
    raise SettingsError(f"{path}: {dotted}: {error} (got {text!r})")
