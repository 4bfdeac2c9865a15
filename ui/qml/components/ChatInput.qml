// The message input: Enter sends, Shift+Enter starts a new line; Stop while a reply streams.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import ExlStudio

RowLayout {
    id: root
    required property ChatViewModel chat
    spacing: 8

    function focusInput() { field.forceActiveFocus() }
    function submit() {
        if (root.chat.send(field.text))
            field.text = ""
    }

    ScrollView {
        Layout.fillWidth: true
        Layout.preferredHeight: Math.min(160, Math.max(48, field.implicitHeight))
        TextArea {
            id: field
            objectName: "messageInput"
            placeholderText: qsTr("Message (Enter to send, Shift+Enter for a new line)")
            wrapMode: TextArea.Wrap
            focus: true
            Accessible.name: qsTr("Message")
            function handleEnter(event) {
                if (event.modifiers & Qt.ShiftModifier) {
                    event.accepted = false
                } else {
                    root.submit()
                    event.accepted = true
                }
            }
            Keys.onReturnPressed: event => handleEnter(event)
            Keys.onEnterPressed: event => handleEnter(event)
        }
    }
    AccentButton {
        text: root.chat.busy ? qsTr("Stop") : qsTr("Send")
        enabled: root.chat.busy || field.text.trim().length > 0
        Accessible.name: text
        onClicked: root.chat.busy ? root.chat.stop() : root.submit()
    }
}
