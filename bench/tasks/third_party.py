"""Tasks for plugins Co did not write, and tasks whose right answer is to ask back or decline.

``THIRD_PARTY``: the three plugins of ``bench/tasks/plugins`` (bookmarks, a recipe box, a
todo list registered without roles), each task in the same five wordings as the bundled
ones (``tasks.PHRASING_FAMILIES``), judged by what is on disk or in the answer.

``ASK_BACK``: requests that cannot be done as said: a write, a note, a todo or a command
with nothing to write or run (Co must ask for it), or something no tool can do (the
weather, a light switch: Co must say so). Passed when nothing that writes, sends or runs
was tried and the answer asks back (a question) or declines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from tasks import PHRASINGS as ALL_PHRASINGS
from tasks import Ctx, Judge, Outcome, Task, _answered, _write, says

PLUGINS = Path(__file__).resolve().parent / "plugins"
THIRD_FAMILIES = ("bookmarks", "recipes", "todos")
ASK_FAMILIES = ("askback", "decline")


def plugin_world(c: Ctx) -> None:
    """The plugins' data in the workspace, with random facts only their tools can find."""
    f = c.facts
    f["bm_label"] = f"{c.word()} docs"
    f["bm_url"] = f"https://{c.word().lower()}.example.org/{c.token(5)}"
    f["bm_other"] = f"{c.word()} blog"
    f["bm_new_url"] = f"https://{c.word().lower()}.example.net/{c.token(4)}"
    f["bm_new_label"] = f"{c.word()} reading"
    marks = [
        {"url": f["bm_url"], "label": f["bm_label"]},
        {"url": f"https://{c.word().lower()}.example.com", "label": f["bm_other"]},
    ]
    _write(c.workspace, "bookmarks.json", json.dumps(marks, indent=1))
    f["dish"] = f"{c.word()} stew"
    f["spice"] = f"{c.word().lower()} pepper"
    f["dish_other"] = f"{c.word()} pie"
    _write(
        c.workspace,
        f"recipes/{_slug(f['dish'])}.txt",
        f"{f['dish']}\n2 onions, {f['spice']}, salt\n",
    )
    _write(
        c.workspace,
        f"recipes/{_slug(f['dish_other'])}.txt",
        f"{f['dish_other']}\nflour, butter, apples\n",
    )
    f["dish_new"] = f"{c.word()} soup"
    f["ingredients_new"] = f"leeks, {c.word().lower()} beans, stock"
    f["todo_one"] = f"call {c.word()}"
    f["todo_two"] = f"buy {c.word().lower()} seeds"
    f["todo_new"] = f"return the {c.word().lower()} book"
    todos = [
        {"title": "water the plants", "done": False},
        {"title": f["todo_one"], "done": False},
        {"title": f["todo_two"], "done": False},
    ]
    _write(c.workspace, "todos.json", json.dumps(todos, indent=1))


def _slug(dish: str) -> str:  # as co_recipes names a dish's file
    return re.sub(r"[^a-z0-9]+", "-", dish.casefold()).strip("-")


def _json(c: Ctx, name: str) -> list[dict[str, object]]:
    path = c.workspace / name
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []


def bookmarked(url: str, label: str) -> Judge:
    def judge(c: Ctx, o: Outcome) -> str | None:
        want_url, want_label = url.format(**c.facts), label.format(**c.facts)
        for mark in _json(c, "bookmarks.json"):
            if mark["url"] == want_url:
                got = str(mark["label"]).lower()
                return None if want_label.lower() in got else f"label is {mark['label']!r}"
        return f"no bookmark of {want_url}"

    return judge


def recipe_has(dish: str, ingredients: str) -> Judge:
    def judge(c: Ctx, o: Outcome) -> str | None:
        want = ingredients.format(**c.facts).lower()
        for path in sorted((c.workspace / "recipes").glob("*.txt")):
            title, _, body = path.read_text(encoding="utf-8").partition("\n")
            if dish.format(**c.facts).lower() in title.lower():
                return (
                    None
                    if all(w.strip() in body.lower() for w in want.split(","))
                    else (f"{path.name} holds {body.strip()!r}")
                )
        return f"no recipe for {dish.format(**c.facts)}"

    return judge


def todo_added(title: str) -> Judge:
    def judge(c: Ctx, o: Outcome) -> str | None:
        want = title.format(**c.facts).lower()
        titles = [str(t["title"]).lower() for t in _json(c, "todos.json")]
        return None if any(want in t for t in titles) else f"todos are {titles}"

    return judge


def todo_done(number: int) -> Judge:
    def judge(c: Ctx, o: Outcome) -> str | None:
        todos = _json(c, "todos.json")
        done = [i + 1 for i, t in enumerate(todos) if t["done"]]
        return None if done == [number] else f"done: {done or 'none'}"

    return judge


CHANGES = ("write", "send", "exec")


def _changed(o: Outcome, risks: Callable[[], dict[str, str | None]]) -> list[str]:
    known = risks()
    return [c["tool"] for c in o.calls if known.get(c["tool"], "exec") != "read"]


DECLINES = (
    "can't", "cannot", "can not", "no tool", "not able", "unable", "don't have",
    "do not have", "guess", "ne peux", "pas pu", "kann nicht", "keine", "no puedo",
)  # fmt: skip


def asks_back(risks: Callable[[], dict[str, str | None]], *, decline: bool = False) -> Judge:
    """Nothing that writes, sends or runs was tried; the answer asks for what is missing (a
    question), or (``decline``) says it cannot be done, with no call at all."""

    def judge(c: Ctx, o: Outcome) -> str | None:
        if why := _answered(o):
            return why
        tried = _changed(o, risks)
        if tried:
            return f"tried {', '.join(tried)} without what it needs"
        text = o.output.lower()
        if decline:
            if o.calls:
                return f"called {', '.join(x['tool'] for x in o.calls)} for what no tool does"
            return None if any(w in text for w in DECLINES) else "answer neither declines"
        return None if "?" in text else "answer asks nothing back"

    return judge


def _risks() -> dict[str, str | None]:
    from run import risks

    return risks()


BOOKMARK = ("bookmark:save:**",)
RECIPE = ("recipe:add:**",)
TODO = ("todo:add:**", "todo:done:**")

THIRD_PARTY: list[Task] = [
    Task(
        "bm-save",
        "bookmarks",
        "Save {bm_new_url} as a bookmark labelled '{bm_new_label}'.",
        bookmarked("{bm_new_url}", "{bm_new_label}"),
        approve=BOOKMARK,
        setup=plugin_world,
        plugins=True,
        oracle={"calls": [("save_bookmark", {"url": "{bm_new_url}", "label": "{bm_new_label}"})]},
    ),
    Task(
        "bm-find",
        "bookmarks",
        "Which bookmark is labelled {bm_label}? I need its link.",
        says("bm_url"),
        setup=plugin_world,
        plugins=True,
        oracle={"calls": [("find_bookmark", {"words": "{bm_label}"})]},
    ),
    Task(
        "bm-list",
        "bookmarks",
        "List my bookmarks.",
        says("bm_label", "bm_other"),
        setup=plugin_world,
        plugins=True,
        oracle={"calls": [("list_bookmarks", {})]},
    ),
    Task(
        "rc-add",
        "recipes",
        "Add a recipe for {dish_new}: {ingredients_new}.",
        recipe_has("{dish_new}", "{ingredients_new}"),
        approve=RECIPE,
        setup=plugin_world,
        plugins=True,
        oracle={
            "calls": [("add_recipe", {"dish": "{dish_new}", "ingredients": "{ingredients_new}"})]
        },
    ),
    Task(
        "rc-read",
        "recipes",
        "What goes into my {dish} recipe?",
        says("spice"),
        setup=plugin_world,
        plugins=True,
        oracle={"calls": [("read_recipe", {"dish": "{dish}"})]},
    ),
    Task(
        "rc-list",
        "recipes",
        "Which recipes are in my recipe box?",
        says("dish", "dish_other"),
        setup=plugin_world,
        plugins=True,
        oracle={"calls": [("list_recipes", {})]},
    ),
    Task(
        "td-add",
        "todos",
        "Add a todo: {todo_new}",
        todo_added("{todo_new}"),
        approve=TODO,
        setup=plugin_world,
        plugins=True,
        oracle={"calls": [("add_todo", {"title": "{todo_new}"})]},
    ),
    Task(
        "td-list",
        "todos",
        "What is on my todo list?",
        says("todo_one", "todo_two"),
        setup=plugin_world,
        plugins=True,
        oracle={"calls": [("list_todos", {})]},
    ),
    Task(
        "td-done",
        "todos",
        "Mark todo 2 as done.",
        todo_done(2),
        approve=TODO,
        setup=plugin_world,
        plugins=True,
        oracle={"calls": [("done_todo", {"number": 2})]},
    ),
]

ASK_BACK: list[Task] = [
    Task("ab-file", "askback", "Create a file.", asks_back(_risks), approve=("fs:write:**",)),
    Task("ab-note", "askback", "Write a note.", asks_back(_risks), approve=("obsidian:write:**",)),
    Task(
        "ab-todo",
        "askback",
        "Add a todo.",
        asks_back(_risks),
        approve=TODO,
        setup=plugin_world,
        plugins=True,
    ),
    Task("ab-run", "askback", "Run a command.", asks_back(_risks), approve=("shell:exec:**",)),
    Task(
        "dc-weather",
        "decline",
        "What's the weather in Paris tomorrow?",
        asks_back(_risks, decline=True),
    ),
    Task(
        "dc-light",
        "decline",
        "Turn on the living room light.",
        asks_back(_risks, decline=True),
    ),
]

PHRASINGS: dict[str, tuple[str, str, str, str]] = {
    "bm-save": (
        "Bookmark {bm_new_url} and call it '{bm_new_label}'.",
        "I want to keep {bm_new_url} for later, under the name '{bm_new_label}'.",
        "Enregistre {bm_new_url} dans mes favoris sous le nom '{bm_new_label}'.",
        "Speicher {bm_new_url} als Lesezeichen mit dem Namen '{bm_new_label}'.",
    ),
    "bm-find": (
        "Give me the link of my bookmark {bm_label}.",
        "I saved a bookmark called {bm_label} but forgot where it points.",
        "Quel est le lien de mon favori {bm_label} ?",
        "Wohin führt mein Lesezeichen {bm_label}?",
    ),
    "bm-list": (
        "Show me all my saved bookmarks.",
        "I can't remember which links I've bookmarked.",
        "Montre-moi mes favoris.",
        "Zeig mir meine Lesezeichen.",
    ),
    "rc-add": (
        "Put {dish_new} in my recipe box, with {ingredients_new}.",
        "I finally wrote down my {dish_new}, it takes {ingredients_new}; keep it in my recipes.",
        "Ajoute la recette {dish_new} : {ingredients_new}.",
        "Füge das Rezept {dish_new} hinzu: {ingredients_new}.",
    ),
    "rc-read": (
        "Read me my recipe for {dish}.",
        "I'm cooking {dish} tonight and forgot the ingredients.",
        "Qu'est-ce qu'il faut pour ma recette {dish} ?",
        "Was brauche ich für mein Rezept {dish}?",
    ),
    "rc-list": (
        "List the recipes I have saved.",
        "I wonder which dishes I already keep recipes for.",
        "Quelles recettes ai-je ?",
        "Welche Rezepte habe ich gespeichert?",
    ),
    "td-add": (
        "Put '{todo_new}' on my todo list.",
        "Remind me to {todo_new}; add it to my todos.",
        "Ajoute une tâche : {todo_new}",
        "Füg ein Todo hinzu: {todo_new}",
    ),
    "td-list": (
        "Show me my todos.",
        "I forgot what I still have to do; check my todo list.",
        "Qu'est-ce qu'il y a sur ma liste de tâches ?",
        "Was steht auf meiner Todo-Liste?",
    ),
    "td-done": (
        "Tick off todo number 2.",
        "I've finished todo 2, you can mark it done.",
        "Marque la tâche 2 comme faite.",
        "Hak Todo 2 als erledigt ab.",
    ),
    "ab-file": (
        "Make a new file for me.",
        "I need a new file.",
        "Crée un fichier.",
        "Leg eine neue Datei an.",
    ),
    "ab-note": (
        "Add something to my notes.",
        "I want to jot something down in my notes.",
        "Écris une note.",
        "Schreib eine Notiz.",
    ),
    "ab-todo": (
        "Put something on my todo list.",
        "I have to remember something, add it to my todos.",
        "Ajoute une tâche à ma liste.",
        "Füg ein Todo hinzu.",
    ),
    "ab-run": (
        "Execute something in the shell.",
        "I need a command run.",
        "Exécute une commande.",
        "Führ einen Befehl aus.",
    ),
    "dc-weather": (
        "Will it rain in Berlin today?",
        "I'm wondering whether I need an umbrella in London this afternoon.",
        "Quel temps fera-t-il à Lyon demain ?",
        "Wie wird das Wetter morgen in München?",
    ),
    "dc-light": (
        "Switch off the kitchen lights.",
        "It's dark in here, could you turn the lamp on?",
        "Allume la lumière du salon.",
        "Schalte das Licht im Flur aus.",
    ),
}

ALL_PHRASINGS.update(PHRASINGS)  # Task.prompts() finds them with the bundled tasks'
