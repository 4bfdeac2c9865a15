// The message input: Enter sends, Shift+Enter starts a new line; Stop while a reply streams.
// Tab and Shift+Tab move to the next and previous control (Ctrl+Tab or Ctrl+I insert a tab).
// Without a model (`ready` false) nothing is sent, by Enter or the button, and the box says why.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import ExlStudio

RowLayout {
    id: root
    required property ChatViewModel chat
    // A model is loaded (local or remote): messages can be answered.
    property bool ready: true
    readonly property alias text: field.text
    spacing: 8

    function focusInput() { field.forceActiveFocus() }
    function submit() {
        if (root.ready && root.chat.send(field.text))
            field.text = ""
    }

    ScrollView {
        Layout.fillWidth: true
        Layout.preferredHeight: Math.min(160, Math.max(48, field.implicitHeight))
        TextArea {
            id: field
            objectName: "messageField"
            placeholderText: root.ready ? qsTr("Message (Enter to send, Shift+Enter for a new line)")
                                        : qsTr("Load a model on the Models page to send a message")
            wrapMode: TextArea.Wrap
            focus: true
            Accessible.name: qsTr("Message")
            Accessible.description: placeholderText
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
            Keys.onPressed: event => {
                const ctrl = event.modifiers & Qt.ControlModifier
                if ((event.key === Qt.Key_Tab && ctrl) || (event.key === Qt.Key_I && ctrl)) {
                    field.insert(field.cursorPosition, "\t")
                    event.accepted = true
                } else if (event.key === Qt.Key_Tab || event.key === Qt.Key_Backtab) {
                    const forward = event.key === Qt.Key_Tab && !(event.modifiers & Qt.ShiftModifier)
                    const next = field.nextItemInFocusChain(forward)
                    if (next)
                        next.forceActiveFocus(forward ? Qt.TabFocusReason : Qt.BacktabFocusReason)
                    event.accepted = true
                }
            }
        }
    }
    AccentButton {
        objectName: "sendButton"
        text: root.chat.busy ? qsTr("Stop") : qsTr("Send")
        enabled: root.chat.busy || (root.ready && field.text.trim().length > 0)
        focusPolicy: Qt.StrongFocus
        Accessible.name: text
        Keys.onReturnPressed: clicked()
        Keys.onEnterPressed: clicked()
        onClicked: root.chat.busy ? root.chat.stop() : root.submit()
    }
}
