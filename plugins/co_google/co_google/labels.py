"""Gmail labels by name, looked up once per session: the one place names become ids.

``label_email``'s resolver writes the labels' exact names into the call, so the approval
prompt shows which labels will change (``Receipts``, not the ``receipts`` the model
typed), and the tool then finds the same ones.
"""

from __future__ import annotations

from typing import Any

SYSTEM_LABELS = {
    "INBOX",
    "SENT",
    "DRAFT",
    "SPAM",
    "TRASH",
    "UNREAD",
    "STARRED",
    "IMPORTANT",
    "CHAT",
    "CATEGORY_PERSONAL",
    "CATEGORY_SOCIAL",
    "CATEGORY_PROMOTIONS",
    "CATEGORY_UPDATES",
    "CATEGORY_FORUMS",
}


class UnknownLabel(LookupError):
    """No label has that name; the message lists the ones that exist."""


def listed(google: Any, fresh: bool = False) -> list[dict[str, Any]]:
    """The user's labels, listed once per session (again when a name is not found)."""
    if google.labels is None or fresh:
        request = google.client("gmail").users().labels().list(userId="me")
        google.labels = list(google.execute(request, "gmail").get("labels", []))
    labels: list[dict[str, Any]] = google.labels
    return labels


def find(google: Any, label: str) -> dict[str, str]:
    """``{"id", "name"}`` of the label called ``label`` (a system label, a name in any
    case, or an id)."""
    label = label.strip() or "INBOX"
    if label.upper() in SYSTEM_LABELS:
        return {"id": label.upper(), "name": label.upper()}
    for fresh in (False, True):
        for item in listed(google, fresh):
            if label.lower() in (item.get("name", "").lower(), item.get("id", "").lower()):
                return {"id": str(item["id"]), "name": str(item.get("name") or item["id"])}
    names = ", ".join(sorted(item.get("name", "") for item in listed(google))) or "none"
    raise UnknownLabel(f"There is no Gmail label {label!r}. Labels: {names}")


def split(text: str) -> list[str]:
    return [name.strip() for name in (text or "").split(",") if name.strip()]


def exact(google: Any, text: str) -> str:
    """Comma-separated label names as the labels are really called."""
    return ", ".join(find(google, name)["name"] for name in split(text))
