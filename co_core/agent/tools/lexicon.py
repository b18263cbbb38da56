"""Words as data: which verbs ask for which effect, and other languages' words in English.

Tools describe themselves in English and declare their effect (``risk``: read, write,
send, exec). A user writes in English, French, German or Spanish. Two tables bridge that:

- :data:`EFFECT_VERBS`: the English verbs that explicitly ask for a write, a send or an
  execution. Only base forms (the imperative, the infinitive) and ``-ing`` forms count:
  "I created a note yesterday" asks for nothing.
- :data:`TRANSLATIONS`: per language, words (a trailing ``*`` matches any ending) and the
  English words they stand for. Verbs come in the forms that ask (imperative, infinitive,
  present), never past participles; nouns are the everyday words for what tools handle.

Adding a language is adding a table here; nothing else names a word.
"""

from __future__ import annotations

import unicodedata
from typing import Literal

Effect = Literal["write", "send", "exec"]

EFFECT_VERBS: dict[Effect, frozenset[str]] = {
    "write": frozenset(
        """create make write rewrite overwrite add append prepend insert put save store edit
        change modify update set replace rename move delete remove erase fix correct label
        tag archive mark jot copy paste fill clear empty""".split()
    ),
    "send": frozenset("send post reply respond forward share publish draft notify invite".split()),
    "exec": frozenset("run execute exec launch invoke eval evaluate compute calculate".split()),
}

# English forms of a verb that do not follow base + "ing" / base - "e" + "ing".
IRREGULAR_ING = {
    "run": "running",
    "put": "putting",
    "set": "setting",
    "jot": "jotting",
    "tag": "tagging",
    "exec": "execing",
}

# Other words for what tools' names say, counted a little when the user says them
# ("show me the files" asks to list them, "look through my notes" to search them).
SYNONYMS: dict[str, tuple[str, ...]] = {
    "open": ("read",),
    "view": ("read", "list"),
    "show": ("read", "list"),
    "display": ("read", "list"),
    "see": ("read", "list"),
    "tell": ("read",),
    "check": ("read", "search"),
    "look": ("search", "read"),
    "find": ("search",),
    "lookup": ("search",),
    "locate": ("search",),
    "browse": ("list",),
    "enumerate": ("list",),
    "add": ("append",),
    "put": ("append", "write"),
    "insert": ("append",),
    "jot": ("append", "create"),
    "make": ("create",),
    "new": ("create",),
    "save": ("write",),
    "store": ("write",),
    "change": ("edit",),
    "modify": ("edit",),
    "update": ("edit",),
    "set": ("edit",),
    "replace": ("edit",),
    "fix": ("edit",),
    "correct": ("edit",),
    "execute": ("run",),
    "exec": ("run",),
    "launch": ("run",),
    "invoke": ("run",),
    "compute": ("run",),
    "calculate": ("run",),
    "directory": ("folder",),
    "dir": ("folder",),
    "doc": ("document", "file"),
    "mail": ("email",),
    "inbox": ("email",),
    "unread": ("email",),
    "agenda": ("calendar",),
    "dm": ("message",),
}
SYNONYM_WEIGHT = 0.6
# Words that make a sentence a request, besides a question and the verbs above (in English;
# other languages' words are looked up through TRANSLATIONS first).
REQUEST_WORDS = frozenset(
    """please can could would will need want like let give show tell read list search find
    check look open get fetch help bitte kannst könntest brauche möchte gib sag peux
    pouvez voudrais besoin donne dis puedes podrías necesito quiero dame dime""".split()
)
# Words that end a clause: a verb asks for something about the words of its own clause.
CLAUSE_BREAKS = frozenset("but mais aber pero".split())

# Words that make a command in backticks the means of the request ("use `wc -l`").
USE = frozenset("use using utilise utiliser utilisez avec nimm nutze verwende usa usar".split())

# A word just before a verb that says it is not asked for ("don't delete", "ne supprime")...
NEGATIONS = frozenset(
    """not don't dont never no without ne n pas jamais sans nicht nie kein keine keinen
    ohne nunca sin""".split()
)
# ... or that makes it a noun or a participle ("the draft", "is set", "does config.ini set").
NOT_A_REQUEST = frozenset(
    """the a an my your our their his her its this that these those some any every each
    is are was were be been being has have had does did it's s
    le la les l un une des du de d mon ma mes ton ta tes son sa ses notre nos votre vos
    leur leurs ce cet cette est été
    der die das den dem des ein eine einen einem einer eines mein meine meinen meinem
    meiner dein deine deinen sein seine ihr ihre ist sind wurde wurden
    el los las una unos unas mi mis tu tus su sus es fue""".split()
)

# Words that introduce a name ("a note named Shopping"): never part of a copied name.
NAMING = frozenset("named called titled".split())

# Words a copied value neither starts nor ends on ("the wifi", not "wifi for the"): the
# determiners above, prepositions and question words.
SMALL_WORDS = NOT_A_REQUEST | frozenset(
    """à au aux avec dans pour par sur en et ou mit im in an am auf für von vom zu zum zur
    und oder ins al del con para por y o
    quel quelle quels quelles qui quoi quand où comment combien pourquoi
    welche welcher welches welchen wer wen wem was wann wo wie warum
    qué cuál cuáles quién quiénes cuándo dónde cómo cuánto""".split()
)

_FR = """
lis:read lire:read lisez:read ouvre:open ouvrir:open ouvrez:open affiche:show afficher:show
affichez:show montre:show montrer:show montrez:show liste:list lister:list listez:list
cherche:search chercher:search cherchez:search recherche:search rechercher:search
recherchez:search trouve:find trouver:find trouvez:find
crée:create créer:create créez:create crées:create écris:write écrire:write écrivez:write
ajoute:add ajouter:add ajoutez:add ajoutes:add rajoute:add rajouter:add rajoutez:add
insère:insert insérer:insert insérez:insert mets:put mettre:put mettez:put
enregistre:save enregistrer:save enregistrez:save sauvegarde:save sauvegarder:save
modifie:change modifier:change modifiez:change change:change changer:change changez:change
remplace:replace remplacer:replace remplacez:replace renomme:rename renommer:rename
déplace:move déplacer:move déplacez:move supprime:delete supprimer:delete supprimez:delete
efface:erase effacer:erase effacez:erase corrige:fix corriger:fix corrigez:fix
archive:archive archiver:archive archivez:archive note:note noter:jot notez:jot
envoie:send envoyer:send envoyez:send envoies:send poste:post poster:post postez:post
publie:publish publier:publish publiez:publish réponds:reply répondre:reply répondez:reply
transfère:forward transférer:forward transférez:forward partage:share partager:share
partagez:share rédige:draft rédiger:draft rédigez:draft
exécute:run exécuter:run exécutez:run lance:run lancer:run lancez:run calcule:calculate
calculer:calculate calculez:calculate
fichier*:file dossier*:folder répertoire*:folder notes:note courriel*:email mail:email
mails:email e-mail:email e-mails:email message*:message
agenda:calendar calendrier:calendar événement*:event rendez-vous:event réunion*:meeting
demain:tomorrow aujourd'hui:today canal:channel canaux:channel chaîne*:channel
commande*:command script*:script contenu:content texte:text ligne*:line document*:document
lien*:link libre*:free occupé*:busy étiquette*:label brouillon*:draft pièce:attachment
jointe:attachment personne*:people utilisateur*:user passe:password
nommé*:named appelé*:called intitulé*:titled
"""

_DE = """
lies:read lesen:read lest:read öffne:open öffnen:open zeig:show zeige:show zeigen:show
liste:list listen:list auflisten:list suche:search suchen:search
durchsuche:search durchsuchen:search finde:find finden:find
erstelle:create erstell:create erstellen:create leg:create lege:create legen:create
anlegen:create schreib:write schreibe:write schreiben:write füg:add füge:add fügen:add
hinzufügen:add ergänze:add ergänzen:add häng:append hänge:append hängen:append
anhängen:append speicher:save speichere:save speichern:save
änder:change ändere:change ändern:change bearbeite:edit bearbeiten:edit
aktualisiere:update aktualisieren:update setz:set setze:set setzen:set ersetz:replace
ersetze:replace ersetzen:replace benenne:rename umbenennen:rename verschieb:move
verschiebe:move verschieben:move lösch:delete lösche:delete löschen:delete entfern:remove
entferne:remove entfernen:remove korrigiere:fix korrigieren:fix trag:put trage:put
eintragen:put notiere:jot notieren:jot archiviere:archive archivieren:archive
markiere:mark markieren:mark
send:send sende:send senden:send schick:send schicke:send schicken:send verschicke:send
verschicken:send poste:post posten:post veröffentliche:publish veröffentlichen:publish
antworte:reply antworten:reply beantworte:reply beantworten:reply leite:forward
weiterleiten:forward teile:share teilen:share entwirf:draft entwerfen:draft
führ:run führe:run ausführen:run starte:run starten:run berechne:calculate
berechnen:calculate rechne:calculate rechnen:calculate
datei*:file ordner*:folder verzeichnis*:folder notiz*:note mail:email mails:email
e-mail*:email nachricht*:message ungelesen*:unread kalender*:calendar termin:event termine:event
besprechung*:meeting morgen:tomorrow heute:today kanal:channel kanäle*:channel
befehl*:command skript*:script inhalt*:content text:text zeile*:line dokument*:document
link*:link frei:free freie:free freien:free beschäftigt:busy anhang:attachment entwurf:draft leute:people
benutzer*:user passwort*:password
genannt*:named namens:named benannt*:named heißt:called betitelt*:titled
"""

_ES = """
lee:read leer:read lea:read abre:open abrir:open muestra:show mostrar:show muestre:show
lista:list listar:list enumera:list busca:search buscar:search busque:search
encuentra:find encontrar:find
crea:create crear:create escribe:write escribir:write escriba:write
añade:add añadir:add añada:add agrega:add agregar:add agregue:add inserta:insert
insertar:insert pon:put poner:put ponga:put guarda:save guardar:save guarde:save
modifica:change modificar:change modifique:change cambia:change cambiar:change
cambie:change actualiza:update actualizar:update actualice:update reemplaza:replace
reemplazar:replace reemplace:replace renombra:rename renombrar:rename mueve:move
mover:move mueva:move borra:delete borrar:delete borre:delete elimina:delete
eliminar:delete elimine:delete corrige:fix corregir:fix archiva:archive archivar:archive
anota:jot anotar:jot
envía:send envia:send enviar:send envíe:send manda:send mandar:send mande:send
publica:publish publicar:publish publique:publish responde:reply responder:reply
responda:reply reenvía:forward reenviar:forward comparte:share compartir:share
comparta:share redacta:draft redactar:draft
ejecuta:run ejecutar:run ejecute:run lanza:run lanzar:run corre:run correr:run
calcula:calculate calcular:calculate calcule:calculate
archivo*:file fichero*:file carpeta*:folder directorio*:folder nota:note notas:note
correo*:email mensaje*:message leído*:read agenda:calendar calendario*:calendar
evento*:event cita:event citas:event reunión:meeting reuniones:meeting mañana:tomorrow hoy:today
canal:channel canales:channel comando*:command contenido*:content texto*:text
línea*:line documento*:document enlace*:link libre*:free ocupado*:busy etiqueta*:label
borrador*:draft adjunto*:attachment usuario*:user contraseña*:password
llamad*:called nombrad*:named titulad*:titled
"""


def _table(text: str) -> dict[str, str]:
    pairs = (item.rsplit(":", 1) for item in text.split())
    return {word: english for word, english in pairs}


TRANSLATIONS: dict[str, dict[str, str]] = {"fr": _table(_FR), "de": _table(_DE), "es": _table(_ES)}


def plain(word: str) -> str:
    """``word`` lowercased without accents: "Lösche" and "losche" look the same."""
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _merged() -> tuple[dict[str, str], list[tuple[str, str]]]:
    exact: dict[str, str] = {}
    stems: list[tuple[str, str]] = []
    for table in TRANSLATIONS.values():
        for word, english in table.items():
            if word.endswith("*"):
                stems.append((plain(word[:-1]), english))
            else:
                exact[plain(word)] = english
    stems.sort(key=lambda item: -len(item[0]))  # the longest stem decides
    return exact, stems


_EXACT, _STEMS = _merged()


def in_english(word: str) -> str:
    """The English word a French, German or Spanish ``word`` stands for; else ``word``."""
    key = plain(word)
    found = _EXACT.get(key)
    if found is not None:
        return found
    for stem, english in _STEMS:
        if key.startswith(stem):
            return english
    return word
