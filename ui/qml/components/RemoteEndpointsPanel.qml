// Remote endpoints on the Models page: the list (name, address, plain-HTTP note) and the
// "Add remote endpoint" form: a name, the base URL and an optional API key.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import ExlStudio

ColumnLayout {
    id: panel
    required property RemoteEndpointsModel endpoints
    spacing: 6

    RowLayout {
        Layout.fillWidth: true
        Label { text: qsTr("Remote endpoints"); font.bold: true; Layout.fillWidth: true }
        Button {
            text: form.visible ? qsTr("Cancel") : qsTr("Add remote endpoint…")
            Accessible.name: qsTr("Add a remote OpenAI-compatible endpoint")
            onClicked: {
                form.visible = !form.visible
                addError.text = ""
            }
        }
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
                Label { text: name + (hasKey ? qsTr(" · API key") : ""); font.bold: true }
                Label { text: url; opacity: 0.7; elide: Text.ElideMiddle; Layout.fillWidth: true }
                Label { visible: note.length > 0; text: note; color: "#ef6c00"; wrapMode: Text.Wrap; Layout.fillWidth: true }
            }
            Button {
                text: qsTr("Remove")
                Accessible.name: qsTr("Remove the endpoint %1").arg(name)
                onClicked: panel.endpoints.remove(index)
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
        Label { text: qsTr("Name") }
        TextField {
            id: nameField
            Layout.fillWidth: true
            placeholderText: qsTr("e.g. Lab server")
            Accessible.name: qsTr("Endpoint name")
        }
        Label { text: qsTr("Base URL") }
        TextField {
            id: urlField
            Layout.fillWidth: true
            placeholderText: "https://example.org/v1"
            Accessible.name: qsTr("Endpoint base URL")
            inputMethodHints: Qt.ImhUrlCharactersOnly
        }
        Label { text: qsTr("API key") }
        TextField {
            id: keyField
            Layout.fillWidth: true
            echoMode: TextInput.Password
            placeholderText: qsTr("optional")
            Accessible.name: qsTr("API key (optional)")
        }
        Label {
            Layout.columnSpan: 2
            Layout.fillWidth: true
            visible: urlField.text.length > 0
            text: panel.endpoints.check(urlField.text)
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
        AccentButton {
            Layout.columnSpan: 2
            text: qsTr("Add endpoint")
            enabled: nameField.text.length > 0 && urlField.text.length > 0
            onClicked: {
                addError.text = panel.endpoints.add(nameField.text, urlField.text, keyField.text)
                if (addError.text.length === 0) {
                    form.visible = false
                    nameField.text = ""
                    urlField.text = ""
                    keyField.text = ""
                }
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
}
