#!/usr/bin/env python3
"""Fills the Dutch and German .ts files from the table below (run after `update_translations`;
Qt Linguist works on the same files). Every source string must have an entry."""
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

T = {  # source: (Dutch, German)
 'Message (Enter to send, Shift+Enter for a new line)': ('Bericht (Enter om te versturen, Shift+Enter voor een nieuwe regel)', 'Nachricht (Eingabe zum Senden, Umschalt+Eingabe für eine neue Zeile)'),
 'Message': ('Bericht', 'Nachricht'),
 'Stop': ('Stoppen', 'Stopp'),
 'Send': ('Versturen', 'Senden'),
 'System prompt for this conversation (optional)': ('Systeemprompt voor dit gesprek (optioneel)', 'Systemprompt für diese Unterhaltung (optional)'),
 'System prompt': ('Systeemprompt', 'Systemprompt'),
 'Type a message to start.': ('Typ een bericht om te beginnen.', 'Geben Sie eine Nachricht ein, um zu beginnen.'),
 'Load a model on the Models page, then type a message.': ('Laad een model op de pagina Modellen en typ dan een bericht.', 'Laden Sie auf der Seite „Modelle“ ein Modell und geben Sie dann eine Nachricht ein.'),
 'Could not save the conversation: %1': ('Het gesprek kon niet worden opgeslagen: %1', 'Die Unterhaltung konnte nicht gespeichert werden: %1'),
 'Could not save the message: %1': ('Het bericht kon niet worden opgeslagen: %1', 'Die Nachricht konnte nicht gespeichert werden: %1'),
 'Could not save the reply: %1': ('Het antwoord kon niet worden opgeslagen: %1', 'Die Antwort konnte nicht gespeichert werden: %1'),
 'New chat': ('Nieuwe chat', 'Neuer Chat'),
 'Search chats': ('Chats doorzoeken', 'Chats durchsuchen'),
 'Rename…': ('Naam wijzigen…', 'Umbenennen…'),
 'Delete': ('Verwijderen', 'Löschen'),
 'No chat matches.': ('Geen chat gevonden.', 'Kein Chat gefunden.'),
 'No chats yet.': ('Nog geen chats.', 'Noch keine Chats.'),
 'Rename chat': ('Chat hernoemen', 'Chat umbenennen'),
 'Chat title': ('Titel van de chat', 'Titel des Chats'),
 'Weights': ('Gewichten', 'Gewichte'),
 'Cache': ('Cache', 'Cache'),
 'Scratch': ('Werkgeheugen', 'Arbeitsspeicher'),
 'Free': ('Vrij', 'Frei'),
 '%1 %2 GiB': ('%1 %2 GiB', '%1 %2 GiB'),
 'The memory planner is not available yet.': ('De geheugenplanner is nog niet beschikbaar.', 'Der Speicherplaner ist noch nicht verfügbar.'),
 'Fits: %1 of %2 GiB on %3.': ('Past: %1 van %2 GiB op %3.', 'Passt: %1 von %2 GiB auf %3.'),
 'system memory': ('het systeemgeheugen', 'dem Systemspeicher'),
 'the GPU': ('de GPU', 'der GPU'),
 'Does not fit: needs %1 of %2 GiB.': ('Past niet: vraagt %1 van %2 GiB.', 'Passt nicht: benötigt %1 von %2 GiB.'),
 'Largest context that fits: %1 tokens · bound decode speed %2 tok/s': ('Grootste context die past: %1 tokens · begrensde decodeersnelheid %2 tok/s', 'Größter passender Kontext: %1 Token · begrenzte Dekodiergeschwindigkeit %2 Tok./s'),
 'No model is loaded.': ('Er is geen model geladen.', 'Es ist kein Modell geladen.'),
 'EXL Studio': ('EXL Studio', 'EXL Studio'),
 'Chat': ('Chat', 'Chat'),
 'Models': ('Modellen', 'Modelle'),
 'Telemetry': ('Telemetrie', 'Telemetrie'),
 'Settings': ('Instellingen', 'Einstellungen'),
 '%1 on %2': ('%1 op %2', '%1 auf %2'),
 'No model loaded': ('Geen model geladen', 'Kein Modell geladen'),
 'No CUDA device found: running on the CPU backend. Replies will be slow.': ('Geen CUDA-apparaat gevonden: alles draait op de CPU. Antwoorden zullen traag zijn.', 'Kein CUDA-Gerät gefunden: Alles läuft auf der CPU. Antworten werden langsam sein.'),
 'Simulated engine: replies, speeds and memory figures are made up until the engine is connected.': ('Gesimuleerde engine: antwoorden, snelheden en geheugencijfers zijn verzonnen tot de engine is aangesloten.', 'Simulierte Engine: Antworten, Geschwindigkeiten und Speicherwerte sind erfunden, bis die Engine angebunden ist.'),
 'Chats cannot be saved: %1': ('Chats kunnen niet worden opgeslagen: %1', 'Chats können nicht gespeichert werden: %1'),
 'Edit message': ('Bericht bewerken', 'Nachricht bearbeiten'),
 'Copy': ('Kopiëren', 'Kopieren'),
 'Copy message': ('Bericht kopiëren', 'Nachricht kopieren'),
 'Edit': ('Bewerken', 'Bearbeiten'),
 'Send edited': ('Bewerkt versturen', 'Bearbeitet senden'),
 'Cancel': ('Annuleren', 'Abbrechen'),
 'Regenerate': ('Opnieuw genereren', 'Neu generieren'),
 'loaded': ('geladen', 'geladen'),
 '%1 · %2B parameters · %3 bpw (head %4) · %5 GB · %6k context': ('%1 · %2 mld. parameters · %3 bpw (kop %4) · %5 GB · %6k context', '%1 · %2 Mrd. Parameter · %3 bpw (Kopf %4) · %5 GB · %6k Kontext'),
 'Load settings': ('Laadinstellingen', 'Ladeeinstellungen'),
 'Bits per weight (what-if)': ('Bits per gewicht (wat als)', 'Bits pro Gewicht (Was-wäre-wenn)'),
 '%1 bpw': ('%1 bpw', '%1 bpw'),
 'Context length': ('Contextlengte', 'Kontextlänge'),
 '%1 tokens': ('%1 tokens', '%1 Token'),
 'Cache type': ('Cachetype', 'Cache-Typ'),
 'Draft tokens': ('Concepttokens', 'Entwurfstoken'),
 'off': ('uit', 'aus'),
 'Memory fit': ('Past het in het geheugen?', 'Speicherbedarf'),
 'Load': ('Laden', 'Laden'),
 'Load the selected model': ('Het gekozen model laden', 'Das ausgewählte Modell laden'),
 'Unload': ('Ontladen', 'Entladen'),
 'Unload the model': ('Het model ontladen', 'Das Modell entladen'),
 'Loading progress': ('Voortgang van het laden', 'Ladefortschritt'),
 'Loading failed: %1': ('Laden mislukt: %1', 'Laden fehlgeschlagen: %1'),
 'No model found in %1.': ('Geen model gevonden in %1.', 'Kein Modell in %1 gefunden.'),
 'Out of memory on %1 while loading layer 41 of 80.': ('Geheugen vol op %1 bij het laden van laag 41 van 80.', 'Kein Speicher mehr auf %1 beim Laden von Schicht 41 von 80.'),
 '%n token(s)': (['%n token', '%n tokens'], ['%n Token', '%n Token']),
 'first token %1 ms': ('eerste token %1 ms', 'erstes Token %1 ms'),
 'prefill %1 tok/s': ('prefill %1 tok/s', 'Prefill %1 Tok./s'),
 'decode %1 tok/s': ('decoderen %1 tok/s', 'Dekodieren %1 Tok./s'),
 'stopped': ('gestopt', 'angehalten'),
 'Sampling': ('Sampling', 'Sampling'),
 'Preset': ('Voorinstelling', 'Voreinstellung'),
 'Balanced': ('Gebalanceerd', 'Ausgewogen'),
 'Precise': ('Precies', 'Präzise'),
 'Creative': ('Creatief', 'Kreativ'),
 'Temperature': ('Temperatuur', 'Temperatur'),
 'Top-k': ('Top-k', 'Top-k'),
 'Top-p': ('Top-p', 'Top-p'),
 'Min-p': ('Min-p', 'Min-p'),
 'Repetition penalty': ('Herhalingsstraf', 'Wiederholungsstrafe'),
 'Seed (-1 for random)': ('Seed (-1 voor willekeurig)', 'Seed (-1 für zufällig)'),
 'Seed': ('Seed', 'Seed'),
 'Engine': ('Engine', 'Engine'),
 'Max chunk size': ('Maximale blokgrootte', 'Maximale Blockgröße'),
 'Appearance': ('Weergave', 'Darstellung'),
 'Theme': ('Thema', 'Design'),
 'System': ('Systeem', 'System'),
 'Light': ('Licht', 'Hell'),
 'Dark': ('Donker', 'Dunkel'),
 'Language': ('Taal', 'Sprache'),
 'Font size': ('Lettergrootte', 'Schriftgröße'),
 '%1 pt': ('%1 pt', '%1 pt'),
 'EXL Studio %1 · chats and settings stay on this computer.': ('EXL Studio %1 · chats en instellingen blijven op deze computer.', 'EXL Studio %1 · Chats und Einstellungen bleiben auf diesem Computer.'),
 'Decode': ('Decoderen', 'Dekodieren'),
 'Prefill': ('Prefill', 'Prefill'),
 'Bandwidth bound': ('Bandbreedtegrens', 'Bandbreitengrenze'),
 'Of the bound': ('Van de grens', 'Der Grenze'),
 'Throughput graph': ('Doorvoergrafiek', 'Durchsatzdiagramm'),
 'Time (s)': ('Tijd (s)', 'Zeit (s)'),
 'Tokens/s': ('Tokens/s', 'Token/s'),
 'Observed decode speed': ('Gemeten decodeersnelheid', 'Gemessene Dekodiergeschwindigkeit'),
 'Running on the CPU: no VRAM in use.': ('Draait op de CPU: geen VRAM in gebruik.', 'Läuft auf der CPU: kein VRAM belegt.'),
 'VRAM: %1 of %2 GiB in use': ('VRAM: %1 van %2 GiB in gebruik', 'VRAM: %1 von %2 GiB belegt'),
 'VRAM: no reading yet': ('VRAM: nog geen meting', 'VRAM: noch kein Messwert'),
 'VRAM in use': ('VRAM in gebruik', 'Belegter VRAM'),
 'Chat with local EXL2 models.': ('Chat met lokale EXL2-modellen.', 'Chatten mit lokalen EXL2-Modellen.'),
 'Show the version.': ('Toon de versie.', 'Version anzeigen.'),
 'Load the model in DIR at start.': ('Laad bij het starten het model in DIR.', 'Beim Start das Modell in DIR laden.'),
 'Run on cpu or cuda[:N].': ('Draai op cpu of cuda[:N].', 'Auf cpu oder cuda[:N] ausführen.'),
 'Interface language: en, nl or de.': ('Taal van de interface: en, nl of de.', 'Sprache der Oberfläche: en, nl oder de.'),
 'Theme: light or dark.': ('Thema: light of dark.', 'Design: light oder dark.'),
 'Keep chats and settings in DIR.': ('Bewaar chats en instellingen in DIR.', 'Chats und Einstellungen in DIR speichern.'),
 'Open PAGE first: chat, models, telemetry or settings.': ('Open eerst PAGE: chat, models, telemetry of settings.', 'Zuerst PAGE öffnen: chat, models, telemetry oder settings.'),
 'Write a PNG of the window to FILE and quit.': ('Schrijf een PNG van het venster naar FILE en sluit af.', 'Ein PNG des Fensters nach FILE schreiben und beenden.'),
 'Send TEXT as a message at start.': ('Verstuur bij het starten TEXT als bericht.', 'Beim Start TEXT als Nachricht senden.'),
 'Quit after MS milliseconds.': ('Sluit af na MS milliseconden.', 'Nach MS Millisekunden beenden.'),
 "Unknown device '%1': use cpu or cuda[:N].": ("Onbekend apparaat '%1': gebruik cpu of cuda[:N].", "Unbekanntes Gerät '%1': cpu oder cuda[:N] verwenden."),
 "Unknown language '%1': use en, nl or de.": ("Onbekende taal '%1': gebruik en, nl of de.", "Unbekannte Sprache '%1': en, nl oder de verwenden."),
 "Unknown theme '%1': use light or dark.": ("Onbekend thema '%1': gebruik light of dark.", "Unbekanntes Design '%1': light oder dark verwenden."),
 "Unknown page '%1'.": ("Onbekende pagina '%1'.", "Unbekannte Seite '%1'."),
 'Use the simulated engine instead of the real one.': ('Gebruik de gesimuleerde engine in plaats van de echte.', 'Die simulierte Engine statt der echten verwenden.'),
 'Simulated engine (--fake): replies, speeds and memory figures are made up.': ('Gesimuleerde engine (--fake): antwoorden, snelheden en geheugencijfers zijn verzonnen.', 'Simulierte Engine (--fake): Antworten, Geschwindigkeiten und Speicherwerte sind erfunden.'),
 'Running on the CPU backend (%1). Replies will be slow.': ('Alles draait op de CPU (%1). Antwoorden zullen traag zijn.', 'Alles läuft auf der CPU (%1). Antworten werden langsam sein.'),
 'the CPU was asked for': ('de CPU werd gevraagd', 'die CPU wurde angefordert'),
 '%1 is not a folder.': ('%1 is geen map.', '%1 ist kein Ordner.'),
 '%1 has no tokenizer.json, so it cannot chat.': ('%1 heeft geen tokenizer.json en kan dus niet chatten.', '%1 hat keine tokenizer.json und kann daher nicht chatten.'),
 "The model's chat template cannot be read (%1); using ChatML instead.": ('Het chatsjabloon van het model is onleesbaar (%1); ChatML wordt gebruikt.', 'Die Chatvorlage des Modells ist nicht lesbar (%1); stattdessen wird ChatML verwendet.'),
 'The model has no chat template; using ChatML.': ('Het model heeft geen chatsjabloon; ChatML wordt gebruikt.', 'Das Modell hat keine Chatvorlage; ChatML wird verwendet.'),
 'Out of memory while loading %1: %2. Try a shorter context, a smaller cache type or a smaller model.': ('Geheugen vol bij het laden van %1: %2. Probeer een kortere context, een kleiner cachetype of een kleiner model.', 'Speicher voll beim Laden von %1: %2. Versuchen Sie einen kürzeren Kontext, einen kleineren Cache-Typ oder ein kleineres Modell.'),
 'Out of memory while loading %1. Try a shorter context, a smaller cache type or a smaller model.': ('Geheugen vol bij het laden van %1. Probeer een kortere context, een kleiner cachetype of een kleiner model.', 'Speicher voll beim Laden von %1. Versuchen Sie einen kürzeren Kontext, einen kleineren Cache-Typ oder ein kleineres Modell.'),
 'Could not load %1: %2': ('%1 kon niet worden geladen: %2', '%1 konnte nicht geladen werden: %2'),
 'The conversation is empty.': ('Het gesprek is leeg.', 'Die Unterhaltung ist leer.'),
 'The conversation (%1 tokens) does not fit the context of %2 tokens. Start a new chat or load the model with a longer context.': ('Het gesprek (%1 tokens) past niet in de context van %2 tokens. Begin een nieuwe chat of laad het model met een langere context.', 'Die Unterhaltung (%1 Token) passt nicht in den Kontext von %2 Token. Beginnen Sie einen neuen Chat oder laden Sie das Modell mit längerem Kontext.'),
 'Models folder (default: in the data folder)': ('Modellenmap (standaard: in de gegevensmap)', 'Modellordner (Standard: im Datenordner)'),
 'Models folder': ('Modellenmap', 'Modellordner'),
 'Add folder…': ('Map toevoegen…', 'Ordner hinzufügen…'),
 'Add a model folder': ('Een modelmap toevoegen', 'Einen Modellordner hinzufügen'),
 'Rescan': ('Opnieuw zoeken', 'Neu suchen'),
 'Look for model folders again': ('Opnieuw naar modelmappen zoeken', 'Erneut nach Modellordnern suchen'),
 'No models found. Put model folders into the models folder, add a folder, or drop one here.': ('Geen modellen gevonden. Zet modelmappen in de modellenmap, voeg een map toe of sleep er een hierheen.', 'Keine Modelle gefunden. Legen Sie Modellordner in den Modellordner, fügen Sie einen Ordner hinzu oder ziehen Sie einen hierher.'),
}

def fill(path: Path, column: int) -> list[str]:
    tree = ET.parse(path)
    missing = []
    for message in tree.iter('message'):
        source = message.find('source').text
        translation = message.find('translation')
        if source not in T:
            missing.append(source)
            continue
        value = T[source][column]
        for child in list(translation):
            translation.remove(child)
        translation.attrib.pop('type', None)
        if isinstance(value, list):
            translation.text = None
            for form in value:
                ET.SubElement(translation, 'numerusform').text = form
        else:
            translation.text = value
    body = ET.tostring(tree.getroot(), encoding='unicode')
    path.write_text('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n' + body + '\n', encoding='utf-8')
    return missing

here = Path(__file__).resolve().parent
missing = fill(here / 'exl-studio_nl.ts', 0) + fill(here / 'exl-studio_de.ts', 1)
if missing:
    print('no translation for:', *sorted(set(missing)), sep='\n  ')
    sys.exit(1)
