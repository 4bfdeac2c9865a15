// Speculative decoding on the models page: the draft model picker (none: n-gram lookup, or one
// of the models whose vocabulary matches the selected one) and the draft-token count, with a
// line saying where drafted tokens come from.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ColumnLayout {
    id: root
    property var draftModelNames: []   // compatible models offered (without "none")
    property int draftModelIndex: -1   // into draftModelNames; -1: none (n-gram lookup)
    property int draftTokens: 0
    property bool pickerEnabled: true  // false: no draft model applies (a remote model)
    readonly property bool ngram: draftModelIndex < 0
    signal draftModelChosen(int index)
    signal draftTokensMoved(int count)

    spacing: 4

    RowLayout {
        Layout.fillWidth: true
        spacing: 8
        Label { text: qsTr("Draft model"); Layout.fillWidth: true }
        ComboBox {
            id: picker
            objectName: "draftPicker"
            Layout.preferredWidth: 260
            model: [qsTr("None (n-gram lookup)")].concat(root.draftModelNames)
            currentIndex: root.draftModelIndex + 1
            enabled: root.pickerEnabled
            Accessible.name: qsTr("Draft model")
            onActivated: i => root.draftModelChosen(i - 1)
        }
    }
    LabeledSlider {
        objectName: "draftTokensSlider"
        Layout.fillWidth: true
        label: qsTr("Draft tokens")
        from: 0; to: 8; stepSize: 1
        value: root.draftTokens
        valueText: value === 0 ? qsTr("off")
                   : root.ngram ? qsTr("%1 by n-gram lookup").arg(value)
                   : qsTr("%1 by the draft model").arg(value)
        onMoved: v => root.draftTokensMoved(v)
    }
    Label {
        objectName: "draftNote"
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        opacity: 0.75
        text: root.draftTokens === 0
              ? (root.ngram ? qsTr("Speculative decoding is off.")
                            : qsTr("Speculative decoding is off; the draft model is still loaded and counted in the memory fit."))
              : root.ngram
                ? (root.draftModelNames.length > 0
                   ? qsTr("No draft model: tokens are guessed by n-gram lookup in the conversation (no extra memory).")
                   : qsTr("No compatible draft model found (it needs this model's vocabulary): tokens are guessed by n-gram lookup in the conversation (no extra memory)."))
                : qsTr("%1 drafts tokens; the model checks them in one pass.").arg(root.draftModelNames[root.draftModelIndex] ?? "")
    }
}
