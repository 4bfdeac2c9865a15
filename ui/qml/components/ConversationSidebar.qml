// Conversation list with search, new, rename and delete (asked first). Keyboard: Tab reaches
// each chat, Enter or Space opens it, Delete deletes it, the Menu key opens its menu.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import ExlStudio

Pane {
    id: sidebar
    required property ConversationListModel conversations
    property var currentId: 0
    signal openRequested(var id)

    function focusSearch() { search.forceActiveFocus() }

    padding: 8

    ColumnLayout {
        anchors.fill: parent
        spacing: 6

        ChatButton {
            objectName: "newChatButton"
            Layout.fillWidth: true
            flat: false
            text: qsTr("New chat")
            icon.name: "document-new"
            onClicked: sidebar.openRequested(0)
        }
        TextField {
            id: search
            objectName: "searchField"
            Layout.fillWidth: true
            placeholderText: qsTr("Search chats")
            Accessible.name: qsTr("Search chats")
            onTextChanged: sidebar.conversations.search = text
        }
        ListView {
            id: list
            objectName: "conversationList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: sidebar.conversations
            ScrollBar.vertical: ScrollBar {}
            delegate: ItemDelegate {
                id: row
                required property var conversationId
                required property string title
                width: list.width
                text: title
                highlighted: conversationId === sidebar.currentId
                Accessible.name: title
                ToolTip.visible: hovered && row.implicitWidth > row.width
                ToolTip.text: title
                onClicked: sidebar.openRequested(conversationId)
                onPressAndHold: menu.popup()
                Keys.onReturnPressed: sidebar.openRequested(conversationId)
                Keys.onEnterPressed: sidebar.openRequested(conversationId)
                Keys.onDeletePressed: deleteDialog.openFor(row.conversationId, row.title)
                Keys.onMenuPressed: menu.popup(row, 0, row.height)
                TapHandler { acceptedButtons: Qt.RightButton; onTapped: menu.popup() }
                Menu {
                    id: menu
                    objectName: "conversationMenu"
                    MenuItem { text: qsTr("Rename…"); onTriggered: renameDialog.openFor(row.conversationId, row.title) }
                    MenuItem { text: qsTr("Delete…"); onTriggered: deleteDialog.openFor(row.conversationId, row.title) }
                }
            }
            Label {
                objectName: "emptyNote"
                anchors.centerIn: parent
                visible: list.count === 0
                text: search.text.length > 0 ? qsTr("No chat matches.") : qsTr("No chats yet.")
                opacity: 0.6
            }
        }
    }

    Dialog {
        id: renameDialog
        background: DialogBackground {}
        objectName: "renameDialog"
        property var targetId: 0
        function openFor(id, title) { targetId = id; nameField.text = title; open(); nameField.forceActiveFocus() }
        title: qsTr("Rename chat")
        anchors.centerIn: Overlay.overlay
        // A width of its own (the field takes it): the implicit one left the field wider than the dialog.
        width: Math.max(280, Math.min(420, sidebar.Window.width - 48))
        modal: true
        standardButtons: Dialog.Ok | Dialog.Cancel
        TextField {
            id: nameField
            objectName: "titleField"
            width: renameDialog.availableWidth
            Accessible.name: qsTr("Chat title")
            onAccepted: renameDialog.accept()
        }
        onAccepted: sidebar.conversations.rename(targetId, nameField.text)
    }

    Dialog {
        id: deleteDialog
        background: DialogBackground {}
        objectName: "deleteDialog"
        property var targetId: 0
        property string targetTitle: ""
        function openFor(id, title) { targetId = id; targetTitle = title; open() }
        title: qsTr("Delete chat?")
        anchors.centerIn: Overlay.overlay
        width: Math.max(280, Math.min(420, sidebar.Window.width - 48))
        modal: true
        // The dialog sizes its content item: no width binding of the label's own.
        contentItem: Label {
            wrapMode: Text.Wrap
            text: qsTr("“%1” and all its messages will be deleted. This cannot be undone.").arg(deleteDialog.targetTitle)
        }
        // A row of its own, not a DialogButtonBox (whose layout loops on the dialog's height in
        // Qt 6.4's Material style); Enter presses the button with the focus.
        footer: Item {
            implicitHeight: deleteButtons.implicitHeight + 16
            Row {
                id: deleteButtons
                anchors.right: parent.right
                anchors.rightMargin: 8
                anchors.verticalCenter: parent.verticalCenter
                spacing: 4
                ChatButton {
                    id: confirmDelete
                    objectName: "confirmDelete"
                    text: qsTr("Delete")
                    onClicked: deleteDialog.accept()
                }
                ChatButton {
                    id: cancelDelete
                    objectName: "cancelDelete"
                    text: qsTr("Cancel")
                    onClicked: deleteDialog.reject()
                }
            }
        }
        // The safe choice has the focus: Enter right after the Delete key keeps the chat.
        onOpened: cancelDelete.forceActiveFocus()
        onAccepted: sidebar.conversations.remove(targetId)
    }
}
