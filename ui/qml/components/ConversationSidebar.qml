// Conversation list with search, new, rename and delete.
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

        Button {
            Layout.fillWidth: true
            text: qsTr("New chat")
            icon.name: "document-new"
            Accessible.name: text
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
                onClicked: sidebar.openRequested(conversationId)
                onPressAndHold: menu.popup()
                TapHandler { acceptedButtons: Qt.RightButton; onTapped: menu.popup() }
                Menu {
                    id: menu
                    objectName: "conversationMenu"
                    MenuItem { text: qsTr("Rename…"); onTriggered: renameDialog.openFor(row.conversationId, row.title) }
                    MenuItem { text: qsTr("Delete"); onTriggered: sidebar.conversations.remove(row.conversationId) }
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
        objectName: "renameDialog"
        property var targetId: 0
        function openFor(id, title) { targetId = id; nameField.text = title; open(); nameField.forceActiveFocus() }
        title: qsTr("Rename chat")
        anchors.centerIn: Overlay.overlay
        modal: true
        standardButtons: Dialog.Ok | Dialog.Cancel
        TextField { id: nameField; objectName: "titleField"; width: 280; Accessible.name: qsTr("Chat title") }
        onAccepted: sidebar.conversations.rename(targetId, nameField.text)
    }
}
