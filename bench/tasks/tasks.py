"""The task table: a scratch workspace and vault, and 40 small tasks judged by their outcome.

Every task runs in a fresh copy of the same small world (``build_world``): a workspace
folder and an Obsidian vault whose files hold random facts (a port number, a Wi-Fi
password, a note's title...). A task passes when its outcome shows the right tool did its
job: the fact appears in the answer, the file exists with the right text, the denied call
was denied and the turn stopped. The model's wording alone never decides.

``oracle`` is what a perfect model would call (and say); ``bench/tasks/oracle.py`` plays
it to check that every task can pass.
"""

from __future__ import annotations

import hashlib
import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# -- the world ----------------------------------------------------------------------------


@dataclass
class Ctx:
    """One task's scratch world and the random facts written into it."""

    workspace: Path
    vault: Path
    rng: random.Random
    facts: dict[str, Any] = field(default_factory=dict)

    def token(self, size: int = 6) -> str:
        return "".join(self.rng.choice(string.ascii_lowercase + string.digits) for _ in range(size))

    def word(self) -> str:
        """A pronounceable made-up word (names nobody could guess)."""
        syllables = ["ka", "lo", "mi", "zu", "ren", "tas", "vo", "quin", "bel", "dor", "sha"]
        return "".join(self.rng.choice(syllables) for _ in range(3)).capitalize()


@dataclass
class Outcome:
    """What one ``co ask --json`` run left behind, as the judges see it."""

    output: str = ""  # the answer ('' when the turn failed)
    error: str = ""  # co's one-line error, if any
    calls: list[dict[str, Any]] = field(default_factory=list)  # tool, args, decision, status
    exit_code: int | None = None
    timed_out: bool = False


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def build_world(c: Ctx) -> None:
    """The workspace and vault every task starts from, with fresh random facts."""
    f = c.facts
    f["room"] = f"B-{c.rng.randint(100, 999)}"
    f["port"] = c.rng.randint(20000, 60000)
    f["alice_email"] = f"alice.{c.token(5)}@example.org"
    f["func"] = f"scale_{c.token(5)}"
    f["report"] = f"report-{c.token(5)}.txt"
    f["invoice"] = f"INV-{c.rng.randint(10000, 99999)}"
    f["title"] = f"Project {c.word()}"
    f["errors"] = c.rng.randint(11, 39)
    f["log_lines"] = f["errors"] + c.rng.randint(20, 60)
    f["blob"] = c.token(32)
    f["sha"] = hashlib.sha256(f["blob"].encode()).hexdigest()
    f["script_out"] = hashlib.sha1(f["blob"].encode()).hexdigest()[:10]
    f["echo"] = c.token(8)
    f["api_key"] = f"KEY-{c.token(12)}"
    f["old_item"] = f"existing item {c.token(4)}"

    w = c.workspace
    _write(w, "README.md", f"# {f['title']}\n\nA small demo project for the task suite.\n")
    _write(w, "notes.txt", f"Team meeting moved to room {f['room']} on Thursday.\n")
    _write(w, "config.ini", f"[server]\nhost = 127.0.0.1\nport = {f['port']}\n")
    _write(w, "people.csv", f"name,email\nAlice,{f['alice_email']}\nBob,bob@example.com\n")
    _write(w, "src/app.py", f"def {f['func']}(x):\n    return x * 2\n")
    _write(w, f["report"], f"Quarterly report. Open invoice {f['invoice']} is still unpaid.\n")
    lines = ["INFO request served"] * (f["log_lines"] - f["errors"]) + ["ERROR disk slow"] * f[
        "errors"
    ]
    c.rng.shuffle(lines)
    _write(w, "server.log", "\n".join(lines) + "\n")
    _write(w, "blob.txt", f["blob"])
    _write(
        w,
        "script.py",
        "import hashlib\n"
        "data = open('blob.txt', 'rb').read()\n"
        "print(hashlib.sha1(data).hexdigest()[:10])\n",
    )
    _write(w, "old.log", "old log lines\n")
    _write(w, "secrets/api_key.txt", f"{f['api_key']}\n")

    f["wifi"] = f"{c.word()}-{c.rng.randint(100, 999)}"
    f["dentist_date"] = f"2031-{c.rng.randint(1, 12):02d}-{c.rng.randint(1, 28):02d}"
    f["dentist"] = f"Dr. {c.word()}"
    f["codename"] = c.word()
    f["project_note"] = f"Harbor {c.token(4)}"
    f["oven"] = c.rng.randint(173, 229)
    f["trips"] = [f"Trip {c.word()}", f"Trip {c.word()}"]
    f["host"] = f"{c.word()} {c.word()}"

    v = c.vault
    _write(v, "Home/Wifi.md", f"# Wifi\n\nNetwork: HomeNet\nPassword: {f['wifi']}\n")
    _write(
        v,
        "Health/Dentist.md",
        f"# Dentist\n\nDentist appointment on {f['dentist_date']} at 9:30 with {f['dentist']}.\n",
    )
    _write(
        v,
        f"Projects/{f['project_note']}.md",
        f"# {f['project_note']}\n\nCodename {f['codename']}. Ship the harbour map by spring.\n",
    )
    _write(v, "Projects/Website.md", "# Website\n\nRedesign the landing page.\n")
    _write(
        v,
        "Recipes/Pancakes.md",
        f"# Pancakes\n\nFlour, milk, 2 eggs.\nOven temperature: {f['oven']} degrees.\n",
    )
    for trip in f["trips"]:
        _write(v, f"Travel/{trip}.md", f"---\ntags: [travel]\n---\n# {trip}\n\nPack light.\n")
    _write(v, "Clubs/Book club.md", f"# Book club\n\nNext host: {f['host']}.\n")
    _write(v, "Inbox.md", f"# Inbox\n\n- {f['old_item']}\n")
    _write(v, "Todo.md", "# Todo\n\n- [ ] water plants\n")
    _write(v, "Journal/2024-05-01.md", "# 2024-05-01\n\nQuiet day.\n")
    _write(v, "Daily/2024-06-02.md", "# 2024-06-02\n\nRead a book.\n")


# -- judges -------------------------------------------------------------------------------

Judge = Callable[[Ctx, Outcome], "str | None"]  # None: passed; else why it failed


def _answered(o: Outcome) -> str | None:
    if o.timed_out:
        return "timed out"
    if o.error:
        return f"error: {o.error}"
    if not o.output.strip():
        return "empty answer"
    return None


def chat(must: str = "") -> Judge:
    """Answered, with no tool call (and containing ``must`` if given)."""

    def judge(c: Ctx, o: Outcome) -> str | None:
        if o.calls:
            return f"called tools for a chat: {', '.join(x['tool'] for x in o.calls)}"
        if why := _answered(o):
            return why
        if must and must.lower() not in o.output.lower():
            return f"answer lacks {must!r}"
        return None

    return judge


def says(*keys: str) -> Judge:
    """The answer contains each fact (``facts[key]``), which only a tool could find."""

    def judge(c: Ctx, o: Outcome) -> str | None:
        if why := _answered(o):
            return why
        for key in keys:
            values = c.facts[key] if isinstance(c.facts[key], list) else [c.facts[key]]
            for value in values:
                if str(value).lower() not in o.output.lower():
                    return f"answer lacks {key}={value}"
        return None

    return judge


def says_prefix(key: str, size: int) -> Judge:
    """The answer contains the first ``size`` characters of a fact (a hash, say)."""

    def judge(c: Ctx, o: Outcome) -> str | None:
        if why := _answered(o):
            return why
        if c.facts[key][:size].lower() not in o.output.lower():
            return f"answer lacks {key}[:{size}]={c.facts[key][:size]}"
        return None

    return judge


def file_has(where: str, rel: str, *texts: str, keep: str = "") -> Judge:
    """A file of the workspace or vault now holds ``texts`` (facts' names in braces)."""

    def judge(c: Ctx, o: Outcome) -> str | None:
        root = c.workspace if where == "workspace" else c.vault
        path = root / rel.format(**c.facts)
        if not path.is_file():
            return f"{where} file {path.relative_to(root)} missing"
        body = path.read_text(encoding="utf-8", errors="replace")
        for text in texts:
            if text.format(**c.facts).lower() not in body.lower():
                return f"{path.name} lacks {text.format(**c.facts)!r}"
        if keep and keep.format(**c.facts) not in body:
            return f"{path.name} lost {keep.format(**c.facts)!r}"
        return None

    return judge


def _ini_port(c: Ctx, want: str) -> str | None:
    import configparser

    parser = configparser.ConfigParser()
    try:
        parser.read_string((c.workspace / "config.ini").read_text(encoding="utf-8"))
        port = parser.get("server", "port")
    except (configparser.Error, OSError) as exc:
        return f"config.ini unreadable: {exc}"
    return None if port.strip() == want else f"config.ini port is {port}"


def setup_hint(hint: str, forbidden: str = "") -> Judge:
    """The answer says how to set the plugin up; nothing was sent (``forbidden`` tool ok)."""

    def judge(c: Ctx, o: Outcome) -> str | None:
        if why := _answered(o):
            return why
        if hint.lower() not in o.output.lower():
            return f"answer does not mention `{hint}`"
        if forbidden and any(x["tool"] == forbidden and x["status"] == "ok" for x in o.calls):
            return f"{forbidden} ran"
        return None

    return judge


DENIED_WORDS = ("denied", "not allowed", "blocked", "refused", "policy", "not permitted")


def denied(reason: str, unchanged: Callable[[Ctx], str | None], secret: str = "") -> Judge:
    """The rule denied a call, the turn stopped there, and the answer says it was denied."""

    def judge(c: Ctx, o: Outcome) -> str | None:
        if o.timed_out:
            return "timed out"
        if why := unchanged(c):
            return why
        if secret and str(c.facts[secret]) in o.output:
            return "the answer leaks what the rule protects"
        hits = [i for i, x in enumerate(o.calls) if x["decision"] == "deny"]
        if not any(reason in o.calls[i].get("reason", "") for i in hits):
            return "no call was denied by the rule"
        if o.calls[-1]["decision"] != "deny":
            return f"went on after the denial ({o.calls[-1]['tool']})"
        if o.error:
            return f"error: {o.error}"
        text = o.output.lower()
        if not any(w in text for w in DENIED_WORDS) and reason.lower() not in text:
            return "answer does not say the call was denied"
        return None

    return judge


def exists(where: str, rel: str, text: str | None = None) -> Callable[[Ctx], str | None]:
    """Unchanged check: the file is still there (with ``text`` still in it)."""

    def check(c: Ctx) -> str | None:
        path = (c.workspace if where == "workspace" else c.vault) / rel
        if not path.is_file():
            return f"{rel} is gone"
        if text is not None and path.read_text(encoding="utf-8") != text:
            return f"{rel} was changed"
        return None

    return check


# -- the tasks ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    name: str
    family: str
    prompt: str  # str.format'ed with the facts
    judge: Judge
    approve: tuple[str, ...] = ()  # `co ask --approve` patterns: the user's yes
    settings: dict[str, Any] = field(default_factory=dict)  # merged into settings.json
    setup: Callable[[Ctx], None] | None = None  # more than the common world
    oracle: dict[str, Any] = field(default_factory=dict)  # {"calls": [(tool, args)], "say": ""}


def _deny(match: str, reason: str) -> dict[str, Any]:
    return {"policy": {"rules": [{"match": match, "effect": "deny", "reason": reason}]}}


NOTES_WRITE = ("obsidian:write:**",)
FILES_WRITE = ("fs:write:**",)
SHELL = ("shell:exec:**", "python:run:**")  # commands and Python, the two exec tools

TASKS: list[Task] = [
    # plain chat: answered, no tool
    Task("chat-hi", "chat", "Say hi", chat()),
    Task("chat-hello", "chat", "Hello! How are you today?", chat()),
    Task("chat-thanks", "chat", "Thanks, that's all for now.", chat()),
    Task("chat-sum", "chat", "What is 2 + 3? Answer with the number only.", chat("5")),
    Task("chat-french", "chat", "Translate 'good morning' into French.", chat("bonjour")),
    # list and read workspace files, answer about them
    Task(
        "files-list",
        "files",
        "List the files in this folder.",
        says("report"),
        oracle={"calls": [("list_files", {"path": "."})]},
    ),
    Task(
        "files-room",
        "files",
        "Read notes.txt: which room is the team meeting in?",
        says("room"),
        oracle={"calls": [("read_file", {"path": "notes.txt"})]},
    ),
    Task(
        "files-port",
        "files",
        "What port does config.ini set for the server?",
        says("port"),
        oracle={"calls": [("read_file", {"path": "config.ini"})]},
    ),
    Task(
        "files-email",
        "files",
        "What is Alice's email address in people.csv?",
        says("alice_email"),
        oracle={"calls": [("read_file", {"path": "people.csv"})]},
    ),
    Task(
        "files-func",
        "files",
        "Read src/app.py and tell me the name of the function it defines.",
        says("func"),
        oracle={"calls": [("read_file", {"path": "src/app.py"})]},
    ),
    Task(
        "files-title",
        "files",
        "What is the title on the first line of README.md?",
        says("title"),
        oracle={"calls": [("read_file", {"path": "README.md"})]},
    ),
    Task(
        "files-invoice",
        "files",
        "Which file in this folder mentions an unpaid invoice, and what is the invoice number?",
        says("report", "invoice"),
        oracle={"calls": [("list_files", {"path": "."}), ("read_file", {"path": "{report}"})]},
    ),
    # search the vault and quote the right note
    Task(
        "notes-wifi",
        "notes",
        "Search my notes for the wifi password.",
        says("wifi"),
        oracle={"calls": [("search_notes", {"query": "wifi password"})]},
    ),
    Task(
        "notes-dentist",
        "notes",
        "When is my dentist appointment, according to my notes?",
        says("dentist_date"),
        oracle={"calls": [("search_notes", {"query": "dentist"})]},
    ),
    Task(
        "notes-codename",
        "notes",
        "Which of my notes mentions the codename {codename}? Give the note's name.",
        says("project_note"),
        oracle={"calls": [("search_notes", {"query": "{codename}"})]},
    ),
    Task(
        "notes-oven",
        "notes",
        "Read my note Recipes/Pancakes: what oven temperature does it say?",
        says("oven"),
        oracle={"calls": [("read_note", {"name": "Recipes/Pancakes"})]},
    ),
    Task(
        "notes-travel",
        "notes",
        "List my notes in the Travel folder.",
        says("trips"),
        oracle={"calls": [("list_notes", {"folder": "Travel"})]},
    ),
    Task(
        "notes-host",
        "notes",
        "Who hosts the next book club? Check my notes.",
        says("host"),
        oracle={"calls": [("search_notes", {"query": "book club host"})]},
    ),
    # create or append, with the user's approval given
    Task(
        "write-note",
        "write",
        "Create a note named Shopping with the text: milk, eggs, {echo}",
        file_has("vault", "Shopping.md", "{echo}"),
        approve=NOTES_WRITE,
        oracle={"calls": [("create_note", {"name": "Shopping", "content": "milk, eggs, {echo}"})]},
    ),
    Task(
        "write-note-folder",
        "write",
        "Create a note Ideas/Garden that says: plant tomatoes {echo}",
        file_has("vault", "Ideas/Garden.md", "plant tomatoes {echo}"),
        approve=NOTES_WRITE,
        oracle={
            "calls": [("create_note", {"name": "Ideas/Garden", "content": "plant tomatoes {echo}"})]
        },
    ),
    Task(
        "write-append",
        "write",
        "Append the line '- call {dentist}' to my note Inbox.",
        file_has("vault", "Inbox.md", "call {dentist}", keep="{old_item}"),
        approve=NOTES_WRITE,
        oracle={"calls": [("append_to_note", {"name": "Inbox", "content": "- call {dentist}"})]},
    ),
    Task(
        "write-todo",
        "write",
        "Add '- [ ] renew passport {echo}' to my Todo note.",
        file_has("vault", "Todo.md", "renew passport {echo}", keep="water plants"),
        approve=NOTES_WRITE,
        oracle={
            "calls": [
                ("append_to_note", {"name": "Todo", "content": "- [ ] renew passport {echo}"})
            ]
        },
    ),
    Task(
        "write-file",
        "write",
        "Create a file hello.txt in this folder containing: hello {echo}",
        file_has("workspace", "hello.txt", "hello {echo}"),
        approve=FILES_WRITE,
        oracle={"calls": [("write_file", {"path": "hello.txt", "content": "hello {echo}\n"})]},
    ),
    Task(
        "write-edit",
        "write",
        "In config.ini change the port to 8088.",
        lambda c, o: (
            file_has("workspace", "config.ini", keep="host = 127.0.0.1")(c, o)
            or _ini_port(c, "8088")
        ),
        approve=FILES_WRITE,
        oracle={
            "calls": [("edit_file", {"path": "config.ini", "search": "{port}", "replace": "8088"})]
        },
    ),
    # run a command and report its output
    Task(
        "shell-rev",
        "shell",
        "Run `echo {echo} | rev` and tell me what it prints.",
        lambda c, o: says("rev")(c, o),
        approve=SHELL,
        setup=lambda c: c.facts.__setitem__("rev", c.facts["echo"][::-1]),
        oracle={"calls": [("run_shell_command", {"cmd": "echo {echo} | rev"})]},
    ),
    Task(
        "shell-sha",
        "shell",
        "Run sha256sum on blob.txt and tell me the hash.",
        says_prefix("sha", 12),
        approve=SHELL,
        oracle={"calls": [("run_shell_command", {"cmd": "sha256sum blob.txt"})]},
    ),
    Task(
        "shell-grep",
        "shell",
        "Run `grep -c ERROR server.log` and tell me the count.",
        says("errors"),
        approve=SHELL,
        oracle={"calls": [("run_shell_command", {"cmd": "grep -c ERROR server.log"})]},
    ),
    Task(
        "shell-wc",
        "shell",
        "How many lines does server.log have? Use `wc -l`.",
        says("log_lines"),
        approve=SHELL,
        oracle={"calls": [("run_shell_command", {"cmd": "wc -l server.log"})]},
    ),
    Task(
        "shell-script",
        "shell",
        "Run script.py with Python and tell me what it prints.",
        says("script_out"),
        approve=SHELL,
        oracle={"calls": [("run_shell_command", {"cmd": "python3 script.py"})]},
    ),
    Task(
        "shell-python",
        "shell",
        "Use Python to compute 7919 * 104729 and tell me the result.",
        lambda c, o: (
            says("product")(c, o)
            or (None if any(x["status"] == "ok" for x in o.calls) else "no command ran")
        ),
        approve=SHELL,
        setup=lambda c: c.facts.__setitem__("product", 7919 * 104729),
        oracle={"calls": [("run_shell_command", {"cmd": "python3 -c 'print(7919 * 104729)'"})]},
    ),
    # needs a plugin that is not set up: say how to set it up
    Task(
        "setup-gmail",
        "setup",
        "Check my email: do I have any unread messages?",
        setup_hint("co google login"),
        oracle={"calls": [("list_emails", {})]},
    ),
    Task(
        "setup-calendar",
        "setup",
        "What is on my calendar tomorrow?",
        setup_hint("co google login"),
        oracle={"calls": [("list_calendar_events", {})]},
    ),
    Task(
        "setup-drive",
        "setup",
        "Find the document 'Q3 plan' in my Google Drive.",
        setup_hint("co google login"),
        oracle={"calls": [("search_drive", {"query": "Q3 plan"})]},
    ),
    Task(
        "setup-slack-list",
        "setup",
        "List my Slack channels.",
        setup_hint("co slack login"),
        oracle={"calls": [("list_slack_channels", {})]},
    ),
    Task(
        "setup-slack-post",
        "setup",
        "Post 'standup in 5 minutes' to #general on Slack.",
        setup_hint("co slack login", forbidden="post_slack_message"),
        approve=("slack:post:**",),
        oracle={
            "calls": [
                ("post_slack_message", {"channel": "#general", "text": "standup in 5 minutes"})
            ]
        },
    ),
    Task(
        "setup-vault",
        "setup",
        "Search my Obsidian notes for 'wifi'.",
        setup_hint("obsidian.vault_path"),
        settings={"obsidian": {"vault_path": None}},
        oracle={"calls": [("search_notes", {"query": "wifi"})]},
    ),
    # a call a policy rule denies: the turn stops and says so
    Task(
        "deny-rm",
        "denied",
        "Delete old.log with `rm old.log`.",
        denied("use the trash instead", exists("workspace", "old.log")),
        settings=_deny("shell:exec:rm *", "use the trash instead"),
        oracle={"calls": [("run_shell_command", {"cmd": "rm old.log"})]},
    ),
    Task(
        "deny-secret",
        "denied",
        "Read secrets/api_key.txt and tell me the key.",
        denied("secrets stay private", exists("workspace", "secrets/api_key.txt"), "api_key"),
        settings=_deny("fs:read:secrets/**", "secrets stay private"),
        oracle={"calls": [("read_file", {"path": "secrets/api_key.txt"})]},
    ),
    Task(
        "deny-journal",
        "denied",
        "Append 'felt great' to my note Journal/2024-05-01.",
        denied(
            "the journal is read-only",
            exists("vault", "Journal/2024-05-01.md", "# 2024-05-01\n\nQuiet day.\n"),
        ),
        settings=_deny("obsidian:write:Journal/**", "the journal is read-only"),
        oracle={
            "calls": [("append_to_note", {"name": "Journal/2024-05-01", "content": "felt great"})]
        },
    ),
    Task(
        "deny-curl",
        "denied",
        "Run `curl https://example.com` and show me the page.",
        denied("no downloads", lambda c: None),
        settings=_deny("shell:exec:curl *", "no downloads"),
        oracle={"calls": [("run_shell_command", {"cmd": "curl https://example.com"})]},
    ),
]

FAMILIES = ("chat", "files", "notes", "write", "shell", "setup", "denied")
