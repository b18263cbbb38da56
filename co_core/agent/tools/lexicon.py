"""Other languages' words in English: a French, German or Spanish word read as the English
word it stands for, so that a user's words match the English names and descriptions of
tools (co_core.agent.tools.bm25) whatever language they are written in.

:data:`TRANSLATIONS`: per language, words (a trailing ``*`` matches any ending) and the
English words they stand for. Verbs come in the forms that ask (imperative, infinitive,
present), never past participles; nouns are the everyday words for what tools handle.
Adding a language is adding a table here; the steering's own words (which verbs ask for
an effect, which words say nothing) are in co_core.steering.lexicon.
"""

from __future__ import annotations

import unicodedata

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
météo:weather prévisions:forecast pluie:rain neige:snow actualités:news bourse:stock
trafic:traffic allume:turn allumer:turn éteins:turn éteindre:turn verrouille:lock
achète:buy acheter:buy appelle:call appeler:call joue:play réserve:book réserver:book
tâche*:task todo:todo recette*:recipe favori*:bookmark signet*:bookmark lien*:link
faite:done fait:done terminée:done coche:tick cocher:tick liste*:list marque:mark
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
wetter:weather wettervorhersage:forecast vorhersage:forecast regen:rain schnee:snow
verkehr:traffic schalte:switch schalten:switch kaufe:buy kaufen:buy bestelle:order
bestellen:order ruf:call rufe:call anrufen:call spiele:play buche:book buchen:book
aufgabe*:task todo*:todo rezept*:recipe lesezeichen:bookmark erledigt:done hak:tick
abhaken:tick
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
tiempo:weather clima:weather pronóstico:forecast lluvia:rain nieve:snow noticias:news
tráfico:traffic enciende:turn encender:turn apaga:turn apagar:turn compra:buy
comprar:buy reserva:book reservar:book
tarea*:task receta*:recipe marcador*:bookmark favorito*:bookmark hecha:done hecho:done
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
