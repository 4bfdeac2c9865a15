// The models page: the model list on the left; load settings, the VRAM fit and load/unload on
// the right.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import ExlStudio

Item {
    id: page
    required property AppContext app
    readonly property ModelManager models: app.models

    // Drop a model folder anywhere on the page to add it.
    DropArea {
        anchors.fill: parent
        enabled: !page.app.simulated
        onDropped: drop => {
            addError.text = ""
            for (const url of drop.urls)
                page.models.addFolder(url.toString())
        }
    }
    // Folders are scanned off the GUI thread: the verdict on an added one comes later.
    Connections {
        target: page.models
        function onFolderRejected(pathOrUrl) { addError.text = qsTr("No model found in %1.").arg(pathOrUrl) }
    }

    RowLayout {
        anchors.fill: parent
        anchors.margins: 12
        spacing: 16

        ColumnLayout {
            Layout.preferredWidth: 520
            Layout.fillHeight: true
            Label { text: qsTr("Models"); font.bold: true }
            RowLayout {
                Layout.fillWidth: true
                visible: !page.app.simulated
                spacing: 8
                TextField {
                    id: modelsDir
                    Layout.fillWidth: true
                    text: page.app.settings.modelsDirectory
                    placeholderText: qsTr("Models folder (default: in the data folder)")
                    Accessible.name: qsTr("Models folder")
                    selectByMouse: true
                    onEditingFinished: page.app.settings.modelsDirectory = text
                }
                Button {
                    text: qsTr("Add folder…")
                    Accessible.name: qsTr("Add a model folder")
                    onClicked: folderDialog.open()
                }
                BusyIndicator {
                    objectName: "scanIndicator"
                    running: page.models.scanning
                    visible: running
                    Layout.preferredHeight: 32
                    Layout.preferredWidth: 32
                    Accessible.name: qsTr("Looking for models…")
                }
                Button {
                    text: qsTr("Rescan")
                    Accessible.name: qsTr("Look for model folders again")
                    onClicked: page.models.refresh()
                }
                Button {
                    objectName: "convertDialogButton"
                    text: qsTr("Convert…")
                    Accessible.name: qsTr("Convert a model to EXL2")
                    onClicked: convertDialog.open()
                }
            }
            ConvertDialog {
                id: convertDialog
                models: page.models
            }
            Label {
                id: addError
                Layout.fillWidth: true
                visible: text.length > 0
                color: "#c62828"
                wrapMode: Text.Wrap
            }
            FolderDialog {
                id: folderDialog
                title: qsTr("Add a model folder")
                onAccepted: {
                    addError.text = ""
                    page.models.addFolder(selectedFolder.toString())
                }
            }
            Label {
                Layout.fillWidth: true
                visible: list.count === 0
                wrapMode: Text.Wrap
                text: page.models.scanning ? qsTr("Looking for models…")
                      : qsTr("No models found. Put model folders into the models folder, add a folder, or drop one here.")
            }
            Loader {
                Layout.fillWidth: true
                active: page.app.remotes !== null
                visible: active
                sourceComponent: RemoteEndpointsPanel { endpoints: page.app.remotes }
            }
            ListView {
                id: list
                Layout.fillWidth: true
                Layout.fillHeight: true
                clip: true
                model: page.models
                currentIndex: page.models.currentIndex
                ScrollBar.vertical: ScrollBar {}
                delegate: ModelRow {
                    width: list.width
                    selected: ListView.isCurrentItem
                    onActivated: page.models.currentIndex = index
                }
            }
        }

        ColumnLayout {
                Layout.fillWidth: true
                Layout.alignment: Qt.AlignTop
                spacing: 10

                Label {
                    Layout.fillWidth: true
                    visible: page.models.currentIsRemote
                    wrapMode: Text.Wrap
                    text: qsTr("A remote model runs on its server: the load settings and the memory fit below do not apply. Load selects it for the chat.")
                }
                Label { text: qsTr("Load settings"); font.bold: true }
                LabeledSlider {
                    Layout.fillWidth: true
                    label: qsTr("Bits per weight (what-if)")
                    from: 2.5; to: 8.0; stepSize: 0.25
                    value: page.models.bpw
                    valueText: qsTr("%1 bpw").arg(value.toFixed(2))
                    onMoved: v => page.models.bpw = v
                }
                LabeledSlider {
                    Layout.fillWidth: true
                    label: qsTr("Context length")
                    from: 512; to: page.models.maxContextLength; stepSize: 512
                    value: page.models.contextLength
                    valueText: qsTr("%1 tokens").arg(Number(value).toLocaleString(Qt.locale(), "f", 0))
                    onMoved: v => page.models.contextLength = v
                }
                LabeledSlider {
                    Layout.fillWidth: true
                    label: qsTr("Cache type")
                    from: 0; to: page.models.cacheTypeNames.length - 1; stepSize: 1
                    value: page.models.cacheType
                    valueText: page.models.cacheTypeNames[value] ?? ""
                    onMoved: v => page.models.cacheType = v
                }
                // Layers over several GPUs (ExLlamaV2's gpu_split); the fit below plans for it.
                RowLayout {
                    Layout.fillWidth: true
                    visible: !page.models.onCpu && !page.models.currentIsRemote
                    Label { text: qsTr("GPU split") }
                    TextField {
                        id: gpuSplitField
                        Layout.fillWidth: true
                        text: page.models.gpuSplit
                        placeholderText: qsTr("one GPU; auto; or GiB per GPU, e.g. 20,23")
                        selectByMouse: true
                        Accessible.name: qsTr("GPU split")
                        onEditingFinished: page.models.gpuSplit = text
                    }
                }
                Label {
                    Layout.fillWidth: true
                    visible: page.models.gpuSplitError.length > 0
                    wrapMode: Text.Wrap
                    color: "#c62828"
                    text: page.models.gpuSplitError
                }
                DraftSettings {
                    Layout.fillWidth: true
                    pickerEnabled: !page.models.currentIsRemote
                    draftModelNames: page.models.draftModelNames
                    draftModelIndex: page.models.draftModelIndex
                    draftTokens: page.models.draftTokens
                    onDraftModelChosen: i => page.models.draftModelIndex = i
                    onDraftTokensMoved: n => page.models.draftTokens = n
                }

                // The chat template: the model's own unless the user gives one for this model.
                Label {
                    text: qsTr("Chat template"); font.bold: true; Layout.topMargin: 8
                    visible: !page.models.currentIsRemote
                }
                Label {
                    Layout.fillWidth: true
                    visible: !page.models.currentIsRemote
                    wrapMode: Text.Wrap
                    text: page.models.chatTemplateOverride.length > 0
                          ? qsTr("Your template below is used for this model (from the next load).")
                          : page.models.modelChatTemplate.length > 0
                            ? qsTr("The model's own template is used. Paste or load one below to use yours instead.")
                            : qsTr("The model ships no chat template: the built-in ChatML format is used unless you give one below.")
                }
                ScrollView {
                    Layout.fillWidth: true
                    Layout.preferredHeight: 120
                    visible: !page.models.currentIsRemote
                    TextArea {
                        id: templateArea
                        text: page.models.chatTemplateOverride
                        placeholderText: qsTr("Jinja chat template for this model (empty: the model's own)")
                        font.family: "monospace"
                        wrapMode: TextEdit.NoWrap
                        selectByMouse: true
                        Accessible.name: qsTr("Chat template for this model")
                        onEditingFinished: page.models.chatTemplateOverride = text
                    }
                }
                RowLayout {
                    visible: !page.models.currentIsRemote
                    spacing: 8
                    Button {
                        text: qsTr("Load from file…")
                        enabled: page.models.currentIndex >= 0
                        onClicked: templateDialog.open()
                    }
                    Button {
                        text: qsTr("Use the model's template")
                        enabled: page.models.chatTemplateOverride.length > 0
                        onClicked: page.models.chatTemplateOverride = ""
                    }
                }
                FileDialog {
                    id: templateDialog
                    title: qsTr("Choose a chat template file")
                    nameFilters: [qsTr("Jinja templates (*.jinja *.j2 *.txt)"), qsTr("All files (*)")]
                    onAccepted: page.models.loadChatTemplateFile(selectedFile)
                }

                Label { text: qsTr("Memory fit"); font.bold: true; Layout.topMargin: 8 }
                FitBar {
                    Layout.fillWidth: true
                    fit: page.models.fit
                    onCpu: page.app.onCpu
                }

                RowLayout {
                    Layout.topMargin: 8
                    spacing: 8
                    AccentButton {
                        text: qsTr("Load")
                        enabled: !page.models.loading && page.models.currentIndex >= 0
                        Accessible.name: qsTr("Load the selected model")
                        onClicked: page.models.load()
                    }
                    Button {
                        text: qsTr("Unload")
                        enabled: !page.models.loading && page.models.loadedModelName.length > 0
                        Accessible.name: qsTr("Unload the model")
                        onClicked: page.models.unload()
                    }
                    ProgressBar {
                        Layout.preferredWidth: 200
                        visible: page.models.loading
                        value: page.models.loadProgress
                        Accessible.name: qsTr("Loading progress")
                    }
                }
                Label {
                    Layout.fillWidth: true
                    visible: page.models.loadError.length > 0
                    text: qsTr("Loading failed: %1").arg(page.models.loadError)
                    color: "#c62828"
                    wrapMode: Text.Wrap
                }
        }
    }
}
