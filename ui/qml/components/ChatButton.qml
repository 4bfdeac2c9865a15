// A flat button of the chat: reached with Tab, pressed with Space, Enter or Return, its text as
// its accessible name.
import QtQuick
import QtQuick.Controls

Button {
    id: control
    flat: true
    focusPolicy: Qt.StrongFocus
    Accessible.name: text
    Keys.onReturnPressed: control.clicked()
    Keys.onEnterPressed: control.clicked()
}
