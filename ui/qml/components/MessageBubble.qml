// One message: Markdown text (code blocks in monospace), and its actions: copy, edit (user
// messages; branches the conversation), regenerate (the last reply). With `tintDrafts`, a finished
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

    readonly property bool fromUser: role === "user"
    readonly property real fontSize: ApplicationWindow.window ? ApplicationWindow.window.font.pointSize : 11
    readonly property real maxTextWidth: bubble.width * 0.85 - 32
    property bool editing: false
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
                visible: bubble.editing
                Layout.fillWidth: true
                Layout.preferredWidth: 480
                wrapMode: TextArea.Wrap
                Accessible.name: qsTr("Edit message")
            }
            ReplyStats {
                visible: !bubble.fromUser && !bubble.streaming
                stats: bubble.stats
                stopped: bubble.stopped
            }
            RowLayout {
                id: actions
                spacing: 4
                visible: !bubble.streaming
                Button {
                    flat: true
                    text: qsTr("Copy")
                    Accessible.name: qsTr("Copy message")
                    onClicked: { clipboardHelper.text = bubble.text; clipboardHelper.selectAll(); clipboardHelper.copy() }
                }
                Button {
                    flat: true
                    visible: bubble.fromUser && !bubble.editing
                    text: qsTr("Edit")
                    Accessible.name: qsTr("Edit message")
                    onClicked: { editor.text = bubble.text; bubble.editing = true; editor.forceActiveFocus() }
                }
                Button {
                    flat: true
                    visible: bubble.editing
                    text: qsTr("Send edited")
                    Accessible.name: text
                    onClicked: { bubble.editing = false; bubble.chat.editMessage(bubble.index, editor.text) }
                }
                Button {
                    flat: true
                    visible: bubble.editing
                    text: qsTr("Cancel")
                    Accessible.name: text
                    onClicked: bubble.editing = false
                }
                Button {
                    flat: true
                    visible: !bubble.fromUser && bubble.index === bubble.chat.rowCount() - 1 && bubble.chat.canRegenerate
                    text: qsTr("Regenerate")
                    Accessible.name: text
                    onClicked: bubble.chat.regenerate()
                }
            }
        }
    }

    TextEdit { id: clipboardHelper; visible: false }
}
