// The chat page: conversations on the left, the open conversation and the input on the right.
// Opening another chat while a reply is written asks first (the reply would stop); the chat can be
// exported as Markdown or JSON (the branch shown).
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import ExlStudio

Item {
    id: page
    required property AppContext app

    function focusSearch() { sidebar.focusSearch() }
    function focusInput() { input.focusInput() }
    // Opens chat `id` (0: a new one) and puts the focus in the input; while a reply is being
    // written, asks first.
    function openChat(id) {
        if (page.app.chat.busy && id !== page.app.chat.conversationId) {
            switchDialog.targetId = id
            switchDialog.open()
            return
        }
        if (id !== page.app.chat.conversationId || id === 0)
            page.app.chat.openConversation(id)
        Qt.callLater(page.focusInput)
    }
    function newChat() { openChat(0) }
    // At start the focus is in the input, ready to type.
    Component.onCompleted: Qt.callLater(page.focusInput)
    // Ctrl+Shift+C: the last reply to the clipboard.
    function copyLastReply() {
        const text = page.app.chat.lastReplyText()
        if (text.length === 0)
            return false
        clipboard.text = text
        clipboard.selectAll()
        clipboard.copy()
        return true
    }
    function exportChat(format) {
        exportDialog.format = format
        exportDialog.open()
    }

    RowLayout {
        anchors.fill: parent
        spacing: 0

        ConversationSidebar {
            id: sidebar
            Layout.preferredWidth: 260
            Layout.fillHeight: true
            conversations: page.app.conversations
            currentId: page.app.chat.conversationId
            onOpenRequested: id => page.openChat(id)
        }

        ColumnLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            Layout.margins: 12
            spacing: 8

            RowLayout {
                Layout.fillWidth: true
                spacing: 8
                TextField {
                    objectName: "systemPromptField"
                    Layout.fillWidth: true
                    placeholderText: qsTr("System prompt for this conversation (optional)")
                    text: page.app.chat.systemPrompt
                    onEditingFinished: page.app.chat.systemPrompt = text
                    Accessible.name: qsTr("System prompt")
                }
                ChatButton {
                    id: exportButton
                    objectName: "exportButton"
                    text: qsTr("Export…")
                    enabled: messages.count > 0
                    Accessible.name: qsTr("Export this chat")
                    onClicked: exportMenu.popup(exportButton, 0, exportButton.height)
                    Menu {
                        id: exportMenu
                        objectName: "exportMenu"
                        MenuItem { objectName: "exportMarkdown"; text: qsTr("As Markdown (.md)…"); onTriggered: page.exportChat("markdown") }
                        MenuItem { objectName: "exportJson"; text: qsTr("As JSON (.json)…"); onTriggered: page.exportChat("json") }
                    }
                }
            }

            ListView {
                id: messages
                objectName: "messageList"
                Layout.fillWidth: true
                Layout.fillHeight: true
                clip: true
                spacing: 10
                model: page.app.chat
                activeFocusOnTab: false
                ScrollBar.vertical: ScrollBar {}
                // Follow the streaming reply while the user is at the bottom.
                onCountChanged: Qt.callLater(positionViewAtEnd)
                onContentHeightChanged: if (atYEnd || page.app.chat.busy) positionViewAtEnd()
                delegate: MessageBubble {
                    width: messages.width - 16
                    chat: page.app.chat
                    rowCount: messages.count
                    tintDrafts: page.app.settings.tintDraftTokens
                }

                Label {
                    anchors.centerIn: parent
                    width: Math.min(implicitWidth, parent.width - 32)
                    wrapMode: Text.Wrap
                    horizontalAlignment: Text.AlignHCenter
                    visible: messages.count === 0
                    text: page.app.models.loadedModelName.length > 0
                          ? qsTr("Type a message to start.")
                          : qsTr("Load a model on the Models page, then type a message.")
                    opacity: 0.6
                }
            }

            Label {
                objectName: "chatError"
                Layout.fillWidth: true
                visible: page.app.chat.lastError.length > 0
                text: page.app.chat.lastError
                color: "#c62828"
                wrapMode: Text.Wrap
            }

            ChatInput {
                id: input
                Layout.fillWidth: true
                chat: page.app.chat
                ready: page.app.models.loadedModelName.length > 0
            }
        }
    }

    Dialog {
        id: switchDialog
        background: DialogBackground {}
        objectName: "switchDialog"
        property var targetId: 0
        title: qsTr("A reply is being written")
        anchors.centerIn: Overlay.overlay
        width: Math.max(280, Math.min(460, page.Window.width - 48))
        modal: true
        // The dialog sizes its content item: no width binding of the label's own.
        contentItem: Label {
            wrapMode: Text.Wrap
            text: qsTr("Opening another chat stops the reply here; what it has written so far is kept.")
        }
        // A row of its own, not a DialogButtonBox (whose layout loops on the dialog's height in
        // Qt 6.4's Material style); Enter presses the button with the focus.
        footer: Item {
            implicitHeight: switchButtons.implicitHeight + 16
            Row {
                id: switchButtons
                anchors.right: parent.right
                anchors.rightMargin: 8
                anchors.verticalCenter: parent.verticalCenter
                spacing: 4
                ChatButton {
                    id: stopAndSwitch
                    objectName: "stopAndSwitch"
                    text: qsTr("Stop and open")
                    onClicked: switchDialog.accept()
                }
                ChatButton {
                    objectName: "keepWriting"
                    text: qsTr("Keep writing")
                    onClicked: switchDialog.reject()
                }
            }
        }
        onOpened: stopAndSwitch.forceActiveFocus()
        onAccepted: {
            page.app.chat.stop()
            page.app.chat.openConversation(targetId)
            Qt.callLater(page.focusInput)
        }
    }

    TextEdit { id: clipboard; visible: false }

    FileDialog {
        id: exportDialog
        objectName: "exportDialog"
        property string format: "markdown"
        title: qsTr("Export chat")
        fileMode: FileDialog.SaveFile
        acceptLabel: qsTr("Export")
        defaultSuffix: format === "json" ? "json" : "md"
        nameFilters: format === "json" ? [qsTr("JSON files (*.json)")] : [qsTr("Markdown files (*.md)")]
        onAccepted: page.app.chat.exportTo(selectedFile, format)
    }
}
