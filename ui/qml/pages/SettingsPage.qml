// Settings: sampling (with presets), chunk size, draft tokens, theme, language and font size.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import ExlStudio

ScrollView {
    id: page
    required property AppContext app
    readonly property SettingsViewModel settings: app.settings
    // Numbers as the interface language writes them (0,95 in Dutch and German).
    readonly property var numberLocale: Qt.locale(settings.language)
    contentWidth: availableWidth
    ScrollBar.vertical.policy: contentHeight > availableHeight ? ScrollBar.AlwaysOn : ScrollBar.AsNeeded

    ColumnLayout {
        width: Math.min(page.availableWidth - 24, 720)
        x: 12
        spacing: 10

        Label { text: qsTr("Sampling"); font.bold: true; Layout.topMargin: 12 }
        Flow {
            Layout.fillWidth: true
            spacing: 8
            Label { text: qsTr("Preset"); height: 40; verticalAlignment: Text.AlignVCenter }
            Button { text: qsTr("Balanced"); Accessible.name: text; onClicked: page.settings.applyPreset("balanced") }
            Button { text: qsTr("Precise"); Accessible.name: text; onClicked: page.settings.applyPreset("precise") }
            Button { text: qsTr("Creative"); Accessible.name: text; onClicked: page.settings.applyPreset("creative") }
        }
        LabeledSlider {
            Layout.fillWidth: true
            label: qsTr("Temperature"); from: 0; to: 2; stepSize: 0.05
            value: page.settings.temperature; valueText: Number(value).toLocaleString(page.numberLocale, "f", 2)
            onMoved: v => page.settings.temperature = v
        }
        LabeledSlider {
            Layout.fillWidth: true
            label: qsTr("Top-k"); from: 0; to: 200; stepSize: 1
            value: page.settings.topK; valueText: value === 0 ? qsTr("off") : String(value)
            onMoved: v => page.settings.topK = v
        }
        LabeledSlider {
            Layout.fillWidth: true
            label: qsTr("Top-p"); from: 0; to: 1; stepSize: 0.01
            value: page.settings.topP; valueText: Number(value).toLocaleString(page.numberLocale, "f", 2)
            onMoved: v => page.settings.topP = v
        }
        LabeledSlider {
            Layout.fillWidth: true
            label: qsTr("Min-p"); from: 0; to: 0.5; stepSize: 0.01
            value: page.settings.minP; valueText: Number(value).toLocaleString(page.numberLocale, "f", 2)
            onMoved: v => page.settings.minP = v
        }
        LabeledSlider {
            Layout.fillWidth: true
            label: qsTr("Repetition penalty"); from: 1; to: 2; stepSize: 0.01
            value: page.settings.repetitionPenalty; valueText: Number(value).toLocaleString(page.numberLocale, "f", 2)
            onMoved: v => page.settings.repetitionPenalty = v
        }
        RowLayout {
            Layout.fillWidth: true
            Label { text: qsTr("Seed (-1 for random)"); Layout.fillWidth: true; wrapMode: Text.Wrap }
            SpinBox {
                from: -1; to: 2147483647; editable: true
                value: page.settings.seed
                Accessible.name: qsTr("Seed")
                onValueModified: page.settings.seed = value
            }
        }
        // The longest reply, for the local engine and remote endpoints alike; 0 reads "until the
        // context is full". A reply that stops here says so under it.
        RowLayout {
            Label {
                text: qsTr("Max reply tokens")
                Layout.fillWidth: true
                wrapMode: Text.Wrap
            }
            SpinBox {
                id: maxTokens
                objectName: "maxNewTokensSpinBox"
                from: 0; to: 131072; stepSize: 256; editable: true
                value: page.settings.maxNewTokens
                Layout.preferredWidth: Math.max(implicitWidth, untilFull.implicitWidth + 100)
                textFromValue: (v, locale) => v === 0 ? qsTr("until the context is full") : Number(v).toLocaleString(locale, "f", 0)
                // Digits only: the locale's group separators (1,024 / 1.024) and the words of 0 drop out.
                valueFromText: (text, locale) => {
                    const digits = text.replace(/[^0-9]/g, "")
                    return digits.length > 0 ? parseInt(digits, 10) : 0
                }
                validator: RegularExpressionValidator { regularExpression: /.*/ }
                Accessible.name: qsTr("Max reply tokens")
                Accessible.description: qsTr("0: until the context is full")
                onValueModified: page.settings.maxNewTokens = value
                TextMetrics { id: untilFull; text: qsTr("until the context is full") }
            }
        }

        Label { text: qsTr("Engine"); font.bold: true; Layout.topMargin: 12 }
        LabeledSlider {
            Layout.fillWidth: true
            label: qsTr("Max chunk size"); from: 64; to: 8192; stepSize: 64
            value: page.settings.maxChunkSize; valueText: qsTr("%1 tokens").arg(value)
            onMoved: v => page.settings.maxChunkSize = v
        }
        // The draft-token count of speculative decoding: the same setting as the Models page's
        // slider (ModelManager.draftTokens, which every request's sampling takes; the settings
        // keep it for the next start).
        LabeledSlider {
            objectName: "draftTokensSlider"
            Layout.fillWidth: true
            label: qsTr("Draft tokens")
            from: 0; to: 8; stepSize: 1
            value: page.app.models.draftTokens
            valueText: value === 0 ? qsTr("off")
                       : page.app.models.draftModelIndex < 0 ? qsTr("%1 by n-gram lookup").arg(value)
                       : qsTr("%1 by the draft model").arg(value)
            onMoved: v => page.app.models.draftTokens = v
        }
        Label {
            objectName: "draftTokensNote"
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            opacity: 0.75
            text: qsTr("Tokens drafted per model pass for speculative decoding (0: off), as on the Models page, where the draft model is chosen.")
        }

        Label { text: qsTr("Hugging Face"); font.bold: true; Layout.topMargin: 12 }
        RowLayout {
            Layout.fillWidth: true
            Label { text: qsTr("Hugging Face token") }
            TextField {
                id: hubTokenField
                objectName: "hubTokenField"
                Layout.fillWidth: true
                Layout.preferredWidth: 160
                text: page.settings.hubToken
                echoMode: TextInput.Password
                placeholderText: qsTr("hf_…")
                selectByMouse: true
                Accessible.name: qsTr("Hugging Face token")
                onEditingFinished: page.settings.hubToken = text
            }
        }
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            opacity: 0.75
            text: qsTr("For gated and private models: create a read token in your Hugging Face account settings and accept the model's terms on its page. Empty: HF_TOKEN, or the token saved by the hf command line, is used.")
        }

        Label { text: qsTr("Appearance"); font.bold: true; Layout.topMargin: 12 }
        Connections {
            target: page.settings
            function onThemeChanged() { themeBox.sync() }
            function onLanguageChanged() { languageBox.currentIndex = languageBox.indexOfValue(page.settings.language) }
        }
        RowLayout {
            Layout.fillWidth: true
            Label { text: qsTr("Theme"); Layout.fillWidth: true }
            ComboBox {
                id: themeBox
                objectName: "themeBox"
                implicitContentWidthPolicy: ComboBox.WidestText
                textRole: "text"; valueRole: "value"
                model: [{ value: "system", text: qsTr("System") }, { value: "light", text: qsTr("Light") },
                        { value: "dark", text: qsTr("Dark") }]
                // The model is made anew when the language changes: choose the setting again then.
                function sync() { currentIndex = Math.max(0, indexOfValue(page.settings.theme)) }
                Component.onCompleted: sync()
                onModelChanged: Qt.callLater(sync)
                onActivated: page.settings.theme = currentValue
                Accessible.name: qsTr("Theme")
            }
        }
        RowLayout {
            Layout.fillWidth: true
            Label { text: qsTr("Language"); Layout.fillWidth: true }
            ComboBox {
                id: languageBox
                objectName: "languageBox"
                implicitContentWidthPolicy: ComboBox.WidestText
                textRole: "text"; valueRole: "value"
                // Each language is named in itself.
                model: [{ value: "en", text: "English" }, { value: "nl", text: "Nederlands" }, { value: "de", text: "Deutsch" }]
                Component.onCompleted: currentIndex = indexOfValue(page.settings.language)
                onActivated: page.settings.language = currentValue
                Accessible.name: qsTr("Language")
            }
        }
        WrappingCheckBox {
            Layout.fillWidth: true
            text: qsTr("Tint text from accepted draft tokens in replies")
            checked: page.settings.tintDraftTokens
            Accessible.name: text
            onToggled: page.settings.tintDraftTokens = checked
        }
        LabeledSlider {
            Layout.fillWidth: true
            label: qsTr("Font size"); from: 8; to: 24; stepSize: 1
            value: page.settings.fontSize; valueText: qsTr("%1 pt").arg(value)
            onMoved: v => page.settings.fontSize = v
        }
        Label {
            Layout.topMargin: 12
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            opacity: 0.6
            text: qsTr("EXL Studio %1 · chats and settings stay on this computer.").arg(page.app.version)
        }
    }
}
