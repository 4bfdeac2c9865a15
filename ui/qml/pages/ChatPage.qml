// The chat page: conversations on the left, the open conversation and the input on the right.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import ExlStudio

Item {
    id: page
    required property AppContext app

    function focusSearch() { sidebar.focusSearch() }
    function focusInput() { input.focusInput() }

    RowLayout {
        anchors.fill: parent
        spacing: 0

        ConversationSidebar {
            id: sidebar
            Layout.preferredWidth: 260
            Layout.fillHeight: true
            conversations: page.app.conversations
            currentId: page.app.chat.conversationId
            onOpenRequested: id => page.app.chat.openConversation(id)
        }

        ColumnLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            Layout.margins: 12
            spacing: 8

            TextField {
                Layout.fillWidth: true
                placeholderText: qsTr("System prompt for this conversation (optional)")
                text: page.app.chat.systemPrompt
                onEditingFinished: page.app.chat.systemPrompt = text
                Accessible.name: qsTr("System prompt")
            }

            ListView {
                id: messages
                Layout.fillWidth: true
                Layout.fillHeight: true
                clip: true
                spacing: 10
                model: page.app.chat
                ScrollBar.vertical: ScrollBar {}
                // Follow the streaming reply while the user is at the bottom.
                onCountChanged: Qt.callLater(positionViewAtEnd)
                onContentHeightChanged: if (atYEnd || page.app.chat.busy) positionViewAtEnd()
                delegate: MessageBubble {
                    width: messages.width - 16
                    chat: page.app.chat
                    tintDrafts: page.app.settings.tintDraftTokens
                }

                Label {
                    anchors.centerIn: parent
                    visible: messages.count === 0
                    text: page.app.models.loadedModelName.length > 0
                          ? qsTr("Type a message to start.")
                          : qsTr("Load a model on the Models page, then type a message.")
                    opacity: 0.6
                }
            }

            Label {
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
            }
        }
    }
}
