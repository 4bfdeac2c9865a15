// One message: Markdown text (code blocks apart), and its actions: copy, edit (user messages; a new
// branch), regenerate (the last reply; a new branch), retry (a last message left without a reply),
// and ‹ 2/3 › to step between the branches at this message. With `tintDrafts`, a finished
// reply that came partly from accepted draft tokens shows as plain text with that text tinted.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import ExlStudio

Item {
    id: bubble
    required property ChatViewModel chat
    required property int index
    required property string role
    required property string text
    required property bool streaming
    required property bool stopped
    required property var stats
    required property int siblingIndex
    required property int siblingCount

    readonly property bool fromUser: role === "user"
    readonly property real fontSize: ApplicationWindow.window ? ApplicationWindow.window.font.pointSize : 11
    readonly property real maxTextWidth: bubble.width * 0.85 - 32
    property bool editing: false
    // The list's count, passed in: the last row has Retry or Regenerate.
    property int rowCount: 0
    readonly property bool isLast: index === rowCount - 1

    function startEdit() {
        editor.text = bubble.text
        editor.cursorPosition = editor.length  // typing continues the message
        bubble.editing = true
        editor.forceActiveFocus()
    }
    function sendEdit() {
        if (editor.text.trim().length === 0)
            return
        bubble.editing = false
        bubble.chat.editMessage(bubble.index, editor.text)
    }
    function cancelEdit() { bubble.editing = false }
    property bool tintDrafts: false
    readonly property bool tinted: tintDrafts && !streaming && !fromUser && !!stats && stats.draftRanges !== undefined

    implicitHeight: card.implicitHeight

    Pane {
        id: card
        width: Math.min(bubble.width * 0.85, Math.max(bubble.tinted ? tintedBody.implicitWidth : body.implicitWidth,
                                                      actions.implicitWidth) + 32)
        anchors.right: bubble.fromUser ? bubble.right : undefined
        padding: 12
        Material.background: bubble.fromUser ? Material.color(Material.Teal, Material.theme === Material.Dark ? Material.Shade800 : Material.Shade50)
                                             : undefined
        // A border, not Material elevation: the elevation's shadow is drawn from a layer as large
        // as the card, rendered again each time a streaming reply grows, and larger than the
        // largest texture once a reply is a few screens long.
        background: Rectangle {
            radius: 2
            color: card.Material.backgroundColor
            border.width: bubble.fromUser ? 0 : 1
            border.color: card.Material.dividerColor
        }

        ColumnLayout {
            anchors.fill: parent
            spacing: 6

            MessageText {
                id: body
                visible: !bubble.editing && !bubble.tinted
                Layout.fillWidth: true
                text: bubble.text
                streaming: bubble.streaming
                fontSize: bubble.fontSize
                maxWidth: bubble.maxTextWidth
                // The list's visible part in this item's coordinates (it sits at the card's top padding).
                visibleTop: bubble.ListView.view ? bubble.ListView.view.contentY - bubble.y - card.topPadding : -Infinity
                visibleBottom: bubble.ListView.view ? visibleTop + bubble.ListView.view.height : Infinity
                Accessible.role: Accessible.StaticText
                Accessible.name: bubble.text
            }
            Text {
                id: tintedBody
                visible: bubble.tinted && !bubble.editing
                Layout.fillWidth: true
                Layout.maximumWidth: bubble.maxTextWidth
                wrapMode: Text.Wrap
                textFormat: Text.StyledText
                color: card.Material.foreground
                font.pointSize: bubble.fontSize
                // Re-read when the text or the stats change (a regenerated or edited reply).
                text: bubble.tinted && bubble.text.length >= 0
                      ? bubble.chat.tintedText(bubble.index, Material.color(Material.Blue, Material.theme === Material.Dark ? Material.Shade300 : Material.Shade700))
                      : ""
                Accessible.role: Accessible.StaticText
                Accessible.name: bubble.text
            }
            TextArea {
                id: editor
                objectName: "editor"
                visible: bubble.editing
                Layout.fillWidth: true
                Layout.preferredWidth: 480
                wrapMode: TextArea.Wrap
                placeholderText: qsTr("Ctrl+Enter to send, Escape to cancel")
                Accessible.name: qsTr("Edit message")
                // Tab and Shift+Tab move on; Ctrl+Tab or Ctrl+I insert a tab; Ctrl+Enter sends;
                // Escape cancels; Enter and Shift+Enter start a new line.
                Keys.onPressed: event => {
                    if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter) && (event.modifiers & Qt.ControlModifier)) {
                        bubble.sendEdit()
                        event.accepted = true
                    } else if (event.key === Qt.Key_Escape) {
                        bubble.cancelEdit()
                        event.accepted = true
                    } else if ((event.key === Qt.Key_Tab && (event.modifiers & Qt.ControlModifier))
                               || (event.key === Qt.Key_I && (event.modifiers & Qt.ControlModifier))) {
                        editor.insert(editor.cursorPosition, "\t")
                        event.accepted = true
                    } else if (event.key === Qt.Key_Tab || event.key === Qt.Key_Backtab) {
                        const next = editor.nextItemInFocusChain(event.key === Qt.Key_Tab && !(event.modifiers & Qt.ShiftModifier))
                        if (next)
                            next.forceActiveFocus(event.key === Qt.Key_Tab ? Qt.TabFocusReason : Qt.BacktabFocusReason)
                        event.accepted = true
                    }
                }
            }
            ReplyStats {
                visible: !bubble.fromUser && !bubble.streaming
                Layout.fillWidth: true
                Layout.maximumWidth: bubble.maxTextWidth
                stats: bubble.stats
                stopped: bubble.stopped
            }
            RowLayout {
                id: actions
                objectName: "actions"
                spacing: 4
                visible: !bubble.streaming
                // ‹ 2/3 ›: the branches at this message (earlier replies or edits of it).
                Row {
                    objectName: "branchSwitcher"
                    visible: bubble.siblingCount > 1
                    ChatButton {
                        objectName: "previousBranch"
                        text: "‹"
                        enabled: bubble.siblingIndex > 0 && !bubble.chat.busy
                        Accessible.name: qsTr("Previous version")
                        ToolTip.visible: hovered
                        ToolTip.text: Accessible.name
                        onClicked: bubble.chat.selectSibling(bubble.index, -1)
                    }
                    Label {
                        objectName: "branchLabel"
                        anchors.verticalCenter: parent.verticalCenter
                        text: qsTr("%1/%2").arg(bubble.siblingIndex + 1).arg(bubble.siblingCount)
                        Accessible.name: qsTr("Version %1 of %2").arg(bubble.siblingIndex + 1).arg(bubble.siblingCount)
                    }
                    ChatButton {
                        objectName: "nextBranch"
                        text: "›"
                        enabled: bubble.siblingIndex < bubble.siblingCount - 1 && !bubble.chat.busy
                        Accessible.name: qsTr("Next version")
                        ToolTip.visible: hovered
                        ToolTip.text: Accessible.name
                        onClicked: bubble.chat.selectSibling(bubble.index, 1)
                    }
                }
                ChatButton {
                    objectName: "copyButton"
                    text: qsTr("Copy")
                    Accessible.name: qsTr("Copy message")
                    onClicked: { clipboardHelper.text = bubble.text; clipboardHelper.selectAll(); clipboardHelper.copy() }
                }
                ChatButton {
                    objectName: "editButton"
                    visible: bubble.fromUser && !bubble.editing
                    text: qsTr("Edit")
                    Accessible.name: qsTr("Edit message")
                    onClicked: bubble.startEdit()
                }
                ChatButton {
                    objectName: "sendEditButton"
                    visible: bubble.editing
                    text: qsTr("Send edited")
                    onClicked: bubble.sendEdit()
                }
                ChatButton {
                    objectName: "cancelEditButton"
                    visible: bubble.editing
                    text: qsTr("Cancel")
                    onClicked: bubble.cancelEdit()
                }
                ChatButton {
                    objectName: "retryButton"
                    visible: bubble.fromUser && !bubble.editing && bubble.isLast && bubble.chat.canRetry
                    text: qsTr("Retry")
                    Accessible.name: qsTr("Retry: ask for a reply again")
                    onClicked: bubble.chat.retry()
                }
                ChatButton {
                    objectName: "regenerateButton"
                    visible: !bubble.fromUser && bubble.isLast && bubble.chat.canRegenerate
                    text: qsTr("Regenerate")
                    onClicked: bubble.chat.regenerate()
                }
            }
        }
    }

    TextEdit { id: clipboardHelper; visible: false }
}
