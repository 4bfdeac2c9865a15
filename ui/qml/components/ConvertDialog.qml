// Convert a model to EXL2: an HF model folder (FP16/BF16/FP32) or a GGUF file in, a new folder
// out, at any target bits per weight. Runs the engine's converter off the GUI thread (ConvertJob)
// with progress, ETA and cancel; a finished model is added to the model list.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import ExlStudio

ScrollingDialog {
    id: dialog
    objectName: "convertDialog"
    title: qsTr("Convert a model to EXL2")
    preferredWidth: 760
    closePolicy: job.running ? Popup.NoAutoClose : Popup.CloseOnEscape
    // Where a finished model is added (null: not added).
    property ModelManager models: null
    readonly property ConvertJob job: convertJob

    ConvertJob {
        id: convertJob
        onFinished: (ok, folder) => { if (ok && dialog.models) dialog.models.addFolder(folder) }
    }

    footer: DialogButtonBox {
        Button {
            objectName: "convertButton"
            text: qsTr("Convert")
            enabled: !convertJob.running && convertJob.settingsError.length === 0
            DialogButtonBox.buttonRole: DialogButtonBox.ActionRole
            onClicked: convertJob.start()
        }
        Button {
            objectName: "cancelButton"
            text: qsTr("Cancel conversion")
            enabled: convertJob.running
            DialogButtonBox.buttonRole: DialogButtonBox.ActionRole
            onClicked: convertJob.cancel()
        }
        Button {
            objectName: "closeButton"
            text: qsTr("Close")
            enabled: !convertJob.running
            DialogButtonBox.buttonRole: DialogButtonBox.RejectRole
        }
    }

    Label { text: qsTr("Model to convert"); font.bold: true }
    RowLayout {
        Layout.fillWidth: true
        enabled: !convertJob.running
        TextField {
            objectName: "inputField"
            Layout.fillWidth: true
            text: convertJob.input
            placeholderText: qsTr("HF model folder or .gguf file")
            Accessible.name: qsTr("Model to convert")
            selectByMouse: true
            onEditingFinished: convertJob.input = text
        }
        Button { objectName: "inputFolderButton"; text: qsTr("Folder…"); onClicked: inputFolderDialog.open() }
        Button { objectName: "ggufButton"; text: qsTr("GGUF file…"); onClicked: ggufDialog.open() }
    }
    Label { text: qsTr("Output folder (new or empty)"); font.bold: true }
    RowLayout {
        Layout.fillWidth: true
        enabled: !convertJob.running
        TextField {
            objectName: "outputField"
            Layout.fillWidth: true
            text: convertJob.output
            placeholderText: qsTr("Where the EXL2 model is written")
            Accessible.name: qsTr("Output folder")
            selectByMouse: true
            onEditingFinished: convertJob.output = text
        }
        Button { objectName: "outputFolderButton"; text: qsTr("Choose…"); onClicked: outputFolderDialog.open() }
    }
    LabeledSlider {
        objectName: "bitsSlider"
        Layout.fillWidth: true
        enabled: !convertJob.running
        label: qsTr("Bits per weight (decoder layers)")
        valueText: convertJob.bits.toFixed(2)
        from: 2.0; to: 8.0; stepSize: 0.05
        value: convertJob.bits
        onMoved: v => convertJob.bits = v
    }
    GridLayout {
        columns: 2
        enabled: !convertJob.running
        Label { text: qsTr("Head bits") }
        ComboBox {
            objectName: "headBitsBox"
            implicitContentWidthPolicy: ComboBox.WidestText
            model: [2, 3, 4, 5, 6, 8]
            currentIndex: model.indexOf(convertJob.headBits)
            Accessible.name: qsTr("Head bits")
            onActivated: index => convertJob.headBits = model[index]
        }
        Label { text: qsTr("Device") }
        ComboBox {
            objectName: "deviceBox"
            implicitContentWidthPolicy: ComboBox.WidestText
            readonly property var devices: ["auto", "cuda", "cpu"]
            model: [qsTr("Automatic (the GPU when usable)"), qsTr("GPU"), qsTr("CPU")]
            currentIndex: devices.indexOf(convertJob.device)
            Accessible.name: qsTr("Device")
            onActivated: index => convertJob.device = devices[index]
        }
    }
    CheckBox {
        objectName: "fastBox"
        Layout.fillWidth: true
        enabled: !convertJob.running
        text: qsTr("Fast: no measurement pass (options ranked by their rounding error on the weights; minutes on a CPU)")
        checked: convertJob.fast
        onToggled: convertJob.fast = checked
    }
    Label {
        objectName: "resumeNote"
        Layout.fillWidth: true
        visible: !convertJob.running && convertJob.resumable && convertJob.settingsError.length === 0
        text: qsTr("This folder holds an interrupted conversion: Convert continues it (with the same settings).")
        wrapMode: Text.Wrap
    }
    Label {
        objectName: "settingsError"
        Layout.fillWidth: true
        visible: !convertJob.running && text.length > 0
        text: convertJob.settingsError
        color: palette.placeholderText
        wrapMode: Text.Wrap
    }

    ProgressBar {
        objectName: "progressBar"
        Layout.fillWidth: true
        visible: convertJob.running || convertJob.succeeded
        value: convertJob.progress
        Accessible.name: qsTr("Conversion progress")
    }
    RowLayout {
        Layout.fillWidth: true
        visible: convertJob.running
        Label { objectName: "stageLabel"; text: convertJob.stage; font.bold: true }
        Item { Layout.fillWidth: true }
        Label {
            objectName: "etaLabel"
            text: convertJob.eta.length > 0 ? qsTr("about %1 left").arg(convertJob.eta) : ""
        }
    }
    Label {
        objectName: "messageLabel"
        Layout.fillWidth: true
        visible: convertJob.running
        text: convertJob.message
        elide: Text.ElideMiddle
    }
    Label {
        objectName: "resultLabel"
        Layout.fillWidth: true
        visible: convertJob.succeeded
        text: qsTr("Converted: %1 The model is in %2 and on the model list.").arg(convertJob.resultText).arg(convertJob.outputFolder)
        wrapMode: Text.Wrap
    }
    Label {
        objectName: "errorLabel"
        Layout.fillWidth: true
        visible: !convertJob.running && convertJob.error.length > 0
        text: convertJob.error
        color: "#c62828"
        wrapMode: Text.Wrap
    }

    FolderDialog {
        id: inputFolderDialog
        objectName: "inputFolderDialog"
        title: qsTr("Choose the HF model folder")
        onAccepted: convertJob.input = selectedFolder.toString()
    }
    FileDialog {
        id: ggufDialog
        objectName: "ggufDialog"
        title: qsTr("Choose a GGUF file")
        nameFilters: [qsTr("GGUF models (*.gguf)")]
        onAccepted: convertJob.input = selectedFile.toString()
    }
    FolderDialog {
        id: outputFolderDialog
        objectName: "outputFolderDialog"
        title: qsTr("Choose the output folder")
        onAccepted: convertJob.output = selectedFolder.toString()
    }
}
