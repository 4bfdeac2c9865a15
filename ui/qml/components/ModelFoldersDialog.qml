// The folders searched for models: the models folder (where new models go), the folders the user
// added (each can be removed), and those listed for this run only. Folders inside each are
// searched too.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import ExlStudio

ScrollingDialog {
    id: dialog
    objectName: "modelFoldersDialog"
    required property AppContext app
    readonly property SettingsViewModel settings: app.settings
    signal addRequested()
    title: qsTr("Model folders")
    preferredWidth: 720

    footer: DialogButtonBox {
        Button {
            text: qsTr("Add folder…")
            DialogButtonBox.buttonRole: DialogButtonBox.ActionRole
            onClicked: dialog.addRequested()
        }
        Button {
            text: qsTr("Close")
            DialogButtonBox.buttonRole: DialogButtonBox.RejectRole
        }
    }

    Label {
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        text: qsTr("EXL Studio lists every model folder in these folders and in the folders inside them.")
    }
    Label { text: qsTr("Models folder"); font.bold: true }
    RowLayout {
        Layout.fillWidth: true
        spacing: 8
        TextField {
            id: modelsDir
            objectName: "modelsDirField"
            Layout.fillWidth: true
            Layout.minimumWidth: 120
            text: dialog.settings.modelsDirectory
            placeholderText: qsTr("Default: %1").arg(dialog.app.defaultModelsDirectory)
            Accessible.name: qsTr("Models folder")
            selectByMouse: true
            onEditingFinished: dialog.settings.modelsDirectory = text
        }
        Button {
            text: qsTr("Choose…")
            Accessible.name: qsTr("Choose the models folder")
            onClicked: modelsDirDialog.open()
        }
    }
    Label { text: qsTr("Added folders"); font.bold: true; Layout.topMargin: 8 }
    Label {
        Layout.fillWidth: true
        visible: dialog.settings.modelFolders.length === 0
        wrapMode: Text.Wrap
        opacity: 0.7
        text: qsTr("None yet: Add folder… or drop a folder on the Models page.")
    }
    Repeater {
        model: dialog.settings.modelFolders
        delegate: RowLayout {
            required property string modelData
            Layout.fillWidth: true
            spacing: 8
            Label {
                Layout.fillWidth: true
                Layout.minimumWidth: 0
                text: modelData
                wrapMode: Text.WrapAnywhere
            }
            Button {
                text: qsTr("Remove")
                Accessible.name: qsTr("Stop searching %1").arg(modelData)
                onClicked: dialog.settings.removeModelFolder(modelData)
            }
        }
    }
    Label {
        text: qsTr("Also searched"); font.bold: true; Layout.topMargin: 8
        visible: dialog.app.otherModelFolders.length > 0
    }
    Repeater {
        model: dialog.app.otherModelFolders
        delegate: Label {
            required property string modelData
            Layout.fillWidth: true
            text: modelData
            opacity: 0.7
            wrapMode: Text.WrapAnywhere
        }
    }

    FolderDialog {
        id: modelsDirDialog
        objectName: "modelsDirDialog"
        title: qsTr("Choose the models folder")
        onAccepted: {
            const url = selectedFolder.toString()
            dialog.settings.modelsDirectory = url.startsWith("file://") ? decodeURIComponent(url.substring(7)) : url
        }
    }
}
