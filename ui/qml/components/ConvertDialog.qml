// Convert a model to EXL3 (the default) or EXL2: an HF model folder (FP16/BF16/FP32) or a GGUF
// file in, a new folder out, at any target bits per weight in the format's range. Runs the
// engine's converter off the GUI thread (ConvertJob) with progress, ETA and cancel; a finished
// model is added to the model list.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import ExlStudio

ScrollingDialog {
    id: dialog
    objectName: "convertDialog"
    title: qsTr("Convert a model to EXL3 or EXL2")
    preferredWidth: 760
    closePolicy: job.running ? Popup.NoAutoClose : Popup.CloseOnEscape
    // Where a finished model is added (null: not added).
    property ModelManager models: null
    readonly property ConvertJob job: convertJob
    // The format's grid and the head bits' and device's below share one label width (their boxes
    // line up).
    readonly property real labelWidth: Math.max(formatLabel.implicitWidth, headBitsLabel.implicitWidth,
                                                deviceLabel.implicitWidth)

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

    // Each path on its own line, its buttons below it: nothing competes for the width, in any
    // language.
    Label { text: qsTr("Model to convert"); font.bold: true }
    TextField {
        objectName: "inputField"
        Layout.fillWidth: true
        enabled: !convertJob.running
        text: convertJob.input
        placeholderText: qsTr("HF model folder or .gguf file")
        Accessible.name: qsTr("Model to convert")
        selectByMouse: true
        onEditingFinished: convertJob.input = text
    }
    Flow {
        Layout.fillWidth: true
        enabled: !convertJob.running
        spacing: 8
        Button { objectName: "inputFolderButton"; text: qsTr("Folder…"); onClicked: inputFolderDialog.open() }
        Button { objectName: "ggufButton"; text: qsTr("GGUF file…"); onClicked: ggufDialog.open() }
    }
    Label { text: qsTr("Output folder (new or empty)"); font.bold: true }
    TextField {
        objectName: "outputField"
        Layout.fillWidth: true
        enabled: !convertJob.running
        text: convertJob.output
        placeholderText: qsTr("Where the converted model is written")
        Accessible.name: qsTr("Output folder")
        selectByMouse: true
        onEditingFinished: convertJob.output = text
    }
    Flow {
        Layout.fillWidth: true
        enabled: !convertJob.running
        spacing: 8
        Button { objectName: "outputFolderButton"; text: qsTr("Choose…"); onClicked: outputFolderDialog.open() }
    }
    // The format first: the bits' range, the head bits and the options below follow it.
    GridLayout {
        columns: 2
        enabled: !convertJob.running
        Label { id: formatLabel; text: qsTr("Format"); Layout.preferredWidth: dialog.labelWidth }
        ComboBox {
            objectName: "formatBox"
            implicitContentWidthPolicy: ComboBox.WidestText
            readonly property var formats: ["exl3", "exl2"]
            model: [qsTr("EXL3 (ExLlamaV3)"), qsTr("EXL2 (ExLlamaV2)")]
            currentIndex: formats.indexOf(convertJob.format)
            Accessible.name: qsTr("Format")
            onActivated: index => convertJob.format = formats[index]
        }
    }
    Label {
        objectName: "formatNote"
        Layout.fillWidth: true
        text: convertJob.format === "exl3"
              ? qsTr("EXL3, the format new quants use: one pass over %1 calibration rows of %2 tokens. The conversion runs on the CPU for now (Automatic means the CPU).")
                    .arg(convertJob.calibrationRows).arg(convertJob.calibrationLength)
              : qsTr("EXL2: every layer is measured over %1 calibration rows of %2 tokens, then quantized at the bits chosen for it.")
                    .arg(convertJob.calibrationRows).arg(convertJob.calibrationLength)
        color: palette.placeholderText
        wrapMode: Text.Wrap
    }
    LabeledSlider {
        objectName: "bitsSlider"
        Layout.fillWidth: true
        enabled: !convertJob.running
        label: qsTr("Bits per weight (decoder layers)")
        valueText: convertJob.bits.toFixed(2)
        from: convertJob.minBits; to: convertJob.maxBits; stepSize: 0.05
        value: convertJob.bits
        onMoved: v => convertJob.bits = v
    }
    GridLayout {
        columns: 2
        enabled: !convertJob.running
        Label { id: headBitsLabel; text: qsTr("Head bits"); Layout.preferredWidth: dialog.labelWidth }
        ComboBox {
            objectName: "headBitsBox"
            implicitContentWidthPolicy: ComboBox.WidestText
            // EXL3's 16 keeps the head in FP16.
            readonly property var choices: convertJob.headBitsChoices
            model: choices.map(b => b === 16 ? qsTr("16 (FP16, not quantized)") : String(b))
            currentIndex: choices.indexOf(convertJob.headBits)
            Accessible.name: qsTr("Head bits")
            onActivated: index => convertJob.headBits = choices[index]
        }
        Label { id: deviceLabel; text: qsTr("Device"); Layout.preferredWidth: dialog.labelWidth }
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
    // EXL2 only: EXL3 conversion has no measurement pass.
    WrappingCheckBox {
        objectName: "fastBox"
        Layout.fillWidth: true
        visible: convertJob.measurementOptions
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
