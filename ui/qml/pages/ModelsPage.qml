// The models page: where models come from on the left (this computer's folders, remote endpoints,
// the Hugging Face Hub) with the model list; the selected model's load, memory fit and settings on the right. Both
// columns scroll on their own, so every control is reachable from 1024×600 up.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import ExlStudio

Item {
    id: page
    required property AppContext app
    readonly property ModelManager models: app.models
    readonly property bool hasSelection: page.models.currentIndex >= 0

    function loadCurrent() {
        if (!page.models.loading && page.hasSelection)
            page.models.load()
    }
    function openFolderDialog() { folderDialog.open() }
    readonly property bool hubShown: sourceTabs.visible && sourceTabs.currentIndex === 2
    // The Hugging Face tab (e.g. from the first-run pane).
    function showHub() {
        sourceTabs.currentIndex = 2
        hubSearch.focusSearch()
    }
    // A model folder in the local list, selected.
    function showLocalModel(path) {
        sourceTabs.currentIndex = 0
        const i = page.models.indexOfPath(path)
        if (i >= 0)
            page.models.currentIndex = i
    }
    // A finished download: its model is selected in the local list once scanned (AppContext).
    Connections {
        target: page.app.hub.download
        function onFinished() { sourceTabs.currentIndex = 0 }
    }

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
        function onFolderAdded() { addError.text = "" }
    }

    FolderDialog {
        id: folderDialog
        objectName: "addFolderDialog"
        title: qsTr("Add a model folder")
        onAccepted: {
            addError.text = ""
            page.models.addFolder(selectedFolder.toString())
        }
    }
    ModelFoldersDialog {
        id: foldersDialog
        app: page.app
        onAddRequested: folderDialog.open()
    }
    ConvertDialog {
        id: convertDialog
        models: page.models
    }
    DefaultModelDialog {
        id: defaultModelDialog
        app: page.app
    }

    RowLayout {
        anchors.fill: parent
        anchors.margins: 12
        spacing: 16

        // Left: where models come from, and the list.
        ColumnLayout {
            Layout.preferredWidth: Math.max(300, (page.width - 40) * 0.45)
            Layout.maximumWidth: Math.max(300, (page.width - 40) * 0.45)
            Layout.fillHeight: true
            spacing: 8

            // The sources as tabs that wrap onto a second line where the column is narrow (three
            // tabs in Dutch or German run past a 1024-pixel window's column on one line).
            Flow {
                id: sourceTabs
                objectName: "sourceTabs"
                property int currentIndex: 0
                Layout.fillWidth: true
                visible: page.app.remotes !== null
                Accessible.role: Accessible.PageTabList
                SourceTab { text: qsTr("On this computer"); tabs: sourceTabs; index: 0; Accessible.name: text }
                SourceTab { objectName: "remoteTab"; text: qsTr("Remote endpoints"); tabs: sourceTabs; index: 1; Accessible.name: text }
                SourceTab {
                    objectName: "hubTab"
                    text: qsTr("Hugging Face")
                    tabs: sourceTabs
                    index: 2
                    Accessible.name: qsTr("Models on the Hugging Face Hub")
                }
            }

            StackLayout {
                Layout.fillWidth: true
                Layout.fillHeight: true
                currentIndex: sourceTabs.visible ? sourceTabs.currentIndex : 0

                ColumnLayout {
                    spacing: 8
                    // The actions wrap onto a second line where the column is narrow.
                    Flow {
                        Layout.fillWidth: true
                        visible: !page.app.simulated
                        spacing: 8
                        Button {
                            objectName: "addFolderButton"
                            text: qsTr("Add folder…")
                            Accessible.name: qsTr("Add a model folder")
                            onClicked: folderDialog.open()
                        }
                        Button {
                            objectName: "foldersButton"
                            text: qsTr("Folders…")
                            Accessible.name: qsTr("The folders searched for models")
                            onClicked: foldersDialog.open()
                        }
                        Button {
                            text: qsTr("Rescan")
                            Accessible.name: qsTr("Look for model folders again")
                            onClicked: page.models.refresh()
                        }
                        Button {
                            objectName: "convertDialogButton"
                            text: qsTr("Convert…")
                            Accessible.name: qsTr("Convert a model to EXL3 or EXL2")
                            onClicked: convertDialog.open()
                        }
                        BusyIndicator {
                            objectName: "scanIndicator"
                            running: page.models.scanning
                            visible: running
                            height: 32
                            width: 32
                            Accessible.name: qsTr("Looking for models…")
                        }
                    }
                    Label {
                        id: addError
                        objectName: "addError"
                        Layout.fillWidth: true
                        visible: text.length > 0
                        color: "#c62828"
                        wrapMode: Text.Wrap
                    }
                    // No model yet: the ways to get one.
                    Pane {
                        objectName: "firstRunPane"
                        Layout.fillWidth: true
                        visible: list.count === 0 && !page.models.scanning && !page.app.simulated
                        padding: 12
                        ColumnLayout {
                            width: parent.width
                            spacing: 8
                            Label {
                                Layout.fillWidth: true
                                wrapMode: Text.Wrap
                                font.bold: true
                                text: qsTr("No models yet")
                            }
                            Label {
                                Layout.fillWidth: true
                                wrapMode: Text.Wrap
                                text: qsTr("Get the small default model to try EXL Studio, add a folder that holds models (folders inside it are searched too), or drop a model folder here.")
                            }
                            AccentButton {
                                objectName: "getDefaultModelButton"
                                text: qsTr("Get the default model…")
                                Accessible.name: qsTr("Download and convert the default model")
                                onClicked: defaultModelDialog.open()
                            }
                            Button {
                                objectName: "findOnHubButton"
                                text: qsTr("Find a model on the Hugging Face Hub")
                                visible: sourceTabs.visible
                                onClicked: page.showHub()
                            }
                            Button {
                                text: qsTr("Add folder…")
                                Accessible.name: qsTr("Add a model folder")
                                onClicked: folderDialog.open()
                            }
                        }
                    }
                    Label {
                        Layout.fillWidth: true
                        visible: list.count === 0 && (page.models.scanning || page.app.simulated)
                        wrapMode: Text.Wrap
                        text: page.models.scanning ? qsTr("Looking for models…") : qsTr("No models found.")
                    }
                    ListView {
                        id: list
                        objectName: "modelList"
                        Layout.fillWidth: true
                        Layout.fillHeight: true
                        clip: true
                        model: page.models
                        currentIndex: page.models.currentIndex
                        activeFocusOnTab: true
                        keyNavigationEnabled: true
                        highlightFollowsCurrentItem: true
                        boundsBehavior: Flickable.StopAtBounds
                        ScrollBar.vertical: ScrollBar { policy: ScrollBar.AsNeeded }
                        Accessible.role: Accessible.List
                        Accessible.name: qsTr("Models")
                        section.property: "remote"
                        section.criteria: ViewSection.FullString
                        section.delegate: Label {
                            required property string section
                            width: ListView.view ? ListView.view.width : 0
                            topPadding: 8
                            bottomPadding: 4
                            font.bold: true
                            text: section === "true" ? qsTr("Remote models") : qsTr("On this computer")
                        }
                        onCurrentIndexChanged: if (currentIndex !== page.models.currentIndex) page.models.currentIndex = currentIndex
                        Keys.onReturnPressed: page.loadCurrent()
                        Keys.onEnterPressed: page.loadCurrent()
                        delegate: ModelRow {
                            width: list.width - (list.ScrollBar.vertical.visible ? list.ScrollBar.vertical.width : 0)
                            selected: ListView.isCurrentItem
                            onActivated: page.models.currentIndex = index
                            onLoadRequested: { page.models.currentIndex = index; page.loadCurrent() }
                        }
                    }
                }

                ScrollView {
                    id: remoteScroll
                    implicitWidth: 200
                    contentWidth: availableWidth
                    clip: true
                    Loader {
                        width: remoteScroll.availableWidth
                        active: page.app.remotes !== null
                        sourceComponent: RemoteEndpointsPanel { endpoints: page.app.remotes }
                    }
                }

                HubSearchPanel {
                    id: hubSearch
                    objectName: "hubSearchPanel"
                    hub: page.app.hub
                }
            }
        }

        // Right: the selected model, or on the Hugging Face tab the chosen repository's page.
        StackLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            // A fixed preference: the scroll views' implicit width follows their width otherwise,
            // which the row layout would feed back (a polish loop).
            Layout.preferredWidth: 200
            Layout.minimumWidth: 0
            currentIndex: page.hubShown ? 1 : 0

            // The selected model. Load comes first; the settings below scroll.
            ScrollView {
                id: detailsScroll
                objectName: "modelDetails"
                implicitWidth: 200
                contentWidth: availableWidth
                clip: true
                ScrollBar.vertical.policy: contentHeight > availableHeight ? ScrollBar.AlwaysOn : ScrollBar.AsNeeded

                ColumnLayout {
                    width: detailsScroll.availableWidth - detailsScroll.ScrollBar.vertical.width - 4
                    spacing: 10

                    Label {
                        Layout.fillWidth: true
                        font.bold: true
                        font.pointSize: (ApplicationWindow.window ? ApplicationWindow.window.font.pointSize : 11) + 2
                        wrapMode: Text.WrapAnywhere
                        text: page.hasSelection ? page.models.currentName : qsTr("No model selected")
                    }
                    Label {
                        Layout.fillWidth: true
                        visible: page.models.currentIsRemote
                        wrapMode: Text.Wrap
                        text: qsTr("A remote model runs on its server: the load settings and the memory fit below do not apply. Load selects it for the chat.")
                    }
                    Flow {
                        Layout.fillWidth: true
                        spacing: 8
                        AccentButton {
                            objectName: "loadButton"
                            text: qsTr("Load")
                            enabled: !page.models.loading && page.hasSelection
                            Accessible.name: qsTr("Load the selected model")
                            onClicked: page.models.load()
                        }
                        Button {
                            objectName: "unloadButton"
                            text: qsTr("Unload")
                            enabled: !page.models.loading && page.models.loadedModelName.length > 0
                            Accessible.name: qsTr("Unload the model")
                            onClicked: page.models.unload()
                        }
                        ProgressBar {
                            width: 200
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

                    // The selected local model's memory fit and load settings.
                    ColumnLayout {
                        objectName: "localModelSettings"
                        Layout.fillWidth: true
                        visible: page.hasSelection && !page.models.currentIsRemote
                        spacing: 10
                        Label {
                            text: qsTr("Memory fit"); font.bold: true; Layout.topMargin: 4
                        }
                        FitBar {
                            Layout.fillWidth: true
                            fit: page.models.fit
                            onCpu: page.app.onCpu
                        }

                        Label {
                            text: qsTr("Load settings"); font.bold: true; Layout.topMargin: 8
                        }
                        LabeledSlider {
                            objectName: "bpwSlider"
                            Layout.fillWidth: true
                            label: qsTr("Bits per weight (what-if)")
                            from: 2.0; to: 8.0; stepSize: 0.25
                            value: page.models.bpw
                            valueText: qsTr("%1 bpw").arg(Number(value).toLocaleString(Qt.locale(), "f", 2))
                            onMoved: v => page.models.bpw = v
                        }
                        LabeledSlider {
                            Layout.fillWidth: true
                            label: qsTr("Context length")
                            from: 512; to: Math.max(512, page.models.maxContextLength); stepSize: 512
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
                        // Layers over several GPUs (ExLlamaV2's gpu_split); the fit above plans for it.
                        RowLayout {
                            Layout.fillWidth: true
                            visible: !page.models.onCpu
                            Label { text: qsTr("GPU split") }
                            TextField {
                                id: gpuSplitField
                                Layout.fillWidth: true
                                Layout.preferredWidth: 120
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
                            pickerEnabled: true
                            draftModelNames: page.models.draftModelNames
                            draftModelIndex: page.models.draftModelIndex
                            draftTokens: page.models.draftTokens
                            onDraftModelChosen: i => page.models.draftModelIndex = i
                            onDraftTokensMoved: n => page.models.draftTokens = n
                        }

                        // The chat template: the model's own unless the user gives one for this model.
                        Label {
                            text: qsTr("Chat template"); font.bold: true; Layout.topMargin: 8
                        }
                        Label {
                            Layout.fillWidth: true
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
                            TextArea {
                                id: templateArea
                                objectName: "templateEditor"
                                text: page.models.chatTemplateOverride
                                placeholderText: qsTr("Jinja template (empty: the model's own)")
                                font.family: "monospace"
                                wrapMode: TextEdit.NoWrap
                                selectByMouse: true
                                // Tab moves on to the next control, as everywhere else; Ctrl+Tab indents.
                                Keys.onTabPressed: event => { nextItemInFocusChain(true).forceActiveFocus(Qt.TabFocusReason); event.accepted = true }
                                Keys.onBacktabPressed: event => { nextItemInFocusChain(false).forceActiveFocus(Qt.BacktabFocusReason); event.accepted = true }
                                Accessible.name: qsTr("Chat template for this model")
                                onEditingFinished: page.models.chatTemplateOverride = text
                            }
                        }
                        Flow {
                            Layout.fillWidth: true
                            spacing: 8
                            Button {
                                objectName: "templateFileButton"
                                text: qsTr("Load from file…")
                                enabled: page.hasSelection
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
                            objectName: "templateFileDialog"
                            title: qsTr("Choose a chat template file")
                            nameFilters: [qsTr("Jinja templates (*.jinja *.j2 *.txt)"), qsTr("All files (*)")]
                            onAccepted: page.models.loadChatTemplateFile(selectedFile)
                        }
                    }
                }
            }

            HubRepoPanel {
                objectName: "hubRepoPanel"
                hub: page.app.hub
                models: page.models
                onCpu: page.app.onCpu
                onShowModel: path => page.showLocalModel(path)
            }
        }
    }
}
