// The main window: a tab bar for the four pages, the CPU banner, and the keyboard shortcuts.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import QtQuick.Window
import ExlStudio

ApplicationWindow {
    id: window
    required property AppContext app

    // 1280×800, or the screen's free area where that is smaller (a 1024×600 netbook screen).
    width: Math.min(1280, Screen.desktopAvailableWidth > 0 ? Screen.desktopAvailableWidth : 1280)
    height: Math.min(800, Screen.desktopAvailableHeight > 0 ? Screen.desktopAvailableHeight : 800)
    minimumWidth: 640
    minimumHeight: 440
    visible: true
    title: qsTr("EXL Studio")
    font.pointSize: app.settings.fontSize

    Material.theme: app.settings.theme === "dark" ? Material.Dark
                  : app.settings.theme === "light" ? Material.Light : Material.System
    Material.accent: Material.Teal
    Material.primary: Material.BlueGrey

    readonly property var pageNames: ["chat", "models", "telemetry", "settings"]

    function showPage(name) {
        // "hub": the models page's Hugging Face tab.
        if (name === "hub") {
            tabs.currentIndex = 1
            modelsPage.showHub()
            return
        }
        const index = pageNames.indexOf(name)
        if (index >= 0)
            tabs.currentIndex = index
    }

    Component.onCompleted: showPage(app.initialPage)
    Connections {
        target: window.app
        function onPageRequested(name) { window.showPage(name) }
    }

    Shortcut { sequence: "Ctrl+N"; onActivated: { window.showPage("chat"); chatPage.newChat() } }
    Shortcut { sequence: "Ctrl+F"; onActivated: { window.showPage("chat"); chatPage.focusSearch() } }
    Shortcut { sequence: "Ctrl+,"; onActivated: window.showPage("settings") }
    Shortcut { sequence: "Ctrl+L"; onActivated: { window.showPage("chat"); chatPage.focusInput() } }
    Shortcut { sequence: "F1"; onActivated: aboutDialog.open() }
    Shortcut { sequence: "Ctrl+Q"; context: Qt.ApplicationShortcut; onActivated: Qt.quit() }
    Shortcut { sequence: "Ctrl+Shift+C"; onActivated: chatPage.copyLastReply() }
    Shortcut { sequence: "Esc"; enabled: window.app.chat.busy; onActivated: window.app.chat.stop() }

    header: ToolBar {
        // An explicit bar colour: the style's tool-bar colour is the window background in the
        // light theme, which left the white tab titles unreadable.
        background: Rectangle { color: window.Material.theme === Material.Dark ? "#263238" : "#455a64" }
        Material.foreground: "white"
        RowLayout {
            anchors.fill: parent
            spacing: 8
            Label {
                text: qsTr("EXL Studio")
                font.bold: true
                font.pointSize: window.font.pointSize + 2
                Layout.leftMargin: 16
            }
            TabBar {
                id: tabs
                objectName: "pageTabs"
                Layout.fillWidth: true
                Layout.minimumWidth: implicitWidth
                // Tabs sit on the tool bar: its colours, not the page's.
                Material.background: "transparent"
                Material.foreground: "white"
                Material.accent: "white"
                TabButton { text: qsTr("Chat"); width: implicitWidth; Accessible.name: text }
                TabButton { text: qsTr("Models"); width: implicitWidth; Accessible.name: text }
                TabButton { text: qsTr("Telemetry"); width: implicitWidth; Accessible.name: text }
                TabButton { text: qsTr("Settings"); width: implicitWidth; Accessible.name: text }
            }
            Label {
                text: window.app.models.loadedModelName.length === 0 ? qsTr("No model loaded")
                      : qsTr("%1 on %2").arg(window.app.models.loadedModelName)
                                        .arg(window.app.models.loadedEndpoint.length > 0 ? window.app.models.loadedEndpoint
                                                                                          : window.app.deviceName)
                elide: Text.ElideRight
                Layout.maximumWidth: Math.max(120, window.width * 0.28)
                ToolTip.visible: truncated && loadedHover.hovered
                ToolTip.text: text
                HoverHandler { id: loadedHover }
            }
            ToolButton {
                text: qsTr("About")
                Accessible.name: qsTr("About EXL Studio")
                Material.foreground: "white"
                Layout.rightMargin: 8
                onClicked: aboutDialog.open()
            }
        }
    }

    AboutDialog { id: aboutDialog }

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        Banner {
            Layout.fillWidth: true
            // (Not while a remote model is in use: it runs on its server.)
            visible: window.app.onCpu && window.app.models.loadedEndpoint.length === 0
            tone: "warning"
            text: window.app.deviceNote.length > 0
                  ? qsTr("Running on the CPU backend (%1). Replies will be slow.").arg(window.app.deviceNote)
                  : qsTr("No CUDA device found: running on the CPU backend. Replies will be slow.")
        }
        Banner {
            Layout.fillWidth: true
            visible: window.app.models.loadNotice.length > 0
            tone: "info"
            text: window.app.models.loadNotice
        }
        Banner {
            Layout.fillWidth: true
            visible: window.app.simulated
            tone: "info"
            text: qsTr("Simulated engine (--fake): replies, speeds and memory figures are made up.")
        }
        Banner {
            Layout.fillWidth: true
            visible: window.app.storageError.length > 0
            tone: "error"
            text: qsTr("Chats cannot be saved: %1").arg(window.app.storageError)
        }

        StackLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            currentIndex: tabs.currentIndex

            ChatPage { id: chatPage; app: window.app }
            ModelsPage { id: modelsPage; app: window.app }
            TelemetryPage { app: window.app }
            SettingsPage { app: window.app }
        }
    }
}
