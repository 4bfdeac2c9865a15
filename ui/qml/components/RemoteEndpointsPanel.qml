// Remote endpoints on the Models page: the list (name, address, plain-HTTP note) with Edit and
// Remove (asked first), and the form that adds or edits one: a name, the base URL and an
// optional API key.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import ExlStudio

ColumnLayout {
    id: panel
    required property RemoteEndpointsModel endpoints
    // The row the form edits; -1: the form adds a new endpoint.
    property int editing: -1
    property bool editingHasKey: false
    readonly property alias confirmRemoveDialog: confirmRemove  // (tests)
    spacing: 6

    function openForm(row, name, url, hasKey) {
        editing = row
        editingHasKey = hasKey
        nameField.text = name
        urlField.text = url
        keyField.text = ""
        clearKeyBox.checked = false
        addError.text = ""
        form.visible = true
        nameField.forceActiveFocus()
    }
    function closeForm() {
        form.visible = false
        editing = -1
        nameField.text = ""
        urlField.text = ""
        keyField.text = ""
        addError.text = ""
    }
    function submit() {
        addError.text = panel.editing < 0
                        ? panel.endpoints.add(nameField.text, urlField.text, keyField.text)
                        : panel.endpoints.update(panel.editing, nameField.text, urlField.text, keyField.text, clearKeyBox.checked)
        if (addError.text.length === 0)
            closeForm()
    }

    Label {
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        text: qsTr("Models served by an OpenAI-compatible server (exl serve, TabbyAPI, llama.cpp, vLLM, …) appear in the model list under Remote models.")
    }
    Button {
        objectName: "addEndpointButton"
        text: qsTr("Add remote endpoint…")
        visible: !form.visible
        Accessible.name: qsTr("Add a remote OpenAI-compatible endpoint")
        onClicked: panel.openForm(-1, "", "", false)
    }
    Repeater {
        model: panel.endpoints
        delegate: RowLayout {
            required property int index
            required property string name
            required property string url
            required property string note
            required property bool hasKey
            Layout.fillWidth: true
            ColumnLayout {
                Layout.fillWidth: true
                spacing: 0
                Label { text: name + (hasKey ? qsTr(" · API key") : ""); font.bold: true; Layout.fillWidth: true; wrapMode: Text.WrapAnywhere }
                Label { text: url; opacity: 0.7; wrapMode: Text.WrapAnywhere; Layout.fillWidth: true }
                Label { visible: note.length > 0; text: note; color: "#ef6c00"; wrapMode: Text.Wrap; Layout.fillWidth: true }
            }
            Button {
                text: qsTr("Edit")
                Accessible.name: qsTr("Edit the endpoint %1").arg(name)
                onClicked: panel.openForm(index, name, url, hasKey)
            }
            Button {
                text: qsTr("Remove")
                Accessible.name: qsTr("Remove the endpoint %1").arg(name)
                onClicked: {
                    confirmRemove.row = index
                    confirmRemove.name = name
                    confirmRemove.open()
                }
            }
        }
    }
    Label {
        Layout.fillWidth: true
        visible: panel.endpoints.listError.length > 0
        text: panel.endpoints.listError
        color: "#c62828"
        wrapMode: Text.Wrap
    }
    GridLayout {
        id: form
        objectName: "endpointForm"
        visible: false
        Layout.fillWidth: true
        columns: 2
        Label {
            Layout.columnSpan: 2
            font.bold: true
            text: panel.editing < 0 ? qsTr("New endpoint") : qsTr("Edit endpoint")
        }
        Label { text: qsTr("Name") }
        TextField {
            id: nameField
            Layout.fillWidth: true
            placeholderText: qsTr("e.g. Lab server")
            Accessible.name: qsTr("Endpoint name")
            onAccepted: panel.submit()
        }
        Label { text: qsTr("Base URL") }
        TextField {
            id: urlField
            Layout.fillWidth: true
            placeholderText: "https://example.org/v1"
            Accessible.name: qsTr("Endpoint base URL")
            inputMethodHints: Qt.ImhUrlCharactersOnly
            onAccepted: panel.submit()
        }
        Label { text: qsTr("API key") }
        TextField {
            id: keyField
            Layout.fillWidth: true
            echoMode: TextInput.Password
            placeholderText: panel.editing >= 0 && panel.editingHasKey ? qsTr("unchanged") : qsTr("optional")
            Accessible.name: qsTr("API key (optional)")
            onAccepted: panel.submit()
        }
        CheckBox {
            id: clearKeyBox
            Layout.columnSpan: 2
            visible: panel.editing >= 0 && panel.editingHasKey
            text: qsTr("Remove the stored API key")
        }
        Label {
            Layout.columnSpan: 2
            Layout.fillWidth: true
            visible: text.length > 0
            text: urlField.text.length > 0 ? panel.endpoints.check(urlField.text) : ""
            color: "#ef6c00"
            wrapMode: Text.Wrap
        }
        Label {
            Layout.columnSpan: 2
            Layout.fillWidth: true
            visible: keyField.text.length > 0
            text: panel.endpoints.keyWarning
            color: "#ef6c00"
            wrapMode: Text.Wrap
        }
        Flow {
            Layout.columnSpan: 2
            Layout.fillWidth: true
            spacing: 8
            AccentButton {
                objectName: "saveEndpointButton"
                text: panel.editing < 0 ? qsTr("Add endpoint") : qsTr("Save endpoint")
                enabled: nameField.text.length > 0 && urlField.text.length > 0
                onClicked: panel.submit()
            }
            Button {
                text: qsTr("Cancel")
                onClicked: panel.closeForm()
            }
        }
    }
    Label {
        id: addError
        objectName: "addError"
        Layout.fillWidth: true
        visible: text.length > 0
        color: "#c62828"
        wrapMode: Text.Wrap
    }

    ScrollingDialog {
        id: confirmRemove
        objectName: "confirmRemoveEndpoint"
        property int row: -1
        property string name
        title: qsTr("Remove the endpoint?")
        preferredWidth: 480
        acceptOnEnter: true
        parent: Overlay.overlay
        footer: DialogButtonBox {
            Button {
                text: qsTr("Remove")
                DialogButtonBox.buttonRole: DialogButtonBox.AcceptRole
            }
            Button {
                text: qsTr("Keep")
                DialogButtonBox.buttonRole: DialogButtonBox.RejectRole
            }
        }
        onAccepted: panel.endpoints.remove(row)
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            text: qsTr("%1 and its models leave the model list. Its address and API key are forgotten.").arg(confirmRemove.name)
        }
    }
}
