"""Co steering a small model: what the user's words ask for, which tool Co routes them to,
and what a steered model may call. With Co's bundled plugins (shell, Obsidian, Google,
Slack: the last two not signed in) and, end to end, a steered model served by a scripted
OpenAI-compatible server (tests/openai_server.py) while the real agent and tools run."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gbnf_check
import pytest
from openai_server import Server

from co_core.agent.assembly.build import load_tools
from co_core.agent.local.constrained import ConstrainedModel
from co_core.agent.models import compat_model, resolve
from co_core.agent.tools.lexicon import TRANSLATIONS
from co_core.agent.tools.toolbox import Toolbox
from co_core.kernel.app import App
from co_core.steering.intent import VERB_OF, read_intent
from co_core.steering.lexicon import EFFECT_VERBS
from co_core.steering.route import Route, route
from co_core.testing import make_app, run_turn

# -- what the words ask for ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "effects"),
    [
        ("Create a note named Shopping with the text: milk", {"write"}),
        ("Crée une note Shopping avec le texte : lait", {"write"}),
        ("Erstelle eine Notiz Shopping mit dem Inhalt: Milch", {"write"}),
        ("Crea una nota Shopping con el texto: leche", {"write"}),
        ("Could you please add '- milk' to my Todo note?", {"write"}),
        ("Post 'standup in 5' to #general on Slack", {"send"}),
        ("Envoie 'salut' dans #general sur Slack", {"send"}),
        ("Schick 'hallo' an #general in Slack", {"send"}),
        ("Run `ls -la`", {"exec"}),
        ("Exécute `ls -la`", {"exec"}),
        ("Führe `ls -la` aus", {"exec"}),
        ("Ejecuta `ls -la`", {"exec"}),
        ("How many lines does server.log have? Use `wc -l`.", {"exec"}),
        ("Delete old.log with `rm old.log`.", {"write", "exec"}),
        # nothing asked
        ("show me what is in sales.csv", set()),
        ("What port does config.ini set for the server?", set()),
        ("I need to know the server's port; it's set in config.ini.", set()),
        ("Don't delete anything, just list the files.", set()),
        ("Ne supprime rien, liste seulement les fichiers.", set()),
        ("Lösche nicht, zeig mir nur die Dateien.", set()),
        ("Search my notes for 'delete old files'.", set()),
        ("Is the draft in my notes?", set()),
        ("I'm curious what `echo hi | rev` prints.", set()),
        ("Good morning! Busy day ahead of me, hope you're well.", set()),
    ],
)
def test_only_an_explicit_verb_asks_for_an_effect(text: str, effects: set[str]) -> None:
    assert set(read_intent(text).effects) == effects


def _asking_forms() -> list[tuple[str, str]]:
    """Every verb of the tables in the form that asks, with its effect."""
    forms = [(verb, effect) for effect, verbs in EFFECT_VERBS.items() for verb in verbs]
    for table in TRANSLATIONS.values():
        for word, english in table.items():
            if english in VERB_OF and not word.endswith("*"):
                forms.append((word, VERB_OF[english]))
    return forms


@pytest.mark.parametrize(("verb", "effect"), _asking_forms())
def test_every_verb_of_the_tables_asks_only_when_said_as_a_request(verb: str, effect: str) -> None:
    """Generated from the tables: each verb asks for its effect at the head of a request,
    and asks for nothing when negated or quoted (what to handle, not what to do)."""
    said = f"{verb.capitalize()} notes.txt now"
    assert effect in read_intent(said).effects, said
    for quiet in (f"Don't {verb} notes.txt", f"Search my notes for '{verb}'"):
        assert effect not in read_intent(quiet).effects, quiet


def test_a_write_verb_asks_for_a_write_only_of_what_its_clause_names() -> None:
    intent = read_intent("I want to write to Alice but don't have her address; it's in people.csv")
    assert intent.effects == {"write"}
    assert not intent.asks("write", ["write", "file"])  # the verb's clause names no file
    assert read_intent("Write the file hello.txt: hi").asks("write", ["write", "file"])
    assert read_intent("Add '- milk' to my Todo note").asks("write", ["append", "note"])


# -- which tool: the bundled plugins ---------------------------------------------------------


@pytest.fixture
def bundled(co_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[App]:
    """Co with its four bundled plugins: a workspace, a vault, Google and Slack not set up."""
    monkeypatch.delenv("CO_LOAD_PLUGINS", raising=False)
    for name in ("SLACK_BOT_TOKEN", "SLACK_USER_TOKEN", "OBSIDIAN_VAULT_PATH"):
        monkeypatch.delenv(name, raising=False)
    vault, work = tmp_path / "vault", tmp_path / "work"
    vault.mkdir()
    work.mkdir()
    (vault / "Todo.md").write_text("# Todo\n\n- water plants\n")
    (work / "sales.csv").write_text("month,total\nmay,12\n")
    settings = {"obsidian": {"vault_path": str(vault)}, "shell": {"sandbox": "bubblewrap"}}
    app = make_app(settings, cwd=work)
    assert isinstance(app, App)
    yield app


def toolbox(app: App) -> Toolbox:
    specs = {spec.name: spec for spec in app.host.tools()}
    box = Toolbox(app.host, app.settings, specs)
    box.refresh()
    for tool in load_tools(app.host, lambda message: None):
        box._all[tool.name] = tool.tool_def
    return box


def routed(app: App, text: str) -> Route:
    return route(read_intent(text), toolbox(app))


def test_a_greeting_that_mentions_a_busy_day_is_not_about_google(bundled: App) -> None:
    chosen = routed(bundled, "Good morning! Busy day ahead of me, hope you're well.")
    assert chosen.kind == "free" and "google" not in chosen.answer.lower()


@pytest.mark.parametrize(
    "text",
    [
        "show me what is in sales.csv",
        "What is Bob's phone number in contacts.json?",
        "Explain the code in sales.csv",
        "sales.csv: how much in may?",
    ],
)
def test_a_file_named_without_an_action_is_read_never_written_or_run(
    bundled: App, text: str
) -> None:
    box = toolbox(bundled)
    chosen = route(read_intent(text), box)
    assert chosen.kind in ("call", "among") and "read_file" in chosen.tools, chosen
    assert all(box.effect(name) == "read" for name in chosen.tools)


@pytest.mark.parametrize(
    "text",
    [
        "Which emails did I archive last week?",
        "I want to write to Alice but don't have her address; it's in people.csv",
        "I'm curious what `echo hi | rev` prints.",
        "The server should listen on port 8088; config.ini has the old one.",
    ],
)
def test_no_write_send_or_exec_tool_is_chosen_unless_asked(bundled: App, text: str) -> None:
    box = toolbox(bundled)
    chosen = route(read_intent(text), box)
    forced = chosen.tools if chosen.kind in ("call", "among") else ()
    assert all(box.effect(name) == "read" for name in forced), chosen


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("Add '- milk' to my Todo note.", "append_to_note"),
        ("Ajoute '- lait' à ma note Todo.", "append_to_note"),
        # a setting's new value is no text to search for: set_file_value, not edit_file
        ("In settings.toml change the timeout to 30.", "set_file_value"),
        ("Ändere in config.ini den Port auf 8088.", "set_file_value"),
        ("Remplace le port dans config.ini par 8088.", "set_file_value"),
        ("Cambia el puerto en config.ini a 8088.", "set_file_value"),
        ("Mets le port de config.ini à 8088.", "set_file_value"),  # never write_file
        ("Put 'hello' in hello.txt", "write_file"),  # the new content, quoted
        # quoted texts to search for and to put in its place: edit_file
        ("Replace 'teh' with 'the' in README.md.", "edit_file"),
        ("Change 'Hello' to 'Hi' in greeting.txt", "edit_file"),
        ("Liste les fichiers de ce dossier.", "list_files"),
        ("Durchsuche meine Notizen nach 'wifi'.", "search_notes"),
        # close scores, but only one of the close tools does what the words ask
        ("How many lines does server.log have? Use `wc -l`.", "run_shell_command"),
        ("Wie viele Zeilen hat server.log? Nimm `wc -l`.", "run_shell_command"),
        ("¿Cuántas líneas tiene server.log? Usa `wc -l`.", "run_shell_command"),
        ("Create a file hello.txt in this folder containing: hi", "write_file"),
    ],
)
def test_an_asked_action_routes_to_its_tool_in_any_language(
    bundled: App, text: str, tool: str
) -> None:
    assert routed(bundled, text) == Route("call", (tool,), why=routed(bundled, text).why)


@pytest.mark.parametrize(
    "text",
    [
        "Write hello world into hello.txt",
        "Mets le port de config.ini à 8088 dans le fichier",
        "Schreib in sales.csv die Summe",
    ],
)
def test_a_files_new_content_is_never_a_run_of_the_words(bundled: App, text: str) -> None:
    """A run of the words would replace the whole file ("config.ini" written into
    config.ini): write_file is called only with content given whole."""
    chosen = routed(bundled, text)
    assert not (chosen.kind in ("call", "among") and "write_file" in chosen.tools), chosen
    if chosen.kind == "ask":  # Co asks for the content instead, in one sentence
        assert "content" in chosen.answer and chosen.answer.count(".") <= 1, chosen


def test_a_tool_that_is_not_set_up_is_answered_for_only_when_asked(bundled: App) -> None:
    chosen = routed(bundled, "List my Slack channels.")
    assert chosen.kind == "setup" and "co slack login" in chosen.answer
    assert routed(bundled, "Slack channels, what a mess, honestly.").kind == "free"


def test_an_effect_not_asked_for_is_asked_about(bundled: App) -> None:
    chosen = routed(bundled, "I'm curious what `echo hi | rev` prints, can you tell me?")
    assert chosen.kind == "ask" and chosen.tools == ("run_shell_command",)
    assert 'say, for example, "run ..."' in chosen.answer


# -- end to end: a steered model over a scripted server ---------------------------------------


@pytest.fixture
def replies() -> Iterator[tuple[Server, list[dict[str, Any]]]]:
    queue: list[dict[str, Any]] = []
    with Server(lambda body: queue.pop(0) if queue else {"text": "(nothing queued)"}) as server:
        yield server, queue


def steered(server: Server) -> ConstrainedModel:
    compat = compat_model("small", server.base_url, None, "llama-cpp", stream_tools=False)
    return ConstrainedModel(compat, small=True, words=True)


def call(name: str, /, **args: Any) -> dict[str, Any]:
    return {"text": json.dumps({"name": name, "arguments": args})}


def constraint(body: dict[str, Any]) -> str:
    """What a request constrains its answer to, as text (a grammar, or a JSON schema)."""
    if "grammar" in body:
        return str(body["grammar"]).replace('\\"', '"')  # GBNF writes JSON's quotes escaped
    return json.dumps(body["response_format"]["schema"])


def only_calls(body: dict[str, Any]) -> bool:
    """Does the request ask for a call and nothing else (no plain answer)?"""
    return "grammar" not in body and '"answer"' not in constraint(body)


def arguments(body: dict[str, Any], tool: str) -> dict[str, Any]:
    """The JSON schema a forced call's arguments must match."""
    schema = body["response_format"]["schema"]
    for option in schema.get("anyOf", [schema]):
        if option["properties"]["name"].get("const") == tool:
            found: dict[str, Any] = option["properties"]["arguments"]
            return found
    raise AssertionError(f"{tool} is not offered")


def accepts(body: dict[str, Any], answer: str) -> bool:
    if "grammar" in body:
        return gbnf_check.accepts(body["grammar"], answer)
    return gbnf_check.accepts_schema(body["response_format"]["schema"], answer)


def offered(body: dict[str, Any]) -> set[str]:
    text = constraint(body)
    return {name for name in ("read_file", "write_file", "edit_file", "list_files") if
            f'"{name}"' in text or f'\\"{name}\\"' in text}  # fmt: skip


def test_a_steered_model_is_not_offered_a_write_nobody_asked_for(
    bundled: App, replies: tuple[Server, list[dict[str, Any]]]
) -> None:
    server, queue = replies
    queue.append({"text": "Alice? I do not know her address."})
    turn = run_turn(
        bundled,
        "I want to write to Alice but don't have her address; it's in people.csv",
        steered(server),
    )
    assert turn.calls == []
    assert offered(server.requests[0]) <= {"read_file", "list_files"}  # no write_file
    assert (bundled.cwd / "sales.csv").read_text() == "month,total\nmay,12\n"


def test_a_steered_model_reads_the_file_it_is_asked_about_and_answers(
    bundled: App, replies: tuple[Server, list[dict[str, Any]]]
) -> None:
    server, queue = replies
    queue += [call("read_file", path="sales.csv"), {"text": "Month and total: May, 12."}]
    turn = run_turn(bundled, "show me what is in sales.csv", steered(server))
    assert "read_file" in offered(server.requests[0])
    assert not {"write_file", "edit_file"} & offered(server.requests[0])
    assert only_calls(server.requests[0])  # Co asked for a call
    assert [(c["tool"], c["status"]) for c in turn.calls] == [("read_file", "ok")]
    assert turn.output == "Month and total: May, 12."


# -- optional arguments the words supply: the schema Co sends, checked by llama.cpp -----------


@pytest.fixture
def sandboxed(co_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[App]:
    """Co with its bundled plugins in a workspace the sandbox's user can enter (as root,
    bubblewrap runs commands as uid 1000, which cannot reach pytest's private tmp_path)."""
    monkeypatch.delenv("CO_LOAD_PLUGINS", raising=False)
    work = Path(tempfile.mkdtemp(prefix="co-steer-"))
    work.chmod(0o755)
    if os.getuid() == 0:
        os.chown(work, 1000, 1000)
    try:
        app = make_app({"shell": {"sandbox": "bubblewrap"}}, cwd=work)
        assert isinstance(app, App)
        yield app
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_a_steered_run_python_call_gets_the_code_the_user_wrote(
    sandboxed: App, replies: tuple[Server, list[dict[str, Any]]]
) -> None:
    server, queue = replies
    made = call("run_python", code="7919 * 104729")
    queue += [made, {"text": "It is 829348951."}]
    turn = run_turn(sandboxed, "Run this Python: `7919 * 104729`", steered(server), approvals=True)
    grammar = server.requests[0]
    assert only_calls(grammar) and '"code"' in constraint(grammar)
    # llama.cpp's grammar engine lets a model write that call, and no code of its own
    assert accepts(grammar, made["text"])
    assert not accepts(grammar, call("run_python", code="import os")["text"])
    assert [(c["tool"], c["args"]["code"], c["status"]) for c in turn.calls] == [
        ("run_python", "7919 * 104729", "ok")
    ]
    assert "829348951" in server.requests[1]["messages"][-1]["content"]  # the snippet's value
    assert turn.output == "It is 829348951."


def test_a_steered_list_notes_call_gets_the_folder_the_user_named(
    bundled: App, replies: tuple[Server, list[dict[str, Any]]]
) -> None:
    server, queue = replies
    vault = bundled.cwd.parent / "vault"
    (vault / "Projects").mkdir()
    (vault / "Projects" / "Roadmap.md").write_text("# Roadmap\n")
    (vault / "Elsewhere.md").write_text("# Elsewhere\n")
    made = call("list_notes", folder="Projects")
    queue += [made, {"text": "Projects holds Roadmap."}]
    turn = run_turn(bundled, "List the notes in my Projects folder", steered(server))
    grammar = server.requests[0]
    assert '"folder"' in constraint(grammar)
    assert accepts(grammar, made["text"])
    assert not accepts(grammar, call("list_notes", folder="Archive")["text"])
    assert [(c["tool"], c["args"]["folder"], c["status"]) for c in turn.calls] == [
        ("list_notes", "Projects", "ok")
    ]
    seen = server.requests[1]["messages"][-1]["content"]
    assert "Roadmap" in seen and "Elsewhere" not in seen  # only that folder was listed


# -- which run of the words goes into which argument (co_core.steering.values) ---------------

# (words, the note's name, the text): a name with the text after a colon, in quotes,
# with several quoted parts, in the four languages Co reads
NOTE_WORDINGS = [
    ("Create a note named Shopping with the text: milk, eggs", "Shopping", "milk, eggs"),
    ("Crée une note nommée Shopping avec le texte : milk, eggs", "Shopping", "milk, eggs"),
    ("Leg eine Notiz Shopping an mit dem Text: milk, eggs", "Shopping", "milk, eggs"),
    ("Crea una nota llamada Shopping con el texto: milk, eggs", "Shopping", "milk, eggs"),
    ("Append the line '- call Dr. Smith' to my note Inbox.", "Inbox", "- call Dr. Smith"),
    ("Ajoute la ligne « - call Dr. Smith » à ma note Inbox.", "Inbox", "- call Dr. Smith"),
    ("Häng die Zeile „- call Dr. Smith“ an meine Notiz Inbox an.", "Inbox", "- call Dr. Smith"),
    ("Put '- call Dr. Smith' in my note 'Inbox'", "Inbox", "- call Dr. Smith"),
    ("Erstelle eine Notiz Shopping mit dem Inhalt: milk, eggs", "Shopping", "milk, eggs"),
    ("Füge '- call Dr. Smith' zu meiner Inbox-Notiz hinzu.", "Inbox", "- call Dr. Smith"),
]


def forced(tool: str, words: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The request body Co sends when a steered model must call the bundled ``tool`` with
    values from ``words`` (its resolver aside), and the arguments' properties."""
    import dataclasses

    from co_core.agent.local.constrained import ARGUMENTS, request_body, response_schema
    from co_core.kernel.tools import ToolSpec
    from co_core.steering.contracts import read_contract
    from co_core.steering.values import Reading

    app = make_app()
    tool_def = {t.name: t for t in load_tools(app.host, print)}[tool].tool_def
    spec: ToolSpec = {s.name: s for s in app.host.tools()}[tool]
    found = read_contract(tool, spec, tool_def.parameters_json_schema, tool_def.description or "")
    copied = Reading.of(
        tool_def.parameters_json_schema,
        name=tool,
        description=tool_def.description or "",
        roles=found.roles,
        does=found.does,
        words_=words,
        resolves=spec.resolve is not None,
    ).schema()
    assert copied is not None, f"{tool} cannot be called with {words!r}"
    made = dataclasses.replace(tool_def, metadata={ARGUMENTS: copied})
    return request_body(response_schema([made], text=False), "llama.cpp"), copied["properties"]


@pytest.mark.parametrize(("words", "name", "text"), NOTE_WORDINGS)
def test_a_forced_call_copies_the_name_and_the_text_each_from_its_own_part_of_the_words(
    co_dirs: Path, monkeypatch: pytest.MonkeyPatch, words: str, name: str, text: str
) -> None:
    """The text is the literal part (after the colon, in quotes); the name is never a piece
    of it, nor the words that say which tool ("note", "text", "named")."""
    monkeypatch.delenv("CO_LOAD_PLUGINS", raising=False)
    tool = "append_to_note" if "Inbox" in words else "create_note"
    grammar, arguments = forced(tool, words)
    right = call(tool, name=name, content=text)["text"]
    assert accepts(grammar, right)
    swapped = call(tool, name=text, content=name)["text"]
    if f"'{name}'" not in words:  # with the name quoted too, either part may be either
        assert not accepts(grammar, swapped)
    piece = [text.split(",")[0]] if "," in text else [text[2:]]  # never a piece of the text
    for wrong in (f"{name} with the text", "note", "named " + name, f"{name}-", *piece):
        assert not accepts(grammar, call(tool, name=wrong, content=text)["text"])
    # Ollama's JSON schema allows the same values
    assert text in arguments["content"]["enum"]
    names = arguments["name"]["enum"]
    assert name in names and f"{name} with the text" not in names
    for other in names:  # test by difference: each value the schema lists, the grammar allows
        assert accepts(grammar, call(tool, name=other, content=text)["text"])


def test_a_steered_append_writes_the_quoted_line_to_the_note_named(
    bundled: App, replies: tuple[Server, list[dict[str, Any]]]
) -> None:
    server, queue = replies
    made = call("append_to_note", name="Todo", content="- call Dr. Smith")
    queue += [made, {"text": "Added."}]
    words = "Ajoute la ligne '- call Dr. Smith' à ma note Todo."
    turn = run_turn(bundled, words, steered(server), approvals=True)
    assert accepts(server.requests[0], made["text"])
    assert [(c["tool"], c["status"]) for c in turn.calls] == [("append_to_note", "ok")]
    todo = (bundled.cwd.parent / "vault" / "Todo.md").read_text()
    assert todo.endswith("- call Dr. Smith\n") and "water plants" in todo


@pytest.mark.parametrize(
    ("words", "name"),
    [
        ("Lis ma note Recipes/Pancakes : quelle température de four indique-t-elle ?", "x"),
        ("Read my note Recipes/Pancakes: what oven temperature does it say?", "x"),
    ],
)
def test_a_copied_name_never_runs_across_the_end_of_a_clause(
    co_dirs: Path, monkeypatch: pytest.MonkeyPatch, words: str, name: str
) -> None:
    monkeypatch.delenv("CO_LOAD_PLUGINS", raising=False)
    grammar, arguments = forced("read_note", words)
    names = arguments["name"]["enum"]
    assert "Recipes/Pancakes" in names
    assert not [n for n in names if ":" in n or "?" in n or n.lower().startswith("quel")]
    assert accepts(grammar, call("read_note", name="Recipes/Pancakes")["text"])
    crossing = call("read_note", name="Recipes/Pancakes : quelle")["text"]
    assert not accepts(grammar, crossing)


@pytest.mark.parametrize(
    "words",
    [
        "Lis ma note Recipes/Pancakes : quelle température de four indique-t-elle ?",
        "Read my note Recipes/Pancakes: what oven temperature does it say?",
        "Ouvre Recipes/Pancakes dans mes notes et dis-moi la température du four.",
    ],
)
def test_a_forced_call_names_only_what_the_tools_resolver_finds(
    bundled: App, replies: tuple[Server, list[dict[str, Any]]], words: str
) -> None:
    """Of the runs of the words, only the one that names a real note may be the note read
    (co-obsidian's resolver says which), and the model's answer that does not say what
    the note says ("# Pancakes": the note's name, which every line about it repeats) is
    replaced by the line that does, found across languages."""
    server, queue = replies
    recipes = bundled.cwd.parent / "vault" / "Recipes"
    recipes.mkdir()
    (recipes / "Pancakes.md").write_text(
        "# Pancakes\n\nFlour, milk, 2 eggs.\nOven temperature: 211 degrees.\n"
    )
    made = call("read_note", name="Recipes/Pancakes")
    queue += [made, {"text": "# Pancakes"}]
    turn = run_turn(bundled, words, steered(server))
    grammar = server.requests[0]
    assert accepts(grammar, made["text"])
    for wrong in ("température de four", "Temperatur", "oven temperature", "Pancakes", "Todo"):
        assert not accepts(grammar, call("read_note", name=wrong)["text"])
    assert [(c["tool"], c["status"]) for c in turn.calls] == [("read_note", "ok")]
    assert "211 degrees" in turn.output


def test_a_resolver_that_accepts_every_run_leaves_the_call_as_it_was(
    bundled: App, replies: tuple[Server, list[dict[str, Any]]]
) -> None:
    """create_note's resolver accepts any new name: a name no note has yet is copied as
    before, and the note is made."""
    server, queue = replies
    made = call("create_note", name="Shopping", content="milk, eggs")
    queue += [made, {"text": "Created."}]
    words = "Create a note named Shopping with the text: milk, eggs"
    turn = run_turn(bundled, words, steered(server), approvals=True)
    assert accepts(server.requests[0], made["text"])
    assert [(c["tool"], c["status"]) for c in turn.calls] == [("create_note", "ok")]
    assert "milk, eggs" in (bundled.cwd.parent / "vault" / "Shopping.md").read_text()


@pytest.mark.parametrize(
    ("words", "key"),
    [
        ("Ändere in config.ini den Port auf 8088.", "Port"),
        ("Set the port in config.ini to 8088.", "port"),
        ("Remplace le port dans config.ini par 8088.", "port"),
    ],
)
def test_a_setting_is_changed_by_its_key_found_in_the_file_and_said_as_the_tool_says_it(
    bundled: App, replies: tuple[Server, list[dict[str, Any]]], words: str, key: str
) -> None:
    """The key is a run of the words that the file sets (co-shell's resolver reads it),
    the value another run, never a piece of the file's name; the write is confirmed by
    the tool's own line, not retold by the model."""
    server, queue = replies
    config = bundled.cwd / "config.ini"
    config.write_text("[server]\nhost = 127.0.0.1\nport = 41234\n")
    made = call("set_file_value", path="config.ini", key=key, value="8088")
    queue += [made, {"text": "The request was denied."}]
    turn = run_turn(bundled, words, steered(server), approvals=True)
    grammar = server.requests[0]
    assert accepts(grammar, made["text"])
    for wrong_key, value in ((key, ".ini"), (key, key), ("8088", "8088"), ("host", "8088")):
        wrong = call("set_file_value", path="config.ini", key=wrong_key, value=value)
        assert not accepts(grammar, wrong["text"])
    assert config.read_text() == "[server]\nhost = 127.0.0.1\nport = 8088\n"
    assert turn.output == f"set {key} in config.ini, line 3: port = 41234 -> port = 8088"
    assert len(server.requests) == 1  # no model request to retell it


def test_a_routed_tool_is_carried_even_when_the_tool_budget_leaves_it_out(
    sandboxed: App, replies: tuple[Server, list[dict[str, Any]]]
) -> None:
    """The local model's tool budget ranks the read tools first for these words; the exec
    tools Co routes them to are sent anyway, and the call runs (it is not refused as "not
    offered in this step")."""
    server, queue = replies
    work = sandboxed.cwd
    (work / "blob.txt").write_text("hello\n")
    (work / "vault").mkdir()  # with the notes tools too, the budget cannot carry them all
    settings = {"shell": {"sandbox": "bubblewrap"}, "obsidian": {"vault_path": str(work / "vault")}}
    app = make_app(settings, cwd=work)
    assert isinstance(app, App)
    queue += [call("run_shell_command", cmd="sha256sum blob.txt"), {"text": "Done."}]
    words = "Berechne mit sha256sum den Hash von blob.txt."
    turn = run_turn(app, words, steered(server), approvals=True)
    assert '"run_shell_command"' in constraint(server.requests[0])
    assert [(c["tool"], c["status"]) for c in turn.calls] == [("run_shell_command", "ok")]
    assert "5891b5b522d5df08" in server.requests[1]["messages"][-1]["content"]  # its hash


def test_a_copied_number_is_written_as_json_writes_it() -> None:
    """ "02" and the "05" of a date are 2 and 5: a JSON number has no leading zero (the
    Ollama schema failed to build on them, and the grammar allowed an unparsable call).
    A tool of our own whose ``number`` picks a page."""
    import dataclasses

    from pydantic_ai.tools import ToolDefinition

    from co_core.agent.local.constrained import ARGUMENTS, request_body, response_schema
    from co_core.steering.values import Reading

    words = "Search my scrolls for 'standup 2024-05-01', page 02"
    schema = {
        "type": "object",
        "properties": {"words": {"type": "string"}, "leaf": {"type": "integer"}},
        "required": ["words", "leaf"],
    }
    copied = Reading.of(
        schema,
        name="hunt_scrolls",
        description="Look for words in the scrolls.",
        roles={"words": "query", "leaf": "number"},
        does="searches",
        words_=words,
    ).schema()
    assert copied is not None
    assert 2 in copied["properties"]["leaf"]["enum"] and 5 in copied["properties"]["leaf"]["enum"]
    tool = ToolDefinition(name="hunt_scrolls", parameters_json_schema=schema)
    made_tool = dataclasses.replace(tool, metadata={ARGUMENTS: copied})
    body = request_body(response_schema([made_tool], text=False), "llama.cpp")
    made = call("hunt_scrolls", words="standup 2024-05-01", leaf=2)["text"]
    assert accepts(body, made)
    assert not accepts(body, made.replace('"leaf": 2', '"leaf": 02'))


@pytest.mark.parametrize(
    "words",
    [
        "Add a recipe for Tasmitas soup: leeks, stock.",
        "Ajoute la recette Tasmitas soup : leeks, stock.",
        "Füge das Rezept Tasmitas soup hinzu: leeks, stock.",
    ],
)
def test_a_name_a_write_gives_is_copied_whole(words: str) -> None:
    """SmolLM2 offered "Tasmitas", "Tasmitas soup" and "soup" for the dish wrote the
    shortest (bench third-party rc-add, four wordings of five): a write without a resolver
    takes the name whole."""
    from co_core.steering.values import Reading

    schema = {
        "type": "object",
        "properties": {"dish": {"type": "string"}, "ingredients": {"type": "string"}},
        "required": ["dish", "ingredients"],
    }
    copied = Reading.of(
        schema,
        name="stash_dish",
        description="Keep a recipe: the dish, and what goes in it.",
        roles={"dish": "target", "ingredients": "text"},
        does="writes",
        words_=words,
    ).schema()
    assert copied is not None
    assert copied["properties"]["dish"]["enum"] == ["Tasmitas soup"]
    assert copied["properties"]["ingredients"]["enum"] == ["leeks, stock"]


@pytest.mark.parametrize(
    ("words", "title"),
    [
        ("Remind me to return the blue book; add it to my todos.", ["return the blue book"]),
        ("Add a todo: water the plants", ["water the plants"]),
        ("I have to remember something, add it to my todos.", None),  # ask back
    ],
)
def test_the_one_text_of_a_write_is_copied_whole_and_never_a_verb_of_asking(
    words: str, title: list[str] | None
) -> None:
    """An undeclared todo tool (its one argument read as the text): SmolLM2 offered
    "return", "the blue book"... wrote "book"; "remember" was a todo's title."""
    from co_core.kernel.tools import default_does, default_roles, params_of
    from co_core.steering.values import Reading

    schema = {
        "type": "object",
        "properties": {"title": {"type": "string"}},
        "required": ["title"],
    }
    does = default_does("write", "Add a todo to the user's todo list.")
    roles = default_roles(params_of(schema), "todo:add:{title}", does)
    assert roles == {"title": "text"}
    copied = Reading.of(
        schema,
        name="add_todo",
        description="Add a todo to the user's todo list.",
        roles=roles,
        does=does,
        words_=words,
    ).schema()
    if title is None:
        assert copied is None
    else:
        assert copied is not None and copied["properties"]["title"]["enum"] == title


def test_a_forced_call_that_failed_is_forced_again_without_the_value_that_failed(
    bundled: App, replies: tuple[Server, list[dict[str, Any]]]
) -> None:
    server, queue = replies
    wrong = call("append_to_note", name="ligne", content="- call Dr. Smith")
    right = call("append_to_note", name="Todo", content="- call Dr. Smith")
    queue += [wrong, right, {"text": "Added."}]
    words = "Ajoute la ligne '- call Dr. Smith' à ma note Todo."
    turn = run_turn(bundled, words, steered(server), approvals=True)
    assert [(c["tool"], c["status"]) for c in turn.calls] == [
        ("append_to_note", "retry"),  # No note named 'ligne'
        ("append_to_note", "ok"),
    ]
    again = server.requests[1]
    assert only_calls(again)  # the same tool, forced again
    assert not accepts(again, wrong["text"])  # not the name that failed
    assert accepts(again, right["text"])
    assert (bundled.cwd.parent / "vault" / "Todo.md").read_text().endswith("- call Dr. Smith\n")


def test_a_failed_call_among_close_tools_is_followed_by_one_of_the_others(
    bundled: App, replies: tuple[Server, list[dict[str, Any]]]
) -> None:
    server, queue = replies
    words = "Who hosts the next book club? Check my notes."
    assert routed(bundled, words).kind == "among"  # read_note and search_notes score alike
    queue += [
        call("read_note", name="next book club"),  # no such note
        call("search_notes", query="book club"),
        {"text": "Nothing about a host."},
    ]
    turn = run_turn(bundled, words, steered(server))
    assert [(c["tool"], c["status"]) for c in turn.calls] == [
        ("read_note", "retry"),
        ("search_notes", "ok"),
    ]
    again = server.requests[1]
    assert only_calls(again)
    assert '"search_notes"' in constraint(again) and '"read_note"' not in constraint(again)


@pytest.mark.parametrize(
    ("words", "command"),
    [
        ("How many lines does server.log have? Use `wc -l`.", "wc -l server.log"),
        ("Combien de lignes contient server.log ? Utilise `wc -l`.", "wc -l server.log"),
        ("Run sha256sum on blob.txt and tell me the hash.", "sha256sum blob.txt"),
        ("Führe `echo hi | rev` aus.", "echo hi | rev"),
    ],
)
def test_a_forced_command_is_the_one_written_on_the_file_named(
    co_dirs: Path, monkeypatch: pytest.MonkeyPatch, words: str, command: str
) -> None:
    """ "Use `wc -l`" on "server.log" is ``wc -l server.log``: nothing else is added, and
    a command that names no file is not run on nothing (it would read an empty input)."""
    monkeypatch.delenv("CO_LOAD_PLUGINS", raising=False)
    grammar, arguments = forced("run_shell_command", words)
    assert accepts(grammar, call("run_shell_command", cmd=command)["text"])
    bare = command.rpartition(" ")[0] if "." in command else ""
    wrongs = [f"{command}; rm -rf ~", f"{command} /etc/passwd", "cat server.log", bare]
    for wrong in filter(None, wrongs):
        assert not accepts(grammar, call("run_shell_command", cmd=wrong)["text"])
    listed = arguments["cmd"]["enum"]
    assert command in listed and f"{command}; rm -rf ~" not in listed
    assert not bare or bare not in listed


def test_a_quoted_command_that_names_its_file_is_taken_as_written(
    co_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CO_LOAD_PLUGINS", raising=False)
    words = "How many ERROR lines are in server.log? `grep -c ERROR server.log` will tell."
    grammar, arguments = forced("run_shell_command", words)
    command = "grep -c ERROR server.log"
    assert accepts(grammar, call("run_shell_command", cmd=command)["text"])
    assert not accepts(grammar, call("run_shell_command", cmd=f"{command} server.log")["text"])
    assert arguments["cmd"]["enum"] == [command]


@pytest.mark.parametrize(
    "words",
    [
        "Use Python to compute 7919 * 104729 and tell me the result.",
        "Berechne 7919 * 104729 mit Python und nenne mir das Ergebnis.",
        "Calcule 7919 * 104729 avec Python.",
        "Utilise Python pour calculer 7919 * 104729.",
    ],
)
def test_a_forced_run_python_call_carries_code_when_no_script_is_named(
    co_dirs: Path, monkeypatch: pytest.MonkeyPatch, words: str
) -> None:
    """run_python needs code or a path: the call cannot leave out both (the script, when
    the words name one; else code)."""
    monkeypatch.delenv("CO_LOAD_PLUGINS", raising=False)
    grammar, arguments = forced("run_python", words)
    assert accepts(grammar, call("run_python", code="7919 * 104729")["text"])
    assert not accepts(grammar, call("run_python")["text"])
    for piece in ("104729", "7919", "Python", "7919 * 104729 mit Python"):  # the whole sum
        assert not accepts(grammar, call("run_python", code=piece)["text"])
    assert arguments["code"]["enum"] == ["7919 * 104729"]
    for named_words in ("Run script.py with Python", "Starte script.py mit Python"):
        named, _ = forced("run_python", named_words)
        assert accepts(named, call("run_python", path="script.py")["text"])
        assert not accepts(named, call("run_python")["text"])


# -- after a search: read what it found, with the same plugin's reading tool ----------------


def test_after_a_search_that_found_the_note_a_steered_model_may_read_it_and_nothing_else(
    bundled: App, replies: tuple[Server, list[dict[str, Any]]]
) -> None:
    """The hit repeats the query's words ("book club"), which says nothing of the host: the
    model may read the note it found (and no other), with co-obsidian's read_note only."""
    server, queue = replies
    vault = bundled.cwd.parent / "vault"
    (vault / "Clubs").mkdir()
    (vault / "Clubs" / "Book club.md").write_text("# Book club\n\nNext host: Mira.\n")
    queue += [
        call("search_notes", query="book club"),
        call("read_note", name="Clubs/Book club.md"),
        {"text": "Mira hosts next."},
    ]
    words = "Qui accueille le prochain book club ? Regarde dans mes notes."
    turn = run_turn(bundled, words, steered(server))
    assert [(c["tool"], c["status"]) for c in turn.calls] == [
        ("search_notes", "ok"),
        ("read_note", "ok"),
    ]
    follow_up = server.requests[1]
    assert '"read_note"' in constraint(follow_up)
    for other in ("note_links", "list_notes", "read_file", "search_notes"):
        assert f'"{other}"' not in constraint(follow_up)
    # the note it reads is one the search found, named as the result names it
    assert accepts(follow_up, call("read_note", name="Clubs/Book club.md")["text"])
    for wrong in ("prochain book club", "Mira", "Regarde", "Clubs"):
        assert not accepts(follow_up, call("read_note", name=wrong)["text"])
    assert "Mira" in turn.output


@pytest.mark.parametrize(
    "words",
    [
        "List the files in this folder.",
        "Liste les fichiers de ce dossier.",
        "Show me the files in this folder.",  # words that only ask say nothing more
        "Zeig mir die Dateien in diesem Ordner.",
        "Which files are in this folder?",
    ],
)
def test_a_listing_that_was_all_the_words_asked_for_is_answered_without_another_call(
    bundled: App, replies: tuple[Server, list[dict[str, Any]]], words: str
) -> None:
    server, queue = replies
    queue += [call("list_files"), {"text": "There is sales.csv."}]
    turn = run_turn(bundled, words, steered(server))
    assert [c["tool"] for c in turn.calls] == ["list_files"]
    assert len(server.requests) == 1  # nothing more to read, nothing to retell
    assert turn.output.startswith("sales.csv")  # the list that was asked for, as listed


def test_after_a_search_that_found_nothing_and_no_other_words_co_says_so(
    bundled: App, replies: tuple[Server, list[dict[str, Any]]]
) -> None:
    """Nothing found, nothing close, and the words give nothing else to search for: Co
    answers with what the search said, without asking the model to retell it."""
    server, queue = replies
    queue += [call("search_notes", query="dentiste"), {"text": "Your dentist is Dr. Who."}]
    turn = run_turn(bundled, "Cherche le dentiste dans mes notes.", steered(server))
    assert [c["tool"] for c in turn.calls] == ["search_notes"]
    assert len(server.requests) == 1
    assert turn.output == "No notes match 'dentiste'."


def test_a_failed_call_with_no_other_words_to_try_is_said_as_it_failed(
    bundled: App, replies: tuple[Server, list[dict[str, Any]]]
) -> None:
    """config.ini sets no timeout: the only key the words give failed, so Co says why
    instead of making the model repeat the call."""
    server, queue = replies
    (bundled.cwd / "config.ini").write_text("[server]\nport = 41234\n")
    queue += [call("set_file_value", path="config.ini", key="timeout", value="30")] * 2
    words = "Set the timeout in config.ini to 30"
    turn = run_turn(bundled, words, steered(server), approvals=True)
    assert [(c["tool"], c["status"]) for c in turn.calls] == [("set_file_value", "retry")]
    assert len(server.requests) == 1
    assert "no line sets 'timeout'" in turn.output
    assert (bundled.cwd / "config.ini").read_text() == "[server]\nport = 41234\n"


def test_a_search_that_found_nothing_is_made_once_more_with_other_words(
    bundled: App, replies: tuple[Server, list[dict[str, Any]]]
) -> None:
    """ "again" found nothing: the second search must take other words of the question,
    and its hit is answered."""
    server, queue = replies
    (bundled.cwd.parent / "vault" / "Wifi.md").write_text("# Wifi\n\nPassword: Lozuka-956\n")
    queue += [
        call("search_notes", query="again"),
        call("search_notes", query="wifi password"),
        {"text": "It is Lozuka-956."},
    ]
    turn = run_turn(bundled, "What's the wifi password again? It's in my notes.", steered(server))
    assert [(c["tool"], c["args"]["query"]) for c in turn.calls] == [
        ("search_notes", "again"),
        ("search_notes", "wifi password"),
    ]
    again = server.requests[1]
    assert only_calls(again)
    assert not accepts(again, call("search_notes", query="again")["text"])
    assert "Lozuka-956" in turn.output


def test_an_answer_that_only_repeats_the_search_is_replaced_by_the_hit(
    bundled: App, replies: tuple[Server, list[dict[str, Any]]]
) -> None:
    """The result's first line repeats the search ("Notes matching 'wifi password'"); an
    answer drawn from it ("matching", "denied") says nothing of the hit: Co shows the hit."""
    server, queue = replies
    (bundled.cwd.parent / "vault" / "Wifi.md").write_text("# Wifi\n\nPassword: Lozuka-956\n")
    queue += [
        call("search_notes", query="wifi password"),
        {"text": "The request was denied: you searched for a password matching 'wifi'."},
    ]
    turn = run_turn(bundled, "Search my notes for the wifi password.", steered(server))
    assert [c["tool"] for c in turn.calls] == ["search_notes"]
    assert "Lozuka-956" in turn.output and "denied" not in turn.output


# -- which models are steered: by size, asked of their server; JSON schemas for Ollama -------


def resolved(app: App, spec: str, server: Server, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OLLAMA_HOST", server.base_url.removesuffix("/v1"))
    return resolve(spec, app.settings, base_url=server.base_url).model


@pytest.mark.parametrize(
    ("show", "mode", "steer"),
    [
        ({"model_info": {"general.parameter_count": 361_821_120}}, "auto", True),
        ({"details": {"parameter_size": "135M"}}, "auto", True),
        ({"details": {"parameter_size": "7.6B"}}, "auto", False),
        (None, "auto", False),  # a size Co cannot learn: not steered
        ({"details": {"parameter_size": "7.6B"}}, "on", True),
        ({"details": {"parameter_size": "135M"}}, "off", False),
    ],
)
def test_an_ollama_model_is_steered_by_its_size_or_the_setting(
    co_dirs: Path, monkeypatch: pytest.MonkeyPatch, show: Any, mode: str, steer: bool
) -> None:
    app = make_app({"steering": {"mode": mode}})
    with Server(lambda body: {"text": "hi"}, show=show) as server:
        model = resolved(app, "ollama:tiny", server, monkeypatch)
    assert isinstance(model, ConstrainedModel) == steer
    if steer:
        assert model.server == "ollama" and model.co_small and not model.words


@pytest.mark.parametrize(("meta", "steer"), [({"n_params": 134_515_008}, True), ({}, False)])
def test_a_model_on_llama_cpps_own_server_is_steered_by_the_size_it_reports(
    co_dirs: Path, monkeypatch: pytest.MonkeyPatch, meta: dict[str, Any], steer: bool
) -> None:
    models = [{"id": "tiny", "object": "model", "meta": meta}]
    with Server(lambda body: {"text": "hi"}, models=models) as server:
        model = resolved(make_app({}), "openai-compatible:tiny", server, monkeypatch)
    assert isinstance(model, ConstrainedModel) == steer
    if steer:
        assert model.server == "llama.cpp" and not model.words  # JSON schema: no converter here


def test_a_small_ollama_model_calls_through_a_json_schema_and_answers_from_the_result(
    bundled: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue = [
        {"text": json.dumps({"name": "read_file", "arguments": {"path": "sales.csv"}})},
        {"text": json.dumps({"answer": "May's total is 12."})},
    ]
    show = {"details": {"parameter_size": "135M"}}
    with Server(lambda body: queue.pop(0), show=show) as server:
        model = resolved(bundled, "ollama:tiny", server, monkeypatch)
        turn = run_turn(bundled, "show me what is in sales.csv", model)
    first, second = server.requests
    assert "tools" not in first and first["temperature"] == 0
    schema = json.dumps(first["response_format"])
    assert '"read_file"' in schema and '"sales.csv"' in schema
    assert '"write_file"' not in schema  # nobody asked for a write
    assert [(c["tool"], c["status"]) for c in turn.calls] == [("read_file", "ok")]
    assert "may,12" in second["messages"][-1]["content"]  # it read the result
    assert turn.output == "May's total is 12."


@pytest.mark.parametrize(
    ("words", "found"),
    [
        ("Use Python to compute 2**10.", ["2**10"]),
        ("Calcula (3 + 4) * 5 con Python", ["(3 + 4) * 5"]),
        ("Run math.sqrt(2) in Python", ["math.sqrt(2)"]),
        ("What is 12 plus 5 in Python?", []),  # words, not an expression: nothing to copy
        ("Remind me on 2024-05-01 about version 1.2.3", []),  # a date, a version
    ],
)
def test_code_written_in_words_is_the_expression_they_write(words: str, found: list[str]) -> None:
    from co_core.steering.runs import expressions

    assert expressions(words) == found


def test_a_model_of_unknown_size_whose_calls_fail_is_steered_from_then_on(
    bundled: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A llama.cpp server that does not say how big its model is: Co does not steer it,
    and when its junk calls make the loop guard stop the turn, Co says so in one line,
    steers it and answers the same turn (SmolLM2 on such a server once made 2 min 37 s of
    junk calls for "what is 2+2")."""
    import asyncio

    from co_core.agent.conversation import Conversation
    from co_core.agent.frontend import NoTerminal

    class Listening(NoTerminal):
        def notice(self, message: str) -> None:
            notices.append(message)

    replies: list[dict[str, Any]] = [
        {"tool": "calculator", "args": {"expression": "2+2"}},  # junk calls, unsteered
        {"tool": "calculator", "args": {"expression": "2+2"}},
        {"text": "4"},  # steered: the words ask for no tool, so the model answers
    ]
    notices: list[str] = []
    with Server(lambda body: replies.pop(0) if replies else {"text": "?"}) as server:
        model = resolve("openai-compatible:tiny", bundled.settings, base_url=server.base_url)
        assert not isinstance(model.model, ConstrainedModel)  # its size is unknown
        conversation = Conversation(bundled, frontend=Listening(), headless=True)
        conversation.model = model
        conversation.prepare()
        turn = asyncio.run(conversation.run_turn("what is 2+2"))
        conversation.close()
    assert turn.output == "4", (turn.calls, len(server.requests))
    assert isinstance(conversation.model.model, ConstrainedModel), (
        turn.calls,
        notices,
        len(server.requests),
    )
    assert conversation.model.model.co_small
    assert len(notices) == 1 and "steering.mode on" in notices[0] and "\n" not in notices[0]
    assert turn.calls == []  # the failed try is not this turn's record: the steered one is


def test_the_core_runs_without_the_steering_layer(
    bundled: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The steering is a layer the agent only names (co_core.agent.assembly.steering): left
    out of the default plugins, a small model's turn still runs, unsteered (it gets every
    tool and may answer in words); with it, the same words make it call the one tool."""
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel

    from co_core.kernel import app as kernel_app

    seen: list[tuple[list[str], bool]] = []

    class Tiny(FunctionModel):
        co_small = True

    def answer(messages: list[Any], info: Any) -> ModelResponse:
        seen.append(([t.name for t in info.function_tools], info.allow_text_output))
        return ModelResponse(parts=[TextPart("It has the sales.")])

    async def stream(messages: list[Any], info: Any) -> Any:
        seen.append(([t.name for t in info.function_tools], info.allow_text_output))
        yield "It has the sales."

    def tiny() -> Tiny:
        return Tiny(answer, stream_function=stream)

    words = "Read sales.csv"
    run_turn(bundled, words, tiny())
    assert seen[-1] == (["read_file"], False)  # steered: that call and nothing else
    without = tuple(p for p in kernel_app.DEFAULT_PLUGINS if p != "co_core.steering.plugin")
    monkeypatch.setattr(kernel_app, "DEFAULT_PLUGINS", without)
    app = make_app({"obsidian": {"vault_path": str(bundled.cwd.parent / "vault")}}, cwd=bundled.cwd)
    turn = run_turn(app, words, tiny())
    tools, text = seen[-1]
    assert turn.output == "It has the sales." and text and len(tools) > 1  # on its own


@pytest.mark.parametrize(
    "words",
    [
        "Create a file.",
        "Crée un fichier.",
        "Leg eine neue Datei an.",
        "Write a note.",
        "Run a command.",
        "Execute something in the shell.",  # "shell" is the plugin's name, not Python code
    ],
)
def test_a_change_the_words_give_nothing_for_is_asked_back(bundled: App, words: str) -> None:
    """Nothing to write or run: Co asks for what the tool needs, in one sentence, naming
    it as the tool does (read from the declared roles), and calls nothing."""
    chosen = routed(bundled, words)
    assert chosen.kind == "ask", chosen
    assert chosen.answer.endswith("?") and chosen.answer.count(". ") == 0, chosen.answer


@pytest.mark.parametrize(
    "words",
    [
        "Turn on the living room light.",
        "Allume la lumière du salon.",
        "Schalte das Licht im Flur aus.",
        "What's the weather in Paris tomorrow?",
        "Wie wird das Wetter morgen in München?",
    ],
)
def test_what_no_tool_can_do_is_declined(bundled: App, words: str) -> None:
    chosen = routed(bundled, words)
    assert chosen.kind == "decline", chosen
    assert "tool" in chosen.answer and chosen.answer.count(". ") == 0


def test_ask_back_follows_from_the_roles_of_a_tool_of_our_own(
    co_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin Co did not write, beside the bundled ones: ``stash_blurb(shelf, blurb)``
    declares ``shelf`` as the target and ``blurb`` as the text given whole. Words that
    give both are a call; words that give no blurb are asked back, naming it."""
    monkeypatch.delenv("CO_LOAD_PLUGINS", raising=False)
    from co_core import hookimpl
    from co_core.testing import use_plugin

    def stash_blurb(ctx: Any, shelf: str, blurb: str) -> str:
        """Stash a blurb on a shelf of the pantry."""
        return shelf

    class Pantry:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(
                stash_blurb,
                risk="write",
                permission="pantry:stash:{shelf}",
                does="writes",
                roles={"shelf": "target", "blurb": "content"},
            )

    with use_plugin(Pantry(), name="pantry", installed=True) as app:
        assert isinstance(app, App)
        made = routed(app, "Stash 'the quick brown fox' on the top shelf.")
        asked = routed(app, "Stash a blurb on the top shelf.")
    assert (made.kind, made.tools) == ("call", ("stash_blurb",))
    assert asked.kind == "ask" and "blurb" in asked.answer and asked.answer.endswith("?")
